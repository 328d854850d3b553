#!/usr/bin/env bash
# Applications on the native socket library: bench/app_load.c, built once on libdpstack and
# once on kernel sockets, runs as a server and a client on the same stack, alternating between
# the stacks in one invocation, with medians and the dpstack/kernel ratio:
#   request/response  64-byte ping-pong on 1 and on 16 connections: transactions/s, median µs
#   throughput        the server streams to the client on 1 and on 4 connections: MB/s
#   idle              dpstackd's and the applications' CPU while one application blocks in
#                     accept and another holds an idle established connection
#
#   dpstack: client app --libdpstack-- dpstackd (1 worker) 10.88.0.2 --libdpstack-- server app
#            (the stack's own loopback; its one port, net_af_xdp on veth bnappv0 into
#            namespace bnapp, only gives it the address and carries no benchmark traffic)
#   kernel:  client --kernel-- 10.88.0.1 in namespace bnapp (lo) --kernel-- server
# Usage: bench/app.sh [RUNS] [SECONDS]   (defaults 3 and 4; the idle window is IDLE_SECS=10)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
RUNS=${1:-3}
SECS=${2:-4}
IDLE_SECS=${IDLE_SECS:-10}
. scripts/topo.sh

D=$BUILD/bench/dps-app-load-dpstack
K=$BUILD/bench/dps-app-load-kernel
CTL=$BUILD/tools/dpstackctl/dpstackctl
work=$(mktemp -d "${TMPDIR:-/tmp}/dps-bench-app.XXXXXX")
export DPSTACK_CTL=$work/ctl.sock DPSTACK_SOCK=$work/app.sock
pids=()
finish() {
	local p
	# Applications first: the daemon then sees them leave rather than going away under them.
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	daemon_stop || true
	topo_cleanup
	rm -rf "$work"
}
trap finish EXIT
trap 'exit 130' INT TERM

topo_peer bnapp bnappv0 10.88.0.1/24
cat >"$work/dpstack.conf" <<CONF
workers 1
port add port0 net_af_xdp0,iface=bnappv0
ip addr add 10.88.0.2/24 dev port0
CONF
daemon_start "$work/dpstack.conf" "$DPSTACK_CTL" "$work/dpstackd.log"

# start LOG WORD CMD...: CMD in the background until it prints WORD; its PID in APP_PID
# (ip netns exec execs the program, so that is the program's own PID).
start() {
	local log=$work/$1 word=$2 i
	shift 2
	"$@" >"$log" 2>&1 &
	APP_PID=$!
	pids+=("$APP_PID")
	for i in $(seq 1 100); do
		grep -qx "$word" "$log" && return 0
		kill -0 "$APP_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "app.sh: '$*' did not print $word:" >&2
	cat "$log" >&2
	return 1
}

start dserve.log ready "$D" serve 5001 5002
start kserve.log ready ip netns exec bnapp "$K" serve 5001 5002

median() { sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }

# measure NAME MODE ARGS...: RUNS alternating runs on both stacks, one output line per run
# in NAME.d and NAME.k.
measure() {
	local name=$1 mode=$2 i
	shift 2
	: >"$work/$name.d"
	: >"$work/$name.k"
	for i in $(seq 1 "$RUNS"); do
		"$D" "$mode" 10.88.0.2 "$@" >>"$work/$name.d"
		ip netns exec bnapp "$K" "$mode" 10.88.0.1 "$@" >>"$work/$name.k"
	done
}

# row LABEL NAME COLUMN UNIT: the medians of one output column and their ratio.
row() {
	local d k
	d=$(awk -v c="$3" '{print $c}' "$work/$2.d" | median)
	k=$(awk -v c="$3" '{print $c}' "$work/$2.k" | median)
	printf '%-26s %12s %12s  %-9s %6s\n' "$1" "$d" "$k" "$4" \
		"$(awk -v d="$d" -v k="$k" 'BEGIN {printf "%.2f", d / k}')"
}

echo "app.sh: the same program (bench/app_load.c) as client and server on one stack;"
echo "  dpstack: two libdpstack apps over dpstackd's own address 10.88.0.2 (stack loopback, 1 worker)"
echo "  kernel:  two kernel-socket apps over 10.88.0.1 in namespace bnapp (kernel loopback)"
echo "  medians of $RUNS alternating runs of $SECS s; ratio = dpstack / kernel (latency: lower is better)"
printf '%-26s %12s %12s  %-9s %6s\n' workload dpstack kernel unit ratio
measure rr1 rr 5001 1 "$SECS" 64
row "rr 64 B, 1 conn" rr1 1 trans/s
row "rr 64 B, 1 conn, p50" rr1 2 us
measure rr16 rr 5001 16 "$SECS" 64
row "rr 64 B, 16 conns" rr16 1 trans/s
row "rr 64 B, 16 conns, p50" rr16 2 us
measure st1 stream 5002 1 "$SECS"
row "stream, 1 conn" st1 1 MB/s
measure st4 stream 5002 4 "$SECS"
row "stream, 4 conns" st4 1 MB/s

# Idle: the same pair of idle applications on each stack, measured over the same window.
start dacc.log ready "$D" accept 5003
dacc=$APP_PID
start dhold.log connected "$D" hold 10.88.0.2 5003
dhold=$APP_PID
start kacc.log ready ip netns exec bnapp "$K" accept 5003
kacc=$APP_PID
start khold.log connected ip netns exec bnapp "$K" hold 10.88.0.1 5003
khold=$APP_PID
# The worker lengthens its naps after 100 ms without work: measure the steady idle state.
sleep 1
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'; }
sleeps() { "$CTL" stats | awk '/^  worker 0 /{print $(NF - 2)}'; }
watched=("$DAEMON_PID" "$dacc" "$dhold" "$kacc" "$khold")
declare -A t0 t1
s0=$(sleeps)
for p in "${watched[@]}"; do t0[$p]=$(ticks "$p"); done
w0=$(date +%s.%N)
sleep "$IDLE_SECS"
w1=$(date +%s.%N)
for p in "${watched[@]}"; do t1[$p]=$(ticks "$p"); done
s1=$(sleeps)
hz=$(getconf CLK_TCK)
cpu() {
	awk -v a="${t0[$1]}" -v b="${t1[$1]}" -v hz="$hz" -v s="$w0" -v e="$w1" \
		'BEGIN {printf "%.2f", (b - a) / hz / (e - s) * 100}'
}
echo "idle: $IDLE_SECS s, one app blocked in accept, one holding an idle established connection;"
echo "  CPU in % of one core (DESIGN goal: dpstackd <= 2 with no traffic)"
printf '  %-10s %8s %11s %12s\n' stack daemon "accept app" "holding app"
printf '  %-10s %8s %11s %12s\n' dpstack "$(cpu "$DAEMON_PID")" "$(cpu "$dacc")" "$(cpu "$dhold")"
printf '  %-10s %8s %11s %12s\n' kernel - "$(cpu "$kacc")" "$(cpu "$khold")"
echo "  dpstackd worker 0: $((s1 - s0)) idle sleeps in the window" \
	"($(awk -v n=$((s1 - s0)) -v s="$w0" -v e="$w1" 'BEGIN {printf "%.0f", n / (e - s)}')/s)"
"$CTL" stats | grep '^  worker '
[ -n "${BENCH_STATS:-}" ] && "$CTL" stats | grep -E "tcp\.|drop|loopback|app\." || true
