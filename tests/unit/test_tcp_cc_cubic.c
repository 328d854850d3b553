/* CUBIC (RFC 9438) through its ops, as the TCP core drives them: the integer cube root and
 * K against hand-computed values, W_cubic(t), the reduction and fast convergence on loss,
 * the concave-then-convex growth around W_max over simulated ACK clocks, the Reno-friendly
 * region, RTO and idle behaviour, and 32/64-bit limits (1 GB windows, clocks near 2^64).
 * Windows in bytes, a virtual microsecond clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/cc/tcp_cc.h"

#define MSS 1000u
#define SEG(n) ((uint32_t)(n) * MSS)
#define T0 1000000000ull	/* an arbitrary start of the virtual clock, µs */

static void cu_init(struct tcp_cc *cc)
{
	tcp_cc_init(cc, &tcp_cc_cubic_ops, MSS);
}

/* One ACK as the core reports it: the RTT sample (if any) first, then the ACK. */
static void cu_ack(struct tcp_cc *cc, uint32_t acked, uint32_t rtt_us, uint64_t now,
		   bool app_limited)
{
	struct tcp_cc_ack a = {
		.acked = acked,
		.in_flight = cc->cwnd,
		.rtt_us = rtt_us,
		.now_us = now,
		.app_limited = app_limited,
	};

	if (rtt_us != 0)
		cc->ops->on_rtt(cc, rtt_us, now);
	cc->ops->on_ack(cc, &a);
}

/* One round trip with a full window: cwnd / mss one-segment ACKs spread evenly over rtt_us,
 * each carrying an RTT sample of rtt_us. */
static void cu_round(struct tcp_cc *cc, uint64_t *now, uint32_t rtt_us)
{
	uint32_t n = cc->cwnd / cc->mss, i;
	uint64_t start = *now;

	for (i = 1; i <= n; i++) {
		*now = start + (uint64_t)rtt_us * i / n;
		cu_ack(cc, cc->mss, rtt_us, *now, false);
	}
}

/* Loss recovery as the core runs it: ssthresh from CUBIC, cwnd = ssthresh, then the full ACK
 * with about ssthresh in flight. */
static void cu_loss(struct tcp_cc *cc, uint32_t in_flight, uint64_t now)
{
	cc->ssthresh = cc->ops->ssthresh(cc, in_flight, now);
	cc->cwnd = cc->ssthresh;
	cc->ops->on_recovery_exit(cc, cc->ssthresh, now);
}

/* A connection in congestion avoidance at w segments that then loses a packet. */
static void cu_after_loss_at(struct tcp_cc *cc, uint32_t w)
{
	cu_init(cc);
	cc->cwnd = SEG(w);
	cc->ssthresh = SEG(w);
	cu_loss(cc, cc->cwnd, T0);
}

/* --- Integer cube root --- */

static void test_cubic_icbrt_small_values(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_icbrt64(0), 0);
	assert_int_equal(tcp_cc_icbrt64(1), 1);
	assert_int_equal(tcp_cc_icbrt64(7), 1);
	assert_int_equal(tcp_cc_icbrt64(8), 2);
	assert_int_equal(tcp_cc_icbrt64(26), 2);
	assert_int_equal(tcp_cc_icbrt64(27), 3);
	assert_int_equal(tcp_cc_icbrt64(1000000), 100);
}

static void test_cubic_icbrt_exact_at_cubes_and_neighbours(void **state)
{
	uint64_t y;

	(void)state;
	for (y = 2; y <= 2642245; y += 97) {
		assert_int_equal(tcp_cc_icbrt64(y * y * y), y);
		assert_int_equal(tcp_cc_icbrt64(y * y * y - 1), y - 1);
		assert_int_equal(tcp_cc_icbrt64(y * y * y + 1), y);
	}
}

static void test_cubic_icbrt_max_u64(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_icbrt64(UINT64_MAX), 2642245);
	assert_int_equal(tcp_cc_icbrt64(2642245ull * 2642245 * 2642245), 2642245);
	assert_int_equal(tcp_cc_icbrt64(2642245ull * 2642245 * 2642245 - 1), 2642244);
}

/* --- K (RFC 9438 §4.2 Figure 2) --- */

