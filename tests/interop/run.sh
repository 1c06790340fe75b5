#!/usr/bin/env bash
# tests/interop/run.sh — the stack against the Linux kernel over real
# interfaces, through the tap and af_packet backends, with the HTTP server
# example (apps/examples/http_server) on the stack and Linux tools (ping,
# curl) as peers.
#
# For every backend configuration it checks: ping gets replies (also
# 3000-byte pings, fragmented both ways); a 10 MiB body reaches curl whole
# (SHA-256 compared with the documented byte pattern); a 10 MiB upload
# reaches the server whole (it checks the pattern; a corrupted copy is
# caught at the right offset); 50 sequential
# requests of varied sizes; keep-alive (several requests on one connection);
# 20 parallel requests; HEAD; "connection refused" for a closed port, fast;
# the server stops on SIGTERM with exit status 0 and every packet returned
# to its pool; with several threads, no frame reached a thread other than
# the one helper_ip4_get_connection_affinity names.
#
# Needs root (namespaces, tap, packet sockets); without it, everything is
# skipped. Every namespace and device is created here with a name that
# carries this shell's PID (iipt<PID>...) and removed by that name on exit.
# Prints one line per check and ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
pass=0; fail=0; skip=0
ok()  { echo "pass: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
skp() { echo "skip: $1"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit $?; }

if [ "${EUID:-$(id -u)}" -ne 0 ]; then
	skp "interop tests need root (network namespaces, tap devices, packet sockets)"
	finish
fi
for tool in ip ethtool curl ping sha256sum gcc make timeout; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skp "interop tests need '$tool'"
		finish
	fi
done

OUT=$(mktemp -d "${TMPDIR:-/tmp}/iip-interop.XXXXXX")
PFX="iipt$$"                 # <= 11 characters, so NAME + one letter fits netns.sh's 12
TAPNS="${PFX}t"              # namespace of the tap runs
PKTNET="${PFX}p"             # netns.sh topology of the af_packet runs
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	ip netns del "$TAPNS" 2>/dev/null
	"$ROOT/tools/netns.sh" down "$PKTNET" >/dev/null 2>&1
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build -------------------------------------------------------------------
build_server() { # backend
	if timeout 300 make -s -C "$ROOT/apps/examples/http_server" IOSUB_DIR="$ROOT/io/$1" OUT="$OUT/http_$1" \
		>"$OUT/build_$1.log" 2>&1; then
		ok "build http_server with io/$1"
		return 0
	fi
	cat "$OUT/build_$1.log"
	bad "build http_server with io/$1"
	return 1
}

# the documented body pattern, byte i = (uint8_t) (i * 131 + (i >> 11))
cat >"$OUT/gen_body.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0, i;
	for (i = 0; i < n; i++)
		putchar((unsigned char) (i * 131u + (i >> 11)));
	return 0;
}
EOF
if ! gcc -O2 -o "$OUT/gen_body" "$OUT/gen_body.c"; then
	bad "build the body generator"
	finish
fi
sha_of_body() { "$OUT/gen_body" "$1" | sha256sum | cut -d' ' -f1; }
BIG=$((10 * 1024 * 1024))
SHA_BIG=$(sha_of_body $BIG)
SHA_1M=$(sha_of_body 1048576)
"$OUT/gen_body" $BIG >"$OUT/up.bin"
cp "$OUT/up.bin" "$OUT/upbad.bin"
printf 'X' | dd of="$OUT/upbad.bin" bs=1 seek=5000000 conv=notrunc 2>/dev/null

have_tap=1; have_afp=1
build_server tap || have_tap=0
build_server af_packet || have_afp=0
# the client side: apps/examples/ping_udp resolves Linux's MAC (ARP), sends
# ICMP echo requests and UDP datagrams, and checks every reply byte
have_pinger=1
command -v socat >/dev/null 2>&1 || have_pinger=0
for b in tap af_packet; do
	if [ "$have_pinger" = 1 ] && ! timeout 300 make -s -C "$ROOT/apps/examples/ping_udp" IOSUB_DIR="$ROOT/io/$b" \
		OUT="$OUT/ping_$b" >"$OUT/build_ping_$b.log" 2>&1; then
		cat "$OUT/build_ping_$b.log"; bad "build ping_udp with io/$b"; have_pinger=0
	fi
