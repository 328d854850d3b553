/* UDP datagrams (RFC 768) and their checksum (RFC 768, RFC 1122 §4.1.3.4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "checksum.h"
#include "ipv4.h"
#include "udp.h"

/* The captures below are loopback traffic: 127.0.0.1 to 127.0.0.1. */
#define LOOPBACK 0x7f000001u
#define DOC_A 0xc0000201u /* 192.0.2.1 */
#define DOC_B 0xc0000202u /* 192.0.2.2 */

/* Captured with tcpdump on lo: a DNS query for example.com A from port 40123 to 5300, sent
 * from a socket corked with MSG_MORE so that the kernel computed the checksum (0x6699) in
 * software instead of leaving the partial sum of checksum offload. 29 payload bytes. */
static const uint8_t dns_query[37] = {
	0x9c, 0xbb, 0x14, 0xb4, 0x00, 0x25, 0x66, 0x99, 0x1a, 0x2b, 0x01, 0x00,
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x65, 0x78, 0x61,
	0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63, 0x6f, 0x6d, 0x00, 0x00, 0x01, 0x00,
	0x01,
};

/* ... its answer, 192.0.2.10, from port 5300 (checksum 0x9c74, 45 payload bytes) ... */
static const uint8_t dns_answer[53] = {
	0x14, 0xb4, 0x9c, 0xbb, 0x00, 0x35, 0x9c, 0x74, 0x1a, 0x2b, 0x81, 0x80,
	0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x07, 0x65, 0x78, 0x61,
	0x6d, 0x70, 0x6c, 0x65, 0x03, 0x63, 0x6f, 0x6d, 0x00, 0x00, 0x01, 0x00,
	0x01, 0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00,
	0x04, 0xc0, 0x00, 0x02, 0x0a,
};

/* ... an nc-like "hello dpstack\n" on the same socket (checksum 0x680b, 14 bytes) ... */
static const uint8_t hello[22] = {
	0x9c, 0xbb, 0x14, 0xb4, 0x00, 0x16, 0x68, 0x0b, 0x68, 0x65, 0x6c, 0x6c,
	0x6f, 0x20, 0x64, 0x70, 0x73, 0x74, 0x61, 0x63, 0x6b, 0x0a,
};

/* ... and "no checksum\n" from port 40124, a socket with SO_NO_CHECK: checksum field 0. */
static const uint8_t no_checksum[20] = {
	0x9c, 0xbc, 0x14, 0xb4, 0x00, 0x14, 0x00, 0x00, 0x6e, 0x6f, 0x20, 0x63,
	0x68, 0x65, 0x63, 0x6b, 0x73, 0x75, 0x6d, 0x0a,
};

/* 192.0.2.1:1234 to 192.0.2.2:5678, payload 0x60d6: the pseudo-header and header (checksum
 * field 0) fold to 0x9f29, and 0x9f29 + 0x60d6 = 0xffff, so the computed checksum is 0. */
static const uint8_t csum_zero[10] = {
	0x04, 0xd2, 0x16, 0x2e, 0x00, 0x0a, 0x00, 0x00, 0x60, 0xd6,
};

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct udp_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = udp_parse(copy, len, out);
	free(copy);
	return st;
}

/* udp_checksum_ok on a heap copy of exactly len bytes. */
static bool csum_ok_exact(uint32_t src, uint32_t dst, const uint8_t *bytes, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	bool ok;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	ok = udp_checksum_ok(src, dst, copy, len);
	free(copy);
	return ok;
}

/* Builds header + payload into dgram and stores the checksum, as a sender does. */
static size_t build_datagram(uint8_t *dgram, size_t cap, uint32_t src, uint32_t dst,
			     uint16_t src_port, uint16_t dst_port, const uint8_t *payload,
			     size_t payload_len)
{
	struct udp_repr r = { .src_port = src_port, .dst_port = dst_port,
			      .length = (uint16_t)(UDP_HDR_LEN + payload_len),
			      .checksum = UDP_CSUM_NONE };
	size_t n = udp_build(dgram, cap, &r);

	assert_int_equal(n, UDP_HDR_LEN);
	assert_true(payload_len <= cap - n);
	if (payload_len)
		memcpy(dgram + n, payload, payload_len);
	wire_put_be16(dgram + UDP_OFF_CSUM, udp_checksum(src, dst, dgram, n + payload_len));
	return n + payload_len;
}

