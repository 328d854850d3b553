#!/usr/bin/env bash
# Clusters (issue 16): 64-byte frames from dps-pktgen over a memif pair into a port that a
# cluster owns, in Mpps, against testpmd on the same path, alternating, ROUNDS times each;
# medians. Modes: balance to 1 and to 2 consumers, fan-out to 2 groups of one (against
# testpmd rxonly), and bounce from port0 to port1 (against testpmd io, port0 to port1). The
# generator rotates --flows addresses so that the hash spreads. memif has back-pressure: the
# generator sends as fast as the receiver takes, so its tx rate is the receiver's rate; the
# consumers' drops (their rings full) are printed beside it; for bounce the rate is what the
# generator got back on port1, and the drops what it sent and did not get back.
# Figures never fail anything.
#
#   dps-pktgen --memif--> [port0 (cluster)  dpstackd worker] --rings--> dps-cluster-count xN
#   (lcore 0)   <--memif-- [port1 (bounce)]  (lcore 1)                   (anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
FLOWS=${FLOWS:-64}
. scripts/topo.sh

work=$(mktemp -d "${TMPDIR:-/tmp}/dps-cluster.XXXXXX")
FWD_PID=
CONSUMERS=()
cleanup() {
	for p in "${CONSUMERS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
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
export DPSTACK_CLUSTER_SOCK=$work/cluster.sock

GEN_PID=
generate() { # prints tx and rx Mpps (tx: the receiver's rate, memif back-pressure)
	rm -f "$work/gen.out"
	"$BUILD/bench/dps-pktgen" -l 0 --no-pci $mem_args --vdev="$client0" --vdev="$client1" \
		-- --dst-mac $DUT_MAC --src-ip 10.10.0.2 --dst-ip 10.20.0.2 --flows "$FLOWS" \
		--seconds "$SECONDS_PER_RUN" --warmup 1 >"$work/gen.out" 2>"$work/gen.err" &
	GEN_PID=$!
	local i
	for i in $(seq 1 $((SECONDS_PER_RUN * 10 + 200))); do
		grep -q tx_mpps "$work/gen.out" 2>/dev/null && break
		kill -0 "$GEN_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed -n 's/.*tx_mpps=\([0-9.]*\) rx_mpps=\([0-9.]*\).*/\1 \2/p' "$work/gen.out"
}

gen_stop() {
	[ -n "$GEN_PID" ] || return 0
	kill -TERM "$GEN_PID" 2>/dev/null || true
	wait "$GEN_PID" 2>/dev/null || true
	GEN_PID=
}

run_testpmd() { # rxonly|io: prints tx and rx Mpps
	rm -f "$work"/m*.sock
	dpdk-testpmd -l 0,1 --no-pci $mem_args --vdev="$server0" --vdev="$server1" -- \
		--forward-mode="$1" --nb-cores=1 --rxq=1 --txq=1 --total-num-mbufs=16384 \
		--stats-period=60 >"$work/testpmd.log" 2>&1 &
	FWD_PID=$!
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

run_cluster() { # consumers mode (or "0 bounce"): prints "Mpps drop%"
	local consumers=$1 mode=$2 n i line
	line="hash 5tuple consumers $consumers mode $mode ring 4096"
	[ "$mode" = bounce ] && line="bounce port1"
	rm -f "$work"/m*.sock
	cat >"$work/dut.conf" <<CONF
eal -l 0-1 $mem_args
workers 1
idle-sleep-us 0
port add port0 $server0
port add port1 $server1
cluster add bench ports port0 $line
CONF
	daemon_start "$work/dut.conf" "$work/ctl.sock" "$work/dpstackd.log"
	n=$consumers
	CONSUMERS=()
	for i in $(seq 0 $((n - 1))); do
		"$BUILD/examples/cluster/dps-cluster-count" "bench@$i" >"$work/c$i.out" 2>&1 &
		CONSUMERS+=($!)
	done
	for i in $(seq 1 100); do
		[ -S "$work/m0.sock" ] && [ -S "$work/m1.sock" ] && break
		sleep 0.1
	done
	sleep 0.5
	local mpps
	mpps=$(generate)
	[ -n "$mpps" ] || mpps="0 0"
	DPSTACK_CTL=$work/ctl.sock "$BUILD/tools/dpstackctl/dpstackctl" -j cluster show \
		>"$work/show.json"
	for p in "${CONSUMERS[@]}"; do kill -TERM "$p" 2>/dev/null || true; wait "$p" || true; done
	CONSUMERS=()
	daemon_stop
	gen_stop
	python3 - "$work/show.json" $mpps <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["clusters"][0]
tx, rx = float(sys.argv[2]), float(sys.argv[3])
if c.get("bounce"):
    print("%.3f %.3f" % (rx, 100.0 * max(0.0, tx - rx) / max(tx, 1e-9)))
else:
    got = sum(k["delivered"] for k in c["consumers"])
    lost = sum(k["dropped"] + k["absent"] for k in c["consumers"])
    print("%.3f %.3f" % (tx, 100.0 * lost / max(1, got + lost)))
PY
}

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

declare -A mpps drops
modes=("testpmd rxonly" "1 balance" "2 balance" "2 fanout" "testpmd io" "0 bounce")
for r in $(seq 1 "$ROUNDS"); do
	for m in "${modes[@]}"; do
		echo "round $r/$ROUNDS: $m" >&2
		if [ "$m" = "testpmd rxonly" ]; then
			read -r v _ < <(run_testpmd rxonly)
			mpps[$m]+="${v:-0} "
		elif [ "$m" = "testpmd io" ]; then
			read -r _ v < <(run_testpmd io)
			mpps[$m]+="${v:-0} "
		else
			read -r v d < <(run_cluster $m)
			mpps[$m]+="$v "
			drops[$m]+="$d "
		fi
	done
done
ratio() { awk -v s="$1" -v c="$2" 'BEGIN { printf "%.2f", (c > 0) ? s / c : 0 }'; }
printf '\nClusters, 64-byte frames over memif, %s flows, 1 worker, median of %s runs of %ss' \
	"$FLOWS" "$ROUNDS" "$SECONDS_PER_RUN"
printf ', load %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-32s %8s %8s   %s\n' "" "Mpps" "ratio" "runs (drop %)"
for base in "testpmd rxonly:1 balance,2 balance,2 fanout" "testpmd io:0 bounce"; do
	ref=${base%%:*}
	c=$(printf '%s\n' ${mpps[$ref]} | median)
	printf '  %-32s %8s %8s   %s\n' "$ref" "$c" "1.00" "${mpps[$ref]}"
	IFS=, read -r -a ours <<<"${base#*:}"
	for m in "${ours[@]}"; do
		s=$(printf '%s\n' ${mpps[$m]} | median)
		name="cluster, $m"
		[ "$m" = "0 bounce" ] && name="cluster bounce port0 -> port1"
		printf '  %-32s %8s %8s   %s (%s)\n' "$name" "$s" "$(ratio "$s" "$c")" \
			"${mpps[$m]}" "${drops[$m]}"
	done
done
