#!/usr/bin/env bash
# Fuzzing suite: builds tests/fuzz/fuzz_frames.c as two libFuzzer targets
# (the stack's default limits, and tiny limits so the edges are reached
# quickly), replays every regression input, then fuzzes each target for its
# share of FUZZ_SECONDS (default 60) starting from the seed corpus.
#
# One check per regression input and per target: a target passes when the
# fuzzer found no crash, sanitizer report, leak or timeout in its time.
# Everything it writes (binaries, the growing corpus, crash artifacts, logs)
# goes to build/fuzz (BUILD_DIR overrides), never into the repository.
#
#   FUZZ_SECONDS=600 tests/fuzz/run.sh      # a longer campaign
#   FUZZ_JOBS=2 ...                         # targets in parallel, each for FUZZ_SECONDS
#   build/fuzz/replay FILE...               # reproduce (FUZZ_TRACE=1 decodes the input)
set -u
cd "$(dirname "$0")"
here=$(pwd)
root=$(cd ../.. && pwd)
out=${BUILD_DIR:-$root/build/fuzz}
secs=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
cc=${FUZZ_CC:-clang}
case "$secs" in ''|*[!0-9]*) echo "run.sh: FUZZ_SECONDS must be a number of seconds, not '$secs'" >&2; exit 2;; esac
case "$jobs" in 1|2) ;; *) echo "run.sh: FUZZ_JOBS must be 1 or 2, not '$jobs'" >&2; exit 2;; esac
mkdir -p "$out/artifacts"

# clang with the libFuzzer runtime (Debian: clang and libclang-rt-<version>-dev)
probe_src='int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void) d; (void) n; return 0; }'
if ! command -v "$cc" >/dev/null 2>&1 \
		|| ! echo "$probe_src" | "$cc" -x c - -fsanitize=fuzzer,address,undefined -o "$out/probe" >/dev/null 2>&1; then
	echo "skip - fuzz: $cc with libFuzzer is not available (install clang and libclang-rt-<version>-dev)"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
fi

pass=0; fail=0
ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }

CFLAGS="-g -O1 -std=gnu11 -Wall -Wextra -Werror -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

build() { # name extra-flags...
	local name=$1; shift
	if ! "$cc" $CFLAGS "$@" fuzz_frames.c -o "$out/$name" 2>"$out/$name.build.log"; then
		cat "$out/$name.build.log"
		not_ok "build $name"
		return 1
	fi
}

# the replayer runs the stack as it is: no workaround for pending bugs
build replay -DFUZZ_REPLAY_MAIN -DFUZZ_NO_PENDING_WORKAROUNDS || true
build fuzz_frames -fsanitize=fuzzer || true
build fuzz_frames_small -fsanitize=fuzzer -DFUZZ_SMALL_LIMITS || true

# Regression inputs: each must replay cleanly (both limit sets).  Inputs
# listed in regressions/PENDING reproduce bugs not fixed yet and are skipped.
if [ -x "$out/replay" ]; then
	"$cc" $CFLAGS -DFUZZ_REPLAY_MAIN -DFUZZ_NO_PENDING_WORKAROUNDS -DFUZZ_SMALL_LIMITS fuzz_frames.c -o "$out/replay_small" 2>/dev/null
	for f in regressions/*.in; do
		[ -e "$f" ] || continue
		name=$(basename "$f")
		if grep -qx "$name" regressions/PENDING 2>/dev/null; then
			echo "# $name: pending a fix (regressions/PENDING), not replayed"
			continue
		fi
		if "$out/replay" "$f" >"$out/regression.log" 2>&1 && "$out/replay_small" "$f" >>"$out/regression.log" 2>&1; then
			ok "regression $name"
		else
			tail -n 30 "$out/regression.log"
			not_ok "regression $name"
		fi
	done
fi

# Fuzzing: each target gets its share of the time and its own working corpus
# (kept in build/ so that local runs accumulate coverage); the seed corpus is
# read-only input.
targets=""
[ -x "$out/fuzz_frames" ] && targets="$targets fuzz_frames"
[ -x "$out/fuzz_frames_small" ] && targets="$targets fuzz_frames_small"
n=$(echo $targets | wc -w)
if [ "$n" -gt 0 ]; then
	if [ "$jobs" -eq 2 ]; then share=$secs; else share=$(( secs / n )); fi
	[ "$share" -lt 1 ] && share=1
fi

fuzz_one() { # name seconds
	local name=$1 t=$2
	mkdir -p "$out/corpus-$name"
	"$out/$name" -max_total_time="$t" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
		-print_final_stats=1 -artifact_prefix="$out/artifacts/$name-" \
		"$out/corpus-$name" "$here/corpus" >"$out/$name.log" 2>&1
	echo $? >"$out/$name.rc"
}

report_one() { # name seconds
	local name=$1 t=$2 rc last runs eps seed
	rc=$(cat "$out/$name.rc")
	last=$(grep -E '^#[0-9]+' "$out/$name.log" | tail -n 1)
	runs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$out/$name.log" | tail -n 1)
	eps=$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$out/$name.log" | tail -n 1)
	seed=$(sed -nE 's/^INFO: Seed: ([0-9]+).*/\1/p' "$out/$name.log" | head -n 1)
	echo "# $name: ${t}s, seed ${seed:-?}, ${runs:-?} executions, ${eps:-?} exec/s," \
		"$(echo "$last" | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' || echo 'no coverage line')"
	if [ "$rc" -eq 0 ] && ! grep -qE '^==[0-9]+==ERROR|deadly signal|runtime error|^fuzz: ' "$out/$name.log"; then
		ok "fuzz $name"
	else
		grep -E '^fuzz: |ERROR|SUMMARY|runtime error|Test unit written|^    #[0-9]' "$out/$name.log" | head -n 40
		local rp=replay
		[ "$name" = fuzz_frames_small ] && rp=replay_small
		echo "# reproduce: $out/$rp <artifact above>   (FUZZ_TRACE=1 decodes it)"
		not_ok "fuzz $name (exit $rc, log $out/$name.log)"
	fi
}

if [ "$jobs" -eq 2 ]; then
	for t in $targets; do fuzz_one "$t" "$share" & done
	wait
else
	for t in $targets; do fuzz_one "$t" "$share"; done
fi
for t in $targets; do report_one "$t" "$share"; done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