static void test_udp_parse_golden_dns_query_reads_fields(void **state)
{
	struct udp_repr r;

	(void)state;
	assert_int_equal(parse_exact(dns_query, sizeof(dns_query), &r), WIRE_OK);
	assert_int_equal(r.src_port, 40123);
	assert_int_equal(r.dst_port, 5300);
	assert_int_equal(r.length, 37);
	assert_int_equal(r.checksum, 0x6699);
	assert_int_equal(r.payload_len, 29);
}

static void test_udp_parse_golden_dns_answer_reads_fields(void **state)
{
	struct udp_repr r;

	(void)state;
	assert_int_equal(parse_exact(dns_answer, sizeof(dns_answer), &r), WIRE_OK);
	assert_int_equal(r.src_port, 5300);
	assert_int_equal(r.dst_port, 40123);
	assert_int_equal(r.length, 53);
	assert_int_equal(r.checksum, 0x9c74);
	assert_int_equal(r.payload_len, 45);
}

static void test_udp_parse_golden_hello_reads_fields(void **state)
{
	struct udp_repr r;

	(void)state;
	assert_int_equal(parse_exact(hello, sizeof(hello), &r), WIRE_OK);
	assert_int_equal(r.src_port, 40123);
	assert_int_equal(r.dst_port, 5300);
	assert_int_equal(r.length, 22);
	assert_int_equal(r.checksum, 0x680b);
	assert_int_equal(r.payload_len, 14);
	assert_memory_equal(hello + UDP_HDR_LEN, "hello dpstack\n", r.payload_len);
}

static void test_udp_parse_golden_no_checksum_reads_zero(void **state)
{
	struct udp_repr r;

	(void)state;
	assert_int_equal(parse_exact(no_checksum, sizeof(no_checksum), &r), WIRE_OK);
	assert_int_equal(r.src_port, 40124);
	assert_int_equal(r.checksum, UDP_CSUM_NONE);
	assert_int_equal(r.payload_len, 12);
}

static void test_udp_checksum_ok_golden_captures_verify(void **state)
{
	(void)state;
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, dns_query, sizeof(dns_query)));
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, dns_answer, sizeof(dns_answer)));
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, hello, sizeof(hello)));
}

static void test_udp_checksum_golden_captures_recomputed_equal(void **state)
{
	(void)state;
	/* The field's own content is ignored, so the captures can be recomputed in place. */
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, dns_query, sizeof(dns_query)), 0x6699);
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, dns_answer, sizeof(dns_answer)),
			 0x9c74);
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, hello, sizeof(hello)), 0x680b);
}

static void test_udp_checksum_field_content_ignored(void **state)
{
	uint8_t dgram[sizeof(dns_query)];

	(void)state;
	memcpy(dgram, dns_query, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_CSUM, 0);
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, dgram, sizeof(dgram)), 0x6699);
	wire_put_be16(dgram + UDP_OFF_CSUM, 0xffff);
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, dgram, sizeof(dgram)), 0x6699);
}

static void test_udp_checksum_ok_other_address_rejected(void **state)
{
	(void)state;
	/* The pseudo-header binds the datagram to its addresses (RFC 768). */
	assert_false(csum_ok_exact(LOOPBACK + 1, LOOPBACK, dns_query, sizeof(dns_query)));
	assert_false(csum_ok_exact(LOOPBACK, LOOPBACK + 1, dns_query, sizeof(dns_query)));
	assert_false(csum_ok_exact(DOC_A, DOC_B, hello, sizeof(hello)));
}

