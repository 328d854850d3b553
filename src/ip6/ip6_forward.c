/* Forwarding between ports as an IPv6 router (RFC 8200 §3, §4.3, §5; RFC 4443 §3; RFC 4291
 * §2.5.6): the checks a transit packet passes, the hop limit, the route, the next-hop MTU
 * (a router never fragments), then the neighbour of the route's gateway or destination. */
#include "ip6.h"
#include "stack/stack_internal.h"
#include "wire/icmp6.h"

/* Addresses no router passes on, whatever the routes say; silently, as Linux does: no ICMPv6
 * error would reach a sender that uses them. A link-local or multicast destination never
 * gets here (ip6_input keeps them on their link). */
static bool ip6_transit_martian(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				unsigned how)
{
	/* RFC 4291 §2.5.2: the unspecified address is never a forwarded packet's source. */
	if (ip6_is_unspecified(&ip->src)) {
		stack_drop(s, STACK_DROP_IP6_BAD_FIELD, m);
		return true;
	}
	/* One of our own addresses as the source of a datagram from the wire is a spoof or a
	 * loop: IPv4's rule (RFC 1812 §5.3.7, ip4_input), kept to transit here because a node
	 * that holds our address must still reach us (its advertisement is how DAD finds the
	 * conflict, RFC 4862 §5.4.4). */
	if (netcfg6_local(&s->cfg, m->port, &ip->src) != NULL) {
		stack_drop(s, STACK_DROP_IP6_BAD_FIELD, m);
		return true;
	}
	/* RFC 4291 §2.5.3, §2.5.5.2: ::1 and IPv4-mapped addresses are never on a wire. A
	 * unicast destination in a link-layer multicast frame was not sent to us as a router
	 * (RFC 1812 §5.3.4's rule, which Linux's ip6_forward applies to IPv6 too). */
	if (ip6_is_loopback(&ip->dst) || ip6_is_v4mapped(&ip->dst) || (how & STACK_IN_LINK_BCAST)) {
		stack_drop(s, STACK_DROP_IP6_BAD_DST, m);
		return true;
	}
	return false;
}

void ip6_forward(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, unsigned how)
{
	if (ip6_transit_martian(s, m, ip, how))
		return;
	/* RFC 8200 §3, RFC 4443 §3.3: a hop limit that would reach zero here ends the trip. */
	if (ip->hop_limit <= 1) {
		icmp6_send_error(s, m, ICMP6_TIME_EXCEEDED, ICMP6_TIMEX_HOP_LIMIT, 0);
		stack_drop(s, STACK_DROP_IP6_HOP_LIMIT_EXPIRED, m);
		return;
	}
	const struct route *r = route_lookup6(s->cfg.routes, &ip->dst);
	enum route_transit t = route_transit(r);
	if (t != ROUTE_TRANSIT_SEND) {
		if (t == ROUTE_TRANSIT_UNREACHABLE)
			icmp6_send_error(s, m, ICMP6_DEST_UNREACH, ICMP6_UNREACH_NO_ROUTE, 0);
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return;
	}
	if (ip6_filter_forward(s, m, ip))
		return;
	/* RFC 4291 §2.5.6: a link-local source never leaves its link; RFC 4443 §3.1 code 2 tells
	 * the sender, a neighbour, from our link-local address on that port. */
	if (ip6_is_link_local(&ip->src) && r->port != m->port) {
		icmp6_send_error(s, m, ICMP6_DEST_UNREACH, ICMP6_UNREACH_BEYOND_SCOPE, 0);
		stack_drop(s, STACK_DROP_IP6_BEYOND_SCOPE, m);
		return;
	}
	/* RFC 8200 §5: routers do not fragment; the source learns the MTU (RFC 8201) from
	 * Packet Too Big, sent whatever the destination (RFC 4443 §2.4(e.3)). */
	uint16_t mtu = ip6_route_mtu(s, r, r->port);
	if (rte_pktmbuf_pkt_len(m) > mtu) {
		icmp6_send_error(s, m, ICMP6_PACKET_TOO_BIG, 0, mtu);
		stack_drop(s, STACK_DROP_IP6_TOO_BIG, m);
		return;
	}
	/* No header checksum in IPv6 (RFC 8200 §3): the hop limit changes alone. Hop-by-Hop
	 * options pass unexamined (RFC 8200 §4.3 lets routers skip them). */
	if (r->port == m->port)
		nd_redirect_send(s, m, ip, r); /* RFC 4861 §8.2; the packet still goes on */
	rte_pktmbuf_mtod(m, uint8_t *)[IP6_OFF_HOP_LIMIT] = (uint8_t)(ip->hop_limit - 1);
	stack_count(s, STACK_EV_IP6_FORWARDED);
	struct ip6_out out = {.dst = ip->dst, .port = r->port};
	ip6_link_send(s, &out, r, m);
}
