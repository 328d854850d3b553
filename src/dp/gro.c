#include "gro.h"

#include <string.h>

#include "stack/route.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/inet_addr.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"
#include "wire/tcp.h"

/* Flows merged at once in one burst: more are rare in 32 frames, and a flow that finds no
 * slot is only left unmerged. */
#define GRO_FLOWS 8

/* One frame that can join or start a merge: its headers, checked, whichever its family. */
struct gro_seg {
	uint8_t *eth;           /* the frame, in its only segment */
	uint8_t *ip;            /* at the IPv4 or IPv6 header */
	uint8_t *tcp;
	bool v6;
	struct inet_addr src, dst;
	uint32_t ip_class;      /* IPv4's TOS, or IPv6's Traffic Class and Flow Label (Linux's
				 * ipv6_gro_receive compares them too) */
	uint8_t ttl;            /* TTL or Hop Limit */
	uint32_t ip_len;        /* the datagram's length, its network header included */
	struct tcp_repr th;
	uint32_t payload;       /* TCP data bytes */
};

/* A merge in progress: the frame that leads it (kept where it stood in the burst) and what
 * the next segment must match. */
struct gro_flow {
	struct rte_mbuf *head;
	struct gro_seg first;   /* the leading frame's headers */
	uint32_t next_seq;
	uint32_t ip_len;        /* the merged datagram's length so far */
};

static bool gro_same_flow(const struct gro_seg *a, const struct gro_seg *b)
{
	return a->v6 == b->v6 && inet_addr_equal(&a->src, &b->src) &&
	       inet_addr_equal(&a->dst, &b->dst) && a->th.src_port == b->th.src_port &&
	       a->th.dst_port == b->th.dst_port;
}

/* The IPv4 header of g at g->ip (len bytes to the frame's end): TCP, no options, not a
 * fragment. */
