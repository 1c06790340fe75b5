#!/usr/bin/env bash
# Creates and removes the network-namespace topology that interop tests and
# the demo run in.
#
#   netns.sh up NAME [--queues N] [--bridge]
#   netns.sh down NAME
#
# Plain (default): two namespaces joined by one veth pair
#
#     NAME-a [NAME-va] <------veth------> [NAME-vb] NAME-b
#      10.99.0.1/24                          10.99.0.2/24
#
# --bridge: three namespaces; a user-space bridge in NAME-m (tools/impair)
# forwards frames between its two interfaces, so a and b share one /24:
#
#     NAME-a [NAME-va] <--> [NAME-ma] NAME-m [NAME-mb] <--> [NAME-vb] NAME-b
#
# Environment: NETNS_ADDR_A (default 10.99.0.1), NETNS_ADDR_B (10.99.0.2),
# NETNS_PREFIX (24). An empty NETNS_ADDR_A / NETNS_ADDR_B leaves that side
# without a kernel address (for a user-space stack that owns the interface).
# NETNS_KEEP_IPV6=1 keeps IPv6 on the veths (by default it is disabled so that
# router solicitations and DAD do not add frames to tests' counts).
#
# Offloads: every veth gets `tx off` because veth otherwise hands the peer
# TCP/UDP segments whose checksum is left for "hardware" to finish, and an
# AF_XDP / AF_PACKET user on the other side would see wrong checksums. With
# tx off the kernel also segments TCP itself before the veth (ethtool may
# still list tso "on"; measured: an AF_PACKET reader on the peer sees at most
# 1514-byte frames during a bulk TCP transfer). In
# --bridge mode tso/gso/gro are turned off as well, because a GSO skb reaches
# an AF_PACKET reader as one frame larger than the MTU, which the bridge could
# not forward unmodified to the other side.
#
# `down NAME` removes by name exactly what `up NAME` created: it ends the
# processes still running inside NAME-a/m/b (by pid, as listed by
# `ip netns pids`), deletes the veths and the namespaces. It is idempotent.
set -u

prog=netns.sh
die() { echo "$prog: $*" >&2; exit 1; }

usage() {
  cat >&2 <<'EOF'
usage: netns.sh up NAME [--queues N] [--bridge]
       netns.sh down NAME
NAME: 1-12 characters [A-Za-z0-9_], starting with a letter (interface names
are NAME-va, NAME-vb, NAME-ma, NAME-mb and must fit Linux's 15 characters).
Env: NETNS_ADDR_A, NETNS_ADDR_B (empty = no address), NETNS_PREFIX,
NETNS_KEEP_IPV6=1.
EOF
  exit 2
}

check_name() {
  local name=$1
  [ ${#name} -ge 1 ] && [ ${#name} -le 12 ] || \
    die "NAME '$name' must be 1-12 characters (interface NAME-va must fit 15)"
  [[ $name =~ ^[A-Za-z][A-Za-z0-9_]*$ ]] || \
    die "NAME '$name' must start with a letter and contain only [A-Za-z0-9_]"
}

check_env() {
  [ "${EUID:-$(id -u)}" -eq 0 ] || die "must run as root (creating namespaces and veths needs CAP_SYS_ADMIN/CAP_NET_ADMIN)"
  command -v ip >/dev/null 2>&1 || die "'ip' not found: install iproute2"
  if [ "$1" = up ]; then
    command -v ethtool >/dev/null 2>&1 || die "'ethtool' not found: install ethtool"
  fi
}

ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qxF -- "$1"; }

check_ipv4() {
  local what=$1 addr=$2
  [ -z "$addr" ] && return 0
  [[ $addr =~ ^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})$ ]] || die "$what='$addr' is not an IPv4 address"
  local i
  for i in 1 2 3 4; do
    [ "${BASH_REMATCH[$i]}" -le 255 ] || die "$what='$addr' is not an IPv4 address"
  done
}

# run CMD...: runs a command, and on failure reports it and undoes the
# partial topology (we only get here after checking that NAME was free).
run() {
  local out
  if ! out=$("$@" 2>&1); then
    echo "$prog: failed: $*" >&2
    [ -n "$out" ] && echo "$out" >&2
    topology_down "$NAME" >/dev/null 2>&1
    exit 1
  fi
}

# prepare_if NS IF: offloads off, IPv6 off (unless kept), link up.
prepare_if() {
  local ns=$1 dev=$2
  run ip netns exec "$ns" ethtool -K "$dev" tx off
  if [ "$BRIDGE" = 1 ]; then
    # each feature separately: a kernel may lack one of them without the
    # others being wrong to turn off
    local f
    for f in tso gso gro; do
      run ip netns exec "$ns" ethtool -K "$dev" "$f" off
    done
  fi
  if [ "${NETNS_KEEP_IPV6:-0}" != 1 ]; then
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" >/dev/null 2>&1 || true
  fi
  run ip -n "$ns" link set "$dev" up
}

