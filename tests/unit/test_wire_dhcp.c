/* DHCP messages (RFC 2131) and options (RFC 2132, RFC 3396): golden replies of dnsmasq, the
 * builder's requests read back, and the bug classes of option parsers (lengths past the end,
 * zero-length options, overlong fields, overload). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "dhcp.h"
#include "test_wire_hex.h"

/* The UDP payloads of dnsmasq 2.90's answers (tcpdump on its interface), run with
 * --dhcp-range=192.0.2.50,192.0.2.99,255.255.255.0,2m --dhcp-option=option:router,192.0.2.1
 * --dhcp-option=option:mtu,1400 --dhcp-option=option:dns-server,192.0.2.53
 * --dhcp-option=58,20 --dhcp-option=59,35, to a client 02:00:00:00:00:0a with xid 1234abcd
 * and the broadcast flag: its OFFER of 192.0.2.72, the ACK of the REQUEST for it, and the NAK
 * of a REQUEST for 192.0.2.200 (xid 1234abce). The 192 zero bytes of sname and file are
 * written as a count. */
#define ZEROS_192 \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000" \
	"0000000000000000000000000000000000000000000000000000000000000000"
#define HEAD_OFFER_ACK "020106001234abcd0000800000000000c0000248c00002010000000002000000000a" \
	"00000000000000000000"
#define TAIL_LEASE "3604c00002013304000000783a04000000143b04000000230104ffffff001c04c00002ff" \
	"0604c00002351a0205780304c0000201ff00000000"
static const char offer_hex[] = HEAD_OFFER_ACK ZEROS_192 "638253633501" "02" TAIL_LEASE;
static const char ack_hex[] = HEAD_OFFER_ACK ZEROS_192 "638253633501" "05" TAIL_LEASE;
static const char nak_hex[] =
	"020106001234abce000080000000000000000000000000000000000002000000000a"
	"00000000000000000000" ZEROS_192
	"638253633501063604c0000201380d77726f6e672061646472657373ff"
	"0000000000000000000000000000000000000000000000000000000000000000000000";

#define IP_SERVER 0xc0000201u   /* 192.0.2.1 */
#define IP_LEASED 0xc0000248u   /* 192.0.2.72 */

static const struct eth_addr mac_client = { { 0x02, 0, 0, 0, 0, 0x0a } };

static size_t golden(const char *hex, uint8_t *out)
{
	return hex_decode(hex, out, 1024);
}

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct dhcp_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	enum wire_status st = dhcp_parse(copy, len, out);
	free(copy);
	return st;
}

/* A reply with the fixed fields of the golden ACK and the given options (hex, END
 * included by the caller when wanted); returns its length. */
static size_t reply_with_options(const char *opts_hex, uint8_t *out)
{
	size_t n = golden(ack_hex, out);
	assert_true(n > DHCP_OFF_OPTIONS);
	return DHCP_OFF_OPTIONS + hex_decode(opts_hex, out + DHCP_OFF_OPTIONS, 700);
}

static void test_dhcp_parse_dnsmasq_offer_reads_lease(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	size_t n = golden(offer_hex, b);
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_int_equal(r.op, DHCP_OP_REPLY);
	assert_int_equal(r.msg_type, DHCP_OFFER);
	assert_int_equal(r.xid, 0x1234abcd);
	assert_int_equal(r.flags, DHCP_FLAG_BROADCAST);
	assert_int_equal(r.yiaddr, IP_LEASED);
	assert_int_equal(r.siaddr, IP_SERVER);
	assert_true(r.chaddr_ether);
	assert_true(eth_addr_equal(&r.chaddr, &mac_client));
	assert_int_equal(r.server_id, IP_SERVER);
	assert_int_equal(r.has, DHCP_HAS_SUBNET_MASK | DHCP_HAS_LEASE_TIME | DHCP_HAS_T1 |
				  DHCP_HAS_T2 | DHCP_HAS_MTU);
	assert_int_equal(r.subnet_mask, 0xffffff00u);
	assert_int_equal(r.lease_time, 120);
	assert_int_equal(r.t1, 20);
	assert_int_equal(r.t2, 35);
	assert_int_equal(r.mtu, 1400);
	assert_int_equal(r.nb_routers, 1);
	assert_int_equal(r.routers[0], IP_SERVER);
	assert_int_equal(r.nb_dns, 1);
	assert_int_equal(r.dns[0], 0xc0000235u);
	assert_string_equal(r.message, "");
}

