/* IPv4 headers (RFC 791), options, addresses and prefixes. */
#include <errno.h>
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

/* Golden packets, captured with tcpdump from the Linux kernel. */

/* `ping -c 1 192.0.2.1` from 192.0.2.2 on eth0: DF, TTL 64, id 0xd83e, 84 bytes. */
static const uint8_t echo_req_ip[84] = {
	0x45, 0x00, 0x00, 0x54, 0xd8, 0x3e, 0x40, 0x00, 0x40, 0x01, 0xde, 0x66,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01, 0x08, 0x00, 0x67, 0x94,
	0x1b, 0x35, 0x00, 0x01, 0x69, 0x85, 0x02, 0x6b, 0x00, 0x00, 0x00, 0x00,
	0x45, 0x72, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x11, 0x12, 0x13,
	0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a, 0x2b,
	0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
};

/* The kernel's ICMP host unreachable for 192.0.2.77 (to itself): TOS 0xc0, 112 bytes.
 * Only the header is kept here; parsing is given the full length in a zero-padded copy. */
static const uint8_t unreach_hdr[20] = {
	0x45, 0xc0, 0x00, 0x70, 0xc2, 0x37, 0x00, 0x00, 0x40, 0x01, 0x33, 0x91,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x02,
};

/* `ping -s 1500 192.0.2.1` over an MTU of 1400: the first fragment's header (MF, 1396 bytes;
 * the payload is zero here, which the header checksum does not cover) ... */
static const uint8_t frag_first[1396] = {
	0x45, 0x00, 0x05, 0x74, 0xd9, 0xdc, 0x20, 0x00, 0x40, 0x01, 0xf7, 0xa8,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01,
};

/* ... and the whole last fragment: offset 1376, 152 bytes. */
static const uint8_t frag_last[152] = {
	0x45, 0x00, 0x00, 0x98, 0xd9, 0xdc, 0x00, 0xac, 0x40, 0x01, 0x1b, 0xd9,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01, 0x58, 0x59, 0x5a, 0x5b,
	0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
	0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72, 0x73,
	0x74, 0x75, 0x76, 0x77, 0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
	0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8a, 0x8b,
	0x8c, 0x8d, 0x8e, 0x8f, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97,
	0x98, 0x99, 0x9a, 0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2, 0xa3,
	0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
	0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0xb5, 0xb6, 0xb7, 0xb8, 0xb9, 0xba, 0xbb,
	0xbc, 0xbd, 0xbe, 0xbf, 0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
	0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3,
	0xd4, 0xd5, 0xd6, 0xd7, 0xd8, 0xd9, 0xda, 0xdb,
};

/* `ping -R 127.0.0.1` on lo: IHL 15, options NOP + record route (length 39, pointer 8, one
 * address recorded), 124 bytes. Its source is 127.0.0.1, which ip4_parse refuses. */
static const uint8_t rr_pkt[124] = {
	0x4f, 0x00, 0x00, 0x7c, 0x7f, 0xf6, 0x40, 0x00, 0x40, 0x01, 0x0b, 0x78,
	0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x01, 0x07, 0x27, 0x08,
	0x7f, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x08, 0x00, 0x00, 0x8a, 0x1b, 0x36, 0x00, 0x01, 0x69, 0x85, 0x02, 0x6b,
	0x00, 0x00, 0x00, 0x00, 0xac, 0x7b, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	0x34, 0x35, 0x36, 0x37,
};

/* The options of its echo reply: record route with three addresses (pointer 16), then EOL. */
static const uint8_t rr_reply_opts[40] = {
	0x07, 0x27, 0x10, 0x7f, 0x00, 0x00, 0x01, 0x7f, 0x00, 0x00, 0x01, 0x7f,
	0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
};

/* The options of `ping -T tsonly 127.0.0.1`: timestamp, length 40, pointer 9, one stamp. */
static const uint8_t ts_opts[40] = {
	0x44, 0x28, 0x09, 0x00, 0x01, 0x4b, 0xaf, 0x90, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00,
};

#define IP_LOCAL 0xc0000202u /* 192.0.2.2 */
#define IP_GW 0xc0000201u    /* 192.0.2.1 */

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, bool verify,
				    struct ip4_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = ip4_parse(copy, len, verify, out);
	free(copy);
	return st;
}

static enum wire_status opts_exact(const uint8_t *bytes, size_t len, struct ip4_opts_info *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	enum wire_status st;

	assert_non_null(copy);
	if (len)
		memcpy(copy, bytes, len);
	st = ip4_options_check(copy, len, out);
	free(copy);
	return st;
}

/* Recomputes the header checksum after a test changed a field. */
static void fix_csum(uint8_t *pkt)
{
	size_t hdr_len = (size_t)(pkt[IP4_OFF_VER_IHL] & 0x0f) * 4;

	wire_put_be16(pkt + IP4_OFF_CSUM, 0);
	wire_put_be16(pkt + IP4_OFF_CSUM, wire_csum(pkt, hdr_len));
}

/* A copy of the echo request with one 16-bit field replaced and the checksum fixed. */
static void echo_with16(uint8_t pkt[84], size_t off, uint16_t v)
{
	memcpy(pkt, echo_req_ip, 84);
	wire_put_be16(pkt + off, v);
	fix_csum(pkt);
}

static void echo_with_src(uint8_t pkt[84], uint32_t src)
{
	memcpy(pkt, echo_req_ip, 84);
	wire_put_be32(pkt + IP4_OFF_SRC, src);
	fix_csum(pkt);
}

/* The record-route packet with routable addresses, so that ip4_parse accepts it. */
static void rr_routable(uint8_t pkt[124])
{
	memcpy(pkt, rr_pkt, 124);
	wire_put_be32(pkt + IP4_OFF_SRC, IP_LOCAL);
	wire_put_be32(pkt + IP4_OFF_DST, IP_GW);
	fix_csum(pkt);
}

/* ---- ip4_parse: golden packets ---- */

