#!/usr/bin/env bash
# tests/dpdk/run.sh — the DPDK backend (io/dpdk) on DPDK's virtual devices,
# against the Linux kernel and against itself:
#
#   errors      bad options, a missing port, more lcores than queues, too
#               little EAL memory, no hugepages without --no-huge, not root:
#               a clear message and a non-zero exit, never a crash;
#   af_packet   --vdev=net_af_packet0 on a veth in one namespace, Linux on
#               the other end (tools/netns.sh): ping, ping -s 3000, a 10 MiB
#               download (curl, SHA-256) and upload (checked by the server)
#               with apps/examples/http_server; then two lcores with software
#               steering and apps/examples/tcp_echo (socat both ways, every
#               connection on the thread helper_ip4_get_connection_affinity
#               names); the same veth through net_af_xdp (ping, download);
#   tap         --vdev=net_tap0 (the tap interface in its own namespace):
#               the same checks, plus proof that the checksum and TSO
#               offloads the driver reports are used (counted frames), the
#               same transfer with every offload off (-x all), and two
#               lcores in interrupt mode (-e) with tcp_echo;
#   memif       two DPDK processes joined by net_memif: ICMP and UDP echo
#               (apps/examples/ping_udp) and TCP request/response with every
#               byte verified (apps/bench -x), plus a burst throughput figure.
#
# Needs root and DPDK (pkg-config libdpdk); skips cleanly without them.
# Runs without hugepages (--no-huge -m 1024); one extra check uses hugepages
# when 600 or more 2 MB pages are free. Everything it creates is named after
# this shell's PID (iipt<PID>...) and removed by name on exit.
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
	skp "DPDK tests need root (EAL memory, namespaces, tap and packet sockets)"
	finish
fi
if ! pkg-config --exists libdpdk 2>/dev/null; then
	skp "DPDK tests need libdpdk (apt-get install libdpdk-dev)"
	finish
fi
for tool in ip ethtool curl ping socat sha256sum cmp gcc make timeout setpriv; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skp "DPDK tests need '$tool'"
		finish
	fi
done

OUT=$(mktemp -d "${TMPDIR:-/tmp}/iip-dpdk.XXXXXX")
PFX="iipt$$"            # <= 11 characters: NAME + one letter fits netns.sh's 12
AFP="${PFX}p"           # netns.sh topology for net_af_packet
TAPNS="${PFX}t"         # namespace of the tap runs
TAPIF="${PFX}t0"        # the tap interface net_tap creates (<= 15 characters)
MEMIF_SOCK="/run/${PFX}m.sock"
SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	ip netns del "$TAPNS" 2>/dev/null
	"$ROOT/tools/netns.sh" down "$AFP" >/dev/null 2>&1
	rm -f "$MEMIF_SOCK"
	rm -rf /var/run/dpdk/"$PFX"?* 2>/dev/null   # EAL runtime folders of our --file-prefix
	rm -rf "$OUT"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# EAL options every run shares; $1 = lcores, $2 = file-prefix suffix
eal() { echo "-l $1 --no-huge -m 1024 --no-pci --file-prefix=$PFX$2 --log-level=lib.eal:warning"; }

# ---- build -----------------------------------------------------------------------
build() { # app-folder output-name
	if timeout 300 make -s -C "$ROOT/$1" IOSUB_DIR="$ROOT/io/dpdk" OUT="$OUT/$2" >"$OUT/build_$2.log" 2>&1; then
		ok "build $1 with io/dpdk"
		return 0
	fi
	sed 's/^/  | /' "$OUT/build_$2.log"
	bad "build $1 with io/dpdk"
	return 1
}
build apps/examples/http_server http || finish
build apps/examples/tcp_echo echo || finish
build apps/examples/ping_udp ping || finish
build apps/bench bench || finish

# the http_server body pattern, byte i = (uint8_t) (i * 131 + (i >> 11))
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
gcc -O2 -o "$OUT/gen_body" "$OUT/gen_body.c" || { bad "build the body generator"; finish; }
BIG=$((10 * 1024 * 1024))
"$OUT/gen_body" $BIG >"$OUT/up.bin"
SHA_BIG=$(sha256sum <"$OUT/up.bin" | cut -d' ' -f1)
head -c $((4 * 1024 * 1024)) /dev/urandom >"$OUT/rand.bin"