done
[ "$have_pinger" = 1 ] || skp "the stack as a client (ping_udp) needs socat and a ping_udp build"

# ---- one server run ---------------------------------------------------------------
# start_server NS LOG CMD...: runs CMD in namespace NS (bounded by timeout),
# waits until the app printed its banner
start_server() {
	local ns=$1 log=$2; shift 2
	ip netns exec "$ns" timeout 600 "$@" >"$log" 2>&1 &
	SERVER_PID=$!
	local i
	for i in $(seq 1 100); do
		grep -q '^http_server: port' "$log" 2>/dev/null && return 0
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "  server log:"; sed 's/^/  | /' "$log"
	return 1
}

# stop_server LOG: SIGTERM (timeout passes it on), then the exit status
stop_server() {
	local log=$1 i rc
	kill -TERM "$SERVER_PID" 2>/dev/null
	for i in $(seq 1 100); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
		SERVER_PID=""
		return 1
	fi
	wait "$SERVER_PID"; rc=$?
	SERVER_PID=""
	return $rc
}

# the checks against a running server at IP, run from namespace NS
run_checks() { # name ns ip
	local name=$1 ns=$2 ip=$3 out r i n_ok
	local X="ip netns exec $ns"

	out=$($X timeout 10 ping -c 3 -i 0.2 -W 2 "$ip" 2>&1)
	if echo "$out" | grep -q ' 3 received'; then ok "$name: ping, 3/3 replies"
	else echo "$out" | sed 's/^/  | /'; bad "$name: ping, 3/3 replies"; fi

	out=$($X timeout 10 ping -c 2 -i 0.3 -W 2 -s 3000 "$ip" 2>&1)
	if echo "$out" | grep -q ' 2 received' && echo "$out" | grep -q '^3008 bytes from'; then
		ok "$name: ping -s 3000 (fragmented both ways), 2/2 replies of 3008 bytes"
	else echo "$out" | sed 's/^/  | /'; bad "$name: ping -s 3000 (fragmented both ways), 2/2 replies"; fi

	r=$($X timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code} %{size_download} %{speed_download}' "http://$ip/")
	set -- $r
	if [ "${1:-}" = 200 ] && [ "${2:-}" = "$BIG" ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ]; then
		ok "$name: curl GET 10 MiB, SHA-256 matches ($(awk -v b="${3:-0}" 'BEGIN { printf "%.1f MB/s", b / 1e6 }'))"
	else bad "$name: curl GET 10 MiB, SHA-256 matches (got: $r)"; fi
	rm -f "$OUT/big.bin"

	n_ok=0
	for i in $(seq 1 50); do
		local want=$(( (i * 7919) % 200000 ))
		r=$($X timeout 10 curl -s -o /dev/null -w '%{http_code} %{size_download}' "http://$ip/$want")
		[ "$r" = "200 $want" ] && n_ok=$((n_ok + 1))
	done
	if [ "$n_ok" -eq 50 ]; then ok "$name: 50 sequential requests (0..200 KB), all 200 with the right length"
	else bad "$name: 50 sequential requests, only $n_ok right"; fi

	# one curl, 10 URLs: keep-alive reuses one connection
	local urls="" k
	for k in $(seq 1 10); do urls="$urls -o /dev/null http://$ip/$((k * 1000))"; done
	r=$($X timeout 20 curl -s -w '%{http_code} %{size_download} %{num_connects}\n' $urls)
	if [ "$(echo "$r" | awk '$1 == 200 { n++ } END { print n + 0 }')" = 10 ] &&
	   [ "$(echo "$r" | awk '{ c += $3 } END { print c + 0 }')" = 1 ] &&
	   [ "$(echo "$r" | awk '{ s += $2 } END { print s + 0 }')" = 55000 ]; then
		ok "$name: keep-alive, 10 requests on 1 connection"
	else echo "$r" | sed 's/^/  | /'; bad "$name: keep-alive, 10 requests on 1 connection"; fi

	for i in $(seq 1 20); do
		$X timeout 60 curl -s -o "$OUT/par$i.bin" -w '%{http_code}' "http://$ip/1048576" >"$OUT/par$i.code" 2>/dev/null &
	done
	wait_children_but_server
	n_ok=0
	for i in $(seq 1 20); do
		[ "$(cat "$OUT/par$i.code" 2>/dev/null)" = 200 ] &&
			[ "$(sha256sum <"$OUT/par$i.bin" | cut -d' ' -f1)" = "$SHA_1M" ] && n_ok=$((n_ok + 1))
		rm -f "$OUT/par$i.bin" "$OUT/par$i.code"
	done
	if [ "$n_ok" -eq 20 ]; then ok "$name: 20 parallel requests of 1 MiB, all 200 and SHA-256 right"
	else bad "$name: 20 parallel requests, only $n_ok right"; fi

	# the other direction: 10 MiB into the stack, checked there byte by byte
	r=$($X timeout 60 curl -s --data-binary @"$OUT/up.bin" -w ' %{http_code} %{speed_upload}' "http://$ip/" | tr '\n' ' ')
	if echo "$r" | grep -q "^received $BIG bytes, pattern ok  *200 "; then
		ok "$name: curl POST 10 MiB, the server checked every byte ($(echo "$r" | awk '{ printf "%.1f MB/s", $NF / 1e6 }'))"
	else bad "$name: curl POST 10 MiB (got: $r)"; fi
	r=$($X timeout 60 curl -s -X PUT -H 'Expect:' --data-binary @"$OUT/upbad.bin" -w ' %{http_code}' "http://$ip/" | tr '\n' ' ')
	if echo "$r" | grep -q "^received $BIG bytes, pattern mismatch at offset 5000000  *422"; then
		ok "$name: curl PUT of a body with one wrong byte: the server finds it at offset 5000000"
	else bad "$name: corrupted upload (got: $r)"; fi

	r=$($X timeout 10 curl -s -I "http://$ip/12345" | tr -d '\r')
	if echo "$r" | grep -q '^HTTP/1.1 200' && echo "$r" | grep -q '^Content-Length: 12345$'; then
		ok "$name: HEAD gives the length and no body"
	else echo "$r" | sed 's/^/  | /'; bad "$name: HEAD"; fi

	$X timeout 5 curl -s -o /dev/null "http://$ip:81/"; r=$?
	if [ "$r" -eq 7 ]; then ok "$name: closed port -> connection refused (curl exit 7, within 5 s)"
	else bad "$name: closed port -> connection refused (curl exit $r, want 7)"; fi
}