static void test_ip4_parse_golden_echo_request_reads_fields(void **state)
{
	struct ip4_repr r;

	(void)state;
	assert_int_equal(parse_exact(echo_req_ip, sizeof(echo_req_ip), true, &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 20);
	assert_int_equal(r.tos, 0);
	assert_int_equal(r.total_len, 84);
	assert_int_equal(r.id, 0xd83e);
	assert_true(r.df);
	assert_false(r.mf);
	assert_int_equal(r.frag_off, 0);
	assert_int_equal(r.ttl, 64);
	assert_int_equal(r.proto, IP4_PROTO_ICMP);
	assert_int_equal(r.src, IP_LOCAL);
	assert_int_equal(r.dst, IP_GW);
}

static void test_ip4_parse_golden_icmp_error_reads_tos(void **state)
{
	uint8_t pkt[112] = { 0 };
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, unreach_hdr, sizeof(unreach_hdr));
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
	assert_int_equal(r.tos, 0xc0);
	assert_int_equal(r.total_len, 112);
	assert_int_equal(r.id, 0xc237);
	assert_false(r.df);
	assert_int_equal(r.src, IP_LOCAL);
	assert_int_equal(r.dst, IP_LOCAL);
}

static void test_ip4_parse_golden_first_fragment_reads_mf(void **state)
{
	struct ip4_repr r;

	(void)state;
	assert_int_equal(parse_exact(frag_first, sizeof(frag_first), true, &r), WIRE_OK);
	assert_true(r.mf);
	assert_false(r.df);
	assert_int_equal(r.frag_off, 0);
	assert_int_equal(r.total_len, 1396);
	assert_int_equal(r.id, 0xd9dc);
}

static void test_ip4_parse_golden_last_fragment_reads_offset_in_bytes(void **state)
{
	struct ip4_repr r;

	(void)state;
	assert_int_equal(parse_exact(frag_last, sizeof(frag_last), true, &r), WIRE_OK);
	assert_false(r.mf);
	assert_int_equal(r.frag_off, 1376); /* field 0xac = 172 units of 8 bytes */
	assert_int_equal(r.total_len, 152);
	assert_int_equal(r.id, 0xd9dc);
}

static void test_ip4_parse_golden_loopback_source_rejected_bad_field(void **state)
{
	struct ip4_repr r;

	(void)state;
	/* RFC 1812 §5.3.7: 127/8 must not appear as a source outside the host. */
	assert_int_equal(parse_exact(rr_pkt, sizeof(rr_pkt), true, &r), WIRE_BAD_FIELD);
}

static void test_ip4_parse_golden_options_header_reads_hdr_len_60(void **state)
{
	uint8_t pkt[124];
	struct ip4_repr r;
	struct ip4_opts_info info;

	(void)state;
	rr_routable(pkt);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
	assert_int_equal(r.hdr_len, 60);
	assert_int_equal(r.total_len, 124);
	assert_int_equal(ip4_options_check(pkt + IP4_HDR_MIN_LEN, r.hdr_len - IP4_HDR_MIN_LEN,
					   &info), WIRE_OK);
	assert_true(info.record_route);
	assert_false(info.source_route);
}

/* ---- ip4_parse: truncations ---- */

static void test_ip4_parse_every_truncation_no_options_rejected(void **state)
{
	struct ip4_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < IP4_HDR_MIN_LEN; len++)
		assert_int_equal(parse_exact(echo_req_ip, len, true, &r), WIRE_TRUNCATED);
	/* The header is whole, but total length (84) says bytes are missing. */
	for (len = IP4_HDR_MIN_LEN; len < sizeof(echo_req_ip); len++)
		assert_int_equal(parse_exact(echo_req_ip, len, true, &r), WIRE_BAD_LENGTH);
}

static void test_ip4_parse_every_truncation_with_options_rejected(void **state)
{
	uint8_t pkt[124];
	struct ip4_repr r;
	size_t len;

	(void)state;
	rr_routable(pkt);
	for (len = 0; len < IP4_HDR_MIN_LEN; len++)
		assert_int_equal(parse_exact(pkt, len, true, &r), WIRE_TRUNCATED);
	for (len = IP4_HDR_MIN_LEN; len < 60; len++)
		assert_int_equal(parse_exact(pkt, len, true, &r), WIRE_BAD_HDR_LEN);
	for (len = 60; len < sizeof(pkt); len++)
		assert_int_equal(parse_exact(pkt, len, true, &r), WIRE_BAD_LENGTH);
}

static void test_ip4_parse_every_truncation_last_fragment_rejected(void **state)
{
	struct ip4_repr r;
	size_t len;

	(void)state;
	for (len = 0; len < sizeof(frag_last); len++)
		assert_int_equal(parse_exact(frag_last, len, true, &r),
				 len < IP4_HDR_MIN_LEN ? WIRE_TRUNCATED : WIRE_BAD_LENGTH);
}

static void test_ip4_parse_link_padding_accepted_total_len_kept(void **state)
{
	uint8_t pkt[sizeof(echo_req_ip) + 6];
	struct ip4_repr r;

	(void)state;
	memset(pkt, 0, sizeof(pkt));
	memcpy(pkt, echo_req_ip, sizeof(echo_req_ip));
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
	assert_int_equal(r.total_len, 84);
}

/* ---- ip4_parse: each rejection ---- */

static void test_ip4_parse_wrong_version_rejected_bad_version(void **state)
{
	static const uint8_t versions[] = { 0, 1, 5, 6, 15 };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(versions); i++) {
		memcpy(pkt, echo_req_ip, sizeof(pkt));
		pkt[IP4_OFF_VER_IHL] = (uint8_t)(versions[i] << 4 | 5);
		fix_csum(pkt);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_VERSION);
	}
}

static void test_ip4_parse_truncation_checked_before_version(void **state)
{
	static const uint8_t v6[19] = { 0x60 };
	struct ip4_repr r;

	(void)state;
	assert_int_equal(parse_exact(v6, sizeof(v6), true, &r), WIRE_TRUNCATED);
}

