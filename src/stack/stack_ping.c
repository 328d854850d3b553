/* What `dpstackctl ping` shares between its families (src/ip4/ip4_icmp.c, src/ip6/ip6_icmp.c):
 * the arming of a worker for the reply and the request's body. */
#include <errno.h>

#include <rte_cycles.h>

#include "stack.h"

void stack_ping_arm(struct stack *s, uint16_t id, uint16_t seq)
{
	s->ping = (struct stack_ping){.id = id, .seq = seq};
}

bool stack_ping_match(struct stack *s, uint32_t id_seq, uint32_t len)
{
	if (s->ping.id == 0 || id_seq != ((uint32_t)s->ping.id << 16 | s->ping.seq) ||
	    s->ping.reply_tsc != 0)
		return false;
	s->ping.reply_tsc = rte_rdtsc();
	s->ping.reply_len = len;
	return true;
}

struct rte_mbuf *stack_ping_chain(struct stack *s, uint32_t total)
{
	/* Large requests are built as a chain: fragmentation copies from it anyway. */
	struct rte_mbuf *head = NULL;
	for (uint32_t done = 0; done < total || head == NULL;) {
		struct rte_mbuf *seg = rte_pktmbuf_alloc(s->pool);
		if (seg == NULL) {
			rte_pktmbuf_free(head);
			s->drops[STACK_DROP_TX_NO_MBUF]++;
			return NULL;
		}
		uint32_t n = RTE_MIN(total - done, (uint32_t)rte_pktmbuf_tailroom(seg));
		uint8_t *p = (uint8_t *)rte_pktmbuf_append(seg, (uint16_t)n);
		for (uint32_t i = 0; i < n; i++)
			p[i] = (uint8_t)(done + i); /* a pattern, as ping(8) sends */
		done += n;
		if (head == NULL)
			head = seg;
		else if (rte_pktmbuf_chain(head, seg) != 0) {
			rte_pktmbuf_free(seg);
			rte_pktmbuf_free(head);
			return NULL;
		}
	}
	return head;
}
