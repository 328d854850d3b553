/* Bounded resources: the per-entry queue and the table capacity, with the eviction policy
 * (oldest FAILED, then oldest STALE; never STATIC, INCOMPLETE, REACHABLE, DELAY or PROBE). */
#include "test_neigh.h"

#define LONG_HOLD 1000000u

static void small_table(struct fake *f, uint32_t entries)
{
	f->p.max_entries = entries;
	f->p.failed_hold_ms = LONG_HOLD; /* FAILED entries stay until evicted */
	fake_reopen(f);
}

/* --- queue --- */

static void test_incomplete_queue_full_drops_new_packet(void **state)
{
	struct fake *f = *state;

	for (uint32_t i = 0; i < f->p.queue_len; i++)
		assert_int_equal(resolve(f, 1, IP1, (int)i), NEIGH_QUEUED);
	assert_int_equal(resolve(f, 1, IP1, 99), NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 1);
	assert_int_equal(f->drop[0].id, 99);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_QUEUE_FULL);
	assert_int_equal(info_of(f, 1, IP1).queued, f->p.queue_len);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(f->n_req, 1);
}

static void test_incomplete_queue_full_then_reply_sends_first_packets_in_order(void **state)
{
	struct fake *f = *state;

	for (uint32_t i = 0; i < f->p.queue_len + 3; i++)
		resolve(f, 1, IP1, (int)i);
	assert_int_equal(f->n_drop, 3);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, f->p.queue_len);
	for (uint32_t i = 0; i < f->p.queue_len; i++)
		assert_int_equal(f->sent[i].id, (int)i);
}

static void test_incomplete_queue_full_without_packet_is_still_queued(void **state)
{
	struct fake *f = *state;

	for (uint32_t i = 0; i < f->p.queue_len; i++)
		resolve(f, 1, IP1, (int)i);
	assert_int_equal(resolve(f, 1, IP1, NOPKT), NEIGH_QUEUED);
	assert_int_equal(f->n_drop, 0);
}

static void test_incomplete_queue_len_one_keeps_first_packet(void **state)
{
	struct fake *f = *state;

	f->p.queue_len = 1;
	fake_reopen(f);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(resolve(f, 1, IP1, 2), NEIGH_UNREACHABLE);
	learn(f, 1, IP1, &MAC_A, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, 1);
	assert_int_equal(f->sent[0].id, 1);
	assert_int_equal(f->drop[0].id, 2);
}

static void test_incomplete_queues_are_per_entry(void **state)
{
	struct fake *f = *state;

	for (uint32_t i = 0; i < f->p.queue_len; i++)
		resolve(f, 1, IP1, (int)i);
	assert_int_equal(resolve(f, 1, IP2, 50), NEIGH_QUEUED);
	learn(f, 1, IP2, &MAC_B, NEIGH_F_SOLICITED);
	assert_int_equal(f->n_sent, 1);
	assert_int_equal(f->sent[0].id, 50);
	assert_int_equal(info_of(f, 1, IP1).queued, f->p.queue_len);
}

/* --- table full, nothing evictable --- */

static void test_full_table_resolve_drops_packet_as_table_full(void **state)
{
	struct fake *f = *state;

	small_table(f, 4);
	for (uint32_t i = 0; i < 4; i++)
		resolve(f, 1, IP1 + i, (int)i);
	fake_clear(f);
	assert_int_equal(resolve(f, 1, IP1 + 4, 77), NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 1);
	assert_int_equal(f->drop[0].id, 77);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_TABLE_FULL);
	assert_int_equal(f->n_req, 0);
	assert_int_equal(neigh_count(f->t), 4);
	assert_int_equal(state_of(f, 1, IP1 + 4), -1);
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(info_of(f, 1, IP1 + i).queued, 1);
}

static void test_full_table_resolve_without_packet_is_unreachable(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	resolve(f, 1, IP1, NOPKT);
	assert_int_equal(resolve(f, 1, IP2, NOPKT), NEIGH_UNREACHABLE);
	assert_int_equal(f->n_drop, 0);
}

