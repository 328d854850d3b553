/* An eBPF custom hash for `cluster add ... hash custom hash_dport.bpf.o` (docs/CLUSTERS.md):
 * frames go to consumers by the destination port of their TCP or UDP datagram over IPv4
 * (consumer = port % group size), so that each consumer serves a fixed set of services.
 * Anything else hashes to 0. Built with clang -O2 -target bpf -c; run by dpstackd's rte_bpf
 * interpreter after DPDK's verifier accepted it. */
#include <dpstack/cluster_prog.h>

unsigned long long hash_dport(void *frame)
{
	if (dps_bpf_load_half(frame, 12) != 0x0800)            /* EtherType IPv4 */
		return 0;
	unsigned long long proto = dps_bpf_load_byte(frame, 23);
	if (proto != 6 && proto != 17)
		return 0;
	if ((dps_bpf_load_half(frame, 20) & 0x3fff) != 0)      /* a fragment: no ports */
		return 0;
	unsigned long long ihl = (dps_bpf_load_byte(frame, 14) & 0xf) * 4;
	return dps_bpf_load_half(frame, 14 + ihl + 2);
}
