/* ARP bodies for IPv4 over Ethernet (RFC 826). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arp.h"

/* Captured with tcpdump on eth0: the bodies (after the 14-byte Ethernet header) of the
 * kernel's "who-has 192.0.2.77 tell 192.0.2.2" and of its "192.0.2.2 is-at
 * 02:fc:00:00:00:01" answer to 192.0.2.1 (02:fc:00:00:00:05). */
static const uint8_t arp_request[28] = {
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0xfc, 0x00, 0x00,
	0x00, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0xc0, 0x00, 0x02, 0x4d,
};

static const uint8_t arp_reply[28] = {
	0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x02, 0x02, 0xfc, 0x00, 0x00,
	0x00, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x02, 0xfc, 0x00, 0x00, 0x00, 0x05,
	0xc0, 0x00, 0x02, 0x01,
};

static const struct eth_addr mac_local = { { 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01 } };
static const struct eth_addr mac_gw = { { 0x02, 0xfc, 0x00, 0x00, 0x00, 0x05 } };
static const struct eth_addr mac_zero = { { 0 } };

#define IP_LOCAL 0xc0000202u   /* 192.0.2.2 */
#define IP_GW 0xc0000201u      /* 192.0.2.1 */
#define IP_ABSENT 0xc000024du  /* 192.0.2.77 */

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct arp_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = arp_parse(copy, len, out);
	free(copy);
	return st;
}

/* Parses the golden request with byte off replaced by v. */
static enum wire_status parse_request_with(size_t off, uint8_t v)
{
	uint8_t b[ARP_LEN];
	struct arp_repr r;

	memcpy(b, arp_request, sizeof(b));
	b[off] = v;
	return parse_exact(b, sizeof(b), &r);
}

static void test_arp_parse_golden_request_reads_fields(void **state)
{
	struct arp_repr r;

	(void)state;
	assert_int_equal(parse_exact(arp_request, sizeof(arp_request), &r), WIRE_OK);
	assert_int_equal(r.op, ARP_OP_REQUEST);
	assert_true(eth_addr_equal(&r.sha, &mac_local));
	assert_int_equal(r.spa, IP_LOCAL);
	assert_true(eth_addr_equal(&r.tha, &mac_zero));
	assert_int_equal(r.tpa, IP_ABSENT);
}

static void test_arp_parse_golden_reply_reads_fields(void **state)
{
	struct arp_repr r;

	(void)state;
	assert_int_equal(parse_exact(arp_reply, sizeof(arp_reply), &r), WIRE_OK);
	assert_int_equal(r.op, ARP_OP_REPLY);
	assert_true(eth_addr_equal(&r.sha, &mac_local));
	assert_int_equal(r.spa, IP_LOCAL);
	assert_true(eth_addr_equal(&r.tha, &mac_gw));
	assert_int_equal(r.tpa, IP_GW);
}

static void test_arp_parse_ethernet_padding_ignored(void **state)
{
	uint8_t padded[ETH_MIN_FRAME_LEN - ETH_HDR_LEN]; /* 46: the body of a minimum frame */
	struct arp_repr r;

	(void)state;
	memset(padded, 0xee, sizeof(padded));
	memcpy(padded, arp_reply, sizeof(arp_reply));
	assert_int_equal(parse_exact(padded, sizeof(padded), &r), WIRE_OK);
	assert_int_equal(r.tpa, IP_GW);
}

static void test_arp_parse_every_truncation_truncated(void **state)
{
	struct arp_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < ARP_LEN; len++) {
		assert_int_equal(parse_exact(arp_request, len, &r), WIRE_TRUNCATED);
		assert_int_equal(parse_exact(arp_reply, len, &r), WIRE_TRUNCATED);
	}
}

static void test_arp_parse_truncation_wins_over_bad_field(void **state)
{
	uint8_t b[ARP_LEN - 1];
	struct arp_repr r;

	(void)state;
	memset(b, 0xff, sizeof(b)); /* every field wrong, and one byte short */
	assert_int_equal(parse_exact(b, sizeof(b), &r), WIRE_TRUNCATED);
}

static void test_arp_parse_htype_not_ethernet_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_HTYPE + 1, 6), WIRE_BAD_FIELD); /* IEEE 802 */
	assert_int_equal(parse_request_with(ARP_OFF_HTYPE + 1, 0), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_HTYPE, 1), WIRE_BAD_FIELD);    /* 0x0101 */
}

static void test_arp_parse_ptype_not_ipv4_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_PTYPE, 0x86), WIRE_BAD_FIELD); /* 0x8600 */
	assert_int_equal(parse_request_with(ARP_OFF_PTYPE + 1, 0x06), WIRE_BAD_FIELD);
}

static void test_arp_parse_hlen_not_6_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_HLEN, 0), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_HLEN, 8), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_HLEN, 255), WIRE_BAD_FIELD);
}

static void test_arp_parse_plen_not_4_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_PLEN, 0), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_PLEN, 16), WIRE_BAD_FIELD);
}

static void test_arp_parse_unknown_op_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_OP + 1, 0), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_OP + 1, 3), WIRE_BAD_FIELD); /* RARP */
	assert_int_equal(parse_request_with(ARP_OFF_OP + 1, 4), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_OP, 1), WIRE_BAD_FIELD);     /* 0x0101 */
}

static void test_arp_parse_multicast_sender_rejected_bad_field(void **state)
{
	(void)state;
	assert_int_equal(parse_request_with(ARP_OFF_SHA, 0x01), WIRE_BAD_FIELD);
	assert_int_equal(parse_request_with(ARP_OFF_SHA, 0x33), WIRE_BAD_FIELD);
}

