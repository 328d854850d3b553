#include "mbuf_pullup.h"

#include <string.h>

bool mbuf_pullup(struct rte_mbuf *m, uint32_t n)
{
	if (n > rte_pktmbuf_pkt_len(m))
		n = rte_pktmbuf_pkt_len(m);
	if (rte_pktmbuf_data_len(m) >= n)
		return true;
	/* The first segment's room from its data on (data_off never exceeds buf_len). */
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1 ||
	    (uint32_t)(m->buf_len - m->data_off) < n)
		return false;
	while (rte_pktmbuf_data_len(m) < n) {
		struct rte_mbuf *next = m->next;
		uint16_t k = (uint16_t)RTE_MIN(n - rte_pktmbuf_data_len(m),
					       (uint32_t)rte_pktmbuf_data_len(next));
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, rte_pktmbuf_data_len(m)),
		       rte_pktmbuf_mtod(next, const uint8_t *), k);
		m->data_len = (uint16_t)(m->data_len + k);
		/* The later segment gives up its first k bytes; pkt_len stays the chain's. */
		next->data_off = (uint16_t)(next->data_off + k);
		next->data_len = (uint16_t)(next->data_len - k);
		if (next->data_len == 0) {
			m->next = next->next;
			m->nb_segs--;
			next->next = NULL;
			next->nb_segs = 1;
			rte_pktmbuf_free_seg(next);
		}
	}
	return true;
}
