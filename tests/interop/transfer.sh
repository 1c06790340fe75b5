#!/usr/bin/env bash
# tests/interop/transfer.sh — bulk TCP transfers between the stack and the
# Linux kernel, and between two stacks on different backends.
#
# The stack's side is apps/examples/tcp_xfer (a client that sends the
# documented pattern, byte i = (uint8_t) (i * 131 + (i >> 11)), hashes what
# it receives with SHA-256 and checks it against the pattern byte by byte).
# Linux's side is socat with a SHA-256 tool (openssl, or sha256sum).
#
# For each backend (af_xdp, tap, af_packet, and dpdk on net_af_packet when
# io/dpdk builds), with the stack in one namespace and Linux in the other:
#   upload    the stack pushes SIZE bytes to a Linux receiver and closes its
#             side right after the last byte; the receiver's digest of the
#             bytes is sent back on the same connection after the stack's
#             FIN and reaches the stack (half-close: the stack keeps
#             receiving in FIN-WAIT until Linux closes); digest = SHA-256 of
#             the pattern;
#   download  Linux sends SIZE bytes and shuts down its write side (socat
#             sees the end of its input); only then does the stack send
#             REPLY bytes (in CLOSE-WAIT) and close; the stack's SHA-256 of
#             what it received = the pattern's, every byte checked, and
#             Linux's digest of the REPLY bytes = the pattern's.
# The same two transfers through tools/impair (2 % loss and 2 % reordering
# in both directions), IMPAIR_SIZE bytes each way.
# Stack to stack, af_xdp in one namespace and af_packet in the other:
# apps/bench ping-pong with -x (every reply byte and every request byte
# checked) and tests/loop/xfer moving S2S_SIZE bytes each way on one
# connection (both ends check every byte); the same xfer with dpdk
# (net_af_packet) as the client when io/dpdk builds.
#
# Sizes (suffix k, m, g): IIP_XFER_SIZE (default 1g), IIP_XFER_IMPAIR_SIZE
# (16m), IIP_XFER_REPLY_SIZE (16m), IIP_XFER_S2S_SIZE (256m);
# IIP_XFER_BACKENDS="af_xdp tap af_packet dpdk" selects backends.
# Every check line gives the size, the time and the throughput; the stack
# process's CPU time too when /usr/bin/time exists.
#
# Needs root (namespaces, XDP, packet sockets, tap); without it, everything
# is skipped. Namespaces and devices carry this shell's PID (iipt<PID>...)
# and are removed by name on exit; every process is bounded by `timeout`.
# Logs are kept (and their folder printed) when a check fails.
# Prints one line per check and ends with "N passed, N failed, N skipped".
set -u
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
NETNS="$ROOT/tools/netns.sh"
pass=0; fail=0; skip=0
ok()  { echo "pass: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }
skp() { echo "skip: $1"; skip=$((skip + 1)); }
finish() {
	if [ -n "${T_START:-}" ]; then
		times >"$OUT/times" # no subshell: children's CPU time is this shell's to report
		echo "info: whole run $(( $(date +%s) - T_START )) s wall; CPU of every process it ran: $(tail -n 1 "$OUT/times" | awk '{ print $1 " user, " $2 " sys" }')"
	fi
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]; exit $?
}

if [ "${EUID:-$(id -u)}" -ne 0 ]; then
	skp "transfer tests need root (network namespaces, XDP, packet sockets, tap devices)"
	finish
fi
for tool in ip ethtool socat gcc make timeout awk ss; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		skp "transfer tests need '$tool'"
		finish
	fi
done
# openssl uses the CPU's SHA instructions: ~6x faster than coreutils here
if command -v openssl >/dev/null 2>&1; then HASH="openssl dgst -sha256 -r"
elif command -v sha256sum >/dev/null 2>&1; then HASH="sha256sum"
else skp "transfer tests need openssl or sha256sum"; finish; fi
TIME=""
[ -x /usr/bin/time ] && TIME="/usr/bin/time -f cpu:%U:%S -o"

