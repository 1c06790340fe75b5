#!/usr/bin/env bash
# tests/af_xdp/run.sh — the stack on the AF_XDP backend (io/af_xdp) against
# the Linux kernel: the stack owns one end of a veth pair in one network
# namespace, Linux tools run in the other (tools/netns.sh topology).
#
# First, without privileges, test_umem.c checks the UMEM frame accounting
# (fill ring, RX packets, clones, completions) and the steering rings.
# Then, for native and for generic (SKB) XDP mode:
#   - ping gets replies from the stack, also 3000-byte pings (fragmented both
#     ways); a UDP datagram comes back from the ping_udp responder; the
#     stack's pinger resolves Linux by ARP and gets its ICMP and UDP echoes;
#   - 10 MiB of random bytes through the tcp_echo app with socat: what comes
#     back has the same SHA-256 (TCP data both ways at once);
#   - 10 MiB from apps/examples/http_server to curl, SHA-256 of the
#     documented body pattern, and 10 MiB POSTed to it, checked there byte
#     by byte (when that app exists);
#   - every server stops on SIGTERM with status 0 and, with all connections
#     closed, every UMEM frame is back (free or with the kernel).
# Through tools/impair (1% loss, 2 ms delay each way): 10 MiB echoed intact.
# With two queues and two threads (software steering): 32 parallel echo
# transfers all complete and every connection was accepted on the thread
# helper_ip4_get_connection_affinity() names. Also: a run under ASan+UBSan,
# busy polling (-e 0), a pcap file (-w), and clear errors: not root, no such
# interface, more threads than queues, fewer threads than queues, native XDP
# refused by the device, -S nic without hardware RSS, bad option, no -i.
#
# Needs root; without it (or without libxdp) everything is skipped. The
# namespaces carry this shell's PID (iipt<PID>...) and are removed on exit.
# Prints one line per check and ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
NETNS="$ROOT/tools/netns.sh"
pass=0; fail=0; skip=0
ok()  { echo "pass: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
skp() { echo "skip: $1"; skip=$((skip + 1)); }
finish() { echo "$pass passed, $fail failed, $skip skipped"; [ "$fail" -eq 0 ]; exit $?; }
# check NAME CMD...: passes when CMD succeeds
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# ---- without privileges: frame accounting and steering rings (test_umem.c) ----
if command -v gcc >/dev/null 2>&1 && pkg-config --exists libxdp libbpf 2>/dev/null; then
	UNIT=$(mktemp "${TMPDIR:-/tmp}/iip-afxdp-unit.XXXXXX")
	if gcc -std=gnu11 -O2 -g -Wall -Wextra -Werror -o "$UNIT" test_umem.c \
		$(pkg-config --cflags --libs libxdp libbpf) -lpthread 2>"$UNIT.log"; then
		while IFS= read -r line; do
			case "$line" in
			pass:*) ok "umem/steer: ${line#pass: }" ;;
			FAIL:*) bad "umem/steer: ${line#FAIL: }" ;;
			esac
		done < <(timeout 120 "$UNIT")
	else
		bad "build tests/af_xdp/test_umem.c"; cat "$UNIT.log"
	fi
	rm -f "$UNIT" "$UNIT.log"
else
	skp "umem/steer unit checks need gcc, libxdp and libbpf (Debian: libxdp-dev libbpf-dev)"
fi

if [ "${EUID:-$(id -u)}" -ne 0 ]; then
	skp "AF_XDP tests need root (network namespaces, XDP programs, AF_XDP sockets)"
	finish
fi
for tool in ip ethtool ping socat curl sha256sum gcc make timeout pkg-config setpriv; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skp "AF_XDP tests need '$tool'"
		finish
	fi
done
if ! pkg-config --exists libxdp libbpf; then
	skp "AF_XDP tests need libxdp and libbpf (Debian: libxdp-dev libbpf-dev)"
	finish
fi

