# Sourced by tests/common/run.sh (uses its record, $root, $build).
# Checks apps/linux_baseline on the loopback of a private network namespace
# (iipt-lb-<pid>): ping-pong, burst, UDP, depth > 1, remote stop, SIGINT,
# and the rejection of bad options.  Only counts and formats are asserted,
# never timings.

lb_dir="$root/apps/linux_baseline"
lb_ns="iipt-lb-$$"
lb_pids=""

lb_cleanup() {
  local p
  for p in $lb_pids; do kill "$p" 2>/dev/null; done
  ip netns del "$lb_ns" 2>/dev/null
  rm -rf "$build"
}
trap lb_cleanup EXIT

lb_exec() { ip netns exec "$lb_ns" "$@"; }

# Starts the server in the namespace; output to $build/<name>.out.
lb_server_start() { # lb_server_start <name> <args...>
  local name=$1; shift
  ip netns exec "$lb_ns" timeout 60 "$lb_dir/server" "$@" >"$build/$name.out" 2>&1 &
  lb_server_pid=$!
  lb_pids="$lb_pids $lb_server_pid"
}

# Waits (at most 5 s) until something listens on TCP port $1 in the namespace.
lb_wait_listen() {
  local i
  for i in $(seq 50); do
    lb_exec ss -Hltn "sport = :$1" 2>/dev/null | grep -q . && return 0
    sleep 0.1
  done
  return 1
}

# Waits (at most 5 s) for pid $1 to exit; its status in lb_status.
lb_wait_exit() {
  local i
  for i in $(seq 50); do
    if ! kill -0 "$1" 2>/dev/null; then wait "$1"; lb_status=$?; return 0; fi
    sleep 0.1
  done
  lb_status=255
  return 1
}

# Checks the client's summary: a latency line with ordered percentiles
# whose sample count equals the request count, and a non-zero request count.
lb_check_pingpong_summary() { # <label> <client output file>
  local out=$2 line requests p50 p90 p99 p999 samples
  line=$(grep -E '^latency \(us\): p50 [0-9.]+ p90 [0-9.]+ p99 [0-9.]+ p99\.9 [0-9.]+ \([0-9]+ samples\)$' "$out")
  requests=$(sed -nE 's/^total: ([0-9]+) requests in [0-9.]+ s, [0-9]+ requests\/s$/\1/p' "$out")
  read -r p50 p90 p99 p999 samples < <(sed -nE 's/^latency \(us\): p50 ([0-9.]+) p90 ([0-9.]+) p99 ([0-9.]+) p99\.9 ([0-9.]+) \(([0-9]+) samples\)$/\1 \2 \3 \4 \5/p' "$out")
  record $([ -n "$requests" ] && [ "$requests" -gt 0 ] && echo 1 || echo 0) "$1: client completed a non-zero number of requests (${requests:-none})"
  record $([ -n "$line" ] && awk -v a="$p50" -v b="$p90" -v c="$p99" -v d="$p999" 'BEGIN{exit !(a>0 && a<=b && b<=c && c<=d)}' && echo 1 || echo 0) \
    "$1: well-formed percentile line, 0 < p50 <= p90 <= p99 <= p99.9 (${line:-missing})"
  record $([ -n "$samples" ] && [ "$samples" = "$requests" ] && echo 1 || echo 0) "$1: one latency sample per request ($samples samples, $requests requests)"
}

# Every per-second line of a program's output is in bench-iip's format, and
# there are at least $3 report blocks.
lb_check_report_format() { # <label> <output file> <min total lines>
  local bad totals
  bad=$(grep -E '^(\[|payload)' "$2" | grep -vcE '^(\[[0-9]+\] payload: rx [0-9]+ Mbps \([0-9]+ read\), tx [0-9]+ Mbps \([0-9]+ write\)|payload total: rx [0-9]+ Mbps \([0-9]+ pps\), tx [0-9]+ Mbps \([0-9]+ pps\))$')
  totals=$(grep -cE '^payload total: ' "$2")
  record $([ "$bad" -eq 0 ] && [ "$totals" -ge "$3" ] && echo 1 || echo 0) "$1: $totals per-second report(s) (>= $3), all lines in the bench-iip format ($bad malformed)"
}

lb_sum_server_reads() { # total "read" count over all per-thread lines
  sed -nE 's/^\[[0-9]+\] payload: rx [0-9]+ Mbps \(([0-9]+) read\).*/\1/p' "$1" | awk '{s+=$1} END{print s+0}'
}