# size_bytes 1g -> 1073741824
size_bytes() {
	local v=$1 m=1
	case "$v" in
	*[kK]) m=1024; v=${v%?} ;;
	*[mM]) m=1048576; v=${v%?} ;;
	*[gG]) m=1073741824; v=${v%?} ;;
	esac
	[[ $v =~ ^[0-9]+$ ]] || { echo "transfer.sh: bad size '$1'" >&2; exit 2; }
	echo $((v * m))
}
SIZE=$(size_bytes "${IIP_XFER_SIZE:-1g}")
IMPAIR_SIZE=$(size_bytes "${IIP_XFER_IMPAIR_SIZE:-16m}")
REPLY_SIZE=$(size_bytes "${IIP_XFER_REPLY_SIZE:-16m}")
S2S_SIZE=$(size_bytes "${IIP_XFER_S2S_SIZE:-256m}")
for v in "$SIZE" "$IMPAIR_SIZE" "$REPLY_SIZE" "$S2S_SIZE"; do
	[ -n "$v" ] || exit 2 # size_bytes said which one
done
BACKENDS=${IIP_XFER_BACKENDS:-af_xdp tap af_packet dpdk}
human() { awk -v b="$1" 'BEGIN { if (b >= 1073741824 && b % 1073741824 == 0) printf "%d GiB", b / 1073741824;
	else if (b >= 1048576) printf "%g MiB", b / 1048576; else printf "%d B", b }'; }
# a time limit for moving N bytes: at least 2 MB/s on a loaded machine, plus setup
limit_for() { echo $(( 60 + $1 / 2000000 )); }

OUT=$(mktemp -d "${TMPDIR:-/tmp}/iip-transfer.XXXXXX")
PFX="iipt$$"                 # <= 11 characters: NAME + one letter fits netns.sh's 12
PLAIN="${PFX}p"              # Linux <-> stack on one veth pair
LOSSY="${PFX}l"              # Linux <-> impair <-> stack
S2S="${PFX}s"                # stack <-> stack
TAPNS="${PFX}t"              # the plain tap runs (Linux on the tap's kernel side)
TAPIF="${PFX}tap"
IMPAIR_PID=""
cleanup() {
	if [ -n "$IMPAIR_PID" ]; then kill -TERM "$IMPAIR_PID" 2>/dev/null; wait "$IMPAIR_PID" 2>/dev/null; fi
	# netns.sh down ends the processes still inside the namespaces, by pid
	"$NETNS" down "$PLAIN" >/dev/null 2>&1
	"$NETNS" down "$LOSSY" >/dev/null 2>&1
	"$NETNS" down "$S2S" >/dev/null 2>&1
	if ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qxF "$TAPNS"; then
		for pid in $(ip netns pids "$TAPNS" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
		ip netns del "$TAPNS" 2>/dev/null
	fi
	if [ "$fail" -gt 0 ]; then echo "info: logs kept in $OUT"; else rm -rf "$OUT"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
T_START=$(date +%s)

# ---- builds -----------------------------------------------------------------------
cat >"$OUT/gen_body.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
/* the pattern, byte i = (uint8_t) (i * 131 + (i >> 11)), 2048-byte blocks at a time */
int main(int argc, char **argv)
{
	unsigned long long n = argc > 1 ? strtoull(argv[1], NULL, 10) : 0, i = 0;
	static unsigned char buf[65536];
	while (i < n) {
		size_t k = 0, j;
		for (; k < sizeof(buf) && i < n; k += 2048, i += 2048)
			for (j = 0; j < 2048; j++)
				buf[k + j] = (unsigned char) (j * 131u + (unsigned char) (i >> 11));
		if (i > n) {
			k -= (size_t) (i - n);
			i = n;
		}
		if (fwrite(buf, 1, k, stdout) != k)
			return 1;
	}
	return 0;
}
EOF
gcc -O2 -o "$OUT/gen_body" "$OUT/gen_body.c" || { bad "build the pattern generator"; finish; }
GEN="$OUT/gen_body"
sha_of() { "$GEN" "$1" | $HASH | cut -c1-64; }

# builds run two at a time (each takes seconds of CPU: the stack is one
# translation unit); results are read back in a fixed order
declare -A HAVE
BUILD_JOBS=()
build_bg() { # app-folder backend binary [EXTRA_CFLAGS]
	( timeout 300 make -s -C "$ROOT/$1" IOSUB_DIR="$ROOT/io/$2" OUT="$OUT/$3" EXTRA_CFLAGS="${4:-}" >"$OUT/build_$3.log" 2>&1
	  echo $? >"$OUT/build_$3.rc" ) &
	BUILD_JOBS+=("$3")
	[ "$(jobs -rp | wc -l)" -lt 2 ] || wait -n
}
built() { # binary: built successfully (else the start of its log)
	[ "$(cat "$OUT/build_$1.rc" 2>/dev/null)" = 0 ] && return 0
	sed -n 1,15p "$OUT/build_$1.log" | sed 's/^/  | /'
	return 1
}
WANT=""
for b in $BACKENDS; do
	case "$b" in
	af_xdp) pkg-config --exists libxdp libbpf 2>/dev/null || { skp "af_xdp: libxdp/libbpf missing"; continue; } ;;
	dpdk) pkg-config --exists libdpdk 2>/dev/null || { skp "dpdk: libdpdk missing"; continue; } ;;
	af_packet|tap) ;;
	*) bad "unknown backend '$b' in IIP_XFER_BACKENDS"; continue ;;
	esac
	WANT="$WANT $b"
	build_bg apps/examples/tcp_xfer "$b" "tcp_xfer_$b"