static void test_cubic_k_30_segments_below_wmax_is_4217_ms(void **state)
{
	(void)state;
	/* cbrt(30 / 0.4) = cbrt(75) = 4.2172 s */
	assert_int_equal(tcp_cc_cubic_k_ms(SEG(100), SEG(70), MSS), 4217);
}

static void test_cubic_k_depends_on_segments_not_bytes(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_k_ms(100 * 1460, 70 * 1460, 1460), 4217);
	assert_int_equal(tcp_cc_cubic_k_ms(100 * 9000, 70 * 9000, 9000), 4217);
}

static void test_cubic_k_one_segment_is_1357_ms(void **state)
{
	(void)state;
	/* cbrt(1 / 0.4) = 1.3572 s */
	assert_int_equal(tcp_cc_cubic_k_ms(SEG(11), SEG(10), MSS), 1357);
}

static void test_cubic_k_300_segments_is_9085_ms(void **state)
{
	(void)state;
	/* cbrt(300 / 0.4) = cbrt(750) = 9.0856 s */
	assert_int_equal(tcp_cc_cubic_k_ms(SEG(1000), SEG(700), MSS), 9085);
}

static void test_cubic_k_zero_when_epoch_not_below_wmax(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_k_ms(SEG(100), SEG(100), MSS), 0);
	assert_int_equal(tcp_cc_cubic_k_ms(SEG(100), SEG(150), MSS), 0);
	assert_int_equal(tcp_cc_cubic_k_ms(0, 0, MSS), 0);
}

static void test_cubic_k_1gb_window_is_80088_ms(void **state)
{
	(void)state;
	/* cbrt(3e8 / 1460 / 0.4) = cbrt(513698.63) = 80.088 s */
	assert_int_equal(tcp_cc_cubic_k_ms(1000000000, 700000000, 1460), 80088);
}

static void test_cubic_k_largest_difference_no_overflow(void **state)
{
	(void)state;
	/* cbrt((2^32 - 1) * 2.5e9) with a 1-byte MSS: the largest K there is */
	assert_int_equal(tcp_cc_cubic_k_ms(UINT32_MAX, 0, 1), 2206141);
	assert_int_equal(tcp_cc_cubic_k_ms(UINT32_MAX, 0, 0), 2206141);
}

/* --- W_cubic(t) (RFC 9438 §4.2 Figure 1) --- */

static void test_cubic_window_at_k_is_wmax(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_window(4217, 4217, SEG(100), MSS), SEG(100));
}

static void test_cubic_window_at_zero_is_cwnd_epoch(void **state)
{
	(void)state;
	/* 0.4 * 4.217^3 = 29.9965 segments below W_max, rounded down */
	assert_int_equal(tcp_cc_cubic_window(0, 4217, SEG(100), MSS), 70004);
}

static void test_cubic_window_one_second_from_k_is_c_segments_away(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_window(5217, 4217, SEG(100), MSS), SEG(100) + 400);
	assert_int_equal(tcp_cc_cubic_window(3217, 4217, SEG(100), MSS), SEG(100) - 400);
}

static void test_cubic_window_far_before_k_floors_at_zero(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_window(0, 2000000, SEG(1), MSS), 0);
}

static void test_cubic_window_huge_time_clamps_to_max(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_cubic_window(UINT64_MAX, 0, 1000000000, 1460), TCP_CC_CWND_MAX);
	assert_int_equal(tcp_cc_cubic_window(UINT64_MAX, 0, UINT32_MAX, 65535), TCP_CC_CWND_MAX);
	/* 0.4 * 100^3 segments of one byte, from W_max = 0 */
	assert_int_equal(tcp_cc_cubic_window(100000, 0, 0, 1), 400000);
}

/* --- Loss: ssthresh and W_max (RFC 9438 §4.6, §4.7) --- */

static void test_cubic_loss_ssthresh_is_0_7_flight(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(100);
	assert_int_equal(cc.ops->ssthresh(&cc, SEG(100), T0), SEG(70));
	assert_int_equal(cc.ops->ssthresh(&cc, SEG(50), T0), SEG(35));
}

static void test_cubic_loss_small_flight_ssthresh_two_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	assert_int_equal(cc.ops->ssthresh(&cc, SEG(2), T0), SEG(2));
	assert_int_equal(cc.ops->ssthresh(&cc, 0, T0), SEG(2));
}