static void test_ip4_parse_version_checked_before_ihl(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, echo_req_ip, sizeof(pkt));
	pkt[IP4_OFF_VER_IHL] = 0x60; /* version 6, IHL 0 */
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_VERSION);
}

static void test_ip4_parse_ihl_below_5_rejected_bad_hdr_len(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;
	uint8_t ihl;

	(void)state;
	for (ihl = 0; ihl < 5; ihl++) {
		memcpy(pkt, echo_req_ip, sizeof(pkt));
		pkt[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | ihl);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_HDR_LEN);
	}
}

static void test_ip4_parse_ihl_past_buffer_rejected_bad_hdr_len(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, echo_req_ip, sizeof(pkt));
	pkt[IP4_OFF_VER_IHL] = 0x4f; /* 60-byte header */
	assert_int_equal(parse_exact(pkt, 59, false, &r), WIRE_BAD_HDR_LEN);
	assert_int_equal(parse_exact(pkt, 24, false, &r), WIRE_BAD_HDR_LEN);
}

static void test_ip4_parse_total_len_below_header_rejected_bad_length(void **state)
{
	static const uint16_t totals[] = { 0, 1, 19 };
	uint8_t pkt[124];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		echo_with16(pkt, IP4_OFF_TOTAL_LEN, totals[i]);
		assert_int_equal(parse_exact(pkt, 84, true, &r), WIRE_BAD_LENGTH);
	}
	/* With options, total length must cover the 60-byte header too. */
	rr_routable(pkt);
	wire_put_be16(pkt + IP4_OFF_TOTAL_LEN, 59);
	fix_csum(pkt);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_LENGTH);
}

static void test_ip4_parse_total_len_past_buffer_rejected_bad_length(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	echo_with16(pkt, IP4_OFF_TOTAL_LEN, 85);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_LENGTH);
	echo_with16(pkt, IP4_OFF_TOTAL_LEN, 0xffff);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_LENGTH);
}

static void test_ip4_parse_total_len_equal_header_accepted(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	echo_with16(pkt, IP4_OFF_TOTAL_LEN, 20);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
	assert_int_equal(r.total_len, 20);
	assert_int_equal(parse_exact(pkt, 20, true, &r), WIRE_OK);
}

static void test_ip4_parse_bad_checksum_rejected_bad_checksum(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t off;

	(void)state;
	/* Any single changed byte outside the length fields is caught. */
	for (off = IP4_OFF_ID; off < IP4_HDR_MIN_LEN; off++) {
		memcpy(pkt, echo_req_ip, sizeof(pkt));
		pkt[off] ^= 0x10;
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_CHECKSUM);
	}
}

static void test_ip4_parse_bad_checksum_unverified_accepted(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, echo_req_ip, sizeof(pkt));
	wire_put_be16(pkt + IP4_OFF_CSUM, 0x1234);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), false, &r), WIRE_OK);
	assert_int_equal(r.ttl, 64);
}

static void test_ip4_parse_checksum_covers_options(void **state)
{
	uint8_t pkt[124];
	struct ip4_repr r;

	(void)state;
	rr_routable(pkt);
	pkt[IP4_HDR_MIN_LEN + 10] ^= 0x01; /* inside the record-route data */
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_CHECKSUM);
}

static void test_ip4_parse_checksum_ignores_payload(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, echo_req_ip, sizeof(pkt));
	pkt[60] ^= 0xff;
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
}

static void test_ip4_parse_checksum_checked_before_semantics(void **state)
{
	uint8_t pkt[124];
	struct ip4_repr r;

	(void)state;
	memcpy(pkt, rr_pkt, sizeof(pkt)); /* loopback source ... */
	pkt[IP4_OFF_CSUM] ^= 0xff;        /* ... and a bad checksum */
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_CHECKSUM);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), false, &r), WIRE_BAD_FIELD);
}

static void test_ip4_parse_reserved_flag_rejected_bad_field(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	echo_with16(pkt, IP4_OFF_FRAG, IP4_FLAG_RESERVED | IP4_FLAG_DF);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
	echo_with16(pkt, IP4_OFF_FRAG, IP4_FLAG_RESERVED);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
}

static void test_ip4_parse_df_and_mf_flags_read_independently(void **state)
{
	static const uint16_t frags[] = { 0, IP4_FLAG_DF, IP4_FLAG_MF, IP4_FLAG_DF | IP4_FLAG_MF };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++) {
		echo_with16(pkt, IP4_OFF_TOTAL_LEN, 20 + 64); /* 64 payload bytes: a multiple of 8 */
		wire_put_be16(pkt + IP4_OFF_FRAG, frags[i]);
		fix_csum(pkt);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
		assert_int_equal(r.df, (frags[i] & IP4_FLAG_DF) != 0);
		assert_int_equal(r.mf, (frags[i] & IP4_FLAG_MF) != 0);
	}
}

/* A 20-byte-header packet of total length `total` at fragment field `frag`, in a buffer of
 * exactly total bytes. */
static enum wire_status parse_fragment(uint16_t frag, uint16_t total)
{
	struct ip4_repr in = { .total_len = total, .ttl = 64, .proto = IP4_PROTO_UDP,
			       .src = IP_LOCAL, .dst = IP_GW }, out;
	uint8_t *pkt = calloc(1, total);
	enum wire_status st;

	assert_non_null(pkt);
	assert_int_equal(ip4_build(pkt, total, &in), 20);
	wire_put_be16(pkt + IP4_OFF_FRAG, frag);
	fix_csum(pkt);
	st = ip4_parse(pkt, total, true, &out);
	free(pkt);
	return st;
}

