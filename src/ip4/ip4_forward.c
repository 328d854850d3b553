/* Forwarding between ports as a router (RFC 1812 §5.2, §5.3). */
#include "ip4.h"
#include "acl/acl.h"
#include "l2/link.h"
#include "stack/stack_internal.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/icmp4.h"

void ip4_forward(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip,
		 const struct route *r)
{
	/* RFC 1812 §5.3.7 / §4.2.2.11: never forward to a martian destination. */
	if (ip4_is_zeronet(ip->dst) || ip4_is_loopback(ip->dst) || ip4_is_multicast(ip->dst) ||
	    (ip->dst >> 28) == 0xf) {
		stack_drop(s, STACK_DROP_IP_BAD_DST, m);
		return;
	}
	/* RFC 1812 §5.3.7: nor from a source that is not one host. ip4_parse refused 127/8,
	 * multicast and 255.255.255.255, ip4_input subnet broadcasts; network 0 and class E
	 * are left. Silently: no ICMP error goes to such a source either. */
	if (ip4_is_zeronet(ip->src) || (ip->src >> 28) == 0xf) {
		stack_drop(s, STACK_DROP_IP_BAD_FIELD, m);
		return;
	}
	/* RFC 1812 §5.3.1: a packet whose TTL would reach zero is answered with time exceeded. */
	if (ip->ttl <= 1) {
		icmp4_send_error(s, m, ICMP4_TIME_EXCEEDED, ICMP4_TIMEX_TTL, 0);
		stack_drop(s, STACK_DROP_IP_TTL_EXPIRED, m);
		return;
	}
	enum route_transit t = route_transit(r);
	if (t != ROUTE_TRANSIT_SEND) {
		if (t == ROUTE_TRANSIT_UNREACHABLE)
			icmp4_send_error(s, m, ICMP4_DEST_UNREACH, ICMP4_UNREACH_NET, 0);
		stack_drop(s, STACK_DROP_IP_NO_ROUTE, m);
		return;
	}
	if (acl_ip4_denies(s->acl, s->id, ACL_HOOK_FORWARD, m, ip)) {
		stack_drop(s, STACK_DROP_ACL_DENIED, m);
		return;
	}
	/* RFC 1624 incremental update: TTL is the high byte of the word it shares with the
	 * protocol field. */
	uint8_t *h = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t old_word = (uint16_t)(ip->ttl << 8 | ip->proto);
	uint16_t new_word = (uint16_t)((ip->ttl - 1) << 8 | ip->proto);
	h[IP4_OFF_TTL] = (uint8_t)(ip->ttl - 1);
	wire_put_be16(h + IP4_OFF_CSUM,
		      wire_csum_update16(wire_get_be16(h + IP4_OFF_CSUM), old_word, new_word));
	stack_count(s, STACK_EV_IP_FORWARDED);
	ip4_route_output(s, m, r, ip->dst, true);
}
