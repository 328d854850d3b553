# Shell helpers for the demo and the benchmarks: kernel peers in network namespaces, each
# joined to the root namespace by a veth whose root end becomes a dpstack port. Source it;
# call topo_cleanup from an EXIT trap. Nothing here touches interfaces it did not create.

TOPO_NAMESPACES=()
TOPO_VETHS=()

# topo_peer NS VETH ADDR/LEN: namespace NS holds VETH"p" with ADDR; VETH stays in the root
# namespace, up, for DPDK to take.
topo_peer() {
	local ns=$1 veth=$2 addr=$3
	ip netns add "$ns"
	TOPO_NAMESPACES+=("$ns")
	ip link add "$veth" type veth peer name "${veth}p"
	TOPO_VETHS+=("$veth")
	ip link set "${veth}p" netns "$ns"
	ip -n "$ns" link set lo up
	ip -n "$ns" addr add "$addr" dev "${veth}p"
	ip -n "$ns" link set "${veth}p" up
	# The kernel would leave checksums for a NIC to fill in (DESIGN.md): compute them.
	ip netns exec "$ns" ethtool -K "${veth}p" tx off >/dev/null
	ip link set "$veth" up
	ethtool -K "$veth" tx off >/dev/null
}

topo_cleanup() {
	local v ns
	for v in "${TOPO_VETHS[@]}"; do
		ip link del "$v" 2>/dev/null || true
	done
	for ns in "${TOPO_NAMESPACES[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
	TOPO_VETHS=()
	TOPO_NAMESPACES=()
}

# daemon_start CONFIG CTL_SOCKET LOG: starts dpstackd, waits until it answers; sets DAEMON_PID.
# Applications find it at DPSTACK_SOCK (default: app.sock beside the control socket).
daemon_start() {
	local config=$1 sock=$2 logf=$3 i
	DPSTACK_SOCK=${DPSTACK_SOCK:-${sock%/*}/app.sock}
	export DPSTACK_SOCK
	DPSTACK_CTL=$sock "$BUILD/dpstackd" -c "$config" >"$logf" 2>&1 &
	DAEMON_PID=$!
	for i in $(seq 1 100); do
		if DPSTACK_CTL=$sock timeout 5 "$BUILD/tools/dpstackctl/dpstackctl" link show \
			>/dev/null 2>&1; then
			return 0
		fi
		if ! kill -0 "$DAEMON_PID" 2>/dev/null; then
			echo "dpstackd exited during start-up:" >&2
			cat "$logf" >&2
			return 1
		fi
		sleep 0.1
	done
	echo "dpstackd did not answer within 10 s" >&2
	return 1
}

# daemon_stop: SIGTERM, then wait (bounded) for a clean exit. Returns dpstackd's status.
daemon_stop() {
	[ -n "${DAEMON_PID:-}" ] || return 0
	kill -TERM "$DAEMON_PID" 2>/dev/null || true
	local i rc=0
	for i in $(seq 1 100); do
		kill -0 "$DAEMON_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -KILL "$DAEMON_PID" 2>/dev/null
		rc=1
	fi
	wait "$DAEMON_PID" 2>/dev/null || rc=$?
	DAEMON_PID=
	return $rc
}
