/* The sender's sent map (tcp_sentmap) and RACK over it (tcp_rack, RFC 8985): record states
 * and their byte counts, the transmission-ordered in-flight list, SACK and cumulative ACK,
 * losses and resends, growth and the merge at capacity, delivery-rate samples
 * (draft-cheng-iccrg-delivery-rate-estimation), RACK's loss marking, reordering window and
 * probe timeout; and a randomised run that checks the counts against a recount after every
 * step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/tcp_rack.h"
#include "tcp/tcp_sentmap.h"
#include "tcp/tcp_seq.h"
#include "test_rand.h"

#define SEQ0 0xfffff000u /* near the wrap: sequence arithmetic is modular */
#define SEG 1000u

/* Sends n new segments of SEG bytes at now_us; returns the first sequence number. */
static uint32_t send_new(struct tcp_sentmap *sm, unsigned n, uint32_t now_us)
{
	uint32_t seq = sm->n ? tcp_sm_top(sm) : SEQ0;
	uint32_t first = seq;

	for (unsigned i = 0; i < n; i++, seq += SEG)
		assert_int_equal(tcp_sm_sent(sm, seq, seq + SEG, false, now_us), 0);
	return first;
}

/* The counts recomputed from the records, and the list walked both ways. */
static void check_counts(const struct tcp_sentmap *sm)
{
	uint32_t sacked = 0, lost = 0, flight = 0, retrans = 0, listed = 0;

	for (uint32_t i = 0; i < sm->n; i++) {
		const struct tcp_sent *r = tcp_sm_at(sm, i);
		uint32_t len = r->end - r->seq;

		assert_true(len > 0);
		if (i > 0)
			assert_int_equal(tcp_sm_at(sm, i - 1)->end, r->seq);
		if (r->flags & TCP_SENT_SACKED) {
			sacked += len;
		} else if (r->flags & TCP_SENT_LOST) {
			lost += len;
		} else {
			flight += len;
			if (r->flags & TCP_SENT_RETRANS)
				retrans += len;
		}
	}
	uint32_t prev = TCP_SM_NIL;
	for (uint32_t pos = sm->thead; pos != TCP_SM_NIL; pos = sm->r[pos].tnext) {
		assert_int_equal(sm->r[pos].tprev, prev);
		assert_false(sm->r[pos].flags & (TCP_SENT_SACKED | TCP_SENT_LOST));
		if (prev != TCP_SM_NIL)
			assert_false(tcp_time_before(sm->r[pos].xmit_us, sm->r[prev].xmit_us));
		prev = pos;
		listed += sm->r[pos].end - sm->r[pos].seq;
	}
	assert_int_equal(sm->ttail, prev);
	assert_int_equal(sm->sacked, sacked);
	assert_int_equal(sm->lost, lost);
	assert_int_equal(sm->in_flight, flight);
	assert_int_equal(sm->retrans, retrans);
	assert_int_equal(listed, flight);
}