static void test_cubic_loss_leaves_windows_to_the_core(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(100);
	cc.ssthresh = SEG(100);
	cc.ops->ssthresh(&cc, SEG(100), T0);
	assert_int_equal(cc.cwnd, SEG(100));
	assert_int_equal(cc.ssthresh, SEG(100));
}

static void test_cubic_window_after_loss_is_0_7_wmax(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	assert_int_equal(cc.cwnd, SEG(70));
	assert_int_equal(cc.ssthresh, SEG(70));
	assert_int_equal(cc.u.cubic.w_max, SEG(100));
	assert_int_equal(cc.u.cubic.cwnd_prior, SEG(100));
}

static void test_cubic_fast_convergence_lowers_wmax(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cc.cwnd = SEG(80);	/* lost again before regaining W_max */
	cu_loss(&cc, SEG(80), T0 + 1000000);
	assert_int_equal(cc.u.cubic.w_max, SEG(68));	/* 80 * (1 + 0.7) / 2 */
	assert_int_equal(cc.u.cubic.cwnd_prior, SEG(80));
	assert_int_equal(cc.cwnd, SEG(56));
}

static void test_cubic_no_fast_convergence_when_window_grew(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cc.cwnd = SEG(120);
	cu_loss(&cc, SEG(120), T0 + 1000000);
	assert_int_equal(cc.u.cubic.w_max, SEG(120));
	assert_int_equal(cc.cwnd, SEG(84));
}

static void test_cubic_stage_begins_at_first_ack_after_loss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	assert_false(cc.u.cubic.in_epoch);
	cu_ack(&cc, MSS, 0, T0 + 500, false);
	assert_true(cc.u.cubic.in_epoch);
	assert_int_equal(cc.u.cubic.epoch_us, T0 + 500);
	assert_int_equal(cc.u.cubic.cwnd_epoch, SEG(70));
	assert_int_equal(cc.u.cubic.k_ms, 4217);
	/* W_est starts at cwnd_epoch and took 9/17 * 1000 * 1000 / 70000 bytes from this ACK */
	assert_int_equal(cc.u.cubic.w_est, SEG(70) + 7);
}

static void test_cubic_first_stage_without_loss_has_k_zero(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(20);
	cc.ssthresh = SEG(20);
	cu_ack(&cc, MSS, 0, T0, false);
	assert_int_equal(cc.u.cubic.w_max, SEG(20));
	assert_int_equal(cc.u.cubic.k_ms, 0);
}

/* --- Growth around W_max (RFC 9438 §4.4, §4.5) --- */

#define CU_ROUNDS 181
#define CU_RTT_US 100000u

/* W_max 1000 segments, RTT 100 ms: K = 9.09 s = 91 rounds, and the Reno-friendly estimate
 * (+0.53 segment per round) stays far below the curve. */
static void cu_run_curve(uint32_t *w)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	cu_after_loss_at(&cc, 1000);
	w[0] = cc.cwnd;
	for (i = 1; i < CU_ROUNDS; i++) {
		cu_round(&cc, &now, CU_RTT_US);
		w[i] = cc.cwnd;
		assert_true(cc.cwnd >= w[i - 1]);
	}
}

static void test_cubic_growth_concave_below_wmax(void **state)
{
	uint32_t w[CU_ROUNDS];
	int i;

	(void)state;
	cu_run_curve(w);
	for (i = 0; i <= 85; i++)
		assert_true(w[i] < SEG(1000));
	/* increments shrink as the window nears W_max */
	assert_true(w[20] - w[0] > w[40] - w[20]);
	assert_true(w[40] - w[20] > w[60] - w[40]);
	assert_true(w[60] - w[40] > w[80] - w[60]);
	assert_true(w[1] - w[0] > SEG(3));
}

static void test_cubic_window_reaches_wmax_near_k(void **state)
{
	uint32_t w[CU_ROUNDS];

	(void)state;
	cu_run_curve(w);
	/* K = 90.9 rounds; the window aims one RTT ahead */
	assert_in_range(w[90], SEG(995), SEG(1005));
	assert_in_range(w[92], SEG(995), SEG(1005));
}

