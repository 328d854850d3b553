/* The table as a container: create/destroy, delete, flush, lookup, walk, count, and many
 * entries sharing hash chains (the same ip on 1000 ports, random churn against a model). */
#include "test_neigh.h"

/* White box, for one test: it checks that the big tables really collide in the hash. */
#include "l2/neigh_priv.h"

/* --- create / destroy / params --- */

static void test_create_rejects_bad_params(void **state)
{
	struct fake *f = *state;
	struct neigh_params p = f->p;
	struct neigh_ops ops = f->ops;

	p.max_entries = 0;
	assert_null(neigh_table_create(&p, &f->ops, f));
	p = f->p;
	p.queue_len = 0;
	assert_null(neigh_table_create(&p, &f->ops, f));
	p = f->p;
	p.max_entries = UINT32_MAX;
	assert_null(neigh_table_create(&p, &f->ops, f));
	p = f->p;
	p.queue_len = UINT32_MAX;
	p.max_entries = 1u << 30; /* the queues alone would not fit in size_t */
	assert_null(neigh_table_create(&p, &f->ops, f));
	assert_null(neigh_table_create(NULL, &f->ops, f));
	assert_null(neigh_table_create(&f->p, NULL, f));
	ops.drop_packet = NULL;
	assert_null(neigh_table_create(&f->p, &ops, f));
}

static void test_create_one_entry_table_works(void **state)
{
	struct fake *f = *state;

	f->p.max_entries = 1;
	fake_reopen(f);
	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_RESOLVED);
	assert_int_equal(neigh_delete(f->t, 1, IP1), 0);
	assert_int_equal(resolve(f, 1, IP2, 2), NEIGH_QUEUED);
}

static void test_params_default_are_linux_values(void **state)
{
	struct neigh_params p;

	(void)state;
	memset(&p, 0xa5, sizeof(p));
	neigh_params_default(&p);
	assert_int_equal(p.reachable_ms, 30000);
	assert_int_equal(p.delay_ms, 5000);
	assert_int_equal(p.retrans_ms, 1000);
	assert_int_equal(p.mcast_probes, 3);
	assert_int_equal(p.ucast_probes, 3);
	assert_int_equal(p.failed_hold_ms, 3000);
	assert_int_equal(p.gc_stale_ms, 60000);
	assert_int_equal(p.queue_len, 8);
	assert_int_equal(p.max_entries, 1024);
}

static void test_state_str_names_every_state(void **state)
{
	static const char *const want[NEIGH_STATE_COUNT] = {
		"incomplete", "reachable", "stale", "delay", "probe", "failed", "permanent",
	};

	(void)state;
	for (int s = 0; s < NEIGH_STATE_COUNT; s++)
		assert_string_equal(neigh_state_str((enum neigh_state)s), want[s]);
	assert_string_equal(neigh_state_str(NEIGH_STATE_COUNT), "?");
	assert_string_equal(neigh_state_str((enum neigh_state)-1), "?");
}

static void test_destroy_null_is_a_no_op(void **state)
{
	(void)state;
	neigh_table_destroy(NULL);
}

static void test_destroy_drops_every_queued_packet_as_flushed(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 5; i++)
		resolve(f, 1, IP1, i);
	for (int i = 0; i < 3; i++)
		resolve(f, 2, IP2, 10 + i);
	to_reachable(f, 1, IP3, &MAC_A);
	neigh_table_destroy(f->t);
	f->t = NULL;
	assert_int_equal(f->n_drop, 8);
	for (size_t i = 0; i < f->n_drop; i++)
		assert_int_equal(f->drop[i].why, NEIGH_DROP_FLUSHED);
	assert_int_equal(f->live, 0);
	assert_int_equal(f->n_sent, 0);
}

/* --- delete --- */

static void test_incomplete_delete_drops_queue_as_flushed_in_order(void **state)
{
	struct fake *f = *state;

	for (int i = 0; i < 4; i++)
		resolve(f, 1, IP1, i);
	assert_int_equal(neigh_delete(f->t, 1, IP1), 0);
	assert_int_equal(f->n_drop, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(f->drop[i].id, i);
		assert_int_equal(f->drop[i].why, NEIGH_DROP_FLUSHED);
	}
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(neigh_count(f->t), 0);
	/* No timer of the deleted entry survives. */
	tick_every(f, T0 + 10 * f->p.retrans_ms, 100);
	assert_int_equal(f->n_req, 1);
}

static void test_none_delete_returns_enoent(void **state)
{
	struct fake *f = *state;

	assert_int_equal(neigh_delete(f->t, 1, IP1), -ENOENT);
	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(neigh_delete(f->t, 2, IP1), -ENOENT);
	assert_int_equal(neigh_delete(f->t, 1, IP1), 0);
	assert_int_equal(neigh_delete(f->t, 1, IP1), -ENOENT);
}

