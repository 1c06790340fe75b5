#!/usr/bin/env bash
# The demo: a benchmark server on the stack answers a benchmark client on the
# stack, 1-byte TCP ping-pong, and both print their figures (a line per
# second, then the latency percentiles).
#
#   sudo make deps demo                      AF_XDP on a veth pair between two namespaces
#   sudo DEMO_BACKEND=af_packet make demo    or af_packet, tap (server on tap, Linux-side
#                                            client not used: both ends on the stack), loop
#   DEMO_SECONDS=10 DEMO_CONNS=32 make demo
#
# The namespaces and the veth pair are created for the run and removed after.
set -eu
cd "$(dirname "$0")/.."
backend=${DEMO_BACKEND:-af_xdp}
secs=${DEMO_SECONDS:-5}
conns=${DEMO_CONNS:-8}
out=build/demo
mkdir -p "$out"

case "$backend" in
	af_xdp|af_packet|loop) ;;
	*) echo "demo: DEMO_BACKEND must be af_xdp, af_packet or loop (got '$backend')" >&2; exit 2 ;;
esac
if [ "$backend" != loop ] && [ "$(id -u)" -ne 0 ]; then
	echo "demo: the $backend backend needs root (namespaces, raw sockets); run with sudo, or DEMO_BACKEND=loop" >&2
	exit 1
fi

echo "== building the benchmark tool on the $backend backend"
make -s -C apps/bench IOSUB_DIR="$PWD/io/$backend" OUT="$PWD/$out/bench-$backend" >/dev/null

bench=$PWD/$out/bench-$backend
app_server="-p 10000 -g 1 -l 1"
app_client="-s SERVER -p 10000 -g 1 -l 1 -c $conns -t $secs -k"

if [ "$backend" = loop ]; then
	echo "== two hosts in one process (10.0.0.1 server, 10.0.0.2 client), real clock"
	"$bench" -T $((secs + 5)) -- $app_server -- ${app_client/SERVER/10.0.0.1}
	exit 0
fi

name=iipdemo$$
cleanup() {
	[ -n "${server_pid:-}" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
	bash tools/netns.sh down "$name" >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM
echo "== creating namespaces $name-a and $name-b joined by a veth pair"
eval "$(bash tools/netns.sh up "$name")"
srv_ip=10.99.0.1
echo "== server: the stack on $backend in $name-a ($srv_ip), port 10000"
ip netns exec "$name-a" "$bench" -i "$name-va" -l 0 -- $app_server > "$out/server.log" 2>&1 &
server_pid=$!
sleep 1
if ! kill -0 "$server_pid" 2>/dev/null; then
	echo "demo: the server did not start:" >&2
	cat "$out/server.log" >&2
	exit 1
fi
echo "== client: the stack on $backend in $name-b, $conns connections, $secs s"
ip netns exec "$name-b" "$bench" -i "$name-vb" -l 1 -- ${app_client/SERVER/$srv_ip}
wait "$server_pid" 2>/dev/null || true
server_pid=
echo "== server side:"
tail -n 3 "$out/server.log"
