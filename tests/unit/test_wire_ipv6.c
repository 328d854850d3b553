/* IPv6 headers, extension headers (RFC 8200 §4) and address text (RFC 4291, RFC 5952). The
 * golden packets are the Linux kernel's, captured with tcpdump on a veth (MTU 1280) between
 * 2001:db8::2 and 2001:db8::1: `ping -6`, `ping -6 -s 1400` (two fragments) and the MLDv2
 * report it sends when the interface comes up. The malformed ones are made from them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "ipv6.h"
#include "test_wire_hex.h"

static const char echo_request_hex[] =
	"60099d8000403a4020010db800000000000000000000000220010db8000000000000000000000001"
	"8000908041d00001a629086b00000000d7560d0000000000101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f3031323334353637";
/* Hop-by-Hop with Router Alert (MLD), then ICMPv6. */
static const char mld_report_hex[] =
	"6000000000380001fe8000000000000000fc00fffe000001ff020000000000000000000000000016"
	"3a000502000001008f006eef0000000204000000ff0200000000000000000001ff00000204000000"
	"ff0200000000000000000001ff000001";
/* The first fragment's headers: its 1208 data bytes after these run on as pattern_from. */
static const char first_fragment_head_hex[] =
	"60099d8004d82c4020010db800000000000000000000000220010db8000000000000000000000001"
	"3a0000010fbd10238000fdd841d20001a629086b00000000b8720d0000000000";
static const char last_fragment_head_hex[] =
	"60099d8000b82c4020010db800000000000000000000000220010db8000000000000000000000001"
	"3a0004d00fbd1023";

/* ping's payload: bytes counting up from 0x10 after its 16-byte timestamp. */
static size_t with_pattern(uint8_t *buf, size_t head, size_t total, uint8_t first)
{
	for (size_t i = head; i < total; i++)
		buf[i] = (uint8_t)(first + (i - head));
	return total;
}

static size_t first_fragment(uint8_t *buf)
{
	size_t head = hex_decode(first_fragment_head_hex, buf, 1280);
	return with_pattern(buf, head, 1280, 0x10);
}

static size_t last_fragment(uint8_t *buf)
{
	size_t head = hex_decode(last_fragment_head_hex, buf, 224);
	return with_pattern(buf, head, 224, 0xc8);
}

/* Parses a heap copy of exactly len bytes, so that ASan sees any read past len. */
static enum wire_status parse_exact(const uint8_t *bytes, size_t len, struct ip6_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	memcpy(copy, bytes, len);
	enum wire_status st = ip6_parse(copy, len, out);
	free(copy);
	return st;
}

static enum wire_status walk_exact(const uint8_t *bytes, size_t len, bool mcast,
				   struct ip6_ext_info *out)
{
	uint8_t *copy = malloc(len);
	memcpy(copy, bytes, len);
	enum wire_status st = ip6_ext_walk(copy, len, mcast, out);
	free(copy);
	return st;
}

static void test_parse_echo_request(void **state)
{
	uint8_t p[128];
	size_t len = hex_decode(echo_request_hex, p, sizeof(p));
	struct ip6_repr r;
	assert_int_equal(parse_exact(p, len, &r), WIRE_OK);
	assert_int_equal(r.tclass, 0);
	assert_int_equal(r.flow, 0x99d80);
	assert_int_equal(r.payload_len, 64);
	assert_int_equal(r.next_header, IP6_NH_ICMPV6);
	assert_int_equal(r.hop_limit, 64);
	struct ip6_addr src = ip6_addr_of("2001:db8::2"), dst = ip6_addr_of("2001:db8::1");
	assert_true(ip6_addr_equal(&r.src, &src));
	assert_true(ip6_addr_equal(&r.dst, &dst));
	/* Ethernet padding after the datagram is allowed; the caller trims it. */
	uint8_t padded[160] = {0};
	memcpy(padded, p, len);
	assert_int_equal(parse_exact(padded, len + 20, &r), WIRE_OK);
	assert_int_equal(r.payload_len, 64);
}

