/* TCP segments (RFC 9293 §3.1) and their options (RFC 9293 §3.2, RFC 7323, RFC 2018). */
#include "tcp.h"

#include "bytes.h"
#include "checksum.h"
#include "ipv4.h"

#define TCP_OPT_OFF_LEN 1   /* an option's length byte follows its kind (RFC 9293 §3.1) */
#define TCP_OPT_MIN_LEN 2   /* kind and length bytes count in the length */

/* Reads the option at opts[0..opt_len), whose kind is not EOL or NOP and whose length byte
 * has been checked to lie in 2..bytes left, into o. */
static enum wire_status tcp_option_read(const uint8_t *opt, size_t opt_len,
					struct tcp_options *o)
{
	const uint8_t *data = opt + TCP_OPT_MIN_LEN;
	size_t n, i;

	switch (opt[0]) {
	case TCP_OPT_MSS:
		if (opt_len != TCP_OPT_MSS_LEN)
			return WIRE_BAD_OPTION;
		o->has_mss = true;
		o->mss = wire_get_be16(data);
		break;
	case TCP_OPT_WSCALE:
		if (opt_len != TCP_OPT_WSCALE_LEN)
			return WIRE_BAD_OPTION;
		o->has_wscale = true;
		/* RFC 7323 §2.3: a shift above 14 "SHOULD" be logged but "MUST" be used as 14. */
		o->wscale = data[0] > TCP_WSCALE_MAX ? TCP_WSCALE_MAX : data[0];
		break;
	case TCP_OPT_SACK_PERM:
		if (opt_len != TCP_OPT_SACK_PERM_LEN)
			return WIRE_BAD_OPTION;
		o->sack_permitted = true;
		break;
	case TCP_OPT_TIMESTAMPS:
		if (opt_len != TCP_OPT_TIMESTAMPS_LEN)
			return WIRE_BAD_OPTION;
		o->has_timestamps = true;
		o->tsval = wire_get_be32(data);
		o->tsecr = wire_get_be32(data + 4);
		break;
	case TCP_OPT_SACK:
		/* RFC 2018 §3: length 2 + 8n. n = 0 carries nothing; n > 4 cannot fit in a real
		 * option area (42 > 40) and would overflow sack_blocks. */
		if (opt_len < TCP_OPT_SACK_BASE_LEN + TCP_OPT_SACK_BLOCK_LEN ||
		    (opt_len - TCP_OPT_SACK_BASE_LEN) % TCP_OPT_SACK_BLOCK_LEN != 0)
			return WIRE_BAD_OPTION;
		n = (opt_len - TCP_OPT_SACK_BASE_LEN) / TCP_OPT_SACK_BLOCK_LEN;
		if (n > TCP_SACK_MAX_BLOCKS)
			return WIRE_BAD_OPTION;
		for (i = 0; i < n; i++) {
			const uint8_t *b = data + i * TCP_OPT_SACK_BLOCK_LEN;

			o->sack_blocks[i].left = wire_get_be32(b);
			o->sack_blocks[i].right = wire_get_be32(b + 4);
		}
		o->sack_count = (uint8_t)n;
		break;
	default:
		break;      /* RFC 9293 §3.2: unknown options are skipped by their length */
	}
	return WIRE_OK;
}

enum wire_status tcp_options_parse(const uint8_t *opts, size_t len, struct tcp_options *out)
{
	struct tcp_options o = { 0 };
	size_t i = 0;

	while (i < len) {
		uint8_t kind = opts[i];
		size_t opt_len;
		enum wire_status st;

		if (kind == TCP_OPT_EOL)
			break;      /* the rest of the area is padding (RFC 9293 §3.2) */
		if (kind == TCP_OPT_NOP) {
			i++;
			continue;
		}
		/* i < len here, so len - i does not wrap. */
		if (len - i < TCP_OPT_MIN_LEN)
			return WIRE_BAD_OPTION;
		opt_len = opts[i + TCP_OPT_OFF_LEN];
		if (opt_len < TCP_OPT_MIN_LEN || opt_len > len - i)
			return WIRE_BAD_OPTION;
		/* A repeated option overwrites the earlier one: the last wins (see tcp.h). */
		st = tcp_option_read(opts + i, opt_len, &o);
		if (st != WIRE_OK)
			return st;
		i += opt_len;
	}
	*out = o;
	return WIRE_OK;
}

enum wire_status tcp_parse(const uint8_t *buf, size_t len, struct tcp_repr *out)
{
	struct tcp_repr r;
	enum wire_status st;

	if (len < TCP_HDR_MIN_LEN)
		return WIRE_TRUNCATED;
	r.hdr_len = (size_t)(buf[TCP_OFF_DATA_OFF] >> 4) * 4; /* counts 32-bit words */
	if (r.hdr_len < TCP_HDR_MIN_LEN || r.hdr_len > len)
		return WIRE_BAD_HDR_LEN;
	st = tcp_options_parse(buf + TCP_HDR_MIN_LEN, r.hdr_len - TCP_HDR_MIN_LEN, &r.options);
	if (st != WIRE_OK)
		return st;

	r.src_port = wire_get_be16(buf + TCP_OFF_SRC_PORT);
	r.dst_port = wire_get_be16(buf + TCP_OFF_DST_PORT);
	r.seq = wire_get_be32(buf + TCP_OFF_SEQ);
	r.ack = wire_get_be32(buf + TCP_OFF_ACK);
	r.flags = buf[TCP_OFF_FLAGS];
	r.window = wire_get_be16(buf + TCP_OFF_WINDOW);
	r.urgent = wire_get_be16(buf + TCP_OFF_URGENT);

