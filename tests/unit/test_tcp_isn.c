/* RFC 6528 initial sequence numbers: M (a 4 µs clock) plus F (SipHash of the 4-tuple under a
 * secret key), on a virtual clock; and the random secret. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/tcp_isn.h"
#include "test_rand.h"

#define LADDR 0xc0000201u /* 192.0.2.1 */
#define RADDR 0xc6336402u /* 198.51.100.2 */
#define LPORT 80
#define RPORT 40000

static const struct tcp_secret fixed_secret = {
	.isn_key = { UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908) },
	.cookie_key = { UINT64_C(0x1716151413121110), UINT64_C(0x1f1e1d1c1b1a1918) },
};

static uint32_t isn_at(uint64_t now_us)
{
	return tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
		now_us);
}

static void test_isn_same_tuple_same_time_is_deterministic(void **state)
{
	(void)state;
	assert_int_equal(isn_at(123456789), isn_at(123456789));
}

static void test_isn_same_tuple_advances_250000_per_second(void **state)
{
	(void)state;
	/* RFC 6528 §3: M ticks every 4 µs, 250000 times a second. */
	assert_int_equal((uint32_t)(isn_at(1000000) - isn_at(0)), 250000);
	assert_int_equal((uint32_t)(isn_at(7000000 + 555) - isn_at(555)), 7 * 250000);
}

static void test_isn_same_tuple_advances_one_per_4us(void **state)
{
	uint64_t t;

	(void)state;
	for (t = 1000; t < 1100; t += 4)
		assert_int_equal((uint32_t)(isn_at(t + 4) - isn_at(t)), 1);
}

static void test_isn_within_one_4us_tick_does_not_change(void **state)
{
	(void)state;
	assert_int_equal(isn_at(4000), isn_at(4001));
	assert_int_equal(isn_at(4000), isn_at(4003));
	assert_int_equal((uint32_t)(isn_at(4004) - isn_at(4003)), 1);
}

static void test_isn_offset_is_siphash_of_fixed_be_layout(void **state)
{
	/* 192.0.2.1:80 -> 198.51.100.2:40000: laddr lport raddr rport, big-endian, the
	 * addresses as IPv4-mapped IPv6 ones (::ffff:a.b.c.d). */
	const uint8_t msg[36] = { [10] = 0xff, [11] = 0xff, 0xc0, 0x00, 0x02, 0x01, 0x00, 0x50,
				  [28] = 0xff, [29] = 0xff, 0xc6, 0x33, 0x64, 0x02, 0x9c, 0x40 };

	(void)state;
	assert_int_equal(isn_at(0), (uint32_t)siphash24(&fixed_secret.isn_key, msg, sizeof(msg)));
	assert_int_equal(isn_at(4 * 1000),
			 (uint32_t)siphash24(&fixed_secret.isn_key, msg, sizeof(msg)) + 1000);
}

static void test_isn_ipv6_every_address_bit_counts(void **state)
{
	/* 2001:db8::1 and a peer differing from the first only in one high bit: the hash
	 * covers all 128 bits, not a folded 32 (RFC 6528 §3: the connection-id). */
	struct inet_addr l = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
	struct inet_addr r1 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
	struct inet_addr r2 = r1;
	r2.b[4] ^= 0x80;

	(void)state;
	assert_true(tcp_isn(&fixed_secret, &l, LPORT, &r1, RPORT, 0) !=
		    tcp_isn(&fixed_secret, &l, LPORT, &r2, RPORT, 0));
	assert_true(tcp_isn(&fixed_secret, &l, LPORT, &r1, RPORT, 0) !=
		    tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
			0));
}

static void test_isn_cookie_key_is_not_used(void **state)
{
	struct tcp_secret s = fixed_secret;

	(void)state;
	s.cookie_key.k0 ^= 1;
	assert_int_equal(tcp_isn(&s, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT, 99),
		isn_at(99));
}

static void test_isn_different_laddr_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR + 1), LPORT, INET_ADDR_V4(RADDR),
		RPORT, 0) != isn_at(0));
}

static void test_isn_different_lport_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT + 1, INET_ADDR_V4(RADDR),
		RPORT, 0) != isn_at(0));
}

static void test_isn_different_raddr_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT,
		INET_ADDR_V4(RADDR ^ 0x80000000u), RPORT, 0) !=
		    isn_at(0));
}

static void test_isn_different_rport_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR),
		RPORT + 1, 0) != isn_at(0));
}

static void test_isn_reversed_direction_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(RADDR), RPORT, INET_ADDR_V4(LADDR), LPORT,
		0) != isn_at(0));
}

static void test_isn_ports_swapped_differs(void **state)
{
	(void)state;
	assert_true(tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), RPORT, INET_ADDR_V4(RADDR), LPORT,
		0) != isn_at(0));
}

static void test_isn_different_key_differs(void **state)
{
	struct tcp_secret s = fixed_secret;
	int bit;

	(void)state;
	for (bit = 0; bit < 64; bit++) {
		s = fixed_secret;
		s.isn_key.k0 ^= UINT64_C(1) << bit;
		assert_true(tcp_isn(&s, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
			0) != isn_at(0));
		s = fixed_secret;
		s.isn_key.k1 ^= UINT64_C(1) << bit;
		assert_true(tcp_isn(&s, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
			0) != isn_at(0));
	}
}

