/* ICMPv6 (RFC 4443): echo, the error messages of a host, rate-limited, and the hand-off of
 * Neighbor Discovery's messages (RFC 4861) to ip6_nd.c. */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include <rte_ip.h>

#include "ip6.h"
#include "stack/exception.h"
#include "stack/inet_hdr.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/icmp6.h"

/* RFC 4443 §2.4(c): an error quotes as much of the invoking packet as fits in the minimum
 * IPv6 MTU. */
#define ICMP6_ERROR_MAX_QUOTE (IP6_MIN_MTU - IP6_HDR_LEN - ICMP6_HDR_LEN)

void icmp6_fill_checksum(struct rte_mbuf *m, const struct ip6_out *d)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint16_t raw = 0; /* the whole of m: rte_raw_cksum_mbuf cannot fail */
	rte_raw_cksum_mbuf(m, 0, len, &raw);
	uint32_t sum = wire_csum_pseudo6(d->src.b, d->dst.b, IP6_NH_ICMPV6, len);
	wire_put_be16(rte_pktmbuf_mtod(m, uint8_t *) + ICMP6_OFF_CSUM,
		      wire_csum_finish(sum + rte_be_to_cpu_16(raw)));
}

static bool icmp6_type_is_nd(uint8_t type)
{
	return type >= ICMP6_ROUTER_SOLICIT && type <= ICMP6_REDIRECT;
}

/* The checksum of the message at off (len bytes, over m's segments) against pseudo. */
static bool icmp6_chain_checksum_ok(const struct rte_mbuf *m, size_t off, size_t len,
				    uint32_t pseudo)
{
	uint16_t raw = 0;
	if (rte_raw_cksum_mbuf(m, (uint32_t)off, (uint32_t)len, &raw) != 0)
		return false;
	return wire_csum_finish(pseudo + rte_be_to_cpu_16(raw)) == 0;
}

/* Where an answer to the datagram ip, received on port, goes: through the routes, except
 * when either end is link-local: a datagram to or from a link-local address never crossed
 * a router (RFC 4291 §2.5.6), so its sender is a neighbour on that port whatever the scope
 * of its own address (a host whose link-local address is still tentative sends from a
 * global one). */
static struct ip6_out reply_dest(const struct ip6_repr *ip, uint16_t port)
{
	bool on_link = ip6_is_link_local(&ip->src) || ip6_is_link_local(&ip->dst);
	struct ip6_out d = {.dst = ip->src, .next_header = IP6_NH_ICMPV6, .on_link = on_link,
			    .port = on_link ? port : NETCFG_PORT_ANY};
	return d;
}

/* RFC 4443 §4.2: the reply carries the request's identifier, sequence and data; its source
 * is the address the request went to, or one of the port's for a multicast request. */
static void icmp6_echo_reply(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
			     size_t msg_off)
{
	rte_pktmbuf_adj(m, (uint16_t)msg_off);
	struct ip6_out d = reply_dest(ip, m->port);
	d.tclass = ip->tclass;
	if (!ip6_is_multicast(&ip->dst))
		d.src = ip->dst;
	else if (d.port == NETCFG_PORT_ANY)
		d.port = m->port;
	if (ip6_source_for(s, &d) != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return;
	}
	uint8_t *h = rte_pktmbuf_mtod(m, uint8_t *);
	h[ICMP6_OFF_TYPE] = ICMP6_ECHO_REPLY;
	wire_put_be16(h + ICMP6_OFF_CSUM, 0);
	icmp6_fill_checksum(m, &d);
	if (ip6_output(s, m, &d) == 0)
		stack_count(s, STACK_EV_ICMP6_TX_ECHO_REPLY);
}

bool icmp6_quoted_transport(const uint8_t *q, size_t len, uint8_t *nh, size_t *l4_off)
{
	if (len < IP6_HDR_LEN)
		return false;
	*l4_off = IP6_HDR_LEN;
	*nh = q[IP6_OFF_NEXT_HEADER];
	if (*nh == IP6_NH_FRAGMENT && len >= IP6_HDR_LEN + IP6_FRAG_HDR_LEN &&
	    (wire_get_be16(q + IP6_HDR_LEN + 2) & 0xfff8) == 0) {
		*nh = q[IP6_HDR_LEN];
		*l4_off += IP6_FRAG_HDR_LEN;
	}
	return true;
}

/* RFC 4443 §2.4(b): an error belongs to the transport that sent the quoted datagram, from
 * one of our addresses (icmp6_quoted_transport names it). False when none of ours takes it
 * (the kernel's transports may). */