static void test_parse_rejects_in_order(void **state)
{
	uint8_t p[128];
	size_t len = hex_decode(echo_request_hex, p, sizeof(p));
	struct ip6_repr r;
	for (size_t n = 0; n < IP6_HDR_LEN; n++)
		assert_int_equal(parse_exact(p, n, &r), WIRE_TRUNCATED);
	uint8_t bad[128];
	memcpy(bad, p, len);
	bad[0] = 0x40;
	assert_int_equal(parse_exact(bad, len, &r), WIRE_BAD_VERSION);
	/* Payload length 0 (a jumbogram) must not read as "everything". */
	memcpy(bad, p, len);
	wire_put_be16(bad + IP6_OFF_PAYLOAD_LEN, 0);
	assert_int_equal(parse_exact(bad, len, &r), WIRE_BAD_LENGTH);
	assert_int_equal(parse_exact(p, len - 1, &r), WIRE_BAD_LENGTH);
	memcpy(bad, p, len);
	bad[IP6_OFF_SRC] = 0xff; /* multicast source */
	assert_int_equal(parse_exact(bad, len, &r), WIRE_BAD_FIELD);
	memcpy(bad, p, len);
	memset(bad + IP6_OFF_SRC, 0, 16);
	bad[IP6_OFF_SRC + 15] = 1; /* ::1 on the wire */
	assert_int_equal(parse_exact(bad, len, &r), WIRE_BAD_FIELD);
	memcpy(bad, p, len);
	memset(bad + IP6_OFF_DST, 0, 16); /* to :: */
	assert_int_equal(parse_exact(bad, len, &r), WIRE_BAD_FIELD);
}

static void test_build_round_trip(void **state)
{
	uint8_t p[128], out[128];
	size_t len = hex_decode(echo_request_hex, p, sizeof(p));
	struct ip6_repr r, again;
	assert_int_equal(ip6_parse(p, len, &r), WIRE_OK);
	assert_int_equal(ip6_build(out, IP6_HDR_LEN - 1, &r), 0);
	assert_int_equal(ip6_build(out, sizeof(out), &r), IP6_HDR_LEN);
	assert_memory_equal(out, p, IP6_HDR_LEN);
	memcpy(out + IP6_HDR_LEN, p + IP6_HDR_LEN, len - IP6_HDR_LEN);
	assert_int_equal(ip6_parse(out, len, &again), WIRE_OK);
}

static void test_walk_golden(void **state)
{
	uint8_t p[1280];
	struct ip6_ext_info e;
	size_t len = hex_decode(echo_request_hex, p, sizeof(p));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 40);
	assert_int_equal(e.count, 0);
	assert_false(e.has_frag);

	len = hex_decode(mld_report_hex, p, sizeof(p));
	assert_int_equal(walk_exact(p, len, true, &e), WIRE_OK);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 48);
	assert_int_equal(e.proto_field_off, 40);
	assert_true(e.router_alert);

	len = first_fragment(p);
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_true(e.has_frag);
	assert_int_equal(e.frag.offset, 0);
	assert_true(e.frag.more);
	assert_int_equal(e.frag.id, 0x0fbd1023);
	assert_int_equal(e.frag_hdr_off, 40);
	assert_int_equal(e.unfrag_len, 0);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 48);

	len = last_fragment(p);
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_true(e.has_frag);
	assert_int_equal(e.frag.offset, 1232);
	assert_false(e.frag.more);
	assert_int_equal(e.frag.id, 0x0fbd1023);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 48);
}

/* A datagram from the echo request's fixed header with the extension bytes ext before an
 * 8-byte ICMPv6 echo, nh the first Next Header. Returns its length. */
static size_t with_ext(uint8_t *p, uint8_t nh, const uint8_t *ext, size_t ext_len)
{
	hex_decode(echo_request_hex, p, IP6_HDR_LEN);
	memcpy(p + IP6_HDR_LEN, ext, ext_len);
	static const uint8_t echo[8] = {0x80, 0, 0, 0, 0, 1, 0, 1};
	memcpy(p + IP6_HDR_LEN + ext_len, echo, sizeof(echo));
	p[IP6_OFF_NEXT_HEADER] = nh;
	size_t len = IP6_HDR_LEN + ext_len + sizeof(echo);
	wire_put_be16(p + IP6_OFF_PAYLOAD_LEN, (uint16_t)(len - IP6_HDR_LEN));
	return len;
}