static void test_dhcp_parse_dnsmasq_ack_is_ack(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	assert_int_equal(parse_exact(b, golden(ack_hex, b), &r), WIRE_OK);
	assert_int_equal(r.msg_type, DHCP_ACK);
	assert_int_equal(r.yiaddr, IP_LEASED);
	assert_string_equal(dhcp_msg_type_str(r.msg_type), "DHCPACK");
}

static void test_dhcp_parse_dnsmasq_nak_keeps_message(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	assert_int_equal(parse_exact(b, golden(nak_hex, b), &r), WIRE_OK);
	assert_int_equal(r.msg_type, DHCP_NAK);
	assert_int_equal(r.xid, 0x1234abce);
	assert_int_equal(r.yiaddr, 0);
	assert_int_equal(r.server_id, IP_SERVER);
	assert_string_equal(r.message, "wrong address");
	assert_int_equal(r.has, 0);
}

static void test_dhcp_parse_every_truncation_of_fixed_part_truncated(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	golden(ack_hex, b);
	for (size_t len = 0; len < DHCP_MIN_LEN; len++)
		assert_int_equal(parse_exact(b, len, &r), WIRE_TRUNCATED);
}

/* Every cut inside the options: an option whose length byte or data is past the end is a
 * bad option, a cut between two options loses what follows (53 comes first, so the message
 * stays valid or misses option 53). Never a read past the end (ASan). */
static void test_dhcp_parse_every_truncation_of_options_checked(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	size_t n = golden(ack_hex, b);
	for (size_t len = DHCP_MIN_LEN; len < n; len++) {
		enum wire_status st = parse_exact(b, len, &r);
		assert_true(st == WIRE_OK || st == WIRE_BAD_OPTION || st == WIRE_BAD_FIELD);
		if (len == DHCP_MIN_LEN)
			assert_int_equal(st, WIRE_BAD_FIELD); /* no option 53 */
		if (len == DHCP_MIN_LEN + 1 || len == DHCP_MIN_LEN + 2)
			assert_int_equal(st, WIRE_BAD_OPTION); /* 53's length or value cut */
	}
}

static void test_dhcp_parse_bad_op_hlen_cookie_rejected_bad_field(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	size_t n = golden(ack_hex, b);
	b[DHCP_OFF_OP] = 3;
	assert_int_equal(parse_exact(b, n, &r), WIRE_BAD_FIELD);
	golden(ack_hex, b);
	b[DHCP_OFF_HLEN] = DHCP_CHADDR_LEN + 1; /* an overlong hardware address */
	assert_int_equal(parse_exact(b, n, &r), WIRE_BAD_FIELD);
	golden(ack_hex, b);
	b[DHCP_OFF_COOKIE + 3] ^= 1;
	assert_int_equal(parse_exact(b, n, &r), WIRE_BAD_FIELD);
}

static void test_dhcp_parse_non_ethernet_chaddr_not_taken(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	size_t n = golden(ack_hex, b);
	b[DHCP_OFF_HLEN] = 16;
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_false(r.chaddr_ether);
}

