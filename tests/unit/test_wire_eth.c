/* Ethernet II headers, VLAN tags and MAC address text. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eth.h"

/* Captured with tcpdump on eth0 (02:fc:00:00:00:01): the kernel's ARP request
 * "who-has 192.0.2.77 tell 192.0.2.2", broadcast, before padding to 60 bytes. */
static const uint8_t arp_req_frame[42] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, 0x02, 0xfc,
	0x00, 0x00, 0x00, 0x01, 0xc0, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0xc0, 0x00, 0x02, 0x4d,
};

/* Captured with tcpdump: the first 34 bytes (Ethernet + IPv4 header) of `ping 192.0.2.1`. */
static const uint8_t echo_req_head[34] = {
	0x02, 0xfc, 0x00, 0x00, 0x00, 0x05, 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01,
	0x08, 0x00, 0x45, 0x00, 0x00, 0x54, 0xd8, 0x3e, 0x40, 0x00, 0x40, 0x01,
	0xde, 0x66, 0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01,
};

/* An 802.1Q-tagged ARP request, VLAN 10, priority 3 (TCI 0x600a); checked field by field
 * with tshark. */
static const uint8_t vlan_arp_frame[46] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01,
	0x81, 0x00, 0x60, 0x0a, 0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04,
	0x00, 0x01, 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01, 0xc6, 0x33, 0x64, 0x01,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc6, 0x33, 0x64, 0x02,
};

static const struct eth_addr mac_local = { { 0x02, 0xfc, 0x00, 0x00, 0x00, 0x01 } };
static const struct eth_addr mac_gw = { { 0x02, 0xfc, 0x00, 0x00, 0x00, 0x05 } };

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct eth_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = eth_parse(copy, len, out);
	free(copy);
	return st;
}

/* Overwrites the big-endian 16-bit field at off. */
static void set_be16(uint8_t *buf, size_t off, uint16_t v)
{
	buf[off] = (uint8_t)(v >> 8);
	buf[off + 1] = (uint8_t)v;
}

static void test_eth_parse_golden_arp_broadcast_reads_fields(void **state)
{
	struct eth_repr r;

	(void)state;
	assert_int_equal(parse_exact(arp_req_frame, sizeof(arp_req_frame), &r), WIRE_OK);
	assert_true(eth_addr_is_broadcast(&r.dst));
	assert_true(eth_addr_equal(&r.src, &mac_local));
	assert_int_equal(r.ethertype, ETH_TYPE_ARP);
	assert_false(r.vlan_tagged);
	assert_int_equal(r.hdr_len, ETH_HDR_LEN);
}

static void test_eth_parse_golden_ipv4_unicast_reads_fields(void **state)
{
	struct eth_repr r;

	(void)state;
	assert_int_equal(parse_exact(echo_req_head, sizeof(echo_req_head), &r), WIRE_OK);
	assert_true(eth_addr_equal(&r.dst, &mac_gw));
	assert_true(eth_addr_equal(&r.src, &mac_local));
	assert_int_equal(r.ethertype, ETH_TYPE_IPV4);
	assert_false(r.vlan_tagged);
	assert_int_equal(r.hdr_len, 14);
}

static void test_eth_parse_golden_vlan_reads_tci_and_inner_type(void **state)
{
	struct eth_repr r;

	(void)state;
	assert_int_equal(parse_exact(vlan_arp_frame, sizeof(vlan_arp_frame), &r), WIRE_OK);
	assert_true(r.vlan_tagged);
	assert_int_equal(r.vlan_tci, 0x600a);
	assert_int_equal(r.vlan_tci & 0x0fff, 10);  /* VID */
	assert_int_equal(r.vlan_tci >> 13, 3);      /* PCP */
	assert_int_equal(r.ethertype, ETH_TYPE_ARP);
	assert_int_equal(r.hdr_len, 18);
	assert_true(eth_addr_is_broadcast(&r.dst));
	assert_true(eth_addr_equal(&r.src, &mac_local));
}