static void test_walk_hop_by_hop_only_first(void **state)
{
	uint8_t p[256], e8[16] = {IP6_NH_HOPOPTS, 0, 1, 4, 0, 0, 0, 0,
				  IP6_NH_ICMPV6, 0, 1, 4, 0, 0, 0, 0};
	struct ip6_ext_info e;
	size_t len = with_ext(p, IP6_NH_DSTOPTS, e8, sizeof(e8));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_FIELD);
	assert_int_equal(e.problem_code, 1);
	assert_int_equal(e.problem_pointer, 40); /* the Next Header that named it */
	assert_true(e.send_error);
	/* First is fine. */
	len = with_ext(p, IP6_NH_HOPOPTS, e8 + 8, 8);
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_int_equal(e.l4_off, 48);
}

static void test_walk_routing_header(void **state)
{
	uint8_t p[256], rh[24] = {IP6_NH_ICMPV6, 2, 0, 1};
	struct ip6_ext_info e;
	/* Type 0 with a segment left (RFC 5095): refused, pointing at the type. */
	size_t len = with_ext(p, IP6_NH_ROUTING, rh, sizeof(rh));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_FIELD);
	assert_int_equal(e.problem_code, 0);
	assert_int_equal(e.problem_pointer, 42);
	assert_true(e.send_error);
	/* No segments left: ignored (RFC 8200 §4.4), whatever its type. */
	rh[3] = 0;
	len = with_ext(p, IP6_NH_ROUTING, rh, sizeof(rh));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 64);
}

static void test_walk_option_actions(void **state)
{
	struct {
		uint8_t type;
		enum wire_status st;
		bool error_unicast, error_multicast;
	} cases[] = {
		{0x1e, WIRE_OK, false, false},          /* 00: skip */
		{0x5e, WIRE_BAD_OPTION, false, false},  /* 01: discard */
		{0x9e, WIRE_BAD_OPTION, true, true},    /* 10: discard and report */
		{0xde, WIRE_BAD_OPTION, true, false},   /* 11: report unless multicast */
		{0xc2, WIRE_BAD_OPTION, true, false},   /* a jumbo payload option (RFC 2675) */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t p[256], dopt[8] = {IP6_NH_ICMPV6, 0, cases[i].type, 4, 0, 0, 0, 0};
		struct ip6_ext_info e;
		size_t len = with_ext(p, IP6_NH_DSTOPTS, dopt, sizeof(dopt));
		assert_int_equal(walk_exact(p, len, false, &e), cases[i].st);
		if (cases[i].st != WIRE_OK) {
			assert_int_equal(e.problem_code, 2);
			assert_int_equal(e.problem_pointer, 42);
			assert_int_equal(e.send_error, cases[i].error_unicast);
			assert_int_equal(walk_exact(p, len, true, &e), cases[i].st);
			assert_int_equal(e.send_error, cases[i].error_multicast);
		}
	}
}

static void test_walk_bad_options(void **state)
{
	uint8_t p[256];
	struct ip6_ext_info e;
	/* Eight bytes of padding in a row (RFC 4942): Pad1 x6 then PadN of 2. */
	uint8_t pad[16] = {IP6_NH_ICMPV6, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 4, 0, 0, 0, 0};
	size_t len = with_ext(p, IP6_NH_DSTOPTS, pad, sizeof(pad));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_OPTION);
	assert_false(e.send_error);
	/* PadN carrying data. */
	uint8_t data[8] = {IP6_NH_ICMPV6, 0, 1, 4, 0, 0, 7, 0};
	len = with_ext(p, IP6_NH_DSTOPTS, data, sizeof(data));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_OPTION);
	/* An option longer than its header. */
	uint8_t over[8] = {IP6_NH_ICMPV6, 0, 0x1e, 5, 0, 0, 0, 0};
	len = with_ext(p, IP6_NH_DSTOPTS, over, sizeof(over));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_OPTION);
	/* A type byte with no room for its length. */
	uint8_t tail[8] = {IP6_NH_ICMPV6, 0, 0, 0, 0, 0, 0, 0x1e};
	len = with_ext(p, IP6_NH_DSTOPTS, tail, sizeof(tail));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_OPTION);
	/* A Router Alert of the wrong length. */
	uint8_t ra[8] = {IP6_NH_ICMPV6, 0, 5, 3, 0, 0, 0, 0};
	len = with_ext(p, IP6_NH_HOPOPTS, ra, sizeof(ra));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_OPTION);
}