static void test_full_table_never_evicts_in_use_entries(void **state)
{
	struct fake *f = *state;

	small_table(f, 5);
	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	to_probe(f, 2, IP3, &MAC_A);
	to_reachable(f, 1, IP2, &MAC_A);
	to_delay(f, 1, IP3, &MAC_A);
	to_incomplete(f, 1, IP1 + 10); /* nothing queued: still not a candidate */
	assert_int_equal(resolve(f, 3, IP1, 1), NEIGH_UNREACHABLE);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_TABLE_FULL);
	assert_int_equal(learn(f, 3, IP1, &MAC_B, NEIGH_F_CREATE), -ENOSPC);
	assert_int_equal(neigh_add_static(f->t, 3, INET_ADDR_V4(IP1), &MAC_B), -ENOSPC);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STATIC);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_REACHABLE);
	assert_int_equal(state_of(f, 1, IP3), NEIGH_DELAY);
	assert_int_equal(state_of(f, 2, IP3), NEIGH_PROBE);
	assert_int_equal(state_of(f, 1, IP1 + 10), NEIGH_INCOMPLETE);
}

static void test_full_table_existing_entries_keep_working(void **state)
{
	struct fake *f = *state;

	small_table(f, 2);
	resolve(f, 1, IP1, 1);
	resolve(f, 1, IP2, 2);
	assert_int_equal(resolve(f, 1, IP1, 3), NEIGH_QUEUED);
	assert_int_equal(learn(f, 1, IP2, &MAC_B, NEIGH_F_SOLICITED), 0);
	assert_int_equal(resolve(f, 1, IP2, 4), NEIGH_RESOLVED);
	assert_int_equal(info_of(f, 1, IP1).queued, 2);
}

static void test_full_table_learn_without_create_is_ignored(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	resolve(f, 1, IP1, NOPKT);
	assert_int_equal(learn(f, 1, IP2, &MAC_B, 0), 0);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_full_table_delete_frees_a_slot(void **state)
{
	struct fake *f = *state;

	small_table(f, 2);
	resolve(f, 1, IP1, NOPKT);
	resolve(f, 1, IP2, NOPKT);
	assert_int_equal(resolve(f, 1, IP3, NOPKT), NEIGH_UNREACHABLE);
	neigh_delete(f->t, 1, INET_ADDR_V4(IP1));
	assert_int_equal(resolve(f, 1, IP3, NOPKT), NEIGH_QUEUED);
	assert_int_equal(neigh_count(f->t), 2);
}

/* --- eviction --- */

static void test_full_table_resolve_evicts_oldest_failed_before_older_stale(void **state)
{
	struct fake *f = *state;

	small_table(f, 4);
	to_stale(f, 1, IP3, &MAC_A);       /* STALE since T0: older than both FAILED */
	resolve(f, 1, IP1, NOPKT);         /* FAILED at T0 + 3000 */
	f->now = T0 + 500;
	resolve(f, 1, IP2, NOPKT);         /* FAILED at T0 + 3500 */
	to_reachable(f, 2, IP1, &MAC_B);
	tick_every(f, T0 + 3500, 100);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_FAILED);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_FAILED);
	fake_clear(f);

	assert_int_equal(resolve(f, 3, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_FAILED);
	assert_int_equal(state_of(f, 1, IP3), NEIGH_STALE);
	assert_int_equal(f->n_drop, 0);

	assert_int_equal(resolve(f, 3, IP2, 2), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP2), -1);
	assert_int_equal(state_of(f, 1, IP3), NEIGH_STALE);

	assert_int_equal(resolve(f, 3, IP3, 3), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP3), -1);

	assert_int_equal(resolve(f, 4, IP1, 4), NEIGH_UNREACHABLE);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_TABLE_FULL);
	assert_int_equal(state_of(f, 2, IP1), NEIGH_REACHABLE);
	assert_int_equal(neigh_count(f->t), 4);
}

static void test_full_table_evicts_stale_in_order_of_becoming_stale(void **state)
{
	struct fake *f = *state;

	small_table(f, 3);
	to_reachable(f, 1, IP1, &MAC_A);   /* created first, STALE only at T0 + 30000 */
	f->now = T0 + 100;
	to_stale(f, 1, IP2, &MAC_A);       /* created later, STALE at once */
	f->now = T0 + 200;
	to_stale(f, 1, IP3, &MAC_A);
	tick_at(f, T0 + f->p.reachable_ms);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_STALE);

	resolve(f, 2, IP1, NOPKT);
	assert_int_equal(state_of(f, 1, IP2), -1);
	resolve(f, 2, IP2, NOPKT);
	assert_int_equal(state_of(f, 1, IP3), -1);
	resolve(f, 2, IP3, NOPKT);
	assert_int_equal(state_of(f, 1, IP1), -1);
}

