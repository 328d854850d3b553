#include "tx_offload.h"

#include <string.h>

#include <rte_ip.h>

#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"
#include "wire/udp.h"

void tx_offload_l4_partial(struct rte_mbuf *m, uint8_t *csum, uint32_t pseudo,
			   uint64_t l4_flag, uint16_t hdr_len, uint16_t tso_segsz)
{
	/* The folded sum, not its complement: the port adds the header and payload to it and
	 * complements the total (rte_mbuf_core.h, RTE_MBUF_F_TX_TCP_CKSUM). */
	wire_put_be16(csum, (uint16_t)~wire_csum_finish(pseudo));
	m->ol_flags |= l4_flag;
	m->l4_len = hdr_len;
	if (tso_segsz != 0) {
		m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		m->tso_segsz = tso_segsz;
	}
}

void tx_offload_l4_finish(struct rte_mbuf *m, uint32_t l4_off)
{
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_TX_L4_MASK;
	uint32_t field = l4_off + (l4 == RTE_MBUF_F_TX_UDP_CKSUM ? UDP_OFF_CSUM : TCP_OFF_CSUM);
	m->ol_flags &= ~TX_OFFLOAD_L4_FLAGS;
	/* The field holds the pseudo-header sum, so summing from the header on covers it once.
	 * rte_raw_cksum_mbuf sums native-endian words: its complement is stored as is (RFC
	 * 1071 §2(B): the sum is independent of byte order). Transports build the header in
	 * the first segment. */
	uint16_t raw = 0;
	if (rte_raw_cksum_mbuf(m, l4_off, rte_pktmbuf_pkt_len(m) - l4_off, &raw) != 0 ||
	    field + 2 > rte_pktmbuf_data_len(m))
		return;
	uint16_t sum = (uint16_t)~raw;
	/* RFC 768: a computed zero is sent as all ones, since zero means "no checksum". */
	if (l4 == RTE_MBUF_F_TX_UDP_CKSUM && sum == 0)
		sum = 0xffff;
	memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, field), &sum, sizeof(sum));
}

bool tx_offload_apply(const struct stack_tx_caps *caps, struct rte_mbuf *m)
{
	uint64_t f = m->ol_flags;
	if (f & RTE_MBUF_F_TX_TCP_SEG && caps->tso_max == 0)
		return false;
	uint64_t l4 = f & RTE_MBUF_F_TX_L4_MASK;
	bool port_l4 = (l4 == RTE_MBUF_F_TX_TCP_CKSUM && caps->tcp_cksum) ||
		       (l4 == RTE_MBUF_F_TX_UDP_CKSUM && caps->udp_cksum);
	if (l4 != 0 && !port_l4)
		tx_offload_l4_finish(m, (uint32_t)m->l2_len + m->l3_len);
	if (f & RTE_MBUF_F_TX_IPV4 && caps->ip4_cksum) {
		/* The port computes the header checksum over a zero field. */
		memset(rte_pktmbuf_mtod_offset(m, uint8_t *, m->l2_len + IP4_OFF_CSUM), 0, 2);
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	} else if ((m->ol_flags & TX_OFFLOAD_L4_FLAGS) == 0) {
		m->ol_flags &= ~(RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IPV6); /* nothing asked */
	}
	return true;
}