static void test_dhcp_parse_option_length_past_end_bad_option(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	/* 51 says 200 bytes follow; 4 do. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "33c800000078", b), &r),
			 WIRE_BAD_OPTION);
	/* A code as the last byte, its length byte missing. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "33", b), &r),
			 WIRE_BAD_OPTION);
	/* An unknown option's length past the end too. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "e0ff00", b), &r),
			 WIRE_BAD_OPTION);
}

static void test_dhcp_parse_zero_length_options_bad_option(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	static const char *const zero_len[] = {
		"350105" "3300ff", "350105" "0300ff", "350105" "0600ff", "350105" "0100ff",
		"350105" "1a00ff", "350105" "3600ff", "3500ff",
	};
	for (size_t k = 0; k < sizeof(zero_len) / sizeof(zero_len[0]); k++)
		assert_int_equal(parse_exact(b, reply_with_options(zero_len[k], b), &r),
				 WIRE_BAD_OPTION);
	/* An unknown option may be empty; a zero-length message is an empty text. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "e000" "3800ff", b), &r),
			 WIRE_OK);
}

static void test_dhcp_parse_wrong_sized_fields_bad_option(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	/* Lease time of 5 bytes, a router list of 6, an MTU of 3, a mask of 3. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "33050000007800ff", b), &r),
			 WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350105" "0306c00002010102ff", b),
				     &r), WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350105" "1a03057800ff", b), &r),
			 WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350105" "0103ffffffff", b), &r),
			 WIRE_BAD_OPTION);
}

static void test_dhcp_parse_bad_values_rejected(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	/* A mask with a hole, an MTU below 68, option 57 below 576, message type 9. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "0104ff00ff00ff", b), &r),
			 WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350105" "1a020043ff", b), &r),
			 WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350105" "39020200ff", b), &r),
			 WIRE_BAD_OPTION);
	assert_int_equal(parse_exact(b, reply_with_options("350109ff", b), &r), WIRE_BAD_FIELD);
	assert_int_equal(parse_exact(b, reply_with_options("ff", b), &r), WIRE_BAD_FIELD);
}

/* RFC 3396: two instances of one option are one, concatenated. */
static void test_dhcp_parse_split_option_concatenated(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	assert_int_equal(parse_exact(b, reply_with_options(
		"350105" "0304c0000201" "0304c00002fe" "3302000000" "33020078" "ff", b), &r),
		WIRE_OK);
	assert_int_equal(r.nb_routers, 2);
	assert_int_equal(r.routers[1], 0xc00002feu);
	assert_int_equal(r.lease_time, 120);
	/* A repeated message type makes two bytes where one is allowed. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "350105ff", b), &r),
			 WIRE_BAD_OPTION);
}

static void test_dhcp_parse_long_lists_keep_first_entries(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	char opts[256] = "350105" "0618";
	for (int k = 1; k <= 6; k++) {
		char a[9];
		snprintf(a, sizeof(a), "0a00000%d", k);
		strcat(opts, a);
	}
	strcat(opts, "ff");
	assert_int_equal(parse_exact(b, reply_with_options(opts, b), &r), WIRE_OK);
	assert_int_equal(r.nb_dns, DHCP_MAX_DNS);
	assert_int_equal(r.dns[3], 0x0a000004u);
}

static void test_dhcp_parse_message_unprintable_replaced_and_cut(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	char opts[400] = "350106" "3850" "41" "0a" "1b";
	for (int k = 0; k < 77; k++)
		strcat(opts, "42");
	strcat(opts, "ff");
	assert_int_equal(parse_exact(b, reply_with_options(opts, b), &r), WIRE_OK);
	assert_int_equal(strlen(r.message), DHCP_MESSAGE_MAX);
	assert_memory_equal(r.message, "A??BB", 5);
}

static void test_dhcp_parse_bytes_after_end_ignored(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	/* After END, bytes that would be a broken option are padding. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "ff" "33c8", b), &r),
			 WIRE_OK);
	assert_int_equal(r.has, 0);
}

/* RFC 2132 §9.3: option 52 continues the options in file (1), sname (2) or both (3). */
static void test_dhcp_parse_overload_reads_file_then_sname(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	size_t n = reply_with_options("350105" "340103" "ff", b);
	hex_decode("3304000000b4ff", b + DHCP_OFF_FILE, DHCP_FILE_LEN);
	hex_decode("0304c0000201ff", b + DHCP_OFF_SNAME, DHCP_SNAME_LEN);
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_int_equal(r.lease_time, 180);
	assert_int_equal(r.routers[0], IP_SERVER);
	/* Without option 52, file and sname are names, not options. */
	n = reply_with_options("350105" "ff", b);
	hex_decode("3304000000b4ff", b + DHCP_OFF_FILE, DHCP_FILE_LEN);
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_int_equal(r.has, 0);
}

static void test_dhcp_parse_overload_malformed_bad_option(void **state)
{
	uint8_t b[1024];
	struct dhcp_repr r;
	(void)state;
	/* A value outside 1..3, an option in file that runs past its 128 bytes, option 52
	 * inside the overloaded field. */
	assert_int_equal(parse_exact(b, reply_with_options("350105" "340104ff", b), &r),
			 WIRE_BAD_OPTION);
	size_t n = reply_with_options("350105" "340101ff", b);
	b[DHCP_OFF_FILE + DHCP_FILE_LEN - 2] = DHCP_OPT_ROUTER;
	b[DHCP_OFF_FILE + DHCP_FILE_LEN - 1] = 4; /* its data would be the cookie */
	assert_int_equal(parse_exact(b, n, &r), WIRE_BAD_OPTION);
	n = reply_with_options("350105" "340101ff", b);
	hex_decode("340102ff", b + DHCP_OFF_FILE, DHCP_FILE_LEN);
	assert_int_equal(parse_exact(b, n, &r), WIRE_BAD_OPTION);
}

static void test_dhcp_build_request_reads_back(void **state)
{
	uint8_t b[600];
	struct dhcp_repr in = {.xid = 0xdeadbeef, .secs = 3, .flags = DHCP_FLAG_BROADCAST,
			       .chaddr = mac_client, .msg_type = DHCP_REQUEST,
			       .requested_ip = IP_LEASED, .server_id = IP_SERVER,
			       .max_msg_size = 1500};
	struct dhcp_repr r;
	(void)state;
	size_t n = dhcp_build_request(b, sizeof(b), &in);
	assert_int_equal(n, DHCP_BOOTP_MIN_LEN);
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_int_equal(r.op, DHCP_OP_REQUEST);
	assert_int_equal(r.msg_type, DHCP_REQUEST);
	assert_int_equal(r.xid, 0xdeadbeef);
	assert_int_equal(r.secs, 3);
	assert_int_equal(r.flags, DHCP_FLAG_BROADCAST);
	assert_true(r.chaddr_ether && eth_addr_equal(&r.chaddr, &mac_client));
	assert_int_equal(r.requested_ip, IP_LEASED);
	assert_int_equal(r.server_id, IP_SERVER);
	assert_int_equal(r.max_msg_size, 1500);
	/* Client identifier: type 1 and the MAC (RFC 2132 §9.14), right after option 53. */
	assert_memory_equal(b + DHCP_OFF_OPTIONS + 3, "\x3d\x07\x01\x02\x00\x00\x00\x00\x0a", 9);
	assert_int_equal(dhcp_build_request(b, DHCP_BOOTP_MIN_LEN - 1, &in), 0);
}

static void test_dhcp_build_release_has_no_param_list(void **state)
{
	uint8_t b[600];
	struct dhcp_repr in = {.xid = 7, .ciaddr = IP_LEASED, .chaddr = mac_client,
			       .msg_type = DHCP_RELEASE, .server_id = IP_SERVER};
	struct dhcp_repr r;
	(void)state;
	size_t n = dhcp_build_request(b, sizeof(b), &in);
	assert_int_equal(parse_exact(b, n, &r), WIRE_OK);
	assert_int_equal(r.ciaddr, IP_LEASED);
	for (size_t i = DHCP_OFF_OPTIONS; i + 1 < n && b[i] != DHCP_OPT_END; i += 2 + b[i + 1])
		assert_int_not_equal(b[i], DHCP_OPT_PARAM_LIST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dhcp_parse_dnsmasq_offer_reads_lease),
		cmocka_unit_test(test_dhcp_parse_dnsmasq_ack_is_ack),
		cmocka_unit_test(test_dhcp_parse_dnsmasq_nak_keeps_message),
		cmocka_unit_test(test_dhcp_parse_every_truncation_of_fixed_part_truncated),
		cmocka_unit_test(test_dhcp_parse_every_truncation_of_options_checked),
		cmocka_unit_test(test_dhcp_parse_bad_op_hlen_cookie_rejected_bad_field),
		cmocka_unit_test(test_dhcp_parse_non_ethernet_chaddr_not_taken),
		cmocka_unit_test(test_dhcp_parse_option_length_past_end_bad_option),
		cmocka_unit_test(test_dhcp_parse_zero_length_options_bad_option),
		cmocka_unit_test(test_dhcp_parse_wrong_sized_fields_bad_option),
		cmocka_unit_test(test_dhcp_parse_bad_values_rejected),
		cmocka_unit_test(test_dhcp_parse_split_option_concatenated),
		cmocka_unit_test(test_dhcp_parse_long_lists_keep_first_entries),
		cmocka_unit_test(test_dhcp_parse_message_unprintable_replaced_and_cut),
		cmocka_unit_test(test_dhcp_parse_bytes_after_end_ignored),
		cmocka_unit_test(test_dhcp_parse_overload_reads_file_then_sname),
		cmocka_unit_test(test_dhcp_parse_overload_malformed_bad_option),
		cmocka_unit_test(test_dhcp_build_request_reads_back),
		cmocka_unit_test(test_dhcp_build_release_has_no_param_list),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
