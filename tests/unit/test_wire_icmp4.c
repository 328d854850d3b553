/* ICMP for IPv4 (RFC 792). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "checksum.h"
#include "icmp4.h"
#include "ipv4.h"

/* Captured with tcpdump: the ICMP part of `ping -c 1 192.0.2.1` (id 0x1b35, seq 1) ... */
static const uint8_t echo_request[64] = {
	0x08, 0x00, 0x67, 0x94, 0x1b, 0x35, 0x00, 0x01, 0x69, 0x85, 0x02, 0x6b,
	0x00, 0x00, 0x00, 0x00, 0x45, 0x72, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	0x34, 0x35, 0x36, 0x37,
};

/* ... the peer's echo reply ... */
static const uint8_t echo_reply[64] = {
	0x00, 0x00, 0x6f, 0x94, 0x1b, 0x35, 0x00, 0x01, 0x69, 0x85, 0x02, 0x6b,
	0x00, 0x00, 0x00, 0x00, 0x45, 0x72, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	0x34, 0x35, 0x36, 0x37,
};

/* ... and the kernel's host unreachable for a ping to 192.0.2.77, which had no ARP answer:
 * the offending datagram's header and data follow the 8-byte header. */
static const uint8_t host_unreach[92] = {
	0x03, 0x01, 0xfc, 0xfe, 0x00, 0x00, 0x00, 0x00, 0x45, 0x00, 0x00, 0x54,
	0x0d, 0x74, 0x40, 0x00, 0x40, 0x01, 0xa8, 0xe5, 0xc0, 0x00, 0x02, 0x02,
	0xc0, 0x00, 0x02, 0x4d, 0x08, 0x00, 0x30, 0xa1, 0x1b, 0x34, 0x00, 0x01,
	0x67, 0x85, 0x02, 0x6b, 0x00, 0x00, 0x00, 0x00, 0x7e, 0x66, 0x05, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23,
	0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f,
	0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
};

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, bool verify,
				    struct icmp4_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = icmp4_parse(copy, len, verify, out);
	free(copy);
	return st;
}

/* Builds header + payload into msg and stores the checksum, as a sender does. */
static size_t build_message(uint8_t *msg, size_t cap, const struct icmp4_repr *r,
			    const uint8_t *payload, size_t payload_len)
{
	size_t n = icmp4_build_header(msg, cap, r);

	assert_int_equal(n, ICMP4_HDR_LEN);
	assert_true(payload_len <= cap - n);
	if (payload_len)
		memcpy(msg + n, payload, payload_len);
	wire_put_be16(msg + ICMP4_OFF_CSUM, wire_csum(msg, n + payload_len));
	return n + payload_len;
}

static void test_icmp4_parse_golden_echo_request_reads_fields(void **state)
{
	struct icmp4_repr r;

	(void)state;
	assert_int_equal(parse_exact(echo_request, sizeof(echo_request), true, &r), WIRE_OK);
	assert_int_equal(r.type, ICMP4_ECHO_REQUEST);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.rest, 0x1b350001u);
	assert_int_equal(r.rest >> 16, 0x1b35); /* identifier */
	assert_int_equal(r.rest & 0xffff, 1);   /* sequence number */
	assert_int_equal(r.payload_len, 56);
}

static void test_icmp4_parse_golden_echo_reply_reads_fields(void **state)
{
	struct icmp4_repr r;

	(void)state;
	assert_int_equal(parse_exact(echo_reply, sizeof(echo_reply), true, &r), WIRE_OK);
	assert_int_equal(r.type, ICMP4_ECHO_REPLY);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.rest, 0x1b350001u);
	assert_int_equal(r.payload_len, 56);
}

