/* TCP segments (RFC 9293), their options (RFC 7323, RFC 2018) and checksum. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "checksum.h"
#include "tcp.h"

/* Golden segments, captured with tcpdump -w on a private network namespace's lo: curl
 * --http1.0 http://127.0.0.1:8080/ (Linux 6.x, port 60986) to a Python listener that answers
 * and closes. Loopback leaves the checksum partial (CHECKSUM_PARTIAL: the field holds the
 * folded pseudo-header sum, 0xfe30 for 40 bytes), as captured here; the complete values that
 * tcpdump -vv computes are in golden_csum below. */

/* SYN: mss 65495, sackOK, TS val 2232848918 ecr 0, nop, wscale 10; win 65495. */
static const uint8_t syn_seg[40] = {
	0xee, 0x3a, 0x1f, 0x90, 0x29, 0x8a, 0x24, 0x8e, 0x00, 0x00, 0x00, 0x00,
	0xa0, 0x02, 0xff, 0xd7, 0xfe, 0x30, 0x00, 0x00, 0x02, 0x04, 0xff, 0xd7,
	0x04, 0x02, 0x08, 0x0a, 0x85, 0x16, 0x92, 0x16, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x03, 0x03, 0x0a,
};

/* SYN-ACK: the same options, TS val 3534009054 ecr 2232848918; win 65483. */
static const uint8_t syn_ack_seg[40] = {
	0x1f, 0x90, 0xee, 0x3a, 0xef, 0xd8, 0x4c, 0x86, 0x29, 0x8a, 0x24, 0x8f,
	0xa0, 0x12, 0xff, 0xcb, 0xfe, 0x30, 0x00, 0x00, 0x02, 0x04, 0xff, 0xd7,
	0x04, 0x02, 0x08, 0x0a, 0xd2, 0xa4, 0xb2, 0xde, 0x85, 0x16, 0x92, 0x16,
	0x01, 0x03, 0x03, 0x0a,
};

/* The handshake's ACK: nop, nop, TS; win 64 (scaled by 2^10). */
static const uint8_t ack_ts_seg[32] = {
	0xee, 0x3a, 0x1f, 0x90, 0x29, 0x8a, 0x24, 0x8f, 0xef, 0xd8, 0x4c, 0x87,
	0x80, 0x10, 0x00, 0x40, 0xfe, 0x28, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a,
	0x85, 0x16, 0x92, 0x16, 0xd2, 0xa4, 0xb2, 0xde,
};

/* PSH-ACK carrying the 78-byte HTTP request. */
static const uint8_t data_seg[110] = {
	0xee, 0x3a, 0x1f, 0x90, 0x29, 0x8a, 0x24, 0x8f, 0xef, 0xd8, 0x4c, 0x87,
	0x80, 0x18, 0x00, 0x40, 0xfe, 0x76, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a,
	0x85, 0x16, 0x92, 0x16, 0xd2, 0xa4, 0xb2, 0xde, 0x47, 0x45, 0x54, 0x20,
	0x2f, 0x20, 0x48, 0x54, 0x54, 0x50, 0x2f, 0x31, 0x2e, 0x30, 0x0d, 0x0a,
	0x48, 0x6f, 0x73, 0x74, 0x3a, 0x20, 0x31, 0x32, 0x37, 0x2e, 0x30, 0x2e,
	0x30, 0x2e, 0x31, 0x3a, 0x38, 0x30, 0x38, 0x30, 0x0d, 0x0a, 0x55, 0x73,
	0x65, 0x72, 0x2d, 0x41, 0x67, 0x65, 0x6e, 0x74, 0x3a, 0x20, 0x63, 0x75,
	0x72, 0x6c, 0x2f, 0x37, 0x2e, 0x38, 0x38, 0x2e, 0x31, 0x0d, 0x0a, 0x41,
	0x63, 0x63, 0x65, 0x70, 0x74, 0x3a, 0x20, 0x2a, 0x2f, 0x2a, 0x0d, 0x0a,
	0x0d, 0x0a,
};

/* The client's FIN-ACK. */
static const uint8_t fin_seg[32] = {
	0xee, 0x3a, 0x1f, 0x90, 0x29, 0x8a, 0x24, 0xdd, 0xef, 0xd8, 0x4c, 0xb4,
	0x80, 0x11, 0x00, 0x40, 0xfe, 0x28, 0x00, 0x00, 0x01, 0x01, 0x08, 0x0a,
	0x85, 0x16, 0x92, 0x17, 0xd2, 0xa4, 0xb2, 0xdf,
};

#define LOOPBACK 0x7f000001u /* 127.0.0.1, both ends of every golden segment */

struct golden {
	const char *name;
	const uint8_t *bytes;
	size_t len;
	uint16_t csum;     /* the complete checksum, as tcpdump -vv computed it */
};

static const struct golden golden[] = {
	{ "syn", syn_seg, sizeof(syn_seg), 0xdcee },
	{ "syn_ack", syn_ack_seg, sizeof(syn_ack_seg), 0x1b07 },
	{ "ack_ts", ack_ts_seg, sizeof(ack_ts_seg), 0x4386 },
	{ "data", data_seg, sizeof(data_seg), 0xbecf },
	{ "fin", fin_seg, sizeof(fin_seg), 0x4308 },
};

#define N_GOLDEN (sizeof(golden) / sizeof(golden[0]))

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct tcp_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = tcp_parse(copy, len, out);
	free(copy);
	return st;
}

static enum wire_status opts_exact(const uint8_t *bytes, size_t len, struct tcp_options *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = tcp_options_parse(copy, len, out);
	free(copy);
	return st;
}

/* A 20-byte segment: ports 1234 -> 80, the given flags, no options. */
static void plain_seg(uint8_t seg[TCP_HDR_MIN_LEN], uint8_t flags)
{
	memset(seg, 0, TCP_HDR_MIN_LEN);
	wire_put_be16(seg + TCP_OFF_SRC_PORT, 1234);
	wire_put_be16(seg + TCP_OFF_DST_PORT, 80);
	wire_put_be32(seg + TCP_OFF_SEQ, 1000);
	seg[TCP_OFF_DATA_OFF] = 5 << 4;
	seg[TCP_OFF_FLAGS] = flags;
	wire_put_be16(seg + TCP_OFF_WINDOW, 1024);
}

/* A segment with the options opts[0..olen) (olen a multiple of 4) after plain_seg's header;
 * returns its length. */
static size_t seg_with_opts(uint8_t *seg, uint8_t flags, const uint8_t *opts, size_t olen)
{
	plain_seg(seg, flags);
	seg[TCP_OFF_DATA_OFF] = (uint8_t)((TCP_HDR_MIN_LEN + olen) / 4 << 4);
	memcpy(seg + TCP_HDR_MIN_LEN, opts, olen);
	return TCP_HDR_MIN_LEN + olen;
}

static void assert_options_equal(const struct tcp_options *a, const struct tcp_options *b)
{
	uint8_t i;

	assert_int_equal(a->has_mss, b->has_mss);
	if (a->has_mss)
		assert_int_equal(a->mss, b->mss);
	assert_int_equal(a->has_wscale, b->has_wscale);
	if (a->has_wscale)
		assert_int_equal(a->wscale, b->wscale);
	assert_int_equal(a->sack_permitted, b->sack_permitted);
	assert_int_equal(a->has_timestamps, b->has_timestamps);
	if (a->has_timestamps) {
		assert_int_equal(a->tsval, b->tsval);
		assert_int_equal(a->tsecr, b->tsecr);
	}
	assert_int_equal(a->sack_count, b->sack_count);
	for (i = 0; i < a->sack_count; i++) {
		assert_int_equal(a->sack_blocks[i].left, b->sack_blocks[i].left);
		assert_int_equal(a->sack_blocks[i].right, b->sack_blocks[i].right);
	}
}