static void test_udp_checksum_ok_swapped_addresses_accepted(void **state)
{
	(void)state;
	/* Addition commutes: swapping source and destination leaves the sum as it was. */
	assert_int_equal(udp_checksum(DOC_A, DOC_B, hello, sizeof(hello)),
			 udp_checksum(DOC_B, DOC_A, hello, sizeof(hello)));
}

static void test_udp_checksum_ok_any_changed_byte_rejected(void **state)
{
	uint8_t dgram[sizeof(dns_query)];
	size_t off;

	(void)state;
	for (off = 0; off < sizeof(dgram); off++) {
		memcpy(dgram, dns_query, sizeof(dgram));
		dgram[off] ^= 0x01;
		assert_false(csum_ok_exact(LOOPBACK, LOOPBACK, dgram, sizeof(dgram)));
	}
}

static void test_udp_checksum_ok_other_length_rejected(void **state)
{
	size_t len;

	(void)state;
	/* The length is in the pseudo-header: the same bytes under any other length fail. */
	for (len = UDP_HDR_LEN; len < sizeof(dns_answer); len++)
		assert_false(csum_ok_exact(LOOPBACK, LOOPBACK, dns_answer, len));
}

static void test_udp_checksum_ok_zero_checksum_capture_accepted(void **state)
{
	(void)state;
	/* RFC 768: a transmitted 0 means the sender computed no checksum. */
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, no_checksum, sizeof(no_checksum)));
	assert_true(csum_ok_exact(DOC_A, DOC_B, no_checksum, sizeof(no_checksum)));
}

static void test_udp_checksum_ok_zero_checksum_changed_payload_accepted(void **state)
{
	uint8_t dgram[sizeof(no_checksum)];

	(void)state;
	/* With no checksum nothing can be verified: the datagram is taken as it is. */
	memcpy(dgram, no_checksum, sizeof(dgram));
	dgram[UDP_HDR_LEN] ^= 0xff;
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, dgram, sizeof(dgram)));
}

static void test_udp_checksum_computed_zero_returns_ffff(void **state)
{
	uint8_t dgram[sizeof(csum_zero)];
	uint32_t sum;

	(void)state;
	memcpy(dgram, csum_zero, sizeof(dgram));
	/* The one's-complement sum really is all ones, i.e. the checksum computes to 0 ... */
	sum = wire_csum_pseudo4(DOC_A, DOC_B, IP4_PROTO_UDP, sizeof(dgram));
	assert_int_equal(wire_csum_finish(wire_csum_add(sum, dgram, sizeof(dgram))), 0);
	/* ... which RFC 768 sends as all ones, since 0 means "none". */
	assert_int_equal(udp_checksum(DOC_A, DOC_B, dgram, sizeof(dgram)), 0xffff);
}

static void test_udp_checksum_ok_computed_zero_sent_as_ffff_accepted(void **state)
{
	uint8_t dgram[sizeof(csum_zero)];

	(void)state;
	memcpy(dgram, csum_zero, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_CSUM, udp_checksum(DOC_A, DOC_B, dgram, sizeof(dgram)));
	assert_int_equal(wire_get_be16(dgram + UDP_OFF_CSUM), 0xffff);
	assert_true(csum_ok_exact(DOC_A, DOC_B, dgram, sizeof(dgram)));
	dgram[UDP_HDR_LEN] ^= 0x01;
	assert_false(csum_ok_exact(DOC_A, DOC_B, dgram, sizeof(dgram)));
}

static void test_udp_checksum_odd_payload_lengths_verify(void **state)
{
	uint8_t payload[17], dgram[UDP_HDR_LEN + sizeof(payload)];
	size_t plen, n, i;

	(void)state;
	for (i = 0; i < sizeof(payload); i++)
		payload[i] = (uint8_t)(0xa0 + i);
	for (plen = 0; plen <= sizeof(payload); plen++) {
		n = build_datagram(dgram, sizeof(dgram), DOC_A, DOC_B, 1000, 2000, payload, plen);
		assert_int_equal(n, UDP_HDR_LEN + plen);
		assert_int_not_equal(wire_get_be16(dgram + UDP_OFF_CSUM), 0);
		assert_true(csum_ok_exact(DOC_A, DOC_B, dgram, n));
		if (plen % 2 == 1) {
			/* The odd last byte counts as the high byte of a zero-padded word. */
			dgram[n - 1] ^= 0x80;
			assert_false(csum_ok_exact(DOC_A, DOC_B, dgram, n));
		}
	}
}

