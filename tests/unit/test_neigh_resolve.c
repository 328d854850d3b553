/* neigh_resolve in every state: creation of INCOMPLETE entries, queueing, the request rate
 * limit on the output path, release of the queue on resolution, and answers from the
 * resolved states. */
#include "test_neigh.h"

static void test_none_resolve_creates_incomplete_and_broadcasts(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	assert_int_equal(resolve(f, 1, IP1, 7), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_int_equal(f->req[0].port, 1);
	assert_int_equal(f->req[0].ip, IP1);
	assert_false(f->req[0].unicast);
	assert_int_equal(f->n_sent, 0);
	assert_int_equal(f->n_drop, 0);

	info = info_of(f, 1, IP1);
	assert_int_equal(info.state, NEIGH_INCOMPLETE);
	assert_int_equal(info.queued, 1);
	assert_int_equal(info.probes, 1);
	assert_int_equal(info.updated_ms, T0);
	assert_mac_equal(&info.mac, &MAC_ZERO);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_none_resolve_without_packet_only_sends_request(void **state)
{
	struct fake *f = *state;

	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_int_equal(info_of(f, 1, IP1).queued, 0);
	assert_int_equal(f->n_drop, 0);
}

static void test_none_resolve_null_mac_pointer_is_accepted(void **state)
{
	struct fake *f = *state;

	assert_int_equal(neigh_resolve(f->t, f->now, 1, INET_ADDR_V4(IP1), NULL, NULL), NEIGH_QUEUED);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(neigh_resolve(f->t, f->now, 1, INET_ADDR_V4(IP1), NULL, NULL), NEIGH_RESOLVED);
}

static void test_none_resolve_same_ip_other_port_creates_second_entry(void **state)
{
	struct fake *f = *state;

	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(resolve(f, 2, IP1, 2), NEIGH_QUEUED);
	assert_int_equal(neigh_count(f->t), 2);
	assert_int_equal(f->n_req, 2);
	assert_int_equal(f->req[1].port, 2);
	assert_int_equal(info_of(f, 1, IP1).queued, 1);
	assert_int_equal(info_of(f, 2, IP1).queued, 1);
}

static void test_incomplete_resolve_queues_without_new_request(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(resolve(f, 1, IP1, i), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(info_of(f, 1, IP1).queued, 3);
	assert_int_equal(info_of(f, 1, IP1).probes, 1);
}

static void test_incomplete_resolve_hammering_within_retrans_sends_no_request(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	/* One resolve per millisecond: the rate limit holds on the output path too. */
	for (uint32_t ms = 1; ms < f->p.retrans_ms; ms++) {
		f->now = T0 + ms;
		assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	}
	assert_int_equal(f->n_req, 0);
}

static void test_incomplete_resolve_at_retrans_deadline_sends_one_retransmit(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	/* Without a tick, the due timer runs on the next resolve; once, not twice. */
	f->now = T0 + f->p.retrans_ms;
	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_false(f->req[0].unicast);
	assert_int_equal(info_of(f, 1, IP1).probes, 2);
}

static void test_incomplete_reply_releases_queue_in_fifo_order(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 5; i++)
		assert_int_equal(resolve(f, 3, IP1, 100 + i), NEIGH_QUEUED);
	f->now += 10;
	assert_int_equal(learn(f, 3, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(f->n_sent, 5);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(f->sent[i].id, 100 + i);
		assert_int_equal(f->sent[i].port, 3);
		assert_mac_equal(&f->sent[i].mac, &MAC_A);
	}
	assert_int_equal(info_of(f, 3, IP1).queued, 0);
	assert_int_equal(f->n_drop, 0);
}

static void test_incomplete_reply_then_resolve_returns_mac(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	assert_int_equal(learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED), 0);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
}

static void test_incomplete_reused_slot_releases_only_its_own_packets(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 3; i++)
		resolve(f, 1, IP1, i);
	assert_int_equal(neigh_delete(f->t, 1, INET_ADDR_V4(IP1)), 0);
	assert_int_equal(f->n_drop, 3);
	fake_clear(f);
	for (uint32_t i = 0; i < f->p.queue_len; i++)
		assert_int_equal(resolve(f, 1, IP1, 10 + (int)i), NEIGH_QUEUED);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, f->p.queue_len);
	for (uint32_t i = 0; i < f->p.queue_len; i++)
		assert_int_equal(f->sent[i].id, 10 + (int)i);
	assert_int_equal(f->n_drop, 0);
}

