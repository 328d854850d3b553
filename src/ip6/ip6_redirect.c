/* Redirects (RFC 4861 §8). Received: a router telling this host a better first hop for a
 * destination, or that the destination is on the link. The worker checks what only the
 * packet path knows (the message passed wire/icmp6.h nd_parse, which applies the rest of
 * §8.1) and learns the target's link-layer address; the control thread installs the host
 * route, with its lifetime (addrconf_redirect_input, src/ctl/addrconf_run.c). Sent, as a
 * router: to a neighbour whose packet goes back out the port it came in on (§8.2). */
#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ip6.h"
#include "stack/route.h"

/* §8.1: "The IP source address of the Redirect is the same as the current first-hop router
 * for the specified ICMP Destination Address": the gateway of the route the host itself
 * would send dst by, on the port the Redirect came in through. A Redirect from anyone else
 * (another host on the link) is forged. */
static bool redirect_from_first_hop(const struct stack *s, uint16_t port,
				    const struct ip6_addr *src, const struct ip6_addr *dst)
{
	const struct route *r = route_lookup6(s->cfg.routes, dst);
	if (r == NULL || r->type != ROUTE_GATEWAY ||
	    (r->port != port && r->port != NETCFG_PORT_ANY))
		return false;
	struct inet_addr gw = inet_addr_v6(src);
	return inet_addr_equal(&r->gateway, &gw);
}

void nd_redirect_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		       const struct nd_repr *nd)
{
	uint16_t port = m->port;
	if (s->cfg.forwarding6) {
		stack_drop(s, STACK_DROP_ND_REDIRECT_FORWARDING, m);
		return;
	}
	if (port >= NETCFG_MAX_PORTS ||
	    !redirect_from_first_hop(s, port, &ip->src, &nd->redirect_dst)) {
		stack_drop(s, STACK_DROP_ND_REDIRECT_NOT_ROUTER, m);
		return;
	}
	/* §8.3: the target's entry is created (STALE) or updated from its link-layer address
	 * option; without one the next packet resolves it. */
	if (nd->has_target_lladdr &&
	    nd_learn(s, port, &nd->target, &nd->target_lladdr, NEIGH_F_CREATE) == -EPERM) {
		stack_drop(s, STACK_DROP_ARP_STATIC_CONFLICT, m);
		return;
	}
	struct ip6_ctl_event ev = {.kind = IP6_CTL_REDIRECT, .port = port, .src = ip->src,
				   .ra = *nd};
	if (ip6_ctl_post(s, &ev))
		stack_count(s, STACK_EV_ND_RX_REDIRECT);
	rte_pktmbuf_free(m);
}

/* §8.2: "the Source Address of the packet identifies a neighbor": a link-local source, or
 * one the port's own prefixes put on the link. */
static bool redirect_sender_on_link(const struct stack *s, uint16_t port,
				    const struct ip6_addr *src)
{
	if (ip6_is_link_local(src))
		return true;
	const struct route *r = route_lookup6(s->cfg.routes, src);
	return r != NULL && r->type == ROUTE_CONNECTED && r->port == port;
}

/* §4.5: the Redirect's size limit: no more than the minimum MTU, so the Redirected Header
 * option quotes what fits after the fixed part and the Target Link-Layer option. */
#define REDIRECT_MAX (IP6_MIN_MTU - IP6_HDR_LEN)
#define REDIRECT_FIXED 40
#define REDIRECT_OPT_HDR 8 /* type, length, six reserved bytes */

void nd_redirect_send(struct stack *s, const struct rte_mbuf *m, const struct ip6_repr *ip,
		      const struct route *r)
{
	uint16_t port = m->port;
	if (port >= NETCFG_MAX_PORTS || !redirect_sender_on_link(s, port, &ip->src))
		return;
	/* §8.2: the target is the better router's link-local address (the one Neighbor
	 * Discovery knows it by), or the destination itself when it is on the link. */
	struct ip6_addr target = ip->dst;
	if (r->type == ROUTE_GATEWAY) {
		target = inet_addr_to_v6(&r->gateway);
		if (!ip6_is_link_local(&target))
			return;
	} else if (r->type != ROUTE_CONNECTED) {
		return;
	}
	if (ip6_addr_equal(&target, &ip->src))
		return; /* the sender is the better first hop itself: nothing to tell it */
	/* §8.2 sends from the port's link-local address; without one, no Redirect. */
	static const struct ip6_addr all_nodes = {.b = {0xff, 0x02, [15] = 1}};
	struct ip6_out d = {.dst = ip->src, .port = port};
	if (!netcfg6_source_for(&s->cfg, port, &all_nodes, &d.src) || !ip6_is_link_local(&d.src))
		return;
	if (!ratelimit_allow(&s->ip6->icmp_errors, s->now_ms)) {
		s->drops[STACK_DROP_ICMP6_RATE_LIMITED]++;
		return;
	}
	struct inet_addr t = inet_addr_v6(&target);
	struct neigh_info info;
	bool tlla = neigh_lookup(s->neigh, port, &t, &info) == 0 &&
		    info.state != NEIGH_INCOMPLETE && info.state != NEIGH_FAILED;
	size_t head = REDIRECT_FIXED + (tlla ? 8 : 0) + REDIRECT_OPT_HDR;
	/* The quote in whole 8-byte units (§4.6.3's length counts them). */
	size_t quote = RTE_MIN((size_t)rte_pktmbuf_pkt_len(m), REDIRECT_MAX - head) & ~(size_t)7;
	struct rte_mbuf *out = rte_pktmbuf_alloc(s->pool);
	if (out == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return;
	}
	uint8_t *msg = (uint8_t *)rte_pktmbuf_append(out, (uint16_t)(head + quote));
	if (msg == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, out);
		return;
	}
	memset(msg, 0, head);
	struct icmp6_repr ic = {.type = ICMP6_REDIRECT};
	icmp6_build_header(msg, ICMP6_HDR_LEN, &ic);
	memcpy(msg + 8, target.b, 16);
	memcpy(msg + 24, ip->dst.b, 16);
	size_t off = REDIRECT_FIXED;
	if (tlla)
		off += nd_build_lladdr_opt(msg + off, 8, ND_OPT_TARGET_LLADDR, &info.mac);
	msg[off] = ND_OPT_REDIRECTED;
	msg[off + 1] = (uint8_t)((REDIRECT_OPT_HDR + quote) / 8);
	const uint8_t *q = rte_pktmbuf_read(m, 0, quote, msg + head);
	if (q != NULL && q != msg + head)
		memcpy(msg + head, q, quote);
	(void)nd_send(s, out, &d, STACK_EV_ND_TX_REDIRECT);
}
