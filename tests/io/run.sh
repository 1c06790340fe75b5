#!/usr/bin/env bash
# tests/io/run.sh — the I/O layer: packet pool, software offloads, pcap
# writer, the emulated link, the loop backend (with a fake stack, and with
# the real stack through apps/examples/ping_udp once stack/main.c exists).
# Prints one line per check and ends with "N passed, N failed, N skipped";
# exits non-zero if anything failed.
set -u
cd "$(dirname "$0")"
HERE=$(pwd)
ROOT=$(cd ../.. && pwd)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/iip-io-test.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
CC=${CC:-gcc}
CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE"
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
pass=0; fail=0; skip=0

ok()   { echo "pass: $1"; pass=$((pass + 1)); }
bad()  { echo "FAIL: $1"; fail=$((fail + 1)); }
skp()  { echo "skip: $1"; skip=$((skip + 1)); }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# runs a C test binary: its "pass:"/"FAIL:" lines count; a crash or a
# non-zero exit without a FAIL line counts as one failure
run_c_test() {
	local name=$1; shift
	local log="$OUT/$name.log" rc
	"$@" >"$log" 2>&1; rc=$?
	cat "$log"
	local p f
	p=$(grep -c '^pass: ' "$log"); f=$(grep -c '^FAIL: ' "$log")
	pass=$((pass + p)); fail=$((fail + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then bad "$name exited with status $rc"; fi
}

build() { # name sources...
	local name=$1; shift
	if $CC $CFLAGS $SAN "$@" -o "$OUT/$name" >"$OUT/$name.build" 2>&1; then ok "build $name"
	else cat "$OUT/$name.build"; bad "build $name"; return 1; fi
}

have_tshark() { command -v tshark >/dev/null 2>&1; }
TSHARK_OPTS="-o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -o udp.check_checksum:TRUE"
# a pcap is clean when tshark reads it whole, and no frame is malformed or
# has an error-level expert item (bad checksum, ...)
pcap_clean() { # file expected_frames(or -)
	local f=$1 want=$2 n errs msgs
	msgs=$(tshark -r "$f" $TSHARK_OPTS 2>&1 >/dev/null | grep -v 'Running as user')
	[ -z "$msgs" ] || { echo "  tshark: $msgs"; return 1; }
	n=$(tshark -r "$f" 2>/dev/null | wc -l)
	errs=$(tshark -r "$f" $TSHARK_OPTS -Y '_ws.malformed || _ws.expert.severity >= error' 2>/dev/null | wc -l)
	echo "  $f: $n frames, $errs malformed/bad"
	[ "$errs" -eq 0 ] && { { [ "$want" = - ] && [ "$n" -gt 0 ]; } || [ "$n" = "$want" ]; }
}

# ---- unit tests of io/common and io/loop/link.h ----------------------------
build test_pkt test_pkt.c && run_c_test test_pkt "$OUT/test_pkt"
build test_link test_link.c && run_c_test test_link "$OUT/test_link"
if build test_offload test_offload.c; then
	run_c_test test_offload "$OUT/test_offload" "$OUT/off_us.pcap" "$OUT/off_ns.pcap"
	if have_tshark; then
		check "tshark reads offload pcap (us): 17 frames, none malformed, checksums good" pcap_clean "$OUT/off_us.pcap" 17
		check "tshark reads offload pcap (ns): 17 frames, none malformed, checksums good" pcap_clean "$OUT/off_ns.pcap" 17
		t=$(tshark -r "$OUT/off_ns.pcap" -T fields -e frame.time_epoch -c 1 2>/dev/null)
		check "nanosecond timestamp read back exactly (1700000000.123456789)" [ "$t" = "1700000000.123456789" ]
		t=$(tshark -r "$OUT/off_us.pcap" -T fields -e frame.time_epoch -c 1 2>/dev/null)
		check "microsecond timestamp read back (1700000000.123456000)" [ "$t" = "1700000000.123456000" ]
	else
		skp "pcap read-back: tshark is not installed"
	fi
fi

# ---- the loop backend with a minimal fake stack ------------------------------
if build loop_fake loop_fake.c; then
	LF="$OUT/loop_fake"
	"$LF" -V -w "$OUT/lf_clean.pcap" -- -s -- -c 500 >"$OUT/lf1.log" 2>&1; rc=$?
	check "loop (fake stack): 500 datagrams echoed, no fault, exit 0" \
		grep -q '^app: 500/500 datagrams echoed, [0-9]* bytes checked, 0 bad' "$OUT/lf1.log"
	check "loop (fake stack): exit status 0 and every packet returned" \
		bash -c "[ $rc -eq 0 ] && grep -q 'leak check ok' '$OUT/lf1.log'"
	if have_tshark; then
		check "loop pcap readable by tshark: 1000 frames, none malformed" pcap_clean "$OUT/lf_clean.pcap" 1000
	else
		skp "loop pcap read-back: tshark is not installed"
	fi
	FAULTS="-V -L 0.05 -O 0.05 -U 0.05 -C 0.05 -D 100 -B 1000 -S 11"
	for feat in none sg,csum; do
		"$LF" $FAULTS -F $feat -- -s -- -c 2000 >"$OUT/lf_$feat.log" 2>&1; rc=$?
		check "loop (fake stack) with faults, -F $feat: all 2000 echoed, every byte checked, 0 bad" \
			grep -q '^app: 2000/2000 datagrams echoed, 1405400 bytes checked, 0 bad' "$OUT/lf_$feat.log"
		check "loop (fake stack) with faults, -F $feat: faults happened, no leak, exit 0" bash -c \
			"[ $rc -eq 0 ] && grep -q 'leak check ok' '$OUT/lf_$feat.log' && grep -Eq 'dropped [1-9].*duplicated [1-9].*reordered [1-9].*corrupted [1-9]' '$OUT/lf_$feat.log'"
	done
	check "emulated NIC checksum offload: pseudo-header convention seen on every frame" \
		grep -Eq 'host 2: .*pseudo-header sum [1-9][0-9]* ok 0 not' "$OUT/lf_sg,csum.log"
	"$LF" $FAULTS -w "$OUT/det1.pcap" -- -s -- -c 300 >"$OUT/det1.log" 2>&1
	"$LF" $FAULTS -w "$OUT/det2.pcap" -- -s -- -c 300 >"$OUT/det2.log" 2>&1
	"$LF" ${FAULTS/-S 11/-S 12} -w "$OUT/det3.pcap" -- -s -- -c 300 >"$OUT/det3.log" 2>&1
	check "virtual clock: same seed, identical output and pcap" bash -c \
		"cmp -s <(tail -n +2 '$OUT/det1.log') <(tail -n +2 '$OUT/det2.log') && cmp -s '$OUT/det1.pcap' '$OUT/det2.pcap'"
	check "virtual clock: another seed, another run" bash -c "! cmp -s '$OUT/det1.pcap' '$OUT/det3.pcap'"
	"$LF" -V -F sg,tso,csum -w "$OUT/tso.pcap" -- -s -- -c 10 -t 5 >"$OUT/tso.log" 2>&1; rc=$?
	check "TSO on the emulated NIC: 5 x 20000 B cut into 70 frames <= 1514 B, every byte verified" bash -c \
		"[ $rc -eq 0 ] && grep -q '^app: tcp: 70 frames, largest 1514 bytes, 100000 bytes verified, 0 bad bytes, 0 bad checksums' '$OUT/tso.log'"
	"$LF" -V -F sg,tso,csum,lro -w "$OUT/lro.pcap" -- -s -- -c 10 -t 5 >"$OUT/lro.log" 2>&1; rc=$?
	check "TSO+LRO: 5 frames of 20066 B handed over whole, every byte verified" bash -c \
		"[ $rc -eq 0 ] && grep -q '^app: tcp: 5 frames, largest 20066 bytes, 100000 bytes verified, 0 bad bytes, 0 bad checksums' '$OUT/lro.log'"
	if have_tshark; then
		check "TSO pcap: 90 frames (70 TCP + 20 UDP), checksums good for tshark" pcap_clean "$OUT/tso.pcap" 90
		check "LRO pcap: 25 frames (5 TCP + 20 UDP), checksums good for tshark" pcap_clean "$OUT/lro.pcap" 25
	fi
	"$LF" -- -s -- -c 200 >"$OUT/real.log" 2>&1; rc=$?
	check "real-time clock run completes (200 datagrams)" bash -c \
		"[ $rc -eq 0 ] && grep -q '^app: 200/200 ' '$OUT/real.log'"
	for badopt in "-L 1.5" "-F tso,bogus" "-m 20" "-a 10.0.0.300" "-x" "-D" "-n 1"; do
		# -n 1 with two sections is an error too
		"$LF" $badopt -- -s -- -c 1 >"$OUT/badopt.log" 2>&1; rc=$?
		check "bad loop option '$badopt' refused with status 2 and a message" bash -c \
			"[ $rc -eq 2 ] && grep -Eqi 'invalid|unknown|needs|sections|usage' '$OUT/badopt.log'"
	done
fi

# ---- TCP over the loop backend on the real stack ------------------------------
if [ -f "$ROOT/stack/main.c" ]; then
	if build loop_tcp loop_tcp.c; then
		LT="$OUT/loop_tcp"
		TCPARGS="-- -s 1000000 -- -c 10.0.0.1 -b 1000000"
		for feat in none sg,csum sg,tso,csum sg,tso,csum,lro; do
			"$LT" -V -T 600 -F $feat -w "$OUT/tcp_$feat.pcap" $TCPARGS >"$OUT/tcp_$feat.log" 2>&1; rc=$?
			grep -E '^(tcp|loop: (link|leak|host 2: tx))' "$OUT/tcp_$feat.log" | sed 's/^/  /'
			check "TCP 1 MB over the loop, -F $feat: every byte verified, closed, no leak" bash -c \
				"[ $rc -eq 0 ] && grep -q 'tcp: server verified 1000000 of 1000000 bytes, 0 bad.*, closed' '$OUT/tcp_$feat.log' && grep -q 'leak check ok' '$OUT/tcp_$feat.log'"
			check "TCP -F $feat: offloaded L4 checksums carried the pseudo-header sum" \
				bash -c "! grep -Eq 'pseudo-header sum [0-9]+ ok [1-9]' '$OUT/tcp_$feat.log'"
			if have_tshark; then
				check "TCP -F $feat pcap: none malformed, checksums good" pcap_clean "$OUT/tcp_$feat.pcap" -
			fi
		done
		check "TCP -F sg,tso,csum: the NIC cut TSO frames" grep -Eq 'host 2: .*offload: tso [1-9]' "$OUT/tcp_sg,tso,csum.log"
		check "TCP -F sg,tso,csum,lro: the receiver got whole chained frames" \
			grep -Eq 'payload callbacks \([1-9][0-9]* chained\)' "$OUT/tcp_sg,tso,csum,lro.log"
		for feat in none sg,tso,csum; do
			"$LT" -V -T 600 -F $feat -L 0.05 -O 0.05 -U 0.05 -C 0.05 -D 100 -B 1000 -S 9 $TCPARGS >"$OUT/tcpf_$feat.log" 2>&1; rc=$?
			grep -E '^(tcp|loop: (link|leak))' "$OUT/tcpf_$feat.log" | sed 's/^/  /'
			check "TCP 1 MB with -L/-O/-U/-C 0.05, -F $feat: every byte verified, no leak" bash -c \
				"[ $rc -eq 0 ] && grep -q 'tcp: server verified 1000000 of 1000000 bytes, 0 bad.*, closed' '$OUT/tcpf_$feat.log' && grep -q 'leak check ok' '$OUT/tcpf_$feat.log'"
		done
	fi
else
	skp "TCP over the loop: stack/main.c not there yet"
fi

# ---- the example app on the real stack ----------------------------------------
APP="$ROOT/apps/examples/ping_udp"
if [ -f "$ROOT/stack/main.c" ] && [ -f "$APP/Makefile" ]; then
	if make -s -C "$APP" IOSUB_DIR="$ROOT/io/loop" OUT="$OUT/ping_udp" EXTRA_CFLAGS="$SAN" >"$OUT/ping_build.log" 2>&1; then
		ok "build apps/examples/ping_udp with IOSUB_DIR=io/loop"
		P="$OUT/ping_udp"
		"$P" -V -T 600 -w "$OUT/ping.pcap" -- -e 1 -- -s 10.0.0.1 -n 50 >"$OUT/ping1.log" 2>&1; rc=$?
		cat "$OUT/ping1.log" | grep -E '^(ping_udp|loop: (link|leak))'
		check "ping_udp without faults: all replies, every byte checked, no leak" bash -c \
			"[ $rc -eq 0 ] && grep -q 'ping_udp: summary: .* 0 bad' '$OUT/ping1.log' && grep -q 'ping_udp: result: ok' '$OUT/ping1.log' && grep -q 'leak check ok' '$OUT/ping1.log'"
		if have_tshark; then
			check "ping_udp pcap: 202 frames (ARP, ICMP, UDP), none malformed, checksums good" pcap_clean "$OUT/ping.pcap" 202
		fi
		"$P" -V -T 600 -L 0.05 -O 0.05 -U 0.05 -S 3 -- -e 1 -- -s 10.0.0.1 -n 200 >"$OUT/ping2.log" 2>&1; rc=$?
		cat "$OUT/ping2.log" | grep -E '^(ping_udp|loop: (link|leak))'
		check "ping_udp with -L 0.05 -O 0.05 -U 0.05 -V: completes, every byte checked, no leak" bash -c \
			"[ $rc -eq 0 ] && grep -q 'ping_udp: result: ok' '$OUT/ping2.log' && grep -q 'leak check ok' '$OUT/ping2.log'"
		"$P" -V -T 600 -F sg,csum -C 0.05 -D 50 -B 100 -S 4 -- -e 1 -- -s 10.0.0.1 -n 200 >"$OUT/ping3.log" 2>&1; rc=$?
		cat "$OUT/ping3.log" | grep -E '^(ping_udp|loop: (link|leak|host 1: tx))'
		check "ping_udp with -F sg,csum -C 0.05: corrupted frames rejected, rest checked, no leak" bash -c \
			"[ $rc -eq 0 ] && grep -q 'ping_udp: result: ok' '$OUT/ping3.log' && grep -q 'leak check ok' '$OUT/ping3.log' && grep -Eq 'corrupted [1-9]' '$OUT/ping3.log'"
		check "stack leaves the pseudo-header sum in offloaded L4 checksums (emulated NIC counts)" bash -c \
			"grep -Eq 'host 2: .*pseudo-header sum [1-9][0-9]* ok 0 not' '$OUT/ping3.log' && ! grep -Eq 'pseudo-header sum [0-9]+ ok [1-9]' '$OUT/ping3.log'"
	else
		cat "$OUT/ping_build.log"
		bad "build apps/examples/ping_udp with IOSUB_DIR=io/loop"
	fi
else
	skp "ping_udp on the real stack: stack/main.c or apps/examples/ping_udp not there yet"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
