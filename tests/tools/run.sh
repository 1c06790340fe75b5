#!/usr/bin/env bash
# Tests of the test-topology tooling: tools/netns.sh (namespaces + veths) and
# tools/impair (the user-space impairment bridge). Needs root; without it
# every check is skipped. Each check prints one line; the last line is
# "N passed, N failed[, N skipped]" and the exit status is non-zero when a
# check failed. Every step is bounded with `timeout`; the namespaces are named
# iipt<pid>... and removed on exit.
set -u
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
NETNS="$ROOT/tools/netns.sh"
IMPAIR="$ROOT/tools/impair/impair"

CHECKS=18   # keep in step with the checks below (used for the skip line)
pass=0; fail=0
ok()  { echo "PASS: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1${2:+ -- $2}"; fail=$((fail + 1)); }
# check NAME CMD...: passes when CMD succeeds
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name" "$WHY"; fi; }

if [ "${EUID:-$(id -u)}" -ne 0 ]; then
  echo "SKIP: tools tests need root (network namespaces, AF_PACKET)"
  echo "0 passed, 0 failed, $CHECKS skipped"
  exit 0
fi
for tool in ip ethtool ping socat ss sha256sum timeout make cc; do
  command -v "$tool" >/dev/null 2>&1 || { echo "FAIL: required tool '$tool' is missing"; echo "0 passed, 1 failed"; exit 1; }
done

PLAIN="iipt$$"      # <= 11 characters: pid_max is 7 digits
BRIDGED="iipt${$}b" # <= 12 characters, the limit netns.sh enforces
TMP=$(mktemp -d /tmp/iipt-tools.XXXXXX)
IMP_PID=""
WHY=""

