#!/usr/bin/env bash
# TCP against the built-in services: single-flow throughput (a kernel client streams into
# `discard`) and connections per second (connect, 1-byte `echo`, close), each run on dpstack
# and on a kernel server in the same invocation, alternating, with medians and the ratio.
#
#   kernel client (ns dpsb-c) 10.0.0.1 --veth/af_xdp-- dpstackd 10.0.0.2 (1 worker)
#                             10.0.9.1 --veth-------- kernel server (ns dpsb-k) 10.0.9.2
# Both paths cross one veth pair and the client's kernel stack; only the server side differs:
# dpstack's built-in services, or bench/kserver.c (epoll, one thread) on kernel sockets.
# Usage: bench/tcp.sh [RUNS] [SECONDS]   (defaults 5 and 5)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
RUNS=${1:-5}
SECS=${2:-5}
. scripts/topo.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/dps-bench.XXXXXX")
export DPSTACK_CTL=$work/ctl.sock
server_pid=
finish() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
	daemon_stop || true
	topo_cleanup
	rm -rf "$work"
}
trap finish EXIT INT TERM

topo_peer dpsb-c dpsb0 10.0.0.1/24
# The CPS client closes first and keeps TIME-WAIT: without reuse and a wide port range it
# runs out of ports within a run (and every later figure measures that).
ip netns exec dpsb-c sysctl -qw net.ipv4.ip_local_port_range="1024 65000" \
	net.ipv4.tcp_tw_reuse=1
ip netns add dpsb-k
TOPO_NAMESPACES+=(dpsb-k)
ip link add dpsbk0 type veth peer name dpsbk0p
TOPO_VETHS+=(dpsbk0)
ip link set dpsbk0 netns dpsb-c
ip link set dpsbk0p netns dpsb-k
ip -n dpsb-c addr add 10.0.9.1/24 dev dpsbk0
ip -n dpsb-k addr add 10.0.9.2/24 dev dpsbk0p
ip -n dpsb-c link set dpsbk0 up
ip -n dpsb-k link set dpsbk0p up
ip -n dpsb-k link set lo up

cat >"$work/dpstack.conf" <<CONF
workers 1
idle-sleep-us ${IDLE_SLEEP_US:-100}
port add port0 net_af_xdp0,iface=dpsb0
ip addr add 10.0.0.2/24 dev port0
service add discard tcp 9
service add echo tcp 7
CONF
daemon_start "$work/dpstack.conf" "$DPSTACK_CTL" "$work/dpstackd.log"
ip netns exec dpsb-k "$BUILD/bench/dps-kserver" 7 9 >"$work/kserver.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 50); do grep -q ready "$work/kserver.log" 2>/dev/null && break; sleep 0.1; done

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
load() { ip netns exec dpsb-c python3 bench/tcp_load.py "$@"; }

run() {
	local what=$1 dport=$2 kport=$3 unit=$4 i d k
	: >"$work/d" ; : >"$work/k"
	for i in $(seq 1 "$RUNS"); do
		load "$what" 10.0.0.2 "$dport" "$SECS" >>"$work/d"
		load "$what" 10.0.9.2 "$kport" "$SECS" >>"$work/k"
	done
	d=$(median <"$work/d")
	k=$(median <"$work/k")
	printf '%-28s dpstack %10s  kernel %10s  %-6s ratio %s\n' "tcp $what (median of $RUNS)" \
		"$d" "$k" "$unit" "$(awk -v d="$d" -v k="$k" 'BEGIN {printf "%.2f", d / k}')"
}
run stream 9 9 MB/s
run cps 7 7 conn/s
"$BUILD/tools/dpstackctl/dpstackctl" service show
[ -n "${BENCH_STATS:-}" ] && "$BUILD/tools/dpstackctl/dpstackctl" stats | grep -E "tcp\.|drop|tx\." || true