static void test_icmp4_parse_golden_host_unreach_quotes_datagram(void **state)
{
	struct icmp4_repr r;
	struct ip4_repr inner;

	(void)state;
	assert_int_equal(parse_exact(host_unreach, sizeof(host_unreach), true, &r), WIRE_OK);
	assert_int_equal(r.type, ICMP4_DEST_UNREACH);
	assert_int_equal(r.code, ICMP4_UNREACH_HOST);
	assert_int_equal(r.rest, 0);
	assert_int_equal(r.payload_len, 84);
	/* RFC 792: the payload starts with the offending datagram's IP header. */
	assert_int_equal(ip4_parse(host_unreach + ICMP4_HDR_LEN, r.payload_len, true, &inner),
			 WIRE_OK);
	assert_int_equal(inner.dst, 0xc000024du);
	assert_int_equal(inner.proto, IP4_PROTO_ICMP);
}

static void test_icmp4_parse_every_short_truncation_rejected_truncated(void **state)
{
	struct icmp4_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < ICMP4_HDR_LEN; len++) {
		assert_int_equal(parse_exact(echo_request, len, true, &r), WIRE_TRUNCATED);
		assert_int_equal(parse_exact(echo_request, len, false, &r), WIRE_TRUNCATED);
	}
}

static void test_icmp4_parse_every_long_truncation_rejected_bad_checksum(void **state)
{
	struct icmp4_repr r;
	size_t len;

	(void)state;
	/* The checksum covers the whole message, so a cut payload shows. */
	for (len = ICMP4_HDR_LEN; len < sizeof(echo_request); len++) {
		assert_int_equal(parse_exact(echo_request, len, true, &r), WIRE_BAD_CHECKSUM);
		assert_int_equal(parse_exact(echo_request, len, false, &r), WIRE_OK);
		assert_int_equal(r.payload_len, len - ICMP4_HDR_LEN);
	}
}

static void test_icmp4_parse_truncation_checked_before_checksum(void **state)
{
	static const uint8_t junk[7] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x12 };
	struct icmp4_repr r;

	(void)state;
	assert_int_equal(parse_exact(junk, sizeof(junk), true, &r), WIRE_TRUNCATED);
}

static void test_icmp4_parse_any_changed_byte_rejected_bad_checksum(void **state)
{
	uint8_t msg[64];
	struct icmp4_repr r;
	size_t off;

	(void)state;
	for (off = 0; off < sizeof(msg); off++) {
		memcpy(msg, echo_request, sizeof(msg));
		msg[off] ^= 0x01;
		assert_int_equal(parse_exact(msg, sizeof(msg), true, &r), WIRE_BAD_CHECKSUM);
	}
}

static void test_icmp4_parse_bad_checksum_unverified_accepted(void **state)
{
	uint8_t msg[64];
	struct icmp4_repr r;

	(void)state;
	memcpy(msg, echo_request, sizeof(msg));
	wire_put_be16(msg + ICMP4_OFF_CSUM, 0);
	assert_int_equal(parse_exact(msg, sizeof(msg), false, &r), WIRE_OK);
	assert_int_equal(r.type, ICMP4_ECHO_REQUEST);
}

static void test_icmp4_parse_header_only_accepted(void **state)
{
	struct icmp4_repr in = { .type = ICMP4_ECHO_REQUEST, .rest = 0x00010002u }, out;
	uint8_t msg[ICMP4_HDR_LEN];

	(void)state;
	build_message(msg, sizeof(msg), &in, NULL, 0);
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &out), WIRE_OK);
	assert_int_equal(out.payload_len, 0);
}

static void test_icmp4_parse_odd_length_checksum_verified(void **state)
{
	static const uint8_t payload[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	struct icmp4_repr in = { .type = ICMP4_ECHO_REPLY, .rest = 0xabcd0007u }, out;
	uint8_t msg[ICMP4_HDR_LEN + 9];

	(void)state;
	build_message(msg, sizeof(msg), &in, payload, sizeof(payload));
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &out), WIRE_OK);
	assert_int_equal(out.payload_len, 9);
	msg[sizeof(msg) - 1] ^= 0x80; /* the odd last byte counts as a high byte */
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &out), WIRE_BAD_CHECKSUM);
}

static void test_icmp4_parse_negative_zero_checksum_accepted(void **state)
{
	/* Words 0xffff, 0xffff(csum), 0, 0: the computed checksum is 0x0000, and 0xffff is the
	 * other one's-complement zero (RFC 1624 §3), so both verify. */
	uint8_t msg[8] = { 0xff, 0xff, 0x00, 0x00, 0, 0, 0, 0 };
	struct icmp4_repr r;

	(void)state;
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &r), WIRE_OK);
	msg[2] = msg[3] = 0xff;
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &r), WIRE_OK);
}