static void assert_repr_equal(const struct tcp_repr *a, const struct tcp_repr *b)
{
	assert_int_equal(a->src_port, b->src_port);
	assert_int_equal(a->dst_port, b->dst_port);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->ack, b->ack);
	assert_int_equal(a->flags, b->flags);
	assert_int_equal(a->window, b->window);
	assert_int_equal(a->urgent, b->urgent);
	assert_options_equal(&a->options, &b->options);
}

/* ---- tcp_parse: golden segments ---- */

static void test_tcp_parse_golden_syn_reads_fields(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(syn_seg, sizeof(syn_seg), &r), WIRE_OK);
	assert_int_equal(r.src_port, 60986);
	assert_int_equal(r.dst_port, 8080);
	assert_int_equal(r.seq, 696919182u);
	assert_int_equal(r.ack, 0);
	assert_int_equal(r.hdr_len, 40);
	assert_int_equal(r.flags, TCP_FLAG_SYN);
	assert_int_equal(r.window, 65495);
	assert_int_equal(r.urgent, 0);
}

static void test_tcp_parse_golden_syn_reads_options(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(syn_seg, sizeof(syn_seg), &r), WIRE_OK);
	assert_true(r.options.has_mss);
	assert_int_equal(r.options.mss, 65495);
	assert_true(r.options.sack_permitted);
	assert_true(r.options.has_timestamps);
	assert_int_equal(r.options.tsval, 2232848918u);
	assert_int_equal(r.options.tsecr, 0);
	assert_true(r.options.has_wscale);
	assert_int_equal(r.options.wscale, 10);
	assert_int_equal(r.options.sack_count, 0);
}

static void test_tcp_parse_golden_syn_ack_reads_fields_and_options(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(syn_ack_seg, sizeof(syn_ack_seg), &r), WIRE_OK);
	assert_int_equal(r.src_port, 8080);
	assert_int_equal(r.dst_port, 60986);
	assert_int_equal(r.seq, 4023929990u);
	assert_int_equal(r.ack, 696919183u);
	assert_int_equal(r.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(r.window, 65483);
	assert_int_equal(r.options.mss, 65495);
	assert_true(r.options.sack_permitted);
	assert_int_equal(r.options.tsval, 3534009054u);
	assert_int_equal(r.options.tsecr, 2232848918u);
	assert_int_equal(r.options.wscale, 10);
}

static void test_tcp_parse_golden_ack_reads_timestamps_only(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(ack_ts_seg, sizeof(ack_ts_seg), &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 32);
	assert_int_equal(r.flags, TCP_FLAG_ACK);
	assert_int_equal(r.seq, 696919183u);
	assert_int_equal(r.ack, 4023929991u);
	assert_int_equal(r.window, 64);
	assert_true(r.options.has_timestamps);
	assert_int_equal(r.options.tsval, 2232848918u);
	assert_int_equal(r.options.tsecr, 3534009054u);
	assert_false(r.options.has_mss);
	assert_false(r.options.has_wscale);
	assert_false(r.options.sack_permitted);
	assert_int_equal(r.options.sack_count, 0);
}

static void test_tcp_parse_golden_data_payload_follows_header(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(data_seg, sizeof(data_seg), &r), WIRE_OK);
	assert_int_equal(r.flags, TCP_FLAG_PSH | TCP_FLAG_ACK);
	assert_int_equal(r.hdr_len, 32);
	assert_int_equal(sizeof(data_seg) - r.hdr_len, 78);
	assert_memory_equal(data_seg + r.hdr_len, "GET / HTTP/1.0\r\n", 16);
}

static void test_tcp_parse_golden_fin_reads_fin_ack(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(fin_seg, sizeof(fin_seg), &r), WIRE_OK);
	assert_int_equal(r.flags, TCP_FLAG_FIN | TCP_FLAG_ACK);
	assert_int_equal(r.seq, 696919261u);  /* 78 bytes after the data segment's */
	assert_int_equal(r.ack, 4023930036u);
	assert_int_equal(r.options.tsval, 2232848919u);
	assert_int_equal(r.options.tsecr, 3534009055u);
}

/* ---- tcp_checksum ---- */

static void test_tcp_checksum_golden_segments_match_tcpdump(void **state)
{
	uint8_t seg[128];
	size_t i;

	(void)state;
	for (i = 0; i < N_GOLDEN; i++) {
		memcpy(seg, golden[i].bytes, golden[i].len);
		wire_put_be16(seg + TCP_OFF_CSUM, 0);
		assert_int_equal(tcp_checksum(LOOPBACK, LOOPBACK, seg, golden[i].len),
				 golden[i].csum);
	}
}

static void test_tcp_checksum_golden_with_field_filled_verifies_zero(void **state)
{
	uint8_t seg[128];
	size_t i;

	(void)state;
	for (i = 0; i < N_GOLDEN; i++) {
		memcpy(seg, golden[i].bytes, golden[i].len);
		wire_put_be16(seg + TCP_OFF_CSUM, golden[i].csum);
		assert_int_equal(tcp_checksum(LOOPBACK, LOOPBACK, seg, golden[i].len), 0);
	}
}

static void test_tcp_checksum_golden_partial_field_is_folded_pseudo_sum(void **state)
{
	size_t i;

	(void)state;
	/* What lo leaves in the field: the pseudo-header sum, folded, not complemented. */
	for (i = 0; i < N_GOLDEN; i++) {
		uint32_t sum = wire_csum_pseudo4(LOOPBACK, LOOPBACK, 6, (uint16_t)golden[i].len);

		assert_int_equal(wire_get_be16(golden[i].bytes + TCP_OFF_CSUM),
				 (uint16_t)~wire_csum_finish(sum));
	}
}

static void test_tcp_checksum_corrupted_byte_detected(void **state)
{
	uint8_t seg[sizeof(data_seg)];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(seg); i++) {
		memcpy(seg, data_seg, sizeof(seg));
		wire_put_be16(seg + TCP_OFF_CSUM, 0xbecf);
		seg[i] ^= 0x01;
		assert_int_not_equal(tcp_checksum(LOOPBACK, LOOPBACK, seg, sizeof(seg)), 0);
	}
}

static void test_tcp_checksum_covers_addresses(void **state)
{
	uint8_t seg[sizeof(syn_seg)];

	(void)state;
	memcpy(seg, syn_seg, sizeof(seg));
	wire_put_be16(seg + TCP_OFF_CSUM, 0xdcee);
	assert_int_not_equal(tcp_checksum(LOOPBACK + 1, LOOPBACK, seg, sizeof(seg)), 0);
	assert_int_not_equal(tcp_checksum(LOOPBACK, 0xc0000201u, seg, sizeof(seg)), 0);
}