static void test_udp_checksum_max_length_datagram_verifies(void **state)
{
	uint8_t *dgram = malloc(UDP_MAX_LEN);
	struct udp_repr r = { .src_port = 0xffff, .dst_port = 0xffff, .length = UDP_MAX_LEN };

	(void)state;
	assert_non_null(dgram);
	/* All ones: the 32-bit sum carries many times before it folds. */
	memset(dgram, 0xff, UDP_MAX_LEN);
	assert_int_equal(udp_build(dgram, UDP_MAX_LEN, &r), UDP_HDR_LEN);
	wire_put_be16(dgram + UDP_OFF_CSUM, udp_checksum(0xffffffffu, 0xffffffffu, dgram,
							 UDP_MAX_LEN));
	assert_true(udp_checksum_ok(0xffffffffu, 0xffffffffu, dgram, UDP_MAX_LEN));
	dgram[UDP_MAX_LEN - 1] ^= 0x80;
	assert_false(udp_checksum_ok(0xffffffffu, 0xffffffffu, dgram, UDP_MAX_LEN));
	free(dgram);
}

static void test_udp_checksum_ok_short_or_oversized_len_false(void **state)
{
	uint8_t *big = calloc(1, UDP_MAX_LEN + 1);
	size_t len;

	(void)state;
	assert_non_null(big);
	for (len = 0; len < UDP_HDR_LEN; len++)
		assert_false(csum_ok_exact(LOOPBACK, LOOPBACK, no_checksum, len));
	/* No datagram is longer than its 16-bit length field allows, checksum or not. */
	assert_false(udp_checksum_ok(LOOPBACK, LOOPBACK, big, UDP_MAX_LEN + 1));
	free(big);
}

static void test_udp_checksum_short_or_oversized_len_returns_zero(void **state)
{
	uint8_t *big = calloc(1, UDP_MAX_LEN + 1);
	size_t len;

	(void)state;
	assert_non_null(big);
	for (len = 0; len < UDP_HDR_LEN; len++)
		assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, dns_query, len), 0);
	assert_int_equal(udp_checksum(LOOPBACK, LOOPBACK, big, UDP_MAX_LEN + 1), 0);
	free(big);
}

static void test_udp_parse_every_short_truncation_rejected_truncated(void **state)
{
	struct udp_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < UDP_HDR_LEN; len++)
		assert_int_equal(parse_exact(dns_query, len, &r), WIRE_TRUNCATED);
}

static void test_udp_parse_every_cut_payload_rejected_bad_length(void **state)
{
	struct udp_repr r;
	size_t len;

	(void)state;
	/* The length field (37) says more than the IP layer delivered. */
	for (len = UDP_HDR_LEN; len < sizeof(dns_query); len++)
		assert_int_equal(parse_exact(dns_query, len, &r), WIRE_BAD_LENGTH);
}

static void test_udp_parse_length_below_header_rejected_bad_length(void **state)
{
	uint8_t dgram[sizeof(hello)];
	struct udp_repr r;
	uint16_t length;

	(void)state;
	for (length = 0; length < UDP_HDR_LEN; length++) {
		memcpy(dgram, hello, sizeof(dgram));
		wire_put_be16(dgram + UDP_OFF_LEN, length);
		assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_BAD_LENGTH);
	}
}

static void test_udp_parse_length_above_len_rejected_bad_length(void **state)
{
	static const uint16_t lengths[] = { sizeof(hello) + 1, 0x100, 0x7fff, 0xffff };
	uint8_t dgram[sizeof(hello)];
	struct udp_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		memcpy(dgram, hello, sizeof(dgram));
		wire_put_be16(dgram + UDP_OFF_LEN, lengths[i]);
		assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_BAD_LENGTH);
	}
}

