/* The Internet checksum (RFC 1071) and its incremental update (RFC 1624). */
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

/* RFC 1071 §3: the worked example. */
static const uint8_t rfc1071_example[8] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };

/* Captured with tcpdump: the IPv4 header of `ping 192.0.2.1` from 192.0.2.2 (checksum 0xde66). */
static const uint8_t golden_ip_hdr[20] = {
	0x45, 0x00, 0x00, 0x54, 0xd8, 0x3e, 0x40, 0x00, 0x40, 0x01, 0xde, 0x66,
	0xc0, 0x00, 0x02, 0x02, 0xc0, 0x00, 0x02, 0x01,
};

/* The same capture: the 64-byte ICMP echo request (checksum 0x6794). */
static const uint8_t golden_icmp_echo[64] = {
	0x08, 0x00, 0x67, 0x94, 0x1b, 0x35, 0x00, 0x01, 0x69, 0x85, 0x02, 0x6b,
	0x00, 0x00, 0x00, 0x00, 0x45, 0x72, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
	0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30, 0x31, 0x32, 0x33,
	0x34, 0x35, 0x36, 0x37,
};

/* Deterministic xorshift32, so every run checks the same inputs. */
static uint32_t rng_state = 0x9e3779b9u;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* A slow, obviously correct reference: fold after every word. */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;
	size_t i;

	for (i = 0; i < len; i += 2) {
		uint32_t w = (uint32_t)p[i] << 8 | (i + 1 < len ? p[i + 1] : 0);

		sum += w;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return (uint16_t)~sum;
}

/* wire_csum_add returns some sum equivalent modulo 0xffff: compare folded values. */
static uint32_t fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

static void test_csum_rfc1071_example_sum_is_ddf2(void **state)
{
	(void)state;
	/* RFC 1071 §3: the words add to 2ddf0, which folds to ddf2. */
	assert_int_equal(fold(wire_csum_add(0, rfc1071_example, sizeof(rfc1071_example))), 0xddf2);
	assert_int_equal(wire_csum_finish(0x2ddf0), (uint16_t)~0xddf2);
	assert_int_equal(wire_csum(rfc1071_example, sizeof(rfc1071_example)), 0x220d);
}

static void test_csum_rfc1071_example_with_checksum_verifies_zero(void **state)
{
	uint8_t buf[10];

	(void)state;
	memcpy(buf, rfc1071_example, 8);
	wire_put_be16(buf + 8, wire_csum(rfc1071_example, 8));
	assert_int_equal(wire_csum(buf, sizeof(buf)), 0);
}

static void test_csum_golden_ip_header_verifies_zero(void **state)
{
	(void)state;
	assert_int_equal(wire_csum(golden_ip_hdr, sizeof(golden_ip_hdr)), 0);
}

static void test_csum_golden_ip_header_recomputes_field(void **state)
{
	uint8_t hdr[20];

	(void)state;
	memcpy(hdr, golden_ip_hdr, sizeof(hdr));
	wire_put_be16(hdr + IP4_OFF_CSUM, 0);
	assert_int_equal(wire_csum(hdr, sizeof(hdr)), 0xde66);
}

static void test_csum_golden_icmp_echo_verifies_zero(void **state)
{
	uint8_t msg[64];

	(void)state;
	assert_int_equal(wire_csum(golden_icmp_echo, sizeof(golden_icmp_echo)), 0);
	memcpy(msg, golden_icmp_echo, sizeof(msg));
	wire_put_be16(msg + 2, 0);
	assert_int_equal(wire_csum(msg, sizeof(msg)), 0x6794);
}

static void test_csum_empty_buffer_is_ffff(void **state)
{
	uint8_t b = 0xaa;

	(void)state;
	assert_int_equal(wire_csum_add(0, &b, 0), 0);
	assert_int_equal(wire_csum(&b, 0), 0xffff);
}