	/* Port 0 is reserved (RFC 6335 §6): no connection can use it. */
	if (r.src_port == 0 || r.dst_port == 0)
		return WIRE_BAD_FIELD;
	/* SYN with FIN or RST is no valid event of the RFC 9293 §3.10 state machine and a
	 * classic scanner probe, but peers notice what a stack does with it, so the flags
	 * pass and tcp_input answers as Linux does: a reset is a reset (RFC 5961 §3), a
	 * SYN+FIN on a synchronized connection a SYN (challenge ACK, §4), a listener drops
	 * SYN+FIN. */

	*out = r;
	return WIRE_OK;
}

/* The bytes that the options of o take in tcp_build's layout, SACK included. */
static size_t tcp_options_fixed_len(const struct tcp_options *o)
{
	size_t n = 0;

	if (o->has_mss)
		n += TCP_OPT_MSS_LEN;
	if (o->has_timestamps)
		n += 2 + TCP_OPT_TIMESTAMPS_LEN;      /* NOPs or SACK-permitted, then TS */
	else if (o->sack_permitted)
		n += 2 + TCP_OPT_SACK_PERM_LEN;       /* NOP, NOP, SACK-permitted */
	if (o->has_wscale)
		n += 1 + TCP_OPT_WSCALE_LEN;          /* NOP, window scale */
	return n;                                     /* at most 20 */
}

size_t tcp_build(uint8_t *buf, size_t cap, const struct tcp_repr *r)
{
	const struct tcp_options *o = &r->options;
	size_t fixed = tcp_options_fixed_len(o);
	size_t sacks = o->sack_count < TCP_SACK_MAX_BLOCKS ? o->sack_count : TCP_SACK_MAX_BLOCKS;
	size_t hdr_len, i, p;

	/* Fit as many SACK blocks as the 40 bytes leave, NOP NOP kind length first. */
	while (sacks > 0 && fixed + 2 + TCP_OPT_SACK_BASE_LEN + sacks * TCP_OPT_SACK_BLOCK_LEN >
	       TCP_OPTS_MAX_LEN)
		sacks--;
	hdr_len = TCP_HDR_MIN_LEN + fixed;
	if (sacks > 0)
		hdr_len += 2 + TCP_OPT_SACK_BASE_LEN + sacks * TCP_OPT_SACK_BLOCK_LEN;
	if (cap < hdr_len)
		return 0;

	wire_put_be16(buf + TCP_OFF_SRC_PORT, r->src_port);
	wire_put_be16(buf + TCP_OFF_DST_PORT, r->dst_port);
	wire_put_be32(buf + TCP_OFF_SEQ, r->seq);
	wire_put_be32(buf + TCP_OFF_ACK, r->ack);
	buf[TCP_OFF_DATA_OFF] = (uint8_t)(hdr_len / 4 << 4);  /* reserved bits 0 */
	buf[TCP_OFF_FLAGS] = r->flags;
	wire_put_be16(buf + TCP_OFF_WINDOW, r->window);
	wire_put_be16(buf + TCP_OFF_CSUM, 0);
	wire_put_be16(buf + TCP_OFF_URGENT, r->urgent);

	p = TCP_HDR_MIN_LEN;
	if (o->has_mss) {
		buf[p++] = TCP_OPT_MSS;
		buf[p++] = TCP_OPT_MSS_LEN;
		wire_put_be16(buf + p, o->mss);
		p += 2;
	}
	if (o->has_timestamps) {
		if (o->sack_permitted) {
			buf[p++] = TCP_OPT_SACK_PERM;
			buf[p++] = TCP_OPT_SACK_PERM_LEN;
		} else {
			buf[p++] = TCP_OPT_NOP;
			buf[p++] = TCP_OPT_NOP;
		}
		buf[p++] = TCP_OPT_TIMESTAMPS;
		buf[p++] = TCP_OPT_TIMESTAMPS_LEN;
		wire_put_be32(buf + p, o->tsval);
		wire_put_be32(buf + p + 4, o->tsecr);
		p += 8;
	} else if (o->sack_permitted) {
		buf[p++] = TCP_OPT_NOP;
		buf[p++] = TCP_OPT_NOP;
		buf[p++] = TCP_OPT_SACK_PERM;
		buf[p++] = TCP_OPT_SACK_PERM_LEN;
	}
	if (o->has_wscale) {
		buf[p++] = TCP_OPT_NOP;
		buf[p++] = TCP_OPT_WSCALE;
		buf[p++] = TCP_OPT_WSCALE_LEN;
		buf[p++] = o->wscale;
	}
	if (sacks > 0) {
		buf[p++] = TCP_OPT_NOP;
		buf[p++] = TCP_OPT_NOP;
		buf[p++] = TCP_OPT_SACK;
		buf[p++] = (uint8_t)(TCP_OPT_SACK_BASE_LEN + sacks * TCP_OPT_SACK_BLOCK_LEN);
		for (i = 0; i < sacks; i++) {
			wire_put_be32(buf + p, o->sack_blocks[i].left);
			wire_put_be32(buf + p + 4, o->sack_blocks[i].right);
			p += TCP_OPT_SACK_BLOCK_LEN;
		}
	}
	return hdr_len;
}

uint16_t tcp_checksum(uint32_t src, uint32_t dst, const uint8_t *seg, size_t len)
{
	uint32_t sum = wire_csum_pseudo4(src, dst, IP4_PROTO_TCP, (uint16_t)len);

	return wire_csum_finish(wire_csum_add(sum, seg, len));
}
