/* The IPv6 side of reassembly (RFC 8200 §4.5): a fragment described to the shared table
 * (stack/reass.h) and, once a datagram is whole, its headers put back together: the
 * fragment header taken out, the Next Header field that named it given the fragment
 * header's own, the payload length the whole datagram's. */
#include "ip6.h"

#include "wire/bytes.h"
#include "wire/icmp6.h"

/* RFC 8200 §4.5: 60 seconds, where IPv4's table has RFC 791's suggestion of 30 (as Linux's
 * ipfrag_time and ip6frag_time). */
#define IP6_REASS_TIMEOUT_MS 60000u

int ip6_reass_init(struct stack *s, const struct stack_params *p)
{
	struct reass_params rp = p->reass;
	rp.timeout_ms = IP6_REASS_TIMEOUT_MS;
	s->ip6->reass = reass_create(&rp, p->socket_id);
	return s->ip6->reass != NULL ? 0 : -ENOMEM;
}

static void ip6_reass_sync_drops(struct stack *s)
{
	static const enum stack_drop drop_for[REASS_VERDICT_COUNT] = {
		[REASS_DUPLICATE] = STACK_DROP_IP6_REASS_DUPLICATE,
		[REASS_OVERLAP] = STACK_DROP_IP6_REASS_OVERLAP,
		[REASS_TINY] = STACK_DROP_IP6_REASS_TINY,
		[REASS_TOO_BIG] = STACK_DROP_IP6_REASS_TOO_BIG,
		[REASS_BAD_LAST] = STACK_DROP_IP6_REASS_BAD_LAST,
		[REASS_TOO_MANY_FRAGS] = STACK_DROP_IP6_REASS_TOO_MANY,
		[REASS_NO_MEMORY] = STACK_DROP_IP6_REASS_NO_MEMORY,
		[REASS_TIMEOUT] = STACK_DROP_IP6_REASS_TIMEOUT,
	};
	stack_reass_sync_drops(s, s->ip6->reass, drop_for);
}

static void ip6_reass_timed_out(void *arg, const struct rte_mbuf *first)
{
	/* RFC 8200 §4.5: Time Exceeded code 1, when the first fragment had arrived. */
	icmp6_send_error(arg, first, ICMP6_TIME_EXCEEDED, ICMP6_TIMEX_REASS, 0);
}

void ip6_reass_tick(struct stack *s)
{
	if (reass_expire(s->ip6->reass, s->now_ms, ip6_reass_timed_out, s) != 0)
		ip6_reass_sync_drops(s);
}

/* The fragment header of the whole datagram head (its first fragment, whose chain was walked
 * when it arrived: only Hop-by-Hop, Routing and Destination Options headers, each with its
 * length in 8-octet units, can precede it), and in *field the offset of the Next Header
 * field naming it. Returns 0 when it is not in the first segment (not reached). */
static size_t ip6_find_frag_header(const uint8_t *h, size_t len, size_t *field)
{
	*field = IP6_OFF_NEXT_HEADER;
	size_t off = IP6_HDR_LEN;
	for (unsigned n = 0; n < IP6_EXT_MAX && h[*field] != IP6_NH_FRAGMENT; n++) {
		if (off + 2 > len)
			return 0;
		*field = off;
		off += ((size_t)h[off + 1] + 1) * 8;
	}
	return h[*field] == IP6_NH_FRAGMENT && off + IP6_FRAG_HDR_LEN <= len ? off : 0;
}

/* Takes the fragment header out of the whole datagram head; false when it is not where
 * it should be. */
static bool ip6_reass_fix_headers(struct rte_mbuf *head)
{
	uint8_t *h = rte_pktmbuf_mtod(head, uint8_t *);
	size_t field;
	size_t frag_off = ip6_find_frag_header(h, rte_pktmbuf_data_len(head), &field);
	if (frag_off == 0)
		return false;
	h[field] = h[frag_off]; /* the fragment header's Next Header */
	memmove(h + IP6_FRAG_HDR_LEN, h, frag_off);
	rte_pktmbuf_adj(head, IP6_FRAG_HDR_LEN);
	h = rte_pktmbuf_mtod(head, uint8_t *);
	wire_put_be16(h + IP6_OFF_PAYLOAD_LEN,
		      (uint16_t)(rte_pktmbuf_pkt_len(head) - IP6_HDR_LEN));
	return true;
}

struct rte_mbuf *ip6_reass_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				 const struct ip6_ext_info *ext)
{
	stack_count(s, STACK_EV_IP6_FRAGS_RX);
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	const size_t frag_off = ext->frag_hdr_off;
	const size_t payload_off = frag_off + IP6_FRAG_HDR_LEN;
	struct reass_piece p = {
		.src = inet_addr_v6(&ip->src), .dst = inet_addr_v6(&ip->dst), .id = ext->frag.id,
		.proto = h[frag_off], .last = !ext->frag.more, .off = ext->frag.offset,
		.plen = (uint32_t)(IP6_HDR_LEN + ip->payload_len - payload_off),
		.hdr_len = (uint16_t)payload_off, .size_hdr = (uint16_t)(frag_off - IP6_HDR_LEN),
		.size_hdr_min = 0};
	enum reass_verdict v;
	struct rte_mbuf *done = reass_input(s->ip6->reass, s->now_ms, m, &p, &v);
	ip6_reass_sync_drops(s);
	if (done == NULL)
		return NULL;
	if (!ip6_reass_fix_headers(done)) {
		stack_drop(s, STACK_DROP_IP6_BAD_EXT, done);
		return NULL;
	}
	stack_count(s, STACK_EV_IP6_REASSEMBLED);
	/* A NIC's L4 checksum verdict was about one fragment, not the datagram. */
	done->ol_flags &= ~RTE_MBUF_F_RX_L4_CKSUM_MASK;
	return done;
}