static void test_cubic_growth_slowest_on_the_plateau(void **state)
{
	uint32_t w[CU_ROUNDS];

	(void)state;
	cu_run_curve(w);
	assert_true(w[95] - w[85] < w[85] - w[75]);
	assert_true(w[95] - w[85] < w[105] - w[95]);
	assert_true(w[95] - w[85] < SEG(2));
}

static void test_cubic_growth_convex_above_wmax(void **state)
{
	uint32_t w[CU_ROUNDS];
	int i;

	(void)state;
	cu_run_curve(w);
	for (i = 100; i < CU_ROUNDS; i++)
		assert_true(w[i] > SEG(1000));
	/* increments grow as the window probes beyond W_max */
	assert_true(w[120] - w[100] < w[140] - w[120]);
	assert_true(w[140] - w[120] < w[160] - w[140]);
	assert_true(w[160] - w[140] < w[180] - w[160]);
}

static void test_cubic_growth_follows_curve_one_rtt_ahead(void **state)
{
	uint32_t w[CU_ROUNDS];
	int i;

	(void)state;
	cu_run_curve(w);
	/* after round i, t = i * RTT: cwnd tracks W_cubic(t + RTT) within 1 % */
	for (i = 10; i < CU_ROUNDS; i += 10) {
		uint32_t want = tcp_cc_cubic_window((uint64_t)(i + 1) * 100, 9085, SEG(1000), MSS);

		assert_in_range(w[i], want - want / 100, want + want / 100);
	}
}

static void test_cubic_target_uses_min_rtt(void **state)
{
	struct tcp_cc a, b;

	(void)state;
	cu_after_loss_at(&a, 100);
	cu_after_loss_at(&b, 100);
	a.ops->on_rtt(&a, 10000, T0);
	b.ops->on_rtt(&b, 200000, T0);
	b.ops->on_rtt(&b, 300000, T0);
	assert_int_equal(b.min_rtt_us, 200000);
	cu_ack(&a, MSS, 0, T0, false);
	cu_ack(&b, MSS, 0, T0, false);
	cu_ack(&a, SEG(10), 0, T0 + 1000000, false);
	cu_ack(&b, SEG(10), 0, T0 + 1000000, false);
	assert_true(b.cwnd > a.cwnd);
}

/* --- Reno-friendly region (RFC 9438 §4.3) --- */

static void test_cubic_reno_friendly_dominates_at_small_rtt(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	(void)state;
	cu_after_loss_at(&cc, 100);
	for (i = 0; i < 40; i++)
		cu_round(&cc, &now, 2000);
	/* W_est = 70 + 40 * 9/17 = 91.2 segments; W_cubic(80 ms) is only ~71.7 */
	assert_in_range(cc.cwnd, 90 * MSS, 92 * MSS + MSS / 2);
	assert_true(cc.cwnd > tcp_cc_cubic_window(80, cc.u.cubic.k_ms, SEG(100), MSS) + SEG(15));
	assert_int_equal(cc.cwnd, cc.u.cubic.w_est);
}

static void test_cubic_reno_friendly_alpha_one_after_cwnd_prior(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	(void)state;
	cu_after_loss_at(&cc, 100);
	for (i = 0; i < 100; i++)
		cu_round(&cc, &now, 2000);
	/* 9/17 per round up to 100 segments (56.7 rounds), then 1 per round: ~143 */
	assert_in_range(cc.cwnd, 141 * MSS, 145 * MSS);
}

static void test_cubic_curve_dominates_at_large_rtt(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	(void)state;
	cu_after_loss_at(&cc, 100);
	for (i = 0; i < 10; i++)
		cu_round(&cc, &now, 100000);
	/* W_est = 70 + 10 * 9/17 = 75.3; W_cubic(1.1 s) = 87.9 */
	assert_in_range(cc.u.cubic.w_est, 75 * MSS, 76 * MSS);
	assert_true(cc.cwnd > cc.u.cubic.w_est + SEG(10));
}

/* --- Slow start (RFC 9438 §4.10) --- */

static void test_cubic_slow_start_grows_like_reno(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;

	(void)state;
	cu_init(&cc);
	cu_round(&cc, &now, 10000);
	assert_int_equal(cc.cwnd, SEG(20));
	cu_ack(&cc, SEG(9), 0, now, false);
	assert_int_equal(cc.cwnd, SEG(22));	/* RFC 3465 L = 2 */
	assert_false(cc.u.cubic.in_epoch);
}