static void test_tcp_checksum_odd_length_matches_explicit_pseudo_header(void **state)
{
	/* The pseudo-header written out (RFC 9293 §3.1) followed by a 21-byte segment. */
	uint8_t whole[12 + 21];
	uint8_t *seg = whole + 12;

	(void)state;
	plain_seg(seg, TCP_FLAG_ACK | TCP_FLAG_PSH);
	seg[20] = 'x';
	wire_put_be32(whole, 0xc0000202u);
	wire_put_be32(whole + 4, 0xc0000201u);
	whole[8] = 0;
	whole[9] = 6;
	wire_put_be16(whole + 10, 21);
	assert_int_equal(tcp_checksum(0xc0000202u, 0xc0000201u, seg, 21),
			 wire_csum(whole, sizeof(whole)));
}

/* ---- tcp_parse: truncations and header length ---- */

static void test_tcp_parse_empty_buffer_rejected_truncated(void **state)
{
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(NULL, 0, &r), WIRE_TRUNCATED);
}

static void test_tcp_parse_every_truncation_below_20_rejected_truncated(void **state)
{
	struct tcp_repr r;
	size_t i, len;

	(void)state;
	for (i = 0; i < N_GOLDEN; i++)
		for (len = 0; len < TCP_HDR_MIN_LEN; len++)
			assert_int_equal(parse_exact(golden[i].bytes, len, &r), WIRE_TRUNCATED);
}

static void test_tcp_parse_every_truncation_of_options_rejected_bad_hdr_len(void **state)
{
	struct tcp_repr r;
	size_t i, len;

	(void)state;
	for (i = 0; i < N_GOLDEN; i++) {
		size_t hdr_len = (size_t)(golden[i].bytes[TCP_OFF_DATA_OFF] >> 4) * 4;

		for (len = TCP_HDR_MIN_LEN; len < hdr_len; len++)
			assert_int_equal(parse_exact(golden[i].bytes, len, &r), WIRE_BAD_HDR_LEN);
	}
}

static void test_tcp_parse_every_truncation_of_payload_accepted(void **state)
{
	struct tcp_repr r;
	size_t len;

	(void)state;
	/* Without the IP total length, a shorter payload is just a shorter segment. */
	for (len = 32; len <= sizeof(data_seg); len++) {
		assert_int_equal(parse_exact(data_seg, len, &r), WIRE_OK);
		assert_int_equal(r.hdr_len, 32);
	}
}

static void test_tcp_parse_data_offset_below_5_rejected_bad_hdr_len(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;
	uint8_t off;

	(void)state;
	for (off = 0; off < 5; off++) {
		plain_seg(seg, TCP_FLAG_ACK);
		seg[TCP_OFF_DATA_OFF] = (uint8_t)(off << 4);
		assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_HDR_LEN);
	}
}

static void test_tcp_parse_data_offset_past_buffer_rejected_bad_hdr_len(void **state)
{
	uint8_t seg[TCP_HDR_MAX_LEN] = { 0 };
	struct tcp_repr r;
	uint8_t off;

	(void)state;
	for (off = 6; off <= 15; off++) {
		plain_seg(seg, TCP_FLAG_ACK);
		seg[TCP_OFF_DATA_OFF] = (uint8_t)(off << 4);
		assert_int_equal(parse_exact(seg, (size_t)off * 4 - 1, &r), WIRE_BAD_HDR_LEN);
		assert_int_equal(parse_exact(seg, (size_t)off * 4, &r), WIRE_OK);
		assert_int_equal(r.hdr_len, (size_t)off * 4);
	}
}

static void test_tcp_parse_data_offset_15_all_nops_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MAX_LEN];
	uint8_t nops[TCP_OPTS_MAX_LEN];
	struct tcp_repr r;

	(void)state;
	memset(nops, TCP_OPT_NOP, sizeof(nops));
	seg_with_opts(seg, TCP_FLAG_ACK, nops, sizeof(nops));
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 60);
	assert_false(r.options.has_timestamps);
}

static void test_tcp_parse_header_only_no_payload_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_ACK);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 20);
	assert_int_equal(r.src_port, 1234);
	assert_int_equal(r.dst_port, 80);
	assert_int_equal(r.seq, 1000);
	assert_int_equal(r.window, 1024);
}

static void test_tcp_parse_reserved_bits_ignored(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_ACK);
	seg[TCP_OFF_DATA_OFF] |= 0x0f;
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 20);
	assert_int_equal(r.flags, TCP_FLAG_ACK);
}

static void test_tcp_parse_urgent_pointer_read(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_ACK | TCP_FLAG_URG);
	wire_put_be16(seg + TCP_OFF_URGENT, 0xbeef);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.urgent, 0xbeef);
	assert_int_equal(r.flags, TCP_FLAG_ACK | TCP_FLAG_URG);
}

static void test_tcp_parse_checksum_not_examined(void **state)
{
	uint8_t seg[sizeof(syn_seg)];
	struct tcp_repr r;

	(void)state;
	memcpy(seg, syn_seg, sizeof(seg));
	wire_put_be16(seg + TCP_OFF_CSUM, 0x1234);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
}

static void test_tcp_parse_bad_option_rejected_bad_option(void **state)
{
	static const uint8_t opts[4] = { TCP_OPT_MSS, 3, 0x05, TCP_OPT_EOL };
	uint8_t seg[24];
	struct tcp_repr r;

	(void)state;
	seg_with_opts(seg, TCP_FLAG_SYN, opts, sizeof(opts));
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_OPTION);
}

static void test_tcp_parse_options_checked_before_semantics(void **state)
{
	static const uint8_t opts[4] = { 0xfe, 0, 0, 0 };
	uint8_t seg[24];
	struct tcp_repr r;

	(void)state;
	seg_with_opts(seg, TCP_FLAG_SYN | TCP_FLAG_RST, opts, sizeof(opts));
	wire_put_be16(seg + TCP_OFF_SRC_PORT, 0);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_OPTION);
}

static void test_tcp_parse_option_past_header_not_read(void **state)
{
	/* A 24-byte header whose MSS option would continue into the payload. */
	static const uint8_t seg_opts[4] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_MSS, 4 };
	uint8_t seg[28];
	struct tcp_repr r;

	(void)state;
	seg_with_opts(seg, TCP_FLAG_SYN, seg_opts, sizeof(seg_opts));
	seg[24] = 0x05;
	seg[25] = 0xb4;
	seg[26] = 'h';
	seg[27] = 'i';
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_OPTION);
}

static void test_tcp_parse_failure_leaves_out_untouched(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r, before;

	(void)state;
	memset(&r, 0xa5, sizeof(r));
	before = r;
	assert_int_equal(parse_exact(syn_seg, 10, &r), WIRE_TRUNCATED);
	assert_int_equal(parse_exact(syn_seg, 30, &r), WIRE_BAD_HDR_LEN);
	plain_seg(seg, TCP_FLAG_SYN);
	wire_put_be16(seg + TCP_OFF_DST_PORT, 0);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_FIELD);
	assert_memory_equal(&r, &before, sizeof(r));
}

/* ---- tcp_parse: semantics ---- */

static void test_tcp_parse_src_port_zero_rejected_bad_field(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_SYN);
	wire_put_be16(seg + TCP_OFF_SRC_PORT, 0);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_FIELD);
}

static void test_tcp_parse_dst_port_zero_rejected_bad_field(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_SYN);
	wire_put_be16(seg + TCP_OFF_DST_PORT, 0);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_BAD_FIELD);
}

