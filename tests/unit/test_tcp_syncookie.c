/* SYN cookies (RFC 4987 §3.6) on a virtual millisecond clock: MSS table, round trips,
 * rejection of anything altered, the 3-period lifetime and its counter wrap, forged-cookie
 * resistance, and the options carried in TSval/TSecr (RFC 7323). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/tcp_syncookie.h"
#include "test_rand.h"

#define LADDR 0xc0000201u /* 192.0.2.1 */
#define RADDR 0xc6336402u /* 198.51.100.2 */
#define LPORT 443
#define RPORT 51234
#define PEER_ISN 0x89abcdefu
#define PERIOD TCP_SYNCOOKIE_PERIOD_MS
#define T0 (UINT64_C(1000) * PERIOD) /* the start of a period, well away from 0 */

static const struct tcp_secret secret = {
	.isn_key = { UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908) },
	.cookie_key = { UINT64_C(0x0123456789abcdef), UINT64_C(0xfedcba9876543210) },
};

static uint32_t make_at(uint16_t peer_mss, uint64_t now_ms, uint16_t *mss)
{
	return tcp_syncookie_make(&secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
		PEER_ISN, peer_mss,
				  now_ms, mss);
}

static int check_at(uint32_t cookie, uint64_t now_ms, uint16_t *mss)
{
	return tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR), RPORT,
		PEER_ISN, cookie,
				   now_ms, mss);
}

/* Makes a cookie for 1460 at made_ms; returns whether it checks at now_ms. */
static bool valid_after(uint64_t made_ms, uint64_t now_ms)
{
	uint16_t mss, got = 0;
	uint32_t c = make_at(1460, made_ms, &mss);

	return check_at(c, now_ms, &got) == 0 && got == 1460;
}

/* --- the MSS table --- */

static void test_syncookie_mss_table_is_strictly_ascending(void **state)
{
	int i;

	(void)state;
	assert_int_equal(tcp_syncookie_mss_table[0], 536);
	for (i = 1; i < TCP_SYNCOOKIE_MSS_COUNT; i++)
		assert_true(tcp_syncookie_mss_table[i] > tcp_syncookie_mss_table[i - 1]);
}

static void test_syncookie_mss_pick_table_entry_returns_itself(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < TCP_SYNCOOKIE_MSS_COUNT; i++)
		assert_int_equal(tcp_syncookie_mss_pick(tcp_syncookie_mss_table[i]),
				 tcp_syncookie_mss_table[i]);
}

static void test_syncookie_mss_pick_between_entries_rounds_down(void **state)
{
	int i;

	(void)state;
	for (i = 0; i + 1 < TCP_SYNCOOKIE_MSS_COUNT; i++) {
		uint16_t lo = tcp_syncookie_mss_table[i], hi = tcp_syncookie_mss_table[i + 1];

		assert_int_equal(tcp_syncookie_mss_pick((uint16_t)(lo + 1)), lo);
		assert_int_equal(tcp_syncookie_mss_pick((uint16_t)(hi - 1)), lo);
	}
	assert_int_equal(tcp_syncookie_mss_pick(1459), 1452);
	assert_int_equal(tcp_syncookie_mss_pick(1500), 1460);
}

static void test_syncookie_mss_pick_below_smallest_returns_536(void **state)
{
	(void)state;
	assert_int_equal(tcp_syncookie_mss_pick(535), 536);
	assert_int_equal(tcp_syncookie_mss_pick(88), 536);
	assert_int_equal(tcp_syncookie_mss_pick(1), 536);
	assert_int_equal(tcp_syncookie_mss_pick(0), 536);
}

static void test_syncookie_mss_pick_above_largest_returns_largest(void **state)
{
	(void)state;
	assert_int_equal(tcp_syncookie_mss_pick(9000), 8960);
	assert_int_equal(tcp_syncookie_mss_pick(65535), 8960);
}

/* --- round trips --- */

static void test_syncookie_round_trip_every_table_entry(void **state)
{
	int i;

	(void)state;
	for (i = 0; i < TCP_SYNCOOKIE_MSS_COUNT; i++) {
		uint16_t m = tcp_syncookie_mss_table[i], made = 0, got = 0;
		uint32_t c = make_at(m, T0 + 1234, &made);

		assert_int_equal(made, m);
		assert_int_equal(check_at(c, T0 + 5000, &got), 0);
		assert_int_equal(got, m);
	}
}

