/* IPv4 input: validation (shared/STYLE.md order, RFC 791, RFC 1122 §3.2.1, RFC 1812 §5.2.2),
 * options (RFC 7126), then local delivery (with reassembly) or forwarding. */
#include "ip4.h"
#include "acl/acl.h"
#include "acl/bypass_set.h"
#include "stack/exception.h"
#include "stack/stack_internal.h"
#include "stack/inet_hdr.h"
#include "stack/steer.h"
#include "wire/bytes.h"
#include "wire/dhcp.h"
#include "wire/eth.h"
#include "wire/icmp4.h"
#include "wire/udp.h"

static const enum stack_drop ip4_parse_drop[WIRE_STATUS_COUNT] = {
	[WIRE_TRUNCATED] = STACK_DROP_IP_TRUNCATED,
	[WIRE_BAD_VERSION] = STACK_DROP_IP_BAD_VERSION,
	[WIRE_BAD_HDR_LEN] = STACK_DROP_IP_BAD_HDR_LEN,
	[WIRE_BAD_LENGTH] = STACK_DROP_IP_BAD_LENGTH,
	[WIRE_BAD_CHECKSUM] = STACK_DROP_IP_BAD_CHECKSUM,
	[WIRE_BAD_FIELD] = STACK_DROP_IP_BAD_FIELD,
	[WIRE_BAD_OPTION] = STACK_DROP_IP_BAD_OPTION,
};


/* Options are accepted and ignored, except source routes, which RFC 7126 §4.3/§4.4 says to
 * drop by default, and malformed ones (RFC 1122 §3.2.1.8 allows discarding them). */
static bool ip4_options_acceptable(struct stack *s, struct rte_mbuf *m, size_t hdr_len)
{
	stack_count(s, STACK_EV_IP_OPTIONS);
	struct ip4_opts_info info;
	const uint8_t *opts = rte_pktmbuf_mtod_offset(m, const uint8_t *, IP4_HDR_MIN_LEN);
	if (ip4_options_check(opts, hdr_len - IP4_HDR_MIN_LEN, &info) != WIRE_OK) {
		stack_drop(s, STACK_DROP_IP_BAD_OPTION, m);
		return false;
	}
	if (info.source_route) {
		stack_drop(s, STACK_DROP_IP_SOURCE_ROUTE, m);
		return false;
	}
	return true;
}

/* How ip4_deliver got a datagram: flags that also travel with it to another worker. */
#define IP4_DELIVER_BCAST 0x1    /* to a broadcast address */
#define IP4_DELIVER_AT_REASS 0x2 /* a fragment at the worker that reassembles its datagram */
#define IP4_DELIVER_AT_OWNER 0x4 /* a whole datagram at the worker that owns its flow */

/* With several workers, a datagram whose flow another worker owns goes there (steer.h).
 * True when m went (or was dropped): the caller is done with it. */
static bool ip4_steer_away(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip,
			   unsigned how)
{
	unsigned owner;
	if (how & IP4_DELIVER_AT_OWNER)
		return false;
	/* A flow rule chose this worker for the segment: its connection lives here, since
	 * every worker listens (README "Flow rules": what that means for UDP and active
	 * opens). */
	if ((m->ol_flags & STACK_MBUF_FLOW_STEERED) && ip->proto == IP4_PROTO_TCP &&
	    !ip->mf && ip->frag_off == 0)
		return false;
	if (ip->mf || ip->frag_off != 0) {
		if (how & IP4_DELIVER_AT_REASS)
			return false;
		owner = steer_frag_owner(s->steer, ip->src, ip->dst);
		how |= IP4_DELIVER_AT_REASS;
	} else {
		/* Our own loopback datagrams may be chains with the headers in separate
		 * segments: read the transport's first bytes as one view. */
		uint8_t copy[STEER_L4_BYTES];
		uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m) - (uint32_t)ip->hdr_len,
				       (uint32_t)sizeof(copy));
		const uint8_t *l4 = rte_pktmbuf_read(m, (uint32_t)ip->hdr_len, len, copy);
		owner = steer_datagram_owner(s->steer, ip, l4, len);
		how |= IP4_DELIVER_AT_OWNER;
	}
	if (owner == STEER_ANY || owner == s->id)
		return false;
	stack_steer_to(s, owner, m, how);
	return true;
}