OUT=$(mktemp -d "${TMPDIR:-/tmp}/iip-afxdp.XXXXXX")
PFX="iipt$$"          # <= 11 characters; netns.sh allows 12 for NAME
ONE="${PFX}x"         # one queue
TWO="${PFX}y"         # two queues
LOSSY="${PFX}z"       # through the impairment bridge
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	"$NETNS" down "$ONE" >/dev/null 2>&1
	"$NETNS" down "$TWO" >/dev/null 2>&1
	"$NETNS" down "$LOSSY" >/dev/null 2>&1
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- build -------------------------------------------------------------------
build() { # app binary
	timeout 300 make -s -C "$ROOT/apps/examples/$1" IOSUB_DIR="$ROOT/io/af_xdp" OUT="$OUT/$2" \
		>"$OUT/build_$2.log" 2>&1
}
if build ping_udp ping_udp; then ok "build ping_udp with io/af_xdp"; else bad "build ping_udp with io/af_xdp"; cat "$OUT/build_ping_udp.log"; finish; fi
if build tcp_echo tcp_echo; then ok "build tcp_echo with io/af_xdp"; else bad "build tcp_echo with io/af_xdp"; cat "$OUT/build_tcp_echo.log"; finish; fi
HTTP=0
if [ -f "$ROOT/apps/examples/http_server/main.c" ]; then
	if build http_server http_server; then ok "build http_server with io/af_xdp"; HTTP=1
	else bad "build http_server with io/af_xdp"; sed -n 1,20p "$OUT/build_http_server.log"; fi
fi

# the http_server body: byte i = (uint8_t) (i * 131 + (i >> 11))
cat >"$OUT/gen_body.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0, i;
	static unsigned char buf[65536];
	for (i = 0; i < n;) {
		size_t k = 0;
		for (; k < sizeof(buf) && i < n; k++, i++)
			buf[k] = (unsigned char) (i * 131 + (i >> 11));
		fwrite(buf, 1, k, stdout);
	}
	return 0;
}
EOF
gcc -O2 -o "$OUT/gen_body" "$OUT/gen_body.c" || { bad "build the body generator"; finish; }
BIG=10485760
head -c "$BIG" /dev/urandom >"$OUT/random.bin"
head -c 262144 /dev/urandom >"$OUT/random256k.bin"
SHA_RANDOM=$(sha256sum <"$OUT/random.bin" | cut -d' ' -f1)
SHA_256K=$(sha256sum <"$OUT/random256k.bin" | cut -d' ' -f1)
"$OUT/gen_body" "$BIG" >"$OUT/body.bin"
SHA_BODY=$(sha256sum <"$OUT/body.bin" | cut -d' ' -f1)

# ---- helpers -----------------------------------------------------------------
# start NAME NS BINARY ARGS...: starts a server in NS, waits for the
# backend's setup line; its output goes to $OUT/NAME.out
start() {
	local name=$1 ns=$2 i; shift 2
	: >"$OUT/$name.out"
	ip netns exec "$ns" timeout 120 "$@" >"$OUT/$name.out" 2>&1 &
	SERVER_PID=$!
	for i in $(seq 100); do
		grep -q '^af_xdp: .*(ifindex' "$OUT/$name.out" && { sleep 0.2; return 0; }
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "  server $name did not start:"; sed 's/^/    /' "$OUT/$name.out"
	return 1
}
# stop [wait]: SIGTERM (unless the server ends by itself), returns its status
stop() {
	local rc
	[ -n "$SERVER_PID" ] || return 1
	[ "${1:-}" = wait ] || kill -TERM "$SERVER_PID" 2>/dev/null
	wait "$SERVER_PID"; rc=$?
	SERVER_PID=""
	return $rc
}
# frames_back NAME: every thread's UMEM frames are free or with the kernel
frames_back() {
	local lines held
	lines=$(grep -c 'held by the stack or app' "$OUT/$1.out")
	held=$(grep 'held by the stack or app' "$OUT/$1.out" | sed -E 's/.* ([0-9]+) held by.*/\1/' | sort -u)
	[ "$lines" -ge 1 ] && [ "$held" = 0 ]
}
no_backend_errors() { # NAME: no dropped or mismatched frames in the backend's counters
	! grep -E 'kick errors [1-9]|completion mismatches [1-9]|rx bad descriptors [1-9]|rx invalid [1-9]|tx invalid [1-9]' "$OUT/$1.out" >/dev/null
}
show() { sed 's/^/    /' "$OUT/$1.out"; }