done
S2S_BUILDS=0
if [[ " $WANT " == *" af_xdp "* ]] && [[ " $WANT " == *" af_packet "* ]]; then
	S2S_BUILDS=1
	build_bg apps/bench af_xdp bench_af_xdp
	build_bg apps/bench af_packet bench_af_packet
	# xfer waits until its connection object is free again, i.e. after
	# TIME-WAIT (2 MSL = 60 s by default) on whichever side closed first:
	# a 0.5 s MSL for this test build
	build_bg tests/loop/xfer af_xdp xfer_af_xdp -DIIP_CONF_TCP_MSL_MS=500
	build_bg tests/loop/xfer af_packet xfer_af_packet -DIIP_CONF_TCP_MSL_MS=500
	[[ " $WANT " == *" dpdk "* ]] && build_bg tests/loop/xfer dpdk xfer_dpdk -DIIP_CONF_TCP_MSL_MS=500
fi
wait
for b in $WANT; do
	if built "tcp_xfer_$b"; then ok "build tcp_xfer with io/$b"; HAVE[$b]=1
	# dpdk is optional here: its own suite (tests/dpdk) says what is wrong
	elif [ "$b" = dpdk ]; then skp "dpdk: tcp_xfer does not build with io/dpdk"
	else bad "build tcp_xfer with io/$b"; fi
done
echo "info: builds done after $(( $(date +%s) - T_START )) s"

echo "info: sizes: plain ${SIZE} B ($(human "$SIZE")) each way, reply after Linux's FIN $(human "$REPLY_SIZE"), impaired $(human "$IMPAIR_SIZE") each way, stack to stack $(human "$S2S_SIZE") each way; Linux hashes with: $HASH"
SHA_SIZE=$(sha_of "$SIZE")
SHA_REPLY=$(sha_of "$REPLY_SIZE")
SHA_IMPAIR=$(sha_of "$IMPAIR_SIZE")

# ---- one transfer ---------------------------------------------------------------------
PORT=5000
# wait_listen NS PORT: until something listens there (at most 5 s)
wait_listen() {
	local i
	for i in $(seq 50); do
		ip netns exec "$1" ss -ltnH "sport = :$2" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}