static void test_ip4_parse_fragment_end_past_65535_rejected_bad_field(void **state)
{
	(void)state;
	/* Offset 65528 (the largest) plus a 20-byte header: 65548 > 65535. */
	assert_int_equal(parse_fragment(IP4_FRAG_OFF_MASK, 20), WIRE_BAD_FIELD);
	/* Offset 65512 plus 24 bytes: 65536, one past the limit ("ping of death"). */
	assert_int_equal(parse_fragment(0x1ffd, 24), WIRE_BAD_FIELD);
	assert_int_equal(parse_fragment(0x1000, 40000), WIRE_BAD_FIELD);
}

static void test_ip4_parse_fragment_end_at_65535_accepted(void **state)
{
	(void)state;
	assert_int_equal(parse_fragment(0x1ffd, 23), WIRE_OK);      /* 65512 + 23 = 65535 */
	assert_int_equal(parse_fragment(0x0000, 65535), WIRE_OK);   /* the largest datagram */
}

static void test_ip4_parse_more_fragments_payload_not_multiple_of_8_rejected(void **state)
{
	uint16_t payload;

	(void)state;
	for (payload = 1; payload < 8; payload++)
		assert_int_equal(parse_fragment(IP4_FLAG_MF, (uint16_t)(20 + payload)),
				 WIRE_BAD_FIELD);
	assert_int_equal(parse_fragment(IP4_FLAG_MF | 3, 20 + 1375), WIRE_BAD_FIELD);
}

static void test_ip4_parse_more_fragments_payload_multiple_of_8_accepted(void **state)
{
	(void)state;
	assert_int_equal(parse_fragment(IP4_FLAG_MF, 20 + 8), WIRE_OK);
	assert_int_equal(parse_fragment(IP4_FLAG_MF | 3, 20 + 1376), WIRE_OK);
	assert_int_equal(parse_fragment(IP4_FLAG_MF, 20), WIRE_OK); /* empty: 0 is a multiple */
}

static void test_ip4_parse_last_fragment_odd_payload_accepted(void **state)
{
	(void)state;
	assert_int_equal(parse_fragment(5, 20 + 13), WIRE_OK);
	assert_int_equal(parse_fragment(0, 20 + 1), WIRE_OK);
}

static void test_ip4_parse_multicast_source_rejected_bad_field(void **state)
{
	static const uint32_t srcs[] = { 0xe0000001u, 0xe00000fbu, 0xefffffffu };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		echo_with_src(pkt, srcs[i]);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
	}
}

static void test_ip4_parse_limited_broadcast_source_rejected_bad_field(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	echo_with_src(pkt, 0xffffffffu);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
}

static void test_ip4_parse_loopback_source_rejected_bad_field(void **state)
{
	static const uint32_t srcs[] = { 0x7f000001u, 0x7f000000u, 0x7ffffffeu };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		echo_with_src(pkt, srcs[i]);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
	}
}

static void test_ip4_parse_unusual_unicast_sources_accepted(void **state)
{
	/* Class E is not refused here; 126.x and 128.x border 127/8, 1.0.0.0 network 0. */
	static const uint32_t srcs[] = { 0xf0000001u, 0x7effffffu, 0x80000000u, 0xdfffffffu,
					 0x01000000u };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		echo_with_src(pkt, srcs[i]);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
		assert_int_equal(r.src, srcs[i]);
	}
}

/* RFC 1122 §3.2.1.3 (a), (b): network 0 is no source, except 0.0.0.0 of a host learning its
 * address (a DHCP client) to the limited broadcast. */
static void test_ip4_parse_network_zero_source_only_to_limited_broadcast(void **state)
{
	uint8_t pkt[84];
	struct ip4_repr r;

	(void)state;
	echo_with_src(pkt, 0);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
	echo_with_src(pkt, 0x00010203u);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
	echo_with_src(pkt, 0);
	wire_put_be32(pkt + IP4_OFF_DST, 0xffffffffu);
	fix_csum(pkt);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
	assert_int_equal(r.src, 0);
	wire_put_be32(pkt + IP4_OFF_SRC, 0x00010203u);
	fix_csum(pkt);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_BAD_FIELD);
}

static void test_ip4_parse_broadcast_and_multicast_destination_accepted(void **state)
{
	static const uint32_t dsts[] = { 0xffffffffu, 0xe0000001u, 0xc00002ffu };
	uint8_t pkt[84];
	struct ip4_repr r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(dsts) / sizeof(dsts[0]); i++) {
		memcpy(pkt, echo_req_ip, sizeof(pkt));
		wire_put_be32(pkt + IP4_OFF_DST, dsts[i]);
		fix_csum(pkt);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
		assert_int_equal(r.dst, dsts[i]);
	}
}

/* ---- ip4_build ---- */

static void test_ip4_build_golden_echo_request_matches_capture(void **state)
{
	struct ip4_repr r = { .tos = 0, .total_len = 84, .id = 0xd83e, .df = true, .ttl = 64,
			      .proto = IP4_PROTO_ICMP, .src = IP_LOCAL, .dst = IP_GW };
	uint8_t hdr[20];

	(void)state;
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_memory_equal(hdr, echo_req_ip, 20);
}

static void test_ip4_build_golden_fragments_match_capture(void **state)
{
	struct ip4_repr r = { .total_len = 1396, .id = 0xd9dc, .mf = true, .ttl = 64,
			      .proto = IP4_PROTO_ICMP, .src = IP_LOCAL, .dst = IP_GW };
	uint8_t hdr[20];

	(void)state;
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_memory_equal(hdr, frag_first, 20);
	r.total_len = 152;
	r.mf = false;
	r.frag_off = 1376;
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_memory_equal(hdr, frag_last, 20);
}