# ---- one queue: native and generic ------------------------------------------
if ! NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B=10.99.0.2 "$NETNS" up "$ONE" >"$OUT/netns1.log" 2>&1; then
	bad "create the one-queue topology"; cat "$OUT/netns1.log"; finish
fi
A="$ONE-a"; B="$ONE-b"; IF="$ONE-va"; IP=10.99.0.1

for mode in native generic; do
	# ping and UDP with ping_udp's responder
	if start "ping_$mode" "$A" "$OUT/ping_udp" -i "$IF" -M "$mode" -w "$OUT/ping_$mode.pcap" --; then
		grep -q "$mode mode" "$OUT/ping_$mode.out"; check "$mode: the backend reports $mode mode" [ $? -eq 0 ]
		out=$(ip netns exec "$B" timeout 20 ping -c 5 -i 0.2 -W 2 "$IP" 2>&1)
		check "$mode: ping: 5 of 5 replies" grep -q ' 5 received' <<<"$out"
		out=$(ip netns exec "$B" timeout 20 ping -c 3 -i 0.3 -W 2 -s 3000 "$IP" 2>&1)
		check "$mode: ping -s 3000 (fragmented both ways): 3 of 3 replies" grep -q ' 3 received' <<<"$out"
		reply=$(echo "iip-af_xdp-udp-$mode" | ip netns exec "$B" timeout 10 socat -t 3 - "UDP:$IP:7" 2>&1)
		check "$mode: UDP datagram echoed by ping_udp" [ "$reply" = "iip-af_xdp-udp-$mode" ]
		stop; rc=$?
		check "$mode: ping_udp stops on SIGTERM with status 0" [ "$rc" -eq 0 ]
		check "$mode: ping_udp: every UMEM frame returned" frames_back "ping_$mode"
		check "$mode: ping_udp: no descriptor errors" no_backend_errors "ping_$mode"
		# the pcap file holds the replies the stack sent
		if command -v tshark >/dev/null 2>&1; then
			n=$(tshark -r "$OUT/ping_$mode.pcap" -Y 'icmp.type == 0' 2>/dev/null | wc -l)
			check "$mode: pcap (-w) holds the 8 echo replies ($n)" [ "$n" -eq 8 ]
		else
			magic=$(head -c 4 "$OUT/ping_$mode.pcap" | od -An -tx1 | tr -d ' ')
			check "$mode: pcap (-w) file written" [ "$magic" = d4c3b2a1 ]
		fi
	else
		bad "$mode: start ping_udp"; stop
	fi

	# the stack as the active side: ARP request, ICMP echo and UDP to Linux
	# (a socat UDP echo on port 7), every reply checked byte by byte
	ip netns exec "$B" timeout 60 socat UDP4-RECVFROM:7,fork PIPE 2>/dev/null &
	UDPECHO_PID=$!
	sleep 0.3
	ip netns exec "$A" timeout 60 "$OUT/ping_udp" -i "$IF" -M "$mode" -- -s 10.99.0.2 -n 20 -l 1472 \
		>"$OUT/pinger_$mode.out" 2>&1; rc=$?
	kill -TERM "$UDPECHO_PID" 2>/dev/null; wait "$UDPECHO_PID" 2>/dev/null
	good=0; [ "$rc" -eq 0 ] && grep -q '^ping_udp: result: ok' "$OUT/pinger_$mode.out" && good=1
	check "$mode: the stack pings Linux (ARP, 20 ICMP + 20 UDP echoes checked): $(grep -m1 'icmp echo:' "$OUT/pinger_$mode.out" | cut -d, -f1)" [ "$good" = 1 ]
	check "$mode: pinger: every UMEM frame returned" frames_back "pinger_$mode"

	# TCP both ways: 10 MiB echoed
	if start "echo_$mode" "$A" "$OUT/tcp_echo" -i "$IF" -M "$mode" -- -p 5000 -n 1; then
		ip netns exec "$B" timeout 60 socat -t 30 - "TCP:$IP:5000" <"$OUT/random.bin" >"$OUT/echo_$mode.bin" 2>"$OUT/echo_$mode.err"
		sha=$(sha256sum <"$OUT/echo_$mode.bin" | cut -d' ' -f1)
		check "$mode: tcp_echo: 10 MiB sent and echoed back, SHA-256 equal ($(stat -c %s "$OUT/echo_$mode.bin") bytes)" [ "$sha" = "$SHA_RANDOM" ]
		stop wait; rc=$?
		check "$mode: tcp_echo ends after its connection (-n 1) with status 0" [ "$rc" -eq 0 ]
		check "$mode: tcp_echo: every UMEM frame returned" frames_back "echo_$mode"
		check "$mode: tcp_echo: no descriptor errors" no_backend_errors "echo_$mode"
	else
		bad "$mode: start tcp_echo"; stop
	fi

	# TCP download: 10 MiB from http_server to curl
	if [ "$HTTP" = 1 ]; then
		if start "http_$mode" "$A" "$OUT/http_server" -i "$IF" -M "$mode" -- -p 8080 -b "$BIG"; then
			res=$(ip netns exec "$B" timeout 60 curl -s -o "$OUT/http_$mode.bin" -w '%{http_code} %{size_download}' "http://$IP:8080/")
			sha=$(sha256sum <"$OUT/http_$mode.bin" | cut -d' ' -f1)
			good=0; [ "$res" = "200 $BIG" ] && [ "$sha" = "$SHA_BODY" ] && good=1
			check "$mode: curl gets 10 MiB from http_server, SHA-256 of the pattern ($res)" [ "$good" = 1 ]
			# and the other way: 10 MiB into the stack, checked there byte by byte
			res=$(ip netns exec "$B" timeout 60 curl -s --data-binary @"$OUT/body.bin" -w ' %{http_code}' \
				"http://$IP:8080/" | tr '\n' ' ')
			good=0; grep -q "^received $BIG bytes, pattern ok  *200" <<<"$res" && good=1
			check "$mode: curl POSTs 10 MiB to http_server, which checks every byte ($res)" [ "$good" = 1 ]
			sleep 0.3 # the closing handshake
			stop; rc=$?
			check "$mode: http_server stops on SIGTERM with status 0" [ "$rc" -eq 0 ]
			check "$mode: http_server: every UMEM frame returned" frames_back "http_$mode"
		else
			bad "$mode: start http_server"; stop
		fi
	else
		skp "$mode: http_server download (apps/examples/http_server not present)"
	fi
