#!/usr/bin/env bash
# L3 forwarding between two ports joined by net_memif pairs, in Mpps, three forwarders on the
# same vdevs, the same core and the same frames, alternating, ROUNDS times each:
#   - dpstackd routing (validation, route lookup, TTL or hop limit, neighbour, new Ethernet
#     header);
#   - testpmd's io forwarding (no processing: the ceiling of the path);
#   - DPDK's own l3fwd example in LPM mode (RFC 1812 checks, TTL, rte_lpm/rte_lpm6 lookup,
#     Ethernet rewrite), built here from the dpdk-doc package's sources on first use.
# For each family of FAMILIES ("4 6") and frame size of SIZES (bytes with the FCS, RFC 2544's
# 64 128 512 1500 by default; "64" means the family's smallest UDP frame, 66 bytes with IPv6).
# Prints medians and the ratios dpstackd/testpmd and dpstackd/l3fwd, the load average and the
# time the run took, and writes JSON to $OUT (default build/bench-l3fwd.json).
#
#   dps-pktgen --memif--> [port0  forwarder  port1] --memif--> dps-pktgen
#   (lcore 0)             (lcore 1)
#
# The measure for all three is what dps-pktgen receives back on port 1; what it sent and did
# not get back is each forwarder's loss, counted the same way.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-7}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-5}
OUT=${OUT:-$BUILD/bench-l3fwd.json}
CEILING=${CEILING:-1}        # 0: dpstackd alone, no testpmd or l3fwd (bench/acl.sh does)
FAMILIES=${FAMILIES:-4 6}    # bench/acl.sh: 4 (its rules are IPv4's)
SIZES=${SIZES:-64 128 512 1500}
EXTRA_CONF=${EXTRA_CONF:-}   # a file of config lines added to dpstackd's
L3FWD_SRC=${L3FWD_SRC:-/usr/share/dpdk/examples}   # the dpdk-doc package's
L3FWD_BUILD=${L3FWD_BUILD:-$BUILD/dpdk-l3fwd}
. scripts/topo.sh

