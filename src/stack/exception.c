#include "exception.h"

#include "route.h"
#include "wire/arp.h"
#include "wire/bytes.h"
#include "wire/eth.h"

/* Frames from a wire carry the length of their Ethernet header in l2_len
 * (stack_input_frame); the stack's own loopback datagrams carry 0 (stack_loopback_drain)
 * and never leave for the kernel, whose answers would go out of a port to nobody. */
static bool from_wire(const struct rte_mbuf *m)
{
	return m->port < NETCFG_MAX_PORTS && m->l2_len != 0 &&
	       rte_pktmbuf_headroom(m) >= m->l2_len;
}

static bool exception_wanted(const struct stack *s, const struct rte_mbuf *m)
{
	return from_wire(m) && s->kernel_port[m->port];
}

bool stack_to_rest(struct stack *s, struct rte_mbuf *m)
{
	if (!from_wire(m) || !s->rest_port[m->port])
		return false;
	/* As for the kernel: the Ethernet header is still in front of the data. */
	rte_pktmbuf_prepend(m, (uint16_t)m->l2_len);
	stack_count(s, STACK_EV_CLUSTER_REST);
	s->ops.to_rest(s->ops.ctx, m->port, m);
	return true;
}

bool stack_to_kernel(struct stack *s, uint16_t port, struct rte_mbuf *m, enum stack_event why)
{
	if (port >= NETCFG_MAX_PORTS || !s->kernel_port[port])
		return false;
	stack_count(s, why);
	s->ports[port].to_kernel++;
	s->ops.to_kernel(s->ops.ctx, port, m);
	return true;
}

bool stack_exception(struct stack *s, struct rte_mbuf *m, enum stack_event why)
{
	if (stack_to_rest(s, m))
		return true;
	if (!exception_wanted(s, m))
		return false;
	/* The input path moves past headers (rte_pktmbuf_adj) and writes nothing in front of
	 * the data: the Ethernet header is still there, as it came. */
	rte_pktmbuf_prepend(m, (uint16_t)m->l2_len);
	return stack_to_kernel(s, m->port, m, why);
}

void stack_exception_copy(struct stack *s, struct rte_mbuf *m, enum stack_event why)
{
	if (!exception_wanted(s, m))
		return;
	uint16_t l2_len = (uint16_t)m->l2_len;
	rte_pktmbuf_prepend(m, l2_len);
	struct rte_mbuf *c = rte_pktmbuf_copy(m, s->pool, 0, UINT32_MAX);
	rte_pktmbuf_adj(m, l2_len);
	if (c == NULL) {
		s->ports[m->port].kernel_dropped++;
		stack_drop_count(s, STACK_DROP_TX_NO_MBUF);
		return;
	}
	c->l2_len = 0; /* whole again */
	stack_to_kernel(s, m->port, c, why);
}

bool stack_kernel_frame_held(struct stack *s, const struct rte_mbuf *m)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = rte_pktmbuf_data_len(m);
	struct arp_repr arp;
	if (len < ETH_HDR_LEN || wire_get_be16(f + ETH_OFF_TYPE) != ETH_TYPE_ARP ||
	    arp_parse(f + ETH_HDR_LEN, len - ETH_HDR_LEN, &arp) != WIRE_OK ||
	    arp.op != ARP_OP_REPLY)
		return false;
	const struct route *r = route_lookup4(s->cfg.routes, arp.spa);
	return r != NULL && r->type == ROUTE_LOCAL;
}