cleanup() {
  if [ -n "$IMP_PID" ]; then kill -TERM "$IMP_PID" 2>/dev/null; wait "$IMP_PID" 2>/dev/null; fi
  timeout 30 "$NETNS" down "$PLAIN" >/dev/null 2>&1
  timeout 30 "$NETNS" down "$BRIDGED" >/dev/null 2>&1
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- helpers

ns_present() { ip netns list | awk '{print $1}' | grep -qxF -- "$1"; }

# leftovers NAME: prints any namespace or root-namespace link left by NAME
leftovers() {
  ip netns list | awk '{print $1}' | grep -E "^$1-[amb]\$"
  ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E "^$1-(va|vb|ma|mb)\$"
}

# start_impair ARGS...: runs the bridge in BRIDGED-m and waits until ready
start_impair() {
  : >"$TMP/imp.out"; : >"$TMP/imp.err"
  ip netns exec "$BRIDGED-m" timeout 300 "$IMPAIR" -i "$BRIDGED-ma" -I "$BRIDGED-mb" "$@" \
    >"$TMP/imp.out" 2>"$TMP/imp.err" &
  IMP_PID=$!
  local i
  for i in $(seq 50); do
    grep -q 'ready:' "$TMP/imp.err" && return 0
    kill -0 "$IMP_PID" 2>/dev/null || break
    sleep 0.1
  done
  WHY="impair did not start: $(tr '\n' ' ' <"$TMP/imp.err")"
  return 1
}

# stop_impair [SIGNAL]: stops the bridge; its counters are in $TMP/imp.out
stop_impair() {
  local sig=${1:-INT} rc
  [ -n "$IMP_PID" ] || return 1
  kill "-$sig" "$IMP_PID" 2>/dev/null
  wait "$IMP_PID"; rc=$?
  IMP_PID=""
  return $rc
}

# counter FROM KEY: a counter of direction FROM (a: a->b, b: b->a)
counter() {
  local line
  if [ "$1" = a ]; then line="$BRIDGED-ma->$BRIDGED-mb:"; else line="$BRIDGED-mb->$BRIDGED-ma:"; fi
  grep -F -- "$line" "$TMP/imp.out" | grep -oE " $2=[0-9]+" | cut -d= -f2
}

# balanced: in both directions, received + duplicated == forwarded + dropped
balanced() {
  local d r u f x
  for d in a b; do
    r=$(counter $d received); u=$(counter $d duplicated)
    f=$(counter $d forwarded); x=$(counter $d dropped)
    if [ -z "$r" ] || [ -z "$f" ] || [ -z "$x" ] || [ -z "$u" ]; then
      WHY="no counters for direction $d: $(tr '\n' ' ' <"$TMP/imp.out")"; return 1
    fi
    if [ $((r + u)) -ne $((f + x)) ]; then
      WHY="direction $d: received=$r duplicated=$u but forwarded=$f dropped=$x"; return 1
    fi
  done
}

# ping_summary NS DST COUNT INTERVAL: prints "transmitted received"
ping_summary() {
  timeout 60 ip netns exec "$1" ping -q -n -c "$3" -i "$4" -W 1 "$2" 2>/dev/null |
    sed -nE 's/^([0-9]+) packets transmitted, ([0-9]+) received.*/\1 \2/p'
}

# wait_listen NS PORT: until a TCP listener is up on PORT in NS
wait_listen() {
  local i
  for i in $(seq 50); do
    ip netns exec "$1" ss -ltnH "sport = :$2" 2>/dev/null | grep -q . && return 0
    sleep 0.1
  done
  return 1
}

# transfer SRC PORT: sends SRC from a to b over TCP with socat and compares
# sha256 on both ends
transfer() {
  local src=$1 port=$2 dst="$TMP/received.bin" srv cli
  rm -f "$dst"
  timeout 120 ip netns exec "$BRIDGED-b" socat -u "TCP-LISTEN:$port,reuseaddr" "CREATE:$dst" 2>"$TMP/srv.err" &
  srv=$!
  if ! wait_listen "$BRIDGED-b" "$port"; then
    kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
    WHY="socat listener did not start: $(cat "$TMP/srv.err")"; return 1
  fi
  timeout 120 ip netns exec "$BRIDGED-a" socat -u "OPEN:$src" "TCP:10.99.0.2:$port" 2>"$TMP/cli.err"; cli=$?
  wait "$srv"; local srv_rc=$?
  if [ $cli -ne 0 ] || [ $srv_rc -ne 0 ]; then
    WHY="socat exit client=$cli server=$srv_rc: $(cat "$TMP/cli.err" "$TMP/srv.err" | tr '\n' ' ')"; return 1
  fi
  local want got
  want=$(sha256sum <"$src" | cut -d' ' -f1)
  got=$(sha256sum <"$dst" | cut -d' ' -f1)
  if [ "$want" != "$got" ]; then
    WHY="sha256 differs: sent $want ($(stat -c %s "$src") B), received $got ($(stat -c %s "$dst") B)"; return 1
  fi
}

# ---------------------------------------------------------------- checks

t_build() {
  timeout 120 make -s -C tools/impair >"$TMP/build.log" 2>&1 && [ -x "$IMPAIR" ] && return 0
  WHY="make -C tools/impair failed: $(tail -n 5 "$TMP/build.log" | tr '\n' ' ')"
  return 1
}
check "impair builds (-Wall -Wextra -Werror)" t_build

# bad input: exit 2 with a message for options, 1 for a missing interface
t_impair_bad_input() {
  local args rc
  for args in "" "-i x" "-i x -I x" "-i x -I y -l 2" "-i x -I y -d abc" "-i x -I y -q 0" "-i x -I y -z" "-i x -I y -b 1,2,3"; do
    # shellcheck disable=SC2086
    timeout 10 "$IMPAIR" $args >/dev/null 2>"$TMP/err"; rc=$?
    if [ $rc -ne 2 ] || ! grep -q '^impair: ' "$TMP/err"; then WHY="'impair $args' exited $rc: $(cat "$TMP/err")"; return 1; fi
  done
  timeout 10 "$IMPAIR" -i "$PLAIN-nope" -I "$PLAIN-nop2" >/dev/null 2>"$TMP/err"; rc=$?
  if [ $rc -ne 1 ] || ! grep -q 'no interface' "$TMP/err"; then WHY="missing interface: exit $rc: $(cat "$TMP/err")"; return 1; fi
}
check "impair rejects bad options and missing interfaces" t_impair_bad_input

t_netns_bad_input() {
  local rc
  timeout 10 "$NETNS" up abcdefghijklm >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -ne 0 ] && grep -q '1-12 characters' "$TMP/err" || { WHY="long NAME: exit $rc: $(cat "$TMP/err")"; return 1; }
  timeout 10 "$NETNS" up "$PLAIN" --queues 0 >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -ne 0 ] && grep -q 'queues' "$TMP/err" || { WHY="--queues 0: exit $rc: $(cat "$TMP/err")"; return 1; }
  ! ns_present "$PLAIN-a" || { WHY="a rejected 'up' created $PLAIN-a"; return 1; }
}
check "netns.sh rejects a long NAME and bad --queues" t_netns_bad_input