static void test_syncookie_round_trip_peer_mss_between_entries(void **state)
{
	int i;

	(void)state;
	for (i = 0; i + 1 < TCP_SYNCOOKIE_MSS_COUNT; i++) {
		uint16_t lo = tcp_syncookie_mss_table[i], hi = tcp_syncookie_mss_table[i + 1];
		uint16_t peer = (uint16_t)(lo + (hi - lo) / 2), made = 0, got = 0;
		uint32_t c = make_at(peer, T0, &made);

		assert_int_equal(made, lo);
		assert_int_equal(check_at(c, T0 + 1, &got), 0);
		assert_int_equal(got, lo);
	}
}

static void test_syncookie_round_trip_peer_mss_below_smallest(void **state)
{
	uint16_t made = 0, got = 0;
	uint32_t c = make_at(200, T0, &made);

	(void)state;
	assert_int_equal(made, 536);
	assert_int_equal(check_at(c, T0, &got), 0);
	assert_int_equal(got, 536);
}

static void test_syncookie_round_trip_random_tuples_and_times(void **state)
{
	uint32_t seed = 0xc00c1e5u;
	int i;

	(void)state;
	for (i = 0; i < 20000; i++) {
		uint32_t la = rnd(&seed), ra = rnd(&seed), isn = rnd(&seed);
		uint16_t lp = (uint16_t)rnd(&seed), rp = (uint16_t)rnd(&seed);
		uint16_t peer = (uint16_t)rnd(&seed), made = 0, got = 0;
		uint64_t t = (uint64_t)rnd(&seed) << 16 | (rnd(&seed) & 0xffff);
		uint64_t later = t + rnd(&seed) % (2 * PERIOD); /* always inside the window */
		uint32_t c = tcp_syncookie_make(&secret, INET_ADDR_V4(la), lp, INET_ADDR_V4(ra), rp,
			isn, peer, t, &made);

		assert_int_equal(made, tcp_syncookie_mss_pick(peer));
		assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(la), lp,
			INET_ADDR_V4(ra), rp, isn, c, later, &got),
				 0);
		assert_int_equal(got, made);
	}
}

static void test_syncookie_same_inputs_give_same_cookie(void **state)
{
	uint16_t m1, m2;

	(void)state;
	assert_int_equal(make_at(1460, T0 + 10, &m1), make_at(1460, T0 + 63000, &m2));
}

static void test_syncookie_next_period_gives_different_cookie(void **state)
{
	uint16_t m;

	(void)state;
	assert_true(make_at(1460, T0, &m) != make_at(1460, T0 + PERIOD, &m));
}

static void test_syncookie_isn_key_is_not_used(void **state)
{
	struct tcp_secret s = secret;
	uint16_t m, got = 0;
	uint32_t c = make_at(1440, T0, &m);

	(void)state;
	s.isn_key.k1 ^= 0x8000;
	assert_int_equal(tcp_syncookie_check(&s, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR),
		RPORT, PEER_ISN, c, T0,
					     &got), 0);
	assert_int_equal(got, 1440);
}

/* --- rejection of anything altered --- */

static void test_syncookie_wrong_laddr_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR + 1), LPORT,
		INET_ADDR_V4(RADDR), RPORT, PEER_ISN,
					     c, T0, &got), -EINVAL);
}

static void test_syncookie_wrong_lport_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR), LPORT + 1,
		INET_ADDR_V4(RADDR), RPORT, PEER_ISN,
					     c, T0, &got), -EINVAL);
}

static void test_syncookie_wrong_raddr_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR), LPORT,
		INET_ADDR_V4(RADDR ^ 0x100u), RPORT,
					     PEER_ISN, c, T0, &got), -EINVAL);
}

static void test_syncookie_wrong_rport_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR), LPORT,
		INET_ADDR_V4(RADDR), RPORT - 1, PEER_ISN,
					     c, T0, &got), -EINVAL);
}

static void test_syncookie_reversed_tuple_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(RADDR), RPORT,
		INET_ADDR_V4(LADDR), LPORT, PEER_ISN, c,
					     T0, &got), -EINVAL);
}

static void test_syncookie_wrong_peer_isn_rejected(void **state)
{
	const uint32_t deltas[] = { 1, 0xffffffffu, 2, 0x100, 0x80000000u, 0x10000 };
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++)
		assert_int_equal(tcp_syncookie_check(&secret, INET_ADDR_V4(LADDR), LPORT,
			INET_ADDR_V4(RADDR), RPORT,
						     PEER_ISN + deltas[i], c, T0, &got), -EINVAL);
}

