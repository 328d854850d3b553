/* neigh_learn (the ARP input path, RFC 826 merge) in every state: creation, confirmation,
 * address changes, release of queued packets, and claims that are ignored. */
#include "test_neigh.h"

static void test_none_learn_without_create_is_ignored(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_A, 0), 0);
	assert_int_equal(neigh_count(f->t), 0);
	assert_int_equal(f->n_req + f->n_sent + f->n_drop, 0);
}

static void test_none_learn_solicited_without_create_is_ignored(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(neigh_count(f->t), 0);
}

static void test_none_learn_create_makes_stale(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE), 0);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_STALE);
	assert_mac_equal(&info.mac, &MAC_A);
	assert_int_equal(info.updated_ms, T0);
	assert_int_equal(info.probes, 0);
	assert_int_equal(f->n_req, 0);
}

static void test_none_learn_create_solicited_makes_reachable(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE | NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_entry_mac(f, 1, IP1, &MAC_A);
}

static void test_none_learn_broadcast_mac_is_ignored(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_BCAST, NEIGH_F_CREATE | NEIGH_F_SOLICITED), 0);
	assert_int_equal(neigh_count(f->t), 0);
}

static void test_none_learn_multicast_mac_is_ignored(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_MCAST, NEIGH_F_CREATE), 0);
	assert_int_equal(neigh_count(f->t), 0);
}

static void test_none_learn_zero_mac_is_ignored(void **state)
{
	struct fake *f = *state;

	assert_int_equal(learn(f, 1, IP1, &MAC_ZERO, NEIGH_F_CREATE), 0);
	assert_int_equal(neigh_count(f->t), 0);
}

static void test_incomplete_learn_solicited_goes_reachable(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	to_incomplete(f, 1, IP1);
	f->now += 300;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_REACHABLE);
	assert_mac_equal(&info.mac, &MAC_A);
	assert_int_equal(info.updated_ms, T0 + 300);
	assert_int_equal(info.probes, 0);
}

static void test_incomplete_learn_unsolicited_without_queue_goes_stale(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_A);
}

static void test_incomplete_learn_unsolicited_with_queue_sends_and_goes_delay(void **state)
{
	struct fake *f = *state;

	resolve(f, 1, IP1, 1);
	resolve(f, 1, IP1, 2);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE), 0);
	assert_int_equal(f->n_sent, 2);
	assert_int_equal(f->sent[0].id, 1);
	assert_int_equal(f->sent[1].id, 2);
	/* Sending the queue used the STALE entry. */
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
}

