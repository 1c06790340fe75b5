#!/usr/bin/env bash
# Tests of the thread-model layer (io/threadmodel) with the benchmark tool
# (apps/bench) on the loop backend, real clock (the application thread runs
# in real time), every run bounded by the loop's -T and by timeout(1).
#
# Each check asserts behaviour, never a timing: requests completed and every
# reply byte verified (-x), burst bytes verified by the server, both hosts
# stopping by themselves (remote stop) with exit status 0 before -T, every
# packet returned to the pools (the loop's leak check), no ThreadSanitizer
# report, unified output identical to the app built without the layer
# (virtual clock, so the runs are comparable byte for byte), bad options
# refused with exit status 2.
# Prints one line per check and ends with "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/iipt-tm.XXXXXX)
ns=iiptm$$
cleanup() {
  [ -n "${ns_up:-}" ] && "$root/tools/netns.sh" down "$ns" >/dev/null 2>&1
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
pass=0; fail=0

record() { # record <0|1> <description>
  if [ "$1" -eq 1 ]; then echo "PASS: $2"; pass=$((pass + 1)); else echo "FAIL: $2"; fail=$((fail + 1)); fi
}
finish() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

build() { # build <out> <iosub> <extra cflags> [inner]
  (cd "$root/apps/bench" && IOSUB_DIR=$2 INNER_IOSUB_DIR=${4:-} OUT="$1" EXTRA_CFLAGS="$3" make -s) >"$work/build.log" 2>&1
}

bin=$work/bench_tm; tsan=$work/bench_tm_tsan; plain=$work/bench_plain
if build "$bin" io/threadmodel "" io/loop; then
  record 1 "build apps/bench with IOSUB_DIR=io/threadmodel INNER_IOSUB_DIR=io/loop (-Wall -Wextra -Werror)"
else
  cat "$work/build.log"; record 0 "build apps/bench with io/threadmodel over io/loop"; finish
fi
if build "$tsan" io/threadmodel "-fsanitize=thread -O1" io/loop; then
  record 1 "build the same with -fsanitize=thread"
else
  cat "$work/build.log"; record 0 "build with -fsanitize=thread"; tsan=
fi
if build "$plain" io/loop ""; then record 1 "build apps/bench with IOSUB_DIR=io/loop (no layer)"; else plain=; record 0 "build apps/bench with io/loop"; fi
(cd "$root/apps/bench" && IOSUB_DIR=io/threadmodel make -s OUT="$work/x" >"$work/noinner.log" 2>&1)
record "$(grep -q 'INNER_IOSUB_DIR' "$work/noinner.log" && echo 1 || echo 0)" "build without INNER_IOSUB_DIR stops with a message naming it"

# the networking (loop) thread on core 0; split puts the application thread on another core
cpus=$(nproc)
app_core=$(( cpus > 1 ? 1 : 0 ))
pin="taskset -c 0"
command -v taskset >/dev/null || pin=

run() { # run <name> <binary> <args...>
  local name=$1 b=$2; shift 2
  timeout 240 $pin "$b" "$@" >"$work/$name.out" 2>&1
  echo $? >"$work/$name.rc"
}
rc() { cat "$work/$1.rc"; }
client() { grep -m1 '^bench: client: [0-9]* connection(s) established' "$work/$1.out"; }
server() { grep -m1 '^bench: server: [0-9]* connection(s) accepted' "$work/$1.out"; }
requests() { client "$1" | sed -n 's/.*; \([0-9]*\) requests,.*/\1/p'; }
checked() { client "$1" | sed -n 's/.* \([0-9]*\) replies checked bad \([0-9]*\),.*/\1 \2/p'; }
server_checked() { server "$1" | sed -n 's/.*checked \([0-9]*\) bytes bad \([0-9]*\),.*/\1 \2/p'; }
clean_exit() {
  [ "$(rc "$1")" = 0 ] && grep -q '^loop: all hosts done' "$work/$1.out" && grep -q '^loop: leak check ok' "$work/$1.out"
}
no_tsan() { ! grep -q 'ThreadSanitizer' "$work/$1.out"; }

# pingpong <name> <description> <server tm> <client tm> [binary] [extra client opts]
pingpong() {
  local n=$1 d=$2 stm=$3 ctm=$4 b=${5:-$bin} extra=${6:-} req ck bad
  run "$n" "$b" -T 60 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 $stm -- \
    -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 8 -t 2 -x -k -v 0 $extra $ctm
  req=$(requests "$n"); read -r ck bad <<<"$(checked "$n")"
  record "$(clean_exit "$n" && echo 1 || echo 0)" "$d: both hosts stop by themselves before -T, exit 0, every packet returned"
  record "$([ -n "$req" ] && [ "$req" -gt 0 ] && [ "${ck:-0}" = "$req" ] && [ "${bad:-1}" = 0 ] && echo 1 || echo 0)" \
    "$d: $req requests, every reply verified ($ck checked, $bad bad)"
}

# burst <name> <description> <server tm> <client tm>
burst() {
  local n=$1 d=$2 stm=$3 ctm=$4 ck bad
  run "$n" "$bin" -T 60 -- -p 10000 -g 2 -l 65536 -q 65536 -x -v 0 $stm -- \
    -s 10.0.0.1 -p 10000 -g 2 -l 65536 -d 4 -c 2 -t 2 -k -v 0 $ctm
  read -r ck bad <<<"$(server_checked "$n")"
  record "$(clean_exit "$n" && echo 1 || echo 0)" "$d: both hosts stop by themselves before -T, exit 0, every packet returned"
  record "$([ -n "$ck" ] && [ "$ck" -gt 0 ] && [ "${bad:-1}" = 0 ] && echo 1 || echo 0)" \
    "$d: the server verified every byte of 64 KiB writes ($ck bytes, $bad bad)"
}

split="--tm -m split -c $app_core"
merge="--tm -m merge"
pingpong pp_split_server "ping-pong, server split" "$split" ""
pingpong pp_merge_server "ping-pong, server merge" "$merge" ""
pingpong pp_split_client "ping-pong, client split" "" "$split"
pingpong pp_merge_both "ping-pong, both merge" "$merge" "$merge"
pingpong pp_merge_small "ping-pong, server merge, 64-slot queues, batch 1, 16 ready packets, depth 4" \
  "--tm -m merge -q 64 -b 1 -a 16" "" "$bin" "-d 4"
pingpong pp_split_small "ping-pong, server split, 64-slot queues, batch 64, 4 ready packets, depth 4" \
  "--tm -m split -c $app_core -q 64 -b 64 -a 4" "" "$bin" "-d 4"
burst burst_split_server "burst, server split" "$split" ""
burst burst_merge_server "burst, server merge" "$merge" ""
burst burst_split_client "burst, client split (its sends wait for room in the stack)" "" "$split"
burst burst_merge_client "burst, client merge" "" "$merge"

# UDP: udp_send from the application thread, udp_payload events
run udp_merge "$bin" -T 60 -- -p 10000 -n 17 -g 1 -l 32 -q 32 -x -v 0 -K 0 -t 3 $merge -- \
  -s 10.0.0.1 -p 10000 -n 17 -g 1 -l 32 -c 4 -t 2 -x -K 0 -v 0 $merge
req=$(requests udp_merge); read -r ck bad <<<"$(checked udp_merge)"
record "$(clean_exit udp_merge && echo 1 || echo 0)" "UDP ping-pong, both merge: both hosts stop before -T, exit 0, every packet returned"
record "$([ -n "$req" ] && [ "$req" -gt 0 ] && [ "${ck:-0}" = "$req" ] && [ "${bad:-1}" = 0 ] && echo 1 || echo 0)" \
  "UDP ping-pong, both merge: $req requests, every reply verified ($ck checked, $bad bad)"

# the environment variable
IIP_THREADMODEL="-m merge -b 8" run env_merge "$bin" -T 60 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 -- \
  -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 2 -t 1 -x -k -v 0
record "$([ "$(grep -c '^threadmodel: merge, batch 8' "$work/env_merge.out")" = 2 ] && clean_exit env_merge && echo 1 || echo 0)" \
  "IIP_THREADMODEL=\"-m merge -b 8\" applies to every host without a --tm section; clean exit"

# seed 003's sub/main.c options, as written there
run seed_split "$bin" -T 60 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 -- -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 2 -t 1 -x -k -v 0 \
  --tm -b 1 -c "$app_core" -n 1
record "$(grep -q '^threadmodel: split, batch 1,' "$work/seed_split.out" && clean_exit seed_split && echo 1 || echo 0)" \
  "seed 003's split options (-b 1 -c $app_core -n 1): split, batch 1, clean exit"
run seed_merge "$bin" -T 60 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 --tm -b 32 -c 0 -n 1 -e 100 -- \
  -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 2 -t 1 -x -k -v 0
record "$(grep -q '^threadmodel: merge, batch 32, .*wait 100000 us' "$work/seed_merge.out" && clean_exit seed_merge && echo 1 || echo 0)" \
  "seed 003's merge options (-b 32 -c 0 -n 1 -e 100): merge, 100 ms wait, clean exit"

# ThreadSanitizer: the hand-over of packets, events and the workspace
if [ -n "$tsan" ]; then
  pingpong tsan_split "TSan ping-pong, server split" "$split" "" "$tsan"
  record "$(no_tsan tsan_split && echo 1 || echo 0)" "TSan ping-pong, server split: no ThreadSanitizer report"
  pingpong tsan_merge "TSan ping-pong, both merge" "$merge" "$merge" "$tsan"
  record "$(no_tsan tsan_merge && echo 1 || echo 0)" "TSan ping-pong, both merge: no ThreadSanitizer report"
  run tsan_burst "$tsan" -T 60 -- -p 10000 -g 2 -l 65536 -q 65536 -x -v 0 $merge -- \
    -s 10.0.0.1 -p 10000 -g 2 -l 65536 -d 4 -c 2 -t 2 -k -v 0 $split
  record "$(no_tsan tsan_burst && clean_exit tsan_burst && echo 1 || echo 0)" \
    "TSan burst, server merge, client split: no ThreadSanitizer report, clean exit"
  # the backend stops first (-T before -t): the application threads are woken and joined
  run tsan_hard "$tsan" -T 2 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 $merge -- \
    -s 10.0.0.1 -p 10000 -g 1 -l 1 -c 4 -t 30 -x -k -v 0 $split
  record "$([ "$(rc tsan_hard)" = 0 ] && grep -q '^loop: hard stop' "$work/tsan_hard.out" && grep -q '^bench: client: [0-9]' "$work/tsan_hard.out" && no_tsan tsan_hard && echo 1 || echo 0)" \
    "TSan hard stop (-T 2 before -t 30), server merge, client split: application threads joined, summaries printed, exit 0, no report"
fi

# AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer included): memory of the layer itself
asan=$work/bench_tm_asan
if build "$asan" io/threadmodel "-fsanitize=address,undefined -fno-sanitize-recover=all" io/loop; then
  record 1 "build with -fsanitize=address,undefined"
  pingpong asan_pp "ASan ping-pong, server merge, client split, depth 4" "$merge" "$split" "$asan" "-d 4"
  run asan_burst "$asan" -T 60 -- -p 10000 -g 2 -l 65536 -q 65536 -x -v 0 $split -- \
    -s 10.0.0.1 -p 10000 -g 2 -l 65536 -d 4 -c 2 -t 2 -k -v 0 $merge
  record "$(clean_exit asan_burst && ! grep -q 'Sanitizer' "$work/asan_burst.out" && echo 1 || echo 0)" \
    "ASan burst, server split, client merge: clean exit, no sanitizer report"
else
  cat "$work/build.log"; record 0 "build with -fsanitize=address,undefined"
fi

# unified is a pass-through: same bytes out as the app without the layer (virtual clock)
if [ -n "$plain" ]; then
  args=(-V -T 30 -- -p 10000 -g 1 -l 100 -q 100 -x -v 1 -- -s 10.0.0.1 -p 10000 -g 1 -l 100 -c 4 -d 2 -t 2 -x -k -v 1)
  timeout 120 "$plain" "${args[@]}" >"$work/uni_plain.out" 2>&1
  timeout 120 "$bin" "${args[@]}" 2>&1 | grep -v '^threadmodel: unified$' >"$work/uni_tm.out"
  record "$(grep -q '^total: ' "$work/uni_plain.out" && cmp -s "$work/uni_plain.out" "$work/uni_tm.out" && echo 1 || echo 0)" \
    "unified (the default): output identical to apps/bench without the layer (-V, per-second lines, summary, pools)"
fi

# bad options: a message naming the problem, exit status 2
bad() { # bad <description> <expected text> <tm args...>
  local d=$1 want=$2; shift 2
  timeout 20 "$bin" -T 5 -- -p 10000 --tm "$@" >"$work/bad.out" 2>&1
  local r=$?
  record "$([ "$r" = 2 ] && grep -q -- "$want" "$work/bad.out" && echo 1 || echo 0)" "$d: exit 2 ($r) with a message"
}
bad "unknown model" "-m needs unified, split or merge" -m bogus
bad "queue size not a power of two" "-q needs a power of two" -m split -q 100
bad "bad core list" "-c needs a core list" -m split -c 1,x
bad "unknown option" "unknown option" -m merge -Z 3
bad "ready packets not below the queue size" "-a 64 must be below -q 64" -m merge -q 64 -a 64
IIP_THREADMODEL="-m nope" timeout 20 "$bin" -T 5 -- -p 10000 >"$work/badenv.out" 2>&1
r=$?
record "$([ "$r" = 2 ] && grep -q 'IIP_THREADMODEL' "$work/badenv.out" && echo 1 || echo 0)" "bad IIP_THREADMODEL: exit 2 ($r) naming the variable"
timeout 20 "$bin" -T 5 -- -p 10000 --tm -m split -c 4000 >"$work/badcore.out" 2>&1
r=$?
record "$([ "$r" != 0 ] && grep -q 'cannot start the application thread' "$work/badcore.out" && echo 1 || echo 0)" \
  "split on a core that does not exist: refused ($r) with a message"

# real links: af_packet and af_xdp on a veth pair in two namespaces this
# script creates (iiptm<pid>-a/-b, no kernel address on either side, removed
# on exit); the server under each model, the client unified on af_packet
if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
  echo "SKIP: af_packet / af_xdp runs (need root and iproute2)"
else
  afp=$work/bench_tm_afp; afx=$work/bench_tm_afx
  build "$afp" io/threadmodel "" io/af_packet && afp_ok=1 || { cat "$work/build.log"; afp_ok=0; }
  record "$afp_ok" "build apps/bench with io/threadmodel over io/af_packet"
  build "$afx" io/threadmodel "" io/af_xdp && afx_ok=1 || { cat "$work/build.log"; afx_ok=0; }
  record "$afx_ok" "build apps/bench with io/threadmodel over io/af_xdp"
  if NETNS_ADDR_A= NETNS_ADDR_B= "$root/tools/netns.sh" up "$ns" >"$work/netns.log" 2>&1; then
    ns_up=1
    # veth <name> <server binary> <description> <server tm...>
    veth() {
      local n=$1 sb=$2 d=$3; shift 3
      ip netns exec "$ns-b" timeout 60 "$sb" -i "$ns-vb" -a 10.99.0.2 -e 1 -- -p 10000 -g 1 -l 1 -q 1 -x -v 0 "$@" \
        >"$work/$n.srv" 2>&1 &
      local spid=$!
      sleep 1
      ip netns exec "$ns-a" timeout 60 "$afp" -i "$ns-va" -a 10.99.0.1 -e 1 -- \
        -s 10.99.0.2 -p 10000 -g 1 -l 1 -c 4 -t 2 -x -k -v 0 >"$work/$n.out" 2>&1
      local crc=$?
      wait "$spid"; local src=$?
      local req ck bad sck sbad
      req=$(requests "$n"); read -r ck bad <<<"$(checked "$n")"
      sck=$(grep -m1 '^bench: server: [0-9]* connection(s) accepted' "$work/$n.srv" | sed -n 's/.*checked \([0-9]*\) bytes bad \([0-9]*\),.*/\1 \2/p')
      record "$([ "$crc" = 0 ] && [ "$src" = 0 ] && grep -q 'remote stop yes' "$work/$n.srv" && echo 1 || echo 0)" \
        "$d: client and server exit 0 (server stopped by the client's remote stop)"
      record "$([ -n "$req" ] && [ "$req" -gt 0 ] && [ "${ck:-0}" = "$req" ] && [ "${bad:-1}" = 0 ] && [ "$sck" = "$req 0" ] && echo 1 || echo 0)" \
        "$d: $req requests, every reply verified by the client, every request byte by the server ($sck)"
      record "$(grep -Eq 'all returned|0 held by the stack or app' "$work/$n.srv" && ! grep -q 'in use: [1-9]' "$work/$n.srv" && echo 1 || echo 0)" \
        "$d: the server's packets all returned to the backend"
    }
    if [ "$afp_ok" = 1 ]; then
      veth afp_unified "$afp" "af_packet, server unified" --tm -m unified
      veth afp_split "$afp" "af_packet, server split" --tm -m split -c "$app_core"
      veth afp_merge "$afp" "af_packet, server merge" --tm -m merge
      if [ "$afx_ok" = 1 ]; then
        veth afx_split "$afx" "af_xdp, server split" --tm -m split -c "$app_core"
        veth afx_merge "$afx" "af_xdp, server merge" --tm -m merge
      fi
    fi
    # another application: tcp_echo clones what it receives (the clone goes
    # through the networking thread) against socat on the kernel's stack
    echo_bin=$work/tcp_echo_tm
    if (cd "$root/apps/examples/tcp_echo" && IOSUB_DIR=io/threadmodel INNER_IOSUB_DIR=io/af_packet OUT="$echo_bin" make -s) \
        >"$work/build.log" 2>&1 && command -v socat >/dev/null && ip netns exec "$ns-a" ip addr add 10.99.0.1/24 dev "$ns-va"; then
      head -c 2000000 /dev/urandom >"$work/echo.in"
      for m in split merge; do
        ip netns exec "$ns-b" timeout 60 "$echo_bin" -i "$ns-vb" -a 10.99.0.2 -e 1 -- -p 7 -n 1 --tm -m "$m" -c "$app_core" \
          >"$work/echo_$m.srv" 2>&1 &
        spid=$!
        sleep 1
        ip netns exec "$ns-a" timeout 30 socat -t 10 - TCP:10.99.0.2:7 <"$work/echo.in" >"$work/echo_$m.out" 2>"$work/echo_$m.err"
        wait "$spid"; src=$?
        record "$(cmp -s "$work/echo.in" "$work/echo_$m.out" && [ "$src" = 0 ] && grep -q 'all returned' "$work/echo_$m.srv" && echo 1 || echo 0)" \
          "tcp_echo (af_packet) $m: socat gets back its 2 MB byte for byte; the echo server exits 0, packets all returned"
      done
    else
      cat "$work/build.log"; record 0 "build tcp_echo with io/threadmodel over io/af_packet, address the kernel side, socat"
    fi
  else
    cat "$work/netns.log"; record 0 "create namespaces $ns-a/-b with a veth pair"
  fi
fi

finish
