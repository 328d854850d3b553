/* An eBPF bounce filter for `cluster add ... bounce PORT filter bounce_dns_queries.bpf.o`
 * (docs/CLUSTERS.md): forwards DNS queries (UDP to port 53 over IPv4 whose DNS header has
 * QR = 0, RFC 1035 section 4.1.1) and drops everything else, answers included: a decision
 * on the payload, per frame. Returns nonzero to pass. A frame too short for the DNS header
 * ends the program with 0 (dropped). */
#include <dpstack/cluster_prog.h>

unsigned long long bounce_dns_queries(void *frame)
{
	if (dps_bpf_load_half(frame, 12) != 0x0800 || dps_bpf_load_byte(frame, 23) != 17)
		return 0;
	if ((dps_bpf_load_half(frame, 20) & 0x3fff) != 0)
		return 0;
	unsigned long long l4 = 14 + (dps_bpf_load_byte(frame, 14) & 0xf) * 4;
	if (dps_bpf_load_half(frame, l4 + 2) != 53)
		return 0;
	/* DNS header after the 8 bytes of UDP: ID (2 bytes), then QR in the top bit. */
	return (dps_bpf_load_byte(frame, l4 + 8 + 2) & 0x80) == 0;
}