# ---- error handling -------------------------------------------------------------------
# expect_error NAME RC PATTERN CMD...: CMD exits with RC and prints PATTERN
expect_error() {
	local name=$1 want=$2 pat=$3 rc; shift 3
	timeout 60 "$@" >"$OUT/err.log" 2>&1; rc=$?
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$OUT/err.log"; then
		ok "error: $name (exit $rc)"
	else
		sed 's/^/  | /' "$OUT/err.log" | tail -5
		bad "error: $name (exit $rc, wanted $want and \"$pat\")"
	fi
}
RING="--vdev=net_ring0"
expect_error "no -a" 2 "give at least one -a" "$OUT/http" $(eal 0 e) $RING -- -- -p 80
expect_error "-a without an address" 2 "expected PORT,IP" "$OUT/http" $(eal 0 e) $RING -- -a 0 -- -p 80
expect_error "-a with a bad address" 2 "not a usable IPv4" "$OUT/http" $(eal 0 e) $RING -- -a 0,300.1.2.3 -- -p 80
expect_error "no -- after the EAL options" 2 "missing \"--\"" "$OUT/http" $(eal 0 e) $RING
expect_error "unknown -x offload" 2 "unknown offload" "$OUT/http" $(eal 0 e) $RING -- -a 0,10.1.0.1 -x foo -- -p 80
expect_error "port that does not exist" 1 "port 1 does not exist" "$OUT/http" $(eal 0 e) $RING -- -a 1,10.1.0.1 -- -p 80
expect_error "no port at all" 1 "DPDK found no port" "$OUT/http" $(eal 0 e) -- -a 0,10.1.0.1 -- -p 80
expect_error "too little EAL memory" 1 "Give EAL more memory" \
	"$OUT/http" -l 0 --no-huge --no-pci --file-prefix="${PFX}e" $RING -- -a 0,10.1.0.1 -- -p 80