# A server run stopped through the remote-stop port: it must exit 0 by itself.
lb_check_server_stopped() { # <label> <name>
  lb_wait_exit "$lb_server_pid"
  record $([ "$lb_status" -eq 0 ] && grep -q '^remote stop requested$' "$build/$2.out" && grep -q '^done\.$' "$build/$2.out" && echo 1 || echo 0) \
    "$1: remote stop (client -k) made the server exit with status 0 (status $lb_status)"
}

lb_run() {
  local port sp out rc reads

  if make -s -C "$lb_dir" >"$build/make.log" 2>&1; then
    record 1 "build apps/linux_baseline (make: -O2 -Wall -Wextra -Werror)"
  else
    cat "$build/make.log"; record 0 "build apps/linux_baseline"; return
  fi
  if ! ip netns add "$lb_ns" || ! ip -n "$lb_ns" link set lo up; then
    record 0 "create network namespace $lb_ns (needs root)"; return
  fi
  port=$((20000 + RANDOM % 20000))

  # --- ping-pong, 4 connections, 2 seconds, 2 client threads
  lb_server_start pp -p "$port" -c 0-1 -g 1 -l 1
  if lb_wait_listen "$port" && lb_wait_listen 50000; then
    timeout 30 ip netns exec "$lb_ns" "$lb_dir/client" -s 127.0.0.1 -p "$port" -c 4 -d 1 -g 1 -l 1 -t 2 -T 0-1 -k >"$build/pp.client" 2>&1
    rc=$?
    cat "$build/pp.client"
    record $([ "$rc" -eq 0 ] && echo 1 || echo 0) "ping-pong: client exit status 0 (got $rc)"
    lb_check_pingpong_summary "ping-pong 4 conns" "$build/pp.client"
    lb_check_report_format "ping-pong client" "$build/pp.client" 2
    lb_check_server_stopped "ping-pong" pp
    cat "$build/pp.out"
    lb_check_report_format "ping-pong server" "$build/pp.out" 1
    reads=$(lb_sum_server_reads "$build/pp.out")
    record $([ "$reads" -gt 0 ] && echo 1 || echo 0) "ping-pong: server counted reads ($reads)"
  else
    record 0 "ping-pong: server listening on $port and 50000"
  fi

  # --- burst: 2 connections of 16 KiB writes for 2 seconds
  port=$((port + 1))
  lb_server_start burst -p "$port" -c 0 -g 2
  if lb_wait_listen "$port" && lb_wait_listen 50000; then
    timeout 30 ip netns exec "$lb_ns" "$lb_dir/client" -s 127.0.0.1 -p "$port" -c 2 -g 2 -l 16384 -t 2 -k >"$build/burst.client" 2>&1
    rc=$?
    cat "$build/burst.client"
    local sent
    sent=$(sed -nE 's/^total: ([0-9]+) bytes sent in .*/\1/p' "$build/burst.client")
    record $([ "$rc" -eq 0 ] && [ -n "$sent" ] && [ "$sent" -gt 0 ] && echo 1 || echo 0) "burst: client exit 0 and sent data (${sent:-no} bytes)"
    lb_check_report_format "burst client" "$build/burst.client" 2
    lb_check_server_stopped "burst" burst
    cat "$build/burst.out"
    local rx_mbit
    rx_mbit=$(sed -nE 's/^payload total: rx ([0-9]+) Mbps.*/\1/p' "$build/burst.out" | awk '{s+=$1} END{print s+0}')
    reads=$(lb_sum_server_reads "$build/burst.out")
    record $([ "$reads" -gt 0 ] && [ "$rx_mbit" -gt 0 ] && echo 1 || echo 0) "burst: server received data ($reads reads, $rx_mbit Mbit summed over reports)"
    record $(grep -qE '^payload total: rx [0-9]+ Mbps \([0-9]+ pps\), tx 0 Mbps \(0 pps\)$' "$build/burst.out" && ! grep -qE 'tx [1-9][0-9]* Mbps' "$build/burst.out" && echo 1 || echo 0) \
      "burst: server sends nothing back"
  else
    record 0 "burst: server listening on $port and 50000"
  fi

  # --- UDP ping-pong, 2 "connections", depth 2
  port=$((port + 1))
  lb_server_start udp -p "$port" -c 0 -n 17 -l 32
  if lb_wait_listen 50000; then
    timeout 30 ip netns exec "$lb_ns" "$lb_dir/client" -s 127.0.0.1 -p "$port" -n 17 -c 2 -d 2 -l 32 -t 1 -k >"$build/udp.client" 2>&1
    rc=$?
    cat "$build/udp.client"
    record $([ "$rc" -eq 0 ] && echo 1 || echo 0) "UDP ping-pong: client exit status 0 (got $rc)"
    lb_check_pingpong_summary "UDP ping-pong" "$build/udp.client"
    lb_check_server_stopped "UDP" udp
  else
    record 0 "UDP: server remote-stop port listening"
  fi

  # --- TCP, 8 requests in flight per connection, server framing -q
  port=$((port + 1))
  lb_server_start depth -p "$port" -c 0 -l 10 -q 10 -K 50001
  if lb_wait_listen "$port" && lb_wait_listen 50001; then
    timeout 30 ip netns exec "$lb_ns" "$lb_dir/client" -s 127.0.0.1 -p "$port" -c 2 -d 8 -l 10 -t 1 -r 20000 -k -K 50001 >"$build/depth.client" 2>&1
    rc=$?
    cat "$build/depth.client"
    record $([ "$rc" -eq 0 ] && echo 1 || echo 0) "depth 8, rate-limited: client exit status 0 (got $rc)"
    lb_check_pingpong_summary "depth 8 with -q framing" "$build/depth.client"
    lb_check_server_stopped "remote stop on -K 50001" depth
  else
    record 0 "depth: server listening on $port and 50001"
  fi

  # --- SIGINT stops the server
  port=$((port + 1))
  lb_server_start sigint -p "$port" -c 0
  if lb_wait_listen "$port"; then
    kill -INT "$lb_server_pid"
    lb_wait_exit "$lb_server_pid"
    record $([ "$lb_status" -eq 0 ] && grep -q '^done\.$' "$build/sigint.out" && echo 1 || echo 0) "SIGINT: server exits with status 0 (status $lb_status)"
  else
    record 0 "SIGINT: server listening on $port"
  fi

  # --- bad input: clear message, non-zero status, no crash
  lb_bad() { # <expected status> <message regex> <program> <args...>
    local want=$1 msg=$2 prog=$3 got; shift 3
    out=$(timeout 10 ip netns exec "$lb_ns" "$lb_dir/$prog" "$@" 2>&1); got=$?
    record $([ "$got" -eq "$want" ] && grep -qE -- "$msg" <<<"$out" && echo 1 || echo 0) \
      "$prog $* -> status $want, message /$msg/ (status $got: $(head -n 1 <<<"$out"))"
  }
  lb_bad 2 '-p PORT is required' server -c 0
  lb_bad 2 'core list "0-": range at position 0 has no end' server -p "$port" -c 0-
  lb_bad 2 'core 1023 is not available' server -p "$port" -c 1023
  lb_bad 2 '-g: 3 is out of range' server -p "$port" -g 3
  lb_bad 2 '-n: protocol must be 6 \(TCP\) or 17 \(UDP\)' server -p "$port" -n 7
  lb_bad 2 '-p: "x1" is not a number' server -p x1
  lb_bad 2 '"nowhere" is not an IPv4 address' client -s nowhere -p "$port"
  lb_bad 2 '-s SERVER and -p PORT are required' client -p "$port"
  lb_bad 2 '-c: 0 is out of range' client -s 127.0.0.1 -p "$port" -c 0
  lb_bad 2 '-T: core list "0,,1"' client -s 127.0.0.1 -p "$port" -T 0,,1
  lb_bad 1 'connection 0 to 127.0.0.1:[0-9]+: Connection refused' client -s 127.0.0.1 -p "$port" -t 1
  # the remote-stop port already taken (by a first server): the second says so
  lb_server_start busy -p "$port" -c 0
  if lb_wait_listen 50000; then
    lb_bad 1 'cannot open the remote-stop port 50000' server -p $((port + 1)) -c 0
    lb_bad 1 'bind to TCP port '"$port"'.*Address already in use' server -p "$port" -c 0 -K 50002
    kill -INT "$lb_server_pid"; lb_wait_exit "$lb_server_pid"
  else
    record 0 "busy: first server listening on 50000"
  fi
  lb_bad 1 'remote stop \(port 50000\): Connection refused' client -s 127.0.0.1 -p 9 -n 17 -t 1 -k
}

lb_run
