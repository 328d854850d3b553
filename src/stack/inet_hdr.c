#include "inet_hdr.h"

#include <rte_ip.h>

#include "wire/checksum.h"

uint16_t inet_l4_checksum(const struct rte_mbuf *m, const struct inet_hdr *h, uint8_t proto,
			  uint32_t len)
{
	/* rte_raw_cksum_mbuf sums native-endian words across segments (odd segment lengths
	 * included); swapped to network order it adds to the pseudo-header sum (RFC 1071 §2(B):
	 * the sum is byte-order independent). */
	uint16_t raw;
	if (rte_raw_cksum_mbuf(m, h->l4_off, len, &raw) != 0)
		return 1;
	uint32_t sum = inet_addr_csum_pseudo(&h->src, &h->dst, proto, len);
	return wire_csum_finish(sum + rte_be_to_cpu_16(raw));
}