static void test_tcp_parse_port_65535_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_SYN);
	wire_put_be16(seg + TCP_OFF_SRC_PORT, 65535);
	wire_put_be16(seg + TCP_OFF_DST_PORT, 65535);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.src_port, 65535);
	assert_int_equal(r.dst_port, 65535);
}

/* SYN+FIN is left to tcp_input: a challenge ACK on a synchronized connection (RFC 5961 §4,
 * as Linux), a drop where none exists. */
static void test_tcp_parse_syn_fin_accepted_for_tcp_input(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_SYN | TCP_FLAG_FIN);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.flags, TCP_FLAG_SYN | TCP_FLAG_FIN);
}

/* A reset, whatever else it carries, is tcp_input's to judge (RFC 5961 §3, as Linux). */
static void test_tcp_parse_syn_rst_accepted_for_tcp_input(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_SYN | TCP_FLAG_RST);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.flags, TCP_FLAG_SYN | TCP_FLAG_RST);
}

static void test_tcp_parse_all_flags_xmas_accepted_for_tcp_input(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, 0xff);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.flags, 0xff);
}

static void test_tcp_parse_no_flags_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, 0);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.flags, 0);
}

static void test_tcp_parse_ecn_setup_syn_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	/* RFC 3168 §6.1.1: an ECN-setup SYN carries ECE and CWR. */
	plain_seg(seg, TCP_FLAG_SYN | TCP_FLAG_ECE | TCP_FLAG_CWR);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	assert_int_equal(r.flags, TCP_FLAG_SYN | TCP_FLAG_ECE | TCP_FLAG_CWR);
}

static void test_tcp_parse_rst_ack_and_fin_rst_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;

	(void)state;
	plain_seg(seg, TCP_FLAG_RST | TCP_FLAG_ACK);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
	/* Odd, but no rule of RFC 9293 forbids it: the state machine handles RST first. */
	plain_seg(seg, TCP_FLAG_RST | TCP_FLAG_FIN);
	assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
}

static void test_tcp_parse_every_flag_combination_accepted(void **state)
{
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr r;
	unsigned f;

	(void)state;
	for (f = 0; f < 256; f++) {
		plain_seg(seg, (uint8_t)f);
		assert_int_equal(parse_exact(seg, sizeof(seg), &r), WIRE_OK);
		assert_int_equal(r.flags, f);
	}
}

/* ---- tcp_options_parse ---- */

static void test_tcp_options_empty_ok_nothing_found(void **state)
{
	struct tcp_options o;

	(void)state;
	memset(&o, 0xa5, sizeof(o));
	assert_int_equal(opts_exact(NULL, 0, &o), WIRE_OK);
	assert_false(o.has_mss);
	assert_false(o.has_wscale);
	assert_false(o.sack_permitted);
	assert_false(o.has_timestamps);
	assert_int_equal(o.sack_count, 0);
}

static void test_tcp_options_nop_only_ok(void **state)
{
	static const uint8_t opts[3] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_false(o.has_mss);
}

static void test_tcp_options_eol_stops_walk_ignores_rest(void **state)
{
	/* After EOL: a broken option and an MSS, neither read. */
	static const uint8_t opts[8] = { TCP_OPT_EOL, 0xfe, 0, TCP_OPT_MSS, 4, 1, 2, 0 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_false(o.has_mss);
}

static void test_tcp_options_before_eol_kept(void **state)
{
	static const uint8_t opts[8] = { TCP_OPT_MSS, 4, 0x05, 0xb4,
					 TCP_OPT_EOL, 0xff, 0xff, 0xff };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 1460);
}

static void test_tcp_options_mss_len_4_read(void **state)
{
	static const uint8_t opts[4] = { TCP_OPT_MSS, 4, 0x05, 0xb4 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 1460);
}

static void test_tcp_options_mss_wrong_len_rejected_bad_option(void **state)
{
	uint8_t opts[8] = { TCP_OPT_MSS, 0, 0x05, 0xb4, 0, 0, 0, 0 };
	struct tcp_options o;
	uint8_t len;

	(void)state;
	for (len = 2; len <= 8; len++) {
		if (len == TCP_OPT_MSS_LEN)
			continue;
		opts[1] = len;
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	}
}

static void test_tcp_options_wscale_len_3_read(void **state)
{
	static const uint8_t opts[3] = { TCP_OPT_WSCALE, 3, 7 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_wscale);
	assert_int_equal(o.wscale, 7);
}

static void test_tcp_options_wscale_wrong_len_rejected_bad_option(void **state)
{
	uint8_t opts[8] = { TCP_OPT_WSCALE, 0, 7, 0, 0, 0, 0, 0 };
	struct tcp_options o;
	uint8_t len;

	(void)state;
	for (len = 2; len <= 8; len++) {
		if (len == TCP_OPT_WSCALE_LEN)
			continue;
		opts[1] = len;
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	}
}

static void test_tcp_options_wscale_14_kept(void **state)
{
	static const uint8_t opts[3] = { TCP_OPT_WSCALE, 3, 14 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.wscale, 14);
}

static void test_tcp_options_wscale_above_14_clamped_to_14(void **state)
{
	uint8_t opts[3] = { TCP_OPT_WSCALE, 3, 0 };
	struct tcp_options o;
	unsigned shift;

	(void)state;
	/* RFC 7323 §2.3: "MUST use 14 instead of the specified value". */
	for (shift = 15; shift < 256; shift++) {
		opts[2] = (uint8_t)shift;
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
		assert_true(o.has_wscale);
		assert_int_equal(o.wscale, TCP_WSCALE_MAX);
	}
}

static void test_tcp_options_wscale_zero_present(void **state)
{
	static const uint8_t opts[3] = { TCP_OPT_WSCALE, 3, 0 };
	struct tcp_options o;

	(void)state;
	/* Shift 0 still says "I scale" (RFC 7323 §2.2): has_wscale, not just wscale != 0. */
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_wscale);
	assert_int_equal(o.wscale, 0);
}

static void test_tcp_options_sack_permitted_len_2_read(void **state)
{
	static const uint8_t opts[2] = { TCP_OPT_SACK_PERM, 2 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.sack_permitted);
}