static void test_syncookie_every_single_bit_flip_rejected(void **state)
{
	int i, bit;

	(void)state;
	for (i = 0; i < TCP_SYNCOOKIE_MSS_COUNT; i++) {
		uint16_t m;
		uint32_t c = make_at(tcp_syncookie_mss_table[i], T0 + 777, &m);

		for (bit = 0; bit < 32; bit++) {
			uint16_t got = 0xbeef;

			assert_int_equal(check_at(c ^ (1u << bit), T0 + 1000, &got), -EINVAL);
			assert_int_equal(got, 0xbeef); /* untouched on failure */
		}
	}
}

static void test_syncookie_every_change_of_low_5_bits_rejected(void **state)
{
	uint16_t m, got = 0;
	uint32_t c = make_at(536, T0, &m), x;

	(void)state;
	/* The low bits carry the MSS index and period: no other value of them may pass, so a
	 * peer cannot raise its MSS or extend the cookie's life. */
	for (x = 1; x < 32; x++)
		assert_int_equal(check_at(c ^ x, T0 + PERIOD, &got), -EINVAL);
}

static void test_syncookie_other_cookie_key_rejected(void **state)
{
	struct tcp_secret s = secret;
	uint16_t m, got = 0;
	uint32_t c = make_at(1460, T0, &m);

	(void)state;
	s.cookie_key.k0 ^= 1;
	assert_int_equal(tcp_syncookie_check(&s, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR),
		RPORT, PEER_ISN, c, T0,
					     &got), -EINVAL);
}

static void test_syncookie_zero_and_all_ones_cookies_rejected(void **state)
{
	uint16_t got = 0;

	(void)state;
	assert_int_equal(check_at(0, T0, &got), -EINVAL);
	assert_int_equal(check_at(0xffffffffu, T0, &got), -EINVAL);
}

/* --- lifetime on the virtual clock --- */

static void test_syncookie_accepted_in_same_period(void **state)
{
	(void)state;
	assert_true(valid_after(T0, T0));
	assert_true(valid_after(T0, T0 + PERIOD - 1));
}

static void test_syncookie_accepted_in_next_two_periods(void **state)
{
	(void)state;
	assert_true(valid_after(T0, T0 + PERIOD));
	assert_true(valid_after(T0, T0 + 2 * PERIOD));
	assert_true(valid_after(T0, T0 + 3 * PERIOD - 1));
}

static void test_syncookie_made_at_period_start_expires_after_192s(void **state)
{
	(void)state;
	assert_true(valid_after(T0, T0 + 192000 - 1));
	assert_false(valid_after(T0, T0 + 192000));
}

static void test_syncookie_made_at_period_end_expires_after_128s(void **state)
{
	const uint64_t made = T0 + PERIOD - 1;

	(void)state;
	assert_true(valid_after(made, made + 128000));
	assert_false(valid_after(made, made + 128000 + 1));
}

static void test_syncookie_rejected_long_after_expiry(void **state)
{
	uint64_t k;

	(void)state;
	/* Ages 4, 5, 6 ... alias to 0, 1, 2 in the 2 period bits; the MAC must still refuse. */
	for (k = 3; k < 40; k++)
		assert_false(valid_after(T0 + 5, T0 + 5 + k * PERIOD));
}

static void test_syncookie_validity_sweep_matches_period_age(void **state)
{
	uint64_t made, now;

	(void)state;
	for (made = T0; made < T0 + 2 * PERIOD; made += 7001)
		for (now = made; now < made + 5 * PERIOD; now += 997) {
			uint64_t age = now / PERIOD - made / PERIOD;

			assert_int_equal(valid_after(made, now), age <= TCP_SYNCOOKIE_MAX_AGE);
		}
}

static void test_syncookie_from_future_period_rejected(void **state)
{
	(void)state;
	/* The clock went back: a cookie from 1, 2 or 3 periods ahead is not accepted. */
	assert_false(valid_after(T0 + PERIOD, T0));
	assert_false(valid_after(T0 + 2 * PERIOD, T0));
	assert_false(valid_after(T0 + 3 * PERIOD, T0));
}

static void test_syncookie_period_low_bits_wrap_3_to_0_accepted(void **state)
{
	const uint64_t p3 = T0 + 3 * PERIOD; /* T0 is a multiple of 4 periods: low bits 3 */

	(void)state;
	assert_true((p3 / PERIOD & 3) == 3);
	assert_true(valid_after(p3, p3 + PERIOD));
	assert_true(valid_after(p3, p3 + 2 * PERIOD));
	assert_false(valid_after(p3, p3 + 3 * PERIOD));
}