static void test_csum_odd_length_pads_with_zero(void **state)
{
	static const uint8_t odd[3] = { 0x12, 0x34, 0x56 };
	static const uint8_t even[4] = { 0x12, 0x34, 0x56, 0x00 };

	(void)state;
	assert_int_equal(wire_csum_add(0, odd, 3), 0x1234 + 0x5600);
	assert_int_equal(wire_csum(odd, 3), wire_csum(even, 4));
}

static void test_csum_single_byte_is_high_half(void **state)
{
	static const uint8_t one = 0xab;

	(void)state;
	assert_int_equal(wire_csum_add(0, &one, 1), 0xab00);
}

static void test_csum_chunks_of_even_length_equal_whole(void **state)
{
	uint32_t sum;
	size_t cut;

	(void)state;
	for (cut = 0; cut <= sizeof(golden_icmp_echo); cut += 2) {
		sum = wire_csum_add(0, golden_icmp_echo, cut);
		sum = wire_csum_add(sum, golden_icmp_echo + cut, sizeof(golden_icmp_echo) - cut);
		assert_int_equal(wire_csum_finish(sum), 0);
	}
}

static void test_csum_start_sum_is_added(void **state)
{
	(void)state;
	assert_int_equal(fold(wire_csum_add(0x1234, rfc1071_example, 8)), fold(0x1234 + 0x2ddf0));
}

static void test_csum_all_ones_data_gives_zero(void **state)
{
	uint8_t buf[64];

	(void)state;
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(wire_csum(buf, sizeof(buf)), 0);
}

static void test_csum_all_zero_data_gives_ffff(void **state)
{
	uint8_t buf[64] = { 0 };

	(void)state;
	assert_int_equal(wire_csum(buf, sizeof(buf)), 0xffff);
}

static void test_csum_finish_folds_repeated_carries(void **state)
{
	(void)state;
	assert_int_equal(wire_csum_finish(0), 0xffff);
	assert_int_equal(wire_csum_finish(0xffff), 0);
	/* 0xffff + 0xffff = 0x1fffe -> 0xffff. */
	assert_int_equal(wire_csum_finish(0xffffffffu), 0);
	/* 0x0001ffff -> 0x10000 -> 0x0001: needs a second fold. */
	assert_int_equal(wire_csum_finish(0x0001ffffu), 0xfffe);
}

static void test_csum_large_buffer_loses_no_carry(void **state)
{
	/* 2^20 bytes of 0xff: 2^19 words of 0xffff overflow a 32-bit sum without folding. */
	size_t len = (size_t)1 << 20;
	uint8_t *buf = malloc(len);
	uint32_t sum;

	(void)state;
	assert_non_null(buf);
	memset(buf, 0xff, len);
	assert_int_equal(wire_csum(buf, len), 0);
	buf[len - 1] = 0xfe;
	assert_int_equal(wire_csum(buf, len), ref_csum(buf, len));
	/* Two halves give the whole. */
	sum = wire_csum_add(0, buf, len / 2);
	sum = wire_csum_add(sum, buf + len / 2, len / 2);
	assert_int_equal(wire_csum_finish(sum), ref_csum(buf, len));
	/* A running sum near 2^32 passed in loses nothing: 0xfffffff0 folds to 0xfff0. */
	sum = wire_csum_add(0xfffffff0u, buf, len);
	assert_int_equal(wire_csum_finish(sum),
			 wire_csum_finish(0xfff0u + (uint16_t)~ref_csum(buf, len)));
	free(buf);
}

static void test_csum_random_buffers_match_reference(void **state)
{
	uint8_t buf[1501];
	int iter;

	(void)state;
	for (iter = 0; iter < 2000; iter++) {
		size_t len = rng() % sizeof(buf), i;

		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)rng();
		assert_int_equal(wire_csum(buf, len), ref_csum(buf, len));
	}
}