static void ip4_deliver(struct stack *s, struct rte_mbuf *m, struct ip4_repr *ip, unsigned how)
{
	if (s->steer != NULL && ip4_steer_away(s, m, ip, how))
		return;
	if (ip->mf || ip->frag_off != 0) {
		stack_count(s, STACK_EV_IP_FRAGS_RX);
		enum reass_verdict v;
		m = ip4_reass_input(s->reass, s->now_ms, m, ip, &v);
		ip4_reass_sync_drops(s);
		if (m == NULL)
			return;
		stack_count(s, STACK_EV_IP_REASSEMBLED);
		/* The datagram carries the first fragment's header, whose options later fragments
		 * need not repeat: ip (the completing fragment's) may be shorter. */
		ip->hdr_len = (size_t)(rte_pktmbuf_mtod(m, const uint8_t *)[IP4_OFF_VER_IHL] & 0xf) * 4;
		m->l3_len = ip->hdr_len;
		ip->total_len = (uint16_t)rte_pktmbuf_pkt_len(m);
		ip->mf = false;
		ip->frag_off = 0;
		/* A NIC's L4 checksum verdict was about one fragment, not the datagram. */
		m->ol_flags &= ~RTE_MBUF_F_RX_L4_CKSUM_MASK;
		if (s->steer != NULL && ip4_steer_away(s, m, ip, how))
			return;
	}
	if (acl_ip4_denies(s->acl, s->id, ACL_HOOK_INPUT, m, ip)) {
		stack_drop(s, STACK_DROP_ACL_DENIED, m);
		return;
	}
	if (s->bypass != NULL && bypass_set_matches(s->bypass, s->id, m, ip) &&
	    stack_exception(s, m, STACK_EV_KERNEL_BYPASS))
		return;
	stack_count(s, STACK_EV_IP_DELIVERED);
	bool bcast = how & IP4_DELIVER_BCAST;
	if (ip->proto == IP4_PROTO_ICMP) {
		icmp4_input(s, m, ip, bcast);
		return;
	}
	const struct stack_proto *transport = s->by_ip_proto[ip->proto];
	if (transport != NULL && transport->l4_input != NULL) {
		struct inet_hdr h = {
			.src = inet_addr_v4(ip->src),
			.dst = inet_addr_v4(ip->dst),
			.l4_off = (uint32_t)ip->hdr_len,
			.l4_len = (uint32_t)(ip->total_len - ip->hdr_len),
			.tos = ip->tos,
			.ttl = ip->ttl,
			.port = m->port,
		};
		transport->l4_input(s, m, &h, bcast);
		return;
	}
	if (stack_exception(s, m, STACK_EV_KERNEL_IP_PROTO))
		return;
	/* RFC 1122 §3.2.2.1: protocol unreachable for a transport we do not run. */
	if (!bcast)
		icmp4_send_error(s, m, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PROTO, 0);
	stack_drop(s, STACK_DROP_IP_UNKNOWN_PROTO, m);
}

void stack_input_steered(struct stack *s, struct rte_mbuf *m, unsigned how)
{
	stack_count(s, STACK_EV_IP_STEERED_IN);
	if ((rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4) == 6) {
		/* IPv6 checks itself again, cheaply, and finds itself the owner; how is the
		 * STACK_IN_* it was received with (ip6_deliver). */
		stack_proto_by_ethertype(s, ETH_TYPE_IPV6)->input(s, m, how);
		if (s->lo_count != 0)
			stack_loopback_drain(s);
		return;
	}
	/* The receiving worker checked the datagram; only its fields are wanted again. */
	struct ip4_repr ip;
	if (ip4_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_pkt_len(m), false, &ip) !=
	    WIRE_OK) {
		stack_drop(s, STACK_DROP_IP_BAD_FIELD, m);
		return;
	}
	ip4_deliver(s, m, &ip, how);
	if (s->lo_count != 0)
		stack_loopback_drain(s);
}

/* A DHCP server's answer to a client of ours with no address yet: UDP from port 67 to port
 * 68, sent to the address offered when the server ignores the broadcast flag (RFC 2131
 * §4.1). Servers answer off-link clients through their relays (port 67), so what a router
 * forwards to port 68 is not taken by this. */
static bool ip4_is_dhcp_reply(const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	uint8_t copy[UDP_HDR_LEN];
	if (ip->proto != IP4_PROTO_UDP || ip->mf || ip->frag_off != 0)
		return false;
	const uint8_t *udp = rte_pktmbuf_read(m, (uint32_t)ip->hdr_len, UDP_HDR_LEN, copy);
	return udp != NULL && wire_get_be16(udp + UDP_OFF_SRC_PORT) == DHCP_SERVER_PORT &&
	       wire_get_be16(udp + UDP_OFF_DST_PORT) == DHCP_CLIENT_PORT;
}