# cpu_of FILE: "x.xx s CPU" from /usr/bin/time's output
cpu_of() { [ -s "$1" ] && awk -F: '/^cpu:/ { printf ", stack CPU %.2f s", $2 + $3 }' "$1"; }
# rate BYTES SECONDS
rate() { awk -v b="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f MB/s", b / s / 1e6; else printf "- MB/s" }'; }
now() { date +%s.%N; }
# retrans_of LOG: the stack's retransmission counts from tcp_xfer's summary
retrans_of() { sed -nE 's/^tcp_xfer: time .*retrans ([0-9]+) \(rto ([0-9]+), fast ([0-9]+)\).*/stack retransmissions \1 (RTO \2, fast \3)/p' "$1"; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# upload LABEL LNS LIP SNS BYTES SHA STACK-CMD...: the stack sends BYTES and
# closes; Linux hashes them and sends the digest back after the stack's FIN
upload() {
	local label=$1 lns=$2 lip=$3 sns=$4 n=$5 sha=$6 log lim t0 t1 rc spid got; shift 6
	PORT=$((PORT + 1)); log="$OUT/up_$PORT.log"; lim=$(limit_for "$n")
	ip netns exec "$lns" timeout "$lim" socat -t 30 TCP-LISTEN:$PORT,reuseaddr \
		SYSTEM:"$HASH | tee $OUT/up_$PORT.sha" >/dev/null 2>"$OUT/up_$PORT.socat" &
	spid=$!
	wait_listen "$lns" $PORT || { bad "$label: upload: socat did not listen"; kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; return; }
	t0=$(now)
	ip netns exec "$sns" timeout "$lim" $TIME "$OUT/up_$PORT.cpu" "$@" -- -s "$lip" -p $PORT -n "$n" -T >"$log" 2>&1; rc=$?
	t1=$(now)
	wait "$spid"
	got=$(cut -c1-64 "$OUT/up_$PORT.sha" 2>/dev/null)
	if [ "$rc" -eq 0 ] && grep -q '^tcp_xfer: result: ok' "$log" && [ "$got" = "$sha" ] &&
	   grep -q "^tcp_xfer: received text: $sha" "$log" &&
	   grep -qE "^tcp_xfer: sent $n bytes, $n acknowledged; 0 bytes sent after the peer's FIN, [1-9][0-9]* bytes received after our FIN" "$log"; then
		ok "$label: stack -> Linux $(human "$n"): SHA-256 equal on Linux; the stack closed first and received Linux's digest after its FIN ($(elapsed "$t0" "$t1") s, $(rate "$n" "$(elapsed "$t0" "$t1")")$(cpu_of "$OUT/up_$PORT.cpu"); $(retrans_of "$log"))"
	else
		grep -E '^tcp_xfer|^[a-z_]+: thread|rror' "$log" | sed 's/^/  | /'
		sed 's/^/  | socat: /' "$OUT/up_$PORT.socat"
		bad "$label: stack -> Linux $(human "$n") (status $rc, Linux's digest '${got:-none}', want $sha; log $log)"
	fi
}

# download LABEL LNS LIP SNS BYTES SHA STACK-CMD...: Linux sends BYTES and
# shuts down its write side; then the stack sends REPLY_SIZE bytes and closes
download() {
	local label=$1 lns=$2 lip=$3 sns=$4 n=$5 sha=$6 log lim t0 t1 rc spid got; shift 6
	PORT=$((PORT + 1)); log="$OUT/down_$PORT.log"; lim=$(limit_for "$n")
	ip netns exec "$lns" timeout "$lim" socat -t 60 TCP-LISTEN:$PORT,reuseaddr \
		"SYSTEM:$GEN $n!!SYSTEM:$HASH >$OUT/down_$PORT.sha" >/dev/null 2>"$OUT/down_$PORT.socat" &
	spid=$!
	wait_listen "$lns" $PORT || { bad "$label: download: socat did not listen"; kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null; return; }
	t0=$(now)
	ip netns exec "$sns" timeout "$lim" $TIME "$OUT/down_$PORT.cpu" "$@" -- -s "$lip" -p $PORT -x "$n" -a -n "$REPLY_SIZE" >"$log" 2>&1; rc=$?
	t1=$(now)
	wait "$spid"
	got=$(cut -c1-64 "$OUT/down_$PORT.sha" 2>/dev/null)
	if [ "$rc" -eq 0 ] && grep -q '^tcp_xfer: result: ok' "$log" &&
	   grep -q "^tcp_xfer: received $n bytes, sha256 $sha, pattern ok" "$log" &&
	   grep -q "^tcp_xfer: sent $REPLY_SIZE bytes, $REPLY_SIZE acknowledged; $REPLY_SIZE bytes sent after the peer's FIN" "$log" &&
	   [ "$got" = "$SHA_REPLY" ]; then
		ok "$label: Linux -> stack $(human "$n"): the stack's SHA-256 equal, every byte checked; Linux closed first, then the stack sent $(human "$REPLY_SIZE") (SHA-256 equal on Linux) ($(elapsed "$t0" "$t1") s, $(rate "$((n + REPLY_SIZE))" "$(elapsed "$t0" "$t1")")$(cpu_of "$OUT/down_$PORT.cpu"); $(retrans_of "$log"), $(grep -oE 'ooo [0-9]+' "$log") segments out of order)"
	else
		grep -E '^tcp_xfer|^[a-z_]+: thread|rror' "$log" | sed 's/^/  | /'
		sed 's/^/  | socat: /' "$OUT/down_$PORT.socat"
		bad "$label: Linux -> stack $(human "$n") (status $rc, Linux's digest of the reply '${got:-none}'; log $log)"
	fi
}

# the stack's command line on the veth end IF (namespace has no kernel address
# for af_packet and dpdk; af_xdp takes the interface's address). dpdk gets
# -e 1: net_af_packet has no receive interrupts, so idle waits are short
# naps instead of a busy-polling core taken from the Linux peer on 2 vCPUs.
stack_cmd() { # backend ifname ip tag
	case "$1" in
	af_xdp) echo "$OUT/tcp_xfer_af_xdp -i $2" ;;
	af_packet) echo "$OUT/tcp_xfer_af_packet -i $2 -a $3" ;;
	dpdk) echo "$OUT/tcp_xfer_dpdk -l 0 --no-huge -m 1024 --no-pci --file-prefix=$PFX$4 --log-level=lib.eal:warning --vdev=net_af_packet0,iface=$2,framesz=4096 -- -a 0,$3 -s 4096 -e 1" ;;
	esac
}

