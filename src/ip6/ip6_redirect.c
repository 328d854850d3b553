/* Redirects received (RFC 4861 §8): a router telling this host a better first hop for a
 * destination, or that the destination is on the link. The worker checks what only the
 * packet path knows (the message passed wire/icmp6.h nd_parse, which applies the rest of
 * §8.1) and learns the target's link-layer address; the control thread installs the host
 * route, with its lifetime (addrconf_redirect_input, src/ctl/addrconf_run.c). */
#include <errno.h>

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