static void test_syncookie_counter_wrap_accepted_across_2_32_periods(void **state)
{
	/* The 32-bit period counter goes from 0xffffffff to 0 here. */
	const uint64_t wrap = (UINT64_C(1) << 32) * PERIOD;

	(void)state;
	assert_true(valid_after(wrap - PERIOD, wrap - 1));
	assert_true(valid_after(wrap - PERIOD, wrap));
	assert_true(valid_after(wrap - PERIOD, wrap + PERIOD));
	assert_false(valid_after(wrap - PERIOD, wrap + 2 * PERIOD));
	assert_true(valid_after(wrap - 2 * PERIOD, wrap));
	assert_false(valid_after(wrap - 2 * PERIOD, wrap + PERIOD));
}

static void test_syncookie_clock_at_zero_round_trips(void **state)
{
	(void)state;
	assert_true(valid_after(0, 0));
	assert_true(valid_after(0, 3 * PERIOD - 1));
	assert_false(valid_after(0, 3 * PERIOD));
}

/* --- forgery --- */

static void test_syncookie_100k_random_cookies_none_accepted(void **state)
{
	uint32_t seed = 0xf0f0a5a5u;
	int i, accepted = 0;

	(void)state;
	/* Per guess 3/4 * 2^-27 (27 MAC bits, 3 of 4 period values): 100k guesses let in
	 * 0.00056 on average, so with this fixed seed none. */
	for (i = 0; i < 100000; i++) {
		uint16_t got;

		accepted += check_at(rnd(&seed), T0 + 2 * PERIOD, &got) == 0;
	}
	assert_int_equal(accepted, 0);
}

static void test_syncookie_cookie_for_other_peer_isn_never_accepted(void **state)
{
	uint32_t seed = 0x600d5eedu;
	int i, accepted = 0;

	(void)state;
	/* Cookies made for other SYNs of the same tuple: an attacker who sees SYN-ACKs for its
	 * own SYNs still cannot complete somebody else's. */
	for (i = 0; i < 20000; i++) {
		uint16_t m, got;
		uint32_t isn = rnd(&seed);
		uint32_t c = tcp_syncookie_make(&secret, INET_ADDR_V4(LADDR), LPORT,
			INET_ADDR_V4(RADDR), RPORT, isn, 1460,
						T0, &m);

		if (isn == PEER_ISN)
			continue;
		accepted += check_at(c, T0, &got) == 0;
	}
	assert_int_equal(accepted, 0);
}

static void test_syncookie_low_bits_look_random_across_tuples(void **state)
{
	unsigned seen[32] = { 0 };
	uint32_t p;
	int v, distinct = 0;

	(void)state;
	/* Same MSS and period, different ports: the masked low 5 bits take all values. */
	for (p = 1000; p < 3000; p++) {
		uint16_t m;

		seen[tcp_syncookie_make(&secret, INET_ADDR_V4(LADDR), LPORT, INET_ADDR_V4(RADDR),
			(uint16_t)p, PEER_ISN, 1460,
					T0, &m) & 31]++;
	}
	for (v = 0; v < 32; v++) {
		distinct += seen[v] != 0;
		assert_true(seen[v] < 2000 / 32 * 2);
	}
	assert_int_equal(distinct, 32);
}

/* --- options in the timestamps --- */

static void test_syncookie_ts_round_trip_all_options_wscale_0_to_14(void **state)
{
	const uint32_t clocks[] = { 0, 1, 63, 64, 1000000, 0x7fffffffu, 0x80000000u,
				    0xffffffc0u, 0xffffffffu };
	size_t ci;
	int sack, ecn, ws_ok, ws;

	(void)state;
	for (ci = 0; ci < sizeof(clocks) / sizeof(clocks[0]); ci++)
		for (sack = 0; sack < 2; sack++)
			for (ecn = 0; ecn < 2; ecn++)
				for (ws_ok = 0; ws_ok < 2; ws_ok++)
					for (ws = 0; ws <= 14; ws++) {
						struct tcp_syncookie_opts in = {
							.sack_ok = sack, .ecn_ok = ecn,
							.wscale_ok = ws_ok, .wscale = (uint8_t)ws,
							.ts_ok = true,
						};
						struct tcp_syncookie_opts out = { .mss = 1234 };

						tcp_syncookie_tsecr_decode(
							tcp_syncookie_tsval(&in, clocks[ci]), &out);
						assert_int_equal(out.sack_ok, sack);
						assert_int_equal(out.ecn_ok, ecn);
						assert_int_equal(out.wscale_ok, ws_ok);
						assert_int_equal(out.wscale, ws_ok ? ws : 0);
						assert_true(out.ts_ok);
						assert_int_equal(out.mss, 1234);
					}
}

