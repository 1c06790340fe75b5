#!/usr/bin/env bash
# bench/loop.sh — the loop-backend figures of the TCP issue, reproducible:
# both hosts (server 10.0.0.1, client 10.0.0.2) in one process, one thread.
#
#   bench/loop.sh [pingpong] [bulk] [callgrind]     (default: all three;
#                 callgrind-pingpong / callgrind-bulk run half of callgrind)
#
#   pingpong   1-byte TCP ping-pong, 1 and 32 connections, real clock:
#              transactions/s, median of $RUNS runs of $DUR s
#   bulk       one connection, burst mode, 64 KiB writes (-l 65536, cut by
#              the app into MSS-sized packets, $DEPTH writes unacknowledged),
#              -F none and -F sg,tso,csum,lro, real clock: Gbit/s, median
#              of $RUNS runs of $DUR s
#   callgrind  the same workloads under valgrind --tool=callgrind with the
#              virtual clock (-V, deterministic) stopped after -T virtual
#              seconds: total instructions / transactions (ping-pong) and
#              / 1448-byte segments received (bulk); also the marginal cost
#              from a second run twice as long, (I2 - I1) / (N2 - N1), which
#              removes start-up (pools, handshakes) from the figure
#
# Environment: RUNS (3), DUR (5), DEPTH (2), BIN (default: built from the
# working tree into a temporary directory for this run).
# Benchmarks are not tests: nothing here fails on a figure.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-3}
DUR=${DUR:-5}
DEPTH=${DEPTH:-2}
out=$(mktemp -d /tmp/iip-bench-loop.XXXXXX)
trap 'rm -rf "$out"' EXIT

if [ -z "${BIN:-}" ]; then
  # a private binary: a concurrent run rebuilding a shared one would mix versions
  BIN=$out/bench-loop
  (cd "$root/apps/bench" && IOSUB_DIR=io/loop OUT="$BIN" make -s) || { echo "build failed"; exit 1; }
fi

# cpu_run <file> <command...>: runs it, output in <file>, CPU seconds (user + sys) in CPU
cpu_run() {
  local f=$1; shift
  /usr/bin/time -f "%U %S" -o "$out/time" "$@" >"$f" 2>&1
  CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$out/time")
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }

server_args=(-p 10000 -v 0)
pingpong_client() { echo "-s 10.0.0.1 -p 10000 -l 1 -c $1 -v 0"; }
bulk_client="-s 10.0.0.1 -p 10000 -g 2 -l 65536 -d $DEPTH -v 0"

# ---- real clock -------------------------------------------------------------------------
pingpong_real() {
  local c r n all=() percpu=()
  for c in 1 32; do
    all=(); percpu=()
    for r in $(seq "$RUNS"); do
      # shellcheck disable=SC2046
      cpu_run "$out/pp.out" "$BIN" -- "${server_args[@]}" -l 1 -- $(pingpong_client "$c") -t "$DUR" -k
      all+=("$(sed -n 's/^total: .* \([0-9.]*\) requests\/s$/\1/p' "$out/pp.out")")
      n=$(sed -n 's/^total: \([0-9]*\) requests.*/\1/p' "$out/pp.out")
      percpu+=("$(awk -v n="$n" -v c="$CPU" 'BEGIN { printf "%.0f", (c > 0 ? n / c : 0) }')")
    done
    echo "pingpong real: 1-byte TCP ping-pong, $c connection(s): $(printf '%s\n' "${all[@]}" | median) transactions/s (median of ${all[*]});" \
      "per CPU second (user+sys of the process): $(printf '%s\n' "${percpu[@]}" | median) (median of ${percpu[*]})"
    echo "  command: $BIN -- ${server_args[*]} -l 1 -- $(pingpong_client "$c") -t $DUR -k"
  done
}

bulk_real() {
  local f r b all=() percpu=()
  for f in none sg,tso,csum,lro; do
    all=(); percpu=()
    for r in $(seq "$RUNS"); do
      # shellcheck disable=SC2086
      cpu_run "$out/bulk.out" "$BIN" -F "$f" -- "${server_args[@]}" -g 2 -- $bulk_client -t "$DUR" -k
      all+=("$(sed -n 's/^total: .* \([0-9.]*\) Mbps$/\1/p' "$out/bulk.out" | awk '{ printf "%.2f", $1 / 1000 }')")
      b=$(sed -n 's/^bench: server: .* rx \([0-9]*\) bytes.*/\1/p' "$out/bulk.out")
      percpu+=("$(awk -v b="$b" -v c="$CPU" 'BEGIN { printf "%.2f", (c > 0 ? b * 8 / 1e9 / c : 0) }')")
    done
    echo "bulk real: one connection, 64 KiB writes, -F $f: $(printf '%s\n' "${all[@]}" | median) Gbit/s (median of ${all[*]});" \
      "received per CPU second: $(printf '%s\n' "${percpu[@]}" | median) Gbit (median of ${percpu[*]})"
    echo "  command: $BIN -F $f -- ${server_args[*]} -g 2 -- $bulk_client -t $DUR -k"
  done
}

# ---- callgrind ----------------------------------------------------------------------------
# cg <name> <args...>: runs under callgrind, sets IR (total instructions)
cg() {
  local name=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$out/$name.cg" "$BIN" "$@" >"$out/$name.out" 2>"$out/$name.err"
  IR=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$out/$name.err")
}