static void test_icmp4_parse_unknown_type_accepted(void **state)
{
	struct icmp4_repr in = { .type = 200, .code = 77, .rest = 0xffffffffu }, out;
	uint8_t msg[ICMP4_HDR_LEN];

	(void)state;
	build_message(msg, sizeof(msg), &in, NULL, 0);
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &out), WIRE_OK);
	assert_int_equal(out.type, 200);
	assert_int_equal(out.code, 77);
	assert_int_equal(out.rest, 0xffffffffu);
}

static void test_icmp4_build_golden_echo_request_matches_capture(void **state)
{
	struct icmp4_repr r = { .type = ICMP4_ECHO_REQUEST, .code = 0, .rest = 0x1b350001u };
	uint8_t msg[64];

	(void)state;
	build_message(msg, sizeof(msg), &r, echo_request + 8, 56);
	assert_memory_equal(msg, echo_request, sizeof(msg));
}

static void test_icmp4_build_golden_echo_reply_matches_capture(void **state)
{
	struct icmp4_repr r = { .type = ICMP4_ECHO_REPLY, .code = 0, .rest = 0x1b350001u };
	uint8_t msg[64];

	(void)state;
	build_message(msg, sizeof(msg), &r, echo_request + 8, 56);
	assert_memory_equal(msg, echo_reply, sizeof(msg));
}

static void test_icmp4_build_golden_host_unreach_matches_capture(void **state)
{
	struct icmp4_repr r = { .type = ICMP4_DEST_UNREACH, .code = ICMP4_UNREACH_HOST };
	uint8_t msg[92];

	(void)state;
	build_message(msg, sizeof(msg), &r, host_unreach + 8, 84);
	assert_memory_equal(msg, host_unreach, sizeof(msg));
}

static void test_icmp4_build_header_writes_zero_checksum(void **state)
{
	struct icmp4_repr r = { .type = ICMP4_TIME_EXCEEDED, .code = ICMP4_TIMEX_TTL };
	uint8_t msg[16];

	(void)state;
	memset(msg, 0xee, sizeof(msg));
	assert_int_equal(icmp4_build_header(msg, sizeof(msg), &r), ICMP4_HDR_LEN);
	assert_int_equal(wire_get_be16(msg + ICMP4_OFF_CSUM), 0);
	assert_int_equal(wire_get_be32(msg + ICMP4_OFF_REST), 0);
	assert_int_equal(msg[ICMP4_HDR_LEN], 0xee); /* payload area untouched */
}

static void test_icmp4_build_header_frag_needed_carries_mtu(void **state)
{
	/* RFC 1191 §4: the low 16 bits of the rest word are the next-hop MTU. */
	struct icmp4_repr r = { .type = ICMP4_DEST_UNREACH, .code = ICMP4_UNREACH_FRAG_NEEDED,
				.rest = 1400 };
	static const uint8_t want[8] = { 3, 4, 0, 0, 0x00, 0x00, 0x05, 0x78 };
	uint8_t msg[8];

	(void)state;
	assert_int_equal(icmp4_build_header(msg, sizeof(msg), &r), ICMP4_HDR_LEN);
	assert_memory_equal(msg, want, sizeof(want));
}

static void test_icmp4_build_small_cap_returns_zero(void **state)
{
	struct icmp4_repr r = { .type = ICMP4_ECHO_REQUEST };
	uint8_t msg[ICMP4_HDR_LEN];
	size_t cap;

	(void)state;
	for (cap = 0; cap < ICMP4_HDR_LEN; cap++) {
		memset(msg, 0xa5, sizeof(msg));
		assert_int_equal(icmp4_build_header(msg, cap, &r), 0);
		assert_int_equal(msg[0], 0xa5);
	}
}