void ip4_input(struct stack *s, struct rte_mbuf *m, unsigned how)
{
	stack_count(s, STACK_EV_IP_RX);
	uint64_t csum_flags = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	if (csum_flags == RTE_MBUF_F_RX_IP_CKSUM_BAD) {
		stack_drop(s, STACK_DROP_IP_BAD_CHECKSUM, m);
		return;
	}
	/* Received frames arrive in one segment or as chains whose first segment holds the
	 * headers (stack_input); our own loopback datagrams may be chains whose first
	 * segment holds the headers alone. Either way the parser views the datagram through its first segment, which must hold
	 * the header its IHL names: the parser reads no more than the header, and compares
	 * the rest by length only. */
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint32_t in_first = rte_pktmbuf_data_len(m);
	const uint8_t *first = rte_pktmbuf_mtod(m, const uint8_t *);
	if (in_first < RTE_MIN(len, (uint32_t)IP4_HDR_MIN_LEN) ||
	    (in_first != 0 &&
	     in_first < RTE_MIN(len, (uint32_t)(first[IP4_OFF_VER_IHL] & 0xf) * 4))) {
		stack_drop(s, STACK_DROP_IP_TRUNCATED, m);
		return;
	}
	struct ip4_repr ip;
	enum wire_status st = ip4_parse(rte_pktmbuf_mtod(m, const uint8_t *), len,
					csum_flags != RTE_MBUF_F_RX_IP_CKSUM_GOOD, &ip);
	if (st != WIRE_OK) {
		stack_drop(s, ip4_parse_drop[st], m);
		return;
	}
	/* Ethernet pads short frames: the datagram ends at its total length. */
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - ip.total_len));
	m->l3_len = ip.hdr_len;
	if (ip.hdr_len > IP4_HDR_MIN_LEN && !ip4_options_acceptable(s, m, ip.hdr_len))
		return;

	/* Martian sources, silently discarded: a connected subnet's broadcast address (RFC 1122
	 * §3.2.1.3: answering it would answer the whole subnet), and one of our own addresses
	 * on a datagram from the wire, a spoof or a loop (RFC 1812 §5.3.7). */
	const struct route *sr = route_lookup4(s->cfg.routes, ip.src);
	if (sr != NULL && (sr->type == ROUTE_BROADCAST ||
			   (sr->type == ROUTE_LOCAL && !(how & STACK_IN_LOOPBACK)))) {
		stack_drop(s, STACK_DROP_IP_BAD_FIELD, m);
		return;
	}

	if (ip4_is_limited_broadcast(ip.dst)) {
		ip4_deliver(s, m, &ip, IP4_DELIVER_BCAST);
		return;
	}
	if (ip4_is_multicast(ip.dst)) {
		/* No multicast groups are joined here; the kernel's (OSPF's 224.0.0.5) may be. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_IP_MULTICAST))
			stack_drop(s, STACK_DROP_IP_BAD_DST, m);
		return;
	}
	const struct route *r = route_lookup4(s->cfg.routes, ip.dst);
	if ((how & STACK_IN_LINK_BCAST) && (r == NULL || r->type != ROUTE_BROADCAST)) {
		/* RFC 1122 §3.3.6 (RFC 1812 §5.3.4 for routers): a unicast datagram that came as
		 * a link-layer broadcast is discarded silently, neither delivered, forwarded nor
		 * answered with an ICMP error (RFC 1122 §3.2.2). */
		stack_drop(s, STACK_DROP_IP_LINK_BCAST, m);
		return;
	}
	if (r != NULL && r->type == ROUTE_LOCAL) {
		/* Weak host model (RFC 1122 §3.3.4.2): any of our addresses, on any port. */
		ip4_deliver(s, m, &ip, 0);
		return;
	}
	if (r != NULL && r->type == ROUTE_BROADCAST) {
		ip4_deliver(s, m, &ip, IP4_DELIVER_BCAST);
		return;
	}
	if (s->dhcp_client[m->port] && !(how & STACK_IN_LOOPBACK) && ip4_is_dhcp_reply(m, &ip)) {
		ip4_deliver(s, m, &ip, 0);
		return;
	}
	/* Our own datagram to an address we no longer have (deleted since it was sent) came
	 * from no wire and goes to none: its payload may be lent from a socket's memory. */
	if (!s->cfg.forwarding || (how & STACK_IN_LOOPBACK)) {
		if (stack_to_rest(s, m))
			return;
		stack_drop(s, STACK_DROP_IP_NOT_OURS, m);
		return;
	}
	ip4_forward(s, m, &ip, r);
}