t_plain_up() {
  timeout 30 "$NETNS" up "$PLAIN" --queues 2 >"$TMP/up.out" 2>&1 || { WHY="up failed: $(cat "$TMP/up.out")"; return 1; }
  ns_present "$PLAIN-a" && ns_present "$PLAIN-b" || { WHY="namespaces missing: $(ip netns list | tr '\n' ' ')"; return 1; }
  ip -n "$PLAIN-a" -o addr show dev "$PLAIN-va" | grep -q 'inet 10.99.0.1/24' || { WHY="no 10.99.0.1/24 on $PLAIN-va"; return 1; }
  ip -n "$PLAIN-b" -o addr show dev "$PLAIN-vb" | grep -q 'inet 10.99.0.2/24' || { WHY="no 10.99.0.2/24 on $PLAIN-vb"; return 1; }
  ip -n "$PLAIN-a" -d link show dev "$PLAIN-va" | grep -q 'numtxqueues 2 numrxqueues 2' || { WHY="$PLAIN-va does not have 2 queues"; return 1; }
  ip netns exec "$PLAIN-b" ethtool -k "$PLAIN-vb" | grep -q '^tx-checksumming: off' || { WHY="tx checksumming still on on $PLAIN-vb"; return 1; }
  grep -q "^ns_a=$PLAIN-a if_a=$PLAIN-va addr_a=10.99.0.1/24" "$TMP/up.out" || { WHY="unexpected output: $(cat "$TMP/up.out")"; return 1; }
}
check "netns.sh up creates the namespaces, veths (2 queues, tx off) and addresses" t_plain_up

t_plain_exists() {
  local rc
  timeout 30 "$NETNS" up "$PLAIN" >/dev/null 2>"$TMP/err"; rc=$?
  [ $rc -ne 0 ] && grep -q 'already exists' "$TMP/err" || { WHY="second up: exit $rc: $(cat "$TMP/err")"; return 1; }
  ip -n "$PLAIN-a" link show dev "$PLAIN-va" >/dev/null 2>&1 || { WHY="the refused up damaged the existing topology"; return 1; }
}
check "netns.sh up refuses an existing NAME and leaves it intact" t_plain_exists

t_plain_ping() {
  local s; s=$(ping_summary "$PLAIN-a" 10.99.0.2 5 0.1)
  [ "$s" = "5 5" ] || { WHY="ping transmitted/received: '${s:-none}'"; return 1; }
}
check "ping across the plain veth pair (5/5)" t_plain_ping

t_plain_down() {
  timeout 30 "$NETNS" down "$PLAIN" >"$TMP/down.out" 2>&1 || { WHY="down failed: $(cat "$TMP/down.out")"; return 1; }
  local left; left=$(leftovers "$PLAIN")
  [ -z "$left" ] || { WHY="left behind: $left"; return 1; }
  timeout 30 "$NETNS" down "$PLAIN" >"$TMP/down.out" 2>&1 || { WHY="second down failed: $(cat "$TMP/down.out")"; return 1; }
}
check "netns.sh down removes everything and is idempotent" t_plain_down