static void test_reachable_delete_then_resolve_starts_over(void **state)
{
	struct fake *f = *state;

	to_reachable(f, 1, IP1, &MAC_A);
	neigh_delete(f->t, 1, IP1);
	assert_int_equal(resolve(f, 1, IP1, 1), NEIGH_QUEUED);
	assert_int_equal(f->n_req, 1);
	assert_false(f->req[0].unicast);
}

static void test_each_state_delete_removes_it(void **state)
{
	struct fake *f = *state;

	to_incomplete(f, 1, IP1);
	to_reachable(f, 2, IP1, &MAC_A);
	to_probe(f, 3, IP1, &MAC_A);   /* moves the clock: create the others after */
	to_stale(f, 4, IP1, &MAC_A);
	to_delay(f, 5, IP1, &MAC_A);
	to_failed(f, 6, IP1);
	neigh_add_static(f->t, 7, IP1, &MAC_A);
	assert_int_equal(neigh_count(f->t), 7);
	for (uint16_t port = 1; port <= 7; port++)
		assert_int_equal(neigh_delete(f->t, port, IP1), 0);
	assert_int_equal(neigh_count(f->t), 0);
}

/* --- flush --- */

static void test_flush_port_removes_only_that_ports_dynamic_entries(void **state)
{
	struct fake *f = *state;

	resolve(f, 1, IP1, 1);
	resolve(f, 1, IP1, 2);
	resolve(f, 2, IP1, 3);
	learn(f, 1, IP2, &MAC_A, NEIGH_F_CREATE);
	learn(f, 2, IP2, &MAC_A, NEIGH_F_CREATE);
	neigh_add_static(f->t, 1, IP3, &MAC_A);
	neigh_flush(f->t, 1);
	assert_int_equal(f->n_drop, 2);
	assert_int_equal(f->drop[0].id, 1);
	assert_int_equal(f->drop[1].id, 2);
	assert_int_equal(f->drop[0].why, NEIGH_DROP_FLUSHED);
	assert_int_equal(state_of(f, 1, IP1), -1);
	assert_int_equal(state_of(f, 1, IP2), -1);
	assert_int_equal(state_of(f, 1, IP3), NEIGH_STATIC);
	assert_int_equal(state_of(f, 2, IP1), NEIGH_INCOMPLETE);
	assert_int_equal(state_of(f, 2, IP2), NEIGH_STALE);
	assert_int_equal(neigh_count(f->t), 3);
}

static void test_flush_all_ports_removes_every_dynamic_entry(void **state)
{
	struct fake *f = *state;

	for (uint16_t port = 0; port < 10; port++) {
		resolve(f, port, IP1, port);
		learn(f, port, IP2, &MAC_A, NEIGH_F_CREATE);
	}
	neigh_add_static(f->t, 3, IP3, &MAC_A);
	neigh_flush(f->t, NEIGH_ALL_PORTS);
	assert_int_equal(f->n_drop, 10);
	assert_int_equal(neigh_count(f->t), 1);
	assert_int_equal(state_of(f, 3, IP3), NEIGH_STATIC);
}

static void test_flush_empty_table_does_nothing(void **state)
{
	struct fake *f = *state;

	neigh_flush(f->t, NEIGH_ALL_PORTS);
	neigh_flush(f->t, 0);
	assert_int_equal(neigh_count(f->t), 0);
	assert_int_equal(f->n_drop, 0);
}

/* --- lookup / walk / count --- */

static void test_lookup_absent_returns_enoent(void **state)
{
	struct fake *f = *state;
	struct neigh_info info;

	assert_int_equal(neigh_lookup(f->t, 1, IP1, &info), -ENOENT);
	to_reachable(f, 1, IP1, &MAC_A);
	assert_int_equal(neigh_lookup(f->t, 2, IP1, &info), -ENOENT);
	assert_int_equal(neigh_lookup(f->t, 1, IP2, &info), -ENOENT);
	assert_int_equal(neigh_lookup(f->t, 1, IP1, &info), 0);
	assert_int_equal(info.port, 1);
	assert_int_equal(info.ip, IP1);
}

struct walk_acc {
	int calls;
	int stop_after;
	uint32_t ports_seen[16];
	int states[NEIGH_STATE_COUNT];
};

static int walk_collect(const struct neigh_info *info, void *arg)
{
	struct walk_acc *acc = arg;

	acc->calls++;
	if (info->port < 16)
		acc->ports_seen[info->port]++;
	acc->states[info->state]++;
	return acc->stop_after != 0 && acc->calls == acc->stop_after ? 42 : 0;
}

