#!/usr/bin/env bash
# L3 forwarding of 64-byte frames between two ports joined by net_memif pairs, in Mpps:
# dpstackd (IPv4 routing: validation, route lookup, TTL, neighbour, new Ethernet header) against
# testpmd's io forwarding on the same vdevs (no processing: the ceiling of the path), in the
# same run, alternating, ROUNDS times each. Prints both medians and the ratio, and writes
# JSON to $OUT (default build/bench-l3fwd.json).
#
#   dps-pktgen --memif--> [port0  forwarder  port1] --memif--> dps-pktgen
#   (lcore 0)             (worker on lcore 1)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-7}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
OUT=${OUT:-$BUILD/bench-l3fwd.json}
CEILING=${CEILING:-1}        # 0: dpstackd alone (bench/acl.sh compares dpstackd with itself)
EXTRA_CONF=${EXTRA_CONF:-}   # a file of config lines added to the forwarder's
. scripts/topo.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/dps-l3fwd.XXXXXX")
FWD_PID=
cleanup() {
	[ -n "$FWD_PID" ] && kill -TERM "$FWD_PID" 2>/dev/null && wait "$FWD_PID" 2>/dev/null
	daemon_stop || true
	gen_stop
	[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT INT TERM

DUT_MAC=02:00:00:00:00:10
mem_args="--no-huge -m 512 --no-shconf --log-level=error"
server0="net_memif0,role=server,socket=$work/m0.sock,id=0,socket-abstract=no,mac=$DUT_MAC"
server1="net_memif1,role=server,socket=$work/m1.sock,id=0,socket-abstract=no,mac=02:00:00:00:00:11"
client0="net_memif0,role=client,socket=$work/m0.sock,id=0,socket-abstract=no"
client1="net_memif1,role=client,socket=$work/m1.sock,id=0,socket-abstract=no"

wait_for_sockets() {
	local i
	for i in $(seq 1 100); do
		[ -S "$work/m0.sock" ] && [ -S "$work/m1.sock" ] && return 0
		sleep 0.1
	done
	echo "l3fwd: the forwarder did not create its memif sockets" >&2
	return 1
}

GEN_PID=
# Starts the generator and waits for its result line; it then idles until gen_stop, after the
# forwarder has stopped (DPDK 22.11's memif receiver crashes if its peer leaves first).
generate() { # prints rx Mpps
	rm -f "$work/gen.out"
	"$BUILD/bench/dps-pktgen" -l 0 --no-pci $mem_args --vdev="$client0" --vdev="$client1" \
		-- --dst-mac $DUT_MAC --src-ip 10.10.0.2 --dst-ip 10.20.0.2 \
		--seconds "$SECONDS_PER_RUN" --warmup 1 >"$work/gen.out" 2>"$work/gen.err" &
	GEN_PID=$!
	local i
	for i in $(seq 1 $((SECONDS_PER_RUN * 10 + 200))); do
		grep -q rx_mpps "$work/gen.out" 2>/dev/null && break
		kill -0 "$GEN_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$work/gen.out" >&2
	grep -v -E "^(EAL|TELEMETRY|rte_pmd_memif_probe)" "$work/gen.err" >&2 || true
	sed -n 's/.*rx_mpps=\([0-9.]*\).*/\1/p' "$work/gen.out"
}

gen_stop() {
	[ -n "$GEN_PID" ] || return 0
	kill -TERM "$GEN_PID" 2>/dev/null || true
	wait "$GEN_PID" 2>/dev/null || true
	GEN_PID=
}

run_testpmd() {
	rm -f "$work"/m*.sock
	dpdk-testpmd -l 0,1 --no-pci $mem_args --vdev="$server0" --vdev="$server1" -- \
		--forward-mode=io --nb-cores=1 --rxq=1 --txq=1 --total-num-mbufs=16384 --stats-period=60 \
		>"$work/testpmd.log" 2>&1 &
	FWD_PID=$!
	# A memif client that connects before the server's port has started is turned away and
	# does not retry: wait until testpmd has started its ports and waits for links.
	local i
	for i in $(seq 1 100); do
		grep -q "Checking link statuses" "$work/testpmd.log" && break
		sleep 0.1
	done
	generate
	kill -TERM "$FWD_PID"
	wait "$FWD_PID" 2>/dev/null || true
	FWD_PID=
	gen_stop
}

run_dpstack() {
	rm -f "$work"/m*.sock
	cat >"$work/dut.conf" <<CONF
eal -l 0-1 $mem_args
workers 1
idle-sleep-us 0
port add port0 $server0
port add port1 $server1
ip addr add 10.10.0.1/24 dev port0
ip addr add 10.20.0.1/24 dev port1
neigh add 10.20.0.2 lladdr 02:00:00:00:00:22 dev port1
$([ -z "$EXTRA_CONF" ] || cat "$EXTRA_CONF")
CONF
	daemon_start "$work/dut.conf" "$work/ctl.sock" "$work/dpstackd.log"
	wait_for_sockets
	generate
	DPSTACK_CTL=$work/ctl.sock "$BUILD/tools/dpstackctl/dpstackctl" -j stats >"$work/stats.json"
	daemon_stop
	gen_stop
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
best() { sort -n | tail -1; }
ratio() { awk -v s="$1" -v c="$2" 'BEGIN { printf "%.2f", (c > 0) ? s / c : 0 }'; }

ceiling=()
stack=()
for r in $(seq 1 "$ROUNDS"); do
	if [ "$CEILING" = 1 ]; then
		echo "round $r/$ROUNDS: testpmd io" >&2
		ceiling+=("$(run_testpmd)")
	fi
	echo "round $r/$ROUNDS: dpstackd l3" >&2
	stack+=("$(run_dpstack)")
done
c=$(printf '%s\n' "${ceiling[@]}" | median)
c=${c:-0}
s=$(printf '%s\n' "${stack[@]}" | median)
cb=$(printf '%s\n' "${ceiling[@]}" | best)
cb=${cb:-0}
sb=$(printf '%s\n' "${stack[@]}" | best)
ratio=$(ratio "$s" "$c")
ratio_best=$(ratio "$sb" "$cb")
fwd=$(python3 -c "import json;print(json.load(open('$work/stats.json'))['events']['ip.forwarded'])")

printf '\nL3 forwarding, 64-byte frames, memif pair, 1 forwarding core, median of %s runs of %ss\n' \
	"$ROUNDS" "$SECONDS_PER_RUN"
printf '  %-26s %8s %8s\n' "" "median" "best"
printf '  %-26s %8s %8s   (runs: %s)\n' "testpmd io (ceiling), Mpps" "$c" "$cb" "${ceiling[*]}"
printf '  %-26s %8s %8s   (runs: %s)\n' "dpstackd IPv4 fwd, Mpps" "$s" "$sb" "${stack[*]}"
printf '  %-26s %8s %8s\n' "ratio dpstackd/testpmd" "$ratio" "$ratio_best"
echo "  (noise on a shared machine only ever slows a run down: the best run is the closest"
echo "   to each forwarder's capacity, the median the typical figure)"
printf '  (the last dpstackd run forwarded %s packets by its own count)\n' "$fwd"
cat >"$OUT" <<JSON
{"benchmark": "l3fwd_64B_memif", "rounds": $ROUNDS, "seconds": $SECONDS_PER_RUN,
 "testpmd_io_mpps": [$(IFS=,; echo "${ceiling[*]}")], "dpstackd_mpps": [$(IFS=,; echo "${stack[*]}")],
 "testpmd_io_median_mpps": $c, "dpstackd_median_mpps": $s, "ratio_of_medians": $ratio,
 "testpmd_io_best_mpps": $cb, "dpstackd_best_mpps": $sb, "ratio_of_bests": $ratio_best}
JSON