static void test_tcp_options_sack_permitted_wrong_len_rejected_bad_option(void **state)
{
	uint8_t opts[4] = { TCP_OPT_SACK_PERM, 0, 0, 0 };
	struct tcp_options o;

	(void)state;
	opts[1] = 3;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	opts[1] = 4;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_timestamps_len_10_read(void **state)
{
	static const uint8_t opts[10] = { TCP_OPT_TIMESTAMPS, 10, 0xde, 0xad, 0xbe, 0xef,
					  0x01, 0x02, 0x03, 0x04 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_timestamps);
	assert_int_equal(o.tsval, 0xdeadbeefu);
	assert_int_equal(o.tsecr, 0x01020304u);
}

static void test_tcp_options_timestamps_wrong_len_rejected_bad_option(void **state)
{
	uint8_t opts[12] = { TCP_OPT_TIMESTAMPS };
	struct tcp_options o;
	uint8_t len;

	(void)state;
	for (len = 2; len <= 12; len++) {
		if (len == TCP_OPT_TIMESTAMPS_LEN)
			continue;
		opts[1] = len;
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	}
}

/* A SACK option with n blocks: left = 1000 * (i + 1), right = left + 500. Returns its length. */
static size_t sack_opt(uint8_t *opts, size_t n)
{
	size_t i;

	opts[0] = TCP_OPT_SACK;
	opts[1] = (uint8_t)(2 + 8 * n);
	for (i = 0; i < n; i++) {
		wire_put_be32(opts + 2 + 8 * i, (uint32_t)(1000 * (i + 1)));
		wire_put_be32(opts + 6 + 8 * i, (uint32_t)(1000 * (i + 1) + 500));
	}
	return 2 + 8 * n;
}

static void check_sack_blocks_read(size_t n)
{
	uint8_t opts[2 + 8 * TCP_SACK_MAX_BLOCKS];
	size_t len = sack_opt(opts, n), i;
	struct tcp_options o;

	assert_int_equal(opts_exact(opts, len, &o), WIRE_OK);
	assert_int_equal(o.sack_count, n);
	for (i = 0; i < n; i++) {
		assert_int_equal(o.sack_blocks[i].left, 1000 * (i + 1));
		assert_int_equal(o.sack_blocks[i].right, 1000 * (i + 1) + 500);
	}
}

static void test_tcp_options_sack_1_block_read(void **state)
{
	(void)state;
	check_sack_blocks_read(1);
}

static void test_tcp_options_sack_2_blocks_read(void **state)
{
	(void)state;
	check_sack_blocks_read(2);
}

static void test_tcp_options_sack_3_blocks_read(void **state)
{
	(void)state;
	check_sack_blocks_read(3);
}

static void test_tcp_options_sack_4_blocks_read(void **state)
{
	(void)state;
	check_sack_blocks_read(4);
}

static void test_tcp_options_sack_5_blocks_rejected_bad_option(void **state)
{
	uint8_t opts[2 + 8 * 5];
	struct tcp_options o;

	(void)state;
	/* 42 bytes fit no real header, but the area given here holds them: the count decides. */
	assert_int_equal(opts_exact(opts, sack_opt(opts, 5), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_sack_no_blocks_rejected_bad_option(void **state)
{
	static const uint8_t opts[2] = { TCP_OPT_SACK, 2 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_sack_partial_block_rejected_bad_option(void **state)
{
	uint8_t opts[40] = { 0 };
	struct tcp_options o;
	uint8_t len;

	(void)state;
	opts[0] = TCP_OPT_SACK;
	for (len = 3; len <= 40; len++) {
		if ((len - 2) % 8 == 0)
			continue;
		opts[1] = len;
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	}
}

static void test_tcp_options_sack_past_area_rejected_bad_option(void **state)
{
	uint8_t opts[18];
	struct tcp_options o;

	(void)state;
	sack_opt(opts, 2);
	assert_int_equal(opts_exact(opts, 17, &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_sack_blocks_not_ordered_still_read(void **state)
{
	uint8_t opts[10];
	struct tcp_options o;

	(void)state;
	/* Block validity against the send window is the state machine's (RFC 2018 §4). */
	opts[0] = TCP_OPT_SACK;
	opts[1] = 10;
	wire_put_be32(opts + 2, 5000);
	wire_put_be32(opts + 6, 4000);
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.sack_count, 1);
	assert_int_equal(o.sack_blocks[0].left, 5000);
	assert_int_equal(o.sack_blocks[0].right, 4000);
}

static void test_tcp_options_length_zero_rejected_bad_option(void **state)
{
	static const uint8_t opts[4] = { 0xfe, 0, 0, 0 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_length_one_rejected_bad_option(void **state)
{
	static const uint8_t opts[4] = { 0xfe, 1, 0, 0 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_length_past_end_rejected_bad_option(void **state)
{
	static const uint8_t opts[4] = { 0xfe, 5, 0, 0 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_missing_length_byte_rejected_bad_option(void **state)
{
	static const uint8_t kinds[] = { TCP_OPT_MSS, TCP_OPT_WSCALE, TCP_OPT_SACK_PERM,
					 TCP_OPT_SACK, TCP_OPT_TIMESTAMPS, 0xfe };
	uint8_t opts[4] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_NOP, 0 };
	struct tcp_options o;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kinds); i++) {
		opts[3] = kinds[i];
		assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	}
}

static void test_tcp_options_known_kind_cut_by_area_rejected_bad_option(void **state)
{
	static const uint8_t mss[4] = { TCP_OPT_MSS, 4, 0x05, 0xb4 };
	static const uint8_t ws[3] = { TCP_OPT_WSCALE, 3, 7 };
	static const uint8_t ts[10] = { TCP_OPT_TIMESTAMPS, 10, 1, 2, 3, 4, 5, 6, 7, 8 };
	struct tcp_options o;
	size_t len;

	(void)state;
	for (len = 1; len < sizeof(mss); len++)
		assert_int_equal(opts_exact(mss, len, &o), WIRE_BAD_OPTION);
	for (len = 1; len < sizeof(ws); len++)
		assert_int_equal(opts_exact(ws, len, &o), WIRE_BAD_OPTION);
	for (len = 1; len < sizeof(ts); len++)
		assert_int_equal(opts_exact(ts, len, &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_unknown_kind_skipped_by_length(void **state)
{
	/* Kind 30 (MPTCP), 6 bytes, then an MSS that must still be read. */
	static const uint8_t opts[10] = { 30, 6, 0x10, 0x01, 0x02, 0x03,
					  TCP_OPT_MSS, 4, 0x05, 0xb4 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_true(o.has_mss);
	assert_int_equal(o.mss, 1460);
}

static void test_tcp_options_unknown_kind_len_2_skipped(void **state)
{
	static const uint8_t opts[5] = { 0xfd, 2, TCP_OPT_WSCALE, 3, 2 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.wscale, 2);
}

static void test_tcp_options_unknown_kind_filling_area_accepted(void **state)
{
	uint8_t opts[TCP_OPTS_MAX_LEN] = { 0 };
	struct tcp_options o;

	(void)state;
	opts[0] = 0xfe;
	opts[1] = TCP_OPTS_MAX_LEN;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
}

static void test_tcp_options_duplicate_mss_last_wins(void **state)
{
	static const uint8_t opts[8] = { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_MSS, 4, 0x02, 0x18 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.mss, 536);
}

static void test_tcp_options_duplicate_wscale_last_wins(void **state)
{
	static const uint8_t opts[6] = { TCP_OPT_WSCALE, 3, 7, TCP_OPT_WSCALE, 3, 2 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.wscale, 2);
}

static void test_tcp_options_duplicate_timestamps_last_wins(void **state)
{
	static const uint8_t opts[20] = {
		TCP_OPT_TIMESTAMPS, 10, 0, 0, 0, 1, 0, 0, 0, 2,
		TCP_OPT_TIMESTAMPS, 10, 0, 0, 0, 3, 0, 0, 0, 4,
	};
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.tsval, 3);
	assert_int_equal(o.tsecr, 4);
}

static void test_tcp_options_duplicate_sack_last_wins(void **state)
{
	uint8_t opts[26 + 10];
	struct tcp_options o;

	(void)state;
	sack_opt(opts, 3);
	opts[26] = TCP_OPT_SACK;
	opts[27] = 10;
	wire_put_be32(opts + 28, 7000);
	wire_put_be32(opts + 32, 7100);
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_OK);
	assert_int_equal(o.sack_count, 1);
	assert_int_equal(o.sack_blocks[0].left, 7000);
	assert_int_equal(o.sack_blocks[0].right, 7100);
}

static void test_tcp_options_duplicate_bad_second_rejected_bad_option(void **state)
{
	static const uint8_t opts[7] = { TCP_OPT_MSS, 4, 0x05, 0xb4, TCP_OPT_MSS, 3, 0 };
	struct tcp_options o;

	(void)state;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
}

static void test_tcp_options_bad_option_after_good_leaves_out_untouched(void **state)
{
	static const uint8_t opts[6] = { TCP_OPT_MSS, 4, 0x05, 0xb4, 0xfe, 0 };
	struct tcp_options o, before;

	(void)state;
	memset(&o, 0x5a, sizeof(o));
	before = o;
	assert_int_equal(opts_exact(opts, sizeof(opts), &o), WIRE_BAD_OPTION);
	assert_memory_equal(&o, &before, sizeof(o));
}

static void test_tcp_options_every_truncation_of_golden_syn_ok_at_boundaries(void **state)
{
	/* The SYN's options: MSS [0,4) SACK-permitted [4,6) TS [6,16) NOP [16,17) WS [17,20). */
	const uint8_t *opts = syn_seg + TCP_HDR_MIN_LEN;
	struct tcp_options o;
	size_t len;

	(void)state;
	for (len = 0; len <= 20; len++) {
		bool boundary = len == 0 || len == 4 || len == 6 || len == 16 || len == 17 ||
				len == 20;

		assert_int_equal(opts_exact(opts, len, &o), boundary ? WIRE_OK : WIRE_BAD_OPTION);
	}
}

static void test_tcp_options_all_two_byte_areas_never_overrun(void **state)
{
	uint8_t opts[2];
	struct tcp_options o;
	unsigned kind, len;

	(void)state;
	for (kind = 0; kind < 256; kind++) {
		for (len = 0; len < 256; len++) {
			enum wire_status st;

			opts[0] = (uint8_t)kind;
			opts[1] = (uint8_t)len;
			st = opts_exact(opts, sizeof(opts), &o);
			if (kind == TCP_OPT_EOL || (kind == TCP_OPT_NOP && len <= TCP_OPT_NOP))
				assert_int_equal(st, WIRE_OK);
			else if (kind == TCP_OPT_SACK_PERM && len == 2)
				assert_int_equal(st, WIRE_OK);
			else if (kind != TCP_OPT_NOP && kind != TCP_OPT_MSS &&
				 kind != TCP_OPT_WSCALE && kind != TCP_OPT_SACK &&
				 kind != TCP_OPT_TIMESTAMPS && len == 2)
				assert_int_equal(st, WIRE_OK);
			else if (kind != TCP_OPT_NOP)
				assert_int_equal(st, WIRE_BAD_OPTION);
		}
	}
}

/* ---- tcp_build ---- */

/* Builds r into a header and checks it against the golden segment's header, checksum field
 * aside (the capture holds lo's partial sum there; tcp_build leaves 0). */
static void check_build_matches(const uint8_t *seg, size_t seg_len)
{
	uint8_t hdr[TCP_HDR_MAX_LEN], want[TCP_HDR_MAX_LEN];
	struct tcp_repr r;
	size_t n;

	assert_int_equal(parse_exact(seg, seg_len, &r), WIRE_OK);
	n = tcp_build(hdr, sizeof(hdr), &r);
	assert_int_equal(n, r.hdr_len);
	memcpy(want, seg, r.hdr_len);
	wire_put_be16(want + TCP_OFF_CSUM, 0);
	assert_memory_equal(hdr, want, n);
}

static void test_tcp_build_golden_syn_matches_capture(void **state)
{
	(void)state;
	check_build_matches(syn_seg, sizeof(syn_seg));
}

static void test_tcp_build_golden_syn_ack_matches_capture(void **state)
{
	(void)state;
	check_build_matches(syn_ack_seg, sizeof(syn_ack_seg));
}

static void test_tcp_build_golden_ack_matches_capture(void **state)
{
	(void)state;
	check_build_matches(ack_ts_seg, sizeof(ack_ts_seg));
}

static void test_tcp_build_golden_data_and_fin_match_capture(void **state)
{
	(void)state;
	check_build_matches(data_seg, sizeof(data_seg));
	check_build_matches(fin_seg, sizeof(fin_seg));
}

static void test_tcp_build_golden_data_with_checksum_matches_tcpdump(void **state)
{
	uint8_t seg[sizeof(data_seg)];
	struct tcp_repr r;
	size_t n;

	(void)state;
	assert_int_equal(parse_exact(data_seg, sizeof(data_seg), &r), WIRE_OK);
	n = tcp_build(seg, sizeof(seg), &r);
	memcpy(seg + n, data_seg + n, sizeof(seg) - n);
	wire_put_be16(seg + TCP_OFF_CSUM, tcp_checksum(LOOPBACK, LOOPBACK, seg, sizeof(seg)));
	assert_int_equal(wire_get_be16(seg + TCP_OFF_CSUM), 0xbecf);
	assert_int_equal(tcp_checksum(LOOPBACK, LOOPBACK, seg, sizeof(seg)), 0);
}

static void test_tcp_build_no_options_writes_20_bytes(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .seq = 3, .ack = 4,
			      .flags = TCP_FLAG_RST | TCP_FLAG_ACK, .window = 5, .urgent = 6 };
	static const uint8_t want[20] = { 0, 1, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0x50, 0x14,
					  0, 5, 0, 0, 0, 6 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 20);
	assert_memory_equal(hdr, want, sizeof(want));
}

static void test_tcp_build_mss_only_takes_4_bytes(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_SYN,
			      .options = { .has_mss = true, .mss = 1460 } };
	static const uint8_t want[4] = { TCP_OPT_MSS, 4, 0x05, 0xb4 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 24);
	assert_int_equal(hdr[TCP_OFF_DATA_OFF], 6 << 4);
	assert_memory_equal(hdr + 20, want, sizeof(want));
}

static void test_tcp_build_sack_permitted_without_timestamps_nop_nop_first(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_SYN,
			      .options = { .sack_permitted = true } };
	static const uint8_t want[4] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_SACK_PERM, 2 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 24);
	assert_memory_equal(hdr + 20, want, sizeof(want));
}

static void test_tcp_build_timestamps_without_sack_permitted_nop_nop_first(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_SYN,
			      .options = { .has_timestamps = true, .tsval = 1, .tsecr = 2 } };
	static const uint8_t want[12] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_TIMESTAMPS, 10,
					  0, 0, 0, 1, 0, 0, 0, 2 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 32);
	assert_memory_equal(hdr + 20, want, sizeof(want));
}

static void test_tcp_build_wscale_only_nop_first(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_SYN,
			      .options = { .has_wscale = true, .wscale = 7 } };
	static const uint8_t want[4] = { TCP_OPT_NOP, TCP_OPT_WSCALE, 3, 7 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 24);
	assert_memory_equal(hdr + 20, want, sizeof(want));
}

static void test_tcp_build_sack_blocks_nop_nop_first(void **state)
{
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_ACK,
			      .options = { .sack_count = 1,
					   .sack_blocks = { { 0x01020304, 0x05060708 } } } };
	static const uint8_t want[12] = { TCP_OPT_NOP, TCP_OPT_NOP, TCP_OPT_SACK, 10,
					  1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t hdr[TCP_HDR_MAX_LEN];

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 32);
	assert_memory_equal(hdr + 20, want, sizeof(want));
}

static void test_tcp_build_sack_1_to_4_blocks_round_trip(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_ACK }, back;
	uint8_t n, i;

	(void)state;
	for (n = 1; n <= TCP_SACK_MAX_BLOCKS; n++) {
		r.options.sack_count = n;
		for (i = 0; i < n; i++) {
			r.options.sack_blocks[i].left = 0xfffff000u + i * 0x100u;
			r.options.sack_blocks[i].right = 0xfffff080u + i * 0x100u;
		}
		assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 20 + 4 + 8 * (size_t)n);
		assert_int_equal(parse_exact(hdr, 24 + 8 * (size_t)n, &back), WIRE_OK);
		assert_repr_equal(&back, &r);
	}
}

static void test_tcp_build_sack_with_timestamps_keeps_3_blocks(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_ACK,
			      .options = { .has_timestamps = true, .tsval = 9, .tsecr = 8,
					   .sack_count = 4 } }, back;
	uint8_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		r.options.sack_blocks[i] = (struct tcp_sack_block){ 100u * i, 100u * i + 50 };
	/* 12 (TS) + 4 + 3 * 8 = 40: Linux sends 3 blocks with timestamps, so do we. */
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 60);
	assert_int_equal(parse_exact(hdr, 60, &back), WIRE_OK);
	assert_int_equal(back.options.sack_count, 3);
	r.options.sack_count = 3;
	assert_repr_equal(&back, &r);
}

static void test_tcp_build_sack_with_every_option_keeps_2_blocks(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_ACK,
			      .options = { .has_mss = true, .mss = 1, .has_wscale = true,
					   .sack_permitted = true, .has_timestamps = true,
					   .sack_count = 4 } }, back;

	(void)state;
	/* 4 + 12 + 4 = 20 bytes, then 4 + 2 * 8 = 20 more: two blocks fit, three do not. */
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 60);
	assert_int_equal(parse_exact(hdr, 60, &back), WIRE_OK);
	assert_int_equal(back.options.sack_count, 2);
}