static void test_eth_parse_qinq_single_tag_accepted(void **state)
{
	uint8_t f[sizeof(vlan_arp_frame)];
	struct eth_repr r;

	(void)state;
	memcpy(f, vlan_arp_frame, sizeof(f));
	set_be16(f, ETH_OFF_TYPE, ETH_TYPE_QINQ);
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_OK);
	assert_true(r.vlan_tagged);
	assert_int_equal(r.vlan_tci, 0x600a);
	assert_int_equal(r.ethertype, ETH_TYPE_ARP);
	assert_int_equal(r.hdr_len, 18);
}

static void test_eth_parse_stacked_tags_rejected_bad_field(void **state)
{
	static const uint16_t outer[] = { ETH_TYPE_VLAN, ETH_TYPE_QINQ };
	static const uint16_t inner[] = { ETH_TYPE_VLAN, ETH_TYPE_QINQ };
	uint8_t f[sizeof(vlan_arp_frame)];
	struct eth_repr r;
	size_t i, j;

	(void)state;
	for (i = 0; i < 2; i++) {
		for (j = 0; j < 2; j++) {
			memcpy(f, vlan_arp_frame, sizeof(f));
			set_be16(f, ETH_OFF_TYPE, outer[i]);
			set_be16(f, 16, inner[j]);
			assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_BAD_FIELD);
		}
	}
}

static void test_eth_parse_8023_length_rejected_bad_field(void **state)
{
	static const uint16_t lengths[] = { 0x0000, 0x002e, 0x05dc, 0x05ff };
	uint8_t f[sizeof(arp_req_frame)];
	struct eth_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		memcpy(f, arp_req_frame, sizeof(f));
		set_be16(f, ETH_OFF_TYPE, lengths[i]);
		assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_BAD_FIELD);
	}
}

static void test_eth_parse_lowest_ethertype_0600_accepted(void **state)
{
	uint8_t f[sizeof(arp_req_frame)];
	struct eth_repr r;

	(void)state;
	memcpy(f, arp_req_frame, sizeof(f));
	set_be16(f, ETH_OFF_TYPE, ETH_TYPE_MIN);
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_OK);
	assert_int_equal(r.ethertype, 0x0600);
}

static void test_eth_parse_unknown_ethertype_passed_through(void **state)
{
	uint8_t f[sizeof(arp_req_frame)];
	struct eth_repr r;

	(void)state;
	memcpy(f, arp_req_frame, sizeof(f));
	set_be16(f, ETH_OFF_TYPE, 0x86dd); /* IPv6: not ours, but a valid EtherType */
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_OK);
	assert_int_equal(r.ethertype, 0x86dd);
	set_be16(f, ETH_OFF_TYPE, 0xffff);
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_OK);
	assert_int_equal(r.ethertype, 0xffff);
}

static void test_eth_parse_vlan_inner_8023_length_rejected_bad_field(void **state)
{
	uint8_t f[sizeof(vlan_arp_frame)];
	struct eth_repr r;

	(void)state;
	memcpy(f, vlan_arp_frame, sizeof(f));
	set_be16(f, 16, 0x05dc);
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_BAD_FIELD);
}

static void test_eth_parse_every_truncation_untagged_truncated(void **state)
{
	struct eth_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < ETH_HDR_LEN; len++)
		assert_int_equal(parse_exact(arp_req_frame, len, &r), WIRE_TRUNCATED);
	/* The header alone is a valid frame with an empty payload. */
	for (len = ETH_HDR_LEN; len <= sizeof(arp_req_frame); len++) {
		assert_int_equal(parse_exact(arp_req_frame, len, &r), WIRE_OK);
		assert_int_equal(r.hdr_len, ETH_HDR_LEN);
	}
}