static void test_sm_new_segments_are_in_flight_in_send_order(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 3, 100);
	assert_int_equal(sm.n, 3);
	assert_int_equal(sm.in_flight, 3 * SEG);
	assert_int_equal(tcp_sm_top(&sm), seq + 3 * SEG);
	assert_int_equal(sm.r[sm.thead].seq, seq);
	assert_int_equal(sm.r[sm.ttail].seq, seq + 2 * SEG);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_resend_moves_the_record_to_the_tail_as_a_retransmission(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 3, 100);
	assert_int_equal(tcp_sm_sent(&sm, seq, seq + SEG, false, 200), SEG);
	assert_int_equal(sm.r[sm.ttail].seq, seq);
	assert_int_equal(sm.r[sm.ttail].xmit_us, 200);
	assert_int_equal(sm.retrans, SEG);
	assert_int_equal(sm.in_flight, 3 * SEG);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_cum_ack_removes_records_and_trims_a_cut_one(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 3, 100);
	tcp_sm_delivery_begin(&sm, &d, 300, 0);
	tcp_sm_cum_ack(&sm, seq + SEG + SEG / 2, &d);
	tcp_sm_delivery_end(&sm, &d);
	assert_int_equal(sm.n, 2);
	assert_int_equal(tcp_sm_at(&sm, 0)->seq, seq + SEG + SEG / 2);
	assert_int_equal(d.bytes, SEG + SEG / 2);
	assert_int_equal(sm.delivered, SEG + SEG / 2);
	assert_int_equal(sm.in_flight, SEG + SEG / 2);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_sack_marks_only_whole_records(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 4, 100);
	tcp_sm_delivery_begin(&sm, &d, 300, 0);
	tcp_sm_sack(&sm, seq + SEG, seq + 2 * SEG + SEG / 2, &d); /* 1 whole, 2 half */
	tcp_sm_delivery_end(&sm, &d);
	assert_int_equal(sm.sacked, SEG);
	assert_true(tcp_sm_at(&sm, 1)->flags & TCP_SENT_SACKED);
	assert_false(tcp_sm_at(&sm, 2)->flags & TCP_SENT_SACKED);
	assert_int_equal(d.bytes, SEG);
	/* SACKed again: nothing new. */
	tcp_sm_delivery_begin(&sm, &d, 310, 0);
	tcp_sm_sack(&sm, seq + SEG, seq + 2 * SEG, &d);
	assert_int_equal(d.bytes, 0);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_lost_records_are_resent_lowest_first(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 5, 100);
	tcp_sm_mark_lost(&sm, 3);
	tcp_sm_mark_lost(&sm, 1);
	assert_int_equal(sm.lost, 2 * SEG);
	assert_int_equal(sm.in_flight, 3 * SEG);
	assert_int_equal(tcp_sm_next_lost(&sm), 1);
	tcp_sm_sent(&sm, seq + SEG, seq + 2 * SEG, false, 200);
	assert_int_equal(tcp_sm_next_lost(&sm), 3);
	tcp_sm_sent(&sm, seq + 3 * SEG, seq + 4 * SEG, false, 210);
	assert_int_equal(tcp_sm_next_lost(&sm), TCP_SM_NIL);
	assert_int_equal(sm.retrans, 2 * SEG);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_mark_all_lost_keeps_sacks_unless_told_to_forget(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 4, 100);
	tcp_sm_delivery_begin(&sm, &d, 300, 0);
	tcp_sm_sack(&sm, seq + 2 * SEG, seq + 3 * SEG, &d);
	tcp_sm_mark_all_lost(&sm, false);
	assert_int_equal(sm.lost, 3 * SEG);
	assert_int_equal(sm.sacked, SEG);
	assert_int_equal(sm.in_flight, 0);
	check_counts(&sm);
	tcp_sm_mark_all_lost(&sm, true);
	assert_int_equal(sm.lost, 4 * SEG);
	assert_int_equal(sm.sacked, 0);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_grows_past_its_first_size_keeping_both_orders(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, TCP_SM_INITIAL_RECORDS - 2, 100);
	tcp_sm_sent(&sm, seq, seq + SEG, false, 150);    /* the oldest, resent: list tail */
	send_new(&sm, 3 * TCP_SM_INITIAL_RECORDS, 200);
	assert_true(sm.cap >= 4 * TCP_SM_INITIAL_RECORDS);
	assert_int_equal(sm.n, 4 * TCP_SM_INITIAL_RECORDS - 2);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_sm_full_map_merges_new_data_into_the_last_record(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	assert_int_equal(tcp_sm_init(&sm), 0);
	send_new(&sm, TCP_SM_MAX_RECORDS, 100);
	uint32_t top = tcp_sm_top(&sm);
	assert_int_equal(tcp_sm_sent(&sm, top, top + SEG, true, 200), 0);
	assert_int_equal(sm.n, TCP_SM_MAX_RECORDS);
	assert_int_equal(tcp_sm_top(&sm), top + SEG);
	assert_true(tcp_sm_at(&sm, sm.n - 1)->flags & TCP_SENT_FIN);
	assert_int_equal(sm.in_flight, (TCP_SM_MAX_RECORDS + 1) * SEG);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

/* --- delivery rate (draft-cheng §3) --- */

static void test_sm_rate_sample_is_bytes_over_the_longer_phase(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	assert_int_equal(tcp_sm_init(&sm), 0);
	/* 10 segments, one every 100 µs from t = 1000; ACKed at once after 5 ms. */
	uint32_t seq = SEQ0;
	for (unsigned i = 0; i < 10; i++, seq += SEG)
		tcp_sm_sent(&sm, seq, seq + SEG, false, 1000 + 100 * i);
	tcp_sm_delivery_begin(&sm, &d, 6900, 1000);
	tcp_sm_cum_ack(&sm, seq, &d);
	tcp_sm_delivery_end(&sm, &d);
	/* The newest packet was sent first_sent + 900 µs; delivered 10 SEG since the
	 * flight began; ack phase 6900 - 1000 = 5900 µs is the longer. */
	assert_true(d.has_rate);
	assert_int_equal(d.prior_delivered, 0);
	assert_int_equal(d.rate_bytes, 10 * SEG);
	assert_int_equal(d.interval_us, 5900);
	assert_int_equal(d.karn_rtt_us, 6900 - 1900);
	assert_false(d.app_limited);
	tcp_sm_fini(&sm);
}

static void test_sm_app_limited_marks_what_is_sent_until_the_bubble_is_delivered(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t seq = send_new(&sm, 2, 100);
	tcp_sm_app_limited(&sm);
	assert_int_equal(sm.app_limited, 2 * SEG);
	send_new(&sm, 1, 200);
	assert_true(tcp_sm_at(&sm, 2)->flags & TCP_SENT_APP_LIMITED);
	tcp_sm_delivery_begin(&sm, &d, 5000, 0);
	tcp_sm_cum_ack(&sm, seq + 3 * SEG, &d);
	tcp_sm_delivery_end(&sm, &d);
	assert_true(d.app_limited);
	assert_int_equal(sm.app_limited, 0); /* 3 SEG delivered > the 2 SEG mark */
	tcp_sm_fini(&sm);
}

/* --- RACK (RFC 8985 §6) --- */

/* Delivers record i alone by SACK at now_us, and updates RACK. */
static void rack_sack(struct tcp_rack *rk, struct tcp_sentmap *sm, uint32_t i, uint32_t now_us)
{
	struct tcp_sm_delivery d;
	const struct tcp_sent *r = tcp_sm_at(sm, i);

	tcp_sm_delivery_begin(sm, &d, now_us, rk->min_rtt_us);
	d.fack = rk->fack;
	tcp_sm_sack(sm, r->seq, r->end, &d);
	tcp_sm_delivery_end(sm, &d);
	tcp_rack_update(rk, &d);
}

static void test_rack_marks_only_what_was_sent_before_the_delivered_and_waited(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_rack rk;
	uint32_t wait;
	assert_int_equal(tcp_sm_init(&sm), 0);
	tcp_rack_init(&rk, SEQ0);
	send_new(&sm, 2, 1000);  /* 0, 1 at 1000 */
	send_new(&sm, 2, 3000);  /* 2, 3 at 3000 */
	rack_sack(&rk, &sm, 2, 11000);  /* RTT 8000 */
	assert_int_equal(rk.rtt_us, 8000);
	assert_int_equal(rk.xmit_us, 3000);
	/* 0 and 1 waited 10000 > RTT: lost with no reordering window; 3 was sent after 2. */
	assert_int_equal(tcp_rack_detect(&rk, &sm, 11000, 0, &wait), 2 * SEG);
	assert_int_equal(wait, 0);
	assert_true(tcp_sm_at(&sm, 0)->flags & TCP_SENT_LOST);
	assert_false(tcp_sm_at(&sm, 3)->flags & TCP_SENT_LOST);
	check_counts(&sm);
	tcp_sm_fini(&sm);
}

static void test_rack_waits_out_the_reordering_window_and_says_how_long(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_rack rk;
	uint32_t wait;
	assert_int_equal(tcp_sm_init(&sm), 0);
	tcp_rack_init(&rk, SEQ0);
	send_new(&sm, 2, 1000);
	rack_sack(&rk, &sm, 1, 9000);   /* RTT 8000: 0 sent with it, same time */
	/* 0 was sent at 1000: lost at 1000 + 8000 + 2000. */
	assert_int_equal(tcp_rack_detect(&rk, &sm, 9000, 2000, &wait), 0);
	assert_int_equal(wait, 2000);
	assert_int_equal(tcp_rack_detect(&rk, &sm, 11000, 2000, &wait), SEG);
	assert_int_equal(wait, 0);
	tcp_sm_fini(&sm);
}

static void test_rack_a_resend_delivered_sooner_than_min_rtt_was_the_original(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_rack rk;
	assert_int_equal(tcp_sm_init(&sm), 0);
	tcp_rack_init(&rk, SEQ0);
	uint32_t seq = send_new(&sm, 3, 1000);
	rack_sack(&rk, &sm, 2, 9000);   /* min_RTT 8000 */
	tcp_sm_sent(&sm, seq, seq + SEG, false, 10000);
	rack_sack(&rk, &sm, 0, 10500);  /* 500 µs after the resend: the original's SACK */
	assert_int_equal(rk.xmit_us, 1000);
	assert_int_equal(rk.rtt_us, 8000);
	tcp_sm_fini(&sm);
}

static void test_rack_late_original_below_fack_is_reordering(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_rack rk;
	assert_int_equal(tcp_sm_init(&sm), 0);
	tcp_rack_init(&rk, SEQ0);
	send_new(&sm, 3, 1000);
	rack_sack(&rk, &sm, 2, 9000);
	assert_false(rk.reordering_seen);
	rack_sack(&rk, &sm, 0, 9100);
	assert_true(rk.reordering_seen);
	tcp_sm_fini(&sm);
}

static void test_rack_reo_wnd_zero_in_recovery_until_reordering_then_quarter_rtt(void **state)
{
	(void)state;
	struct tcp_rack rk;
	tcp_rack_init(&rk, SEQ0);
	rk.min_rtt_us = 8000;
	assert_int_equal(tcp_rack_reo_wnd(&rk, false, 0, 10000), 2000);
	assert_int_equal(tcp_rack_reo_wnd(&rk, true, 0, 10000), 0);
	assert_int_equal(tcp_rack_reo_wnd(&rk, false, 3, 10000), 0);
	rk.reordering_seen = true;
	assert_int_equal(tcp_rack_reo_wnd(&rk, true, 5, 10000), 2000);
	/* Never beyond SRTT. */
	rk.reo_wnd_mult = 10;
	assert_int_equal(tcp_rack_reo_wnd(&rk, false, 0, 10000), 10000);
}

static void test_rack_dsack_widens_once_per_round_and_narrows_after_16_recoveries(void **state)
{
	(void)state;
	struct tcp_rack rk;
	tcp_rack_init(&rk, SEQ0);
	tcp_rack_dsack(&rk, SEQ0, SEQ0 + 10 * SEG);
	tcp_rack_dsack(&rk, SEQ0 + SEG, SEQ0 + 10 * SEG);   /* same round */
	assert_int_equal(rk.reo_wnd_mult, 2);
	tcp_rack_dsack(&rk, SEQ0 + 10 * SEG, SEQ0 + 20 * SEG); /* the next */
	assert_int_equal(rk.reo_wnd_mult, 3);
	for (unsigned i = 0; i < TCP_RACK_REO_PERSIST - 1; i++)
		tcp_rack_recovery_done(&rk);
	assert_int_equal(rk.reo_wnd_mult, 3);
	tcp_rack_recovery_done(&rk);
	assert_int_equal(rk.reo_wnd_mult, 1);
}

static void test_tlp_pto_is_two_srtt_plus_the_delayed_ack_for_one_segment(void **state)
{
	(void)state;
	assert_int_equal(tcp_tlp_pto_us(10000, false, 1000000), 2 * 10000 + TCP_TLP_MIN_US);
	assert_int_equal(tcp_tlp_pto_us(10000, true, 1000000),
			 2 * 10000 + TCP_TLP_MIN_US + TCP_TLP_MAX_ACK_DELAY_US);
	assert_int_equal(tcp_tlp_pto_us(10000, false, 15000), 15000);   /* never past the RTO */
	assert_int_equal(tcp_tlp_pto_us(0, false, 3000000), 1000000);   /* no SRTT yet */
}

/* --- a random walk, recounted at every step --- */

static uint32_t below(uint32_t *seed, uint32_t n)
{
	return rnd(seed) % n;
}

static void test_sm_random_operations_keep_every_count_exact(void **state)
{
	(void)state;
	struct tcp_sentmap sm;
	struct tcp_sm_delivery d;
	uint32_t seed = 0x5e17;
	assert_int_equal(tcp_sm_init(&sm), 0);
	uint32_t una = SEQ0, top = SEQ0, now = 0;
	for (unsigned step = 0; step < 20000; step++) {
		now += below(&seed, 50);
		uint32_t op = below(&seed, 6);
		uint32_t span = top - una;
		if (op <= 1 || span == 0) {
			uint32_t len = 1 + below(&seed, 2 * SEG);
			tcp_sm_sent(&sm, top, top + len, false, now);
			top += len;
		} else if (op == 2) {
			uint32_t from = una + below(&seed, span);
			uint32_t len = 1 + below(&seed, 3 * SEG);
			if (len > top - from)
				len = top - from;
			tcp_sm_sent(&sm, from, from + len, false, now);
		} else if (op == 3) {
			uint32_t l = una + below(&seed, span);
			uint32_t r = l + 1 + below(&seed, top - l);
			tcp_sm_delivery_begin(&sm, &d, now, 0);
			tcp_sm_sack(&sm, l, r, &d);
			tcp_sm_delivery_end(&sm, &d);
		} else if (op == 4) {
			uint32_t ack = una + 1 + below(&seed, span);
			tcp_sm_delivery_begin(&sm, &d, now, 0);
			tcp_sm_cum_ack(&sm, ack, &d);
			tcp_sm_delivery_end(&sm, &d);
			una = ack;
		} else if (sm.n != 0) {
			if (below(&seed, 8) == 0)
				tcp_sm_mark_all_lost(&sm, below(&seed, 2));
			else
				tcp_sm_mark_lost(&sm, below(&seed, sm.n));
		}
		check_counts(&sm);
		assert_int_equal(sm.n ? tcp_sm_at(&sm, 0)->seq : una, una);
		assert_int_equal(sm.sacked + sm.lost + sm.in_flight, top - una);
	}
	tcp_sm_fini(&sm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sm_new_segments_are_in_flight_in_send_order),
		cmocka_unit_test(test_sm_resend_moves_the_record_to_the_tail_as_a_retransmission),
		cmocka_unit_test(test_sm_cum_ack_removes_records_and_trims_a_cut_one),
		cmocka_unit_test(test_sm_sack_marks_only_whole_records),
		cmocka_unit_test(test_sm_lost_records_are_resent_lowest_first),
		cmocka_unit_test(test_sm_mark_all_lost_keeps_sacks_unless_told_to_forget),
		cmocka_unit_test(test_sm_grows_past_its_first_size_keeping_both_orders),
		cmocka_unit_test(test_sm_full_map_merges_new_data_into_the_last_record),
		cmocka_unit_test(test_sm_rate_sample_is_bytes_over_the_longer_phase),
		cmocka_unit_test(test_sm_app_limited_marks_what_is_sent_until_the_bubble_is_delivered),
		cmocka_unit_test(test_rack_marks_only_what_was_sent_before_the_delivered_and_waited),
		cmocka_unit_test(test_rack_waits_out_the_reordering_window_and_says_how_long),
		cmocka_unit_test(test_rack_a_resend_delivered_sooner_than_min_rtt_was_the_original),
		cmocka_unit_test(test_rack_late_original_below_fack_is_reordering),
		cmocka_unit_test(test_rack_reo_wnd_zero_in_recovery_until_reordering_then_quarter_rtt),
		cmocka_unit_test(test_rack_dsack_widens_once_per_round_and_narrows_after_16_recoveries),
		cmocka_unit_test(test_tlp_pto_is_two_srtt_plus_the_delayed_ack_for_one_segment),
		cmocka_unit_test(test_sm_random_operations_keep_every_count_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
