#!/usr/bin/env bash
# Multi-host TCP tests over the in-process loop backend (io/loop): a server
# and a client host run tests/loop/xfer, which moves a deterministic pattern
# and checks every byte, every connection's normal close (half-close, FINs,
# no reset or time-out) and that the stack's pb and connection pools and the
# backend's packet pool are back to their initial counts at the end.
#
# Every run uses the virtual clock (-V) and fixed seeds: the same command
# gives the same run. One line per scenario with its figures, then
# "N passed, N failed".
#
#   LOOP_SCALE=F   multiplies the data sizes and the cycle count (default 1,
#                  the sizes the issue asks for: 1 GiB transfers, 1,000
#                  concurrent connections, 100,000 open/transfer/close cycles)
#   LOOP_ONLY=RE   runs only the scenarios whose name matches the regex
#   LOOP_TIMEOUT=S wall-clock limit per scenario (default 600 s)
#   BUILD_DIR=DIR  where binaries and failure logs go
#
# A failing scenario keeps its full output in $BUILD_DIR/<name>.log; rerun
# its command with "-w file.pcap" before the first "--" for a capture
# (tshark -r file.pcap).
set -u
cd "$(dirname "$0")"
here=$PWD
root=$(cd ../.. && pwd)
out=${BUILD_DIR:-$root/build/tests/loop}
scale=${LOOP_SCALE:-1}
only=${LOOP_ONLY:-}
limit=${LOOP_TIMEOUT:-600}
mkdir -p "$out"

if ! awk -v s="$scale" 'BEGIN { exit !(s + 0 > 0) }'; then
  echo "LOOP_SCALE must be a positive number (got '$scale')"; exit 2
fi

# two builds: the default stack, and one with an 8-packet receive buffer
# (a small advertised window) for the bandwidth-delay scenarios
build() { # binary, extra cflags
  if ! make -s -C "$here/xfer" OUT="$out/$1" EXTRA_CFLAGS="$2" >"$out/build-$1.log" 2>&1; then
    cat "$out/build-$1.log"; echo "not ok - build $1"; echo "0 passed, 1 failed"; exit 1
  fi
}
build xfer ""
build xfer_smallwin "-DIIP_CONF_TCP_RX_BUF_PKTS=8"
# and one under AddressSanitizer and UndefinedBehaviorSanitizer (stack, backend and app)
build xfer_asan "-O1 -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

# bytes (or counts) times the scale, at least 1
sz() { awk -v b="$1" -v s="$scale" 'BEGIN { v = int(b * s); if (v < 1) v = 1; printf "%d", v }'; }
K=1024; M=$((1024 * 1024)); G=$((1024 * 1024 * 1024))

pass=0; fail=0
echo "loop TCP tests, LOOP_SCALE=$scale ($( [ "$scale" = 1 ] && echo "the issue's sizes" || echo "scaled sizes" ))"