static void test_isn_neighbouring_tuples_not_sequential(void **state)
{
	uint32_t prev = isn_at(0);
	uint16_t p;

	(void)state;
	/* Consecutive source ports must not give consecutive ISNs (RFC 6528 §2). */
	for (p = RPORT + 1; p < RPORT + 64; p++) {
		uint32_t v = tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR),
			p, 0);
		uint32_t d = v - prev;

		assert_true(d > 0x10000u && d < 0xffff0000u);
		prev = v;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static void test_isn_many_tuples_almost_no_collisions(void **state)
{
	enum { N = 20000 };
	uint32_t *v = malloc(N * sizeof(*v));
	uint32_t seed = 0x1234567u;
	int i, dup = 0;

	(void)state;
	assert_non_null(v);
	for (i = 0; i < N; i++)
		v[i] = tcp_isn(&fixed_secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(rnd(&seed)),
			(uint16_t)rnd(&seed), 0);
	/* Expected collisions among 20000 random 32-bit values: N^2 / 2^33, about 0.05. */
	qsort(v, N, sizeof(*v), cmp_u32);
	for (i = 1; i < N; i++)
		dup += v[i] == v[i - 1];
	assert_true(dup <= 2);
	free(v);
}

static void test_isn_wraps_mod_2_32(void **state)
{
	const uint64_t wrap_us = UINT64_C(4) << 32; /* M wraps every 4 * 2^32 µs, ~4.8 h */

	(void)state;
	assert_int_equal(isn_at(wrap_us), isn_at(0));
	assert_int_equal(isn_at(wrap_us + 4 * 77), isn_at(4 * 77));
	/* Across the wrap of M the ISN still advances by one tick per 4 µs. */
	assert_int_equal((uint32_t)(isn_at(wrap_us) - isn_at(wrap_us - 4)), 1);
	assert_int_equal((uint32_t)(isn_at(wrap_us + 400) - isn_at(wrap_us - 400)), 200);
}

static void test_isn_value_wraps_past_ffffffff(void **state)
{
	uint32_t base = isn_at(0);
	uint64_t t = (uint64_t)(uint32_t)(0u - base) * 4; /* M such that M + F == 2^32 */

	(void)state;
	assert_true(base > 1); /* holds for fixed_secret; t - 4 must not go below 0 */
	assert_int_equal(isn_at(t - 4), 0xffffffffu);
	assert_int_equal(isn_at(t), 0);
	assert_int_equal(isn_at(t + 4), 1);
}

static void test_isn_huge_clock_uses_only_low_bits_of_m(void **state)
{
	const uint64_t big = UINT64_C(0xfedcba9876543210) & ~UINT64_C(3);

	(void)state;
	assert_int_equal((uint32_t)(isn_at(big) - isn_at(0)), (uint32_t)(big >> 2));
}

static void test_isn_secret_init_random_returns_zero_and_fills_keys(void **state)
{
	struct tcp_secret s;

	(void)state;
	memset(&s, 0, sizeof(s));
	assert_int_equal(tcp_secret_init_random(&s), 0);
	/* 256 random bits all zero in one word: 2^-64. */
	assert_true(s.isn_key.k0 != 0 && s.isn_key.k1 != 0);
	assert_true(s.cookie_key.k0 != 0 && s.cookie_key.k1 != 0);
	assert_true(s.isn_key.k0 != s.cookie_key.k0);
}

static void test_isn_secret_init_random_twice_gives_different_keys(void **state)
{
	struct tcp_secret a, b;

	(void)state;
	assert_int_equal(tcp_secret_init_random(&a), 0);
	assert_int_equal(tcp_secret_init_random(&b), 0);
	assert_true(a.isn_key.k0 != b.isn_key.k0 && a.isn_key.k1 != b.isn_key.k1);
	assert_true(a.cookie_key.k0 != b.cookie_key.k0 && a.cookie_key.k1 != b.cookie_key.k1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isn_same_tuple_same_time_is_deterministic),
		cmocka_unit_test(test_isn_same_tuple_advances_250000_per_second),
		cmocka_unit_test(test_isn_same_tuple_advances_one_per_4us),
		cmocka_unit_test(test_isn_within_one_4us_tick_does_not_change),
		cmocka_unit_test(test_isn_offset_is_siphash_of_fixed_be_layout),
		cmocka_unit_test(test_isn_ipv6_every_address_bit_counts),
		cmocka_unit_test(test_isn_cookie_key_is_not_used),
		cmocka_unit_test(test_isn_different_laddr_differs),
		cmocka_unit_test(test_isn_different_lport_differs),
		cmocka_unit_test(test_isn_different_raddr_differs),
		cmocka_unit_test(test_isn_different_rport_differs),
		cmocka_unit_test(test_isn_reversed_direction_differs),
		cmocka_unit_test(test_isn_ports_swapped_differs),
		cmocka_unit_test(test_isn_different_key_differs),
		cmocka_unit_test(test_isn_neighbouring_tuples_not_sequential),
		cmocka_unit_test(test_isn_many_tuples_almost_no_collisions),
		cmocka_unit_test(test_isn_wraps_mod_2_32),
		cmocka_unit_test(test_isn_value_wraps_past_ffffffff),
		cmocka_unit_test(test_isn_huge_clock_uses_only_low_bits_of_m),
		cmocka_unit_test(test_isn_secret_init_random_returns_zero_and_fills_keys),
		cmocka_unit_test(test_isn_secret_init_random_twice_gives_different_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