# waits for the background curls, not for the server
wait_children_but_server() {
	local p
	for p in $(jobs -p); do
		[ "$p" = "$SERVER_PID" ] || wait "$p" 2>/dev/null
	done
}

# after stop: exit status, leak report, steering
check_exit() { # name log rc threads
	local name=$1 log=$2 rc=$3 threads=$4
	if [ "$rc" -eq 0 ]; then ok "$name: server stops on SIGTERM with status 0"
	else sed 's/^/  | /' "$log"; bad "$name: server stops on SIGTERM with status 0 (got $rc)"; fi
	local pools returned
	pools=$(grep -c 'pool alloc' "$log"); returned=$(grep -c 'pool alloc.*all returned' "$log")
	if [ "$pools" -ge 1 ] && [ "$pools" = "$returned" ]; then ok "$name: every packet returned to the pools"
	else grep 'pool alloc' "$log" | sed 's/^/  | /'; bad "$name: every packet returned to the pools"; fi
	if [ "$threads" -gt 1 ]; then
		if grep -q 'mis-steered' "$log" && ! grep -Eq 'mis-steered [1-9]' "$log"; then
			ok "$name: no frame reached a thread other than the one the affinity helper names"
		else grep 'mis-steered' "$log" | sed 's/^/  | /'; bad "$name: mis-steered frames"; fi
		if [ "$(grep -Ec '^http_server: thread [0-9]+: [1-9][0-9]* connections' "$log")" -eq "$threads" ]; then
			ok "$name: every thread served connections"
		else grep '^http_server: thread' "$log" | sed 's/^/  | /'; bad "$name: every thread served connections"; fi
	fi
	grep -E 'http_server: thread|rx .* frames' "$log" | sed 's/^/  /'
}

NCPU=$(nproc 2>/dev/null || echo 1)