static void test_incomplete_learn_broadcast_mac_is_ignored(void **state)
{
	struct fake *f = *state;

	resolve(f, 1, IP1, 1);
	assert_int_equal(learn(f, 1, IP1, &MAC_BCAST, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(info_of(f, 1, IP1).queued, 1);
	assert_int_equal(f->n_sent, 0);
}

static void test_incomplete_learn_on_other_port_does_not_resolve(void **state)
{
	struct fake *f = *state;

	resolve(f, 1, IP1, 1);
	assert_int_equal(learn(f, 2, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(state_of(f, 2, IP1), -1);
	assert_int_equal(f->n_sent, 0);
}

static void test_incomplete_learn_create_does_not_duplicate(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_reachable_learn_same_mac_unsolicited_changes_nothing(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	f->now += 1000;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0);
	/* ... and it does not count as a confirmation. */
	tick_at(f, T0 + f->p.reachable_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
}

static void test_reachable_learn_new_mac_unsolicited_goes_stale(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	f->now += 10;
	assert_int_equal(learn(f, 1, IP1, &MAC_B, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_B);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0 + 10);
}

static void test_reachable_learn_new_mac_solicited_stays_reachable(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_B, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_B);
}

static void test_reachable_learn_solicited_restarts_lifetime(void **state)
{
	struct fake *f = *state;
	uint64_t confirm = T0 + 10000;

	to_reachable(f, 1, IP1, &MAC_A);
	f->now = confirm;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0); /* no state change */
	tick_at(f, T0 + f->p.reachable_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	tick_at(f, confirm + f->p.reachable_ms - 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	tick_at(f, confirm + f->p.reachable_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
}

static void test_stale_learn_solicited_goes_reachable(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
}

static void test_stale_learn_same_mac_unsolicited_keeps_gc_deadline(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	f->now = T0 + 100;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE), 0);
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

static void test_stale_learn_new_mac_unsolicited_stays_stale_and_restarts_gc(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	f->now = T0 + 100;
	assert_int_equal(learn(f, 1, IP1, &MAC_B, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_B);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0); /* no state change */
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	tick_at(f, T0 + 100 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

static void test_delay_learn_solicited_goes_reachable_without_probe(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	f->now += 1;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	tick_at(f, T0 + f->p.delay_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(f->n_req, 0);
}

static void test_delay_learn_same_mac_unsolicited_keeps_delay(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
}

static void test_delay_learn_new_mac_unsolicited_goes_stale(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_B, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_B);
}

static void test_probe_learn_solicited_goes_reachable_and_stops_probing(void **state)
{
	struct fake *f = *state;
	uint64_t probe_at;

	to_probe(f, 1, IP1, &MAC_A);
	probe_at = f->now;
	f->now += 10;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(info_of(f, 1, IP1).probes, 0);
	tick_every(f, probe_at + 10 * f->p.retrans_ms, 100);
	assert_int_equal(f->n_req, 0);
}

static void test_probe_learn_same_mac_unsolicited_keeps_probing(void **state)
{
	struct fake *f = *state;

	to_probe(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	tick_at(f, f->now + f->p.retrans_ms);
	assert_int_equal(f->n_req, 1);
	assert_true(f->req[0].unicast);
}

static void test_probe_learn_new_mac_unsolicited_goes_stale(void **state)
{
	struct fake *f = *state;

	to_probe(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_B, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_int_equal(info_of(f, 1, IP1).probes, 0);
}

static void test_failed_learn_solicited_goes_reachable(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
}

static void test_failed_learn_unsolicited_goes_stale(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, 0), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_A);
}

static void test_failed_learn_after_hold_without_create_is_ignored(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	/* No tick came, but the hold is over: the entry is gone for learn too. */
	f->now += f->p.failed_hold_ms;
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_none_learn_without_create_is_ignored),
		NEIGH_TEST(test_none_learn_solicited_without_create_is_ignored),
		NEIGH_TEST(test_none_learn_create_makes_stale),
		NEIGH_TEST(test_none_learn_create_solicited_makes_reachable),
		NEIGH_TEST(test_none_learn_broadcast_mac_is_ignored),
		NEIGH_TEST(test_none_learn_multicast_mac_is_ignored),
		NEIGH_TEST(test_none_learn_zero_mac_is_ignored),
		NEIGH_TEST(test_incomplete_learn_solicited_goes_reachable),
		NEIGH_TEST(test_incomplete_learn_unsolicited_without_queue_goes_stale),
		NEIGH_TEST(test_incomplete_learn_unsolicited_with_queue_sends_and_goes_delay),
		NEIGH_TEST(test_incomplete_learn_broadcast_mac_is_ignored),
		NEIGH_TEST(test_incomplete_learn_on_other_port_does_not_resolve),
		NEIGH_TEST(test_incomplete_learn_create_does_not_duplicate),
		NEIGH_TEST(test_reachable_learn_same_mac_unsolicited_changes_nothing),
		NEIGH_TEST(test_reachable_learn_new_mac_unsolicited_goes_stale),
		NEIGH_TEST(test_reachable_learn_new_mac_solicited_stays_reachable),
		NEIGH_TEST(test_reachable_learn_solicited_restarts_lifetime),
		NEIGH_TEST(test_stale_learn_solicited_goes_reachable),
		NEIGH_TEST(test_stale_learn_same_mac_unsolicited_keeps_gc_deadline),
		NEIGH_TEST(test_stale_learn_new_mac_unsolicited_stays_stale_and_restarts_gc),
		NEIGH_TEST(test_delay_learn_solicited_goes_reachable_without_probe),
		NEIGH_TEST(test_delay_learn_same_mac_unsolicited_keeps_delay),
		NEIGH_TEST(test_delay_learn_new_mac_unsolicited_goes_stale),
		NEIGH_TEST(test_probe_learn_solicited_goes_reachable_and_stops_probing),
		NEIGH_TEST(test_probe_learn_same_mac_unsolicited_keeps_probing),
		NEIGH_TEST(test_probe_learn_new_mac_unsolicited_goes_stale),
		NEIGH_TEST(test_failed_learn_solicited_goes_reachable),
		NEIGH_TEST(test_failed_learn_unsolicited_goes_stale),
		NEIGH_TEST(test_failed_learn_after_hold_without_create_is_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