pingpong_callgrind() {
  local c t t2 n1 n2 i1 i2 cmd
  for c in 1 32; do
    # -T: about 100k transactions at 1 us of virtual time per busy loop round
    if [ "$c" = 1 ]; then t=0.2; else t=0.005; fi
    t2=$(awk -v t="$t" 'BEGIN { print 2 * t }')
    cmd="-V -T $t -- ${server_args[*]} -l 1 -- $(pingpong_client "$c") -t 0"
    # shellcheck disable=SC2086
    cg "pp$c" $cmd; i1=$IR; n1=$(sed -n 's/^total: \([0-9]*\) requests.*/\1/p' "$out/pp$c.out")
    # shellcheck disable=SC2086
    cg "pp${c}b" -V -T "$t2" -- "${server_args[@]}" -l 1 -- $(pingpong_client "$c") -t 0; i2=$IR
    n2=$(sed -n 's/^total: \([0-9]*\) requests.*/\1/p' "$out/pp${c}b.out")
    echo "pingpong callgrind: $c connection(s): $i1 instructions / $n1 transactions = $(awk -v i="$i1" -v n="$n1" 'BEGIN { printf "%.0f", i / n }') per transaction;" \
      "marginal (-T $t2: $i2 / $n2) = $(awk -v a="$i1" -v b="$i2" -v m="$n1" -v n="$n2" 'BEGIN { printf "%.0f", (b - a) / (n - m) }') per transaction"
    echo "  where: $(breakdown "$out/pp$c.cg" "$out/pp${c}b.cg" "$n1" "$n2" transaction)"
    echo "  command: valgrind --tool=callgrind $BIN $cmd   (and -T $t2)"
  done
}

# instructions by where the code lives (inlined code counts for the file it
# was written in): the stack, this app, the backend (the loop and io/common:
# the emulated link and NIC, i.e. wire copies and the offloads' checksums and
# segmentation, which a real NIC does in hardware), libc (memcpy, ...).
# Prints "stack app backend other".
components() { # components <callgrind out file>
  callgrind_annotate --threshold=100 "$1" 2>/dev/null | awk '
    /^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]+:/ {
      n = $1; gsub(",", "", n); f = $0; sub(/^ *[0-9,]+ +\( *[0-9.]+%\) +/, "", f)
      if (f ~ /(^|\/)stack\//) s += n; else if (f ~ /(^|\/)apps\//) a += n; else if (f ~ /(^|\/)io\//) b += n; else o += n }
    END { printf "%.0f %.0f %.0f %.0f\n", s, a, b, o }'
}

# per-unit marginal cost of each component between two runs
breakdown() { # breakdown <cg file 1> <cg file 2> <units 1> <units 2> <unit name>
  local c1 c2
  c1=$(components "$1"); c2=$(components "$2")
  awk -v c1="$c1" -v c2="$c2" -v n1="$3" -v n2="$4" -v u="$5" 'BEGIN {
    split(c1, a, " "); split(c2, b, " "); d = n2 - n1
    printf "per %s: stack %.0f, app %.0f, backend + emulated NIC %.0f, libc/other %.0f", u,
      (b[1] - a[1]) / d, (b[2] - a[2]) / d, (b[3] - a[3]) / d, (b[4] - a[4]) / d }'
}

bulk_callgrind() {
  local f t t2 b1 b2 i1 i2 cmd
  for f in none sg,tso,csum,lro; do
    # about 130 MB in -T 0.002 virtual s (a busy loop round costs 1 us);
    # a start that waits on delayed ACKs shows as a tiny byte count
    t=0.002; t2=0.004
    cmd="-V -T $t -F $f -- ${server_args[*]} -g 2 -- $bulk_client -t 0"
    # shellcheck disable=SC2086
    cg bulk $cmd; i1=$IR
    b1=$(sed -n 's/^bench: server: .* rx \([0-9]*\) bytes.*/\1/p' "$out/bulk.out")
    # shellcheck disable=SC2086
    cg bulkb -V -T "$t2" -F "$f" -- "${server_args[@]}" -g 2 -- $bulk_client -t 0; i2=$IR
    b2=$(sed -n 's/^bench: server: .* rx \([0-9]*\) bytes.*/\1/p' "$out/bulkb.out")
    echo "bulk callgrind: -F $f: $i1 instructions / ($b1 bytes / 1448) = $(awk -v i="$i1" -v b="$b1" 'BEGIN { printf "%.0f", i / (b / 1448) }') per segment;" \
      "marginal (-T $t2: $i2 / $b2 bytes) = $(awk -v a="$i1" -v b="$i2" -v x="$b1" -v y="$b2" 'BEGIN { printf "%.0f", (b - a) / ((y - x) / 1448) }') per segment"
    echo "  where: $(breakdown "$out/bulk.cg" "$out/bulkb.cg" "$(awk -v b="$b1" 'BEGIN { print b / 1448 }')" "$(awk -v b="$b2" 'BEGIN { print b / 1448 }')" segment)"
    echo "  command: valgrind --tool=callgrind $BIN $cmd   (and -T $t2)"
  done
}

what=("$@")
[ ${#what[@]} -eq 0 ] && what=(pingpong bulk callgrind)
echo "loop backend, one thread, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg); binary $BIN"
if [ -d "$root/.git" ] && command -v git >/dev/null 2>&1; then
  echo "source: commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" status --porcelain -- stack io apps/bench | grep -q . && echo ' + uncommitted changes in stack/, io/ or apps/bench/'), $(date -u '+%Y-%m-%d %H:%M UTC')"
fi
for w in "${what[@]}"; do
  case $w in
    pingpong) pingpong_real ;;
    bulk) bulk_real ;;
    callgrind) pingpong_callgrind; bulk_callgrind ;;
    callgrind-pingpong) pingpong_callgrind ;;
    callgrind-bulk) bulk_callgrind ;;
    *) echo "usage: $0 [pingpong] [bulk] [callgrind | callgrind-pingpong | callgrind-bulk]"; exit 2 ;;
  esac
done
