/* Neighbor Discovery (RFC 4861) on the neighbour cache the ARP side uses (src/l2): answering
 * solicitations for our addresses, learning from solicitations and advertisements, and the
 * solicitations the cache's state machine asks for. Duplicate Address Detection (RFC 4862
 * §5.4) and Router Discovery on a port with autoconf run on the control thread
 * (src/ctl/addrconf_run.h): here the probes and solicitations it sends, and the news it
 * acts on handed over (ip6_ctl.c). Redirects are ip6_redirect.c's. Router Discovery on other
 * ports is counted and goes to the kernel beside a port with a kernel interface
 * (src/stack/exception.h). */
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

/* Builds an NS, NA (target given) or RS (target NULL): header, target, and a link-layer
 * address option of type opt (0: none). */
static struct rte_mbuf *nd_build(struct stack *s, uint8_t type, uint32_t flags,
				 const struct ip6_addr *target, uint8_t opt, uint16_t port)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return NULL;
	}
	size_t tlen = target != NULL ? 16 : 0;
	uint8_t *msg = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ICMP6_HDR_LEN + tlen +
								    (opt != 0 ? 8 : 0)));
	struct icmp6_repr ic = {.type = type, .rest = flags};
	icmp6_build_header(msg, ICMP6_HDR_LEN, &ic);
	if (target != NULL)
		memcpy(msg + ICMP6_HDR_LEN, target->b, 16);
	if (opt != 0)
		nd_build_lladdr_opt(msg + ICMP6_HDR_LEN + tlen, 8, opt, &s->cfg.ifaces[port].mac);
	return m;
}

int nd_send(struct stack *s, struct rte_mbuf *m, struct ip6_out *d, enum stack_event ev)
{
	d->next_header = IP6_NH_ICMPV6;
	d->hop_limit = ND_HOP_LIMIT;
	d->on_link = true;
	int rc = ip6_source_for(s, d);
	if (rc != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return rc;
	}
	icmp6_fill_checksum(m, d);
	rc = ip6_output(s, m, d);
	if (rc == 0)
		stack_count(s, ev);
	return rc;
}

int nd_dad_probe(struct stack *s, uint16_t port, const struct ip6_addr *target)
{
	struct rte_mbuf *m = nd_build(s, ICMP6_NEIGHBOR_SOLICIT, 0, target, 0, port);
	if (m == NULL)
		return -ENOBUFS;
	struct ip6_out d = {.dst = ip6_solicited_node(target), .port = port,
			     .from_unspecified = true};
	return nd_send(s, m, &d, STACK_EV_ND_TX_DAD);
}

int nd_router_solicit(struct stack *s, uint16_t port)
{
	static const struct ip6_addr all_routers = {.b = {0xff, 0x02, [15] = 2}};
	struct ip6_out d = {.dst = all_routers, .port = port};
	/* §4.1: the source link-layer address option only with a source address. */
	d.from_unspecified = !netcfg6_source_for(&s->cfg, port, &all_routers, &d.src) ||
			     !ip6_is_link_local(&d.src);
	if (d.from_unspecified)
		d.src = (struct ip6_addr){{0}};
	struct rte_mbuf *m = nd_build(s, ICMP6_ROUTER_SOLICIT, 0, NULL,
				      d.from_unspecified ? 0 : ND_OPT_SOURCE_LLADDR, port);
	if (m == NULL)
		return -ENOBUFS;
	return nd_send(s, m, &d, STACK_EV_ND_TX_RS);
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
	(void)nd_send(s, m, &d, STACK_EV_ND_TX_NS);
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
	(void)nd_send(s, m, &d, STACK_EV_ND_TX_NA);
}

int nd_learn(struct stack *s, uint16_t port, const struct ip6_addr *addr,
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

/* RFC 4862 §5.4.3-4: a message about target, one of our addresses still tentative. A
 * solicitation from :: is another node probing for it, an advertisement another node
 * holding it: either way the address is a duplicate, which the control thread records. A
 * solicitation from an address is resolution, which a tentative address does not answer. */
static void nd_tentative_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
			       const struct nd_repr *nd)
{
	if (nd->type == ICMP6_NEIGHBOR_SOLICIT && !ip6_is_unspecified(&ip->src)) {
		stack_drop(s, STACK_DROP_ND_TENTATIVE, m);
		return;
	}
	struct ip6_ctl_event ev = {.kind = IP6_CTL_DAD_CONFLICT, .port = m->port, .src = ip->src,
				   .addr = nd->target};
	ip6_ctl_post(s, &ev);
	stack_drop(s, STACK_DROP_ND_DAD_CONFLICT, m);
}

static bool nd_target_tentative(const struct stack *s, uint16_t port, const struct ip6_addr *t)
{
	const struct netcfg_addr6 *a = netcfg6_find(&s->cfg, port, t);
	return a != NULL && (a->flags & NETCFG6_TENTATIVE);
}

static void nd_solicitation_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				  const struct nd_repr *nd)
{
	stack_count(s, STACK_EV_ND_RX_NS);
	uint16_t port = m->port;
	if (nd_target_tentative(s, port, &nd->target)) {
		nd_tentative_input(s, m, ip, nd);
		return;
	}
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

static void nd_advertisement_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				   const struct nd_repr *nd)
{
	stack_count(s, STACK_EV_ND_RX_NA);
	uint16_t port = m->port;
	if (nd_target_tentative(s, port, &nd->target)) {
		nd_tentative_input(s, m, ip, nd);
		return;
	}
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
		stack_drop(s, msg[ICMP6_OFF_TYPE] == ICMP6_REDIRECT ? STACK_DROP_ND_REDIRECT_INVALID
								     : STACK_DROP_ND_INVALID, m);
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
		nd_advertisement_input(s, m, ip, &nd);
		return;
	case ICMP6_REDIRECT:
		stack_count(s, STACK_EV_ND_RX_ROUTER);
		nd_redirect_input(s, m, ip, &nd);
		return;
	default:
		stack_count(s, STACK_EV_ND_RX_ROUTER);
		if (nd.type == ICMP6_ROUTER_ADVERT && m->port < NETCFG_MAX_PORTS &&
		    s->ip6->autoconf[m->port]) {
			struct ip6_ctl_event ev = {.kind = IP6_CTL_RA, .port = m->port,
						   .src = ip->src, .ra = nd};
			if (ip6_ctl_post(s, &ev))
				stack_count(s, STACK_EV_ND_RX_RA_AUTOCONF);
			rte_pktmbuf_free(m);
			return;
		}
		/* Router Discovery elsewhere: the kernel's to act on, where there is one. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
			rte_pktmbuf_free(m);
		return;
	}
}
