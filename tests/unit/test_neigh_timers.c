/* neigh_tick: every timer just before, at and after its deadline; retransmission counts and
 * spacing (the rate limit); FAILED hold and re-resolution; gc of STALE entries. A timer of d
 * ms armed at t fires at t + d. */
#include "test_neigh.h"

/* --- INCOMPLETE: broadcast retransmissions, then FAILED --- */

static void test_incomplete_tick_before_retrans_sends_nothing(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	tick_at(f, T0 + f->p.retrans_ms - 1);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(info_of(f, 1, IP1).probes, 1);
}

static void test_incomplete_tick_at_retrans_sends_second_broadcast(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	tick_at(f, T0 + f->p.retrans_ms);
	assert_int_equal(f->n_req, 1);
	assert_false(f->req[0].unicast);
	assert_int_equal(f->req[0].ip, IP1);
	assert_int_equal(f->req[0].port, 1);
	assert_int_equal(info_of(f, 1, IP1).probes, 2);
}

static void test_incomplete_tick_twice_at_same_time_sends_once(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	tick_at(f, T0 + f->p.retrans_ms);
	tick_at(f, T0 + f->p.retrans_ms);
	assert_int_equal(f->n_req, 1);
}

static void test_incomplete_requests_are_spaced_by_retrans_ms(void **state)
{
	struct fake *f = *state;

	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms - 1, 100);
	assert_int_equal(f->n_req, f->p.mcast_probes);
	for (uint32_t i = 0; i < f->p.mcast_probes; i++) {
		assert_int_equal(f->req[i].at, T0 + i * f->p.retrans_ms);
		assert_false(f->req[i].unicast);
	}
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
}

static void test_incomplete_late_tick_sends_one_request_not_a_burst(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	/* 2.5 intervals late: one request now, the next a full interval later. */
	tick_at(f, T0 + 2 * f->p.retrans_ms + 500);
	assert_int_equal(f->n_req, 1);
	tick_at(f, T0 + 3 * f->p.retrans_ms + 499);
	assert_int_equal(f->n_req, 1);
	tick_at(f, T0 + 3 * f->p.retrans_ms + 500);
	assert_int_equal(f->n_req, 2);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
}

static void test_incomplete_tick_before_last_timeout_stays_incomplete(void **state)
{
	struct fake *f = *state;

	resolve(f, 1, IP1, 1);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms - 1, 1000);
	tick_at(f, T0 + f->p.mcast_probes * f->p.retrans_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(info_of(f, 1, IP1).queued, 1);
	assert_int_equal(f->n_drop, 0);
}

static void test_incomplete_tick_at_last_timeout_fails_and_drops_queue_in_order(void **state)
{
	struct fake *f = *state;
	uint64_t fail_at = T0 + f->p.mcast_probes * f->p.retrans_ms;
	struct neigh_info info;

	for (int i = 0; i < 4; i++)
		resolve(f, 1, IP1, i);
	tick_every(f, fail_at, 100);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_FAILED);
	assert_int_equal(info.updated_ms, fail_at);
	assert_int_equal(info.queued, 0);
	assert_int_equal(info.probes, f->p.mcast_probes);
	assert_int_equal(f->n_req, f->p.mcast_probes);
	assert_int_equal(f->n_drop, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(f->drop[i].id, i);
		assert_int_equal(f->drop[i].why, NEIGH_DROP_RESOLVE_FAILED);
		assert_int_equal(f->drop[i].at, fail_at);
	}
	assert_int_equal(f->n_sent, 0);
}