static void test_ip4_build_then_parse_round_trips(void **state)
{
	struct ip4_repr in = { .hdr_len = 20, .tos = 0xb8, .total_len = 100, .id = 0xbeef,
			       .df = false, .mf = true, .frag_off = 2960, .ttl = 1,
			       .proto = IP4_PROTO_TCP, .src = 0x0a000001u, .dst = 0xe0000005u };
	struct ip4_repr out;
	uint8_t pkt[100] = { 0 };

	(void)state;
	in.total_len = 20 + 80;
	assert_int_equal(ip4_build(pkt, sizeof(pkt), &in), 20);
	assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &out), WIRE_OK);
	assert_int_equal(out.hdr_len, 20);
	assert_int_equal(out.tos, in.tos);
	assert_int_equal(out.total_len, in.total_len);
	assert_int_equal(out.id, in.id);
	assert_int_equal(out.df, in.df);
	assert_int_equal(out.mf, in.mf);
	assert_int_equal(out.frag_off, in.frag_off);
	assert_int_equal(out.ttl, in.ttl);
	assert_int_equal(out.proto, in.proto);
	assert_int_equal(out.src, in.src);
	assert_int_equal(out.dst, in.dst);
}

static void test_ip4_build_parse_of_golden_reproduces_header(void **state)
{
	struct ip4_repr r;
	uint8_t hdr[20];

	(void)state;
	assert_int_equal(parse_exact(frag_last, sizeof(frag_last), true, &r), WIRE_OK);
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_memory_equal(hdr, frag_last, 20);
}

static void test_ip4_build_ignores_hdr_len_writes_ihl_5(void **state)
{
	struct ip4_repr r = { .hdr_len = 60, .total_len = 20, .ttl = 64, .src = IP_LOCAL };
	uint8_t hdr[64];

	(void)state;
	memset(hdr, 0xa5, sizeof(hdr));
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_int_equal(hdr[IP4_OFF_VER_IHL], 0x45);
	assert_int_equal(hdr[20], 0xa5); /* nothing written past 20 bytes */
}

static void test_ip4_build_checksum_verifies_zero(void **state)
{
	struct ip4_repr r = { .tos = 0x10, .total_len = 1500, .id = 7, .df = true, .ttl = 255,
			      .proto = IP4_PROTO_UDP, .src = 0xffffffffu, .dst = 0xffffffffu };
	uint8_t hdr[20];

	(void)state;
	memset(hdr, 0xff, sizeof(hdr)); /* a stale checksum field must not leak in */
	assert_int_equal(ip4_build(hdr, sizeof(hdr), &r), 20);
	assert_int_equal(wire_csum(hdr, sizeof(hdr)), 0);
}

static void test_ip4_build_small_cap_returns_zero(void **state)
{
	struct ip4_repr r = { .total_len = 20, .ttl = 64 };
	uint8_t hdr[20];
	size_t cap;

	(void)state;
	for (cap = 0; cap < IP4_HDR_MIN_LEN; cap++) {
		memset(hdr, 0xa5, sizeof(hdr));
		assert_int_equal(ip4_build(hdr, cap, &r), 0);
		assert_int_equal(hdr[0], 0xa5);
	}
}

/* ---- ip4_options_check ---- */

static void assert_opts(const struct ip4_opts_info *i, bool sr, bool rr, bool ts, bool ra,
			unsigned unknown)
{
	assert_int_equal(i->source_route, sr);
	assert_int_equal(i->record_route, rr);
	assert_int_equal(i->timestamp, ts);
	assert_int_equal(i->router_alert, ra);
	assert_int_equal(i->unknown, unknown);
}

static void test_ip4_options_empty_ok_nothing_found(void **state)
{
	struct ip4_opts_info i;

	(void)state;
	memset(&i, 0xff, sizeof(i));
	assert_int_equal(opts_exact(NULL, 0, &i), WIRE_OK);
	assert_opts(&i, false, false, false, false, 0);
}

static void test_ip4_options_golden_nop_then_record_route_found(void **state)
{
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(rr_pkt + 20, 40, &i), WIRE_OK);
	assert_opts(&i, false, true, false, false, 0);
}

static void test_ip4_options_golden_record_route_then_eol_found(void **state)
{
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(rr_reply_opts, sizeof(rr_reply_opts), &i), WIRE_OK);
	assert_opts(&i, false, true, false, false, 0);
}

static void test_ip4_options_golden_timestamp_found(void **state)
{
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(ts_opts, sizeof(ts_opts), &i), WIRE_OK);
	assert_opts(&i, false, false, true, false, 0);
}

static void test_ip4_options_eol_stops_walk_ignores_rest(void **state)
{
	/* After EOL come bytes that would be a bad option (length 0) and an LSRR. */
	static const uint8_t o[8] = { IP4_OPT_EOL, 0x44, 0x00, IP4_OPT_LSRR, 3, 4, 0, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, false, false, false, false, 0);
}

static void test_ip4_options_flags_before_eol_kept(void **state)
{
	static const uint8_t o[8] = { IP4_OPT_RA, 4, 0, 0, IP4_OPT_EOL, IP4_OPT_RR, 0, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, false, false, false, true, 0);
}

static void test_ip4_options_nop_only_ok(void **state)
{
	uint8_t o[40];
	struct ip4_opts_info i;

	(void)state;
	memset(o, IP4_OPT_NOP, sizeof(o));
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, false, false, false, false, 0);
}

static void test_ip4_options_lsrr_sets_source_route(void **state)
{
	static const uint8_t o[8] = { IP4_OPT_LSRR, 7, 4, 192, 0, 2, 1, IP4_OPT_EOL };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, true, false, false, false, 0);
}

static void test_ip4_options_ssrr_sets_source_route(void **state)
{
	static const uint8_t o[12] = { IP4_OPT_NOP, IP4_OPT_SSRR, 11, 4, 192, 0, 2, 1,
				       192, 0, 2, 9 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, true, false, false, false, 0);
}

static void test_ip4_options_router_alert_found(void **state)
{
	static const uint8_t o[4] = { IP4_OPT_RA, 4, 0, 0 }; /* RFC 2113 */
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, false, false, false, true, 0);
}

