/* NewReno (RFC 5681 §3.1 with RFC 3465 byte counting) driven through its ops the way the TCP
 * core calls them, plus what all controllers share: the initial window (RFC 6928), the
 * restart window (RFC 5681 §4.1), the window after recovery (RFC 6582 §3.2), and the
 * registry. ACK clocks run on a virtual microsecond clock; windows are in bytes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/cc/tcp_cc.h"

#define MSS 1000u
#define RTT_US 50000u

static void nr_init(struct tcp_cc *cc)
{
	tcp_cc_init(cc, &tcp_cc_newreno_ops, MSS);
}

/* One ACK as the core reports it: the RTT sample first, then the ACK. */
static void nr_ack(struct tcp_cc *cc, uint32_t acked, uint64_t now, bool app_limited)
{
	struct tcp_cc_ack a = {
		.acked = acked,
		.in_flight = cc->cwnd,
		.rtt_us = RTT_US,
		.now_us = now,
		.app_limited = app_limited,
	};

	cc->ops->on_rtt(cc, RTT_US, now);
	cc->ops->on_ack(cc, &a);
}

/* One round trip with a full window: a window's worth of ACKs of `per` bytes each. */
static void nr_round(struct tcp_cc *cc, uint64_t *now, uint32_t per)
{
	uint32_t left = cc->cwnd;

	while (left > 0) {
		uint32_t n = left < per ? left : per;

		*now += 1000;
		nr_ack(cc, n, *now, false);
		left -= n;
	}
}

/* What the core does on entering recovery: ssthresh from the controller, cwnd = ssthresh. */
static void nr_congestion(struct tcp_cc *cc, uint32_t in_flight)
{
	cc->ssthresh = cc->ops->ssthresh(cc, in_flight, 0);
	cc->cwnd = cc->ssthresh;
}

/* --- Initial window (RFC 6928 §2) --- */

static void test_init_window_mss_536_is_ten_segments(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_initial_window(536), 5360);
}

static void test_init_window_mss_1460_is_14600(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_initial_window(1460), 14600);
}

static void test_init_window_mss_4000_is_14600(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_initial_window(4000), 14600);
}

static void test_init_window_mss_8960_is_two_segments(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_initial_window(8960), 17920);
}

static void test_init_sets_iw_and_infinite_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_newreno_ops, 1460);
	assert_ptr_equal(cc.ops, &tcp_cc_newreno_ops);
	assert_int_equal(cc.mss, 1460);
	assert_int_equal(cc.cwnd, 14600);
	assert_int_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
	assert_int_equal(cc.min_rtt_us, 0);
}

static void test_init_mss_zero_uses_default_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_newreno_ops, 0);
	assert_int_equal(cc.mss, TCP_CC_MSS_DEFAULT);
	assert_int_equal(cc.cwnd, 10 * TCP_CC_MSS_DEFAULT);
}

static void test_init_huge_mss_clamped_to_16_bits(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_newreno_ops, 1u << 20);
	assert_int_equal(cc.mss, 65535);
	assert_int_equal(cc.cwnd, 2 * 65535);
}

static void test_init_null_ops_uses_default(void **state)
{
	struct tcp_cc cc;

	(void)state;
	tcp_cc_init(&cc, NULL, MSS);
	assert_ptr_equal(cc.ops, tcp_cc_default());
}

static void test_set_ops_keeps_windows_and_rtt(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 40 * MSS;
	cc.ssthresh = 30 * MSS;
	cc.min_rtt_us = 1234;
	tcp_cc_set_ops(&cc, &tcp_cc_vegas_ops);
	assert_ptr_equal(cc.ops, &tcp_cc_vegas_ops);
	assert_int_equal(cc.cwnd, 40 * MSS);
	assert_int_equal(cc.ssthresh, 30 * MSS);
	assert_int_equal(cc.min_rtt_us, 1234);
	assert_int_equal(cc.mss, MSS);
}

/* --- Slow start (RFC 5681 §3.1, RFC 3465 §2.2 with L = 2) --- */

static void test_newreno_slow_start_one_segment_ack_grows_one_segment(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, MSS, 1, false);
	assert_int_equal(cc.cwnd, 11 * MSS);
}

