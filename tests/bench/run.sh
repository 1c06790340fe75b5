#!/usr/bin/env bash
# Tests of the benchmark tool (apps/bench) on the loop backend: a server and
# a client on two stacks in one process, virtual clock (-V) so every run is
# deterministic.  Each check asserts behaviour (requests completed, every
# reply byte verified with -x, the percentile line well formed and ordered,
# packets all returned, exit codes), never a timing threshold.  A one-way
# delay (-D) keeps the number of requests per virtual second small, so the
# runs are quick even under ASan/UBSan.  interop.sh then runs it on a veth
# pair against the Linux baseline (root only, namespaces it creates).
# Prints one line per check and ends with "N passed, N failed"; exit status
# non-zero on any failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/iipt-bench.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
pass=0; fail=0; skip=0

record() { # record <0|1> <description>
  if [ "$1" -eq 1 ]; then echo "PASS: $2"; pass=$((pass + 1)); else echo "FAIL: $2"; fail=$((fail + 1)); fi
}

bin=$work/bench
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
if (cd "$root/apps/bench" && IOSUB_DIR=io/loop OUT="$bin" EXTRA_CFLAGS="$SAN" make -s >"$work/build.log" 2>&1); then
  record 1 "build apps/bench with IOSUB_DIR=io/loop (-Wall -Wextra -Werror, ASan+UBSan)"
else
  cat "$work/build.log"; record 0 "build apps/bench with IOSUB_DIR=io/loop"
  echo "$pass passed, $fail failed"; exit 1
fi

# run <name> <args...>: output in $work/<name>.out, exit status in $work/<name>.rc
run() {
  local name=$1; shift
  timeout 300 "$bin" "$@" >"$work/$name.out" 2>&1
  echo $? >"$work/$name.rc"
}
rc() { cat "$work/$1.rc"; }
client() { grep -m1 '^bench: client: [0-9]* connection(s) established' "$work/$1.out"; }
server() { grep -m1 '^bench: server: [0-9]* connection(s) accepted' "$work/$1.out"; }
requests() { client "$1" | sed -n 's/.*; \([0-9]*\) requests,.*/\1/p'; }
checked() { client "$1" | sed -n 's/.* \([0-9]*\) replies checked bad \([0-9]*\),.*/\1 \2/p'; }
clean_exit() { [ "$(rc "$1")" = 0 ] && grep -q '^loop: all hosts done' "$work/$1.out" && grep -q '^loop: leak check ok' "$work/$1.out"; }

# latency line: four numbers in order p50 <= p90 <= p99 <= p99.9 and the sample count
latency_ok() { # latency_ok <name> <expected samples>
  local l; l=$(grep -m1 '^latency (us): ' "$work/$1.out")
  awk -v want="$2" '{
      ok = ($3 == "p50" && $5 == "p90" && $7 == "p99" && $9 == "p99.9" && $11 == "(" want && $12 == "samples)")
      ok = ok && ($4 + 0 > 0) && ($4 + 0 <= $6 + 0) && ($6 + 0 <= $8 + 0) && ($8 + 0 <= $10 + 0)
      exit !ok }' <<<"$l"
}

# pingpong_checks <name> <description> <connections>: the common assertions
pingpong_checks() {
  local n=$1 d=$2 conns=$3 req ck bad
  req=$(requests "$n"); read -r ck bad <<<"$(checked "$n")"
  record "$(clean_exit "$n" && echo 1 || echo 0)" "$d: both hosts stop by themselves (remote stop), exit 0, every packet returned"
  record "$([ -n "$req" ] && [ "$req" -gt 0 ] && echo 1 || echo 0)" "$d: requests completed ($req)"
  record "$([ "${ck:-0}" = "$req" ] && [ "${bad:-1}" = 0 ] && echo 1 || echo 0)" "$d: every reply's bytes verified ($ck checked, $bad bad)"
  record "$(client "$n" | grep -q "^bench: client: $conns connection(s) established, 0 failed" && echo 1 || echo 0)" \
    "$d: $conns connection(s) established, none failed"
  record "$(latency_ok "$n" "$req" && echo 1 || echo 0)" "$d: latency line well formed, ordered, one sample per request"
  record "$(server "$n" | grep -q 'remote stop yes' && echo 1 || echo 0)" "$d: server stopped by the client's remote stop (port 50000)"
}