done

# busy polling
if start echo_busy "$A" "$OUT/tcp_echo" -i "$IF" -e 0 -- -p 5000 -n 1; then
	grep -q 'busy poll' "$OUT/echo_busy.out"; check "busy poll: the backend reports busy polling" [ $? -eq 0 ]
	ip netns exec "$B" timeout 60 socat -t 30 - "TCP:$IP:5000" <"$OUT/random.bin" >"$OUT/echo_busy.bin" 2>/dev/null
	sha=$(sha256sum <"$OUT/echo_busy.bin" | cut -d' ' -f1)
	check "busy poll (-e 0): 10 MiB echoed, SHA-256 equal" [ "$sha" = "$SHA_RANDOM" ]
	stop wait; rc=$?
	check "busy poll: tcp_echo status 0" [ "$rc" -eq 0 ]
else
	bad "busy poll: start tcp_echo"; stop
fi

# under AddressSanitizer and UndefinedBehaviorSanitizer (misaligned header
# access, overflows, use after free, leaks at exit)
if timeout 300 make -s -C "$ROOT/apps/examples/tcp_echo" IOSUB_DIR="$ROOT/io/af_xdp" OUT="$OUT/tcp_echo_san" \
	EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	LDFLAGS="-fsanitize=address,undefined" >"$OUT/build_san.log" 2>&1; then
	if start echo_san "$A" "$OUT/tcp_echo_san" -i "$IF" -- -p 5000 -n 1; then
		ip netns exec "$B" timeout 60 socat -t 30 - "TCP:$IP:5000" <"$OUT/random.bin" >"$OUT/echo_san.bin" 2>/dev/null
		sha=$(sha256sum <"$OUT/echo_san.bin" | cut -d' ' -f1)
		stop wait; rc=$?
		good=0; [ "$sha" = "$SHA_RANDOM" ] && [ "$rc" -eq 0 ] &&
			! grep -qE 'runtime error|AddressSanitizer|LeakSanitizer' "$OUT/echo_san.out" && good=1
		check "sanitizers: 10 MiB echo with ASan+UBSan, no report, status $rc" [ "$good" = 1 ]
		[ "$good" = 1 ] || grep -m5 -E 'runtime error|Sanitizer' "$OUT/echo_san.out"
	else
		bad "sanitizers: start tcp_echo"; stop
	fi