static void test_tcp_build_sack_count_above_4_limited_to_4(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .flags = TCP_FLAG_ACK,
			      .options = { .sack_count = 200 } }, back;

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 20 + 4 + 32);
	assert_int_equal(parse_exact(hdr, 56, &back), WIRE_OK);
	assert_int_equal(back.options.sack_count, 4);
}

static void test_tcp_build_every_option_combination_round_trips(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	unsigned combo;

	(void)state;
	for (combo = 0; combo < 16 * 5; combo++) {
		struct tcp_repr r = { .src_port = 443, .dst_port = 50000, .seq = 0x80000000u,
				      .ack = 0xffffffffu, .flags = TCP_FLAG_ACK,
				      .window = 0xffff, .urgent = 1 }, back;
		struct tcp_options *o = &r.options;
		size_t n;
		uint8_t i;

		o->has_mss = combo & 1;
		o->mss = 0xfff0;
		o->has_wscale = combo & 2;
		o->wscale = 14;
		o->sack_permitted = combo & 4;
		o->has_timestamps = combo & 8;
		o->tsval = 0xfedcba98u;
		o->tsecr = 0x01234567u;
		o->sack_count = (uint8_t)(combo / 16);
		for (i = 0; i < o->sack_count; i++)
			o->sack_blocks[i] = (struct tcp_sack_block){ i, 0x10000000u + i };
		n = tcp_build(hdr, sizeof(hdr), &r);
		assert_true(n >= TCP_HDR_MIN_LEN && n <= TCP_HDR_MAX_LEN && n % 4 == 0);
		assert_int_equal(parse_exact(hdr, n, &back), WIRE_OK);
		assert_int_equal(back.hdr_len, n);
		assert_true(back.options.sack_count <= o->sack_count);
		/* Only SACK blocks that did not fit may be missing, and only at the end. */
		if (back.options.sack_count < o->sack_count)
			assert_true(n + TCP_OPT_SACK_BLOCK_LEN > TCP_HDR_MAX_LEN);
		o->sack_count = back.options.sack_count;
		assert_repr_equal(&back, &r);
	}
}

