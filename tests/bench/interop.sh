# Sourced by tests/bench/run.sh (uses record, $root, $work).
# apps/bench on a real link against the Linux baseline (apps/linux_baseline)
# on the kernel's stack: two namespaces joined by a veth pair (tools/netns.sh,
# name iiptb<pid>), the stack on the af_packet backend in NAME-b (the veth
# has no kernel address there; the stack owns 10.99.0.2), Linux in NAME-a
# (10.99.0.1).  Both directions: the Linux client against our server (which
# it stops through port 50000 with -k), and our client against the Linux
# server (which we stop with -k).  Needs root; skipped otherwise.

ib_name="iiptb$$"
ib_pids=""

ib_cleanup() {
  local p
  for p in $ib_pids; do kill "$p" 2>/dev/null; done
  "$root/tools/netns.sh" down "$ib_name" >/dev/null 2>&1
}

if [ "${EUID:-1}" != 0 ] || ! command -v ip >/dev/null 2>&1; then
  echo "SKIP: interop with the Linux baseline over af_packet (needs root and iproute2)"; skip=$((skip + 1))
  return 0
fi

ib_bin=$work/bench-af_packet
if ! (cd "$root/apps/bench" && IOSUB_DIR=io/af_packet OUT="$ib_bin" make -s >"$work/ib_build.log" 2>&1); then
  cat "$work/ib_build.log"; record 0 "build apps/bench with IOSUB_DIR=io/af_packet"
  return 0
fi
record 1 "build apps/bench with IOSUB_DIR=io/af_packet"
if ! gcc -std=gnu11 -O2 -o "$work/lb_client" "$root/apps/linux_baseline/client.c" -lpthread 2>"$work/lb.log" ||
   ! gcc -std=gnu11 -O2 -o "$work/lb_server" "$root/apps/linux_baseline/server.c" -lpthread 2>>"$work/lb.log"; then
  cat "$work/lb.log"; record 0 "build the Linux baseline client and server"
  return 0
fi
trap 'ib_cleanup; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
if ! NETNS_ADDR_B= "$root/tools/netns.sh" up "$ib_name" >"$work/ib_netns.log" 2>&1; then
  cat "$work/ib_netns.log"; record 0 "create namespaces $ib_name-a/-b with a veth pair"
  return 0
fi

# waits (at most 10 s) for pid $1; its exit status in ib_status
ib_wait() {
  local i
  for i in $(seq 100); do
    if ! kill -0 "$1" 2>/dev/null; then wait "$1"; ib_status=$?; return 0; fi
    sleep 0.1
  done
  ib_status=timeout
  return 1
}

# ---- Linux client -> our server ---------------------------------------------------------
ip netns exec "$ib_name-b" timeout 60 "$ib_bin" -i "$ib_name-vb" -a 10.99.0.2 -e 1 -- -p 10000 -M x -x -v 0 \
  >"$work/ib_srv.out" 2>&1 &
ib_srv=$!; ib_pids="$ib_pids $ib_srv"
sleep 1
ip netns exec "$ib_name-a" timeout 30 "$work/lb_client" -s 10.99.0.2 -p 10000 -c 4 -d 1 -t 2 -k >"$work/ib_lbc.out" 2>&1
ib_lbc=$?
ib_wait "$ib_srv"
ib_req=$(sed -n 's/^total: \([0-9]*\) requests.*/\1/p' "$work/ib_lbc.out")
record "$([ "$ib_lbc" = 0 ] && [ -n "$ib_req" ] && [ "$ib_req" -gt 0 ] && echo 1 || echo 0)" \
  "interop: Linux baseline client -> bench server on the stack (af_packet): $ib_req requests completed"
record "$([ "$ib_status" = 0 ] && grep -q '^bench: server: 4 connection(s) accepted.*bad 0,.*remote stop yes' "$work/ib_srv.out" && echo 1 || echo 0)" \
  "interop: bench server accepted 4 connections, every request byte as sent, stopped by the Linux client's -k (exit $ib_status)"
[ "$ib_status" = 0 ] || cat "$work/ib_srv.out" "$work/ib_lbc.out"

# ---- our client -> Linux server ------------------------------------------------------------
ip netns exec "$ib_name-a" timeout 60 "$work/lb_server" -p 10001 -q 1 -l 1 >"$work/ib_lbs.out" 2>&1 &
ib_lbs=$!; ib_pids="$ib_pids $ib_lbs"
sleep 1
# the Linux server's filler is 'x': -M x checks each reply is exactly that
ip netns exec "$ib_name-b" timeout 30 "$ib_bin" -i "$ib_name-vb" -a 10.99.0.2 -e 1 -- \
  -s 10.99.0.1 -p 10001 -l 1 -M x -c 4 -d 2 -t 2 -x -k -v 0 >"$work/ib_cli.out" 2>&1
ib_cli=$?
ib_wait "$ib_lbs"
ib_line=$(grep -m1 '^bench: client: [0-9]* connection(s) established' "$work/ib_cli.out")
ib_req=$(sed -n 's/.*; \([0-9]*\) requests,.*/\1/p' <<<"$ib_line")
record "$([ "$ib_cli" = 0 ] && [ -n "$ib_req" ] && [ "$ib_req" -gt 0 ] && grep -q "^bench: client: 4 connection(s) established, 0 failed; $ib_req requests, $ib_req replies checked bad 0," <<<"$ib_line" && echo 1 || echo 0)" \
  "interop: bench client on the stack (af_packet) -> Linux baseline server: 4 connections, $ib_req requests, every reply verified"
record "$([ "$ib_status" = 0 ] && grep -q 'remote stop requested' "$work/ib_lbs.out" && echo 1 || echo 0)" \
  "interop: the Linux server was stopped by our client's -k (exit $ib_status)"
[ "$ib_cli" = 0 ] && [ "$ib_status" = 0 ] || cat "$work/ib_cli.out" "$work/ib_lbs.out"
ib_cleanup