static void test_ip4_options_unknown_types_counted_and_skipped(void **state)
{
	/* Security (130, length 11), stream id (136, length 4), an unassigned type 2 of length 2,
	 * then RR: each unknown option is skipped by its length. */
	static const uint8_t o[24] = {
		130, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		136, 4, 0x12, 0x34,
		2, 2,
		IP4_OPT_RR, 7, 4, 0, 0, 0, 0,
	};
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, false, true, false, false, 3);
}

static void test_ip4_options_all_kinds_together_all_found(void **state)
{
	static const uint8_t o[24] = {
		IP4_OPT_NOP, IP4_OPT_RA, 4, 0, 0,
		IP4_OPT_TS, 4, 5, 0,
		IP4_OPT_LSRR, 3, 4,
		IP4_OPT_RR, 3, 4,
		IP4_OPT_SSRR, 3, 4,
		99, 2,
		IP4_OPT_NOP, IP4_OPT_EOL, 0, 0,
	};
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, true, true, true, true, 1);
}

static void test_ip4_options_length_zero_rejected_bad_option(void **state)
{
	static const uint8_t o[4] = { IP4_OPT_RR, 0, 0, 0 };
	static const uint8_t unknown[4] = { 99, 0, IP4_OPT_EOL, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_BAD_OPTION);
	assert_int_equal(opts_exact(unknown, sizeof(unknown), &i), WIRE_BAD_OPTION);
}

static void test_ip4_options_length_one_rejected_bad_option(void **state)
{
	static const uint8_t o[4] = { IP4_OPT_TS, 1, 0, 0 };
	static const uint8_t unknown[4] = { 99, 1, IP4_OPT_EOL, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_BAD_OPTION);
	assert_int_equal(opts_exact(unknown, sizeof(unknown), &i), WIRE_BAD_OPTION);
}

static void test_ip4_options_length_past_end_rejected_bad_option(void **state)
{
	static const uint8_t o[8] = { IP4_OPT_NOP, IP4_OPT_LSRR, 8, 4, 192, 0, 2, 1 };
	static const uint8_t huge[4] = { IP4_OPT_RA, 255, 0, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_BAD_OPTION);
	assert_int_equal(opts_exact(huge, sizeof(huge), &i), WIRE_BAD_OPTION);
}

static void test_ip4_options_length_exactly_filling_area_accepted(void **state)
{
	static const uint8_t o[8] = { IP4_OPT_NOP, IP4_OPT_LSRR, 7, 4, 192, 0, 2, 1 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_OK);
	assert_opts(&i, true, false, false, false, 0);
}

static void test_ip4_options_missing_length_byte_rejected_bad_option(void **state)
{
	static const uint8_t o[4] = { IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_RR };
	static const uint8_t one[1] = { 99 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_BAD_OPTION);
	assert_int_equal(opts_exact(one, sizeof(one), &i), WIRE_BAD_OPTION);
}

static void test_ip4_options_bad_option_after_good_one_rejected(void **state)
{
	static const uint8_t o[8] = { IP4_OPT_RA, 4, 0, 0, IP4_OPT_RR, 1, 0, 0 };
	struct ip4_opts_info i;

	(void)state;
	assert_int_equal(opts_exact(o, sizeof(o), &i), WIRE_BAD_OPTION);
}

static void test_ip4_options_every_truncation_of_golden_rejected(void **state)
{
	struct ip4_opts_info i;
	size_t len;

	(void)state;
	/* The golden area is NOP + RR of length 39: cut anywhere inside the RR, it overruns. */
	assert_int_equal(opts_exact(rr_pkt + 20, 0, &i), WIRE_OK);
	assert_int_equal(opts_exact(rr_pkt + 20, 1, &i), WIRE_OK);
	for (len = 2; len < 40; len++)
		assert_int_equal(opts_exact(rr_pkt + 20, len, &i), WIRE_BAD_OPTION);
	for (len = 0; len < 40; len++)
		assert_int_equal(opts_exact(ts_opts, len, &i),
				 len == 0 ? WIRE_OK : WIRE_BAD_OPTION);
}

static void test_ip4_options_all_single_bytes_never_overrun(void **state)
{
	struct ip4_opts_info i;
	unsigned t;

	(void)state;
	/* A one-byte area: only EOL and NOP fit; everything else lacks its length byte. */
	for (t = 0; t < 256; t++) {
		uint8_t o = (uint8_t)t;

		assert_int_equal(opts_exact(&o, 1, &i),
				 t <= IP4_OPT_NOP ? WIRE_OK : WIRE_BAD_OPTION);
	}
}

/* ---- addresses and prefixes ---- */

