/* Neighbor Discovery (RFC 4861) on the neighbour cache the ARP side uses (src/l2): answering
 * solicitations for our addresses, learning from solicitations and advertisements, and the
 * solicitations the cache's state machine asks for. Router Discovery, redirects, DAD
 * (RFC 4862) and MLD are not acted on yet: their messages are counted, and go to the
 * kernel beside a port with a kernel interface (src/stack/exception.h). */
#include <errno.h>
#include <string.h>

#include "ip6.h"
#include "stack/exception.h"
#include "wire/bytes.h"
#include "wire/icmp6.h"

#define ND_HOP_LIMIT 255 /* §6.1.2, §7.1.1: proves the message never crossed a router */

/* NA flags in the first byte after the checksum (§4.4). */
#define ND_NA_ROUTER 0x80000000u
#define ND_NA_SOLICITED 0x40000000u
#define ND_NA_OVERRIDE 0x20000000u

/* Builds an NS or NA: header, target, one link-layer address option. */
static struct rte_mbuf *nd_build(struct stack *s, uint8_t type, uint32_t flags,
				 const struct ip6_addr *target, uint8_t opt, uint16_t port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return NULL;
	}
	uint8_t *msg = (uint8_t *)rte_pktmbuf_append(m, ICMP6_HDR_LEN + 16 + 8);
	struct icmp6_repr ic = {.type = type, .rest = flags};
	icmp6_build_header(msg, ICMP6_HDR_LEN, &ic);
	memcpy(msg + ICMP6_HDR_LEN, target->b, 16);
	nd_build_lladdr_opt(msg + ICMP6_HDR_LEN + 16, 8, opt, &s->cfg.ifaces[port].mac);
	return m;
}

static void nd_send(struct stack *s, struct rte_mbuf *m, struct ip6_out *d,
		    enum stack_event ev)
{
	d->next_header = IP6_NH_ICMPV6;
	d->hop_limit = ND_HOP_LIMIT;
	d->on_link = true;
	if (ip6_source_for(s, d) != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return;
	}
	icmp6_fill_checksum(m, d);
	if (ip6_output(s, m, d) == 0)
		stack_count(s, ev);
}

void nd_solicit(struct stack *s, uint16_t port, const struct inet_addr *target,
		const struct eth_addr *dst)
{
	struct ip6_addr t = inet_addr_to_v6(target);
	struct rte_mbuf *m = nd_build(s, ICMP6_NEIGHBOR_SOLICIT, 0, &t, ND_OPT_SOURCE_LLADDR, port);
	if (m == NULL)
		return;
	/* §7.2.2: to the solicited-node group while resolving, to the neighbour itself (at the
	 * MAC we hold) when confirming reachability. */
	struct ip6_out d = {.dst = dst != NULL ? t : ip6_solicited_node(&t), .port = port,
			     .link_dst = dst};
	/* §7.2.2: the source is the address the packet that prompted this came from where
	 * possible; an address of the port in the target's scope serves the same end. */
	nd_send(s, m, &d, STACK_EV_ND_TX_NS);
}

/* §7.2.4: the advertisement answering a solicitation for our address target; to the
 * all-nodes group, unsolicited, when the solicitation came from the unspecified address (a
 * node checking for duplicates, RFC 4862 §5.4.3). */
static void nd_advertise(struct stack *s, uint16_t port, const struct ip6_addr *target,
			 const struct ip6_repr *ns, const struct eth_addr *ns_lladdr)
{
	bool dad = ip6_is_unspecified(&ns->src);
	uint32_t flags = ND_NA_OVERRIDE | (dad ? 0 : ND_NA_SOLICITED);
	struct rte_mbuf *m = nd_build(s, ICMP6_NEIGHBOR_ADVERT, flags, target,
				      ND_OPT_TARGET_LLADDR, port);
	if (m == NULL)
		return;
	static const struct ip6_addr all_nodes = {.b = {0xff, 0x02, [15] = 1}};
	struct ip6_out d = {.dst = dad ? all_nodes : ns->src, .src = *target, .port = port,
			     .link_dst = dad ? NULL : ns_lladdr};
	nd_send(s, m, &d, STACK_EV_ND_TX_NA);
}