# ---- 1. Linux <-> stack, one veth pair (tap: the tap's kernel side) --------------------------
for b in $BACKENDS; do
	[ -n "${HAVE[$b]:-}" ] || continue
	if [ "$b" = tap ]; then
		ip netns add "$TAPNS" && ip -n "$TAPNS" link set lo up || { bad "tap: namespace"; continue; }
		cmd="$OUT/tcp_xfer_tap -i $TAPIF -a 10.98.0.2/24 -k 10.98.0.1/24"
		upload tap "$TAPNS" 10.98.0.1 "$TAPNS" "$SIZE" "$SHA_SIZE" $cmd
		download tap "$TAPNS" 10.98.0.1 "$TAPNS" "$SIZE" "$SHA_SIZE" $cmd
		ip netns del "$TAPNS"
		continue
	fi
	addr_b=""; [ "$b" = af_xdp ] && addr_b=10.99.0.2
	if ! NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B=$addr_b timeout 30 "$NETNS" up "$PLAIN" >"$OUT/netns.log" 2>&1; then
		sed 's/^/  | /' "$OUT/netns.log"; bad "$b: netns.sh up $PLAIN"; continue
	fi
	cmd=$(stack_cmd "$b" "$PLAIN-vb" 10.99.0.2 p)
	upload "$b" "$PLAIN-a" 10.99.0.1 "$PLAIN-b" "$SIZE" "$SHA_SIZE" $cmd
	download "$b" "$PLAIN-a" 10.99.0.1 "$PLAIN-b" "$SIZE" "$SHA_SIZE" $cmd
	timeout 30 "$NETNS" down "$PLAIN" >/dev/null 2>&1
done