# ---- ping-pong TCP, 1 connection ------------------------------------------------------
run pp1 -V -D 20 -T 30 -- -p 10000 -l 1 -q 1 -x -- -s 10.0.0.1 -p 10000 -l 1 -c 1 -t 2 -x -k -v 0
pingpong_checks pp1 "TCP ping-pong, 1 connection" 1
record "$([ "$(server pp1 | sed -n 's/.* \([0-9]*\) requests answered.*/\1/p')" -ge "$(requests pp1)" ] && server pp1 | grep -q 'bad 0,' && echo 1 || echo 0)" \
  "TCP ping-pong, 1 connection: server answered every request and verified every request byte"
# the per-second lines of the server, in the Linux baseline's format
record "$(grep -Eq '^\[0\] payload: rx [0-9]+ Mbps \([0-9]+ read\), tx [0-9]+ Mbps \([0-9]+ write\)$' "$work/pp1.out" &&
  grep -Eq '^payload total: rx [0-9]+ Mbps \([0-9]+ pps\), tx [0-9]+ Mbps \([0-9]+ pps\)$' "$work/pp1.out" &&
  grep -Eq '^\[0\] payload: rx [0-9]+ Mbps \([1-9][0-9]* read\), tx [0-9]+ Mbps \([1-9][0-9]* write\)$' "$work/pp1.out" && echo 1 || echo 0)" \
  "per-second lines: '[i] payload: ...' and 'payload total: ...' exactly as the Linux baseline, with traffic counted"
record "$(grep -Eq '^total: [0-9]+ requests in [0-9.]+ s, [0-9]+ requests/s$' "$work/pp1.out" && echo 1 || echo 0)" \
  "summary: 'total: N requests in S s, R requests/s'"
# the same command again: the virtual clock makes the run reproducible
run pp1b -V -D 20 -T 30 -- -p 10000 -l 1 -q 1 -x -- -s 10.0.0.1 -p 10000 -l 1 -c 1 -t 2 -x -k -v 0
record "$(cmp -s "$work/pp1.out" "$work/pp1b.out" && echo 1 || echo 0)" "the same -V run twice gives the same output, byte for byte"

# ---- ping-pong TCP, 32 connections ---------------------------------------------------
run pp32 -V -D 20 -T 30 -- -p 10000 -l 1 -q 1 -x -v 0 -- -s 10.0.0.1 -p 10000 -l 1 -c 32 -t 1 -x -k -v 0
pingpong_checks pp32 "TCP ping-pong, 32 connections" 32
record "$(server pp32 | grep -q '^bench: server: 32 connection(s) accepted' && echo 1 || echo 0)" "TCP ping-pong, 32 connections: server accepted 32"

# ---- depth 4: requests pipelined -------------------------------------------------------
# with a 20 us one-way delay a request takes at least 40 virtual us, so one
# connection with one request in flight completes at most 25000 per virtual
# second; more than that proves 4 were really in flight (deterministic: -V)
run d4 -V -D 20 -T 30 -- -p 10000 -l 64 -q 16 -x -v 0 -- -s 10.0.0.1 -p 10000 -l 16 -R 64 -c 1 -d 4 -t 1 -x -k -v 0
pingpong_checks d4 "TCP ping-pong, depth 4, 16-byte requests, 64-byte replies" 1
record "$([ "$(requests d4)" -gt 25000 ] && echo 1 || echo 0)" "depth 4: more requests than one-in-flight allows in 1 virtual s ($(requests d4) > 25000)"