t_bridge_up() {
  timeout 30 "$NETNS" up "$BRIDGED" --bridge >"$TMP/up.out" 2>&1 || { WHY="up --bridge failed: $(cat "$TMP/up.out")"; return 1; }
  local ns dev
  for ns in a m b; do ns_present "$BRIDGED-$ns" || { WHY="namespace $BRIDGED-$ns missing"; return 1; }; done
  for dev in ma mb; do
    ethtool_off "$BRIDGED-m" "$BRIDGED-$dev" || return 1
  done
  ethtool_off "$BRIDGED-a" "$BRIDGED-va" && ethtool_off "$BRIDGED-b" "$BRIDGED-vb" || return 1
  # nothing forwards yet: a cannot reach b without the bridge
  local s; s=$(ping_summary "$BRIDGED-a" 10.99.0.2 2 0.2)
  [ "$s" = "2 0" ] || { WHY="ping before the bridge runs: '${s:-none}', expected '2 0'"; return 1; }
}
ethtool_off() {
  local k f; k=$(ip netns exec "$1" ethtool -k "$2")
  for f in tx-checksumming tcp-segmentation-offload generic-segmentation-offload generic-receive-offload; do
    echo "$k" | grep -q "^$f: off" || { WHY="$f not off on $2"; return 1; }
  done
}
check "netns.sh up --bridge: 3 namespaces, offloads off, no path without the bridge" t_bridge_up

t_bridge_clean() {
  start_impair -s 1 || return 1
  local s; s=$(ping_summary "$BRIDGED-a" 10.99.0.2 10 0.05)
  [ "$s" = "10 10" ] || { WHY="ping through the bridge: '${s:-none}'"; stop_impair; return 1; }
  transfer "$TMP/src4" 5001 || { stop_impair; return 1; }
  stop_impair INT || { WHY="impair exited non-zero after SIGINT: $(cat "$TMP/imp.err")"; return 1; }
  balanced || return 1
  local d
  for d in a b; do
    [ "$(counter $d dropped)" = 0 ] || { WHY="direction $d dropped $(counter $d dropped) without impairment"; return 1; }
  done
  # 4 MiB of payload crossed a->b
  [ "$(counter a forwarded_bytes)" -gt $((4 * 1024 * 1024)) ] || { WHY="only $(counter a forwarded_bytes) bytes forwarded a->b"; return 1; }
}
head -c $((4 * 1024 * 1024)) /dev/urandom >"$TMP/src4"
head -c $((5 * 1024 * 1024)) /dev/urandom >"$TMP/src5"
head -c $((2 * 1024 * 1024)) /dev/urandom >"$TMP/src2"
check "bridge without impairment: ping 10/10, 4 MiB socat sha256 match, nothing dropped" t_bridge_clean

t_bridge_timeout() {
  timeout 20 ip netns exec "$BRIDGED-m" "$IMPAIR" -i "$BRIDGED-ma" -I "$BRIDGED-mb" -t 0.5 >"$TMP/imp.out" 2>"$TMP/imp.err" || {
    WHY="impair -t 0.5 exited $?: $(cat "$TMP/imp.err")"; return 1; }
  [ "$(grep -c -- '->.*: received=' "$TMP/imp.out")" = 2 ] || { WHY="expected 2 counter lines: $(cat "$TMP/imp.out")"; return 1; }
}
check "impair -t stops by itself with status 0 and prints both directions" t_bridge_timeout

t_bridge_loss() {
  start_impair -l 0.1 -s 7 || return 1
  local s; s=$(ping_summary "$BRIDGED-a" 10.99.0.2 200 0.01)
  stop_impair TERM || { WHY="impair exited non-zero after SIGTERM: $(cat "$TMP/imp.err")"; return 1; }
  local tx rx; read -r tx rx <<<"$s"
  [ -n "$tx" ] && [ "$tx" = 200 ] || { WHY="ping summary '${s:-none}'"; return 1; }
  [ "$rx" -lt "$tx" ] && [ "$rx" -gt 0 ] || { WHY="ping received $rx of $tx: expected some but not all"; return 1; }
  LOSS_INFO="ping $rx/$tx, lost a->b=$(counter a lost) b->a=$(counter b lost)"
  [ "$(counter a lost)" -gt 0 ] && [ "$(counter b lost)" -gt 0 ] || { WHY="lost counters: $LOSS_INFO"; return 1; }
  balanced || return 1
  # every echo the bridge lost is a reply ping did not see: the bridge's
  # losses (both ways) cover at least ping's missing replies minus ARP noise
  local lost=$(( $(counter a lost) + $(counter b lost) ))
  [ "$lost" -ge $((tx - rx)) ] || { WHY="bridge lost $lost frames but ping missed $((tx - rx)) replies"; return 1; }
}
LOSS_INFO=""
check "bridge -l 0.1: ping loss seen, lost > 0 both ways, forwarded+dropped = received" t_bridge_loss
[ -n "$LOSS_INFO" ] && echo "  ($LOSS_INFO)"