static void test_udp_parse_length_below_len_padding_excluded(void **state)
{
	uint8_t padded[sizeof(dns_query) + 3];
	struct udp_repr r;

	(void)state;
	memcpy(padded, dns_query, sizeof(dns_query));
	memset(padded + sizeof(dns_query), 0, 3);
	assert_int_equal(parse_exact(padded, sizeof(padded), &r), WIRE_OK);
	assert_int_equal(r.length, sizeof(dns_query));
	assert_int_equal(r.payload_len, sizeof(dns_query) - UDP_HDR_LEN);
	/* The checksum covers out->length bytes; the padding is no part of the datagram. */
	assert_true(csum_ok_exact(LOOPBACK, LOOPBACK, padded, r.length));
	assert_false(csum_ok_exact(LOOPBACK, LOOPBACK, padded, sizeof(padded)));
}

static void test_udp_parse_every_padding_amount_accepted(void **state)
{
	uint8_t padded[sizeof(hello) + 64];
	struct udp_repr r;
	size_t len;

	(void)state;
	memset(padded, 0xee, sizeof(padded));
	memcpy(padded, hello, sizeof(hello));
	for (len = sizeof(hello); len <= sizeof(padded); len++) {
		assert_int_equal(parse_exact(padded, len, &r), WIRE_OK);
		assert_int_equal(r.length, sizeof(hello));
		assert_int_equal(r.payload_len, 14);
	}
}

static void test_udp_parse_header_only_accepted(void **state)
{
	struct udp_repr r;
	uint8_t dgram[UDP_HDR_LEN];

	(void)state;
	build_datagram(dgram, sizeof(dgram), DOC_A, DOC_B, 7, 9, NULL, 0);
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_OK);
	assert_int_equal(r.length, UDP_HDR_LEN);
	assert_int_equal(r.payload_len, 0);
	assert_true(csum_ok_exact(DOC_A, DOC_B, dgram, r.length));
}

static void test_udp_parse_dst_port_zero_rejected_bad_field(void **state)
{
	uint8_t dgram[sizeof(hello)];
	struct udp_repr r;

	(void)state;
	memcpy(dgram, hello, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_DST_PORT, 0);
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_BAD_FIELD);
}

static void test_udp_parse_src_port_zero_accepted(void **state)
{
	uint8_t dgram[sizeof(hello)];
	struct udp_repr r;

	(void)state;
	/* RFC 768: the source port is optional, zero when unused. */
	memcpy(dgram, hello, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_SRC_PORT, 0);
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_OK);
	assert_int_equal(r.src_port, 0);
	assert_int_equal(r.dst_port, 5300);
}

static void test_udp_parse_length_checked_before_port(void **state)
{
	static const uint8_t dgram[UDP_HDR_LEN] = { 0x12, 0x34, 0, 0, 0x00, 0x09, 0, 0 };
	struct udp_repr r;

	(void)state;
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_BAD_LENGTH);
	assert_int_equal(parse_exact(dgram, UDP_HDR_LEN - 1, &r), WIRE_TRUNCATED);
}

static void test_udp_parse_failure_leaves_output_untouched(void **state)
{
	uint8_t dgram[sizeof(hello)];
	struct udp_repr r, before;

	(void)state;
	memset(&r, 0x5a, sizeof(r));
	before = r;
	assert_int_equal(parse_exact(hello, UDP_HDR_LEN - 1, &r), WIRE_TRUNCATED);
	assert_memory_equal(&r, &before, sizeof(r));
	assert_int_equal(parse_exact(hello, sizeof(hello) - 1, &r), WIRE_BAD_LENGTH);
	assert_memory_equal(&r, &before, sizeof(r));
	memcpy(dgram, hello, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_DST_PORT, 0);
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_BAD_FIELD);
	assert_memory_equal(&r, &before, sizeof(r));
}