static bool icmp6_error_to_transport(struct stack *s, const uint8_t *msg, size_t len,
				     const struct icmp6_repr *ic)
{
	uint8_t nh;
	size_t l4_off;
	if (len < ICMP6_HDR_LEN ||
	    !icmp6_quoted_transport(msg + ICMP6_HDR_LEN, len - ICMP6_HDR_LEN, &nh, &l4_off))
		return false;
	const uint8_t *q = msg + ICMP6_HDR_LEN;
	const struct stack_proto *transport = s->by_ip_proto[nh];
	if (transport == NULL || transport->ip6_icmp_error == NULL)
		return false;
	struct inet_hdr quoted = {.v6 = true};
	memcpy(quoted.src.b, q + IP6_OFF_SRC, 16);
	memcpy(quoted.dst.b, q + IP6_OFF_DST, 16);
	struct ip6_addr src = inet_addr_to_v6(&quoted.src);
	if (netcfg6_local(&s->cfg, NETCFG_PORT_ANY, &src) == NULL && !ip6_is_link_local(&src))
		return false;
	transport->ip6_icmp_error(s, &quoted, q + l4_off, len - ICMP6_HDR_LEN - l4_off, ic->type,
				  ic->code, ic->rest);
	return true;
}

void icmp6_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, size_t msg_off,
		 unsigned how)
{
	stack_count(s, STACK_EV_ICMP6_RX);
	const uint8_t *msg = rte_pktmbuf_mtod_offset(m, const uint8_t *, msg_off);
	size_t len = IP6_HDR_LEN + ip->payload_len - msg_off;
	uint32_t pseudo = wire_csum_pseudo6(ip->src.b, ip->dst.b, IP6_NH_ICMPV6, (uint32_t)len);
	/* Our own messages turned around in memory were summed a moment ago. */
	bool verify = !(how & STACK_IN_LOOPBACK);
	size_t view = len;
	if (m->nb_segs > 1) {
		/* Reassembled: summed over the chain here, parsed in its first segment. */
		view = RTE_MIN(len, (size_t)rte_pktmbuf_data_len(m) - msg_off);
		if (view >= ICMP6_HDR_LEN && icmp6_type_is_nd(msg[ICMP6_OFF_TYPE])) {
			/* RFC 6980: Neighbor Discovery never comes in fragments. */
			stack_drop(s, STACK_DROP_ICMP6_FRAGMENTED_ND, m);
			return;
		}
		if (verify && !icmp6_chain_checksum_ok(m, msg_off, len, pseudo)) {
			stack_drop(s, STACK_DROP_ICMP6_BAD_CHECKSUM, m);
			return;
		}
		verify = false;
	}
	struct icmp6_repr ic;
	switch (icmp6_parse(msg, view, pseudo, verify, &ic)) {
	case WIRE_OK:
		break;
	case WIRE_TRUNCATED:
		stack_drop(s, STACK_DROP_ICMP6_TRUNCATED, m);
		return;
	default:
		stack_drop(s, STACK_DROP_ICMP6_BAD_CHECKSUM, m);
		return;
	}
	switch (ic.type) {
	case ICMP6_ECHO_REQUEST:
		stack_count(s, STACK_EV_ICMP6_RX_ECHO);
		icmp6_echo_reply(s, m, ip, msg_off);
		return;
	case ICMP6_ROUTER_SOLICIT:
	case ICMP6_ROUTER_ADVERT:
	case ICMP6_NEIGHBOR_SOLICIT:
	case ICMP6_NEIGHBOR_ADVERT:
	case ICMP6_REDIRECT:
		nd_input(s, m, ip, msg_off);
		return;
	case ICMP6_ECHO_REPLY:
		if (stack_ping_match(s, ic.rest, (uint32_t)len)) {
			stack_count(s, STACK_EV_ICMP6_RX_ECHO_REPLY);
			rte_pktmbuf_free(m);
			return;
		}
		/* Not our ping's: the kernel's own ping6, on the exception path, may wait
		 * for it. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_ICMP))
			rte_pktmbuf_free(m);
		return;
	case ICMP6_MLD_QUERY:
		mld_query_input(s, m, ip, msg_off);
		return;
	default:
		if (icmp6_type_is_error(ic.type)) {
			stack_count(s, STACK_EV_ICMP6_RX_ERROR);
			if (icmp6_error_to_transport(s, msg, len, &ic) ||
			    !stack_exception(s, m, STACK_EV_KERNEL_ICMP))
				rte_pktmbuf_free(m);
			return;
		}
		if (!stack_exception(s, m, STACK_EV_KERNEL_ICMP))
			stack_drop(s, STACK_DROP_ICMP6_UNHANDLED, m);
		return;
	}
}

int icmp6_ping_send(struct stack *s, const struct ip6_addr *dst, uint16_t port, uint16_t id,
		    uint16_t seq, uint32_t size)
{
	if (size > UINT16_MAX - ICMP6_HDR_LEN)
		return -EMSGSIZE;
	uint32_t total = ICMP6_HDR_LEN + size;
	struct rte_mbuf *m = stack_ping_chain(s, total);
	if (m == NULL)
		return -ENOBUFS;
	struct icmp6_repr ic = {.type = ICMP6_ECHO_REQUEST, .rest = (uint32_t)id << 16 | seq};
	icmp6_build_header(rte_pktmbuf_mtod(m, uint8_t *), ICMP6_HDR_LEN, &ic);
	struct ip6_out d = {.dst = *dst, .port = port, .next_header = IP6_NH_ICMPV6};
	int rc = ip6_source_for(s, &d);
	if (rc != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return rc;
	}
	icmp6_fill_checksum(m, &d);
	stack_ping_arm(s, id, seq);
	s->ping.sent_tsc = rte_rdtsc();
	rc = ip6_output(s, m, &d);
	if (rc == 0)
		stack_count(s, STACK_EV_ICMP6_TX_ECHO);
	return rc;
}

/* RFC 4443 §2.4(e): the packets that must never cause an error. The multicast exceptions
 * (Packet Too Big, and Parameter Problem code 2 for an option whose type asks for it,
 * which ip6_ext_walk decides) pass. */
static bool icmp6_error_allowed(const struct rte_mbuf *orig, uint8_t type, uint8_t code)
{
	uint8_t hdr[IP6_HDR_LEN];
	const uint8_t *h = rte_pktmbuf_read(orig, 0, sizeof(hdr), hdr);
	if (h == NULL)
		return false;
	struct ip6_addr src, dst;
	memcpy(src.b, h + IP6_OFF_SRC, 16);
	memcpy(dst.b, h + IP6_OFF_DST, 16);
	if (ip6_is_unspecified(&src) || ip6_is_multicast(&src))
		return false; /* (e.6): no single node to tell */
	bool multicast_ok = type == ICMP6_PACKET_TOO_BIG || (type == ICMP6_PARAM_PROBLEM && code == 2);
	if (ip6_is_multicast(&dst) && !multicast_ok)
		return false; /* (e.3) */
	if (h[IP6_OFF_NEXT_HEADER] == IP6_NH_ICMPV6) {
		uint8_t t;
		const uint8_t *p = rte_pktmbuf_read(orig, IP6_HDR_LEN, 1, &t);
		if (p == NULL || icmp6_type_is_error(*p) || *p == ICMP6_REDIRECT)
			return false; /* (e.1), (e.2) */
	}
	return true;
}

void icmp6_send_error(struct stack *s, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t info)
{
	if (!icmp6_error_allowed(orig, type, code)) {
		s->drops[STACK_DROP_ICMP6_ERROR_SUPPRESSED]++;
		return;
	}
	if (!ratelimit_allow(&s->ip6->icmp_errors, s->now_ms)) {
		s->drops[STACK_DROP_ICMP6_RATE_LIMITED]++;
		return;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return;
	}
	uint32_t quote = RTE_MIN(rte_pktmbuf_pkt_len(orig), (uint32_t)ICMP6_ERROR_MAX_QUOTE);
	uint8_t *msg = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ICMP6_HDR_LEN + quote));
	if (msg == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return;
	}
	struct icmp6_repr ic = {.type = type, .code = code, .rest = info};
	icmp6_build_header(msg, ICMP6_HDR_LEN, &ic);
	const uint8_t *q = rte_pktmbuf_read(orig, 0, quote, msg + ICMP6_HDR_LEN);
	if (q != msg + ICMP6_HDR_LEN)
		memcpy(msg + ICMP6_HDR_LEN, q, quote);
	struct ip6_repr oip;
	memcpy(oip.src.b, msg + ICMP6_HDR_LEN + IP6_OFF_SRC, 16);
	memcpy(oip.dst.b, msg + ICMP6_HDR_LEN + IP6_OFF_DST, 16);
	struct ip6_out d = reply_dest(&oip, orig->port);
	bool routed = !d.on_link;
	if (routed && orig->port < NETCFG_MAX_PORTS)
		d.port = orig->port; /* from an address of the port it came in on */
	if (ip6_source_for(s, &d) != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return;
	}
	if (routed)
		d.port = NETCFG_PORT_ANY; /* chosen the source; the route picks the way */
	icmp6_fill_checksum(m, &d);
	if (ip6_output(s, m, &d) == 0)
		stack_count(s, STACK_EV_ICMP6_TX_ERROR);
}