static void test_newreno_slow_start_delayed_ack_grows_two_segments(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, 2 * MSS, 1, false);
	assert_int_equal(cc.cwnd, 12 * MSS);
}

static void test_newreno_slow_start_stretch_ack_limited_to_two_segments(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, 7 * MSS, 1, false);
	assert_int_equal(cc.cwnd, 12 * MSS);
}

static void test_newreno_slow_start_partial_segment_ack_grows_by_bytes(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, 100, 1, false);
	assert_int_equal(cc.cwnd, 10 * MSS + 100);
}

static void test_newreno_slow_start_doubles_per_round_trip(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	nr_init(&cc);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 20 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 40 * MSS);
}

static void test_newreno_slow_start_delayed_acks_double_per_round_trip(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	nr_init(&cc);
	nr_round(&cc, &now, 2 * MSS);
	assert_int_equal(cc.cwnd, 20 * MSS);
}

static void test_newreno_slow_start_stops_at_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.ssthresh = 10 * MSS + 500;
	nr_ack(&cc, 2 * MSS, 1, false);
	assert_int_equal(cc.cwnd, 10 * MSS + 500);
	/* the 1500 bytes left over went to the congestion-avoidance counter */
	assert_int_equal(cc.u.newreno.ca_acked, 1500);
}

static void test_newreno_cwnd_equal_ssthresh_is_congestion_avoidance(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.ssthresh = cc.cwnd;
	nr_ack(&cc, MSS, 1, false);
	assert_int_equal(cc.cwnd, 10 * MSS);
}

static void test_newreno_crossing_ssthresh_switches_to_linear(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	nr_init(&cc);
	cc.ssthresh = 15 * MSS;
	nr_round(&cc, &now, MSS);	/* 10 -> 15 by slow start, then 5 segments counted */
	assert_int_equal(cc.cwnd, 15 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 16 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 17 * MSS);
}

/* --- Congestion avoidance (RFC 3465 §2.1 byte counting) --- */

static void test_newreno_ca_grows_one_mss_per_round_trip(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	int i;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 20 * MSS;
	cc.ssthresh = 20 * MSS;
	for (i = 1; i <= 10; i++) {
		nr_round(&cc, &now, MSS);
		assert_int_equal(cc.cwnd, (20 + i) * MSS);
	}
}

static void test_newreno_ca_delayed_acks_still_one_mss_per_round_trip(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;
	int i;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 20 * MSS;
	cc.ssthresh = 20 * MSS;
	for (i = 1; i <= 10; i++)
		nr_round(&cc, &now, 2 * MSS);
	assert_int_equal(cc.cwnd, 30 * MSS);
}

static void test_newreno_ca_less_than_a_window_acked_no_growth(void **state)
{
	struct tcp_cc cc;
	int i;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 20 * MSS;
	cc.ssthresh = 20 * MSS;
	for (i = 0; i < 19; i++)
		nr_ack(&cc, MSS, 1, false);
	assert_int_equal(cc.cwnd, 20 * MSS);
	nr_ack(&cc, MSS, 1, false);
	assert_int_equal(cc.cwnd, 21 * MSS);
}

static void test_newreno_ca_huge_stretch_ack_grows_one_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 20 * MSS;
	cc.ssthresh = 20 * MSS;
	nr_ack(&cc, 100 * MSS, 1, false);
	assert_int_equal(cc.cwnd, 21 * MSS);
	assert_true(cc.u.newreno.ca_acked < cc.cwnd);
}

static void test_newreno_cwnd_never_exceeds_max(void **state)
{
	struct tcp_cc cc;
	int i;

	(void)state;
	nr_init(&cc);
	cc.cwnd = TCP_CC_CWND_MAX - MSS / 2;
	for (i = 0; i < 8; i++)
		nr_ack(&cc, 2 * MSS, 1, false);
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
	cc.ssthresh = cc.cwnd;
	nr_ack(&cc, UINT32_MAX, 1, false);
	assert_int_equal(cc.cwnd, TCP_CC_CWND_MAX);
}

/* --- App-limited (RFC 7661): no growth --- */

static void test_newreno_app_limited_slow_start_no_growth(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, 2 * MSS, 1, true);
	assert_int_equal(cc.cwnd, 10 * MSS);
}