static void test_cubic_slow_start_stops_at_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.ssthresh = SEG(10) + 300;
	cu_ack(&cc, SEG(2), 0, T0, false);
	assert_true(cc.cwnd >= SEG(10) + 300);
	assert_true(cc.cwnd < SEG(11));
	assert_true(cc.u.cubic.in_epoch);
}

/* --- RTO (RFC 9438 §4.8) --- */

static void test_cubic_rto_loss_window_and_beta_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(100);
	cc.ops->on_rto(&cc, SEG(100), T0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, SEG(70));
}

static void test_cubic_rto_small_flight_ssthresh_two_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.ops->on_rto(&cc, MSS, T0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, SEG(2));
}

static void test_cubic_after_rto_stage_starts_with_k_zero(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(100);
	cc.ssthresh = SEG(100);
	cc.ops->on_rto(&cc, SEG(100), now);
	for (i = 0; i < 10 && !cc.u.cubic.in_epoch; i++)
		cu_round(&cc, &now, 10000);
	assert_true(cc.u.cubic.in_epoch);
	/* W_max and W_est start from cwnd_epoch, not from the window before the timeout */
	assert_int_equal(cc.u.cubic.cwnd_epoch, SEG(70));
	assert_int_equal(cc.u.cubic.w_max, SEG(70));
	assert_int_equal(cc.u.cubic.k_ms, 0);
	assert_int_equal(cc.u.cubic.cwnd_prior, SEG(100));
}

/* --- App-limited and idle (RFC 9438 §5.8, RFC 5681 §4.1) --- */

static void test_cubic_app_limited_no_growth(void **state)
{
	struct tcp_cc cc;
	uint32_t cwnd, w_est;
	int i;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cu_ack(&cc, MSS, 0, T0, false);
	cwnd = cc.cwnd;
	w_est = cc.u.cubic.w_est;
	for (i = 1; i <= 100; i++)
		cu_ack(&cc, MSS, 0, T0 + (uint64_t)i * 10000, true);
	assert_int_equal(cc.cwnd, cwnd);
	assert_int_equal(cc.u.cubic.w_est, w_est);
}

static void test_cubic_app_limited_time_not_counted(void **state)
{
	struct tcp_cc a, b;
	uint64_t ta = T0 + 3000000, tb = T0;
	int i;

	(void)state;
	cu_after_loss_at(&a, 100);
	cu_after_loss_at(&b, 100);
	cu_ack(&a, MSS, 0, T0, false);
	cu_ack(&b, MSS, 0, T0, false);
	for (i = 1; i <= 3; i++)
		cu_ack(&a, MSS, 0, T0 + (uint64_t)i * 1000000, true);
	for (i = 0; i < 10; i++) {
		cu_round(&a, &ta, 100000);
		cu_round(&b, &tb, 100000);
	}
	assert_int_equal(a.cwnd, b.cwnd);
	assert_int_equal(a.u.cubic.w_est, b.u.cubic.w_est);
}

static void test_cubic_short_idle_time_not_counted(void **state)
{
	struct tcp_cc a, b;
	uint64_t ta = T0 + 3000000, tb = T0;
	int i;

	(void)state;
	cu_after_loss_at(&a, 100);
	cu_after_loss_at(&b, 100);
	cu_ack(&a, MSS, 0, T0, false);
	cu_ack(&b, MSS, 0, T0, false);
	a.ops->on_idle(&a, 5000, 3000);	/* shorter than the RTO: no restart window */
	assert_int_equal(a.cwnd, b.cwnd);
	for (i = 0; i < 10; i++) {
		cu_round(&a, &ta, 100000);
		cu_round(&b, &tb, 100000);
	}
	assert_int_equal(a.cwnd, b.cwnd);
}

static void test_cubic_idle_longer_than_rto_restarts_and_ends_stage(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cu_ack(&cc, MSS, 0, T0, false);
	assert_true(cc.u.cubic.in_epoch);
	cc.ops->on_idle(&cc, 200, 1000);
	assert_int_equal(cc.cwnd, tcp_cc_initial_window(MSS));
	assert_int_equal(cc.ssthresh, SEG(70));
	assert_false(cc.u.cubic.in_epoch);
}