static void test_syncookie_ts_wscale_above_14_sent_as_14(void **state)
{
	struct tcp_syncookie_opts in = { .wscale_ok = true, .wscale = 15 }, out;

	(void)state;
	tcp_syncookie_tsecr_decode(tcp_syncookie_tsval(&in, 5000), &out);
	assert_true(out.wscale_ok);
	assert_int_equal(out.wscale, 14);
	in.wscale = 255;
	tcp_syncookie_tsecr_decode(tcp_syncookie_tsval(&in, 5000), &out);
	assert_int_equal(out.wscale, 14);
}

static void test_syncookie_ts_tsval_never_after_now_and_within_span(void **state)
{
	uint32_t seed = 0x7357a11u;
	int i;

	(void)state;
	for (i = 0; i < 100000; i++) {
		uint32_t now = rnd(&seed), r = rnd(&seed);
		struct tcp_syncookie_opts o = {
			.sack_ok = r & 1, .ecn_ok = r >> 1 & 1, .wscale_ok = r >> 2 & 1,
			.wscale = (uint8_t)(r >> 3 & 15),
		};
		uint32_t back = now - tcp_syncookie_tsval(&o, now);

		assert_true(back <= TCP_SYNCOOKIE_TS_MASK);
	}
}

static void test_syncookie_ts_tsval_near_zero_wraps_backwards(void **state)
{
	struct tcp_syncookie_opts o = { .sack_ok = true, .wscale_ok = true, .wscale = 7 };
	uint32_t tsval = tcp_syncookie_tsval(&o, 3);

	(void)state;
	/* Bits 0x17 > 3: the span before, modulo 2^32. */
	assert_int_equal(tsval, 0xffffffc0u | 0x17);
	assert_int_equal((uint32_t)(3 - tsval), 3 + 0x40 - 0x17);
}

static void test_syncookie_ts_tsval_with_matching_low_bits_is_now(void **state)
{
	struct tcp_syncookie_opts o = { .sack_ok = true, .ecn_ok = true };
	uint32_t now = 0x12345600u | 0x3f; /* no wscale (15), SACK, ECN */

	(void)state;
	assert_int_equal(tcp_syncookie_tsval(&o, now), now);
}

static void test_syncookie_ts_tsval_keeps_high_bits_of_clock(void **state)
{
	struct tcp_syncookie_opts o = { .wscale_ok = true, .wscale = 0 };

	(void)state;
	assert_int_equal(tcp_syncookie_tsval(&o, 0xabcdef7fu), 0xabcdef40u);
	assert_int_equal(tcp_syncookie_tsval(&o, 0xabcdef40u), 0xabcdef40u);
}

static void test_syncookie_ts_later_clock_values_stay_monotonic(void **state)
{
	struct tcp_syncookie_opts o = { .sack_ok = true, .ecn_ok = true, .wscale_ok = true,
					.wscale = 14 };
	uint32_t now = 1000, tsval = tcp_syncookie_tsval(&o, now), t;

	(void)state;
	/* RFC 7323 §5.4: whatever we send next, from the real clock, is not before this TSval. */
	for (t = now; t < now + 200; t++)
		assert_true((int32_t)(t - tsval) >= 0);
}

static void test_syncookie_ts_decode_no_wscale_gives_zero_shift(void **state)
{
	struct tcp_syncookie_opts out = { .wscale = 9 };

	(void)state;
	tcp_syncookie_tsecr_decode(0x0000000fu, &out);
	assert_false(out.wscale_ok);
	assert_int_equal(out.wscale, 0);
	assert_false(out.sack_ok);
	assert_false(out.ecn_ok);
	assert_true(out.ts_ok);
}

static void test_syncookie_ts_decode_ignores_clock_bits(void **state)
{
	struct tcp_syncookie_opts a, b;

	(void)state;
	tcp_syncookie_tsecr_decode(0x00000015u, &a);
	tcp_syncookie_tsecr_decode(0xdeadbec0u | 0x15, &b);
	assert_true(a.sack_ok && b.sack_ok);
	assert_true(a.wscale_ok && b.wscale_ok);
	assert_int_equal(a.wscale, 5);
	assert_int_equal(b.wscale, 5);
	assert_false(a.ecn_ok || b.ecn_ok);
}