/* Learns what addr's owner said its MAC is (flags NEIGH_F_*), telling the other workers. */
static int nd_learn(struct stack *s, uint16_t port, const struct ip6_addr *addr,
		    const struct eth_addr *mac, unsigned flags)
{
	struct inet_addr a = inet_addr_v6(addr);
	int rc = neigh_learn(s->neigh, s->now_ms, port, &a, mac, flags);
	if (rc == -ENOSPC)
		s->drops[STACK_DROP_NEIGH_TABLE_FULL]++;
	if (rc == 0 && s->ops.neigh_learnt != NULL)
		s->ops.neigh_learnt(s->ops.ctx, port, &a, mac, flags);
	return rc;
}

static void nd_solicitation_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				  const struct nd_repr *nd)
{
	stack_count(s, STACK_EV_ND_RX_NS);
	uint16_t port = m->port;
	if (netcfg6_local(&s->cfg, port, &nd->target) == NULL) {
		/* Maybe an address of the kernel's, beside a kernel interface. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
			stack_drop(s, STACK_DROP_ND_NOT_FOR_US, m);
		return;
	}
	/* §7.2.3: the sender's address and MAC go into the cache (created STALE). */
	const struct eth_addr *lladdr = nd->has_source_lladdr ? &nd->source_lladdr : NULL;
	if (lladdr != NULL && nd_learn(s, port, &ip->src, lladdr, NEIGH_F_CREATE) == -EPERM) {
		stack_drop(s, STACK_DROP_ARP_STATIC_CONFLICT, m);
		return;
	}
	nd_advertise(s, port, &nd->target, ip, lladdr);
	rte_pktmbuf_free(m);
}

static void nd_advertisement_input(struct stack *s, struct rte_mbuf *m, const struct nd_repr *nd)
{
	stack_count(s, STACK_EV_ND_RX_NA);
	uint16_t port = m->port;
	if (netcfg6_local(&s->cfg, port, &nd->target) != NULL) {
		/* Someone else claims one of our addresses (RFC 4862 §5.4.4). */
		stack_drop(s, STACK_DROP_ND_ADDR_CONFLICT, m);
		return;
	}
	/* §7.2.5: an advertisement updates an entry we have and creates none; without the
	 * target's MAC (a link without addresses) there is nothing to learn. */
	if (nd->has_target_lladdr &&
	    nd_learn(s, port, &nd->target, &nd->target_lladdr,
		     nd->solicited ? NEIGH_F_SOLICITED : 0) == -EPERM) {
		stack_drop(s, STACK_DROP_ARP_STATIC_CONFLICT, m);
		return;
	}
	rte_pktmbuf_free(m);
}

void nd_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, size_t msg_off)
{
	struct nd_repr nd;
	const uint8_t *msg = rte_pktmbuf_mtod_offset(m, const uint8_t *, msg_off);
	if (nd_parse(msg, IP6_HDR_LEN + ip->payload_len - msg_off, ip, &nd) != WIRE_OK) {
		stack_drop(s, STACK_DROP_ND_INVALID, m);
		return;
	}
	/* As ARP: the kernel beside us keeps its own neighbour table from the same news. */
	if (nd.type == ICMP6_NEIGHBOR_ADVERT)
		stack_exception_copy(s, m, STACK_EV_KERNEL_IP6);
	switch (nd.type) {
	case ICMP6_NEIGHBOR_SOLICIT:
		nd_solicitation_input(s, m, ip, &nd);
		return;
	case ICMP6_NEIGHBOR_ADVERT:
		nd_advertisement_input(s, m, &nd);
		return;
	default:
		/* Router Discovery and redirects: the kernel's to act on, where there is one. */
		stack_count(s, STACK_EV_ND_RX_ROUTER);
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
			rte_pktmbuf_free(m);
		return;
	}
}