static void test_tcp_build_then_parse_round_trips_flags_and_fields(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	unsigned f;

	(void)state;
	for (f = 0; f < 256; f++) {
		struct tcp_repr r = { .src_port = (uint16_t)(f + 1), .dst_port = 65535,
				      .seq = f * 0x01010101u, .ack = ~f, .flags = (uint8_t)f,
				      .window = (uint16_t)(f << 8), .urgent = (uint16_t)f }, back;
		enum wire_status st;

		assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 20);
		st = parse_exact(hdr, 20, &back);
		assert_int_equal(st, WIRE_OK);
		assert_repr_equal(&back, &r);
	}
}

static void test_tcp_build_ignores_hdr_len(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r = { .src_port = 1, .dst_port = 2, .hdr_len = 60 };

	(void)state;
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 20);
	assert_int_equal(hdr[TCP_OFF_DATA_OFF], 5 << 4);
}

static void test_tcp_build_checksum_and_reserved_left_zero(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r;

	(void)state;
	assert_int_equal(parse_exact(syn_seg, sizeof(syn_seg), &r), WIRE_OK);
	memset(hdr, 0xff, sizeof(hdr));
	assert_int_equal(tcp_build(hdr, sizeof(hdr), &r), 40);
	assert_int_equal(wire_get_be16(hdr + TCP_OFF_CSUM), 0);
	assert_int_equal(hdr[TCP_OFF_DATA_OFF] & 0x0f, 0);
	assert_int_equal(hdr[40], 0xff);   /* nothing written past the header */
}

static void test_tcp_build_then_checksum_verifies_zero(void **state)
{
	uint8_t seg[TCP_HDR_MAX_LEN + 5];
	struct tcp_repr r = { .src_port = 80, .dst_port = 1234, .seq = 7, .ack = 9,
			      .flags = TCP_FLAG_PSH | TCP_FLAG_ACK, .window = 512,
			      .options = { .has_timestamps = true, .tsval = 1, .tsecr = 2 } };
	size_t n;

	(void)state;
	n = tcp_build(seg, sizeof(seg), &r);
	memcpy(seg + n, "hello", 5);
	wire_put_be16(seg + TCP_OFF_CSUM, tcp_checksum(0x0a000001u, 0x0a000002u, seg, n + 5));
	assert_int_equal(tcp_checksum(0x0a000001u, 0x0a000002u, seg, n + 5), 0);
}