static void test_udp_parse_bad_checksum_accepted(void **state)
{
	uint8_t dgram[sizeof(dns_query)];
	struct udp_repr r;

	(void)state;
	/* The checksum is udp_checksum_ok's business, not the parser's. */
	memcpy(dgram, dns_query, sizeof(dgram));
	wire_put_be16(dgram + UDP_OFF_CSUM, 0x1234);
	assert_int_equal(parse_exact(dgram, sizeof(dgram), &r), WIRE_OK);
	assert_int_equal(r.checksum, 0x1234);
	assert_false(csum_ok_exact(LOOPBACK, LOOPBACK, dgram, r.length));
}

static void test_udp_build_golden_captures_match(void **state)
{
	uint8_t dgram[64];
	size_t n;

	(void)state;
	n = build_datagram(dgram, sizeof(dgram), LOOPBACK, LOOPBACK, 40123, 5300,
			   dns_query + UDP_HDR_LEN, sizeof(dns_query) - UDP_HDR_LEN);
	assert_int_equal(n, sizeof(dns_query));
	assert_memory_equal(dgram, dns_query, n);
	n = build_datagram(dgram, sizeof(dgram), LOOPBACK, LOOPBACK, 5300, 40123,
			   dns_answer + UDP_HDR_LEN, sizeof(dns_answer) - UDP_HDR_LEN);
	assert_int_equal(n, sizeof(dns_answer));
	assert_memory_equal(dgram, dns_answer, n);
	n = build_datagram(dgram, sizeof(dgram), LOOPBACK, LOOPBACK, 40123, 5300,
			   (const uint8_t *)"hello dpstack\n", 14);
	assert_memory_equal(dgram, hello, n);
}

static void test_udp_build_golden_no_checksum_matches_capture(void **state)
{
	struct udp_repr r = { .src_port = 40124, .dst_port = 5300, .length = 20,
			      .checksum = UDP_CSUM_NONE };
	uint8_t dgram[sizeof(no_checksum)];

	(void)state;
	assert_int_equal(udp_build(dgram, sizeof(dgram), &r), UDP_HDR_LEN);
	memcpy(dgram + UDP_HDR_LEN, "no checksum\n", 12);
	assert_memory_equal(dgram, no_checksum, sizeof(dgram));
}

