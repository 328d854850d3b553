#!/usr/bin/env bash
# The demo: dpstackd with two ports, each on a veth whose other end is the Linux kernel in a
# network namespace. Kernel A pings the stack and through it (the stack routes) kernel B; the
# stack pings back; large pings cross fragmentation and reassembly both ways; kernel A's curl
# and nc talk TCP and UDP to the stack's built-in services.
#
# An application on libdpstack (examples/dps-echo) then serves kernel A too.
#
#   kernel A 10.0.0.1 --veth-- [port0 10.0.0.2  dpstackd  10.0.1.2 port1] --veth-- kernel B 10.0.1.1
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
. scripts/topo.sh

if [ "$(id -u)" -ne 0 ]; then
	echo "demo.sh: run as root (it creates network namespaces)" >&2
	exit 1
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/dps-demo.XXXXXX")
export DPSTACK_CTL=$work/ctl.sock
ctl() { "$BUILD/tools/dpstackctl/dpstackctl" "$@"; }
finish() {
	local rc=$?
	daemon_stop || true
	topo_cleanup
	rm -rf "$work"
	exit $rc
}
trap finish EXIT INT TERM

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Topology: kernel A and kernel B in namespaces, dpstackd between them"
topo_peer dpsdemo-a dpsdemo0 10.0.0.1/24
topo_peer dpsdemo-b dpsdemo1 10.0.1.1/24
ip -n dpsdemo-a route add 10.0.1.0/24 via 10.0.0.2
ip -n dpsdemo-b route add 10.0.0.0/24 via 10.0.1.2
cat >"$work/dpstack.conf" <<CONF
# net_af_xdp, not net_af_packet: see the README (kernel defragmentation in the af_packet PMD)
workers 1
port add port0 net_af_xdp0,iface=dpsdemo0
port add port1 net_af_xdp1,iface=dpsdemo1
ip addr add 10.0.0.2/24 dev port0
ip addr add 10.0.1.2/24 dev port1
CONF
cat "$work/dpstack.conf"
daemon_start "$work/dpstack.conf" "$DPSTACK_CTL" "$work/dpstackd.log"
ctl link show

step "Kernel A pings dpstack (10.0.0.2)"
ip netns exec dpsdemo-a ping -c 5 -i 0.2 10.0.0.2

step "Kernel A sends 8000-byte pings: dpstack reassembles the request and fragments the reply"
ip netns exec dpsdemo-a ping -c 3 -i 0.2 -s 8000 10.0.0.2

step "dpstack pings kernel A (dpstackctl ping), 8000 bytes"
ctl ping 10.0.0.1 count 3 size 8000

step "Kernel A pings kernel B through dpstack (forwarding)"
ip netns exec dpsdemo-a ping -c 5 -i 0.2 10.0.1.1

step "traceroute from kernel A to kernel B: dpstack answers TTL expiry"
ip netns exec dpsdemo-a traceroute -n -q 1 -w 1 10.0.1.1

step "TCP and UDP: built-in services on dpstack, kernel clients (curl, nc)"
ctl service add http tcp 80
ctl service add echo tcp 7
ctl service add echo udp 7
ip netns exec dpsdemo-a curl -sS -m 10 -D - http://10.0.0.2/
echo "hello over TCP" | ip netns exec dpsdemo-a nc -N -w 5 10.0.0.2 7
echo "hello over UDP" | ip netns exec dpsdemo-a nc -u -w 1 -q 1 10.0.0.2 7 || true
step "10 MB through the echo service: the SHA-256 sent and received match"
head -c 10000000 /dev/urandom >"$work/10mb"
sha_sent=$(sha256sum <"$work/10mb" | cut -d' ' -f1)
sha_back=$(ip netns exec dpsdemo-a nc -N -w 10 10.0.0.2 7 <"$work/10mb" | sha256sum | cut -d' ' -f1)
echo "sent     $sha_sent"
echo "received $sha_back"
[ "$sha_sent" = "$sha_back" ]
ctl service show

step "An application on libdpstack: dps-echo (epoll) serves kernel A's nc, 10 MB checked"
"$BUILD/examples/dps-echo" -p 7007 -m epoll-et >"$work/dps-echo.log" 2>&1 &
echo_pid=$!
for _ in $(seq 50); do grep -q 'dps-echo:' "$work/dps-echo.log" && break; sleep 0.1; done
cat "$work/dps-echo.log"
sha_app=$(ip netns exec dpsdemo-a nc -N -w 10 10.0.0.2 7007 <"$work/10mb" | sha256sum | cut -d' ' -f1)
echo "sent     $sha_sent"
echo "received $sha_app"
[ "$sha_sent" = "$sha_app" ]
ctl sock show
kill "$echo_pid"
wait "$echo_pid" 2>/dev/null || true

step "What dpstack learnt and counted"
ctl ip addr show
ctl ip route show
ctl neigh show
ctl stats | sed -n '/^Events/,$p' | grep -vE '^\s+\S+\s+0\s' || true

step "Stopping dpstackd (SIGTERM)"
daemon_stop
echo "dpstackd exited cleanly"
echo
echo "demo OK"