began=$(date +%s)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
work=$(mktemp -d "${TMPDIR:-/tmp}/dps-l3fwd.XXXXXX")
FWD_PID=
GEN_PID=
cleanup() {
	[ -n "$FWD_PID" ] && kill -TERM "$FWD_PID" 2>/dev/null && wait "$FWD_PID" 2>/dev/null
	daemon_stop || true
	gen_stop
	[ -n "${KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT INT TERM

fail() {
	echo "l3fwd.sh: $*" >&2
	exit 1
}

# DPDK's example, copied out of the package (with the examples' common headers it includes) and
# built with its own Makefile against the installed libdpdk; kept under $BUILD (never in the
# repository) and reused by the next run: make rebuilds nothing that is up to date.
build_dpdk_l3fwd() {
	local bin=$L3FWD_BUILD/l3fwd/build/l3fwd
	if [ ! -f "$L3FWD_BUILD/l3fwd/Makefile" ]; then
		[ -f "$L3FWD_SRC/l3fwd/Makefile" ] && [ -d "$L3FWD_SRC/common" ] ||
			fail "DPDK's l3fwd example is not in $L3FWD_SRC: apt-get install dpdk-doc" \
				"(install-deps.sh does), or run with CEILING=0 for dpstackd alone"
		mkdir -p "$L3FWD_BUILD"
		cp -rp "$L3FWD_SRC/l3fwd" "$L3FWD_SRC/common" "$L3FWD_BUILD"/
	fi
	# l3fwd 22.11 asks every port for RX checksum offload, which memif has not (configure
	# fails) and which it never reads: RFC 1812 §5.2.2's checksum check is left to hardware
	# in its lookups. The copy asks for none; nothing else changes.
	local main=$L3FWD_BUILD/l3fwd/main.c offload='offloads = RTE_ETH_RX_OFFLOAD_CHECKSUM,'
	if grep -q "$offload" "$main"; then
		sed -i "s/$offload/offloads = 0,/" "$main"
	fi
	if [ -x "$bin" ]; then
		echo "DPDK's l3fwd: reusing $bin" >&2
	else
		echo "DPDK's l3fwd: building it in $L3FWD_BUILD/l3fwd" >&2
	fi
	if ! nice make -s -j2 -C "$L3FWD_BUILD/l3fwd" >"$L3FWD_BUILD/make.log" 2>&1 ||
		[ ! -x "$bin" ]; then
		tail -20 "$L3FWD_BUILD/make.log" >&2
		fail "could not build DPDK's l3fwd in $L3FWD_BUILD/l3fwd (log: $L3FWD_BUILD/make.log)"
	fi
	L3FWD_BIN=$bin
}

DUT_MAC=02:00:00:00:00:10
NEXT_HOP_MAC=02:00:00:00:00:22
mem_args="--no-huge -m 512 --no-shconf --log-level=error"
server0="net_memif0,role=server,socket=$work/m0.sock,id=0,socket-abstract=no,mac=$DUT_MAC"
server1="net_memif1,role=server,socket=$work/m1.sock,id=0,socket-abstract=no,mac=02:00:00:00:00:11"
client0="net_memif0,role=client,socket=$work/m0.sock,id=0,socket-abstract=no"
client1="net_memif1,role=client,socket=$work/m1.sock,id=0,socket-abstract=no"

# The frames go to l3fwd's default routes' port 1 (198.18.1.0/24 and 2001:200:0:1::/64, the
# RFC 2544 and RFC 5180 benchmarking ranges); dpstackd is given the same next hop on port1.
# Sources stay in port0's subnet (bench/acl.sh permits 10.10.0.0/24).
src_ip() { if [ "$1" = 6 ]; then echo 2001:db8:10::2; else echo 10.10.0.2; fi; }
dst_ip() { if [ "$1" = 6 ]; then echo 2001:200:0:1::2; else echo 198.18.1.2; fi; }
# SIZE as the family can send it: IPv6/UDP's smallest frame is 66 bytes.
family_size() { if [ "$1" = 6 ] && [ "$2" -lt 66 ]; then echo 66; else echo "$2"; fi; }

# forwarder_ready NAME LOGFILE PATTERN: a memif client that connects before the server's port
# has started is turned away and does not retry, so wait for the forwarder's own word.
forwarder_ready() {
	local i
	for i in $(seq 1 150); do
		grep -q "$3" "$2" 2>/dev/null && return 0
		kill -0 "$FWD_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$2" >&2
	fail "$1 did not start its memif ports"
}

# Starts the generator over every size and waits for its result lines, appending them to
# $work/results as "FORWARDER FAMILY SIZE RX_MPPS TX_MPPS"; it then idles until gen_stop, after
# the forwarder has stopped (DPDK 22.11's memif receiver crashes if its peer leaves first).
generate() { # FORWARDER FAMILY
	local fwd=$1 f=$2 s sizes=
	for s in $SIZES; do
		s=$(family_size "$f" "$s")
		# "64 65" are both IPv6's 66: measured once.
		[[ ",$sizes," == *",$s,"* ]] || sizes+="${sizes:+,}$s"
	done
	local want
	want=$(echo "$sizes" | tr , '\n' | wc -l)
	rm -f "$work/gen.out"
	"$BUILD/bench/dps-pktgen" -l 0 --no-pci $mem_args --vdev="$client0" --vdev="$client1" \
		-- --dst-mac $DUT_MAC --src-ip "$(src_ip "$f")" --dst-ip "$(dst_ip "$f")" \
		--sizes "$sizes" --seconds "$SECONDS_PER_RUN" --warmup 1 \
		>"$work/gen.out" 2>"$work/gen.err" &
	GEN_PID=$!
	local i got=0
	for i in $(seq 1 $((want * (SECONDS_PER_RUN + 1) * 10 + 200))); do
		got=$(grep -c rx_mpps "$work/gen.out" 2>/dev/null || true)
		got=${got:-0}
		[ "$got" -ge "$want" ] && break
		kill -0 "$GEN_PID" 2>/dev/null || break
		sleep 0.1
	done
	grep -v -E "^(EAL|TELEMETRY|rte_pmd_memif_probe)" "$work/gen.err" >&2 || true
	[ "$got" -ge "$want" ] || fail "dps-pktgen measured $got of $want sizes through $fwd"
	sed -n 's/^size=\([0-9]*\) tx_mpps=\([0-9.]*\) rx_mpps=\([0-9.]*\)$/\1 \3 \2/p' \
		"$work/gen.out" | while read -r size rx tx; do
		echo "  $fwd IPv$f $size bytes: sent $tx Mpps, got back $rx Mpps" >&2
		# A forwarder that returns nothing (a wrong route, a wrong address) is a broken
		# setup, not a figure.
		awk -v r="$rx" 'BEGIN { exit !(r > 0) }' ||
			fail "no IPv$f frame of $size bytes came back through $fwd"
		echo "$fwd $f $size $rx $tx" >>"$work/results"
	done
}

gen_stop() {
	[ -n "$GEN_PID" ] || return 0
	kill -TERM "$GEN_PID" 2>/dev/null || true
	wait "$GEN_PID" 2>/dev/null || true
	GEN_PID=
}

# A forwarder of testpmd and l3fwd: a plain process stopped by SIGTERM.
fwd_stop() {
	kill -TERM "$FWD_PID"
	wait "$FWD_PID" 2>/dev/null || true
	FWD_PID=
	gen_stop
}

run_testpmd() { # FAMILY
	rm -f "$work"/m*.sock
	dpdk-testpmd -l 0,1 --no-pci $mem_args --vdev="$server0" --vdev="$server1" -- \
		--forward-mode=io --nb-cores=1 --rxq=1 --txq=1 --total-num-mbufs=16384 --stats-period=60 \
		>"$work/testpmd.log" 2>&1 &
	FWD_PID=$!
	forwarder_ready testpmd "$work/testpmd.log" "Checking link statuses"
	generate testpmd "$1"
	fwd_stop
}

# DPDK's l3fwd on lcore 1 alone (its main lcore forwards), both ports' queue 0 on it, LPM
# lookups of both families (the memif PMD reports no packet types: l3fwd parses them itself).
run_l3fwd() { # FAMILY
	rm -f "$work"/m*.sock
	"$L3FWD_BIN" -l 1 --no-pci $mem_args --vdev="$server0" --vdev="$server1" -- \
		-p 0x3 --config="(0,0,1),(1,0,1)" --lookup=lpm --parse-ptype -P \
		--eth-dest=1,$NEXT_HOP_MAC >"$work/l3fwd.log" 2>&1 &
	FWD_PID=$!
	forwarder_ready l3fwd "$work/l3fwd.log" "Checking link status"
	generate l3fwd "$1"
	fwd_stop
}

run_dpstackd() { # FAMILY
	rm -f "$work"/m*.sock
	cat >"$work/dut.conf" <<CONF
eal -l 0-1 $mem_args
workers 1
idle-sleep-us 0
port add port0 $server0
port add port1 $server1
ip addr add 10.10.0.1/24 dev port0
ip addr add 198.18.1.1/24 dev port1
neigh add 198.18.1.2 lladdr $NEXT_HOP_MAC dev port1
ip addr add 2001:db8:10::1/64 dev port0
ip addr add 2001:200:0:1::1/64 dev port1
neigh add 2001:200:0:1::2 lladdr $NEXT_HOP_MAC dev port1
ip -6 forwarding on
$([ -z "$EXTRA_CONF" ] || cat "$EXTRA_CONF")
CONF
	daemon_start "$work/dut.conf" "$work/ctl.sock" "$work/dpstackd.log"
	local i
	for i in $(seq 1 100); do
		[ -S "$work/m0.sock" ] && [ -S "$work/m1.sock" ] && break
		sleep 0.1
	done
	[ -S "$work/m1.sock" ] || fail "dpstackd did not create its memif sockets"
	generate dpstackd "$1"
	DPSTACK_CTL=$work/ctl.sock "$BUILD/tools/dpstackctl/dpstackctl" -j stats \
		>"$work/stats$1.json"
	daemon_stop
	gen_stop
}

forwarders="dpstackd"
if [ "$CEILING" = 1 ]; then
	build_dpdk_l3fwd
	forwarders="testpmd l3fwd dpstackd"
fi
: >"$work/results"
for r in $(seq 1 "$ROUNDS"); do
	for f in $FAMILIES; do
		for fwd in $forwarders; do
			echo "round $r/$ROUNDS: $fwd, IPv$f, frames of $SIZES bytes" >&2
			"run_$fwd" "$f"
		done
	done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(($(date +%s) - began))
RESULTS=$work/results WORK=$work OUT=$OUT ROUNDS=$ROUNDS SECONDS_PER_RUN=$SECONDS_PER_RUN \
	SIZES=$SIZES LOAD="$load_before / $load_after" ELAPSED=$elapsed \
	python3 bench/l3fwd_report.py