expect_error "not root" 1 "must run as root" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$OUT/http" $(eal 0 e) $RING -- -a 0,10.1.0.1 -- -p 80
free_huge=$(cat /sys/kernel/mm/hugepages/hugepages-*/free_hugepages 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
if [ "$free_huge" -eq 0 ]; then
	expect_error "no hugepages and no --no-huge" 1 "add --no-huge" \
		"$OUT/http" -l 0 --no-pci --file-prefix="${PFX}e" $RING -- -a 0,10.1.0.1 -- -p 80
else
	skp "error: no hugepages and no --no-huge (this machine has $free_huge free hugepages)"
fi

# ---- one server run -------------------------------------------------------------------
# start_server NS LOG CMD...: CMD in namespace NS (bounded), waits for the
# backend's start line
start_server() {
	local ns=$1 log=$2 i; shift 2
	if [ -n "$ns" ]; then
		ip netns exec "$ns" timeout 300 "$@" >"$log" 2>&1 &
	else
		timeout 300 "$@" >"$log" 2>&1 &
	fi
	SERVER_PID=$!
	for i in $(seq 1 150); do
		grep -q '^dpdk: [0-9]* threads\? on lcores' "$log" 2>/dev/null && { sleep 0.3; return 0; }
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "  server log:"; sed 's/^/  | /' "$log"
	return 1
}

# stop_server: SIGTERM (timeout passes it on); returns the exit status
stop_server() {
	local i rc
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

# sum of a counter over the "dpdk: thread" lines: stat LOG 'tso' -> N
# (the counter is the number right after the given words)
stat() { # log words
	grep '^dpdk: thread ' "$1" | grep -o "$2 [0-9]*" | awk '{ s += $NF } END { print s + 0 }'
}

# ping and HTTP checks against a server at IP, run from namespace NS
http_checks() { # name ns ip
	local name=$1 ns=$2 ip=$3 out r
	local X="ip netns exec $ns"
	out=$($X timeout 10 ping -c 3 -i 0.2 -W 2 "$ip" 2>&1)
	if echo "$out" | grep -q ' 3 received'; then ok "$name: ping, 3/3 replies"
	else echo "$out" | sed 's/^/  | /'; bad "$name: ping, 3/3 replies"; fi

	out=$($X timeout 10 ping -c 2 -i 0.3 -W 2 -s 3000 "$ip" 2>&1)
	if echo "$out" | grep -q ' 2 received' && echo "$out" | grep -q '^3008 bytes from'; then
		ok "$name: ping -s 3000, 2/2 replies of 3008 bytes"
	else echo "$out" | sed 's/^/  | /'; bad "$name: ping -s 3000, 2/2 replies"; fi

	r=$($X timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code} %{size_download} %{speed_download}' "http://$ip/$BIG")
	set -- $r
	if [ "${1:-}" = 200 ] && [ "${2:-}" = "$BIG" ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ]; then
		ok "$name: curl GET 10 MiB, SHA-256 matches ($(awk -v b="${3:-0}" 'BEGIN { printf "%.1f MB/s", b / 1e6 }'))"
	else bad "$name: curl GET 10 MiB, SHA-256 matches (got: $r)"; fi
	rm -f "$OUT/big.bin"

	r=$($X timeout 60 curl -s --data-binary @"$OUT/up.bin" -w ' %{http_code} %{speed_upload}' "http://$ip/" | tr '\n' ' ')
	if echo "$r" | grep -q "received $BIG bytes, pattern ok" && echo "$r" | grep -q ' 200 '; then
		ok "$name: curl POST 10 MiB, the server checked every byte ($(echo "$r" | awk '{ printf "%.1f MB/s", $NF / 1e6 }'))"
	else bad "$name: curl POST 10 MiB checked by the server (got: $r)"; fi
}

# socat sends a file to tcp_echo and compares what comes back
echo_checks() { # name ns ip count
	local name=$1 ns=$2 ip=$3 n=$4 i good=0
	for i in $(seq 1 "$n"); do
		ip netns exec "$ns" timeout 60 socat -b 65536 -t 10 - "TCP:$ip:7" <"$OUT/rand.bin" >"$OUT/echo.bin" 2>/dev/null &&
			cmp -s "$OUT/rand.bin" "$OUT/echo.bin" && good=$((good + 1))
	done
	rm -f "$OUT/echo.bin"
	if [ "$good" -eq "$n" ]; then ok "$name: socat, $n x 4 MiB echoed back identical"
	else bad "$name: socat, only $good of $n x 4 MiB echoed back identical"; fi
}

# after tcp_echo stopped: every connection on the thread the helper named
affinity_check() { # name log count
	local name=$1 log=$2 n=$3 line
	line=$(grep '^tcp_echo: total:' "$log")
	if echo "$line" | grep -q "accepted $n closed $n" && echo "$line" | grep -q "affinity match $n mismatch 0 unknown 0"; then
		ok "$name: $n connections, each on the thread helper_ip4_get_connection_affinity names"
	else echo "  | $line"; bad "$name: connection affinity ($line)"; fi
}

stopped_ok() { # name log
	if stop_server; then ok "$1: SIGTERM, exit status 0"
	else tail -5 "$2" | sed 's/^/  | /'; bad "$1: SIGTERM, exit status 0"; fi
}

# every packet wrapper back in the stack's pool once the clients are done
# (nothing left unacknowledged or held out of order)
pools_ok() { # name log
	local line
	line=$(grep '^dpdk: thread .*: stack pools at exit' "$2")
	if [ -n "$line" ] && ! echo "$line" | awk '{ for (i = 1; i <= NF; i++) if ($i == "wrappers" && $(i + 1) != $(i + 3)) bad = 1 } END { exit !bad }'; then
		ok "$1: every packet wrapper back in the pool at exit"
	else echo "$line" | sed 's/^/  | /'; bad "$1: packet wrappers back in the pool at exit"; fi
}

# ---- net_af_packet ----------------------------------------------------------------------
if NETNS_ADDR_A="" "$ROOT/tools/netns.sh" up "$AFP" >"$OUT/netns.log" 2>&1; then
	NSA="$AFP-a"; NSB="$AFP-b"; IP=10.99.0.1
	# the kernel hands the packet ring reassembled datagrams (the driver
	# asks for PACKET_FANOUT_FLAG_DEFRAG): 4 KiB frames and mbufs for ping -s 3000
	AFPDEV="--vdev=net_af_packet0,iface=$AFP-va,framesz=4096"
	log="$OUT/afp1.log"
	if start_server "$NSA" "$log" "$OUT/http" $(eal 0 a) "$AFPDEV" -- -a 0,$IP -s 4096 -- -p 80; then
		grep -q "rss: not needed (one queue)" "$log" && grep -q "tx multi-segment offered, used" "$log" &&
			ok "af_packet: start line reports the port's offloads (multi-segment used)" ||
			bad "af_packet: start line reports the port's offloads"
		http_checks af_packet "$NSB" $IP
		stopped_ok af_packet "$log"
		pools_ok af_packet "$log"
		[ "$(stat "$log" 'multi-segment')" -gt 0 ] && ok "af_packet: scatter-gather frames sent ($(stat "$log" 'multi-segment'))" ||
			bad "af_packet: no scatter-gather frame sent"
	else bad "af_packet: server start"; fi

	expect_error "more lcores than the port's queues" 1 "one queue pair per lcore" \
		ip netns exec "$NSA" "$OUT/http" $(eal 0-1 a) "$AFPDEV" -- -a 0,$IP -s 4096 -- -p 80

	# two lcores, two queue pairs: the kernel's fanout hash is not ours, so
	# software steering must put every frame on the right thread
	log="$OUT/afp2.log"
	if start_server "$NSA" "$log" "$OUT/echo" $(eal 0-1 b) "$AFPDEV,qpairs=2" -- -a 0,$IP -s 4096 -e 1 -- -p 7; then
		grep -q "rss: not offered: software steering" "$log" && ok "af_packet 2 lcores: software steering announced" ||
			bad "af_packet 2 lcores: software steering announced"
		echo_checks "af_packet 2 lcores" "$NSB" $IP 6
		stopped_ok "af_packet 2 lcores" "$log"
		affinity_check "af_packet 2 lcores" "$log" 6
		echo "  af_packet 2 lcores: frames steered between threads: $(stat "$log" 'steered out')"
	else bad "af_packet 2 lcores: server start"; fi

	# the same veth through DPDK's AF_XDP driver: no offload, no scatter-gather
	# (the stack copies payload into each frame)
	log="$OUT/afx.log"
	if start_server "$NSA" "$log" "$OUT/http" $(eal 0 x) --vdev=net_af_xdp0,iface="$AFP-va" -- -a 0,$IP -- -p 80; then
		grep -q "tx multi-segment not offered" "$log" && grep -q "scatter-gather (zero copy) no" "$log" &&
			ok "af_xdp: start line: no scatter-gather, the stack copies" || bad "af_xdp: start line"
		out=$(ip netns exec "$NSB" timeout 10 ping -c 3 -i 0.2 -W 2 "$IP" 2>&1)
		echo "$out" | grep -q ' 3 received' && ok "af_xdp: ping, 3/3 replies" || bad "af_xdp: ping, 3/3 replies"
		r=$(ip netns exec "$NSB" timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code} %{size_download} %{speed_download}' "http://$IP/$BIG")
		set -- $r
		if [ "${1:-}" = 200 ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ]; then
			ok "af_xdp: curl GET 10 MiB, SHA-256 matches ($(awk -v b="${3:-0}" 'BEGIN { printf "%.1f MB/s", b / 1e6 }'))"
		else bad "af_xdp: curl GET 10 MiB (got: $r)"; fi
		stopped_ok af_xdp "$log"
	else bad "af_xdp: server start"; fi
	"$ROOT/tools/netns.sh" down "$AFP" >/dev/null 2>&1
else
	sed 's/^/  | /' "$OUT/netns.log"
	bad "af_packet: namespaces (tools/netns.sh up)"
fi

# ---- net_tap ------------------------------------------------------------------------------
# tap_run NAME LOG CMD...: starts CMD in $TAPNS with a net_tap port, gives the
# kernel side of the tap 10.77.0.1
tap_run() {
	local name=$1 log=$2; shift 2
	if ! start_server "$TAPNS" "$log" "$@"; then bad "$name: server start"; return 1; fi
	if ! ip -n "$TAPNS" addr add 10.77.0.1/24 dev "$TAPIF" || ! ip -n "$TAPNS" link set "$TAPIF" up; then
		bad "$name: configure $TAPIF"; stop_server; return 1
	fi
	return 0
}
if ip netns add "$TAPNS" && ip -n "$TAPNS" link set lo up; then
	TAPDEV="--vdev=net_tap0,iface=$TAPIF"; IP=10.77.0.2
	log="$OUT/tap1.log"
	if tap_run tap "$log" "$OUT/http" $(eal 0 t) "$TAPDEV" -- -a 0,$IP -- -p 80; then
		grep -q "tx tcp tso offered, used" "$log" && grep -q "rx tcp checksum offered, used" "$log" &&
			grep -q "stack uses:.*tcp tx checksum yes.*tso yes" "$log" &&
			ok "tap: start line: checksum and TSO offered and used" || bad "tap: start line: checksum and TSO used"
		http_checks tap "$TAPNS" $IP
		stopped_ok tap "$log"
		pools_ok tap "$log"
		tso=$(stat "$log" 'tso'); l4=$(stat "$log" 'l4 checksum good'); ph=$(stat "$log" 'mismatch')
		csum=$(stat "$log" 'ip4 checksum offloaded')
		if [ "$tso" -gt 0 ] && [ "$l4" -gt 0 ] && [ "$csum" -gt 0 ] && [ "$ph" -eq 0 ]; then
			ok "tap: offloads used: $tso TSO frames, $csum IPv4 checksums offloaded, $l4 received frames with the L4 checksum checked by the driver, 0 pseudo-header mismatches"
		else grep '^dpdk: thread' "$log" | sed 's/^/  | /'; bad "tap: offloads used (tso $tso, l4 good $l4, ip4 $csum, mismatch $ph)"; fi
		wire=$(grep '^dpdk: port 0: device counters' "$log" | sed 's/.*; tx \([0-9]*\) packets.*/\1/')
		frames=$(stat "$log" 'tx')
		if [ "${wire:-0}" -gt "$frames" ]; then ok "tap: the driver segmented: $frames frames handed over, $wire packets out"
		else bad "tap: the driver segmented ($frames frames, ${wire:-?} packets)"; fi
	fi

	# UDP both ways with checksum offload: ping_udp on the stack, a Linux
	# UDP echo (socat) on the other side
	log="$OUT/tap6.log"
	if tap_run "tap udp" "$log" "$OUT/ping" $(eal 0 t) "$TAPDEV" -- -a 0,$IP -- -s 10.77.0.1 -n 30; then
		ip netns exec "$TAPNS" timeout 60 socat UDP4-RECVFROM:7,fork,reuseaddr PIPE >/dev/null 2>&1 &
		socat_pid=$!
		for i in $(seq 1 300); do
			grep -q '^ping_udp: result' "$log" && break
			kill -0 "$SERVER_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill "$socat_pid" 2>/dev/null; wait "$socat_pid" 2>/dev/null
		stop_server >/dev/null 2>&1
		udp=$(stat "$log" 'udp'); l4=$(stat "$log" 'l4 checksum good')
		if grep -q '^ping_udp: result: ok' "$log" && [ "$udp" -gt 0 ] && [ "$l4" -gt 0 ]; then
			ok "tap udp: 30 ICMP and 30 UDP echoes from Linux, every byte checked; $udp UDP checksums offloaded, $l4 verified by the driver"
		else grep '^ping_udp\|^dpdk: thread' "$log" | sed 's/^/  | /'; bad "tap udp: ping_udp against Linux (udp offloaded $udp)"; fi
	fi

	log="$OUT/tap2.log"
	if tap_run "tap -x all" "$log" "$OUT/http" $(eal 0 t) "$TAPDEV" -- -a 0,$IP -x all -- -p 80; then
		grep -q "stack uses: ip4 rx checksum no.*scatter-gather (zero copy) no, tso no" "$log" &&
			ok "tap -x all: start line: no offload used" || bad "tap -x all: start line: no offload used"
		r=$(ip netns exec "$TAPNS" timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code} %{size_download} %{speed_download}' "http://$IP/$BIG")
		set -- $r
		if [ "${1:-}" = 200 ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ]; then
			ok "tap -x all: curl GET 10 MiB, SHA-256 matches ($(awk -v b="${3:-0}" 'BEGIN { printf "%.1f MB/s", b / 1e6 }'))"
		else bad "tap -x all: curl GET 10 MiB (got: $r)"; fi
		stopped_ok "tap -x all" "$log"
		if [ "$(stat "$log" 'tso')" -eq 0 ] && [ "$(stat "$log" 'ip4 checksum offloaded')" -eq 0 ] && [ "$(stat "$log" 'multi-segment')" -eq 0 ]; then
			ok "tap -x all: no frame was marked for an offload"
		else bad "tap -x all: frames marked for offloads that are off"; fi
	fi

	log="$OUT/tap3.log"
	if tap_run "tap 2 lcores -e 10" "$log" "$OUT/echo" $(eal 0-1 t) "$TAPDEV" -- -a 0,$IP -e 10 -- -p 7; then
		grep -q "receive interrupts: used" "$log" && ok "tap 2 lcores -e 10: receive interrupts used" ||
			bad "tap 2 lcores -e 10: receive interrupts used"
		echo_checks "tap 2 lcores -e 10" "$TAPNS" $IP 6
		stopped_ok "tap 2 lcores -e 10" "$log"
		pools_ok "tap 2 lcores -e 10" "$log"
		affinity_check "tap 2 lcores -e 10" "$log" 6
		sl=$(stat "$log" 'sleeps'); wk=$(stat "$log" 'interrupt wakeups')
		if [ "$sl" -gt 0 ] && [ "$wk" -gt 0 ]; then ok "tap 2 lcores -e 10: threads slept $sl times, woken by receive interrupts $wk times"
		else bad "tap 2 lcores -e 10: sleeps $sl, interrupt wakeups $wk"; fi
	fi

	# two ports in one process, one address each: every frame leaves by the
	# port it belongs to (the kernel routes each /24 to its own tap)
	log="$OUT/tap5.log"
	if start_server "$TAPNS" "$log" "$OUT/http" $(eal 0 t) "$TAPDEV" --vdev=net_tap1,iface="${TAPIF%0}1" \
		-- -a 0,$IP -a 1,10.78.0.2 -- -p 80 &&
	   ip -n "$TAPNS" addr add 10.77.0.1/24 dev "$TAPIF" && ip -n "$TAPNS" link set "$TAPIF" up &&
	   ip -n "$TAPNS" addr add 10.78.0.1/24 dev "${TAPIF%0}1" && ip -n "$TAPNS" link set "${TAPIF%0}1" up; then
		n_ok=0
		for a in $IP 10.78.0.2; do
			r=$(ip netns exec "$TAPNS" timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code}' "http://$a/$BIG")
			[ "$r" = 200 ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ] && n_ok=$((n_ok + 1))
		done
		stopped_ok "tap two ports" "$log"
		t0=$(grep '^dpdk: port 0: device counters' "$log" | sed 's/.*; tx \([0-9]*\) packets.*/\1/')
		t1=$(grep '^dpdk: port 1: device counters' "$log" | sed 's/.*; tx \([0-9]*\) packets.*/\1/')
		if [ "$n_ok" = 2 ] && [ "${t0:-0}" -gt 7000 ] && [ "${t1:-0}" -gt 7000 ]; then
			ok "tap two ports: 10 MiB from each address, SHA-256 right, each sent by its own port ($t0 and $t1 packets)"
		else bad "tap two ports: $n_ok/2 downloads right, port packets ${t0:-?} ${t1:-?}"; fi
	else bad "tap two ports: server start"; stop_server >/dev/null 2>&1; fi

	if [ "$free_huge" -ge 600 ]; then
		log="$OUT/tap4.log"
		if tap_run "tap with hugepages" "$log" "$OUT/http" -l 0 --no-pci --in-memory "$TAPDEV" -- -a 0,$IP -- -p 80; then
			r=$(ip netns exec "$TAPNS" timeout 60 curl -s -o "$OUT/big.bin" -w '%{http_code}' "http://$IP/$BIG")
			[ "$r" = 200 ] && [ "$(sha256sum <"$OUT/big.bin" | cut -d' ' -f1)" = "$SHA_BIG" ] &&
				ok "tap with hugepages: curl GET 10 MiB, SHA-256 matches" || bad "tap with hugepages: curl GET 10 MiB"
			stopped_ok "tap with hugepages" "$log"
		fi
	else
		skp "tap with hugepages ($free_huge free 2 MB pages, 600 needed; the other runs use --no-huge)"
	fi
	ip netns del "$TAPNS"
else
	bad "tap: namespace $TAPNS"
fi

# ---- net_memif: stack to stack ------------------------------------------------------------
# the server on lcore 0, the client on lcore 1: two busy-polling processes
# must not share a CPU
memif_pair() { # name server-log client-log server-app client-app "server args" "client args"
	local name=$1 slog=$2 clog=$3 sapp=$4 capp=$5 sargs=$6 cargs=$7 rc
	rm -f "$MEMIF_SOCK"
	if ! start_server "" "$slog" "$OUT/$sapp" $(eal 0 s) --vdev=net_memif0,role=server,socket="$MEMIF_SOCK" \
		-- -a 0,10.88.0.1 -- $sargs; then
		bad "$name: server start"; return 1
	fi
	timeout 60 "$OUT/$capp" $(eal 1 c) --vdev=net_memif0,role=client,socket="$MEMIF_SOCK" \
		-- -a 0,10.88.0.2 -- $cargs >"$clog" 2>&1
	rc=$?
	return $rc
}
if memif_pair "memif ping_udp" "$OUT/m1s.log" "$OUT/m1c.log" ping ping "-e 3" "-s 10.88.0.1 -n 50"; then
	grep -q '^ping_udp: result: ok' "$OUT/m1c.log" &&
		ok "memif: ICMP and UDP echo between two DPDK processes, every byte checked ($(grep 'udp echo' "$OUT/m1c.log" | sed 's/ping_udp: //'))" ||
		{ tail -5 "$OUT/m1c.log" | sed 's/^/  | /'; bad "memif: ping_udp result"; }
else tail -5 "$OUT/m1c.log" | sed 's/^/  | /'; bad "memif: ping_udp client exit status"; fi
stop_server >/dev/null 2>&1

if memif_pair "memif bench" "$OUT/m2s.log" "$OUT/m2c.log" bench bench "-p 10000 -g 1 -l 1000 -q 1000 -x" \
	"-s 10.88.0.1 -p 10000 -g 1 -l 1000 -c 4 -d 2 -t 3 -x -k -v 0"; then
	line=$(grep '^bench: client: .* established' "$OUT/m2c.log")
	reqs=$(echo "$line" | sed -n 's/.*failed; \([0-9]*\) requests.*/\1/p')
	if echo "$line" | grep -q "4 connection(s) established, 0 failed" && echo "$line" | grep -q "checked bad 0" &&
	   [ "${reqs:-0}" -gt 0 ]; then
		ok "memif: TCP ping-pong between two DPDK processes, 4 connections, $reqs requests, every reply byte checked"
	else echo "  | $line"; bad "memif: TCP ping-pong ($line)"; fi
else tail -5 "$OUT/m2c.log" | sed 's/^/  | /'; bad "memif: bench client exit status"; fi
if stop_server || grep -q 'remote stop' "$OUT/m2s.log"; then :; fi

if memif_pair "memif bench burst" "$OUT/m3s.log" "$OUT/m3c.log" bench bench "-p 10001 -g 2 -l 1448" \
	"-s 10.88.0.1 -p 10001 -g 2 -l 65536 -d 16 -c 1 -t 3 -k -v 0"; then
	echo "  memif TCP burst, one connection: $(grep '^total:' "$OUT/m3c.log")"
	grep -q '^total: [1-9]' "$OUT/m3c.log" && ok "memif: TCP burst transfer between two DPDK processes" ||
		bad "memif: TCP burst transfer"
else tail -5 "$OUT/m3c.log" | sed 's/^/  | /'; bad "memif: bench burst client exit status"; fi
stop_server >/dev/null 2>&1

finish