static void test_csum_unaligned_start_gives_same_result(void **state)
{
	uint8_t buf[65];

	(void)state;
	memcpy(buf + 1, golden_icmp_echo, sizeof(golden_icmp_echo));
	assert_int_equal(wire_csum(buf + 1, sizeof(golden_icmp_echo)), 0);
}

static void test_csum_update16_rfc1624_example_gives_zero(void **state)
{
	(void)state;
	/* RFC 1624 §4: the sum of the other words is 0xcd7a and m changes from 0x5555 to 0x3285;
	 * HC = ~(0xcd7a + 0x5555) = 0xdd2f, and eqn. 3 yields 0x0000 (eqn. 2 gave 0xffff). */
	assert_int_equal(wire_csum_update16(0xdd2f, 0x5555, 0x3285), 0x0000);
}

static void test_csum_update16_same_word_keeps_checksum(void **state)
{
	(void)state;
	assert_int_equal(wire_csum_update16(0xde66, 0x4001, 0x4001), 0xde66);
	assert_int_equal(wire_csum_update16(0x1234, 0, 0), 0x1234);
}

static void test_csum_update16_golden_ttl_decrement_matches_recompute(void **state)
{
	uint8_t hdr[20];
	uint16_t old_word, new_word, csum;

	(void)state;
	memcpy(hdr, golden_ip_hdr, sizeof(hdr));
	old_word = wire_get_be16(hdr + IP4_OFF_TTL);
	hdr[IP4_OFF_TTL]--;
	new_word = wire_get_be16(hdr + IP4_OFF_TTL);
	csum = wire_csum_update16(wire_get_be16(hdr + IP4_OFF_CSUM), old_word, new_word);
	assert_int_equal(csum, 0xdf66);
	wire_put_be16(hdr + IP4_OFF_CSUM, 0);
	assert_int_equal(wire_csum(hdr, sizeof(hdr)), csum);
}

/* Fills a random IPv4-like header (version 4, so it never sums to zero; TTL >= 1) and its
 * checksum. */
static void random_ip_header(uint8_t hdr[20])
{
	size_t i;

	for (i = 0; i < 20; i++)
		hdr[i] = (uint8_t)rng();
	hdr[IP4_OFF_VER_IHL] = 0x45;
	if (hdr[IP4_OFF_TTL] == 0)
		hdr[IP4_OFF_TTL] = 1; /* so that it can be decremented */
	wire_put_be16(hdr + IP4_OFF_CSUM, 0);
	wire_put_be16(hdr + IP4_OFF_CSUM, wire_csum(hdr, 20));
}

static void test_csum_update16_ttl_decrement_random_headers_matches_recompute(void **state)
{
	int iter;

	(void)state;
	for (iter = 0; iter < 100000; iter++) {
		uint8_t hdr[20];
		uint16_t old_word, new_word, csum;

		random_ip_header(hdr);
		old_word = wire_get_be16(hdr + IP4_OFF_TTL);
		hdr[IP4_OFF_TTL]--;
		new_word = wire_get_be16(hdr + IP4_OFF_TTL);
		csum = wire_csum_update16(wire_get_be16(hdr + IP4_OFF_CSUM), old_word, new_word);
		wire_put_be16(hdr + IP4_OFF_CSUM, csum);
		/* The updated header verifies, and the field equals a full recomputation. */
		assert_int_equal(wire_csum(hdr, 20), 0);
		wire_put_be16(hdr + IP4_OFF_CSUM, 0);
		assert_int_equal(wire_csum(hdr, 20), csum);
	}
}