static void test_newreno_app_limited_ca_no_growth(void **state)
{
	struct tcp_cc cc;
	int i;

	(void)state;
	nr_init(&cc);
	cc.ssthresh = cc.cwnd;
	for (i = 0; i < 50; i++)
		nr_ack(&cc, MSS, 1, true);
	assert_int_equal(cc.cwnd, 10 * MSS);
	assert_int_equal(cc.u.newreno.ca_acked, 0);
}

static void test_newreno_zero_acked_ignored(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	nr_ack(&cc, 0, 1, false);
	assert_int_equal(cc.cwnd, 10 * MSS);
}

/* --- Congestion: ssthresh (RFC 5681 eq. 4), RTO, recovery exit --- */

static void test_newreno_ssthresh_large_flight_is_half(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 100 * MSS;
	assert_int_equal(cc.ops->ssthresh(&cc, 80 * MSS, 0), 40 * MSS);
}

static void test_newreno_ssthresh_small_flight_is_two_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	assert_int_equal(cc.ops->ssthresh(&cc, 3 * MSS, 0), 2 * MSS);
	assert_int_equal(cc.ops->ssthresh(&cc, 0, 0), 2 * MSS);
}

static void test_newreno_ssthresh_leaves_windows_to_the_core(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 100 * MSS;
	cc.ops->ssthresh(&cc, 100 * MSS, 0);
	assert_int_equal(cc.cwnd, 100 * MSS);
	assert_int_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
}

static void test_newreno_ssthresh_clears_byte_counter(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.ssthresh = cc.cwnd;
	nr_ack(&cc, 5 * MSS, 1, false);
	assert_int_not_equal(cc.u.newreno.ca_acked, 0);
	cc.ops->ssthresh(&cc, cc.cwnd, 0);
	assert_int_equal(cc.u.newreno.ca_acked, 0);
}

static void test_newreno_rto_sets_loss_window_and_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 60 * MSS;
	cc.ops->on_rto(&cc, 50 * MSS, 0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, 25 * MSS);
}

static void test_newreno_rto_small_flight_ssthresh_two_mss(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.ops->on_rto(&cc, MSS, 0);
	assert_int_equal(cc.cwnd, MSS);
	assert_int_equal(cc.ssthresh, 2 * MSS);
}

static void test_newreno_after_rto_slow_starts_to_ssthresh(void **state)
{
	struct tcp_cc cc;
	uint64_t now = 0;

	(void)state;
	nr_init(&cc);
	cc.ops->on_rto(&cc, 16 * MSS, 0);	/* ssthresh 8 */
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 2 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 4 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 8 * MSS);
	nr_round(&cc, &now, MSS);
	assert_int_equal(cc.cwnd, 9 * MSS);
}

static void test_newreno_recovery_exit_full_flight_cwnd_is_ssthresh(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 40 * MSS;
	nr_congestion(&cc, 40 * MSS);
	cc.cwnd = 23 * MSS;	/* inflated by the core during recovery (RFC 5681 §3.2) */
	cc.ops->on_recovery_exit(&cc, 20 * MSS, 0);
	assert_int_equal(cc.cwnd, 20 * MSS);
	assert_int_equal(cc.ssthresh, 20 * MSS);
}

static void test_newreno_recovery_exit_small_flight_no_burst(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 40 * MSS;
	nr_congestion(&cc, 40 * MSS);
	cc.ops->on_recovery_exit(&cc, 3 * MSS, 0);
	assert_int_equal(cc.cwnd, 4 * MSS);	/* RFC 6582 §3.2 step 3 (1) */
	cc.ops->on_recovery_exit(&cc, 0, 0);
	assert_int_equal(cc.cwnd, 2 * MSS);
}

/* --- Idle restart (RFC 5681 §4.1) --- */

static void test_newreno_idle_longer_than_rto_restarts_at_iw(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 80 * MSS;
	cc.ssthresh = 50 * MSS;
	cc.ops->on_idle(&cc, 1000, 1001);
	assert_int_equal(cc.cwnd, tcp_cc_initial_window(MSS));
	assert_int_equal(cc.ssthresh, 50 * MSS);
}