static void test_arp_parse_broadcast_sender_rejected_bad_field(void **state)
{
	uint8_t b[ARP_LEN];
	struct arp_repr r;

	(void)state;
	memcpy(b, arp_request, sizeof(b));
	memset(b + ARP_OFF_SHA, 0xff, ETH_ADDR_LEN);
	assert_int_equal(parse_exact(b, sizeof(b), &r), WIRE_BAD_FIELD);
}

static void test_arp_parse_multicast_target_hw_accepted(void **state)
{
	uint8_t b[ARP_LEN];
	struct arp_repr r;

	(void)state;
	/* Some stacks put the broadcast address in a request's THA; only the sender matters. */
	memcpy(b, arp_request, sizeof(b));
	memset(b + ARP_OFF_THA, 0xff, ETH_ADDR_LEN);
	assert_int_equal(parse_exact(b, sizeof(b), &r), WIRE_OK);
	assert_true(eth_addr_is_broadcast(&r.tha));
}

static void test_arp_parse_probe_zero_sender_ip_accepted(void **state)
{
	uint8_t b[ARP_LEN];
	struct arp_repr r;

	(void)state;
	/* RFC 5227 §2.1.1: an ARP probe has sender protocol address 0.0.0.0. */
	memcpy(b, arp_request, sizeof(b));
	memset(b + ARP_OFF_SPA, 0, 4);
	assert_int_equal(parse_exact(b, sizeof(b), &r), WIRE_OK);
	assert_int_equal(r.spa, 0);
}

static void test_arp_build_golden_request_matches_capture(void **state)
{
	struct arp_repr r = { .op = ARP_OP_REQUEST, .sha = mac_local, .spa = IP_LOCAL,
			      .tha = mac_zero, .tpa = IP_ABSENT };
	uint8_t b[ARP_LEN];

	(void)state;
	assert_int_equal(arp_build(b, sizeof(b), &r), ARP_LEN);
	assert_memory_equal(b, arp_request, ARP_LEN);
}

static void test_arp_build_golden_reply_matches_capture(void **state)
{
	struct arp_repr r = { .op = ARP_OP_REPLY, .sha = mac_local, .spa = IP_LOCAL,
			      .tha = mac_gw, .tpa = IP_GW };
	uint8_t b[ARP_LEN];

	(void)state;
	assert_int_equal(arp_build(b, sizeof(b), &r), ARP_LEN);
	assert_memory_equal(b, arp_reply, ARP_LEN);
}

static void test_arp_build_then_parse_round_trips(void **state)
{
	struct arp_repr in = { .op = ARP_OP_REPLY,
			       .sha = { { 0x00, 0x1b, 0x21, 0x3a, 0x4b, 0x5c } }, .spa = 0x0a000001,
			       .tha = { { 0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54 } }, .tpa = 0xffffffff };
	struct arp_repr out;
	uint8_t b[ARP_LEN + 4];

	(void)state;
	memset(b, 0xa5, sizeof(b));
	assert_int_equal(arp_build(b, sizeof(b), &in), ARP_LEN);
	assert_int_equal(b[ARP_LEN], 0xa5); /* nothing written past the body */
	assert_int_equal(parse_exact(b, ARP_LEN, &out), WIRE_OK);
	assert_int_equal(out.op, in.op);
	assert_true(eth_addr_equal(&out.sha, &in.sha));
	assert_int_equal(out.spa, in.spa);
	assert_true(eth_addr_equal(&out.tha, &in.tha));
	assert_int_equal(out.tpa, in.tpa);
}

static void test_arp_parse_then_build_reproduces_bytes(void **state)
{
	struct arp_repr r;
	uint8_t b[ARP_LEN];

	(void)state;
	assert_int_equal(parse_exact(arp_reply, sizeof(arp_reply), &r), WIRE_OK);
	assert_int_equal(arp_build(b, sizeof(b), &r), ARP_LEN);
	assert_memory_equal(b, arp_reply, ARP_LEN);
}

static void test_arp_build_small_cap_returns_zero(void **state)
{
	struct arp_repr r = { .op = ARP_OP_REQUEST, .sha = mac_local };
	uint8_t b[ARP_LEN];
	size_t cap;

	(void)state;
	for (cap = 0; cap < ARP_LEN; cap++) {
		memset(b, 0xa5, sizeof(b));
		assert_int_equal(arp_build(b, cap, &r), 0);
		assert_int_equal(b[0], 0xa5);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_parse_golden_request_reads_fields),
		cmocka_unit_test(test_arp_parse_golden_reply_reads_fields),
		cmocka_unit_test(test_arp_parse_ethernet_padding_ignored),
		cmocka_unit_test(test_arp_parse_every_truncation_truncated),
		cmocka_unit_test(test_arp_parse_truncation_wins_over_bad_field),
		cmocka_unit_test(test_arp_parse_htype_not_ethernet_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_ptype_not_ipv4_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_hlen_not_6_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_plen_not_4_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_unknown_op_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_multicast_sender_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_broadcast_sender_rejected_bad_field),
		cmocka_unit_test(test_arp_parse_multicast_target_hw_accepted),
		cmocka_unit_test(test_arp_parse_probe_zero_sender_ip_accepted),
		cmocka_unit_test(test_arp_build_golden_request_matches_capture),
		cmocka_unit_test(test_arp_build_golden_reply_matches_capture),
		cmocka_unit_test(test_arp_build_then_parse_round_trips),
		cmocka_unit_test(test_arp_parse_then_build_reproduces_bytes),
		cmocka_unit_test(test_arp_build_small_cap_returns_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