static void test_csum_update16_any_word_change_matches_recompute(void **state)
{
	int iter;

	(void)state;
	for (iter = 0; iter < 100000; iter++) {
		uint8_t hdr[20];
		/* Any 16-bit word but the checksum itself and the version/IHL/TOS word. */
		static const size_t words[] = { 2, 4, 6, 8, 12, 14, 16, 18 };
		size_t off = words[rng() % (sizeof(words) / sizeof(words[0]))];
		uint16_t old_word, new_word, csum;

		random_ip_header(hdr);
		old_word = wire_get_be16(hdr + off);
		new_word = (uint16_t)rng();
		if (iter % 7 == 0)
			new_word = (uint16_t)~old_word; /* extremes: all bits flip */
		wire_put_be16(hdr + off, new_word);
		csum = wire_csum_update16(wire_get_be16(hdr + IP4_OFF_CSUM), old_word, new_word);
		wire_put_be16(hdr + IP4_OFF_CSUM, 0);
		assert_int_equal(wire_csum(hdr, 20), csum);
	}
}

static void test_csum_update16_chained_updates_match_recompute(void **state)
{
	uint8_t hdr[20];
	int hop;

	(void)state;
	memcpy(hdr, golden_ip_hdr, sizeof(hdr));
	/* Forward the packet 64 times: TTL 64 -> 0, one incremental update per hop. */
	for (hop = 0; hop < 64; hop++) {
		uint16_t old_word = wire_get_be16(hdr + IP4_OFF_TTL), csum;

		hdr[IP4_OFF_TTL]--;
		csum = wire_csum_update16(wire_get_be16(hdr + IP4_OFF_CSUM), old_word,
					  wire_get_be16(hdr + IP4_OFF_TTL));
		wire_put_be16(hdr + IP4_OFF_CSUM, csum);
		assert_int_equal(wire_csum(hdr, sizeof(hdr)), 0);
	}
	assert_int_equal(hdr[IP4_OFF_TTL], 0);
}

/* ---- wire_csum_pseudo4 ---- */

/* tcpdump on lo: curl's SYN from 127.0.0.1 to 127.0.0.1:8080, 40 bytes, checksum field as
 * lo leaves it (0xfe30: the folded pseudo-header sum, CHECKSUM_PARTIAL); tcpdump -vv computes
 * the complete checksum 0xdcee. */
static const uint8_t golden_tcp_syn_lo[40] = {
	0xee, 0x3a, 0x1f, 0x90, 0x29, 0x8a, 0x24, 0x8e, 0x00, 0x00, 0x00, 0x00,
	0xa0, 0x02, 0xff, 0xd7, 0xfe, 0x30, 0x00, 0x00, 0x02, 0x04, 0xff, 0xd7,
	0x04, 0x02, 0x08, 0x0a, 0x85, 0x16, 0x92, 0x16, 0x00, 0x00, 0x00, 0x00,
	0x01, 0x03, 0x03, 0x0a,
};

/* The 12-byte pseudo-header of RFC 9293 §3.1 / RFC 768, written out. */
static void pseudo_bytes(uint8_t out[12], uint32_t src, uint32_t dst, uint8_t proto,
			 uint16_t len)
{
	wire_put_be32(out, src);
	wire_put_be32(out + 4, dst);
	out[8] = 0;
	out[9] = proto;
	wire_put_be16(out + 10, len);
}

static void test_csum_pseudo4_golden_loopback_syn_folds_to_captured_partial(void **state)
{
	uint32_t sum = wire_csum_pseudo4(0x7f000001u, 0x7f000001u, IP4_PROTO_TCP, 40);

	(void)state;
	assert_int_equal((uint16_t)~wire_csum_finish(sum), 0xfe30);
}

static void test_csum_pseudo4_golden_loopback_syn_completes_to_tcpdump_value(void **state)
{
	uint8_t seg[40];
	uint32_t sum;

	(void)state;
	memcpy(seg, golden_tcp_syn_lo, sizeof(seg));
	wire_put_be16(seg + 16, 0);
	sum = wire_csum_pseudo4(0x7f000001u, 0x7f000001u, IP4_PROTO_TCP, sizeof(seg));
	assert_int_equal(wire_csum_finish(wire_csum_add(sum, seg, sizeof(seg))), 0xdcee);
}