static void test_walk_visits_every_entry_once(void **state)
{
	struct fake *f = *state;
	struct walk_acc acc = {0};

	to_incomplete(f, 1, IP1);
	to_reachable(f, 2, IP1, &MAC_A);
	to_stale(f, 3, IP1, &MAC_A);
	neigh_add_static(f->t, 4, IP1, &MAC_A);
	assert_int_equal(neigh_walk(f->t, walk_collect, &acc), 0);
	assert_int_equal(acc.calls, 4);
	for (int port = 1; port <= 4; port++)
		assert_int_equal(acc.ports_seen[port], 1);
	assert_int_equal(acc.states[NEIGH_INCOMPLETE], 1);
	assert_int_equal(acc.states[NEIGH_REACHABLE], 1);
	assert_int_equal(acc.states[NEIGH_STALE], 1);
	assert_int_equal(acc.states[NEIGH_STATIC], 1);
}

static void test_walk_stops_when_callback_returns_non_zero(void **state)
{
	struct fake *f = *state;
	struct walk_acc acc = { .stop_after = 2 };

	for (uint16_t port = 0; port < 5; port++)
		to_incomplete(f, port, IP1);
	assert_int_equal(neigh_walk(f->t, walk_collect, &acc), 42);
	assert_int_equal(acc.calls, 2);
}

static void test_walk_empty_table_returns_zero(void **state)
{
	struct fake *f = *state;
	struct walk_acc acc = {0};

	assert_int_equal(neigh_walk(f->t, walk_collect, &acc), 0);
	assert_int_equal(acc.calls, 0);
}

static void test_count_follows_creation_and_removal(void **state)
{
	struct fake *f = *state;

	assert_int_equal(neigh_count(f->t), 0);
	to_incomplete(f, 1, IP1);
	assert_int_equal(neigh_count(f->t), 1);
	to_stale(f, 1, IP2, &MAC_A);
	assert_int_equal(neigh_count(f->t), 2);
	neigh_add_static(f->t, 1, IP3, &MAC_A);
	assert_int_equal(neigh_count(f->t), 3);
	tick_every(f, T0 + f->p.mcast_probes * f->p.retrans_ms, 100); /* IP1 FAILED */
	assert_int_equal(neigh_count(f->t), 3);
	tick_every(f, T0 + f->p.gc_stale_ms, 100); /* IP1 and IP2 gone */
	assert_int_equal(neigh_count(f->t), 1);
	neigh_delete(f->t, 1, IP3);
	assert_int_equal(neigh_count(f->t), 0);
}

/* --- many entries --- */

static struct eth_addr mac_of(uint32_t n)
{
	struct eth_addr m = {{0x02, 0x00, (uint8_t)(n >> 24), (uint8_t)(n >> 16),
			      (uint8_t)(n >> 8), (uint8_t)n}};
	return m;
}

static void test_many_entries_same_ip_on_1000_ports(void **state)
{
	struct fake *f = *state;

	for (uint16_t port = 0; port < 1000; port++)
		assert_int_equal(resolve(f, port, IP1, port), NEIGH_QUEUED);
	assert_int_equal(neigh_count(f->t), 1000);
	assert_int_equal(f->n_req, 1000);
	for (uint16_t port = 0; port < 1000; port++) {
		struct eth_addr m = mac_of(port);

		assert_int_equal(learn(f, port, IP1, &m, NEIGH_F_SOLICITED), 0);
	}
	assert_int_equal(f->n_sent, 1000);
	for (uint16_t port = 0; port < 1000; port++) {
		struct eth_addr m = mac_of(port);

		assert_int_equal(f->sent[port].id, port);
		assert_int_equal(f->sent[port].port, port);
		assert_mac_equal(&f->sent[port].mac, &m);
		assert_int_equal(resolve(f, port, IP1, NOPKT), NEIGH_RESOLVED);
		assert_mac_equal(&f->mac, &m);
	}
	/* Remove every other one: the rest of each chain stays reachable. */
	for (uint16_t port = 0; port < 1000; port += 2)
		assert_int_equal(neigh_delete(f->t, port, IP1), 0);
	assert_int_equal(neigh_count(f->t), 500);
	for (uint16_t port = 0; port < 1000; port++) {
		if (port % 2 == 0) {
			assert_int_equal(state_of(f, port, IP1), -1);
		} else {
			struct eth_addr m = mac_of(port);

			assert_entry_mac(f, port, IP1, &m);
		}
	}
}