static void test_eth_parse_every_truncation_tagged_truncated(void **state)
{
	struct eth_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < ETH_HDR_LEN + ETH_VLAN_TAG_LEN; len++)
		assert_int_equal(parse_exact(vlan_arp_frame, len, &r), WIRE_TRUNCATED);
	for (len = ETH_HDR_LEN + ETH_VLAN_TAG_LEN; len <= sizeof(vlan_arp_frame); len++) {
		assert_int_equal(parse_exact(vlan_arp_frame, len, &r), WIRE_OK);
		assert_int_equal(r.hdr_len, 18);
	}
}

static void test_eth_parse_truncated_tag_wins_over_bad_inner(void **state)
{
	uint8_t f[16];
	struct eth_repr r;

	(void)state;
	memcpy(f, vlan_arp_frame, sizeof(f)); /* the tag's TCI, but no inner type */
	assert_int_equal(parse_exact(f, sizeof(f), &r), WIRE_TRUNCATED);
}

static void test_eth_build_golden_header_matches_capture(void **state)
{
	struct eth_repr r = { .dst = mac_gw, .src = mac_local, .ethertype = ETH_TYPE_IPV4 };
	uint8_t buf[ETH_HDR_LEN];

	(void)state;
	assert_int_equal(eth_build(buf, sizeof(buf), &r), ETH_HDR_LEN);
	assert_memory_equal(buf, echo_req_head, ETH_HDR_LEN);
}

static void test_eth_build_then_parse_round_trips(void **state)
{
	struct eth_repr in = { .dst = eth_addr_broadcast, .src = mac_local,
			       .ethertype = ETH_TYPE_ARP }, out;
	uint8_t buf[64];

	(void)state;
	memset(buf, 0xa5, sizeof(buf));
	assert_int_equal(eth_build(buf, sizeof(buf), &in), ETH_HDR_LEN);
	assert_int_equal(buf[ETH_HDR_LEN], 0xa5); /* nothing written past the header */
	assert_int_equal(parse_exact(buf, ETH_HDR_LEN, &out), WIRE_OK);
	assert_true(eth_addr_equal(&out.dst, &in.dst));
	assert_true(eth_addr_equal(&out.src, &in.src));
	assert_int_equal(out.ethertype, in.ethertype);
	assert_false(out.vlan_tagged);
	assert_int_equal(out.hdr_len, ETH_HDR_LEN);
}

static void test_eth_build_parse_of_golden_round_trips_bytes(void **state)
{
	struct eth_repr r;
	uint8_t buf[ETH_HDR_LEN];

	(void)state;
	assert_int_equal(parse_exact(arp_req_frame, sizeof(arp_req_frame), &r), WIRE_OK);
	assert_int_equal(eth_build(buf, sizeof(buf), &r), ETH_HDR_LEN);
	assert_memory_equal(buf, arp_req_frame, ETH_HDR_LEN);
}

static void test_eth_build_vlan_flag_ignored_writes_untagged(void **state)
{
	struct eth_repr r;
	uint8_t buf[ETH_HDR_LEN + ETH_VLAN_TAG_LEN];

	(void)state;
	assert_int_equal(parse_exact(vlan_arp_frame, sizeof(vlan_arp_frame), &r), WIRE_OK);
	assert_true(r.vlan_tagged);
	assert_int_equal(eth_build(buf, sizeof(buf), &r), ETH_HDR_LEN);
	assert_memory_equal(buf, arp_req_frame, ETH_HDR_LEN); /* same MACs, type ARP */
}

static void test_eth_build_small_cap_returns_zero(void **state)
{
	struct eth_repr r = { .dst = mac_gw, .src = mac_local, .ethertype = ETH_TYPE_IPV4 };
	uint8_t buf[ETH_HDR_LEN];
	size_t cap;

	(void)state;
	for (cap = 0; cap < ETH_HDR_LEN; cap++) {
		memset(buf, 0xa5, sizeof(buf));
		assert_int_equal(eth_build(buf, cap, &r), 0);
		assert_int_equal(buf[0], 0xa5); /* untouched */
	}
}

