/* IPv6 input (RFC 8200): header validation in a fixed order with a named drop for each
 * failure, the destination check (one of our addresses on this port, or a group the port
 * listens to; a router forwards other unicast, ip6_forward.c), the extension header walk,
 * and dispatch by Next Header. */
#include "ip6.h"

#include "stack/exception.h"
#include "stack/inet_hdr.h"
#include "stack/mbuf_pullup.h"
#include "stack/stack_internal.h"
#include "stack/steer.h"
#include "wire/bytes.h"
#include "wire/icmp6.h"

/* RFC 8200 §4: the Parameter Problem a refused extension header chain deserves. */
static void ext_refused(struct stack *s, struct rte_mbuf *m, const struct ip6_ext_info *ext)
{
	if (ext->send_error)
		icmp6_send_error(s, m, ICMP6_PARAM_PROBLEM, ext->problem_code,
				 ext->problem_pointer);
	stack_drop(s, STACK_DROP_IP6_BAD_EXT, m);
}

/* The worker that owns the segment or datagram m (steer.h): TCP's by the Toeplitz hash of
 * its IPv6 tuple, as a NIC's RSS computes it, UDP's by its destination port as over IPv4;
 * or STEER_ANY: other transports are this worker's to handle, and so is a packet a flow
 * rule steered here. */
static unsigned ip6_owner(const struct stack *s, const struct rte_mbuf *m,
			  const struct inet_hdr *h, uint8_t proto)
{
	if (s->steer == NULL || (proto != IP6_NH_TCP && proto != IP6_NH_UDP) || h->l4_len < 4 ||
	    (m->ol_flags & STACK_MBUF_FLOW_STEERED))
		return STEER_ANY;
	uint8_t ports[4];
	const uint8_t *l4 = rte_pktmbuf_read(m, h->l4_off, sizeof(ports), ports);
	if (l4 == NULL)
		return STEER_ANY;
	if (proto == IP6_NH_UDP)
		return steer_udp_owner(s->steer, wire_get_be16(l4 + 2));
	return steer_tcp_owner_inet(s->steer, &h->src, &h->dst, wire_get_be16(l4),
				    wire_get_be16(l4 + 2));
}

/* The worker that owns the flow an ICMPv6 error at msg_off in m quotes (RFC 4443 §2.4(b)),
 * as IPv4's steer_datagram_owner does for ICMP, so that it reaches the socket; STEER_ANY
 * for every other message, and for what this worker may handle. */
static unsigned icmp6_owner(const struct stack *s, const struct rte_mbuf *m, size_t msg_off)
{
	if (s->steer == NULL || (m->ol_flags & STACK_MBUF_FLOW_STEERED))
		return STEER_ANY;
	size_t len = rte_pktmbuf_data_len(m) - msg_off;
	const uint8_t *msg = rte_pktmbuf_mtod_offset(m, const uint8_t *, msg_off);
	uint8_t nh;
	size_t l4_off;
	if (len < ICMP6_HDR_LEN || !icmp6_type_is_error(msg[ICMP6_OFF_TYPE]) ||
	    !icmp6_quoted_transport(msg + ICMP6_HDR_LEN, len - ICMP6_HDR_LEN, &nh, &l4_off) ||
	    len < ICMP6_HDR_LEN + l4_off + 4)
		return STEER_ANY;
	const uint8_t *q = msg + ICMP6_HDR_LEN;
	uint16_t sport = wire_get_be16(q + l4_off), dport = wire_get_be16(q + l4_off + 2);
	if (nh == IP6_NH_UDP)
		return steer_udp_owner(s->steer, sport); /* our datagram: its source port */
	if (nh != IP6_NH_TCP)
		return STEER_ANY;
	struct inet_addr src, dst;
	memcpy(src.b, q + IP6_OFF_SRC, 16);
	memcpy(dst.b, q + IP6_OFF_DST, 16);
	/* Our segment turned around: the flow as the peer's segments arrive. */
	return steer_tcp_owner_inet(s->steer, &dst, &src, dport, sport);
}

/* To the transport registered for the chain's upper-layer header (TCP, UDP), on the
 * worker that owns the flow. */
static void ip6_to_transport(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
			     const struct ip6_ext_info *ext, unsigned how, bool to_group)
{
	struct inet_hdr h = {
		.src = inet_addr_v6(&ip->src),
		.dst = inet_addr_v6(&ip->dst),
		.l4_off = (uint32_t)ext->l4_off,
		.l4_len = (uint32_t)(IP6_HDR_LEN + ip->payload_len - ext->l4_off),
		.tos = ip->tclass,
		.ttl = ip->hop_limit,
		.port = m->port,
		.v6 = true,
	};
	unsigned owner = ip6_owner(s, m, &h, ext->proto);
	if (owner != STEER_ANY && owner != s->id) {
		stack_steer_to(s, owner, m, how);
		return;
	}
	stack_count(s, STACK_EV_IP6_DELIVERED);
	s->by_ip_proto[ext->proto]->l4_input(s, m, &h, to_group);
}

