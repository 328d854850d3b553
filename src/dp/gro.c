#include "gro.h"

#include <string.h>

#include "stack/route.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/tcp.h"

/* Flows merged at once in one burst: more are rare in 32 frames, and a flow that finds no
 * slot is only left unmerged. */
#define GRO_FLOWS 8

/* One frame that can join or start a merge: its headers, checked. */
struct gro_seg {
	uint8_t *eth;           /* the frame, in its only segment */
	uint8_t *ip;            /* at the IPv4 header */
	uint8_t *tcp;
	struct ip4_repr iph;
	struct tcp_repr th;
	uint32_t payload;       /* TCP data bytes */
};

/* A merge in progress: the frame that leads it (kept where it stood in the burst) and what
 * the next segment must match. */
struct gro_flow {
	struct rte_mbuf *head;
	struct gro_seg first;   /* the leading frame's headers */
	uint32_t next_seq;
	uint32_t total_len;     /* the merged datagram's IPv4 length so far */
};

static bool gro_same_flow(const struct gro_seg *a, const struct gro_seg *b)
{
	return a->iph.src == b->iph.src && a->iph.dst == b->iph.dst &&
	       a->th.src_port == b->th.src_port && a->th.dst_port == b->th.dst_port;
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
	if (eth_parse(frame, len, &eth) != WIRE_OK || eth.vlan_tagged ||
	    eth.ethertype != ETH_TYPE_IPV4)
		return false;
	g->eth = frame;
	g->ip = frame + eth.hdr_len;
	bool ip_good = (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	if (ip4_parse(g->ip, len - eth.hdr_len, !ip_good, &g->iph) != WIRE_OK ||
	    g->iph.hdr_len != IP4_HDR_MIN_LEN || g->iph.proto != IP4_PROTO_TCP || g->iph.mf ||
	    g->iph.frag_off != 0)
		return false;
	const struct route *r = route_lookup4(s->cfg.routes, g->iph.dst);
	if (r == NULL || r->type != ROUTE_LOCAL)
		return false;
	g->tcp = g->ip + IP4_HDR_MIN_LEN;
	size_t tcp_len = g->iph.total_len - IP4_HDR_MIN_LEN;
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
	if (l4 != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    tcp_checksum(g->iph.src, g->iph.dst, g->tcp, g->iph.total_len - IP4_HDR_MIN_LEN) != 0)
		return false;
	m->ol_flags = (m->ol_flags & ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) |
		      RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	return true;
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
	       g->iph.tos == h->iph.tos && g->iph.ttl == h->iph.ttl &&
	       g->th.hdr_len == h->th.hdr_len &&
	       memcmp(g->tcp + TCP_HDR_MIN_LEN, h->tcp + TCP_HDR_MIN_LEN,
		      g->th.hdr_len - TCP_HDR_MIN_LEN) == 0 &&
	       f->total_len + g->payload <= IP4_MAX_LEN;
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
	f->total_len += g->payload;
	uint8_t *ip = f->first.ip;
	wire_put_be16(ip + IP4_OFF_TOTAL_LEN, (uint16_t)f->total_len);
	wire_put_be16(ip + IP4_OFF_CSUM, 0);
	wire_put_be16(ip + IP4_OFF_CSUM, wire_csum(ip, IP4_HDR_MIN_LEN));
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
	uint32_t frame = (uint32_t)(g->ip - rte_pktmbuf_mtod(m, uint8_t *)) + g->iph.total_len;
	rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) - frame)); /* padding */
	*f = (struct gro_flow){.head = m, .first = *g, .next_seq = g->th.seq + g->payload,
			       .total_len = g->iph.total_len};
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