static void test_eth_addr_broadcast_is_all_ones(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < ETH_ADDR_LEN; i++)
		assert_int_equal(eth_addr_broadcast.b[i], 0xff);
}

static void test_eth_addr_is_broadcast_only_all_ones(void **state)
{
	struct eth_addr a = eth_addr_broadcast;

	(void)state;
	assert_true(eth_addr_is_broadcast(&a));
	a.b[5] = 0xfe;
	assert_false(eth_addr_is_broadcast(&a));
	assert_false(eth_addr_is_broadcast(&mac_local));
}

static void test_eth_addr_is_multicast_group_bit(void **state)
{
	static const struct eth_addr ipv4_mcast = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 } };
	static const struct eth_addr ipv6_mcast = { { 0x33, 0x33, 0x00, 0x00, 0x00, 0x01 } };

	(void)state;
	assert_true(eth_addr_is_multicast(&ipv4_mcast));
	assert_true(eth_addr_is_multicast(&ipv6_mcast));
	assert_true(eth_addr_is_multicast(&eth_addr_broadcast));
	/* 0x02 is the locally-administered bit, not the group bit. */
	assert_false(eth_addr_is_multicast(&mac_local));
}

static void test_eth_addr_is_zero_only_all_zero(void **state)
{
	struct eth_addr a = { { 0 } };

	(void)state;
	assert_true(eth_addr_is_zero(&a));
	a.b[3] = 1;
	assert_false(eth_addr_is_zero(&a));
	assert_false(eth_addr_is_zero(&eth_addr_broadcast));
}

static void test_eth_addr_equal_compares_all_bytes(void **state)
{
	struct eth_addr a = mac_local;
	size_t i;

	(void)state;
	assert_true(eth_addr_equal(&a, &mac_local));
	for (i = 0; i < ETH_ADDR_LEN; i++) {
		a = mac_local;
		a.b[i] ^= 0x80;
		assert_false(eth_addr_equal(&a, &mac_local));
	}
}

static void test_eth_addr_format_golden_lowercase_padded(void **state)
{
	static const struct eth_addr a = { { 0x0a, 0xBC, 0x00, 0x01, 0xff, 0x7f } };
	char buf[18];

	(void)state;
	assert_ptr_equal(eth_addr_format(&a, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "0a:bc:00:01:ff:7f");
	assert_string_equal(eth_addr_format(&mac_local, buf, sizeof(buf)), "02:fc:00:00:00:01");
}

static void test_eth_addr_format_small_cap_truncates_terminated(void **state)
{
	char buf[18];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	eth_addr_format(&mac_local, buf, 6);
	assert_string_equal(buf, "02:fc");
	assert_int_equal(buf[6], 'x');
}

static void test_eth_addr_parse_valid_forms_accepted(void **state)
{
	static const struct eth_addr want = { { 0x0a, 0xbc, 0x00, 0x01, 0xff, 0x7f } };
	static const char *const ok[] = {
		"0a:bc:00:01:ff:7f", "0A:BC:00:01:FF:7F", "0a:Bc:00:01:fF:7f", "a:bc:0:1:ff:7f",
	};
	struct eth_addr a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&a, 0x55, sizeof(a));
		assert_int_equal(eth_addr_parse(ok[i], &a), 0);
		assert_true(eth_addr_equal(&a, &want));
	}
	assert_int_equal(eth_addr_parse("ff:ff:ff:ff:ff:ff", &a), 0);
	assert_true(eth_addr_is_broadcast(&a));
	assert_int_equal(eth_addr_parse("0:0:0:0:0:0", &a), 0);
	assert_true(eth_addr_is_zero(&a));
}