/* Walks m's extension headers in its first segment (ip6_ext_walk reads one view) into
 * *ext and *st. A chain's first segment may end inside them, and a fragment's checks need
 * the datagram's whole length: then as many bytes as the segment has room for are pulled
 * into it (mbuf_pullup) and the walk tried again, so that a header chain split across
 * segments is read whole and never past a segment's end. False when the headers cannot
 * be gathered in one segment (the caller drops the datagram). */
static bool ip6_ext_walk_mbuf(struct rte_mbuf *m, const struct ip6_repr *ip, bool to_group,
			      struct ip6_ext_info *ext, enum wire_status *st)
{
	size_t len = (size_t)IP6_HDR_LEN + ip->payload_len;
	for (;;) {
		size_t view = RTE_MIN(len, (size_t)rte_pktmbuf_data_len(m));
		*st = ip6_ext_walk(rte_pktmbuf_mtod(m, const uint8_t *), view, to_group, ext);
		if (view == len || (*st == WIRE_OK && !ext->has_frag))
			return true;
		size_t room = (size_t)(m->buf_len - m->data_off); /* data_off <= buf_len */
		if (room <= view || !mbuf_pullup(m, (uint32_t)RTE_MIN(len, room)))
			return false;
	}
}

/* The extension headers walked, fragments reassembled, the datagram handed to its upper
 * layer. m is one segment or a chain: received (GRO's merged TCP segments), looped back
 * (our own segments, their payload lent), or reassembled. TCP and UDP read their headers
 * with rte_pktmbuf_read; ICMPv6 and reassembly view the first segment, which holds every
 * header up to the upper layer's once the walk succeeded. */
static void ip6_deliver(struct stack *s, struct rte_mbuf *m, struct ip6_repr *ip, bool to_group,
			unsigned how)
{
	struct ip6_ext_info ext;
	enum wire_status st;
	if (!ip6_ext_walk_mbuf(m, ip, to_group, &ext, &st)) {
		stack_drop(s, STACK_DROP_IP6_TRUNCATED, m);
		return;
	}
	if (st != WIRE_OK) {
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
	if (ip6_filter_input(s, m, ip, &ext, how))
		return;
	how |= IP6_IN_FILTERED;
	unsigned owner;
	switch (ext.proto) {
	case IP6_NH_ICMPV6:
		owner = icmp6_owner(s, m, ext.l4_off);
		if (owner != STEER_ANY && owner != s->id) {
			stack_steer_to(s, owner, m, how);
			return;
		}
		stack_count(s, STACK_EV_IP6_DELIVERED);
		icmp6_input(s, m, ip, ext.l4_off, how);
		return;
	case IP6_NH_NONE:
		stack_count(s, STACK_EV_IP6_DELIVERED);
		rte_pktmbuf_free(m); /* RFC 8200 §4.7: nothing follows, nothing to do */
		return;
	default:
		if (s->by_ip_proto[ext.proto] != NULL &&
		    s->by_ip_proto[ext.proto]->l4_input != NULL) {
			ip6_to_transport(s, m, ip, &ext, how, to_group);
			return;
		}
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
	/* The fixed header in the first segment, read there; the rest of the chain is compared
	 * by length only (ip6_parse). */
	if (!mbuf_pullup(m, IP6_HDR_LEN)) {
		stack_drop(s, STACK_DROP_IP6_TRUNCATED, m);
		return;
	}
	struct ip6_repr ip;
	switch (ip6_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_pkt_len(m), &ip)) {
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
		/* A router passes on what is not ours, but no group's datagram (no multicast
		 * routing here), no link-local one (RFC 4291 §2.5.6: it stays on its link,
		 * perhaps the kernel's), and nothing our own stack sent (from no wire). */
		if (s->cfg.forwarding6 && !to_group && !ip6_is_link_local(&ip.dst) &&
		    !(how & STACK_IN_LOOPBACK)) {
			ip6_forward(s, m, &ip, how);
			return;
		}
		/* The kernel's own addresses and groups, beside a kernel interface. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
			stack_drop(s, STACK_DROP_IP6_NOT_OURS, m);
		return;
	}
	ip6_deliver(s, m, &ip, to_group, how);
}

