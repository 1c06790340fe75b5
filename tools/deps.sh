#!/usr/bin/env bash
# Installs everything the build, the tests and the demo use, on Debian 12 /
# Ubuntu 22.04+, as root.  Idempotent: packages already present are skipped.
set -eu
pkgs="make gcc g++ gcc-multilib g++-multilib clang libclang-rt-14-dev llvm python3
  iproute2 ethtool iputils-ping socat netcat-openbsd iperf3 curl tshark procps util-linux
  pkg-config libdpdk-dev dpdk libxdp-dev libbpf-dev xdp-tools valgrind hyperfine python3-matplotlib"
if [ "$(id -u)" -ne 0 ]; then
  echo "tools/deps.sh: run as root (it installs packages with apt-get)" >&2
  exit 1
fi
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
  echo "deps: everything is installed"
  exit 0
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# clang's libFuzzer runtime is packaged per version; take what this release has
apt-get install -y -q --no-install-recommends $missing || {
  # fall back without the versioned runtime, then add the one that exists
  apt-get install -y -q --no-install-recommends $(echo "$missing" | tr ' ' '\n' | grep -v '^libclang-rt' )
  v=$(clang --version | sed -nE 's/.*clang version ([0-9]+).*/\1/p' | head -n1)
  apt-get install -y -q --no-install-recommends "libclang-rt-$v-dev" || true
}