static void test_udp_build_stores_fields_as_given(void **state)
{
	struct udp_repr r = { .src_port = 0x0102, .dst_port = 0x0304, .length = 0x0506,
			      .checksum = 0x0708, .payload_len = 12345 };
	static const uint8_t want[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint8_t dgram[16];

	(void)state;
	memset(dgram, 0xee, sizeof(dgram));
	assert_int_equal(udp_build(dgram, sizeof(dgram), &r), UDP_HDR_LEN);
	assert_memory_equal(dgram, want, sizeof(want));
	assert_int_equal(dgram[UDP_HDR_LEN], 0xee); /* payload area untouched */
}

static void test_udp_build_small_cap_returns_zero(void **state)
{
	struct udp_repr r = { .src_port = 1, .dst_port = 2, .length = 8 };
	uint8_t dgram[UDP_HDR_LEN];
	size_t cap;

	(void)state;
	for (cap = 0; cap < UDP_HDR_LEN; cap++) {
		memset(dgram, 0xa5, sizeof(dgram));
		assert_int_equal(udp_build(dgram, cap, &r), 0);
		assert_int_equal(dgram[0], 0xa5);
	}
}

static void test_udp_build_then_parse_round_trips(void **state)
{
	static const uint8_t payload[11] = "round trip";
	uint8_t dgram[UDP_HDR_LEN + sizeof(payload)];
	struct udp_repr r;
	size_t n;

	(void)state;
	n = build_datagram(dgram, sizeof(dgram), DOC_A, DOC_B, 0, 53, payload, sizeof(payload));
	assert_int_equal(parse_exact(dgram, n, &r), WIRE_OK);
	assert_int_equal(r.src_port, 0);
	assert_int_equal(r.dst_port, 53);
	assert_int_equal(r.length, n);
	assert_int_equal(r.checksum, wire_get_be16(dgram + UDP_OFF_CSUM));
	assert_int_equal(r.payload_len, sizeof(payload));
	assert_true(csum_ok_exact(DOC_A, DOC_B, dgram, r.length));
}

static void test_udp_parse_then_build_reproduces_bytes(void **state)
{
	static const struct {
		const uint8_t *bytes;
		size_t len;
	} caps[] = {
		{ dns_query, sizeof(dns_query) }, { dns_answer, sizeof(dns_answer) },
		{ hello, sizeof(hello) }, { no_checksum, sizeof(no_checksum) },
	};
	uint8_t dgram[64];
	struct udp_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		assert_int_equal(parse_exact(caps[i].bytes, caps[i].len, &r), WIRE_OK);
		assert_int_equal(udp_build(dgram, sizeof(dgram), &r), UDP_HDR_LEN);
		memcpy(dgram + UDP_HDR_LEN, caps[i].bytes + UDP_HDR_LEN, r.payload_len);
		assert_memory_equal(dgram, caps[i].bytes, caps[i].len);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udp_parse_golden_dns_query_reads_fields),
		cmocka_unit_test(test_udp_parse_golden_dns_answer_reads_fields),
		cmocka_unit_test(test_udp_parse_golden_hello_reads_fields),
		cmocka_unit_test(test_udp_parse_golden_no_checksum_reads_zero),
		cmocka_unit_test(test_udp_checksum_ok_golden_captures_verify),
		cmocka_unit_test(test_udp_checksum_golden_captures_recomputed_equal),
		cmocka_unit_test(test_udp_checksum_field_content_ignored),
		cmocka_unit_test(test_udp_checksum_ok_other_address_rejected),
		cmocka_unit_test(test_udp_checksum_ok_swapped_addresses_accepted),
		cmocka_unit_test(test_udp_checksum_ok_any_changed_byte_rejected),
		cmocka_unit_test(test_udp_checksum_ok_other_length_rejected),
		cmocka_unit_test(test_udp_checksum_ok_zero_checksum_capture_accepted),
		cmocka_unit_test(test_udp_checksum_ok_zero_checksum_changed_payload_accepted),
		cmocka_unit_test(test_udp_checksum_computed_zero_returns_ffff),
		cmocka_unit_test(test_udp_checksum_ok_computed_zero_sent_as_ffff_accepted),
		cmocka_unit_test(test_udp_checksum_odd_payload_lengths_verify),
		cmocka_unit_test(test_udp_checksum_max_length_datagram_verifies),
		cmocka_unit_test(test_udp_checksum_ok_short_or_oversized_len_false),
		cmocka_unit_test(test_udp_checksum_short_or_oversized_len_returns_zero),
		cmocka_unit_test(test_udp_parse_every_short_truncation_rejected_truncated),
		cmocka_unit_test(test_udp_parse_every_cut_payload_rejected_bad_length),
		cmocka_unit_test(test_udp_parse_length_below_header_rejected_bad_length),
		cmocka_unit_test(test_udp_parse_length_above_len_rejected_bad_length),
		cmocka_unit_test(test_udp_parse_length_below_len_padding_excluded),
		cmocka_unit_test(test_udp_parse_every_padding_amount_accepted),
		cmocka_unit_test(test_udp_parse_header_only_accepted),
		cmocka_unit_test(test_udp_parse_dst_port_zero_rejected_bad_field),
		cmocka_unit_test(test_udp_parse_src_port_zero_accepted),
		cmocka_unit_test(test_udp_parse_length_checked_before_port),
		cmocka_unit_test(test_udp_parse_failure_leaves_output_untouched),
		cmocka_unit_test(test_udp_parse_bad_checksum_accepted),
		cmocka_unit_test(test_udp_build_golden_captures_match),
		cmocka_unit_test(test_udp_build_golden_no_checksum_matches_capture),
		cmocka_unit_test(test_udp_build_stores_fields_as_given),
		cmocka_unit_test(test_udp_build_small_cap_returns_zero),
		cmocka_unit_test(test_udp_build_then_parse_round_trips),
		cmocka_unit_test(test_udp_parse_then_build_reproduces_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