else
	skp "sanitizer build failed (no libasan/libubsan?)"
fi

# ---- errors ------------------------------------------------------------------
# expect_error NAME PATTERN NS ARGS...: non-zero status and PATTERN in stderr
expect_error() {
	local name=$1 pat=$2 ns=$3 rc; shift 3
	ip netns exec "$ns" timeout 30 "$@" >"$OUT/err.out" 2>"$OUT/err.err"; rc=$?
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && grep -q -- "$pat" "$OUT/err.err"; then
		ok "$name (status $rc: $(grep -m1 -- "$pat" "$OUT/err.err" | cut -c1-110))"
	else
		bad "$name (status $rc)"; sed 's/^/    /' "$OUT/err.err" | head -5
	fi
}
expect_error "not root: clear error" "must run as root" "$A" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$OUT/tcp_echo" -i "$IF" --
expect_error "missing interface: clear error" "not found in this network namespace" "$A" \
	"$OUT/tcp_echo" -i "${PFX}nope" --
expect_error "more threads than queues: clear error" "receive queue" "$A" \
	"$OUT/tcp_echo" -i "$IF" -l 0-1 --
expect_error "bad option: clear error" "invalid -r" "$A" "$OUT/tcp_echo" -i "$IF" -r 100 --
expect_error "no -i: clear error" "-i IFNAME is required" "$A" "$OUT/tcp_echo" --
# a device without native XDP: a bridge
if ip -n "$A" link add "${PFX}br" type bridge 2>/dev/null; then
	ip -n "$A" addr add 10.98.0.1/24 dev "${PFX}br"
	ip -n "$A" link set "${PFX}br" up
	expect_error "native XDP refused by the device: says which mode failed and why" \
		"native mode, copy failed: Operation not supported" "$A" "$OUT/tcp_echo" -i "${PFX}br" -M native --
	ip -n "$A" link del "${PFX}br"
else
	skp "native XDP refused (no bridge device in this kernel)"
fi

"$NETNS" down "$ONE" >/dev/null 2>&1

# ---- through the impairment bridge: 1% loss and 2 ms delay each way ---------
if timeout 300 make -s -C "$ROOT/tools/impair" >"$OUT/impair_build.log" 2>&1 &&
	NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B=10.99.0.2 "$NETNS" up "$LOSSY" --bridge >"$OUT/netns3.log" 2>&1; then
	ip netns exec "$LOSSY-m" timeout 120 "$ROOT/tools/impair/impair" -i "$LOSSY-ma" -I "$LOSSY-mb" \
		-l 0.01 -d 2 -s 7 >"$OUT/impair.out" 2>"$OUT/impair.err" &
	IMPAIR_PID=$!
	for i in $(seq 50); do grep -q 'ready:' "$OUT/impair.err" && break; sleep 0.1; done
	if start echo_lossy "$LOSSY-a" "$OUT/tcp_echo" -i "$LOSSY-va" -- -p 5000 -n 1; then
		ip netns exec "$LOSSY-b" timeout 90 socat -t 60 - "TCP:$IP:5000" <"$OUT/random.bin" >"$OUT/echo_lossy.bin" 2>/dev/null
		sha=$(sha256sum <"$OUT/echo_lossy.bin" | cut -d' ' -f1)
		stop wait; rc=$?
		kill -INT "$IMPAIR_PID" 2>/dev/null; wait "$IMPAIR_PID" 2>/dev/null
		lost=$(grep -oE 'lost=[0-9]+' "$OUT/impair.out" | awk -F= '{ n += $2 } END { print n + 0 }')
		check "1% loss, 2 ms delay: 10 MiB echoed, SHA-256 equal ($lost frames lost on the way)" [ "$sha" = "$SHA_RANDOM" ]
		good=0; [ "$rc" -eq 0 ] && frames_back echo_lossy && good=1
		check "1% loss: tcp_echo status 0, every UMEM frame returned" [ "$good" = 1 ]
	else
		bad "1% loss: start tcp_echo"; stop
		kill -INT "$IMPAIR_PID" 2>/dev/null; wait "$IMPAIR_PID" 2>/dev/null
	fi
	"$NETNS" down "$LOSSY" >/dev/null 2>&1