t_bridge_reorder_dup() {
  start_impair -r 0.2 -u 0.1 -s 11 || return 1
  transfer "$TMP/src5" 5002 || { stop_impair; return 1; }
  stop_impair INT || { WHY="impair exited non-zero: $(cat "$TMP/imp.err")"; return 1; }
  balanced || return 1
  [ "$(counter a reordered)" -gt 0 ] && [ "$(counter a duplicated)" -gt 0 ] || {
    WHY="a->b reordered=$(counter a reordered) duplicated=$(counter a duplicated)"; return 1; }
  RD_INFO="a->b reordered=$(counter a reordered) duplicated=$(counter a duplicated) forwarded=$(counter a forwarded)"
}
RD_INFO=""
check "bridge -r 0.2 -u 0.1: 5 MiB socat sha256 match, reordered and duplicated > 0" t_bridge_reorder_dup
[ -n "$RD_INFO" ] && echo "  ($RD_INFO)"

t_bridge_rate() {
  start_impair -b 10 -q 200 -s 3 || return 1
  transfer "$TMP/src2" 5003 || { stop_impair; return 1; }
  stop_impair INT || { WHY="impair exited non-zero: $(cat "$TMP/imp.err")"; return 1; }
  balanced || return 1
  [ "$(counter a rate_delayed)" -gt 0 ] || { WHY="a->b rate_delayed=$(counter a rate_delayed)"; return 1; }
  [ "$(counter a peak_queue)" -gt 1 ] && [ "$(counter a peak_queue)" -le 200 ] || { WHY="a->b peak_queue=$(counter a peak_queue), expected 2..200"; return 1; }
  RATE_INFO="a->b rate_delayed=$(counter a rate_delayed) peak_queue=$(counter a peak_queue) queue_full=$(counter a queue_full)"
}
RATE_INFO=""
check "bridge -b 10 -q 200: 2 MiB sha256 match, frames waited for the link, queue bounded" t_bridge_rate
[ -n "$RATE_INFO" ] && echo "  ($RATE_INFO)"

t_bridge_queue_limit() {
  start_impair -b 20 -q 8 -s 9 || return 1
  transfer "$TMP/src2" 5004 || { stop_impair; return 1; }
  stop_impair INT || { WHY="impair exited non-zero: $(cat "$TMP/imp.err")"; return 1; }
  balanced || return 1
  [ "$(counter a queue_full)" -gt 0 ] && [ "$(counter a peak_queue)" -le 8 ] || {
    WHY="a->b queue_full=$(counter a queue_full) peak_queue=$(counter a peak_queue)"; return 1; }
  QUEUE_INFO="a->b queue_full=$(counter a queue_full) peak_queue=$(counter a peak_queue) forwarded=$(counter a forwarded)"
}
QUEUE_INFO=""
check "bridge -b 20 -q 8: drop tail counted, queue never above 8, 2 MiB sha256 match" t_bridge_queue_limit
[ -n "$QUEUE_INFO" ] && echo "  ($QUEUE_INFO)"