# ---- HTTP-like messages -----------------------------------------------------------------
HTTP=$'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nAA'
run http -V -D 20 -T 30 -- -p 10000 -m "$HTTP" -q 4 -v 0 -- -s 10.0.0.1 -p 10000 -m "GET " -M "$HTTP" -c 4 -d 2 -t 1 -x -k -v 0
pingpong_checks http "HTTP-like -m response to 'GET '" 4
record "$(s=$(server http); a=$(sed -n 's/.* \([0-9]*\) requests answered.*/\1/p' <<<"$s"); t=$(sed -n 's/.*, tx \([0-9]*\) bytes,.*/\1/p' <<<"$s"); [ "$t" = "$((a * ${#HTTP}))" ] && echo 1 || echo 0)" \
  "HTTP-like: server sent exactly ${#HTTP} bytes per request answered"

# ---- UDP ------------------------------------------------------------------------------------
run udp -V -D 20 -T 30 -- -p 10000 -n 17 -l 32 -q 32 -x -v 0 -- -s 10.0.0.1 -p 10000 -n 17 -l 32 -c 4 -d 2 -t 1 -x -k -v 0
pingpong_checks udp "UDP ping-pong, 4 flows, depth 2" 4
record "$(client udp | grep -q 'lost 0,' && echo 1 || echo 0)" "UDP ping-pong: no request lost on a clean link"

# ---- rate limit ---------------------------------------------------------------------------
# 500 requests/s for 2 virtual seconds: the limiter never lets more start
run rate -V -D 20 -T 30 -- -p 10000 -q 1 -x -v 0 -- -s 10.0.0.1 -p 10000 -c 4 -d 2 -r 500 -t 2 -x -k -v 0
pingpong_checks rate "rate-limited (-r 500, 2 s)" 4
record "$([ "$(requests rate)" -le 1001 ] && echo 1 || echo 0)" "rate-limited: at most rate x duration requests ($(requests rate) <= 1001)"

# ---- burst ----------------------------------------------------------------------------------
# 64 KiB writes over a 1 Gb/s link, verified byte for byte by the server
for f in none sg,tso,csum,lro; do
  n=burst_${f//,/_}
  run "$n" -V -B 1000 -T 30 -F "$f" -- -p 10000 -g 2 -q 65535 -x -v 0 -- -s 10.0.0.1 -p 10000 -g 2 -l 65535 -d 4 -t 1 -k -v 0
  s=$(server "$n"); rx=$(sed -n 's/.*, rx \([0-9]*\) bytes,.*/\1/p' <<<"$s"); ck=$(sed -n 's/.* checked \([0-9]*\) bytes bad \([0-9]*\),.*/\1 \2/p' <<<"$s")
  tx=$(grep -m1 '^total: ' "$work/$n.out" | sed -n 's/^total: \([0-9]*\) bytes sent.*/\1/p')
  record "$(clean_exit "$n" && echo 1 || echo 0)" "burst -F $f: both hosts stop by themselves, exit 0, every packet returned"
  record "$([ -n "$rx" ] && [ "$rx" -gt 1000000 ] && [ "$ck" = "$rx 0" ] && echo 1 || echo 0)" "burst -F $f: server received and verified every byte ($rx bytes, check: $ck)"
  record "$([ -n "$tx" ] && [ "$tx" -ge "$rx" ] && echo 1 || echo 0)" "burst -F $f: client counted at least what the server received ($tx >= $rx)"
done

# ---- lossy link: replies still exact ------------------------------------------------------
run lossy -V -D 20 -T 60 -L 0.02 -O 0.02 -U 0.01 -C 0.01 -S 7 -- -p 10000 -l 100 -q 100 -x -v 0 -- \
  -s 10.0.0.1 -p 10000 -l 100 -c 8 -d 3 -t 2 -x -k -v 0
pingpong_checks lossy "TCP ping-pong over a lossy, reordering, duplicating, corrupting link" 8

# ---- server alone: -t ends it -------------------------------------------------------------
run srv_t -V -T 30 -- -p 10000 -t 1 -v 0
record "$(clean_exit srv_t && grep -q 'bench: duration reached' "$work/srv_t.out" && echo 1 || echo 0)" "server -t 1 stops by itself"

# ---- bad options: message, usage, exit 2 ----------------------------------------------------
bad=0; total=0
while IFS='|' read -r desc args; do
  total=$((total + 1))
  # shellcheck disable=SC2086
  timeout 30 "$bin" -V -- $args >"$work/bad.out" 2>&1; r=$?
  if [ "$r" = 2 ] && grep -q '^bench: ' "$work/bad.out" && grep -q '^usage: ' "$work/bad.out"; then
    record 1 "bad option ($desc): message, usage, exit 2"
  else
    record 0 "bad option ($desc): exit $r"; cat "$work/bad.out"
  fi
done <<'EOF'
mode 3|-p 1 -g 3
protocol 5|-p 1 -n 5
port 0|-p 0
port not a number|-p 10x
missing port|-l 4
payload length 0|-p 1 -l 0
unknown option|-p 1 -Z
missing value|-p
extra argument|-p 1 extra
server -x without -q|-p 1 -x
client option on a server|-p 1 -c 4
client address|-s 10.0.0.300 -p 1
UDP payload too long|-s 10.0.0.1 -p 1 -n 17 -l 2000
-l with -m|-p 1 -l 3 -m abc
verbosity 9|-p 1 -v 9
depth 0|-s 10.0.0.1 -p 1 -d 0
EOF

# ---- a real link: against the Linux baseline over af_packet (root only) -----------------------
source "$here/interop.sh"

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