# ---- the checker catches a wrong byte: Linux sends 1 MiB with byte 500000 changed --------------
if [ -n "${HAVE[af_packet]:-}" ] && NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B= timeout 30 "$NETNS" up "$PLAIN" >"$OUT/netns.log" 2>&1; then
	"$GEN" 1048576 >"$OUT/bad.bin"
	printf 'X' | dd of="$OUT/bad.bin" bs=1 seek=500000 conv=notrunc 2>/dev/null
	ip netns exec "$PLAIN-a" timeout 30 socat -t 10 TCP-LISTEN:4999,reuseaddr "OPEN:$OUT/bad.bin!!OPEN:/dev/null" >/dev/null 2>&1 &
	spid=$!
	wait_listen "$PLAIN-a" 4999
	ip netns exec "$PLAIN-b" timeout 30 $(stack_cmd af_packet "$PLAIN-vb" 10.99.0.2 p) -- -s 10.99.0.1 -p 4999 -x 1048576 \
		>"$OUT/bad.log" 2>&1; rc=$?
	wait "$spid"
	if [ "$rc" -eq 1 ] && grep -q '^tcp_xfer: received 1048576 bytes, .* pattern MISMATCH: 1 wrong bytes, first at offset 500000' "$OUT/bad.log" &&
	   grep -q '^tcp_xfer: result: FAILED' "$OUT/bad.log"; then
		ok "af_packet: a transfer with one wrong byte fails, the checker names offset 500000 (status 1)"
	else
		grep '^tcp_xfer' "$OUT/bad.log" | sed 's/^/  | /'; bad "af_packet: one wrong byte not caught (status $rc)"
	fi
	timeout 30 "$NETNS" down "$PLAIN" >/dev/null 2>&1
fi

# ---- 2. through the impairment bridge: 2 % loss, 2 % reordering ----------------------------
if ! timeout 300 make -s -C "$ROOT/tools/impair" >"$OUT/impair_build.log" 2>&1; then
	sed 's/^/  | /' "$OUT/impair_build.log"; bad "build tools/impair"
else
	for b in $BACKENDS; do
		[ -n "${HAVE[$b]:-}" ] || continue
		addr_b=""; [ "$b" = af_xdp ] && addr_b=10.99.0.2
		if ! NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B=$addr_b timeout 30 "$NETNS" up "$LOSSY" --bridge >"$OUT/netns.log" 2>&1; then
			sed 's/^/  | /' "$OUT/netns.log"; bad "$b impaired: netns.sh up $LOSSY --bridge"; continue
		fi
		sif="$LOSSY-vb"
		if [ "$b" = tap ]; then
			# the tap joins the veth in a kernel bridge: stack -> tap -> bridge -> veth -> impair -> Linux
			sif="${PFX}tb"
			ip -n "$LOSSY-b" tuntap add dev "$sif" mode tap &&
				ip -n "$LOSSY-b" link add "${PFX}br" type bridge &&
				ip -n "$LOSSY-b" link set "$sif" master "${PFX}br" &&
				ip -n "$LOSSY-b" link set "$LOSSY-vb" master "${PFX}br" &&
				ip -n "$LOSSY-b" link set "$sif" up && ip -n "$LOSSY-b" link set "${PFX}br" up ||
				{ bad "tap impaired: bridge the tap with the veth"; timeout 30 "$NETNS" down "$LOSSY" >/dev/null 2>&1; continue; }
			cmd="$OUT/tcp_xfer_tap -i $sif -a 10.99.0.2/24"
		else
			cmd=$(stack_cmd "$b" "$sif" 10.99.0.2 l)
		fi
		ip netns exec "$LOSSY-m" timeout 900 "$ROOT/tools/impair/impair" -i "$LOSSY-ma" -I "$LOSSY-mb" \
			-l 0.02 -r 0.02 -g 3 -s 42 >"$OUT/impair_$b.out" 2>"$OUT/impair_$b.err" &
		IMPAIR_PID=$!
		for i in $(seq 50); do grep -q 'ready:' "$OUT/impair_$b.err" && break; sleep 0.1; done
		if grep -q 'ready:' "$OUT/impair_$b.err"; then
			upload "$b impaired" "$LOSSY-a" 10.99.0.1 "$LOSSY-b" "$IMPAIR_SIZE" "$SHA_IMPAIR" $cmd
			download "$b impaired" "$LOSSY-a" 10.99.0.1 "$LOSSY-b" "$IMPAIR_SIZE" "$SHA_IMPAIR" $cmd
		else
			sed 's/^/  | /' "$OUT/impair_$b.err"; bad "$b impaired: tools/impair did not start"
		fi
		kill -TERM "$IMPAIR_PID" 2>/dev/null; wait "$IMPAIR_PID" 2>/dev/null; IMPAIR_PID=""
		[ "$b" = tap ] && ip -n "$LOSSY-b" link del "$sif" 2>/dev/null # made persistent by ip tuntap
		echo "  info: $b impaired: bridge counts: $(awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^(A->B|B->A|[a-z]+->[a-z]+):?$|^(received|lost|reordered|duplicated)=/) printf "%s ", $i }' "$OUT/impair_$b.out")"
		timeout 30 "$NETNS" down "$LOSSY" >/dev/null 2>&1
	done