t_bridge_delay() {
  start_impair -d 20 -j 5 -s 5 || return 1
  local out rtt_min
  out=$(timeout 30 ip netns exec "$BRIDGED-a" ping -q -n -c 5 -i 0.1 -W 2 10.99.0.2 2>&1)
  stop_impair INT || { WHY="impair exited non-zero: $(cat "$TMP/imp.err")"; return 1; }
  echo "$out" | grep -q '^5 packets transmitted, 5 received' || { WHY="ping with delay: $(echo "$out" | tail -n 2 | tr '\n' ' ')"; return 1; }
  balanced || return 1
  [ "$(counter a delayed)" -ge 5 ] && [ "$(counter b delayed)" -ge 5 ] || { WHY="delayed a->b=$(counter a delayed) b->a=$(counter b delayed)"; return 1; }
  # a lower bound only (slowness cannot break it): each way waits >= 20-5 ms
  rtt_min=$(echo "$out" | sed -nE 's|^rtt min/avg/max/mdev = ([0-9]+)\..*|\1|p')
  [ -n "$rtt_min" ] && [ "$rtt_min" -ge 30 ] || { WHY="rtt min '$rtt_min' ms < 2 x (20 - 5) ms"; return 1; }
  DELAY_INFO="rtt $(echo "$out" | sed -nE 's|^rtt min/avg/max/mdev = ([^ ]+) ms|\1|p') ms"
}
DELAY_INFO=""
check "bridge -d 20 -j 5: ping 5/5, delayed both ways, rtt >= 30 ms" t_bridge_delay
[ -n "$DELAY_INFO" ] && echo "  ($DELAY_INFO)"

t_bridge_seeded() {
  # the same seed and the same frames give the same decisions
  local run out1 out2 mac_a mac_b
  # static neighbours: no ARP frames, so both runs carry exactly the same
  # 50 echo requests a->b
  mac_a=$(ip netns exec "$BRIDGED-a" cat "/sys/class/net/$BRIDGED-va/address")
  mac_b=$(ip netns exec "$BRIDGED-b" cat "/sys/class/net/$BRIDGED-vb/address")
  ip -n "$BRIDGED-a" neigh replace 10.99.0.2 lladdr "$mac_b" dev "$BRIDGED-va" nud permanent &&
    ip -n "$BRIDGED-b" neigh replace 10.99.0.1 lladdr "$mac_a" dev "$BRIDGED-vb" nud permanent ||
    { WHY="cannot set static neighbours"; return 1; }
  for run in 1 2; do
    start_impair -l 0.3 -s 42 || return 1
    ping_summary "$BRIDGED-a" 10.99.0.2 50 0.02 >/dev/null
    stop_impair INT || return 1
    eval "out$run=\"\$(counter a lost)/\$(counter a received)\""
  done
  [ "${out1#*/}" = 50 ] || { WHY="run1 lost/received a->b $out1: expected 50 frames"; return 1; }
  [ "$out1" = "$out2" ] || { WHY="seed 42: run1 $out1, run2 $out2"; return 1; }
  [ "${out1%/*}" -gt 0 ] || { WHY="seed 42 lost nothing: $out1"; return 1; }
  SEED_INFO="lost/received a->b: run1 $out1, run2 $out2"
}
SEED_INFO=""
check "impair -s: same seed and frames give the same losses" t_bridge_seeded
[ -n "$SEED_INFO" ] && echo "  ($SEED_INFO)"

t_bridge_down() {
  timeout 30 "$NETNS" down "$BRIDGED" >"$TMP/down.out" 2>&1 || { WHY="down failed: $(cat "$TMP/down.out")"; return 1; }
  local left; left=$(leftovers "$BRIDGED")
  [ -z "$left" ] || { WHY="left behind: $left"; return 1; }
}
check "netns.sh down removes the bridged topology" t_bridge_down

t_down_kills() {
  # a process left inside would keep the namespace alive; down must end it
  timeout 30 "$NETNS" up "$PLAIN" >/dev/null 2>&1 || { WHY="up failed"; return 1; }
  ip netns exec "$PLAIN-a" sleep 300 &
  local sleeper=$!
  sleep 0.2
  timeout 30 "$NETNS" down "$PLAIN" >/dev/null 2>&1 || { WHY="down failed"; kill "$sleeper" 2>/dev/null; return 1; }
  local i
  for i in $(seq 20); do kill -0 "$sleeper" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$sleeper" 2>/dev/null; then kill "$sleeper"; WHY="process inside $PLAIN-a survived down"; return 1; fi
  wait "$sleeper" 2>/dev/null
  local left; left=$(leftovers "$PLAIN")
  [ -z "$left" ] || { WHY="left behind: $left"; return 1; }
}
check "netns.sh down ends processes left in the namespaces" t_down_kills

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