static void test_walk_truncated_chain(void **state)
{
	uint8_t p[256];
	struct ip6_ext_info e;
	/* A Destination Options header claiming 16 bytes where 8 follow the fixed header. */
	uint8_t dopt[8] = {IP6_NH_ICMPV6, 1, 1, 4, 0, 0, 0, 0};
	size_t len = with_ext(p, IP6_NH_DSTOPTS, dopt, sizeof(dopt));
	assert_int_equal(walk_exact(p, len - 8, false, &e), WIRE_BAD_HDR_LEN);
	assert_false(e.send_error);
	assert_int_equal(walk_exact(p, IP6_HDR_LEN + 4, false, &e), WIRE_BAD_HDR_LEN);
	/* In a first fragment the same is RFC 7112's incomplete chain, reported (code 3). */
	uint8_t chain[16] = {IP6_NH_DSTOPTS, 0, 0, 1, 0, 0, 0, 9, IP6_NH_TCP, 3};
	len = with_ext(p, IP6_NH_FRAGMENT, chain, 16);
	assert_int_equal(walk_exact(p, IP6_HDR_LEN + 8 + 8, false, &e), WIRE_BAD_HDR_LEN);
	assert_int_equal(e.problem_code, 3);
	assert_true(e.send_error);
	/* The chain is whole but the TCP header is not: also incomplete. */
	uint8_t tcp[16] = {IP6_NH_TCP, 0, 0, 1, 0, 0, 0, 9};
	len = with_ext(p, IP6_NH_FRAGMENT, tcp, 8);
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_HDR_LEN);
	assert_int_equal(e.problem_code, 3);
}

static void test_walk_fragment_rules(void **state)
{
	uint8_t p[1400];
	struct ip6_ext_info e;
	/* A non-last fragment whose data is not a multiple of 8 bytes. */
	size_t len = first_fragment(p);
	wire_put_be16(p + IP6_OFF_PAYLOAD_LEN, (uint16_t)(len - 1 - IP6_HDR_LEN));
	assert_int_equal(walk_exact(p, len - 1, false, &e), WIRE_BAD_FIELD);
	assert_int_equal(e.problem_code, 0);
	assert_int_equal(e.problem_pointer, IP6_OFF_PAYLOAD_LEN);
	/* A fragment reaching past 65535 bytes. */
	len = last_fragment(p);
	wire_put_be16(p + 42, 0xfff8);
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_FIELD);
	assert_int_equal(e.problem_pointer, 42);
	/* Two fragment headers. */
	uint8_t two[16] = {IP6_NH_FRAGMENT, 0, 0, 1, 0, 0, 0, 1, IP6_NH_ICMPV6, 0, 0, 0, 0, 0, 0, 2};
	len = with_ext(p, IP6_NH_FRAGMENT, two, sizeof(two));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_FIELD);
	/* An atomic fragment (RFC 6946): no offset, no M; the walk goes on to the echo. */
	uint8_t atomic[8] = {IP6_NH_ICMPV6, 0, 0, 0, 0, 0, 0, 7};
	len = with_ext(p, IP6_NH_FRAGMENT, atomic, sizeof(atomic));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_true(e.has_frag);
	assert_false(e.frag.more);
	assert_int_equal(e.frag.offset, 0);
	assert_int_equal(e.proto, IP6_NH_ICMPV6);
	assert_int_equal(e.l4_off, 48);
}

static void test_walk_header_limit(void **state)
{
	uint8_t p[256], chain[8 * (IP6_EXT_MAX + 1)];
	struct ip6_ext_info e;
	for (unsigned i = 0; i <= IP6_EXT_MAX; i++) {
		uint8_t *h = chain + 8 * i;
		memset(h, 0, 8);
		h[0] = i == IP6_EXT_MAX ? IP6_NH_ICMPV6 : IP6_NH_DSTOPTS;
		h[2] = 1;
		h[3] = 4;
	}
	size_t len = with_ext(p, IP6_NH_DSTOPTS, chain, 8 * IP6_EXT_MAX);
	p[IP6_HDR_LEN + 8 * (IP6_EXT_MAX - 1)] = IP6_NH_ICMPV6;
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_OK);
	assert_int_equal(e.count, IP6_EXT_MAX);
	len = with_ext(p, IP6_NH_DSTOPTS, chain, sizeof(chain));
	assert_int_equal(walk_exact(p, len, false, &e), WIRE_BAD_FIELD);
}

