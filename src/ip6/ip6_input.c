/* IPv6 input (RFC 8200): header validation in a fixed order with a named drop for each
 * failure, the destination check (one of our addresses on this port, or a group the port
 * listens to), the extension header walk, and dispatch by Next Header. */
#include "ip6.h"

#include "stack/exception.h"
#include "wire/icmp6.h"

/* RFC 8200 §4: the Parameter Problem a refused extension header chain deserves. */
static void ext_refused(struct stack *s, struct rte_mbuf *m, const struct ip6_ext_info *ext)
{
	if (ext->send_error)
		icmp6_send_error(s, m, ICMP6_PARAM_PROBLEM, ext->problem_code,
				 ext->problem_pointer);
	stack_drop(s, STACK_DROP_IP6_BAD_EXT, m);
}

/* The extension headers walked, fragments reassembled, the datagram handed to its upper
 * layer. m is contiguous, or (reassembled) a chain whose first segment holds every header
 * up to the upper layer's: RFC 7112 made the first fragment carry them all. */
static void ip6_deliver(struct stack *s, struct rte_mbuf *m, struct ip6_repr *ip, bool to_group,
			unsigned how)
{
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = RTE_MIN((size_t)IP6_HDR_LEN + ip->payload_len,
			     (size_t)rte_pktmbuf_data_len(m));
	struct ip6_ext_info ext;
	if (ip6_ext_walk(h, len, to_group, &ext) != WIRE_OK) {
		ext_refused(s, m, &ext);
		return;
	}
	if (ext.has_frag && (ext.frag.offset != 0 || ext.frag.more)) {
		m = ip6_reass_input(s, m, ip, &ext);
		if (m == NULL)
			return;
		/* The whole datagram: its own header and chain, without a fragment header. */
		ip->payload_len = (uint16_t)(rte_pktmbuf_pkt_len(m) - IP6_HDR_LEN);
		ip6_deliver(s, m, ip, to_group, how);
		return;
	}
	switch (ext.proto) {
	case IP6_NH_ICMPV6:
		stack_count(s, STACK_EV_IP6_DELIVERED);
		icmp6_input(s, m, ip, ext.l4_off, how);
		return;
	case IP6_NH_NONE:
		stack_count(s, STACK_EV_IP6_DELIVERED);
		rte_pktmbuf_free(m); /* RFC 8200 §4.7: nothing follows, nothing to do */
		return;
	default:
		if (stack_exception(s, m, STACK_EV_KERNEL_IP_PROTO))
			return;
		/* RFC 8200 §4: an unrecognized Next Header, pointing at the field naming it. */
		icmp6_send_error(s, m, ICMP6_PARAM_PROBLEM, 1, (uint32_t)ext.proto_field_off);
		stack_drop(s, STACK_DROP_IP6_UNKNOWN_PROTO, m);
		return;
	}
}

void ip6_input(struct stack *s, struct rte_mbuf *m, unsigned how)
{
	stack_count(s, STACK_EV_IP6_RX);
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		/* The parsers here read one contiguous view; GRO's chains are TCP over IPv4. */
		stack_drop(s, STACK_DROP_IP6_TRUNCATED, m);
		return;
	}
	struct ip6_repr ip;
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	switch (ip6_parse(h, rte_pktmbuf_data_len(m), &ip)) {
	case WIRE_OK:
		break;
	case WIRE_TRUNCATED:
		stack_drop(s, STACK_DROP_IP6_TRUNCATED, m);
		return;
	case WIRE_BAD_VERSION:
		stack_drop(s, STACK_DROP_IP6_BAD_VERSION, m);
		return;
	case WIRE_BAD_LENGTH:
		stack_drop(s, STACK_DROP_IP6_BAD_LENGTH, m);
		return;
	default:
		stack_drop(s, STACK_DROP_IP6_BAD_FIELD, m);
		return;
	}
	/* Ethernet pads short frames: the datagram ends where its payload length says. */
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - IP6_HDR_LEN - ip.payload_len));
	bool to_group = ip6_is_multicast(&ip.dst);
	if (to_group ? !netcfg6_listens(&s->cfg, m->port, &ip.dst)
		     : netcfg6_local(&s->cfg, m->port, &ip.dst) == NULL) {
		/* The kernel's own addresses and groups, beside a kernel interface. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
			stack_drop(s, STACK_DROP_IP6_NOT_OURS, m);
		return;
	}
	ip6_deliver(s, m, &ip, to_group, how);
}

