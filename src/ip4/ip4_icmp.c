/* ICMP (RFC 792): echo, and the error messages of a host and a router (RFC 1122 §3.2.2,
 * RFC 1812 §4.3), rate-limited (RFC 1812 §4.3.2.8). */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include <rte_ip.h>

#include "ip4.h"
#include "stack/exception.h"
#include "stack/stack_internal.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/icmp4.h"

/* RFC 1812 §4.3.2.3: quote as much of the original as fits in a 576-byte datagram. */
#define ICMP4_ERROR_MAX_LEN 576

static void icmp4_echo_reply(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip)
{
	rte_pktmbuf_adj(m, (uint16_t)ip->hdr_len);
	uint8_t *h = rte_pktmbuf_mtod(m, uint8_t *);
	/* Only the type changes (RFC 792): update the checksum for that word (RFC 1624). */
	uint16_t old_word = (uint16_t)(ICMP4_ECHO_REQUEST << 8 | h[ICMP4_OFF_CODE]);
	uint16_t new_word = (uint16_t)(ICMP4_ECHO_REPLY << 8 | h[ICMP4_OFF_CODE]);
	h[ICMP4_OFF_TYPE] = ICMP4_ECHO_REPLY;
	uint16_t csum = wire_csum_update16(wire_get_be16(h + ICMP4_OFF_CSUM), old_word, new_word);
	if (csum == 0) {
		/* Eqn. 3 gives 0 when the new sum is -0 (right), but also when the whole reply is
		 * zeros (id, seq and data 0), where only 0xffff verifies: tell them apart by
		 * summing the message (one reply in 65536 gets here). */
		uint16_t sum;
		wire_put_be16(h + ICMP4_OFF_CSUM, 0);
		if (rte_raw_cksum_mbuf(m, 0, rte_pktmbuf_pkt_len(m), &sum) == 0 && sum == 0)
			csum = 0xffff;
	}
	wire_put_be16(h + ICMP4_OFF_CSUM, csum);
	/* Options of the request are not reflected (RFC 1122 §3.2.2.6 makes that a MAY for
	 * record route and timestamp). */
	if (ip4_output(s, m, IP4_PROTO_ICMP, ip->dst, ip->src, ip->tos, 0, false) == 0)
		stack_count(s, STACK_EV_ICMP_TX_ECHO_REPLY);
}

/* Validates the datagram an ICMP error quotes, q[0..len): RFC 792 quotes its IPv4 header
 * and at least the first 64 bits of its data. Anyone can send such a message, so before a
 * transport sees it: a whole IPv4 header, 8 bytes past it, a total length that held them, the
 * first fragment (the only one with ports), and a source that is one of our addresses (we
 * sent it). The quoted checksum is not checked: routers and NATs rewrite quoted headers. Sets
 * *l4_len to the quoted transport bytes, no further than the quoted total length. */
static bool icmp4_quote_parse(struct stack *s, const uint8_t *q, size_t len,
			      struct ip4_repr *out, size_t *l4_len)
{
	if (len < IP4_HDR_MIN_LEN || q[IP4_OFF_VER_IHL] >> 4 != 4)
		return false;
	size_t hl = (size_t)(q[IP4_OFF_VER_IHL] & 0xf) * 4;
	if (hl < IP4_HDR_MIN_LEN || len < hl + 8)
		return false;
	uint16_t total = wire_get_be16(q + IP4_OFF_TOTAL_LEN);
	uint16_t frag = wire_get_be16(q + IP4_OFF_FRAG);
	if (total < hl + 8 || (frag & IP4_FRAG_OFF_MASK) != 0)
		return false;
	*out = (struct ip4_repr){
		.hdr_len = hl,
		.tos = q[IP4_OFF_TOS],
		.total_len = total,
		.id = wire_get_be16(q + IP4_OFF_ID),
		.df = (frag & IP4_FLAG_DF) != 0,
		.mf = (frag & IP4_FLAG_MF) != 0,
		.ttl = q[IP4_OFF_TTL],
		.proto = q[IP4_OFF_PROTO],
		.src = wire_get_be32(q + IP4_OFF_SRC),
		.dst = wire_get_be32(q + IP4_OFF_DST),
	};
	const struct route *r = route_lookup4(s->cfg.routes, out->src);
	if (r == NULL || r->type != ROUTE_LOCAL)
		return false;
	*l4_len = (len < total ? len : total) - hl;
	return true;
}

/* Destination unreachable, time exceeded, parameter problem: to the transport that sent the
 * quoted datagram (RFC 1122 §3.2.2.1, §4.1.3.3, §4.2.3.9). Frees m. */