static void test_cubic_recovery_exit_small_flight_no_burst(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(100);
	cc.ssthresh = cc.ops->ssthresh(&cc, SEG(100), T0);
	cc.cwnd = cc.ssthresh;
	cc.ops->on_recovery_exit(&cc, SEG(5), T0);
	assert_int_equal(cc.cwnd, SEG(6));
}

/* --- Limits --- */

static void test_cubic_1gb_window_no_overflow(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	uint32_t prev;
	int i;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_cubic_ops, 1460);
	cc.cwnd = 1000000000;
	cc.ssthresh = 1000000000;
	cu_ack(&cc, 1460, 0, now, false);
	cu_loss(&cc, 1000000000, now);
	assert_int_equal(cc.cwnd, 700000000);
	assert_int_equal(cc.u.cubic.w_max, 1000000000);
	cu_ack(&cc, 1460, 0, now, false);
	assert_int_equal(cc.u.cubic.k_ms, 80088);
	for (i = 0; i < 400; i++) {
		prev = cc.cwnd;
		now += 10000000;	/* 10 s between stretch ACKs of a quarter window */
		cu_ack(&cc, cc.cwnd / 4, 0, now, false);
		assert_true(cc.cwnd >= prev);
		assert_true((uint64_t)cc.cwnd <= (uint64_t)prev + prev / 2);
		assert_true(cc.cwnd <= TCP_CC_CWND_MAX);
		if (now - T0 < 70000000)
			assert_true(cc.cwnd < 1000000000);
	}
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
}

static void test_cubic_clock_near_2_pow_64_no_overflow(void **state)
{
	struct tcp_cc cc;
	uint64_t now = UINT64_MAX / 2;
	int i;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cc.ops->on_rtt(&cc, UINT32_MAX, now);
	cu_ack(&cc, MSS, 0, now, false);
	for (i = 0; i < 60; i++) {
		uint32_t prev = cc.cwnd;

		now += UINT64_MAX / 128;
		cu_ack(&cc, UINT32_MAX, 0, now, false);
		assert_true((uint64_t)cc.cwnd <= (uint64_t)prev + prev / 2);
	}
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
	cc.ops->on_idle(&cc, UINT32_MAX, UINT32_MAX);
	cu_ack(&cc, MSS, 0, UINT64_MAX, true);
	cu_ack(&cc, MSS, 0, UINT64_MAX, false);
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
}

static void test_cubic_stretch_ack_beyond_window_grows_at_most_to_target(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_after_loss_at(&cc, 100);
	cu_ack(&cc, MSS, 0, T0, false);
	cu_ack(&cc, UINT32_MAX, 0, T0 + 1000000, false);
	/* no more than W_cubic(1 s) = 100 - 0.4 * 3.217^3 = 86.7 segments, W_est + 1 SMSS */
	assert_true(cc.cwnd <= tcp_cc_cubic_window(1000, 4217, SEG(100), MSS));
	assert_true(cc.u.cubic.w_est <= SEG(71));
}

static void test_cubic_enormous_idle_saturates_clock(void **state)
{
	struct tcp_cc cc;

	(void)state;
	cu_init(&cc);
	cc.cwnd = SEG(5);
	cc.ssthresh = SEG(5);
	cu_ack(&cc, MSS, 0, T0, false);
	cc.ops->on_idle(&cc, 1, UINT64_MAX);	/* cwnd already below IW: stays */
	assert_true(cc.u.cubic.in_epoch);
	assert_int_equal(cc.u.cubic.epoch_us, UINT64_MAX);
	cu_ack(&cc, MSS, 0, T0 + 1000000, true);
	cu_ack(&cc, MSS, 0, T0 + 2000000, false);
	assert_in_range(cc.cwnd, SEG(5), SEG(6));
}