static void test_ip4_addr_format_golden_dotted_quads(void **state)
{
	char buf[16];

	(void)state;
	assert_ptr_equal(ip4_addr_format(IP_GW, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "192.0.2.1");
	assert_string_equal(ip4_addr_format(0, buf, sizeof(buf)), "0.0.0.0");
	assert_string_equal(ip4_addr_format(0xffffffffu, buf, sizeof(buf)), "255.255.255.255");
	assert_string_equal(ip4_addr_format(0x0a00ff01u, buf, sizeof(buf)), "10.0.255.1");
}

static void test_ip4_addr_format_small_cap_truncates_terminated(void **state)
{
	char buf[16];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	ip4_addr_format(IP_GW, buf, 4);
	assert_string_equal(buf, "192");
	assert_int_equal(buf[4], 'x');
}

static void test_ip4_addr_parse_valid_accepted(void **state)
{
	static const struct { const char *s; uint32_t a; } ok[] = {
		{ "10.0.0.1", 0x0a000001u },
		{ "0.0.0.0", 0 },
		{ "255.255.255.255", 0xffffffffu },
		{ "192.0.2.77", 0xc000024du },
		{ "1.2.3.4", 0x01020304u },
		{ "100.64.0.10", 0x6440000au },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t a = 0x5a5a5a5a;

		assert_int_equal(ip4_addr_parse(ok[i].s, &a), 0);
		assert_int_equal(a, ok[i].a);
	}
}

static void test_ip4_addr_parse_invalid_rejected(void **state)
{
	static const char *const bad[] = {
		"", "1", "1.2", "1.2.3", "1.2.3.4.5", "1.2.3.4.",
		"256.0.0.1", "1.2.3.256", "1.2.3.999", "1000.2.3.4", "4294967297.0.0.1",
		"1.2.3.4x", "1.2.3.4 ", "1.2.3.4\n", " 1.2.3.4", "\t1.2.3.4",
		"+1.2.3.4", "1.+2.3.4", "-1.2.3.4", "1.2.-3.4",
		"1..3.4", ".1.2.3", "1.2.3.", "...",
		"01.2.3.4", "1.2.3.04", "00.0.0.0", "0x1.2.3.4", "0x7f000001", "2130706433",
		"a.b.c.d", "1.2.3.4/24", "1.2.3.4:80", "1,2,3,4",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t a;

		if (ip4_addr_parse(bad[i], &a) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
}

static void test_ip4_addr_format_then_parse_round_trips(void **state)
{
	uint32_t x = 0x12345678u;
	int iter;

	(void)state;
	for (iter = 0; iter < 5000; iter++) {
		char buf[16];
		uint32_t back;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		assert_int_equal(ip4_addr_parse(ip4_addr_format(x, buf, sizeof(buf)), &back), 0);
		assert_int_equal(back, x);
	}
}

static void test_ip4_prefix_parse_valid_accepted(void **state)
{
	static const struct { const char *s; uint32_t a; uint8_t n; } ok[] = {
		{ "10.0.0.2/24", 0x0a000002u, 24 },  /* host bits kept: it is an interface address */
		{ "0.0.0.0/0", 0, 0 },
		{ "1.2.3.4/32", 0x01020304u, 32 },
		{ "192.0.2.0/8", 0xc0000200u, 8 },
		{ "255.255.255.255/31", 0xffffffffu, 31 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		uint32_t a;
		uint8_t n;

		assert_int_equal(ip4_prefix_parse(ok[i].s, &a, &n), 0);
		assert_int_equal(a, ok[i].a);
		assert_int_equal(n, ok[i].n);
	}
}

static void test_ip4_prefix_parse_no_slash_is_32(void **state)
{
	uint32_t a;
	uint8_t n = 0;

	(void)state;
	assert_int_equal(ip4_prefix_parse("192.0.2.1", &a, &n), 0);
	assert_int_equal(a, IP_GW);
	assert_int_equal(n, 32);
}

static void test_ip4_prefix_parse_invalid_rejected(void **state)
{
	static const char *const bad[] = {
		"", "/24", "1.2.3.4/33", "1.2.3.4/100", "1.2.3.4/", "1.2.3.4/-1", "1.2.3.4/+8",
		"1.2.3.4/08", "1.2.3.4/24x", "1.2.3.4/ 24", "1.2.3.4 /24", "1.2.3.4//24",
		"1.2.3.4/24/", "1.2.3/24", "256.0.0.1/8", "1.2.3.4x/8", " 1.2.3.4/8",
		"1.2.3.4/8 ", "1.2.3.4/0x8", "1.2.3.4\\8",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t a;
		uint8_t n;

		if (ip4_prefix_parse(bad[i], &a, &n) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
}

static void test_ip4_mask_every_length_has_plen_leading_ones(void **state)
{
	uint8_t plen;

	(void)state;
	assert_int_equal(ip4_mask(0), 0);
	assert_int_equal(ip4_mask(8), 0xff000000u);
	assert_int_equal(ip4_mask(24), 0xffffff00u);
	assert_int_equal(ip4_mask(32), 0xffffffffu);
	for (plen = 1; plen <= 32; plen++)
		assert_int_equal(ip4_mask(plen), (uint32_t)(0xffffffffull << (32 - plen)));
}

static void test_ip4_addr_classes_match_rfc_ranges(void **state)
{
	(void)state;
	assert_true(ip4_is_multicast(0xe0000000u));
	assert_true(ip4_is_multicast(0xefffffffu));
	assert_false(ip4_is_multicast(0xdfffffffu));
	assert_false(ip4_is_multicast(0xf0000000u));
	assert_true(ip4_is_limited_broadcast(0xffffffffu));
	assert_false(ip4_is_limited_broadcast(0xc00002ffu));
	assert_true(ip4_is_loopback(0x7f000001u));
	assert_false(ip4_is_loopback(0x80000001u));
	assert_true(ip4_is_zeronet(0));
	assert_true(ip4_is_zeronet(0x00ffffffu));
	assert_false(ip4_is_zeronet(0x01000000u));
}

/* ---- forwarding: TTL decrement with RFC 1624 ---- */

static void test_ip4_ttl_decrement_incremental_checksum_still_parses(void **state)
{
	uint8_t pkt[124];
	struct ip4_repr r;
	int hop;

	(void)state;
	rr_routable(pkt); /* a 60-byte header: the update must not care about the length */
	for (hop = 0; hop < 63; hop++) {
		uint16_t old_word = wire_get_be16(pkt + IP4_OFF_TTL);
		uint16_t csum;

		pkt[IP4_OFF_TTL]--;
		csum = wire_csum_update16(wire_get_be16(pkt + IP4_OFF_CSUM), old_word,
					  wire_get_be16(pkt + IP4_OFF_TTL));
		wire_put_be16(pkt + IP4_OFF_CSUM, csum);
		assert_int_equal(parse_exact(pkt, sizeof(pkt), true, &r), WIRE_OK);
		assert_int_equal(r.ttl, 63 - hop);
		wire_put_be16(pkt + IP4_OFF_CSUM, 0);
		assert_int_equal(wire_csum(pkt, 60), csum);
		wire_put_be16(pkt + IP4_OFF_CSUM, csum);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ip4_parse_golden_echo_request_reads_fields),
		cmocka_unit_test(test_ip4_parse_golden_icmp_error_reads_tos),
		cmocka_unit_test(test_ip4_parse_golden_first_fragment_reads_mf),
		cmocka_unit_test(test_ip4_parse_golden_last_fragment_reads_offset_in_bytes),
		cmocka_unit_test(test_ip4_parse_golden_loopback_source_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_golden_options_header_reads_hdr_len_60),
		cmocka_unit_test(test_ip4_parse_every_truncation_no_options_rejected),
		cmocka_unit_test(test_ip4_parse_every_truncation_with_options_rejected),
		cmocka_unit_test(test_ip4_parse_every_truncation_last_fragment_rejected),
		cmocka_unit_test(test_ip4_parse_link_padding_accepted_total_len_kept),
		cmocka_unit_test(test_ip4_parse_wrong_version_rejected_bad_version),
		cmocka_unit_test(test_ip4_parse_truncation_checked_before_version),
		cmocka_unit_test(test_ip4_parse_version_checked_before_ihl),
		cmocka_unit_test(test_ip4_parse_ihl_below_5_rejected_bad_hdr_len),
		cmocka_unit_test(test_ip4_parse_ihl_past_buffer_rejected_bad_hdr_len),
		cmocka_unit_test(test_ip4_parse_total_len_below_header_rejected_bad_length),
		cmocka_unit_test(test_ip4_parse_total_len_past_buffer_rejected_bad_length),
		cmocka_unit_test(test_ip4_parse_total_len_equal_header_accepted),
		cmocka_unit_test(test_ip4_parse_bad_checksum_rejected_bad_checksum),
		cmocka_unit_test(test_ip4_parse_bad_checksum_unverified_accepted),
		cmocka_unit_test(test_ip4_parse_checksum_covers_options),
		cmocka_unit_test(test_ip4_parse_checksum_ignores_payload),
		cmocka_unit_test(test_ip4_parse_checksum_checked_before_semantics),
		cmocka_unit_test(test_ip4_parse_reserved_flag_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_df_and_mf_flags_read_independently),
		cmocka_unit_test(test_ip4_parse_fragment_end_past_65535_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_fragment_end_at_65535_accepted),
		cmocka_unit_test(test_ip4_parse_more_fragments_payload_not_multiple_of_8_rejected),
		cmocka_unit_test(test_ip4_parse_more_fragments_payload_multiple_of_8_accepted),
		cmocka_unit_test(test_ip4_parse_last_fragment_odd_payload_accepted),
		cmocka_unit_test(test_ip4_parse_multicast_source_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_limited_broadcast_source_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_loopback_source_rejected_bad_field),
		cmocka_unit_test(test_ip4_parse_unusual_unicast_sources_accepted),
		cmocka_unit_test(test_ip4_parse_network_zero_source_only_to_limited_broadcast),
		cmocka_unit_test(test_ip4_parse_broadcast_and_multicast_destination_accepted),
		cmocka_unit_test(test_ip4_build_golden_echo_request_matches_capture),
		cmocka_unit_test(test_ip4_build_golden_fragments_match_capture),
		cmocka_unit_test(test_ip4_build_then_parse_round_trips),
		cmocka_unit_test(test_ip4_build_parse_of_golden_reproduces_header),
		cmocka_unit_test(test_ip4_build_ignores_hdr_len_writes_ihl_5),
		cmocka_unit_test(test_ip4_build_checksum_verifies_zero),
		cmocka_unit_test(test_ip4_build_small_cap_returns_zero),
		cmocka_unit_test(test_ip4_options_empty_ok_nothing_found),
		cmocka_unit_test(test_ip4_options_golden_nop_then_record_route_found),
		cmocka_unit_test(test_ip4_options_golden_record_route_then_eol_found),
		cmocka_unit_test(test_ip4_options_golden_timestamp_found),
		cmocka_unit_test(test_ip4_options_eol_stops_walk_ignores_rest),
		cmocka_unit_test(test_ip4_options_flags_before_eol_kept),
		cmocka_unit_test(test_ip4_options_nop_only_ok),
		cmocka_unit_test(test_ip4_options_lsrr_sets_source_route),
		cmocka_unit_test(test_ip4_options_ssrr_sets_source_route),
		cmocka_unit_test(test_ip4_options_router_alert_found),
		cmocka_unit_test(test_ip4_options_unknown_types_counted_and_skipped),
		cmocka_unit_test(test_ip4_options_all_kinds_together_all_found),
		cmocka_unit_test(test_ip4_options_length_zero_rejected_bad_option),
		cmocka_unit_test(test_ip4_options_length_one_rejected_bad_option),
		cmocka_unit_test(test_ip4_options_length_past_end_rejected_bad_option),
		cmocka_unit_test(test_ip4_options_length_exactly_filling_area_accepted),
		cmocka_unit_test(test_ip4_options_missing_length_byte_rejected_bad_option),
		cmocka_unit_test(test_ip4_options_bad_option_after_good_one_rejected),
		cmocka_unit_test(test_ip4_options_every_truncation_of_golden_rejected),
		cmocka_unit_test(test_ip4_options_all_single_bytes_never_overrun),
		cmocka_unit_test(test_ip4_addr_format_golden_dotted_quads),
		cmocka_unit_test(test_ip4_addr_format_small_cap_truncates_terminated),
		cmocka_unit_test(test_ip4_addr_parse_valid_accepted),
		cmocka_unit_test(test_ip4_addr_parse_invalid_rejected),
		cmocka_unit_test(test_ip4_addr_format_then_parse_round_trips),
		cmocka_unit_test(test_ip4_prefix_parse_valid_accepted),
		cmocka_unit_test(test_ip4_prefix_parse_no_slash_is_32),
		cmocka_unit_test(test_ip4_prefix_parse_invalid_rejected),
		cmocka_unit_test(test_ip4_mask_every_length_has_plen_leading_ones),
		cmocka_unit_test(test_ip4_addr_classes_match_rfc_ranges),
		cmocka_unit_test(test_ip4_ttl_decrement_incremental_checksum_still_parses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
