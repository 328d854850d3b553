#!/usr/bin/env bash
# What the ACL (src/acl) costs per packet with 10 and 10,000 rules, two ways:
#  1. dps-acl-bench (bench/acl_classify.c): the forward hook on real frames in mbufs, each
#     datagram classified alone and with the RX burst classified in one call first, as the
#     worker does; ns per packet, medians of 7 runs.
#  2. dpstackd routing 64-byte UDP frames between two memif ports (bench/l3fwd.sh with
#     CEILING=0: no testpmd, no DPDK l3fwd) with no rule, 10 and 10,000 rules, ROUNDS rounds alternating between them;
#     Mpps, medians, and the ratio to no ACL. Every rule but one never matches the flow
#     (other sources and ports, as in a real list); the last permits its source, so every
#     packet walks the whole set and counts a hit.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
ROUNDS=${ROUNDS:-3}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/dps-acl.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "== the forward hook alone (dps-acl-bench, one core, no ports)"
"$BUILD/bench/dps-acl-bench" -l 0 --no-huge -m 512 --no-pci --no-shconf --no-telemetry \
	--log-level=error -- --runs 7

rules_file() { # N FILE: N acl lines (none for 0)
	awk -v n="$1" 'BEGIN {
		for (i = 0; i < n - 1; i++) {
			src = sprintf("172.16.%d.%d/32", int(i / 250), i % 250)
			if (i % 10 == 9) src = sprintf("172.16.%d.0/24", int(i / 250))
			port = 1024 + i
			if (i % 7 == 6) port = port "-" port + 50
			printf "acl add deny proto %s src %s dport %s\n", (i % 3 ? "udp" : "tcp"), src, port
		}
		if (n > 0) print "acl add permit src 10.10.0.0/24 hook forward"
	}' >"$2"
}

sizes=(0 10 10000)
declare -A runs
for n in "${sizes[@]}"; do
	rules_file "$n" "$work/rules-$n.conf"
	runs[$n]=""
done
for r in $(seq 1 "$ROUNDS"); do
	for n in "${sizes[@]}"; do
		echo "round $r/$ROUNDS: dpstackd forwarding with $n ACL rules" >&2
		CEILING=0 ROUNDS=1 SECONDS_PER_RUN=$SECONDS_PER_RUN BUILD=$BUILD SIZES=64 \
			FAMILIES=4 EXTRA_CONF=$work/rules-$n.conf OUT=$work/fwd-$n.json bench/l3fwd.sh >/dev/null
		mpps=$(python3 -c "import json; print(json.load(open('$work/fwd-$n.json'))['results'][0]['dpstackd_mpps'][0])")
		runs[$n]="${runs[$n]} $mpps"
	done
done

median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
base=$(echo "${runs[0]}" | median)
printf '\n== dpstackd forwarding 64-byte frames over memif, 1 worker, median of %s runs of %ss\n' \
	"$ROUNDS" "$SECONDS_PER_RUN"
printf '  %-12s %8s %10s %14s   %s\n' "ACL rules" "Mpps" "ns/packet" "ratio to none" "runs"
for n in "${sizes[@]}"; do
	m=$(echo "${runs[$n]}" | median)
	awk -v n="$n" -v m="$m" -v b="$base" -v runs="${runs[$n]}" 'BEGIN {
		printf "  %-12s %8.2f %10.1f %14.2f  %s\n", n, m, (m > 0) ? 1000 / m : 0,
			(b > 0) ? m / b : 0, runs }'
done
