/* The software Toeplitz hash (src/wire/toeplitz.c) against the RSS specification's published
 * verification values and against DPDK's bit-by-bit reference (rte_softrss). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <rte_thash.h>

#include "toeplitz.h"

/* The key of Microsoft's "Verifying the RSS Hash Calculation" examples. */
static const uint8_t ms_key[TOEPLITZ_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

struct vector {
	uint32_t dst, src;
	uint16_t dport, sport;
	uint32_t ipv4, ipv4_tcp;
};

static const struct vector ms_vectors[] = {
	{IP(161, 142, 100, 80), IP(66, 9, 149, 187), 1766, 2794, 0x323e8fc2, 0x51ccc178},
	{IP(65, 69, 140, 83), IP(199, 92, 111, 2), 4739, 14230, 0xd718262a, 0xc626b0ea},
	{IP(12, 22, 207, 184), IP(24, 19, 198, 95), 38024, 12898, 0xd2d0a5de, 0x5c2b394a},
	{IP(209, 142, 163, 6), IP(38, 27, 205, 30), 2217, 48228, 0x82989176, 0xafc7327f},
	{IP(202, 188, 127, 2), IP(153, 39, 163, 191), 1303, 44251, 0x5d1809c5, 0x10e828a2},
};

static void test_published_ipv4_values(void **state)
{
	(void)state;
	static struct toeplitz t;
	toeplitz_init(&t, ms_key);
	for (size_t i = 0; i < sizeof(ms_vectors) / sizeof(ms_vectors[0]); i++) {
		const struct vector *v = &ms_vectors[i];
		assert_int_equal(toeplitz_ipv4(&t, v->src, v->dst), v->ipv4);
		assert_int_equal(toeplitz_ipv4_l4(&t, v->src, v->dst, v->sport, v->dport), v->ipv4_tcp);
	}
}

static void test_agrees_with_dpdk_reference(void **state)
{
	(void)state;
	static struct toeplitz t;
	toeplitz_init(&t, ms_key);
	srand(7);
	for (int i = 0; i < 100000; i++) {
		uint32_t in[3] = {(uint32_t)rand() ^ (uint32_t)rand() << 16,
				  (uint32_t)rand() ^ (uint32_t)rand() << 16,
				  (uint32_t)rand() ^ (uint32_t)rand() << 16};
		uint32_t want = rte_softrss(in, 3, ms_key);
		assert_int_equal(toeplitz_ipv4_l4(&t, in[0], in[1], (uint16_t)(in[2] >> 16),
						  (uint16_t)in[2]), want);
	}
}

/* The IPv6 with TCP verification values of Microsoft's RSS specification. */
static void test_published_ipv6_tcp_values(void **state)
{
	(void)state;
	static const struct {
		uint8_t dst[16], src[16];
		uint16_t dport, sport;
		uint32_t want;
	} v[] = {
		{{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, [15] = 1},
		 {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, [15] = 7}, 1766, 2794, 0x40207d3d},
		{{0xff, 0x02, [15] = 1},
		 {0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef,
		  0xab}, 4739, 14230, 0xdde51bbf},
		{{0xfe, 0x80, [8] = 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
		 {0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21,
		  0x67, 0xcf}, 38024, 44251, 0x02d1feef},
	};
	static struct toeplitz t;
	toeplitz_init(&t, ms_key);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		assert_int_equal(toeplitz_ipv6_l4(&t, v[i].src, v[i].dst, v[i].sport, v[i].dport),
				 v[i].want);
}

static void test_symmetric_key_gives_one_hash_per_ipv6_flow(void **state)
{
	(void)state;
	static struct toeplitz t;
	toeplitz_init(&t, toeplitz_symmetric_key);
	srand(13);
	for (int i = 0; i < 10000; i++) {
		uint8_t a[16], b[16];
		for (int k = 0; k < 16; k++) {
			a[k] = (uint8_t)rand();
			b[k] = (uint8_t)rand();
		}
		uint16_t pa = (uint16_t)rand(), pb = (uint16_t)rand();
		assert_int_equal(toeplitz_ipv6_l4(&t, a, b, pa, pb), toeplitz_ipv6_l4(&t, b, a, pb, pa));
	}
}

static void test_symmetric_key_gives_one_hash_per_flow(void **state)
{
	(void)state;
	static struct toeplitz t;
	toeplitz_init(&t, toeplitz_symmetric_key);
	srand(11);
	for (int i = 0; i < 10000; i++) {
		uint32_t a = (uint32_t)rand() << 1, b = (uint32_t)rand() << 1;
		uint16_t pa = (uint16_t)rand(), pb = (uint16_t)rand();
		assert_int_equal(toeplitz_ipv4_l4(&t, a, b, pa, pb), toeplitz_ipv4_l4(&t, b, a, pb, pa));
		assert_int_equal(toeplitz_ipv4(&t, a, b), toeplitz_ipv4(&t, b, a));
	}
}

static void test_low_bits_spread_ports_evenly(void **state)
{
	(void)state;
	/* Workers are chosen from the hash's low bits: consecutive source ports of one
	 * connection pair must spread over them. */
	static struct toeplitz t;
	toeplitz_init(&t, toeplitz_symmetric_key);
	unsigned count[4] = {0};
	for (uint32_t p = 32768; p < 32768 + 4096; p++)
		count[toeplitz_ipv4_l4(&t, IP(10, 0, 0, 1), IP(10, 0, 0, 2), 80, (uint16_t)p) & 3]++;
	for (int i = 0; i < 4; i++)
		assert_in_range(count[i], 700, 1350);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_published_ipv4_values),
		cmocka_unit_test(test_agrees_with_dpdk_reference),
		cmocka_unit_test(test_published_ipv6_tcp_values),
		cmocka_unit_test(test_symmetric_key_gives_one_hash_per_ipv6_flow),
		cmocka_unit_test(test_symmetric_key_gives_one_hash_per_flow),
		cmocka_unit_test(test_low_bits_spread_ports_evenly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
