/* STATIC (permanent) entries: configured, never aged, never overwritten by ARP. */
#include "test_neigh.h"

static void test_none_add_static_creates_permanent_entry(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A), 0);
	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_STATIC);
	assert_mac_equal(&info.mac, &MAC_A);
	assert_int_equal(info.queued, 0);
	assert_int_equal(info.probes, 0);
	assert_int_equal(neigh_count(f->t), 1);
	assert_int_equal(f->n_req + f->n_sent + f->n_drop, 0);
	assert_string_equal(neigh_state_str(info.state), "permanent");
}

static void test_static_add_takes_latest_clock_as_updated_time(void **state)
{
	struct fake *f = *state;

	tick_at(f, T0 + 1234);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A), 0);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0 + 1234);
}

static void test_static_learn_conflicting_mac_returns_eperm_and_changes_nothing(void **state)
{
	struct fake *f = *state;
	struct neigh_info before, after;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	before = info_of(f, 1, IP1);
	f->now += 100;
	assert_int_equal(learn(f, 1, IP1, &MAC_B, 0), -EPERM);
	assert_int_equal(learn(f, 1, IP1, &MAC_B, NEIGH_F_CREATE), -EPERM);
	after = info_of(f, 1, IP1);
	assert_info_equal(&before, &after);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
}

static void test_static_learn_conflicting_solicited_returns_eperm(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_B, NEIGH_F_SOLICITED | NEIGH_F_CREATE), -EPERM);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_entry_mac(f, 1, IP1, &MAC_A);
}

static void test_static_learn_same_mac_returns_zero_unchanged(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_CREATE), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_static_learn_on_other_port_does_not_touch_it(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	assert_int_equal(learn(f, 2, IP1, &MAC_B, NEIGH_F_CREATE), 0);
	assert_int_equal(state_of(f, 2, IP1), NEIGH_STALE);
	assert_entry_mac(f, 1, IP1, &MAC_A);
}

static void test_static_tick_never_changes_it(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	tick_at(f, T0 + 1000ull * 3600 * 24 * 365);
	tick_at(f, UINT64_MAX - 1);
	tick_at(f, UINT64_MAX);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(f->n_req, 0);
}

static void test_static_resolve_after_long_time_sends_no_request(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	for (int i = 0; i < 10; i++) {
		tick_at(f, f->now + f->p.reachable_ms + f->p.delay_ms);
		assert_int_equal(resolve(f, 1, IP1, i), NEIGH_RESOLVED);
	}
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(f->n_req, 0);
}

static void test_incomplete_add_static_releases_queue_in_fifo_order(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 3; i++)
		resolve(f, 1, IP1, i);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_B), 0);
	assert_int_equal(f->n_sent, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(f->sent[i].id, i);
		assert_mac_equal(&f->sent[i].mac, &MAC_B);
	}
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(info_of(f, 1, IP1).queued, 0);
	/* No retransmission any more. */
	tick_every(f, T0 + 10 * f->p.retrans_ms, 100);
	assert_int_equal(f->n_req, 1);
}

static void test_reachable_add_static_replaces_it(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_B), 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_entry_mac(f, 1, IP1, &MAC_B);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_failed_add_static_replaces_it(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_B), 0);
	tick_at(f, f->now + f->p.failed_hold_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
}

static void test_stale_add_static_replaces_it_and_stops_gc(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A), 0);
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
}

static void test_static_add_static_replaces_mac(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_B), 0);
	assert_entry_mac(f, 1, IP1, &MAC_B);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_static_delete_removes_it(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	assert_int_equal(neigh_delete(f->t, 1, INET_ADDR_V4(IP1)), 0);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
}

static void test_static_flush_keeps_it(void **state)
{
	struct fake *f = *state;

	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	to_reachable(f, 1, IP2, &MAC_B);
	neigh_flush(f->t, 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(state_of(f, 1, IP2), -1);
	neigh_flush(f->t, NEIGH_ALL_PORTS);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_static_broadcast_mac_is_accepted_from_configuration(void **state)
{
	struct fake *f = *state;

	/* The administrator may map an address to a group MAC; ARP may not (learn ignores). */
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_BCAST), 0);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_BCAST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_none_add_static_creates_permanent_entry),
		NEIGH_TEST(test_static_add_takes_latest_clock_as_updated_time),
		NEIGH_TEST(test_static_learn_conflicting_mac_returns_eperm_and_changes_nothing),
		NEIGH_TEST(test_static_learn_conflicting_solicited_returns_eperm),
		NEIGH_TEST(test_static_learn_same_mac_returns_zero_unchanged),
		NEIGH_TEST(test_static_learn_on_other_port_does_not_touch_it),
		NEIGH_TEST(test_static_tick_never_changes_it),
		NEIGH_TEST(test_static_resolve_after_long_time_sends_no_request),
		NEIGH_TEST(test_incomplete_add_static_releases_queue_in_fifo_order),
		NEIGH_TEST(test_reachable_add_static_replaces_it),
		NEIGH_TEST(test_failed_add_static_replaces_it),
		NEIGH_TEST(test_stale_add_static_replaces_it_and_stops_gc),
		NEIGH_TEST(test_static_add_static_replaces_mac),
		NEIGH_TEST(test_static_delete_removes_it),
		NEIGH_TEST(test_static_flush_keeps_it),
		NEIGH_TEST(test_static_broadcast_mac_is_accepted_from_configuration),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