static void test_newreno_idle_equal_to_rto_keeps_cwnd(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 80 * MSS;
	cc.ops->on_idle(&cc, 1000, 1000);
	assert_int_equal(cc.cwnd, 80 * MSS);
}

static void test_newreno_idle_small_cwnd_kept(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.cwnd = 3 * MSS;
	cc.ops->on_idle(&cc, 200, 100000);
	assert_int_equal(cc.cwnd, 3 * MSS);
}

static void test_newreno_rtt_samples_keep_minimum(void **state)
{
	struct tcp_cc cc;

	(void)state;
	nr_init(&cc);
	cc.ops->on_rtt(&cc, 300, 0);
	cc.ops->on_rtt(&cc, 200, 0);
	cc.ops->on_rtt(&cc, 400, 0);
	assert_int_equal(cc.min_rtt_us, 200);
}

/* --- Registry --- */

static void test_registry_find_each_builtin(void **state)
{
	(void)state;
	assert_ptr_equal(tcp_cc_find("cubic"), &tcp_cc_cubic_ops);
	assert_ptr_equal(tcp_cc_find("newreno"), &tcp_cc_newreno_ops);
	assert_ptr_equal(tcp_cc_find("vegas"), &tcp_cc_vegas_ops);
	assert_ptr_equal(tcp_cc_find("bbr"), &tcp_cc_bbr_ops);
}

static void test_registry_find_unknown_returns_null(void **state)
{
	(void)state;
	assert_null(tcp_cc_find("bbr2"));
	assert_null(tcp_cc_find("BBR"));
	assert_null(tcp_cc_find("CUBIC"));
	assert_null(tcp_cc_find("cubic "));
	assert_null(tcp_cc_find("cub"));
	assert_null(tcp_cc_find(""));
	assert_null(tcp_cc_find(NULL));
}

static void test_registry_default_is_cubic(void **state)
{
	(void)state;
	assert_ptr_equal(tcp_cc_default(), &tcp_cc_cubic_ops);
}

static void test_registry_set_default_known_changes_default(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_set_default("vegas"), 0);
	assert_ptr_equal(tcp_cc_default(), &tcp_cc_vegas_ops);
	assert_int_equal(tcp_cc_set_default("cubic"), 0);
	assert_ptr_equal(tcp_cc_default(), &tcp_cc_cubic_ops);
}

static void test_registry_set_default_unknown_enoent_keeps_default(void **state)
{
	(void)state;
	assert_int_equal(tcp_cc_set_default("newreno"), 0);
	assert_int_equal(tcp_cc_set_default("reno"), -ENOENT);
	assert_int_equal(tcp_cc_set_default(NULL), -ENOENT);
	assert_ptr_equal(tcp_cc_default(), &tcp_cc_newreno_ops);
	assert_int_equal(tcp_cc_set_default("cubic"), 0);
}

static void test_registry_names_sorted_and_counted(void **state)
{
	const char *names[8];
	unsigned n, i;

	(void)state;
	n = tcp_cc_names(names, 8);
	assert_int_equal(n, 4);
	assert_string_equal(names[0], "bbr");
	assert_string_equal(names[1], "cubic");
	assert_string_equal(names[2], "newreno");
	assert_string_equal(names[3], "vegas");
	for (i = 0; i + 1 < n; i++)
		assert_true(strcmp(names[i], names[i + 1]) < 0);
}

static void test_registry_names_truncated_returns_total(void **state)
{
	const char *names[1] = { NULL };

	(void)state;
	assert_int_equal(tcp_cc_names(NULL, 0), 4);
	assert_int_equal(tcp_cc_names(names, 1), 4);
	assert_string_equal(names[0], "bbr");
}