fi

# ---- 3. stack to stack across two backends: af_xdp <-> af_packet, af_xdp <-> dpdk ----------------
# s2s_xfer CLIENT-BACKEND CLIENT-CMD: tests/loop/xfer, af_xdp server in S2S-a,
# the client in S2S-b, S2S_SIZE each way on one connection
s2s_xfer() {
	local cb=$1 lim rc src spid t0 t1 sline cline
	lim=$(limit_for "$((2 * S2S_SIZE))")
	ip netns exec "$S2S-a" timeout "$lim" $TIME "$OUT/s2s_server_$cb.cpu" "$OUT/xfer_af_xdp" -i "$S2S-va" -- \
		-p 5000 -n "$S2S_SIZE" -b >"$OUT/xfer_server_$cb.log" 2>&1 &
	spid=$!
	sleep 1
	t0=$(now)
	ip netns exec "$S2S-b" timeout "$lim" $TIME "$OUT/s2s_client_$cb.cpu" $2 -- \
		-s 10.99.0.1 -p 5000 -n "$S2S_SIZE" -b >"$OUT/xfer_client_$cb.log" 2>&1; rc=$?
	t1=$(now)
	wait "$spid"; src=$?
	cline=$(grep -m1 '^xfer: host 1 client' "$OUT/xfer_client_$cb.log")
	sline=$(grep -m1 '^xfer: host 1 server' "$OUT/xfer_server_$cb.log")
	if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ] && echo "$cline" | grep -q ': ok$' && echo "$sline" | grep -q ': ok$' &&
	   echo "$cline" | grep -q "rx $((S2S_SIZE + 16)) B checked, tx $((S2S_SIZE + 16)) B acked; mismatch 0 missing 0 extra 0" &&
	   echo "$sline" | grep -q "rx $((S2S_SIZE + 16)) B checked, tx $((S2S_SIZE + 16)) B acked; mismatch 0 missing 0 extra 0"; then
		ok "stack to stack: xfer $cb client <-> af_xdp server, $(human "$S2S_SIZE") each way on one connection, every byte checked on both sides ($(elapsed "$t0" "$t1") s, $(rate "$((2 * S2S_SIZE))" "$(elapsed "$t0" "$t1")") both ways together$(cpu_of "$OUT/s2s_client_$cb.cpu") ($cb)$(cpu_of "$OUT/s2s_server_$cb.cpu") (af_xdp); client $(echo "$cline" | grep -oE 'retrans [0-9]+' | head -n 1))"
	else
		echo "$cline" | sed 's/^/  | client: /'; tail -n 5 "$OUT/xfer_client_$cb.log" | sed 's/^/  | client: /'
		echo "$sline" | sed 's/^/  | server: /'; tail -n 5 "$OUT/xfer_server_$cb.log" | sed 's/^/  | server: /'
		bad "stack to stack: xfer $cb <-> af_xdp, $(human "$S2S_SIZE") each way (client status $rc, server $src)"
	fi
}