topology_up() {
  local q=$QUEUES
  local a="$NAME-a" b="$NAME-b" m="$NAME-m"
  local va="$NAME-va" vb="$NAME-vb" ma="$NAME-ma" mb="$NAME-mb"
  local addr_a=${NETNS_ADDR_A-10.99.0.1} addr_b=${NETNS_ADDR_B-10.99.0.2}
  local prefix=${NETNS_PREFIX-24}
  check_ipv4 NETNS_ADDR_A "$addr_a"
  check_ipv4 NETNS_ADDR_B "$addr_b"
  [[ $prefix =~ ^[0-9]+$ ]] && [ "$prefix" -ge 1 ] && [ "$prefix" -le 32 ] || die "NETNS_PREFIX='$prefix' must be 1-32"
  [ -n "$addr_a" ] && [ "$addr_a" = "$addr_b" ] && die "NETNS_ADDR_A and NETNS_ADDR_B are both $addr_a"

  local ns
  for ns in "$a" "$b" "$m"; do
    ns_exists "$ns" && die "namespace $ns already exists (run: $prog down $NAME)"
  done
  local dev
  for dev in "$va" "$vb" "$ma" "$mb"; do
    ip link show dev "$dev" >/dev/null 2>&1 && die "interface $dev already exists in this namespace"
  done

  run ip netns add "$a"
  run ip netns add "$b"
  run ip -n "$a" link set lo up
  run ip -n "$b" link set lo up
  if [ "$BRIDGE" = 1 ]; then
    run ip netns add "$m"
    run ip -n "$m" link set lo up
    ip netns exec "$m" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 >/dev/null 2>&1 || true
    ip netns exec "$m" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 >/dev/null 2>&1 || true
    run ip link add "$va" netns "$a" numtxqueues "$q" numrxqueues "$q" type veth \
          peer name "$ma" netns "$m" numtxqueues "$q" numrxqueues "$q"
    run ip link add "$mb" netns "$m" numtxqueues "$q" numrxqueues "$q" type veth \
          peer name "$vb" netns "$b" numtxqueues "$q" numrxqueues "$q"
    prepare_if "$m" "$ma"
    prepare_if "$m" "$mb"
  else
    run ip link add "$va" netns "$a" numtxqueues "$q" numrxqueues "$q" type veth \
          peer name "$vb" netns "$b" numtxqueues "$q" numrxqueues "$q"
  fi
  prepare_if "$a" "$va"
  prepare_if "$b" "$vb"
  [ -n "$addr_a" ] && run ip -n "$a" addr add "$addr_a/$prefix" dev "$va"
  [ -n "$addr_b" ] && run ip -n "$b" addr add "$addr_b/$prefix" dev "$vb"

  # key=value lines, so that scripts can `eval` them
  echo "ns_a=$a if_a=$va addr_a=${addr_a:+$addr_a/$prefix} mac_a=$(cat_mac "$a" "$va")"
  echo "ns_b=$b if_b=$vb addr_b=${addr_b:+$addr_b/$prefix} mac_b=$(cat_mac "$b" "$vb")"
  if [ "$BRIDGE" = 1 ]; then
    echo "ns_m=$m if_ma=$ma if_mb=$mb"
  fi
  echo "queues=$q"
}

cat_mac() { ip netns exec "$1" cat "/sys/class/net/$2/address" 2>/dev/null; }

# topology_down NAME: tolerant of anything already gone.
topology_down() {
  local name=$1 ns pids pid i
  for ns in "$name-a" "$name-m" "$name-b"; do
    ns_exists "$ns" || continue
    # processes left inside keep the namespace (and its veths) alive after
    # `ip netns delete`; they are ours by construction, end them by pid
    pids=$(ip netns pids "$ns" 2>/dev/null)
    if [ -n "$pids" ]; then
      for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
      for i in 1 2 3 4 5 6 7 8 9 10; do
        pids=$(ip netns pids "$ns" 2>/dev/null)
        [ -z "$pids" ] && break
        sleep 0.1
      done
      for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
    fi
  done
  # deleting one end of a veth deletes its peer
  ns_exists "$name-a" && ip -n "$name-a" link del "$name-va" 2>/dev/null
  ns_exists "$name-b" && ip -n "$name-b" link del "$name-vb" 2>/dev/null
  ns_exists "$name-m" && ip -n "$name-m" link del "$name-ma" 2>/dev/null
  ns_exists "$name-m" && ip -n "$name-m" link del "$name-mb" 2>/dev/null
  for ns in "$name-a" "$name-m" "$name-b"; do
    ns_exists "$ns" && ip netns delete "$ns"
  done
  for ns in "$name-a" "$name-m" "$name-b"; do
    ns_exists "$ns" && { echo "$prog: could not delete namespace $ns" >&2; return 1; }
  done
  return 0
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case "$cmd" in
  up)
    [ $# -ge 1 ] || usage
    NAME=$1; shift
    QUEUES=1; BRIDGE=0
    while [ $# -gt 0 ]; do
      case "$1" in
        --queues)
          [ $# -ge 2 ] || die "--queues needs a number"
          QUEUES=$2; shift 2
          [[ $QUEUES =~ ^[0-9]+$ ]] && [ "$QUEUES" -ge 1 ] && [ "$QUEUES" -le 64 ] || die "--queues '$QUEUES' must be 1-64"
          ;;
        --queues=*)
          QUEUES=${1#--queues=}; shift
          [[ $QUEUES =~ ^[0-9]+$ ]] && [ "$QUEUES" -ge 1 ] && [ "$QUEUES" -le 64 ] || die "--queues '$QUEUES' must be 1-64"
          ;;
        --bridge) BRIDGE=1; shift ;;
        -h|--help) usage ;;
        *) die "unknown option '$1' (see: $prog -h)" ;;
      esac
    done
    check_name "$NAME"
    check_env up
    topology_up
    ;;
  down)
    [ $# -eq 1 ] || usage
    NAME=$1
    check_name "$NAME"
    check_env down
    topology_down "$NAME"
    ;;
  -h|--help) usage ;;
  *) echo "$prog: unknown command '$cmd'" >&2; usage ;;
esac