static void test_incomplete_mcast_probes_sets_request_count(void **state)
{
	struct fake *f = *state;

	f->p.mcast_probes = 5;
	fake_reopen(f);
	resolve(f, 1, IP1, NOPKT);
	tick_every(f, T0 + 5 * f->p.retrans_ms - 1, 100);
	assert_int_equal(f->n_req, 5);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	tick_at(f, T0 + 5 * f->p.retrans_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(f->n_req, 5);
}

static void test_incomplete_zero_mcast_probes_still_sends_one_request(void **state)
{
	struct fake *f = *state;

	f->p.mcast_probes = 0;
	fake_reopen(f);
	resolve(f, 1, IP1, NOPKT);
	assert_int_equal(f->n_req, 1);
	tick_at(f, T0 + f->p.retrans_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(f->n_req, 1);
}

static void test_incomplete_zero_retrans_sends_one_request_per_tick(void **state)
{
	struct fake *f = *state;

	f->p.retrans_ms = 0;
	fake_reopen(f);
	resolve(f, 1, IP1, NOPKT);
	tick_at(f, T0);
	assert_int_equal(f->n_req, 2);
	tick_at(f, T0);
	assert_int_equal(f->n_req, 3);
	tick_at(f, T0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(f->n_req, 3);
}

/* --- FAILED: hold, removal, re-resolution --- */

static void test_failed_tick_before_hold_keeps_entry(void **state)
{
	struct fake *f = *state;
	uint64_t failed_at;

	to_failed(f, 1, IP1);
	failed_at = f->now;
	tick_at(f, failed_at + f->p.failed_hold_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(f->n_req, 0);
}

static void test_failed_tick_at_hold_removes_entry(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	tick_at(f, f->now + f->p.failed_hold_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(neigh_count(f->t), 0);
	assert_int_equal(f->n_drop, 0);
}

static void test_failed_resolve_during_hold_sends_no_request(void **state)
{
	struct fake *f = *state;
	uint64_t failed_at;

	to_failed(f, 1, IP1);
	failed_at = f->now;
	for (uint64_t t = failed_at; t < failed_at + f->p.failed_hold_ms; t += 50) {
		f->now = t;
		assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_UNREACHABLE);
	}
	assert_int_equal(f->n_req, 0);
}

static void test_failed_resolve_after_hold_starts_new_resolution(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	to_failed(f, 1, IP1);
	tick_at(f, f->now + f->p.failed_hold_ms);
	assert_int_equal(resolve(f, 1, IP1, 9), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_false(f->req[0].unicast);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_INCOMPLETE);
	assert_int_equal(info.probes, 1);
	assert_int_equal(info.queued, 1);
	assert_int_equal(info.updated_ms, f->now);
}

static void test_failed_resolve_at_hold_end_without_tick_starts_new_resolution(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	f->now += f->p.failed_hold_ms;
	assert_int_equal(resolve(f, 1, IP1, 9), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
}

static void test_failed_new_resolution_then_reply_resolves(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	tick_at(f, f->now + f->p.failed_hold_ms);
	resolve(f, 1, IP1, 1);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, 1);
	assert_int_equal(f->sent[0].id, 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
}

static void test_failed_zero_hold_removes_entry_on_failure(void **state)
{
	struct fake *f = *state;

	f->p.failed_hold_ms = 0;
	fake_reopen(f);
	resolve(f, 1, IP1, 1);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 1000);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(f->n_drop, 1);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_RESOLVE_FAILED);
}

/* --- REACHABLE -> STALE --- */

static void test_reachable_tick_before_lifetime_stays_reachable(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.reachable_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
}

static void test_reachable_tick_at_lifetime_goes_stale(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.reachable_ms);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_STALE);
	assert_int_equal(info.updated_ms, T0 + f->p.reachable_ms);
	assert_mac_equal(&info.mac, &MAC_A);
	assert_int_equal(f->n_req, 0);
}

static void test_reachable_tick_after_lifetime_goes_stale(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.reachable_ms + 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
}

/* --- DELAY -> PROBE --- */

static void test_delay_tick_before_delay_stays_delay(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.delay_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
	assert_int_equal(f->n_req, 0);
}

static void test_delay_tick_at_delay_goes_probe_with_unicast_request(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	to_delay(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.delay_ms);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_PROBE);
	assert_int_equal(info.probes, 1);
	assert_int_equal(info.updated_ms, T0 + f->p.delay_ms);
	assert_int_equal(f->n_req, 1);
	assert_true(f->req[0].unicast);
	assert_mac_equal(&f->req[0].dst, &MAC_A);
	assert_int_equal(f->req[0].ip, IP1);
}