static void test_csum_pseudo4_equals_sum_of_written_pseudo_header(void **state)
{
	uint8_t hdr[12];
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		uint32_t src = rng(), dst = rng(), r = rng();
		uint8_t proto = (uint8_t)r;
		uint16_t len = (uint16_t)(r >> 8);

		pseudo_bytes(hdr, src, dst, proto, len);
		assert_int_equal(wire_csum_finish(wire_csum_pseudo4(src, dst, proto, len)),
				 ref_csum(hdr, sizeof(hdr)));
	}
}

static void test_csum_pseudo4_all_ones_no_carry_lost(void **state)
{
	uint8_t hdr[12];

	(void)state;
	pseudo_bytes(hdr, 0xffffffffu, 0xffffffffu, 0xff, 0xffff);
	assert_int_equal(wire_csum_finish(wire_csum_pseudo4(0xffffffffu, 0xffffffffu, 0xff,
							    0xffff)),
			 ref_csum(hdr, sizeof(hdr)));
}

static void test_csum_pseudo4_zero_is_zero(void **state)
{
	(void)state;
	assert_int_equal(wire_csum_pseudo4(0, 0, 0, 0), 0);
}

static void test_csum_pseudo4_udp_proto_differs_from_tcp(void **state)
{
	(void)state;
	assert_int_equal(wire_csum_pseudo4(1, 2, IP4_PROTO_UDP, 8) -
			 wire_csum_pseudo4(1, 2, IP4_PROTO_TCP, 8), IP4_PROTO_UDP - IP4_PROTO_TCP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_rfc1071_example_sum_is_ddf2),
		cmocka_unit_test(test_csum_rfc1071_example_with_checksum_verifies_zero),
		cmocka_unit_test(test_csum_golden_ip_header_verifies_zero),
		cmocka_unit_test(test_csum_golden_ip_header_recomputes_field),
		cmocka_unit_test(test_csum_golden_icmp_echo_verifies_zero),
		cmocka_unit_test(test_csum_empty_buffer_is_ffff),
		cmocka_unit_test(test_csum_odd_length_pads_with_zero),
		cmocka_unit_test(test_csum_single_byte_is_high_half),
		cmocka_unit_test(test_csum_chunks_of_even_length_equal_whole),
		cmocka_unit_test(test_csum_start_sum_is_added),
		cmocka_unit_test(test_csum_all_ones_data_gives_zero),
		cmocka_unit_test(test_csum_all_zero_data_gives_ffff),
		cmocka_unit_test(test_csum_finish_folds_repeated_carries),
		cmocka_unit_test(test_csum_large_buffer_loses_no_carry),
		cmocka_unit_test(test_csum_random_buffers_match_reference),
		cmocka_unit_test(test_csum_unaligned_start_gives_same_result),
		cmocka_unit_test(test_csum_update16_rfc1624_example_gives_zero),
		cmocka_unit_test(test_csum_update16_same_word_keeps_checksum),
		cmocka_unit_test(test_csum_update16_golden_ttl_decrement_matches_recompute),
		cmocka_unit_test(test_csum_update16_ttl_decrement_random_headers_matches_recompute),
		cmocka_unit_test(test_csum_update16_any_word_change_matches_recompute),
		cmocka_unit_test(test_csum_update16_chained_updates_match_recompute),
		cmocka_unit_test(test_csum_pseudo4_golden_loopback_syn_folds_to_captured_partial),
		cmocka_unit_test(test_csum_pseudo4_golden_loopback_syn_completes_to_tcpdump_value),
		cmocka_unit_test(test_csum_pseudo4_equals_sum_of_written_pseudo_header),
		cmocka_unit_test(test_csum_pseudo4_all_ones_no_carry_lost),
		cmocka_unit_test(test_csum_pseudo4_zero_is_zero),
		cmocka_unit_test(test_csum_pseudo4_udp_proto_differs_from_tcp),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