static void test_reachable_resolve_returns_mac_without_request(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(f->n_sent, 0);
	assert_int_equal(f->n_drop, 0);
}

static void test_reachable_resolve_keeps_state_and_time(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	f->now += 100;
	resolve(f, 1, IP1, 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_REACHABLE);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0);
}

static void test_reachable_resolve_after_lifetime_without_tick_moves_to_delay(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	f->now = T0 + f->p.reachable_ms;
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
}

static void test_stale_resolve_moves_to_delay_and_returns_mac(void **state)
{
	struct fake *f = *state;

	to_stale(f, 1, IP1, &MAC_A);
	f->now += 5;
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0 + 5);
	assert_int_equal(f->n_req, 0); /* DELAY waits before probing */
}

static void test_delay_resolve_returns_mac_and_keeps_delay(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	f->now += 1;
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
	assert_int_equal(info_of(f, 1, IP1).updated_ms, T0);
}

static void test_delay_resolve_does_not_postpone_probe(void **state)
{
	struct fake *f = *state;

	to_delay(f, 1, IP1, &MAC_A);
	f->now = T0 + f->p.delay_ms - 1;
	resolve(f, 1, IP1, NOPKT);
	tick_at(f, T0 + f->p.delay_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	assert_int_equal(f->n_req, 1);
}

static void test_probe_resolve_returns_cached_mac(void **state)
{
	struct fake *f = *state;

	to_probe(f, 1, IP1, &MAC_A);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_A);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_PROBE);
	assert_int_equal(f->n_req, 0);
}

static void test_failed_resolve_drops_packet_as_resolve_failed(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	assert_int_equal(resolve(f, 1, IP1, 42), NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 1);
	assert_int_equal(f->drop[0].id, 42);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_RESOLVE_FAILED);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
}

static void test_failed_resolve_without_packet_is_unreachable_without_drop(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 0);
	assert_int_equal(f->n_req, 0);
}

static void test_static_resolve_returns_mac_without_request(void **state)
{
	struct fake *f = *state;

	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_B), 0);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_mac_equal(&f->mac, &MAC_B);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_none_resolve_creates_incomplete_and_broadcasts),
		NEIGH_TEST(test_none_resolve_without_packet_only_sends_request),
		NEIGH_TEST(test_none_resolve_null_mac_pointer_is_accepted),
		NEIGH_TEST(test_none_resolve_same_ip_other_port_creates_second_entry),
		NEIGH_TEST(test_incomplete_resolve_queues_without_new_request),
		NEIGH_TEST(test_incomplete_resolve_hammering_within_retrans_sends_no_request),
		NEIGH_TEST(test_incomplete_resolve_at_retrans_deadline_sends_one_retransmit),
		NEIGH_TEST(test_incomplete_reply_releases_queue_in_fifo_order),
		NEIGH_TEST(test_incomplete_reply_then_resolve_returns_mac),
		NEIGH_TEST(test_incomplete_reused_slot_releases_only_its_own_packets),
		NEIGH_TEST(test_reachable_resolve_returns_mac_without_request),
		NEIGH_TEST(test_reachable_resolve_keeps_state_and_time),
		NEIGH_TEST(test_reachable_resolve_after_lifetime_without_tick_moves_to_delay),
		NEIGH_TEST(test_stale_resolve_moves_to_delay_and_returns_mac),
		NEIGH_TEST(test_delay_resolve_returns_mac_and_keeps_delay),
		NEIGH_TEST(test_delay_resolve_does_not_postpone_probe),
		NEIGH_TEST(test_probe_resolve_returns_cached_mac),
		NEIGH_TEST(test_failed_resolve_drops_packet_as_resolve_failed),
		NEIGH_TEST(test_failed_resolve_without_packet_is_unreachable_without_drop),
		NEIGH_TEST(test_static_resolve_returns_mac_without_request),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