static void test_delay_tick_after_delay_goes_probe(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.delay_ms + 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	assert_int_equal(f->n_req, 1);
}

/* --- PROBE: unicast retransmissions, then FAILED --- */

static void test_probe_tick_before_retrans_sends_nothing(void **state)
{
	struct fake *f = *state;

	to_probe(f, 1, IP1, &MAC_A);
	tick_at(f, f->now + f->p.retrans_ms - 1);
	assert_int_equal(f->n_req, 0);
}

static void test_probe_requests_are_unicast_and_spaced_by_retrans_ms(void **state)
{
	struct fake *f = *state;
	uint64_t start;

	to_delay(f, 1, IP1, &MAC_A);
	start = f->now + f->p.delay_ms;
	tick_every(f, start + f->p.ucast_probes * f->p.retrans_ms - 1, 100);
	assert_int_equal(f->n_req, f->p.ucast_probes);
	for (uint32_t i = 0; i < f->p.ucast_probes; i++) {
		assert_int_equal(f->req[i].at, start + i * f->p.retrans_ms);
		assert_true(f->req[i].unicast);
		assert_mac_equal(&f->req[i].dst, &MAC_A);
	}
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	assert_int_equal(info_of(f, 1, IP1).probes, f->p.ucast_probes);
}

static void test_probe_tick_at_last_timeout_fails(void **state)
{
	struct fake *f = *state;
	uint64_t fail_at;
	struct neigh_info info;

	to_probe(f, 1, IP1, &MAC_A);
	fail_at = f->now + f->p.ucast_probes * f->p.retrans_ms;
	tick_every(f, fail_at - 1, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	tick_at(f, fail_at);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_FAILED);
	assert_mac_equal(&info.mac, &MAC_ZERO);
	assert_int_equal(f->n_req, f->p.ucast_probes - 1);
	assert_int_equal(f->n_drop, 0);
}

static void test_probe_failed_resolve_drops_packet(void **state)
{
	struct fake *f = *state;

	to_probe(f, 1, IP1, &MAC_A);
	tick_every(f, f->now + f->p.ucast_probes * f->p.retrans_ms, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(resolve(f, 1, IP1, 5), NEIGH_UNREACHABLE);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_RESOLVE_FAILED);
}

/* --- STALE gc --- */

static void test_stale_tick_before_gc_keeps_entry(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.gc_stale_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
}

static void test_stale_tick_at_gc_removes_entry(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(neigh_count(f->t), 0);
	assert_int_equal(f->n_req + f->n_sent + f->n_drop, 0);
}

