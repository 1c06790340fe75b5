#!/usr/bin/env bash
# Source coverage of the stack reached by a fuzz corpus: replays the seed
# corpus, the regressions and the working corpora that run.sh grew in
# build/fuzz, under clang's source-based coverage, and prints llvm-cov's
# per-file report for stack/.  Not a test: it prints figures only.
#
#   tests/fuzz/coverage.sh [CORPUS_DIR...]
set -eu
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
out=${BUILD_DIR:-$root/build/fuzz}/coverage
cc=${FUZZ_CC:-clang}
for tool in "$cc" llvm-profdata llvm-cov; do
	command -v "$tool" >/dev/null 2>&1 || { echo "coverage.sh: $tool not found (Debian: clang, llvm)" >&2; exit 1; }
done
mkdir -p "$out"
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
	dirs=(corpus regressions)
	for d in "$root"/build/fuzz/corpus-*; do [ -d "$d" ] && dirs+=("$d"); done
fi
rm -f "$out"/*.profraw
for v in default small; do
	flags="-DFUZZ_REPLAY_MAIN"
	[ "$v" = small ] && flags="$flags -DFUZZ_SMALL_LIMITS"
	"$cc" -g -O0 -std=gnu11 -fprofile-instr-generate -fcoverage-mapping $flags fuzz_frames.c -o "$out/replay-$v"
	# one process per folder, files in batches (argument limits)
	for d in "${dirs[@]}"; do
		find "$d" -type f ! -name PENDING -print0 | \
			LLVM_PROFILE_FILE="$out/%p-$v.profraw" xargs -0 -n 500 "$out/replay-$v" >/dev/null 2>&1 || true
	done
done
llvm-profdata merge -sparse "$out"/*.profraw -o "$out/all.profdata"
files=$(ls "$root"/stack/*.c)
echo "inputs from: ${dirs[*]}"
llvm-cov report "$out/replay-default" -object "$out/replay-small" -instr-profile="$out/all.profdata" $files