static void test_address_text(void **state)
{
	static const struct {
		const char *in, *canonical;
	} ok[] = {
		{"2001:db8::1", "2001:db8::1"},
		{"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
		{"2001:DB8::1", "2001:db8::1"},
		{"::", "::"},
		{"::1", "::1"},
		{"1::", "1::"},
		/* RFC 5952 §4.2.2: one zero group stays; §4.2.3: the first of equal runs. */
		{"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},
		{"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
		{"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},
		{"1::2:3:4:5:6:7", "1:0:2:3:4:5:6:7"},
		{"::ffff:192.0.2.1", "::ffff:192.0.2.1"},
		{"::ffff:c000:201", "::ffff:192.0.2.1"},
		{"fe80::fc:ff:fe00:1", "fe80::fc:ff:fe00:1"},
		{"64:ff9b::192.0.2.33", "64:ff9b::c000:221"},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct ip6_addr a;
		char text[46];
		assert_int_equal(ip6_addr_parse(ok[i].in, &a), 0);
		assert_string_equal(ip6_addr_format(&a, text, sizeof(text)), ok[i].canonical);
	}
	static const char *const bad[] = {
		"", ":", ":::", "1:", ":1", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "1::2::3",
		"12345::", "g::", "1.2.3.4", "::ffff:1.2.3", "::ffff:01.2.3.4", "::ffff:1.2.3.256",
		" ::1", "::1 ", "::1%eth0", "1::2:3:4:5:6:7:8", "1:2:3:4:5:6:7:1.2.3.4",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ip6_addr a;
		assert_int_equal(ip6_addr_parse(bad[i], &a), -22);
	}
}

static void test_prefixes_and_classes(void **state)
{
	struct ip6_addr a;
	uint8_t plen;
	assert_int_equal(ip6_prefix_parse("2001:db8:1:2::5/32", &a, &plen), 0);
	assert_int_equal(plen, 32);
	ip6_prefix_mask(&a, plen);
	struct ip6_addr net = ip6_addr_of("2001:db8::");
	assert_true(ip6_addr_equal(&a, &net));
	assert_int_equal(ip6_prefix_parse("fe80::1", &a, &plen), 0);
	assert_int_equal(plen, 128);
	assert_int_equal(ip6_prefix_parse("::/0", &a, &plen), 0);
	assert_int_equal(plen, 0);
	static const char *const bad[] = {"::/129", "::/", "::/032", "::/-1", "::/1x", "/64"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(ip6_prefix_parse(bad[i], &a, &plen), -22);
	a = ip6_addr_of("2001:db8::1:2:3:4");
	ip6_prefix_mask(&a, 71);
	net = ip6_addr_of("2001:db8:0:0:0::");
	assert_true(ip6_addr_equal(&a, &net));

	struct ip6_addr t = ip6_addr_of("2001:db8::1"), g = ip6_solicited_node(&t);
	struct ip6_addr want = ip6_addr_of("ff02::1:ff00:1");
	assert_true(ip6_addr_equal(&g, &want));
	a = ip6_addr_of("fe80::1");
	assert_true(ip6_is_link_local(&a));
	a = ip6_addr_of("febf::1");
	assert_true(ip6_is_link_local(&a));
	a = ip6_addr_of("fec0::1");
	assert_false(ip6_is_link_local(&a));
	a = ip6_addr_of("::ffff:10.0.0.1");
	assert_true(ip6_is_v4mapped(&a));
	a = ip6_addr_of("::1");
	assert_true(ip6_is_loopback(&a));
	assert_false(ip6_is_unspecified(&a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_echo_request),
		cmocka_unit_test(test_parse_rejects_in_order),
		cmocka_unit_test(test_build_round_trip),
		cmocka_unit_test(test_walk_golden),
		cmocka_unit_test(test_walk_hop_by_hop_only_first),
		cmocka_unit_test(test_walk_routing_header),
		cmocka_unit_test(test_walk_option_actions),
		cmocka_unit_test(test_walk_bad_options),
		cmocka_unit_test(test_walk_truncated_chain),
		cmocka_unit_test(test_walk_fragment_rules),
		cmocka_unit_test(test_walk_header_limit),
		cmocka_unit_test(test_address_text),
		cmocka_unit_test(test_prefixes_and_classes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
