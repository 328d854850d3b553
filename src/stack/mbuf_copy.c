/* Copies of packet bytes into fresh mbufs (mbuf_copy.h). */
#include "mbuf_copy.h"

#include <string.h>

struct rte_mbuf *mbuf_copy_behind(struct rte_mempool *pool, const uint8_t *hdr, size_t hlen,
				  const struct rte_mbuf *src, uint32_t src_off, uint32_t len)
{
	struct rte_mbuf *head = rte_pktmbuf_alloc(pool), *seg;
	uint8_t *dst;

	if (head == NULL)
		return NULL;
	dst = (uint8_t *)rte_pktmbuf_append(head, (uint16_t)hlen);  /* room checked by caller */
	memcpy(dst, hdr, hlen);
	head->l3_len = (uint16_t)hlen;
	head->port = src->port;
	seg = head;
	while (len > 0) {
		uint32_t n = RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(seg));
		const void *p;

		if (n == 0) {
			seg = rte_pktmbuf_alloc(pool);
			if (seg == NULL || rte_pktmbuf_chain(head, seg) != 0) {
				rte_pktmbuf_free(seg);
				rte_pktmbuf_free(head);
				return NULL;
			}
			continue;
		}
		dst = (uint8_t *)rte_pktmbuf_append(head, (uint16_t)n);
		p = rte_pktmbuf_read(src, src_off, n, dst);
		if (p != dst)
			memcpy(dst, p, n);
		src_off += n;
		len -= n;
	}
	return head;
}