static void test_stale_gc_counts_from_entering_stale(void **state)
{
	struct fake *f = *state;
	uint64_t stale_at = T0 + f->p.reachable_ms;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, stale_at);
	tick_at(f, stale_at + f->p.gc_stale_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	tick_at(f, stale_at + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

static void test_stale_used_before_gc_is_kept(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	f->now = T0 + f->p.gc_stale_ms - 1;
	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_RESOLVED);
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
}

static void test_stale_resolve_at_gc_without_tick_starts_new_resolution(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	f->now = T0 + f->p.gc_stale_ms;
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(f->n_req, 1);
}

/* --- whole life cycles --- */

static void test_reachable_unused_ages_to_removal(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_every(f, T0 + f->p.reachable_ms + f->p.gc_stale_ms - 100, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	tick_at(f, T0 + f->p.reachable_ms + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(f->n_req, 0);
}

static void test_reachable_stale_use_then_reply_returns_to_reachable(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, T0 + f->p.reachable_ms);
	resolve(f, 1, IP1, NOPKT);
	tick_at(f, f->now + f->p.delay_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(f->n_req, 1);
}

static void test_zero_lifetimes_age_out_in_one_tick(void **state)
{
	struct fake *f = *state;

	f->p.reachable_ms = 0;
	f->p.gc_stale_ms = 0;
	fake_reopen(f);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE | NEIGH_F_SOLICITED);
	tick_at(f, T0);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

static void test_many_entries_fail_in_the_same_tick(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 100; i++)
		resolve(f, 1, IP1 + (uint32_t)i, i);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 100);
	assert_int_equal(f->n_req, 100 * f->p.mcast_probes);
	assert_int_equal(f->n_drop, 100);
	tick_at(f, f->now + f->p.failed_hold_ms);
	assert_int_equal(neigh_count(f->t), 0);
}

static void test_reachable_near_end_of_clock_does_not_wrap(void **state)
{
	struct fake *f = *state;

	f->now = UINT64_MAX - 100;
	to_reachable(f, 1, IP1, &MAC_A);
	tick_at(f, UINT64_MAX - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_incomplete_tick_before_retrans_sends_nothing),
		NEIGH_TEST(test_incomplete_tick_at_retrans_sends_second_broadcast),
		NEIGH_TEST(test_incomplete_tick_twice_at_same_time_sends_once),
		NEIGH_TEST(test_incomplete_requests_are_spaced_by_retrans_ms),
		NEIGH_TEST(test_incomplete_late_tick_sends_one_request_not_a_burst),
		NEIGH_TEST(test_incomplete_tick_before_last_timeout_stays_incomplete),
		NEIGH_TEST(test_incomplete_tick_at_last_timeout_fails_and_drops_queue_in_order),
		NEIGH_TEST(test_incomplete_mcast_probes_sets_request_count),
		NEIGH_TEST(test_incomplete_zero_mcast_probes_still_sends_one_request),
		NEIGH_TEST(test_incomplete_zero_retrans_sends_one_request_per_tick),
		NEIGH_TEST(test_failed_tick_before_hold_keeps_entry),
		NEIGH_TEST(test_failed_tick_at_hold_removes_entry),
		NEIGH_TEST(test_failed_resolve_during_hold_sends_no_request),
		NEIGH_TEST(test_failed_resolve_after_hold_starts_new_resolution),
		NEIGH_TEST(test_failed_resolve_at_hold_end_without_tick_starts_new_resolution),
		NEIGH_TEST(test_failed_new_resolution_then_reply_resolves),
		NEIGH_TEST(test_failed_zero_hold_removes_entry_on_failure),
		NEIGH_TEST(test_reachable_tick_before_lifetime_stays_reachable),
		NEIGH_TEST(test_reachable_tick_at_lifetime_goes_stale),
		NEIGH_TEST(test_reachable_tick_after_lifetime_goes_stale),
		NEIGH_TEST(test_delay_tick_before_delay_stays_delay),
		NEIGH_TEST(test_delay_tick_at_delay_goes_probe_with_unicast_request),
		NEIGH_TEST(test_delay_tick_after_delay_goes_probe),
		NEIGH_TEST(test_probe_tick_before_retrans_sends_nothing),
		NEIGH_TEST(test_probe_requests_are_unicast_and_spaced_by_retrans_ms),
		NEIGH_TEST(test_probe_tick_at_last_timeout_fails),
		NEIGH_TEST(test_probe_failed_resolve_drops_packet),
		NEIGH_TEST(test_stale_tick_before_gc_keeps_entry),
		NEIGH_TEST(test_stale_tick_at_gc_removes_entry),
		NEIGH_TEST(test_stale_gc_counts_from_entering_stale),
		NEIGH_TEST(test_stale_used_before_gc_is_kept),
		NEIGH_TEST(test_stale_resolve_at_gc_without_tick_starts_new_resolution),
		NEIGH_TEST(test_reachable_unused_ages_to_removal),
		NEIGH_TEST(test_reachable_stale_use_then_reply_returns_to_reachable),
		NEIGH_TEST(test_zero_lifetimes_age_out_in_one_tick),
		NEIGH_TEST(test_many_entries_fail_in_the_same_tick),
		NEIGH_TEST(test_reachable_near_end_of_clock_does_not_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