static void test_icmp4_build_then_parse_round_trips(void **state)
{
	static const uint8_t payload[28] = { 0x45, 0x00, 0x00, 0x1c };
	struct icmp4_repr in = { .type = ICMP4_TIME_EXCEEDED, .code = ICMP4_TIMEX_REASS,
				 .rest = 0x01020304u }, out;
	uint8_t msg[ICMP4_HDR_LEN + sizeof(payload)];

	(void)state;
	build_message(msg, sizeof(msg), &in, payload, sizeof(payload));
	assert_int_equal(parse_exact(msg, sizeof(msg), true, &out), WIRE_OK);
	assert_int_equal(out.type, in.type);
	assert_int_equal(out.code, in.code);
	assert_int_equal(out.rest, in.rest);
	assert_int_equal(out.payload_len, sizeof(payload));
}

static void test_icmp4_parse_then_build_reproduces_bytes(void **state)
{
	struct icmp4_repr r;
	uint8_t msg[92];

	(void)state;
	assert_int_equal(parse_exact(host_unreach, sizeof(host_unreach), true, &r), WIRE_OK);
	build_message(msg, sizeof(msg), &r, host_unreach + ICMP4_HDR_LEN, r.payload_len);
	assert_memory_equal(msg, host_unreach, sizeof(msg));
}

static void test_icmp4_type_is_error_rfc1122_errors_true(void **state)
{
	(void)state;
	assert_true(icmp4_type_is_error(ICMP4_DEST_UNREACH));
	assert_true(icmp4_type_is_error(4)); /* source quench */
	assert_true(icmp4_type_is_error(ICMP4_REDIRECT));
	assert_true(icmp4_type_is_error(ICMP4_TIME_EXCEEDED));
	assert_true(icmp4_type_is_error(ICMP4_PARAM_PROBLEM));
}

static void test_icmp4_type_is_error_every_other_type_false(void **state)
{
	unsigned t;

	(void)state;
	assert_false(icmp4_type_is_error(ICMP4_ECHO_REQUEST));
	assert_false(icmp4_type_is_error(ICMP4_ECHO_REPLY));
	for (t = 0; t < 256; t++) {
		bool error = t == 3 || t == 4 || t == 5 || t == 11 || t == 12;

		assert_int_equal(icmp4_type_is_error((uint8_t)t), error);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_icmp4_parse_golden_echo_request_reads_fields),
		cmocka_unit_test(test_icmp4_parse_golden_echo_reply_reads_fields),
		cmocka_unit_test(test_icmp4_parse_golden_host_unreach_quotes_datagram),
		cmocka_unit_test(test_icmp4_parse_every_short_truncation_rejected_truncated),
		cmocka_unit_test(test_icmp4_parse_every_long_truncation_rejected_bad_checksum),
		cmocka_unit_test(test_icmp4_parse_truncation_checked_before_checksum),
		cmocka_unit_test(test_icmp4_parse_any_changed_byte_rejected_bad_checksum),
		cmocka_unit_test(test_icmp4_parse_bad_checksum_unverified_accepted),
		cmocka_unit_test(test_icmp4_parse_header_only_accepted),
		cmocka_unit_test(test_icmp4_parse_odd_length_checksum_verified),
		cmocka_unit_test(test_icmp4_parse_negative_zero_checksum_accepted),
		cmocka_unit_test(test_icmp4_parse_unknown_type_accepted),
		cmocka_unit_test(test_icmp4_build_golden_echo_request_matches_capture),
		cmocka_unit_test(test_icmp4_build_golden_echo_reply_matches_capture),
		cmocka_unit_test(test_icmp4_build_golden_host_unreach_matches_capture),
		cmocka_unit_test(test_icmp4_build_header_writes_zero_checksum),
		cmocka_unit_test(test_icmp4_build_header_frag_needed_carries_mtu),
		cmocka_unit_test(test_icmp4_build_small_cap_returns_zero),
		cmocka_unit_test(test_icmp4_build_then_parse_round_trips),
		cmocka_unit_test(test_icmp4_parse_then_build_reproduces_bytes),
		cmocka_unit_test(test_icmp4_type_is_error_rfc1122_errors_true),
		cmocka_unit_test(test_icmp4_type_is_error_every_other_type_false),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
