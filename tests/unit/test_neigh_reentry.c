/* Callbacks that call back into the table, as the stack's drop_packet does when it answers a
 * forwarded packet with ICMP host unreachable: the ICMP error is routed and resolved through
 * neigh_resolve while the table is still dropping. Packets with ids >= NESTED are the ones
 * made inside a callback; they trigger nothing further, as ICMP errors about ICMP errors are
 * never sent. */
#include "test_neigh.h"

#define NESTED 1000

static uint32_t nested_ip;
static uint16_t nested_port;
static enum neigh_result nested_results[64];
static int n_nested;

static void resolve_from_drop(struct fake *f, int id, enum neigh_drop why)
{
	enum neigh_result r;

	if (id >= NESTED)
		return;
	r = resolve(f, nested_port, nested_ip, NESTED + id);
	if (n_nested < 64)
		nested_results[n_nested] = r;
	n_nested++;
}

static void nest_on(struct fake *f, uint16_t port, uint32_t ip)
{
	nested_port = port;
	nested_ip = ip;
	n_nested = 0;
	f->on_drop = resolve_from_drop;
}

static void test_incomplete_failure_drop_resolving_same_ip_drops_nested_packet_too(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 3; i++)
		resolve(f, 1, IP1, i);
	nest_on(f, 1, IP1);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(info_of(f, 1, IP1).queued, 0);
	assert_int_equal(n_nested, 3);
	assert_int_equal(f->n_drop, 6);
	for (size_t i = 0; i < f->n_drop; i++)
		assert_int_equal(f->drop[i].why, NEIGH_DROP_RESOLVE_FAILED);
	assert_int_equal(f->n_req, f->p.mcast_probes); /* no new resolution started */
	assert_int_equal(f->live, 0);
}

static void test_incomplete_failure_drop_on_full_table_evicts_other_failed_not_itself(void **state)
{
	struct fake *f = *state;

	f->p.max_entries = 2;
	f->p.failed_hold_ms = 100000;
	fake_reopen(f);
	resolve(f, 1, IP2, NOPKT);          /* FAILED at T0 + 3000 */
	f->now = T0 + 500;
	resolve(f, 1, IP1, 1);              /* fails at T0 + 3500 */
	resolve(f, 1, IP1, 2);
	tick_every(f, T0 + 3000, 100);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_FAILED);
	fake_clear(f);

	nest_on(f, 1, IP3);
	tick_every(f, T0 + 3500, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(state_of(f, 1, IP2), -1);
	assert_int_equal(state_of(f, 1, IP3), NEIGH_INCOMPLETE);
	assert_int_equal(info_of(f, 1, IP3).queued, 2);
	assert_int_equal(nested_results[0], NEIGH_QUEUED);
	assert_int_equal(nested_results[1], NEIGH_QUEUED);
	assert_int_equal(f->n_drop, 2);
	assert_int_equal(f->drop[0].id, 1);
	assert_int_equal(f->drop[1].id, 2);
	assert_int_equal(f->n_req, 1);      /* IP3's broadcast */
}

static void test_incomplete_failure_drop_on_full_table_cannot_evict_failing_entry(void **state)
{
	struct fake *f = *state;

	f->p.max_entries = 2;
	fake_reopen(f);
	to_reachable(f, 1, IP2, &MAC_A);
	resolve(f, 1, IP1, 1);
	resolve(f, 1, IP1, 2);
	nest_on(f, 1, IP3);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 100);
	/* The entry being failed is not a candidate while it drops its queue. */
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(state_of(f, 1, IP3), -1);
	assert_int_equal(nested_results[0], NEIGH_UNREACHABLE);
	assert_int_equal(nested_results[1], NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 4);
	assert_int_equal(f->drop[0].id, 1);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_RESOLVE_FAILED);
	assert_int_equal(f->drop[1].id, NESTED + 1);
	assert_int_equal(f->drop[1].why, NEIGH_DROP_TABLE_FULL);
	assert_int_equal(f->drop[2].id, 2);
	assert_int_equal(f->drop[3].id, NESTED + 2);
}

static void test_incomplete_failure_drop_on_one_slot_table_is_refused(void **state)
{
	struct fake *f = *state;

	f->p.max_entries = 1;
	fake_reopen(f);
	resolve(f, 1, IP1, 1);
	nest_on(f, 1, IP2);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(state_of(f, 1, IP2), -1);
	assert_int_equal(nested_results[0], NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 2);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_RESOLVE_FAILED);
	assert_int_equal(f->drop[1].why, NEIGH_DROP_TABLE_FULL);
	assert_int_equal(f->drop[1].id, NESTED + 1);
}

static void test_failed_resolve_drop_resolving_same_ip_is_dropped_again(void **state)
{
	struct fake *f = *state;

	to_failed(f, 1, IP1);
	nest_on(f, 1, IP1);
	assert_int_equal(resolve(f, 1, IP1, 5), NEIGH_UNREACHABLE);
	assert_int_equal(nested_results[0], NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 2);
	assert_int_equal(f->drop[1].id, NESTED + 5);
	assert_int_equal(f->n_req, 0);
}

static void test_full_table_drop_resolving_other_ip_is_refused_too(void **state)
{
	struct fake *f = *state;

	f->p.max_entries = 1;
	fake_reopen(f);
	resolve(f, 1, IP1, NOPKT);
	nest_on(f, 1, IP3);
	assert_int_equal(resolve(f, 1, IP2, 7), NEIGH_UNREACHABLE);
	assert_int_equal(nested_results[0], NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 2);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_incomplete_delete_drop_resolving_same_ip_starts_fresh_entry(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 3; i++)
		resolve(f, 1, IP1, i);
	fake_clear(f);
	nest_on(f, 1, IP1);
	assert_int_equal(neigh_delete(f->t, 1, INET_ADDR_V4(IP1)), 0);
	/* The old entry was out of reach: the first nested resolve made a new one. */
	assert_int_equal(f->n_drop, 3);
	assert_int_equal(nested_results[0], NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_int_equal(neigh_count(f->t), 1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(info_of(f, 1, IP1).queued, 3);
	f->on_drop = NULL;
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, 3);
	assert_int_equal(f->sent[0].id, NESTED + 0);
}

static void test_flush_drop_resolving_other_port_keeps_new_entry(void **state)
{
	struct fake *f = *state;

	for (uint32_t i = 0; i < 5; i++)
		resolve(f, 1, IP1 + i, (int)i);
	fake_clear(f);
	nest_on(f, 2, IP1);
	neigh_flush(f->t, 1);
	assert_int_equal(f->n_drop, 5);
	assert_int_equal(neigh_count(f->t), 1);
	assert_int_equal(info_of(f, 2, IP1).queued, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_incomplete_failure_drop_resolving_same_ip_drops_nested_packet_too),
		NEIGH_TEST(test_incomplete_failure_drop_on_full_table_evicts_other_failed_not_itself),
		NEIGH_TEST(test_incomplete_failure_drop_on_full_table_cannot_evict_failing_entry),
		NEIGH_TEST(test_incomplete_failure_drop_on_one_slot_table_is_refused),
		NEIGH_TEST(test_failed_resolve_drop_resolving_same_ip_is_dropped_again),
		NEIGH_TEST(test_full_table_drop_resolving_other_ip_is_refused_too),
		NEIGH_TEST(test_incomplete_delete_drop_resolving_same_ip_starts_fresh_entry),
		NEIGH_TEST(test_flush_drop_resolving_other_port_keeps_new_entry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