# the stack pings Linux (ICMP) and talks to a UDP echo server there (socat)
run_pinger() { # name ns-of-linux linux-ip ns-of-stack backend-options...
	local name=$1 lns=$2 lip=$3 sns=$4 log="$OUT/$1-ping.log" echo_pid r; shift 4
	[ "$have_pinger" = 1 ] || return
	ip netns exec "$lns" timeout 120 socat UDP4-RECVFROM:7,fork PIPE >/dev/null 2>&1 &
	echo_pid=$!
	sleep 0.3
	ip netns exec "$sns" timeout 60 "$@" -- -s "$lip" -n 200 -l 1472 -w 16 -r 300 >"$log" 2>&1; r=$?
	kill "$echo_pid" 2>/dev/null; wait "$echo_pid" 2>/dev/null
	if [ "$r" -eq 0 ] && grep -q '^ping_udp: icmp echo: 200/200 replies' "$log" &&
	   grep -q '^ping_udp: udp echo: 200/200 replies' "$log" && grep -q '^ping_udp: result: ok' "$log"; then
		ok "$name: the stack as client: ARP, 200 ICMP echoes and 200 UDP echoes (16..1472 bytes) from Linux, every byte checked"
	else sed 's/^/  | /' "$log"; bad "$name: the stack as client (ping_udp, status $r)"; fi
}

# ---- tap ------------------------------------------------------------------------------
run_tap() { # name threads features
	local name=$1 threads=$2 feat=$3 log="$OUT/$1.log" cores=0 rc
	[ "$threads" -gt 1 ] && cores="0-$((threads - 1))"
	ip netns add "$TAPNS" && ip netns exec "$TAPNS" ip link set lo up || { bad "$name: namespace $TAPNS"; return; }
	if start_server "$TAPNS" "$log" "$OUT/http_tap" -i "${PFX}tap" -a 10.98.0.2/24 -k 10.98.0.1/24 \
		-l "$cores" -F "$feat" -e 5 -- -p 80 -b 10M; then
		ok "$name: server up (tap ${PFX}tap, kernel side 10.98.0.1 via -k)"
		run_checks "$name" "$TAPNS" 10.98.0.2
		stop_server "$log"; rc=$?
		check_exit "$name" "$log" "$rc" "$threads"
	else
		bad "$name: server up"
		stop_server "$log" >/dev/null 2>&1
	fi
	[ "$threads" -eq 1 ] && run_pinger "$name" "$TAPNS" 10.98.0.1 "$TAPNS" "$OUT/ping_tap" -i "${PFX}tap" \
		-a 10.98.0.2/24 -k 10.98.0.1/24 -F "$feat"
	ip netns del "$TAPNS"
}

# ---- af_packet -----------------------------------------------------------------------
run_afp() { # name threads features [tx-on]
	local name=$1 threads=$2 feat=$3 txon=${4:-} log="$OUT/$1.log" cores=0 rc
	[ "$threads" -gt 1 ] && cores="0-$((threads - 1))"
	# no kernel address on the stack's side: the kernel must not answer there
	if ! NETNS_ADDR_B= timeout 30 "$ROOT/tools/netns.sh" up "$PKTNET" >"$OUT/netns.log" 2>&1; then
		cat "$OUT/netns.log"; bad "$name: netns.sh up $PKTNET"; return
	fi
	if [ -n "$txon" ]; then # the Linux side leaves TCP/UDP checksums unfinished
		ip netns exec "$PKTNET-a" ethtool -K "$PKTNET-va" tx on >/dev/null 2>&1
	fi
	if start_server "$PKTNET-b" "$log" "$OUT/http_af_packet" -i "$PKTNET-vb" -a 10.99.0.2 \
		-l "$cores" -F "$feat" -e 5 -- -p 80 -b 10M; then
		ok "$name: server up (veth $PKTNET-vb, no kernel address)"
		run_checks "$name" "$PKTNET-a" 10.99.0.2
		stop_server "$log"; rc=$?
		check_exit "$name" "$log" "$rc" "$threads"
	else
		bad "$name: server up"
		stop_server "$log" >/dev/null 2>&1
	fi
	[ "$threads" -eq 1 ] && run_pinger "$name" "$PKTNET-a" 10.99.0.1 "$PKTNET-b" "$OUT/ping_af_packet" \
		-i "$PKTNET-vb" -a 10.99.0.2 -F "$feat"
	timeout 30 "$ROOT/tools/netns.sh" down "$PKTNET" >/dev/null 2>&1
}