static bool gro_parse_ip4(const struct rte_mbuf *m, struct gro_seg *g, size_t len)
{
	bool ip_good = (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	struct ip4_repr iph;
	if (ip4_parse(g->ip, len, !ip_good, &iph) != WIRE_OK || iph.hdr_len != IP4_HDR_MIN_LEN ||
	    iph.proto != IP4_PROTO_TCP || iph.mf || iph.frag_off != 0)
		return false;
	g->v6 = false;
	g->src = inet_addr_v4(iph.src);
	g->dst = inet_addr_v4(iph.dst);
	g->ip_class = iph.tos;
	g->ttl = iph.ttl;
	g->ip_len = iph.total_len;
	g->tcp = g->ip + IP4_HDR_MIN_LEN;
	return true;
}

/* The IPv6 header of g at g->ip: TCP right after the fixed header. A datagram with
 * extension headers is not merged (the merged one would have to repeat them, and what they
 * ask of the receiver may differ per datagram). */
static bool gro_parse_ip6(struct gro_seg *g, size_t len)
{
	struct ip6_repr iph;
	if (ip6_parse(g->ip, len, &iph) != WIRE_OK || iph.next_header != IP6_NH_TCP)
		return false;
	g->v6 = true;
	g->src = inet_addr_v6(&iph.src);
	g->dst = inet_addr_v6(&iph.dst);
	g->ip_class = (uint32_t)iph.tclass << 20 | iph.flow;
	g->ttl = iph.hop_limit;
	g->ip_len = IP6_HDR_LEN + iph.payload_len;
	g->tcp = g->ip + IP6_HDR_LEN;
	return true;
}

/* Parses frame m as a TCP segment for one of our addresses; false for anything else, which
 * passes to the stack as it came (and is dropped there with its counter if it is bad). */
static bool gro_parse(struct stack *s, struct rte_mbuf *m, struct gro_seg *g)
{
	if (m->nb_segs != 1)
		return false;
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	size_t len = rte_pktmbuf_data_len(m);
	struct eth_repr eth;
	if (eth_parse(frame, len, &eth) != WIRE_OK || eth.vlan_tagged)
		return false;
	g->eth = frame;
	g->ip = frame + eth.hdr_len;
	bool tcp = eth.ethertype == ETH_TYPE_IPV4 ? gro_parse_ip4(m, g, len - eth.hdr_len)
		   : eth.ethertype == ETH_TYPE_IPV6 && gro_parse_ip6(g, len - eth.hdr_len);
	if (!tcp)
		return false;
	const struct route *r = route_lookup(s->cfg.routes, &g->dst);
	if (r == NULL || r->type != ROUTE_LOCAL)
		return false;
	size_t tcp_len = g->ip_len - (size_t)(g->tcp - g->ip);
	if (tcp_parse(g->tcp, tcp_len, &g->th) != WIRE_OK)
		return false;
	g->payload = (uint32_t)(tcp_len - g->th.hdr_len);
	return true;
}

/* Whether g may be merged at all (else it only ends its flow's merge): data with ACK and
 * at most PSH, and a checksum that holds (checked here, once, for the stack too). */
static bool gro_mergeable(struct rte_mbuf *m, const struct gro_seg *g)
{
	if (g->payload == 0 || (g->th.flags & ~TCP_FLAG_PSH) != TCP_FLAG_ACK)
		return false;
	uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	if (l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (l4 != RTE_MBUF_F_RX_L4_CKSUM_GOOD) {
		uint32_t tcp_len = g->ip_len - (uint32_t)(g->tcp - g->ip);
		/* TCP is protocol 6 in both families' pseudo-headers. */
		uint32_t pseudo = inet_addr_csum_pseudo(&g->src, &g->dst, IP4_PROTO_TCP, tcp_len);
		if (wire_csum_finish(wire_csum_add(pseudo, g->tcp, tcp_len)) != 0)
			return false;
	}
	m->ol_flags = (m->ol_flags & ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) |
		      RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	return true;
}

/* The most a merged datagram may grow to: IPv4's total length and IPv6's payload length
 * are 16 bits (RFC 791, RFC 8200 §3; no jumbograms). */
static uint32_t gro_ip_len_max(const struct gro_seg *g)
{
	return g->v6 ? IP6_HDR_LEN + UINT16_MAX : IP4_MAX_LEN;
}

/* Whether g continues f's byte stream with headers the receiver would treat alike (the
 * Ethernet header too, as Linux's eth_gro_receive: a frame for another station must not
 * ride into the stack on one for us). */
static bool gro_continues(const struct gro_flow *f, const struct gro_seg *g)
{
	const struct gro_seg *h = &f->first;
	return !(h->th.flags & TCP_FLAG_PSH) && g->th.seq == f->next_seq &&
	       memcmp(g->eth, h->eth, ETH_HDR_LEN) == 0 &&
	       g->th.ack == h->th.ack && g->th.window == h->th.window &&
	       g->ip_class == h->ip_class && g->ttl == h->ttl &&
	       g->th.hdr_len == h->th.hdr_len &&
	       memcmp(g->tcp + TCP_HDR_MIN_LEN, h->tcp + TCP_HDR_MIN_LEN,
		      g->th.hdr_len - TCP_HDR_MIN_LEN) == 0 &&
	       f->ip_len + g->payload <= gro_ip_len_max(h);
}

/* Appends g's data (m) to f's leading frame; false when the chain cannot take it. */
static bool gro_append(struct gro_flow *f, struct rte_mbuf *m, const struct gro_seg *g)
{
	uint32_t hdrs = (uint32_t)(g->tcp - g->eth) + (uint32_t)g->th.hdr_len;
	rte_pktmbuf_adj(m, (uint16_t)hdrs);
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - g->payload)); /* padding */
	if (rte_pktmbuf_chain(f->head, m) != 0) {
		rte_pktmbuf_prepend(m, (uint16_t)hdrs); /* untouched: the stack takes it alone */
		return false;
	}
	f->next_seq += g->payload;
	f->ip_len += g->payload;
	uint8_t *ip = f->first.ip;
	if (f->first.v6) {
		wire_put_be16(ip + IP6_OFF_PAYLOAD_LEN, (uint16_t)(f->ip_len - IP6_HDR_LEN));
	} else {
		wire_put_be16(ip + IP4_OFF_TOTAL_LEN, (uint16_t)f->ip_len);
		wire_put_be16(ip + IP4_OFF_CSUM, 0);
		wire_put_be16(ip + IP4_OFF_CSUM, wire_csum(ip, IP4_HDR_MIN_LEN));
	}
	if (g->th.flags & TCP_FLAG_PSH) {
		/* The last segment's PSH ends the merge (Linux's tcp_gro_receive flushes). */
		f->first.tcp[TCP_OFF_FLAGS] |= TCP_FLAG_PSH;
		f->first.th.flags |= TCP_FLAG_PSH;
	}
	return true;
}

/* Makes m, of flow g, the leader of a merge in slot f. */
static void gro_lead(struct gro_flow *f, struct rte_mbuf *m, const struct gro_seg *g)
{
	uint32_t frame = (uint32_t)(g->ip - rte_pktmbuf_mtod(m, uint8_t *)) + g->ip_len;
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - frame)); /* padding */
	*f = (struct gro_flow){.head = m, .first = *g, .next_seq = g->th.seq + g->payload,
			       .ip_len = g->ip_len};
}

uint16_t gro_burst(struct stack *s, struct rte_mbuf **pkts, uint16_t n)
{
	struct gro_flow flows[GRO_FLOWS];
	unsigned nb_flows = 0;
	uint16_t out = 0;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct gro_seg g;
		pkts[out++] = m;
		if (!gro_parse(s, m, &g))
			continue;
		struct gro_flow *f = NULL;
		for (unsigned k = 0; k < nb_flows && f == NULL; k++)
			if (gro_same_flow(&flows[k].first, &g))
				f = &flows[k];
		bool ok = gro_mergeable(m, &g);
		if (ok && f != NULL && gro_continues(f, &g) && gro_append(f, m, &g)) {
			out--; /* it lives on in the leader */
			stack_count(s, STACK_EV_GRO_MERGED);
			continue;
		}
		/* Anything else of the flow ends its merge: the next may start here. */
		if (f == NULL && ok && nb_flows < GRO_FLOWS)
			f = &flows[nb_flows++];
		if (f != NULL && ok)
			gro_lead(f, m, &g);
		else if (f != NULL)
			*f = flows[--nb_flows];
	}
	return out;
}