static void test_cubic_window_at_max_stays_at_max(void **state)
{
	struct tcp_cc cc;
	uint64_t now = T0;
	int i;

	(void)state;
	cu_init(&cc);
	cc.cwnd = TCP_CC_CWND_MAX - 10;
	cc.ssthresh = cc.cwnd;
	for (i = 0; i < 100; i++) {
		now += 60000000;
		cu_ack(&cc, UINT32_MAX, 0, now, false);
		assert_true(cc.cwnd <= TCP_CC_CWND_MAX);
	}
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
	assert_true(cc.u.cubic.w_est <= TCP_CC_CWND_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cubic_icbrt_small_values),
		cmocka_unit_test(test_cubic_icbrt_exact_at_cubes_and_neighbours),
		cmocka_unit_test(test_cubic_icbrt_max_u64),
		cmocka_unit_test(test_cubic_k_30_segments_below_wmax_is_4217_ms),
		cmocka_unit_test(test_cubic_k_depends_on_segments_not_bytes),
		cmocka_unit_test(test_cubic_k_one_segment_is_1357_ms),
		cmocka_unit_test(test_cubic_k_300_segments_is_9085_ms),
		cmocka_unit_test(test_cubic_k_zero_when_epoch_not_below_wmax),
		cmocka_unit_test(test_cubic_k_1gb_window_is_80088_ms),
		cmocka_unit_test(test_cubic_k_largest_difference_no_overflow),
		cmocka_unit_test(test_cubic_window_at_k_is_wmax),
		cmocka_unit_test(test_cubic_window_at_zero_is_cwnd_epoch),
		cmocka_unit_test(test_cubic_window_one_second_from_k_is_c_segments_away),
		cmocka_unit_test(test_cubic_window_far_before_k_floors_at_zero),
		cmocka_unit_test(test_cubic_window_huge_time_clamps_to_max),
		cmocka_unit_test(test_cubic_loss_ssthresh_is_0_7_flight),
		cmocka_unit_test(test_cubic_loss_small_flight_ssthresh_two_mss),
		cmocka_unit_test(test_cubic_loss_leaves_windows_to_the_core),
		cmocka_unit_test(test_cubic_window_after_loss_is_0_7_wmax),
		cmocka_unit_test(test_cubic_fast_convergence_lowers_wmax),
		cmocka_unit_test(test_cubic_no_fast_convergence_when_window_grew),
		cmocka_unit_test(test_cubic_stage_begins_at_first_ack_after_loss),
		cmocka_unit_test(test_cubic_first_stage_without_loss_has_k_zero),
		cmocka_unit_test(test_cubic_growth_concave_below_wmax),
		cmocka_unit_test(test_cubic_window_reaches_wmax_near_k),
		cmocka_unit_test(test_cubic_growth_slowest_on_the_plateau),
		cmocka_unit_test(test_cubic_growth_convex_above_wmax),
		cmocka_unit_test(test_cubic_growth_follows_curve_one_rtt_ahead),
		cmocka_unit_test(test_cubic_target_uses_min_rtt),
		cmocka_unit_test(test_cubic_reno_friendly_dominates_at_small_rtt),
		cmocka_unit_test(test_cubic_reno_friendly_alpha_one_after_cwnd_prior),
		cmocka_unit_test(test_cubic_curve_dominates_at_large_rtt),
		cmocka_unit_test(test_cubic_slow_start_grows_like_reno),
		cmocka_unit_test(test_cubic_slow_start_stops_at_ssthresh),
		cmocka_unit_test(test_cubic_rto_loss_window_and_beta_ssthresh),
		cmocka_unit_test(test_cubic_rto_small_flight_ssthresh_two_mss),
		cmocka_unit_test(test_cubic_after_rto_stage_starts_with_k_zero),
		cmocka_unit_test(test_cubic_app_limited_no_growth),
		cmocka_unit_test(test_cubic_app_limited_time_not_counted),
		cmocka_unit_test(test_cubic_short_idle_time_not_counted),
		cmocka_unit_test(test_cubic_idle_longer_than_rto_restarts_and_ends_stage),
		cmocka_unit_test(test_cubic_recovery_exit_small_flight_no_burst),
		cmocka_unit_test(test_cubic_1gb_window_no_overflow),
		cmocka_unit_test(test_cubic_clock_near_2_pow_64_no_overflow),
		cmocka_unit_test(test_cubic_window_at_max_stays_at_max),
		cmocka_unit_test(test_cubic_stretch_ack_beyond_window_grows_at_most_to_target),
		cmocka_unit_test(test_cubic_enormous_idle_saturates_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