static void icmp4_error_input(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip,
			      const struct icmp4_repr *ic)
{
	/* Read through one bounded copy: a reassembled message may span segments. */
	uint8_t copy[ICMP4_ERROR_MAX_LEN];
	uint32_t off = (uint32_t)ip->hdr_len + ICMP4_HDR_LEN;
	uint32_t len = rte_pktmbuf_pkt_len(m) - off;
	if (len > sizeof(copy))
		len = sizeof(copy);
	const uint8_t *q = rte_pktmbuf_read(m, off, len, copy);
	struct ip4_repr qip;
	size_t l4_len;
	if (q == NULL || !icmp4_quote_parse(s, q, len, &qip, &l4_len)) {
		stack_drop(s, STACK_DROP_ICMP_BAD_QUOTE, m);
		return;
	}
	/* The transport that sent the quoted datagram hears of it; ICMP's own (echo) has
	 * nobody to tell. */
	const struct stack_proto *transport = s->by_ip_proto[qip.proto];
	if (transport != NULL && transport->ip4_icmp_error != NULL)
		transport->ip4_icmp_error(s, &qip, q + qip.hdr_len, l4_len, ic->type, ic->code,
					  ic->rest);
	rte_pktmbuf_free(m);
}

void icmp4_input(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip, bool bcast)
{
	stack_count(s, STACK_EV_ICMP_RX);
	uint32_t len = rte_pktmbuf_pkt_len(m) - (uint32_t)ip->hdr_len;
	if (len < ICMP4_HDR_LEN || rte_pktmbuf_data_len(m) < ip->hdr_len + ICMP4_HDR_LEN) {
		stack_drop(s, STACK_DROP_ICMP_TRUNCATED, m);
		return;
	}
	/* The message may span segments after reassembly: sum it segment by segment. */
	uint16_t sum;
	if (rte_raw_cksum_mbuf(m, (uint32_t)ip->hdr_len, len, &sum) != 0 || sum != 0xffff) {
		stack_drop(s, STACK_DROP_ICMP_BAD_CHECKSUM, m);
		return;
	}
	struct icmp4_repr ic;
	icmp4_parse(rte_pktmbuf_mtod_offset(m, const uint8_t *, ip->hdr_len), ICMP4_HDR_LEN,
		    false, &ic);
	switch (ic.type) {
	case ICMP4_ECHO_REQUEST:
		stack_count(s, STACK_EV_ICMP_RX_ECHO);
		if (bcast) {
			/* RFC 1122 §3.2.2.6 lets a host ignore broadcast echoes; we do, as Linux
			 * does by default, so we are no smurf amplifier. */
			stack_drop(s, STACK_DROP_ICMP_BROADCAST_ECHO, m);
			return;
		}
		icmp4_echo_reply(s, m, ip);
		return;
	case ICMP4_DEST_UNREACH:
	case ICMP4_TIME_EXCEEDED:
	case ICMP4_PARAM_PROBLEM:
		stack_count(s, STACK_EV_ICMP_RX_ERROR);
		/* It may quote the kernel's traffic (its path MTU, its unreachable peers): the
		 * kernel ignores errors about flows it does not have. */
		stack_exception_copy(s, m, STACK_EV_KERNEL_ICMP);
		icmp4_error_input(s, m, ip, &ic);
		return;
	case ICMP4_ECHO_REPLY:
		if (stack_ping_match(s, ic.rest, len)) {
			rte_pktmbuf_free(m);
			return;
		}
		/* Not our ping's: the kernel's own ping, on the exception path, may wait for it. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_ICMP))
			rte_pktmbuf_free(m);
		return;
	default:
		if (!stack_exception(s, m, STACK_EV_KERNEL_ICMP))
			stack_drop(s, STACK_DROP_ICMP_UNHANDLED, m);
		return;
	}
}

int stack_ping_send(struct stack *s, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size)
{
	if (size > IP4_MAX_LEN - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN)
		return -EMSGSIZE;
	uint32_t total = ICMP4_HDR_LEN + size;
	struct rte_mbuf *head = stack_ping_chain(s, total);
	if (head == NULL)
		return -ENOBUFS;
	uint8_t *h = rte_pktmbuf_mtod(head, uint8_t *);
	struct icmp4_repr ic = {.type = ICMP4_ECHO_REQUEST, .rest = (uint32_t)id << 16 | seq};
	icmp4_build_header(h, ICMP4_HDR_LEN, &ic);
	/* rte_raw_cksum_mbuf sums native-endian words: its complement is stored as is. */
	uint16_t sum;
	rte_raw_cksum_mbuf(head, 0, total, &sum);
	sum = (uint16_t)~sum;
	memcpy(h + ICMP4_OFF_CSUM, &sum, sizeof(sum));
	stack_ping_arm(s, id, seq);
	s->ping.sent_tsc = rte_rdtsc();
	return ip4_output(s, head, IP4_PROTO_ICMP, 0, dst, 0, 0, false);
}

/* RFC 1122 §3.2.2 and RFC 1812 §4.3.2.7: the datagrams that must never cause an error. */
static bool icmp4_error_allowed(struct stack *s, const struct rte_mbuf *orig)
{
	uint8_t hdr[IP4_HDR_MIN_LEN];
	const uint8_t *h = rte_pktmbuf_read(orig, 0, sizeof(hdr), hdr);
	if (h == NULL)
		return false;
	uint32_t src = wire_get_be32(h + IP4_OFF_SRC);
	uint32_t dst = wire_get_be32(h + IP4_OFF_DST);
	uint16_t frag = wire_get_be16(h + IP4_OFF_FRAG);
	size_t hl = (size_t)(h[IP4_OFF_VER_IHL] & 0xf) * 4;
	if ((frag & IP4_FRAG_OFF_MASK) != 0)
		return false; /* not the first fragment */
	/* A source that is not one host: zero, loopback, broadcast, multicast or class E. */
	if (ip4_is_zeronet(src) || ip4_is_loopback(src) || ip4_is_multicast(src) ||
	    ip4_is_limited_broadcast(src) || (src >> 28) == 0xf || ip4_is_multicast(dst) ||
	    ip4_is_limited_broadcast(dst))
		return false;
	const struct route *r = route_lookup4(s->cfg.routes, dst);
	if (r != NULL && r->type == ROUTE_BROADCAST)
		return false;
	r = route_lookup4(s->cfg.routes, src);
	if (r != NULL && r->type == ROUTE_BROADCAST)
		return false; /* a subnet's broadcast address as source */
	if (h[IP4_OFF_PROTO] == IP4_PROTO_ICMP) {
		uint8_t type;
		const uint8_t *t = rte_pktmbuf_read(orig, (uint32_t)hl, 1, &type);
		if (t == NULL || icmp4_type_is_error(*t))
			return false;
	}
	return true;
}

void icmp4_send_error(struct stack *s, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t info)
{
	if (!icmp4_error_allowed(s, orig)) {
		s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED]++;
		return;
	}
	if (!ratelimit_allow(&s->icmp_errors, s->now_ms)) {
		s->drops[STACK_DROP_ICMP_RATE_LIMITED]++;
		return;
	}
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return;
	}
	uint32_t quote = rte_pktmbuf_pkt_len(orig);
	if (quote > ICMP4_ERROR_MAX_LEN - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN)
		quote = ICMP4_ERROR_MAX_LEN - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN;
	uint8_t *msg = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(ICMP4_HDR_LEN + quote));
	if (msg == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return;
	}
	struct icmp4_repr ic = {.type = type, .code = code, .rest = info};
	icmp4_build_header(msg, ICMP4_HDR_LEN, &ic);
	const uint8_t *q = rte_pktmbuf_read(orig, 0, quote, msg + ICMP4_HDR_LEN);
	if (q != msg + ICMP4_HDR_LEN)
		memcpy(msg + ICMP4_HDR_LEN, q, quote);
	wire_put_be16(msg + ICMP4_OFF_CSUM, wire_csum(msg, ICMP4_HDR_LEN + quote));

	const uint8_t *oh = msg + ICMP4_HDR_LEN;
	uint32_t orig_src = wire_get_be32(oh + IP4_OFF_SRC);
	/* RFC 1812 §4.3.2.4: the source is the address of the interface the original arrived
	 * on, so traceroute shows the hop it crossed. */
	uint32_t src = orig->port < NETCFG_MAX_PORTS
			       ? netcfg_source_for(&s->cfg, orig->port, orig_src) : 0;
	/* RFC 1812 §4.3.2.5: errors are sent with precedence 6 (internetwork control). */
	if (ip4_output(s, m, IP4_PROTO_ICMP, src, orig_src, 0xc0, 0, false) != 0)
		return;
	stack_count(s, type == ICMP4_DEST_UNREACH     ? STACK_EV_ICMP_TX_UNREACH
		       : type == ICMP4_TIME_EXCEEDED ? STACK_EV_ICMP_TX_TIME_EXCEEDED
						     : STACK_EV_ICMP_TX_PARAM_PROBLEM);
}