static void test_syncookie_ts_every_6_bit_pattern_decodes_to_valid_options(void **state)
{
	uint32_t v;

	(void)state;
	for (v = 0; v <= TCP_SYNCOOKIE_TS_MASK; v++) {
		struct tcp_syncookie_opts o;

		tcp_syncookie_tsecr_decode(v, &o);
		assert_true(o.wscale <= 14);
		assert_true(o.wscale_ok || o.wscale == 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syncookie_mss_table_is_strictly_ascending),
		cmocka_unit_test(test_syncookie_mss_pick_table_entry_returns_itself),
		cmocka_unit_test(test_syncookie_mss_pick_between_entries_rounds_down),
		cmocka_unit_test(test_syncookie_mss_pick_below_smallest_returns_536),
		cmocka_unit_test(test_syncookie_mss_pick_above_largest_returns_largest),
		cmocka_unit_test(test_syncookie_round_trip_every_table_entry),
		cmocka_unit_test(test_syncookie_round_trip_peer_mss_between_entries),
		cmocka_unit_test(test_syncookie_round_trip_peer_mss_below_smallest),
		cmocka_unit_test(test_syncookie_round_trip_random_tuples_and_times),
		cmocka_unit_test(test_syncookie_same_inputs_give_same_cookie),
		cmocka_unit_test(test_syncookie_next_period_gives_different_cookie),
		cmocka_unit_test(test_syncookie_isn_key_is_not_used),
		cmocka_unit_test(test_syncookie_wrong_laddr_rejected),
		cmocka_unit_test(test_syncookie_wrong_lport_rejected),
		cmocka_unit_test(test_syncookie_wrong_raddr_rejected),
		cmocka_unit_test(test_syncookie_wrong_rport_rejected),
		cmocka_unit_test(test_syncookie_reversed_tuple_rejected),
		cmocka_unit_test(test_syncookie_wrong_peer_isn_rejected),
		cmocka_unit_test(test_syncookie_every_single_bit_flip_rejected),
		cmocka_unit_test(test_syncookie_every_change_of_low_5_bits_rejected),
		cmocka_unit_test(test_syncookie_other_cookie_key_rejected),
		cmocka_unit_test(test_syncookie_zero_and_all_ones_cookies_rejected),
		cmocka_unit_test(test_syncookie_accepted_in_same_period),
		cmocka_unit_test(test_syncookie_accepted_in_next_two_periods),
		cmocka_unit_test(test_syncookie_made_at_period_start_expires_after_192s),
		cmocka_unit_test(test_syncookie_made_at_period_end_expires_after_128s),
		cmocka_unit_test(test_syncookie_rejected_long_after_expiry),
		cmocka_unit_test(test_syncookie_validity_sweep_matches_period_age),
		cmocka_unit_test(test_syncookie_from_future_period_rejected),
		cmocka_unit_test(test_syncookie_period_low_bits_wrap_3_to_0_accepted),
		cmocka_unit_test(test_syncookie_counter_wrap_accepted_across_2_32_periods),
		cmocka_unit_test(test_syncookie_clock_at_zero_round_trips),
		cmocka_unit_test(test_syncookie_100k_random_cookies_none_accepted),
		cmocka_unit_test(test_syncookie_cookie_for_other_peer_isn_never_accepted),
		cmocka_unit_test(test_syncookie_low_bits_look_random_across_tuples),
		cmocka_unit_test(test_syncookie_ts_round_trip_all_options_wscale_0_to_14),
		cmocka_unit_test(test_syncookie_ts_wscale_above_14_sent_as_14),
		cmocka_unit_test(test_syncookie_ts_tsval_never_after_now_and_within_span),
		cmocka_unit_test(test_syncookie_ts_tsval_near_zero_wraps_backwards),
		cmocka_unit_test(test_syncookie_ts_tsval_with_matching_low_bits_is_now),
		cmocka_unit_test(test_syncookie_ts_tsval_keeps_high_bits_of_clock),
		cmocka_unit_test(test_syncookie_ts_later_clock_values_stay_monotonic),
		cmocka_unit_test(test_syncookie_ts_decode_no_wscale_gives_zero_shift),
		cmocka_unit_test(test_syncookie_ts_decode_ignores_clock_bits),
		cmocka_unit_test(test_syncookie_ts_every_6_bit_pattern_decodes_to_valid_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