static void test_registry_every_name_finds_itself_and_has_every_hook(void **state)
{
	const char *names[8];
	unsigned n, i;

	(void)state;
	n = tcp_cc_names(names, 8);
	for (i = 0; i < n; i++) {
		const struct tcp_cc_ops *ops = tcp_cc_find(names[i]);

		assert_non_null(ops);
		assert_string_equal(ops->name, names[i]);
		assert_non_null(ops->init);
		assert_non_null(ops->on_ack);
		assert_non_null(ops->ssthresh);
		assert_non_null(ops->on_recovery_exit);
		assert_non_null(ops->on_rto);
		assert_non_null(ops->on_rtt);
		assert_non_null(ops->on_idle);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_window_mss_536_is_ten_segments),
		cmocka_unit_test(test_init_window_mss_1460_is_14600),
		cmocka_unit_test(test_init_window_mss_4000_is_14600),
		cmocka_unit_test(test_init_window_mss_8960_is_two_segments),
		cmocka_unit_test(test_init_sets_iw_and_infinite_ssthresh),
		cmocka_unit_test(test_init_mss_zero_uses_default_mss),
		cmocka_unit_test(test_init_huge_mss_clamped_to_16_bits),
		cmocka_unit_test(test_init_null_ops_uses_default),
		cmocka_unit_test(test_set_ops_keeps_windows_and_rtt),
		cmocka_unit_test(test_newreno_slow_start_one_segment_ack_grows_one_segment),
		cmocka_unit_test(test_newreno_slow_start_delayed_ack_grows_two_segments),
		cmocka_unit_test(test_newreno_slow_start_stretch_ack_limited_to_two_segments),
		cmocka_unit_test(test_newreno_slow_start_partial_segment_ack_grows_by_bytes),
		cmocka_unit_test(test_newreno_slow_start_doubles_per_round_trip),
		cmocka_unit_test(test_newreno_slow_start_delayed_acks_double_per_round_trip),
		cmocka_unit_test(test_newreno_slow_start_stops_at_ssthresh),
		cmocka_unit_test(test_newreno_cwnd_equal_ssthresh_is_congestion_avoidance),
		cmocka_unit_test(test_newreno_crossing_ssthresh_switches_to_linear),
		cmocka_unit_test(test_newreno_ca_grows_one_mss_per_round_trip),
		cmocka_unit_test(test_newreno_ca_delayed_acks_still_one_mss_per_round_trip),
		cmocka_unit_test(test_newreno_ca_less_than_a_window_acked_no_growth),
		cmocka_unit_test(test_newreno_ca_huge_stretch_ack_grows_one_mss),
		cmocka_unit_test(test_newreno_cwnd_never_exceeds_max),
		cmocka_unit_test(test_newreno_app_limited_slow_start_no_growth),
		cmocka_unit_test(test_newreno_app_limited_ca_no_growth),
		cmocka_unit_test(test_newreno_zero_acked_ignored),
		cmocka_unit_test(test_newreno_ssthresh_large_flight_is_half),
		cmocka_unit_test(test_newreno_ssthresh_small_flight_is_two_mss),
		cmocka_unit_test(test_newreno_ssthresh_leaves_windows_to_the_core),
		cmocka_unit_test(test_newreno_ssthresh_clears_byte_counter),
		cmocka_unit_test(test_newreno_rto_sets_loss_window_and_ssthresh),
		cmocka_unit_test(test_newreno_rto_small_flight_ssthresh_two_mss),
		cmocka_unit_test(test_newreno_after_rto_slow_starts_to_ssthresh),
		cmocka_unit_test(test_newreno_recovery_exit_full_flight_cwnd_is_ssthresh),
		cmocka_unit_test(test_newreno_recovery_exit_small_flight_no_burst),
		cmocka_unit_test(test_newreno_idle_longer_than_rto_restarts_at_iw),
		cmocka_unit_test(test_newreno_idle_equal_to_rto_keeps_cwnd),
		cmocka_unit_test(test_newreno_idle_small_cwnd_kept),
		cmocka_unit_test(test_newreno_rtt_samples_keep_minimum),
		cmocka_unit_test(test_registry_find_each_builtin),
		cmocka_unit_test(test_registry_find_unknown_returns_null),
		cmocka_unit_test(test_registry_default_is_cubic),
		cmocka_unit_test(test_registry_set_default_known_changes_default),
		cmocka_unit_test(test_registry_set_default_unknown_enoent_keeps_default),
		cmocka_unit_test(test_registry_names_sorted_and_counted),
		cmocka_unit_test(test_registry_names_truncated_returns_total),
		cmocka_unit_test(test_registry_every_name_finds_itself_and_has_every_hook),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
