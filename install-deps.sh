#!/usr/bin/env bash
# Installs everything dpstack builds, tests and benchmarks with on a fresh Debian 12, as root.
# Idempotent: re-running it only installs what is missing.
set -euo pipefail

if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get)" >&2
  exit 1
fi

packages=(
  # build
  build-essential gcc meson ninja-build pkg-config
  # the arm64 cross build and its unit tests under emulation (tests/arm64.sh); the arm64
  # packages it builds against are unpacked by scripts/arm64-sysroot.sh (below)
  gcc-aarch64-linux-gnu qemu-user debootstrap
  # DPDK 22.11 LTS: libraries, PMDs, testpmd/dumpcap
  libdpdk-dev dpdk dpdk-dev
  # capture filters: libpcap compiles tcpdump expressions (src/capture)
  libpcap-dev
  # unit tests and fuzzing
  libcmocka-dev clang libclang-rt-14-dev llvm
  # integration tests: the kernel peer and the tools that drive it
  python3 python3-pytest python3-scapy
  iproute2 iputils-ping iputils-arping iputils-tracepath traceroute ethtool nftables
  tshark tcpdump procps psmisc
  # a routing daemon on the kernel side of the exception path (tests/integ/test_routing.py)
  bird2
  # the DHCP server the DHCP client is tested against (tests/integ/test_dhcp.py)
  dnsmasq-base
  # a second DHCP server, whose leases can be seconds long (the expiry test)
  busybox
  # the router advertisement daemon SLAAC is tested against (tests/integ/test_slaac.py)
  radvd
  # a real terminal for the monitor's screen (tests/integ/test_monitor.py)
  tmux
  # clients of the built-in services (tests/integ/test_services.py, test_iperf3.py)
  curl netcat-openbsd iperf3
  # examples/: dps-https links OpenSSL; the openssl tool makes test certificates
  libssl-dev openssl
  # unmodified programs on the preload shim (tests/integ/test_preload.py, bench/preload.sh)
  nginx-light redis-server redis-tools sockperf wrk
  # benchmarks: the sources of DPDK's own examples; bench/l3fwd.sh builds l3fwd from them
  # when it runs (files only, nothing is built at install)
  dpdk-doc
)

export DEBIAN_FRONTEND=noninteractive
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  # tshark asks whether non-root users may capture; answer once, non-interactively.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  # iperf3 asks whether to run a server at boot: no, it would take port 5201 on the host.
  echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
  apt-get update -q
  # Packages with services (nginx, redis, bird) must not start them: the tests run their own.
  policy=/usr/sbin/policy-rc.d
  had_policy=false
  [ -e "$policy" ] && had_policy=true
  $had_policy || printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod +x "$policy"
  apt-get install -y -q --no-install-recommends "${missing[@]}" || rc=$?
  $had_policy || rm -f "$policy"
  [ "${rc:-0}" -eq 0 ] || exit "$rc"
fi
"$(dirname "$0")"/scripts/arm64-sysroot.sh
echo "install-deps.sh: all dependencies present"