static void test_many_entries_share_hash_chains(void **state)
{
	struct fake *f = *state;
	const struct neigh_table *t;
	uint32_t shared = 0, longest = 0, nb;

	for (uint16_t port = 0; port < 1000; port++)
		resolve(f, port, IP1, NOPKT);
	t = f->t;
	nb = (uint32_t)1 << (64 - t->hash_shift);
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t len = 0;

		for (uint32_t i = t->buckets[b]; i != NEIGH_NIL; i = t->slots[i].next)
			len++;
		if (len > 1)
			shared += len;
		if (len > longest)
			longest = len;
	}
	assert_true(shared > 0);  /* the other tests do walk real collision chains ... */
	assert_true(longest < 16); /* ... and the hash still spreads the same ip over ports */
}

static void test_many_entries_fill_whole_table_then_expire(void **state)
{
	struct fake *f = *state;
	struct walk_acc acc = {0};

	for (uint32_t i = 0; i < f->p.max_entries; i++) {
		struct eth_addr m = mac_of(i);

		assert_int_equal(learn(f, (uint16_t)(i % 7), IP1 + i / 7, &m, NEIGH_F_CREATE), 0);
	}
	assert_int_equal(neigh_count(f->t), f->p.max_entries);
	assert_int_equal(neigh_walk(f->t, walk_collect, &acc), 0);
	assert_int_equal(acc.calls, (int)f->p.max_entries);
	for (uint32_t i = 0; i < f->p.max_entries; i++) {
		struct eth_addr m = mac_of(i);

		assert_entry_mac(f, (uint16_t)(i % 7), IP1 + i / 7, &m);
	}
	tick_at(f, T0 + f->p.gc_stale_ms);
	assert_int_equal(neigh_count(f->t), 0);
}

/* Random creates and deletes on a small, colliding key space, checked against a model. */
static void test_many_entries_random_churn_matches_model(void **state)
{
	struct fake *f = *state;
	enum { PORTS = 4, IPS = 64 };
	bool present[PORTS][IPS] = {{false}};
	size_t n = 0;
	uint32_t rnd = 12345;

	f->p.max_entries = PORTS * IPS; /* never full: eviction would leave the model */
	fake_reopen(f);
	for (int step = 0; step < 20000; step++) {
		uint16_t port;
		uint32_t ip;

		rnd = rnd * 1103515245u + 12345u;
		port = (uint16_t)((rnd >> 8) % PORTS);
		ip = (rnd >> 16) % IPS;
		if ((rnd >> 4) & 1) {
			struct eth_addr m = mac_of(ip);

			assert_int_equal(learn(f, port, IP1 + ip, &m, NEIGH_F_CREATE), 0);
			if (!present[port][ip]) {
				present[port][ip] = true;
				n++;
			}
		} else {
			assert_int_equal(neigh_delete(f->t, port, IP1 + ip),
					 present[port][ip] ? 0 : -ENOENT);
			if (present[port][ip]) {
				present[port][ip] = false;
				n--;
			}
		}
		assert_int_equal(neigh_count(f->t), n);
	}
	for (uint16_t port = 0; port < PORTS; port++)
		for (uint32_t ip = 0; ip < IPS; ip++)
			assert_int_equal(state_of(f, port, IP1 + ip),
					 present[port][ip] ? NEIGH_STALE : -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		NEIGH_TEST(test_create_rejects_bad_params),
		NEIGH_TEST(test_create_one_entry_table_works),
		NEIGH_TEST(test_params_default_are_linux_values),
		NEIGH_TEST(test_state_str_names_every_state),
		NEIGH_TEST(test_destroy_null_is_a_no_op),
		NEIGH_TEST(test_destroy_drops_every_queued_packet_as_flushed),
		NEIGH_TEST(test_incomplete_delete_drops_queue_as_flushed_in_order),
		NEIGH_TEST(test_none_delete_returns_enoent),
		NEIGH_TEST(test_reachable_delete_then_resolve_starts_over),
		NEIGH_TEST(test_each_state_delete_removes_it),
		NEIGH_TEST(test_flush_port_removes_only_that_ports_dynamic_entries),
		NEIGH_TEST(test_flush_all_ports_removes_every_dynamic_entry),
		NEIGH_TEST(test_flush_empty_table_does_nothing),
		NEIGH_TEST(test_lookup_absent_returns_enoent),
		NEIGH_TEST(test_walk_visits_every_entry_once),
		NEIGH_TEST(test_walk_stops_when_callback_returns_non_zero),
		NEIGH_TEST(test_walk_empty_table_returns_zero),
		NEIGH_TEST(test_count_follows_creation_and_removal),
		NEIGH_TEST(test_many_entries_same_ip_on_1000_ports),
		NEIGH_TEST(test_many_entries_share_hash_chains),
		NEIGH_TEST(test_many_entries_fill_whole_table_then_expire),
		NEIGH_TEST(test_many_entries_random_churn_matches_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