static void test_full_table_stale_used_is_no_longer_evictable(void **state)
{
	struct fake *f = *state;

	small_table(f, 2);
	to_stale(f, 1, IP1, &MAC_A);
	to_stale(f, 1, IP2, &MAC_A);
	resolve(f, 1, IP1, NOPKT); /* DELAY now */
	assert_int_equal(resolve(f, 2, IP1, NOPKT), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_DELAY);
	assert_int_equal(state_of(f, 1, IP2), -1);
}

static void test_full_table_learn_create_evicts_failed(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	to_failed(f, 1, IP1);
	assert_int_equal(learn(f, 1, IP2, &MAC_B, NEIGH_F_CREATE), 0);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_STALE);
}

static void test_full_table_learn_create_returns_enospc(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(learn(f, 1, IP2, &MAC_B, NEIGH_F_CREATE | NEIGH_F_SOLICITED), -ENOSPC);
	assert_int_equal(neigh_count(f->t), 1);
}

static void test_full_table_add_static_evicts_stale(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	to_stale(f, 1, IP1, &MAC_A);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP2), &MAC_B), 0);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_STATIC);
}

static void test_full_table_of_statics_refuses_everything(void **state)
{
	struct fake *f = *state;

	small_table(f, 2);
	neigh_add_static(f->t, 1, INET_ADDR_V4(IP1), &MAC_A);
	neigh_add_static(f->t, 1, INET_ADDR_V4(IP2), &MAC_A);
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP3), &MAC_A), -ENOSPC);
	assert_int_equal(resolve(f, 1, IP3, 1), NEIGH_UNREACHABLE);
	assert_int_equal(learn(f, 1, IP3, &MAC_A, NEIGH_F_CREATE), -ENOSPC);
	/* Replacing an existing static needs no new slot. */
	assert_int_equal(neigh_add_static(f->t, 1, INET_ADDR_V4(IP2), &MAC_B), 0);
}

static void test_full_table_evicted_entry_can_come_back(void **state)
{
	struct fake *f = *state;

	small_table(f, 1);
	to_stale(f, 1, IP1, &MAC_A);
	resolve(f, 1, IP2, 1);
	learn(f, 1, IP2, &MAC_B, NEIGH_F_SOLICITED);
	tick_at(f, f->now + f->p.reachable_ms);
	assert_int_equal(state_of(f, 1, IP2), NEIGH_STALE);
	fake_clear(f);
	assert_int_equal(resolve(f, 1, IP1, 2), NEIGH_QUEUED);
	assert_int_equal(state_of(f, 1, IP2), -1);
	assert_int_equal(state_of(f, 1, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(f->n_req, 1);
	assert_int_equal(f->n_drop, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_incomplete_queue_full_drops_new_packet),
		NEIGH_TEST(test_incomplete_queue_full_then_reply_sends_first_packets_in_order),
		NEIGH_TEST(test_incomplete_queue_full_without_packet_is_still_queued),
		NEIGH_TEST(test_incomplete_queue_len_one_keeps_first_packet),
		NEIGH_TEST(test_incomplete_queues_are_per_entry),
		NEIGH_TEST(test_full_table_resolve_drops_packet_as_table_full),
		NEIGH_TEST(test_full_table_resolve_without_packet_is_unreachable),
		NEIGH_TEST(test_full_table_never_evicts_in_use_entries),
		NEIGH_TEST(test_full_table_existing_entries_keep_working),
		NEIGH_TEST(test_full_table_learn_without_create_is_ignored),
		NEIGH_TEST(test_full_table_delete_frees_a_slot),
		NEIGH_TEST(test_full_table_resolve_evicts_oldest_failed_before_older_stale),
		NEIGH_TEST(test_full_table_evicts_stale_in_order_of_becoming_stale),
		NEIGH_TEST(test_full_table_stale_used_is_no_longer_evictable),
		NEIGH_TEST(test_full_table_learn_create_evicts_failed),
		NEIGH_TEST(test_full_table_learn_create_returns_enospc),
		NEIGH_TEST(test_full_table_add_static_evicts_stale),
		NEIGH_TEST(test_full_table_of_statics_refuses_everything),
		NEIGH_TEST(test_full_table_evicted_entry_can_come_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