# ---- bad command lines and missing devices: clear errors, non-zero status ---------------
run_errors() {
	local r out
	if [ "$have_tap" = 1 ]; then
		out=$(timeout 5 "$OUT/http_tap" -a 10.0.0.1 -- 2>&1); r=$?
		{ [ "$r" -eq 2 ] && echo "$out" | grep -q 'required'; } && ok "tap: missing -i -> status 2 and a message" ||
			bad "tap: missing -i (status $r: $out)"
		out=$(timeout 5 "$OUT/http_tap" -i x -a 10.0.0.300 -- 2>&1); r=$?
		[ "$r" -eq 2 ] && ok "tap: bad -a -> status 2" || bad "tap: bad -a (status $r)"
		out=$(timeout 5 "$OUT/http_tap" -i x -a 10.0.0.1 -l 5-1 -- 2>&1); r=$?
		[ "$r" -eq 2 ] && ok "tap: bad -l -> status 2" || bad "tap: bad -l (status $r)"
		out=$(timeout 5 "$OUT/http_tap" -i x -a 10.0.0.1 -F tso -- 2>&1); r=$?
		[ "$r" -eq 2 ] && ok "tap: -F tso without csum -> status 2" || bad "tap: -F tso without csum (status $r)"
		if command -v setpriv >/dev/null 2>&1; then
			out=$(timeout 5 setpriv --reuid=65534 --regid=65534 --clear-groups "$OUT/http_tap" -i "${PFX}np" \
				-a 10.0.0.1 -- 2>&1); r=$?
			{ [ "$r" -eq 2 ] && echo "$out" | grep -qi 'root'; } && ok "tap: not root -> status 2, says root is needed" ||
				bad "tap: not root (status $r: $out)"
		else
			skp "tap: not-root check needs setpriv"
		fi
		# a device another process holds: the second opener is told it is busy
		ip netns add "$TAPNS" && ip netns exec "$TAPNS" ip link set lo up
		if start_server "$TAPNS" "$OUT/busy.log" "$OUT/http_tap" -i "${PFX}tap" -a 10.98.0.2 -- -p 80; then
			out=$(ip netns exec "$TAPNS" timeout 5 "$OUT/http_tap" -i "${PFX}tap" -a 10.98.0.3 -- 2>&1); r=$?
			{ [ "$r" -eq 2 ] && echo "$out" | grep -q 'busy'; } && ok "tap: device in use -> status 2, says busy" ||
				bad "tap: device in use (status $r: $out)"
			stop_server "$OUT/busy.log"
		else
			bad "tap: device in use (first server did not start)"
			stop_server "$OUT/busy.log" >/dev/null 2>&1
		fi
		ip netns del "$TAPNS"
	fi
	if [ "$have_afp" = 1 ]; then
		out=$(timeout 5 "$OUT/http_af_packet" -i "${PFX}none" -a 10.0.0.1 -- 2>&1); r=$?
		{ [ "$r" -eq 2 ] && echo "$out" | grep -q 'does not exist'; } && ok "af_packet: missing interface -> status 2, says so" ||
			bad "af_packet: missing interface (status $r: $out)"
		out=$(timeout 5 "$OUT/http_af_packet" -i lo -a 10.0.0.1 -e x -- 2>&1); r=$?
		[ "$r" -eq 2 ] && ok "af_packet: bad -e -> status 2" || bad "af_packet: bad -e (status $r)"
		if command -v setpriv >/dev/null 2>&1; then
			out=$(timeout 5 setpriv --reuid=65534 --regid=65534 --clear-groups "$OUT/http_af_packet" -i lo \
				-a 10.0.0.1 -- 2>&1); r=$?
			{ [ "$r" -eq 2 ] && echo "$out" | grep -qi 'root'; } && ok "af_packet: not root -> status 2, says root is needed" ||
				bad "af_packet: not root (status $r: $out)"
		fi
	fi
}

run_errors
if [ "$have_tap" = 1 ]; then
	run_tap tap 1 none
	run_tap tap-offload 1 sg,csum,tso,lro
	if [ "$NCPU" -ge 2 ]; then run_tap tap-2q 2 sg,csum,tso,lro
	else skp "tap with 2 queues needs 2 CPUs"; fi
fi
if [ "$have_afp" = 1 ]; then
	run_afp af_packet 1 none
	run_afp af_packet-csum-txon 1 sg,csum txon
	if [ "$NCPU" -ge 2 ]; then run_afp af_packet-2t 2 sg,csum,tso
	else skp "af_packet with 2 threads needs 2 CPUs"; fi
fi
finish