else
	skp "impaired path (tools/impair or the --bridge topology unavailable)"
fi

# ---- two queues, two threads: flow affinity ----------------------------------
if [ "$(nproc)" -lt 2 ]; then
	skp "two threads need two CPUs"
	finish
fi
if ! NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B=10.99.0.2 "$NETNS" up "$TWO" --queues 2 >"$OUT/netns2.log" 2>&1; then
	bad "create the two-queue topology"; cat "$OUT/netns2.log"; finish
fi
A="$TWO-a"; B="$TWO-b"; IF="$TWO-va"
expect_error "fewer threads than queues: clear error (Linux would get the other queue's frames)" \
	"has 2 receive queues" "$A" "$OUT/tcp_echo" -i "$IF" -l 0 --
expect_error "-S nic on veth (no hardware RSS to read): clear error" \
	"does not report its RSS configuration" "$A" "$OUT/tcp_echo" -i "$IF" -l 0-1 -S nic --
NCONN=32
if start echo_mq "$A" "$OUT/tcp_echo" -i "$IF" -l 0-1 -- -p 5000 -n "$NCONN"; then
	for i in $(seq "$NCONN"); do
		ip netns exec "$B" timeout 60 socat -t 30 - "TCP:$IP:5000" <"$OUT/random256k.bin" >"$OUT/mq$i.bin" 2>/dev/null &
	done
	wait $(jobs -p | grep -vx "$SERVER_PID") 2>/dev/null
	n_ok=0
	for i in $(seq "$NCONN"); do
		[ "$(sha256sum <"$OUT/mq$i.bin" | cut -d' ' -f1)" = "$SHA_256K" ] && n_ok=$((n_ok + 1))
	done
	check "2 queues: $n_ok of $NCONN parallel 256 KiB echo transfers complete, SHA-256 equal" [ "$n_ok" -eq "$NCONN" ]
	stop wait; rc=$?
	check "2 queues: tcp_echo status 0" [ "$rc" -eq 0 ]
	total=$(grep '^tcp_echo: total:' "$OUT/echo_mq.out")
	check "2 queues: every connection accepted on the thread the affinity helper names ($(echo "$total" | grep -oE 'affinity match [0-9]+ mismatch [0-9]+'))" \
		grep -q "accepted $NCONN closed $NCONN, .* affinity match $NCONN mismatch 0 unknown 0" <<<"$total"
	t0=$(grep -c '^tcp_echo: thread 0: accepted [1-9]' "$OUT/echo_mq.out")
	t1=$(grep -c '^tcp_echo: thread 1: accepted [1-9]' "$OUT/echo_mq.out")
	check "2 queues: both threads served connections" [ "$((t0 + t1))" -eq 2 ]
	check "2 queues: every UMEM frame returned" frames_back echo_mq
	check "2 queues: no descriptor errors" no_backend_errors echo_mq
	grep -E '^af_xdp: thread [01] \(' "$OUT/echo_mq.out" | grep -oE 'thread [01] .*steered out [0-9]+ in [0-9]+' |
		sed -E 's/ \(core.*\): rx ([0-9]+) frames.*steered/: rx \1 frames, steered/; s/^/  info: /'
else
	bad "2 queues: start tcp_echo"; stop
fi

finish