s2s() {
	local lim rc spid t0 t1 sline cline
	if [ "$S2S_BUILDS" = 0 ] || [ -z "${HAVE[af_xdp]:-}" ] || [ -z "${HAVE[af_packet]:-}" ]; then
		skp "stack to stack: needs the af_xdp and af_packet builds"; return
	fi
	if ! built bench_af_xdp || ! built bench_af_packet || ! built xfer_af_xdp || ! built xfer_af_packet; then
		bad "stack to stack: build apps/bench and tests/loop/xfer with io/af_xdp and io/af_packet"; return
	fi
	# af_xdp (kernel address 10.99.0.1 on its veth, which it takes) in S2S-a,
	# af_packet (no kernel address) as 10.99.0.2 in S2S-b
	if ! NETNS_ADDR_A=10.99.0.1 NETNS_ADDR_B= timeout 30 "$NETNS" up "$S2S" >"$OUT/netns.log" 2>&1; then
		sed 's/^/  | /' "$OUT/netns.log"; bad "stack to stack: netns.sh up $S2S"; return
	fi
	# bench ping-pong, 1 KiB requests and replies on 4 connections for 3 s, every byte checked
	ip netns exec "$S2S-a" timeout 60 "$OUT/bench_af_xdp" -i "$S2S-va" -- -p 10000 -l 1024 -q 1024 -x -v 0 \
		>"$OUT/bench_server.log" 2>&1 &
	spid=$!
	sleep 1
	ip netns exec "$S2S-b" timeout 60 "$OUT/bench_af_packet" -i "$S2S-vb" -a 10.99.0.2 -- -s 10.99.0.1 -p 10000 \
		-l 1024 -R 1024 -x -c 4 -t 3 -k -v 0 >"$OUT/bench_client.log" 2>&1; rc=$?
	wait "$spid"; local src=$?
	cline=$(grep -m1 '^bench: client: .* established' "$OUT/bench_client.log")
	sline=$(grep -m1 '^bench: server: .* accepted' "$OUT/bench_server.log")
	if [ "$rc" -eq 0 ] && [ "$src" -eq 0 ] &&
	   echo "$cline" | grep -qE '4 connection\(s\) established, 0 failed; [1-9][0-9]* requests, [1-9][0-9]* replies checked bad 0, unexpected reply bytes 0' &&
	   echo "$sline" | grep -qE 'checked [1-9][0-9]* bytes bad 0.*remote stop yes'; then
		ok "stack to stack: bench ping-pong af_packet client -> af_xdp server, 1 KiB both ways, -x: $(echo "$cline" | grep -oE '[0-9]+ replies checked bad 0'); server $(echo "$sline" | grep -oE 'checked [0-9]+ bytes bad 0'); $(grep -m1 '^total:' "$OUT/bench_client.log")"
	else
		sed 's/^/  | client: /' "$OUT/bench_client.log" | tail -n 8
		sed 's/^/  | server: /' "$OUT/bench_server.log" | tail -n 8
		bad "stack to stack: bench ping-pong with -x (client status $rc, server $src)"
	fi
	# xfer: S2S_SIZE each way on one connection, both sides check every byte;
	# the server is af_xdp, the client af_packet, then dpdk (net_af_packet)
	s2s_xfer af_packet "$OUT/xfer_af_packet -i $S2S-vb -a 10.99.0.2"
	if [ -n "${HAVE[dpdk]:-}" ] && [ -x "$OUT/xfer_dpdk" ]; then
		s2s_xfer dpdk "$OUT/xfer_dpdk $(stack_cmd dpdk "$S2S-vb" 10.99.0.2 s | cut -d' ' -f2-)"
	else
		skp "stack to stack: dpdk <-> af_xdp (no dpdk build of tcp_xfer or tests/loop/xfer)"
	fi
	timeout 30 "$NETNS" down "$S2S" >/dev/null 2>&1
}
s2s

finish
