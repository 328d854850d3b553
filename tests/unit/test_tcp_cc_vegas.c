/* Vegas (Brakmo & Peterson 1995) through its ops, as the TCP core drives them, over simulated
 * round trips on a virtual clock: BaseRTT is the minimum sample; once per round, with
 * diff = cwnd * (RTT - BaseRTT) / RTT in segments, the window grows below alpha = 2, shrinks
 * above beta = 4 and holds in between; slow start ends above gamma = 1; with fewer than three
 * samples a round it behaves exactly as Reno. Windows in bytes. */
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
#define BASE_US 100000u

static void ve_init(struct tcp_cc *cc)
{
	tcp_cc_init(cc, &tcp_cc_vegas_ops, MSS);
}

/* A connection in congestion avoidance at w segments. */
static void ve_init_ca(struct tcp_cc *cc, uint32_t w)
{
	ve_init(cc);
	cc->cwnd = SEG(w);
	cc->ssthresh = SEG(w);
}

/* One ACK as the core reports it: the RTT sample (0 = none) first, then the ACK. The flight
 * is a full window, as under a steady ACK clock. */
static void ve_ack(struct tcp_cc *cc, uint32_t acked, uint32_t rtt_us, uint64_t now,
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

/* One round trip: a window of one-segment ACKs, every `every`-th carrying an RTT sample of
 * rtt_us (every = 0: none). */
static void ve_round_sampled(struct tcp_cc *cc, uint64_t *now, uint32_t rtt_us,
			     uint32_t every, bool app_limited)
{
	uint32_t n = cc->cwnd / cc->mss, i;

	for (i = 1; i <= n; i++) {
		bool sample = every != 0 && i % every == 0;

		*now += rtt_us / n;
		ve_ack(cc, MSS, sample ? rtt_us : 0, *now, app_limited);
	}
}

static void ve_round(struct tcp_cc *cc, uint64_t *now, uint32_t rtt_us)
{
	ve_round_sampled(cc, now, rtt_us, 1, false);
}

/* Rounds at BaseRTT: the path's floor is learnt and Vegas is active. */
static void ve_learn_base(struct tcp_cc *cc, uint64_t *now)
{
	ve_round(cc, now, BASE_US);
	ve_round(cc, now, BASE_US);
	assert_true(cc->u.vegas.active);
}

/* A round at a new RTT: its first ACK still closes the previous round (a Vegas round ends
 * with the first ACK for data sent after it began), so the new RTT counts from the next. */
static void ve_switch_rtt(struct tcp_cc *cc, uint64_t *now, uint32_t rtt_us)
{
	ve_round(cc, now, rtt_us);
}

/* --- BaseRTT --- */

static void test_vegas_base_rtt_is_minimum_sample(void **state)
{
	struct tcp_cc cc;

	(void)state;
	ve_init(&cc);
	cc.ops->on_rtt(&cc, 120000, 0);
	cc.ops->on_rtt(&cc, 90000, 0);
	cc.ops->on_rtt(&cc, 150000, 0);
	assert_int_equal(cc.min_rtt_us, 90000);
}

static void test_vegas_base_rtt_never_increases(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	ve_round(&cc, &now, 3 * BASE_US);
	assert_int_equal(cc.min_rtt_us, BASE_US);
}

static void test_vegas_round_uses_its_smallest_sample(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before, i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	before = cc.cwnd;
	/* The first ACK closes the round of BaseRTT samples (grow). The next round has samples
	 * of 150 ms (diff 7.7: would shrink) but one of 101 ms (diff 0.2: grow). */
	for (i = 0; i < 25; i++)
		ve_ack(&cc, MSS, i == 3 ? 101000 : 150000, now += 1000, false);
	assert_int_equal(cc.cwnd, before + SEG(2));
}

/* --- Congestion avoidance: alpha, beta --- */

static void test_vegas_ca_diff_below_alpha_grows_one_mss_per_round(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;
	int i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	ve_switch_rtt(&cc, &now, 105000);
	before = cc.cwnd;
	/* 105 ms: diff = 23 * 5 / 105 = 1.1 segments < alpha */
	for (i = 0; i < 3; i++)
		ve_round(&cc, &now, 105000);
	assert_int_equal(cc.cwnd, before + SEG(3));
}

static void test_vegas_ca_grows_once_per_round_not_per_ack(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before, steps = 0, last, i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	before = cc.cwnd;
	last = cc.cwnd;
	for (i = 0; i < 10 * 25; i++) {
		ve_ack(&cc, MSS, BASE_US, now += 4000, false);
		if (cc.cwnd != last) {
			assert_int_equal(cc.cwnd, last + MSS);
			steps++;
			last = cc.cwnd;
		}
	}
	/* about 250 ACKs / 22..30 per round */
	assert_in_range(steps, 8, 11);
	assert_int_equal(cc.cwnd, before + SEG(steps));
}

static void test_vegas_ca_diff_above_beta_shrinks_one_mss_per_round(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;
	int i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	ve_switch_rtt(&cc, &now, 130000);
	before = cc.cwnd;
	/* 130 ms: diff = 23 * 30 / 130 = 5.3 segments > beta */
	for (i = 0; i < 3; i++)
		ve_round(&cc, &now, 130000);
	assert_int_equal(cc.cwnd, before - SEG(3));
}

static void test_vegas_ca_diff_between_alpha_and_beta_holds(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;
	int i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	ve_switch_rtt(&cc, &now, 115000);
	before = cc.cwnd;
	/* 115 ms: diff = 23 * 15 / 115 = 3 segments */
	for (i = 0; i < 5; i++)
		ve_round(&cc, &now, 115000);
	assert_int_equal(cc.cwnd, before);
}

static void test_vegas_ca_settles_where_diff_is_between_thresholds(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	int i;

	(void)state;
	ve_init_ca(&cc, 40);
	ve_learn_base(&cc, &now);
	/* queueing delay 30 %: diff in [2, 4] for cwnd in [8.7, 17.3] segments */
	for (i = 0; i < 40; i++)
		ve_round(&cc, &now, 130000);
	assert_in_range(cc.cwnd, SEG(9), SEG(17));
	for (i = 0; i < 5; i++) {
		uint32_t w = cc.cwnd;

		ve_round(&cc, &now, 130000);
		assert_int_equal(cc.cwnd, w);
	}
}

static void test_vegas_ca_shrink_stays_in_congestion_avoidance(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	ve_round(&cc, &now, 200000);
	assert_true(cc.ssthresh <= cc.cwnd);
	assert_true(cc.ssthresh >= SEG(2));
}

static void test_vegas_ca_huge_delay_shrinks_to_beta_segments(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	int i;

	(void)state;
	ve_init_ca(&cc, 4);
	ve_learn_base(&cc, &now);
	/* diff = 0.9 cwnd: above beta down to 4 segments, and no further (diff < cwnd, so
	 * Vegas alone never takes the window below beta) */
	for (i = 0; i < 20; i++)
		ve_round(&cc, &now, 10 * BASE_US);
	assert_int_equal(cc.cwnd, SEG(4));
	assert_true(cc.ssthresh <= cc.cwnd);
}

/* --- Slow start: gamma --- */

static void test_vegas_slow_start_exits_when_diff_above_gamma(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t i, before;

	(void)state;
	ve_init(&cc);
	ve_learn_base(&cc, &now);
	assert_int_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
	before = cc.cwnd;
	/* 150 ms: diff = cwnd / 3, far above one segment */
	for (i = 0; i < 3 && cc.ssthresh == TCP_CC_SSTHRESH_INF; i++)
		ve_round(&cc, &now, 150000);
	assert_int_not_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
	assert_int_equal(cc.ssthresh, cc.cwnd);
	/* cut to what the path holds at BaseRTT plus one segment, never grown */
	assert_true(cc.cwnd <= before * 2);
	assert_true(cc.cwnd >= SEG(2));
}

static void test_vegas_slow_start_exit_window_is_base_rtt_fit(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t i, w = 0;

	(void)state;
	ve_init(&cc);
	ve_learn_base(&cc, &now);
	for (i = 0; i < 30 && cc.ssthresh == TCP_CC_SSTHRESH_INF; i++) {
		uint32_t n = cc.cwnd / MSS, k;

		for (k = 1; k <= n && cc.ssthresh == TCP_CC_SSTHRESH_INF; k++) {
			w = cc.cwnd;
			ve_ack(&cc, MSS, 200000, now += 1000, false);
		}
	}
	/* diff = w / 2 > 1 segment: cwnd = w * 100 / 200 + 1 segment */
	assert_int_equal(cc.cwnd, w / 2 + MSS);
}

static void test_vegas_slow_start_continues_when_diff_below_gamma(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;

	(void)state;
	ve_init(&cc);
	ve_learn_base(&cc, &now);
	before = cc.cwnd;
	ve_round(&cc, &now, BASE_US);
	assert_int_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
	assert_int_equal(cc.cwnd, 2 * before);
}

/* --- Reno fallback --- */

static void run_both(struct tcp_cc *v, struct tcp_cc *r, uint32_t every)
{
	uint64_t tv = 0, tr = 0;
	int i;

	ve_init(v);
	tcp_cc_init(r, &tcp_cc_newreno_ops, MSS);
	v->ssthresh = r->ssthresh = SEG(30);
	for (i = 0; i < 12; i++) {
		ve_round_sampled(v, &tv, 300000, every, false);
		ve_round_sampled(r, &tr, 300000, every, false);
		assert_int_equal(v->cwnd, r->cwnd);
		assert_false(v->u.vegas.active);
	}
}

static void test_vegas_no_rtt_samples_behaves_as_reno(void **state)
{
	struct tcp_cc v, r;

	(void)state;
	run_both(&v, &r, 0);
	assert_true(v.cwnd > SEG(30));
}

static void test_vegas_two_samples_per_round_behaves_as_reno(void **state)
{
	struct tcp_cc v, r;

	(void)state;
	/* one sample in a round of up to 40 ACKs: too few to judge */
	run_both(&v, &r, 25);
}

static void test_vegas_three_samples_per_round_is_vegas(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_round_sampled(&cc, &now, BASE_US, 6, false);
	ve_round_sampled(&cc, &now, BASE_US, 6, false);
	assert_true(cc.u.vegas.active);
	ve_round_sampled(&cc, &now, 200000, 6, false);
	before = cc.cwnd;
	ve_round_sampled(&cc, &now, 200000, 6, false);
	assert_int_equal(cc.cwnd, before - MSS);
}

/* --- Losses as Reno --- */

static void test_vegas_loss_ssthresh_as_reno(void **state)
{
	struct tcp_cc cc;

	(void)state;
	ve_init_ca(&cc, 40);
	assert_int_equal(cc.ops->ssthresh(&cc, SEG(40), 0), SEG(20));
	assert_int_equal(cc.ops->ssthresh(&cc, SEG(3), 0), SEG(2));
	assert_int_equal(cc.cwnd, SEG(40));
}

static void test_vegas_rto_loss_window(void **state)
{
	struct tcp_cc cc;

	(void)state;
	ve_init_ca(&cc, 40);
	cc.ops->on_rto(&cc, SEG(40), 0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, SEG(20));
}

static void test_vegas_recovery_exit_sets_cwnd_and_restarts_round(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	ve_init_ca(&cc, 40);
	ve_learn_base(&cc, &now);
	cc.ssthresh = cc.ops->ssthresh(&cc, cc.cwnd, now);
	cc.cwnd = cc.ssthresh;
	cc.ops->on_rtt(&cc, 400000, now);	/* taken during recovery */
	cc.ops->on_recovery_exit(&cc, cc.ssthresh, now);
	assert_int_equal(cc.cwnd, cc.ssthresh);
	assert_int_equal(cc.u.vegas.round_samples, 0);
	assert_int_equal(cc.u.vegas.round_left, 0);
}

static void test_vegas_app_limited_no_change(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	uint32_t before;
	int i;

	(void)state;
	ve_init_ca(&cc, 20);
	ve_learn_base(&cc, &now);
	before = cc.cwnd;
	for (i = 0; i < 3; i++)
		ve_round_sampled(&cc, &now, BASE_US, 1, true);
	for (i = 0; i < 3; i++)
		ve_round_sampled(&cc, &now, 300000, 1, true);
	assert_int_equal(cc.cwnd, before);
}

static void test_vegas_idle_longer_than_rto_restarts_at_iw(void **state)
{
	struct tcp_cc cc;

	(void)state;
	ve_init_ca(&cc, 40);
	cc.ops->on_idle(&cc, 300, 5000);
	assert_int_equal(cc.cwnd, tcp_cc_initial_window(MSS));
	assert_int_equal(cc.ssthresh, SEG(40));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vegas_base_rtt_is_minimum_sample),
		cmocka_unit_test(test_vegas_base_rtt_never_increases),
		cmocka_unit_test(test_vegas_round_uses_its_smallest_sample),
		cmocka_unit_test(test_vegas_ca_diff_below_alpha_grows_one_mss_per_round),
		cmocka_unit_test(test_vegas_ca_grows_once_per_round_not_per_ack),
		cmocka_unit_test(test_vegas_ca_diff_above_beta_shrinks_one_mss_per_round),
		cmocka_unit_test(test_vegas_ca_diff_between_alpha_and_beta_holds),
		cmocka_unit_test(test_vegas_ca_settles_where_diff_is_between_thresholds),
		cmocka_unit_test(test_vegas_ca_shrink_stays_in_congestion_avoidance),
		cmocka_unit_test(test_vegas_ca_huge_delay_shrinks_to_beta_segments),
		cmocka_unit_test(test_vegas_slow_start_exits_when_diff_above_gamma),
		cmocka_unit_test(test_vegas_slow_start_exit_window_is_base_rtt_fit),
		cmocka_unit_test(test_vegas_slow_start_continues_when_diff_below_gamma),
		cmocka_unit_test(test_vegas_no_rtt_samples_behaves_as_reno),
		cmocka_unit_test(test_vegas_two_samples_per_round_behaves_as_reno),
		cmocka_unit_test(test_vegas_three_samples_per_round_is_vegas),
		cmocka_unit_test(test_vegas_loss_ssthresh_as_reno),
		cmocka_unit_test(test_vegas_rto_loss_window),
		cmocka_unit_test(test_vegas_recovery_exit_sets_cwnd_and_restarts_round),
		cmocka_unit_test(test_vegas_app_limited_no_change),
		cmocka_unit_test(test_vegas_idle_longer_than_rto_restarts_at_iw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