static void test_eth_addr_parse_invalid_forms_rejected(void **state)
{
	static const char *const bad[] = {
		"",
		"01:02:03:04:05",          /* five groups */
		"01:02:03:04:05:06:07",    /* seven groups */
		"01:02:03:04:05:",         /* empty last group */
		"01:02:03:04:05:06:",      /* trailing colon */
		":01:02:03:04:05:06",      /* leading colon */
		"01::03:04:05:06",         /* empty group */
		"001:02:03:04:05:06",      /* three digits */
		"01:02:03:04:05:006",
		"01-02-03-04-05-06",       /* wrong separator */
		"01.02.03.04.05.06",
		"0102.0304.0506",
		"010203040506",
		"0g:02:03:04:05:06",       /* not hex */
		"01:02:03:04:05:0g",
		" 01:02:03:04:05:06",      /* surrounding space */
		"01:02:03:04:05:06 ",
		"01:02:03:04:05:06\n",
		"01: 02:03:04:05:06",
		"0x1:02:03:04:05:06",
		"+1:02:03:04:05:06",
		"-1:02:03:04:05:06",
	};
	struct eth_addr a;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (eth_addr_parse(bad[i], &a) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
}

static void test_eth_addr_format_then_parse_round_trips(void **state)
{
	uint32_t x = 12345;
	int iter;

	(void)state;
	for (iter = 0; iter < 1000; iter++) {
		struct eth_addr a, b;
		char buf[18];
		size_t i;

		for (i = 0; i < ETH_ADDR_LEN; i++) {
			x = x * 1103515245u + 12345u;
			a.b[i] = (uint8_t)(x >> 16);
		}
		assert_int_equal(eth_addr_parse(eth_addr_format(&a, buf, sizeof(buf)), &b), 0);
		assert_true(eth_addr_equal(&a, &b));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eth_parse_golden_arp_broadcast_reads_fields),
		cmocka_unit_test(test_eth_parse_golden_ipv4_unicast_reads_fields),
		cmocka_unit_test(test_eth_parse_golden_vlan_reads_tci_and_inner_type),
		cmocka_unit_test(test_eth_parse_qinq_single_tag_accepted),
		cmocka_unit_test(test_eth_parse_stacked_tags_rejected_bad_field),
		cmocka_unit_test(test_eth_parse_8023_length_rejected_bad_field),
		cmocka_unit_test(test_eth_parse_lowest_ethertype_0600_accepted),
		cmocka_unit_test(test_eth_parse_unknown_ethertype_passed_through),
		cmocka_unit_test(test_eth_parse_vlan_inner_8023_length_rejected_bad_field),
		cmocka_unit_test(test_eth_parse_every_truncation_untagged_truncated),
		cmocka_unit_test(test_eth_parse_every_truncation_tagged_truncated),
		cmocka_unit_test(test_eth_parse_truncated_tag_wins_over_bad_inner),
		cmocka_unit_test(test_eth_build_golden_header_matches_capture),
		cmocka_unit_test(test_eth_build_then_parse_round_trips),
		cmocka_unit_test(test_eth_build_parse_of_golden_round_trips_bytes),
		cmocka_unit_test(test_eth_build_vlan_flag_ignored_writes_untagged),
		cmocka_unit_test(test_eth_build_small_cap_returns_zero),
		cmocka_unit_test(test_eth_addr_broadcast_is_all_ones),
		cmocka_unit_test(test_eth_addr_is_broadcast_only_all_ones),
		cmocka_unit_test(test_eth_addr_is_multicast_group_bit),
		cmocka_unit_test(test_eth_addr_is_zero_only_all_zero),
		cmocka_unit_test(test_eth_addr_equal_compares_all_bytes),
		cmocka_unit_test(test_eth_addr_format_golden_lowercase_padded),
		cmocka_unit_test(test_eth_addr_format_small_cap_truncates_terminated),
		cmocka_unit_test(test_eth_addr_parse_valid_forms_accepted),
		cmocka_unit_test(test_eth_addr_parse_invalid_forms_rejected),
		cmocka_unit_test(test_eth_addr_format_then_parse_round_trips),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