static void test_tcp_build_small_cap_returns_zero(void **state)
{
	uint8_t hdr[TCP_HDR_MAX_LEN];
	struct tcp_repr r;
	size_t cap;

	(void)state;
	assert_int_equal(parse_exact(syn_seg, sizeof(syn_seg), &r), WIRE_OK);
	for (cap = 0; cap < 40; cap++) {
		uint8_t *buf = malloc(cap ? cap : 1);

		assert_non_null(buf);
		assert_int_equal(tcp_build(buf, cap, &r), 0);
		free(buf);
	}
	assert_int_equal(tcp_build(hdr, 40, &r), 40);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_parse_golden_syn_reads_fields),
		cmocka_unit_test(test_tcp_parse_golden_syn_reads_options),
		cmocka_unit_test(test_tcp_parse_golden_syn_ack_reads_fields_and_options),
		cmocka_unit_test(test_tcp_parse_golden_ack_reads_timestamps_only),
		cmocka_unit_test(test_tcp_parse_golden_data_payload_follows_header),
		cmocka_unit_test(test_tcp_parse_golden_fin_reads_fin_ack),
		cmocka_unit_test(test_tcp_checksum_golden_segments_match_tcpdump),
		cmocka_unit_test(test_tcp_checksum_golden_with_field_filled_verifies_zero),
		cmocka_unit_test(test_tcp_checksum_golden_partial_field_is_folded_pseudo_sum),
		cmocka_unit_test(test_tcp_checksum_corrupted_byte_detected),
		cmocka_unit_test(test_tcp_checksum_covers_addresses),
		cmocka_unit_test(test_tcp_checksum_odd_length_matches_explicit_pseudo_header),
		cmocka_unit_test(test_tcp_parse_empty_buffer_rejected_truncated),
		cmocka_unit_test(test_tcp_parse_every_truncation_below_20_rejected_truncated),
		cmocka_unit_test(test_tcp_parse_every_truncation_of_options_rejected_bad_hdr_len),
		cmocka_unit_test(test_tcp_parse_every_truncation_of_payload_accepted),
		cmocka_unit_test(test_tcp_parse_data_offset_below_5_rejected_bad_hdr_len),
		cmocka_unit_test(test_tcp_parse_data_offset_past_buffer_rejected_bad_hdr_len),
		cmocka_unit_test(test_tcp_parse_data_offset_15_all_nops_accepted),
		cmocka_unit_test(test_tcp_parse_header_only_no_payload_accepted),
		cmocka_unit_test(test_tcp_parse_reserved_bits_ignored),
		cmocka_unit_test(test_tcp_parse_urgent_pointer_read),
		cmocka_unit_test(test_tcp_parse_checksum_not_examined),
		cmocka_unit_test(test_tcp_parse_bad_option_rejected_bad_option),
		cmocka_unit_test(test_tcp_parse_options_checked_before_semantics),
		cmocka_unit_test(test_tcp_parse_option_past_header_not_read),
		cmocka_unit_test(test_tcp_parse_failure_leaves_out_untouched),
		cmocka_unit_test(test_tcp_parse_src_port_zero_rejected_bad_field),
		cmocka_unit_test(test_tcp_parse_dst_port_zero_rejected_bad_field),
		cmocka_unit_test(test_tcp_parse_port_65535_accepted),
		cmocka_unit_test(test_tcp_parse_syn_fin_accepted_for_tcp_input),
		cmocka_unit_test(test_tcp_parse_syn_rst_accepted_for_tcp_input),
		cmocka_unit_test(test_tcp_parse_all_flags_xmas_accepted_for_tcp_input),
		cmocka_unit_test(test_tcp_parse_no_flags_accepted),
		cmocka_unit_test(test_tcp_parse_ecn_setup_syn_accepted),
		cmocka_unit_test(test_tcp_parse_rst_ack_and_fin_rst_accepted),
		cmocka_unit_test(test_tcp_parse_every_flag_combination_accepted),
		cmocka_unit_test(test_tcp_options_empty_ok_nothing_found),
		cmocka_unit_test(test_tcp_options_nop_only_ok),
		cmocka_unit_test(test_tcp_options_eol_stops_walk_ignores_rest),
		cmocka_unit_test(test_tcp_options_before_eol_kept),
		cmocka_unit_test(test_tcp_options_mss_len_4_read),
		cmocka_unit_test(test_tcp_options_mss_wrong_len_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_wscale_len_3_read),
		cmocka_unit_test(test_tcp_options_wscale_wrong_len_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_wscale_14_kept),
		cmocka_unit_test(test_tcp_options_wscale_above_14_clamped_to_14),
		cmocka_unit_test(test_tcp_options_wscale_zero_present),
		cmocka_unit_test(test_tcp_options_sack_permitted_len_2_read),
		cmocka_unit_test(test_tcp_options_sack_permitted_wrong_len_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_timestamps_len_10_read),
		cmocka_unit_test(test_tcp_options_timestamps_wrong_len_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_sack_1_block_read),
		cmocka_unit_test(test_tcp_options_sack_2_blocks_read),
		cmocka_unit_test(test_tcp_options_sack_3_blocks_read),
		cmocka_unit_test(test_tcp_options_sack_4_blocks_read),
		cmocka_unit_test(test_tcp_options_sack_5_blocks_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_sack_no_blocks_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_sack_partial_block_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_sack_past_area_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_sack_blocks_not_ordered_still_read),
		cmocka_unit_test(test_tcp_options_length_zero_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_length_one_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_length_past_end_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_missing_length_byte_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_known_kind_cut_by_area_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_unknown_kind_skipped_by_length),
		cmocka_unit_test(test_tcp_options_unknown_kind_len_2_skipped),
		cmocka_unit_test(test_tcp_options_unknown_kind_filling_area_accepted),
		cmocka_unit_test(test_tcp_options_duplicate_mss_last_wins),
		cmocka_unit_test(test_tcp_options_duplicate_wscale_last_wins),
		cmocka_unit_test(test_tcp_options_duplicate_timestamps_last_wins),
		cmocka_unit_test(test_tcp_options_duplicate_sack_last_wins),
		cmocka_unit_test(test_tcp_options_duplicate_bad_second_rejected_bad_option),
		cmocka_unit_test(test_tcp_options_bad_option_after_good_leaves_out_untouched),
		cmocka_unit_test(test_tcp_options_every_truncation_of_golden_syn_ok_at_boundaries),
		cmocka_unit_test(test_tcp_options_all_two_byte_areas_never_overrun),
		cmocka_unit_test(test_tcp_build_golden_syn_matches_capture),
		cmocka_unit_test(test_tcp_build_golden_syn_ack_matches_capture),
		cmocka_unit_test(test_tcp_build_golden_ack_matches_capture),
		cmocka_unit_test(test_tcp_build_golden_data_and_fin_match_capture),
		cmocka_unit_test(test_tcp_build_golden_data_with_checksum_matches_tcpdump),
		cmocka_unit_test(test_tcp_build_no_options_writes_20_bytes),
		cmocka_unit_test(test_tcp_build_mss_only_takes_4_bytes),
		cmocka_unit_test(test_tcp_build_sack_permitted_without_timestamps_nop_nop_first),
		cmocka_unit_test(test_tcp_build_timestamps_without_sack_permitted_nop_nop_first),
		cmocka_unit_test(test_tcp_build_wscale_only_nop_first),
		cmocka_unit_test(test_tcp_build_sack_blocks_nop_nop_first),
		cmocka_unit_test(test_tcp_build_sack_1_to_4_blocks_round_trip),
		cmocka_unit_test(test_tcp_build_sack_with_timestamps_keeps_3_blocks),
		cmocka_unit_test(test_tcp_build_sack_with_every_option_keeps_2_blocks),
		cmocka_unit_test(test_tcp_build_sack_count_above_4_limited_to_4),
		cmocka_unit_test(test_tcp_build_every_option_combination_round_trips),
		cmocka_unit_test(test_tcp_build_then_parse_round_trips_flags_and_fields),
		cmocka_unit_test(test_tcp_build_ignores_hdr_len),
		cmocka_unit_test(test_tcp_build_checksum_and_reserved_left_zero),
		cmocka_unit_test(test_tcp_build_then_checksum_verifies_zero),
		cmocka_unit_test(test_tcp_build_small_cap_returns_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