# scenario NAME BINARY "LOOP OPTIONS" "APP OPTIONS (both hosts)" ["CLIENT-ONLY OPTIONS" "EXPECTED FAILURE"]
# With an expected failure (a regex the server's line must match), the run
# must fail with exit status 1: a self-test of the checks themselves.
# SERVER_EXTRA and CLIENTS (variables, usually empty) add server-only options
# and whole further host sections ("-- -s ... -- -s ...") for several clients.
SERVER_EXTRA=""; CLIENTS=""
scenario() {
  local name=$1 bin=$2 lopts=$3 aopts=$4 copts=${5:-} expect_fail=${6:-}
  if [ -n "$only" ] && ! [[ $name =~ $only ]]; then return; fi
  local log="$out/$name.log"
  # -T: a virtual-time guard against a hang (never reached by a healthy run)
  local cmd="$out/$bin -V -T 100000 $lopts -- -p 5000 $aopts $SERVER_EXTRA -- -s 10.0.0.1 -p 5000 $aopts $copts $CLIENTS"
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout "$limit" $cmd >"$log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local wall; wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
  local srv cli nclients
  srv=$(grep '^xfer: host 1 server' "$log")
  cli=$(grep '^xfer: host [0-9]* client' "$log")
  nclients=$(grep -c . <<<"$cli")
  local c2s s2c conns vt vtot rtx rto
  c2s=$(sed -nE 's/.* rx ([0-9]+) B checked.*/\1/p' <<<"$srv"); c2s=${c2s:-0}
  s2c=$(sed -nE 's/.* rx ([0-9]+) B checked.*/\1/p' <<<"$cli" | awk '{ t += $1 } END { printf "%d", t }')
  conns=$(sed -nE 's/.*conns ([0-9]+\/[0-9]+) ok.*/\1/p' <<<"$srv")
  [ "$nclients" -gt 1 ] && conns="$conns from $nclients clients"
  vt=$(sed -nE 's/.* time ([0-9.]+) s .*/\1/p' <<<"$srv")
  vtot=$(sed -nE 's/^loop: all hosts done after ([0-9.]+) s .*/\1/p' "$log")
  rtx=$(awk '/^xfer: host/ { for (i = 1; i < NF; i++) { if ($i == "retrans") r += $(i + 1); if ($i == "rto") o += $(i + 1); if ($i == "zwp") z += $(i + 1) } }
             END { printf "%d retrans, %d rto, %d zero-window probes", r, o, z }' "$log")
  local total=$((c2s + s2c))
  local gbps; gbps=$(awk -v b="$total" -v w="$wall" 'BEGIN { printf "%.2f", (w > 0) ? (b * 8 / w / 1e9) : 0 }')
  # on the virtual clock; meaningful with -B (without it a busy round costs 1 us)
  local vgbps="no virtual rate (no -B)"
  [[ $lopts == *"-B "* ]] && vgbps=$(awk -v b="$total" -v w="${vt:-0}" 'BEGIN { printf "%.2f Gbit/s virtual", (w > 0) ? (b * 8 / w / 1e9) : 0 }')
  if [ -n "$expect_fail" ]; then
    if [ "$rc" -eq 1 ] && grep -qE "$expect_fail" <<<"$srv" && grep -q ': FAILED$' <<<"$srv"; then
      echo "ok - $name: failed as it must ($(grep -oE "$expect_fail" <<<"$srv" | head -n 1))"
      pass=$((pass + 1)); rm -f "$log"
    else
      echo "not ok - $name: exit $rc, expected 1 with '$expect_fail'"; echo "  command: $cmd"; echo "  log: $log"
      fail=$((fail + 1))
    fi
    return
  fi
  local figures="$total B checked (c->s $c2s, s->c $s2c), conns ${conns:-?}, wall ${wall} s, virtual ${vt:-?} s (${vtot:-?} s with TIME-WAIT), ${gbps} Gbit/s wall, ${vgbps}, $rtx"
  if [ "$rc" -eq 0 ] && grep -q ': ok$' <<<"$srv" && [ -n "$cli" ] && ! grep -qv ': ok$' <<<"$cli" &&
     grep -q '^loop: leak check ok' "$log"; then
    echo "ok - $name: $figures"
    pass=$((pass + 1))
  else
    echo "not ok - $name (exit $rc${srv:+}): $figures"
    echo "  command: $cmd"
    grep -E '^xfer: host [0-9]+ .*ended badly|FAILED|leak check|hard stop|refused|larger than' "$log" | head -n 6 | sed 's/^/  /'
    echo "  log: $log"
    fail=$((fail + 1))
    return
  fi
  rm -f "$log"
}

n1g=$(sz $G)
# 1. big transfers, no faults
scenario oneway-1g            xfer ""                        "-n $n1g"
scenario bidir-1g             xfer ""                        "-n $n1g -b"
scenario oneway-1g-tso-lro    xfer "-F sg,tso,csum,lro"      "-n $n1g -A"
# a 10 Gbit/s link with 100 us RTT: here the virtual time is a real figure
scenario 10gbit-256m-tso-lro  xfer "-B 10000 -D 50 -F sg,tso,csum,lro" "-n $(sz $((256 * M))) -A"
scenario bidir-256m-sg-csum   xfer "-F sg,csum"              "-n $(sz $((256 * M))) -b -w 2000"
# 2. faults (seeded)
scenario loss1                xfer "-L 0.01 -S 11"           "-n $(sz $((64 * M))) -b"
scenario loss1-sg-csum        xfer "-L 0.01 -S 12 -F sg,csum" "-n $(sz $((64 * M))) -b -w 1000"
scenario loss5-reorder-dup    xfer "-L 0.05 -O 0.05 -U 0.05 -S 13" "-n $(sz $((16 * M))) -b"
scenario loss5-reorder-dup-tso xfer "-L 0.05 -O 0.05 -U 0.05 -S 14 -F sg,tso,csum" "-n $(sz $((16 * M))) -b -A"
scenario corrupt1             xfer "-C 0.01 -S 15"           "-n $(sz $((64 * M))) -b"
scenario corrupt1-offload     xfer "-C 0.01 -S 16 -F sg,tso,csum,lro" "-n $(sz $((64 * M))) -b -A"
# half-close: with random sizes one side finishes first and waits in
# FIN-WAIT-2 while it still receives (here for minutes of virtual time)
scenario halfclose-long       xfer "-B 2"                    "-c 4 -R 22 -n $(sz $((16 * M))) -b"
scenario reverse-loss1        xfer "-L 0.01 -S 17"           "-n $(sz $((32 * M))) -r -w 700"
# MTU, write size and Nagle edges; long delay with loss; pure reordering and duplication
scenario jumbo-9000           xfer "-m 9000"                 "-n $(sz $((64 * M))) -b -w 8000"
scenario mtu576-loss1         xfer "-m 576 -L 0.01 -S 20"    "-n $(sz $((8 * M))) -b -w 500"
scenario tiny-writes-nagle    xfer ""                        "-n $(sz $((256 * K))) -b -w 7"
scenario tiny-writes-nodelay  xfer ""                        "-n $(sz $((256 * K))) -b -w 7 -N"
scenario reorder20            xfer "-O 0.2 -S 21"            "-n $(sz $((16 * M))) -b"
scenario dup20                xfer "-U 0.2 -S 22"            "-n $(sz $((16 * M))) -b"
scenario delay10ms-loss1      xfer "-D 10000 -L 0.01 -S 23"  "-n $(sz $((32 * M))) -b"
scenario delay10ms-100mbit-loss-tso xfer "-D 10000 -B 100 -L 0.005 -S 24 -F sg,tso,csum,lro" "-n $(sz $((32 * M))) -b -A"
# the other congestion controller (CUBIC, iip_tcp_set_cc)
scenario cubic-delay10ms-loss1 xfer "-D 10000 -L 0.01 -S 32" "-n $(sz $((32 * M))) -b -K"
scenario cubic-100mbit-loss-reorder xfer "-D 5000 -B 100 -L 0.005 -O 0.01 -S 33" "-n $(sz $((64 * M))) -K"
# 3. small bandwidth-delay product: 10 Mbit/s, 5 ms one way; then an 8-packet window too
scenario bdp-10mbit-5ms       xfer "-B 10 -D 5000"           "-n $(sz $((4 * M))) -b"
scenario bdp-smallwin         xfer_smallwin "-B 10 -D 5000"  "-n $(sz $((4 * M))) -b"
scenario bdp-smallwin-loss1   xfer_smallwin "-B 10 -D 5000 -L 0.01 -S 18" "-n $(sz $((2 * M))) -b -N"
# flow control: slow readers (iip_tcp_rxbuf_consumed at a limited rate) close
# the window; with loss a window update can be lost and the sender must probe
scenario slow-reader          xfer "-D 1000"                 "-n $(sz $((8 * M))) -z 1"
scenario slow-reader-smallwin-loss xfer_smallwin "-L 0.02 -S 26" "-n $(sz $M) -b -z 1"
scenario slow-reader-smallwin-faults xfer_smallwin "-D 2000 -L 0.02 -O 0.02 -U 0.02 -S 27" "-c 5 -n $(sz $((512 * K))) -b -z 1"
# 4. many connections: 1,000 concurrent with random sizes
scenario conc1000-random      xfer ""                        "-c 1000 -R 7 -n $(sz $M) -b"
scenario conc1000-random-tso  xfer "-F sg,tso,csum,lro"      "-c 1000 -R 8 -n $(sz $((256 * K))) -b -A"
# several clients on one server (own address, ARP, id range each), with faults
k1=$(sz 10); k2=$(sz 5); k3=$(sz 20)
SERVER_EXTRA="-e $((40 * k1 + 40 * k2 + 10 * k3))"
CLIENTS="-- -s 10.0.0.1 -p 5000 -c 20 -k $k1 -R 1 -n 256k -b -i $((20 * k1))"
CLIENTS="$CLIENTS -- -s 10.0.0.1 -p 5000 -c 40 -k $k2 -R 1 -n 256k -b -i $((40 * k1))"
CLIENTS="$CLIENTS -- -s 10.0.0.1 -p 5000 -c 10 -k $k3 -R 1 -n 256k -b -i $((40 * k1 + 40 * k2))"
scenario four-clients-loss    xfer "-L 0.01 -S 28"           "-c 20 -k $k1 -R 1 -n 256k -b"
SERVER_EXTRA=""; CLIENTS=""
# 5. 100,000 open/transfer/close cycles (100 slots x 1000), pools back at the end
scenario cycles-100k          xfer ""                        "-c 100 -k $(sz 1000) -R 3 -n 4k"
scenario cycles-10k-sg-csum   xfer "-F sg,csum"              "-c 100 -k $(sz 100) -R 4 -n 16k -b"
scenario cycles-30k-reverse    xfer ""                        "-c 100 -k $(sz 300) -R 6 -n 4k -r"
scenario cycles-2k-loss-tso   xfer "-L 0.03 -O 0.03 -S 25 -F sg,tso,csum,lro" "-c 50 -k $(sz 40) -R 8 -n 32k -b -A"
scenario cycles-2k-loss       xfer "-L 0.02 -O 0.02 -S 19"   "-c 20 -k $(sz 100) -R 5 -n 64k -b"

# 6. the same machinery under ASan/UBSan: faults, offloads, cycles, small MTU, slow reader
scenario asan-faults          xfer_asan "-L 0.05 -O 0.05 -U 0.05 -C 0.01 -S 29" "-n $(sz $((4 * M))) -b"
scenario asan-cycles-offload  xfer_asan "-L 0.02 -O 0.02 -C 0.01 -S 30 -F sg,tso,csum" "-c 20 -k $(sz 20) -R 3 -n 64k -b -A"
scenario asan-lro-conc        xfer_asan "-F sg,tso,csum,lro" "-c 50 -R 3 -n $(sz $M) -b -A"
scenario asan-mtu576-slow     xfer_asan "-m 576 -L 0.02 -S 31 -F sg,csum" "-n $(sz $((2 * M))) -b -w 300 -z 3"
# 7. the checks can fail: one flipped bit per stream must be caught, also
#    inside LRO chains and with the zero-copy transmit path
scenario selftest-flip        xfer ""                        "-c 3 -n 1m" "-X 777" "mismatch 3 "
SERVER_EXTRA="-e 20"; CLIENTS="-- -s 10.0.0.1 -p 5000 -c 10 -n 64k"   # both clients use ids 0..9
scenario selftest-dup-ids     xfer ""                        "-c 10 -n 64k" "" "dup-id 10 "
SERVER_EXTRA=""; CLIENTS=""
scenario selftest-flip-lro    xfer "-F sg,tso,csum,lro"      "-c 2 -n 4m -A" "-X 2000001" "mismatch 2 "

# 8. bad options are refused with status 2 (no hang, no crash); an
#    impossible write size stops every host with status 1
bad_options() {
  local args rc bad=""
  for args in "-- -p 0" "-- -p 5000 -n 12x" "-- -s 1.2.3 -p 5" "-- -c 5" "-- -p 5 extra" \
              "-- -p 5 -- -s 10.0.0.1 -p 5 -c 70000" "-- -p 5 -q 0" "-- -p 5 -z 0"; do
    timeout 10 "$out/xfer" -V $args >/dev/null 2>&1; rc=$?
    [ "$rc" -eq 2 ] || bad="$bad [$args: exit $rc]"
  done
  timeout 10 "$out/xfer" -V -T 100 -- -p 5000 -- -s 10.0.0.1 -p 5000 -w 3000 >/dev/null 2>&1; rc=$?
  [ "$rc" -eq 1 ] || bad="$bad [-w 3000: exit $rc]"
  if [ -z "$bad" ]; then echo "ok - bad-options: refused"; pass=$((pass + 1));
  else echo "not ok - bad-options:$bad"; fail=$((fail + 1)); fi
}
if [ -z "$only" ] || [[ bad-options =~ $only ]]; then bad_options; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
