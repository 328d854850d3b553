/* TCP bind reservations of the channel (src/chan/chan_bind.c): Linux's sharing rules
 * (net/ipv4/inet_connection_sock.c), the socket's own reservation at its listen, and what
 * goes when a reservation or a process does. No DPDK: the shard is plain memory. */
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/chan/chan_priv.h"

/* Addresses as the channel carries them: IPv4 mapped (wire/inet_addr.h). */
#define ANY INET_ADDR_V4(0)
#define A1 INET_ADDR_V4(0x0a000002u)
#define A2 INET_ADDR_V4(0x0a000003u)
#define ANY6 ((const struct inet_addr[]){{{0}}})
#define G6 ((const struct inet_addr[]){{{0x20, 0x01, 0x0d, 0xb8, [15] = 2}}})

struct fixture {
	struct chan_worker cw;
	struct chan_app app[2];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	for (int i = 0; i < 2; i++)
		for (unsigned p = 0; p < CHAN_MAX_PROCS; p++)
			f->app[i].procs[p].uid = 1000 + (uid_t)i; /* app 1 runs as another user */
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	free(f->cw.binds);
	free(f);
	return 0;
}

static uint32_t add(struct fixture *f, int app, unsigned proc, const struct inet_addr *addr,
		    uint16_t port, uint32_t flags)
{
	uint32_t id = 0;
	assert_int_equal(chan_bind_add(&f->cw, &f->app[app], proc, addr, port, flags, &id), 0);
	assert_int_not_equal(id, 0);
	return id;
}

static bool clash(struct fixture *f, int app, const struct inet_addr *addr, uint16_t port,
		  uint32_t flags)
{
	return chan_bind_conflict(&f->cw, f->app[app].procs[0].uid, addr, port, flags, NULL, 0, 0);
}

static void test_chan_bind_same_port_clashes_without_sharing_options(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, ANY, 80, 0);
	assert_true(clash(f, 0, ANY, 80, 0));
	assert_true(clash(f, 1, A1, 80, 0));       /* the wildcard covers every address */
	assert_true(clash(f, 0, ANY, 80, CHAN_BIND_REUSEADDR)); /* both must ask */
	assert_false(clash(f, 0, ANY, 81, 0));
}

static void test_chan_bind_distinct_addresses_share_a_port(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, A1, 80, 0);
	assert_false(clash(f, 1, A2, 80, 0));
	assert_true(clash(f, 1, A1, 80, 0));
	assert_true(clash(f, 1, ANY, 80, 0));
}

static void test_chan_bind_reuseaddr_on_both_shares(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, ANY, 80, CHAN_BIND_REUSEADDR);
	assert_false(clash(f, 1, ANY, 80, CHAN_BIND_REUSEADDR));
	assert_true(clash(f, 1, ANY, 80, CHAN_BIND_REUSEPORT));
}

static void test_chan_bind_reuseport_shares_only_within_one_user(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, ANY, 80, CHAN_BIND_REUSEPORT);
	assert_false(clash(f, 0, ANY, 80, CHAN_BIND_REUSEPORT));
	assert_true(clash(f, 1, ANY, 80, CHAN_BIND_REUSEPORT)); /* another uid */
}

/* Linux's inet6_bind_conflict: a dual-stack :: takes IPv4's port too; an IPv6-only one
 * shares the port with IPv4's sockets (RFC 3493 §5.3). */
static void test_chan_bind_dual_stack_wildcard_clashes_with_ipv4(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, ANY, 80, 0);
	assert_true(clash(f, 1, ANY6, 80, 0));
	assert_false(clash(f, 1, ANY6, 80, CHAN_BIND_V6ONLY));
	assert_false(clash(f, 1, G6, 80, 0)); /* an IPv6 address is not IPv4's wildcard's */
	add(f, 0, 0, G6, 81, 0);
	assert_true(clash(f, 1, ANY6, 81, CHAN_BIND_V6ONLY));
	assert_false(clash(f, 1, ANY, 81, 0));
}

static void test_chan_bind_v6only_wildcard_leaves_ipv4_free(void **state)
{
	struct fixture *f = *state;
	add(f, 0, 0, ANY6, 80, CHAN_BIND_V6ONLY);
	assert_false(clash(f, 1, ANY, 80, 0));
	assert_false(clash(f, 1, A1, 80, 0));
	assert_true(clash(f, 1, G6, 80, 0));
	assert_true(clash(f, 1, ANY6, 80, 0));
	add(f, 0, 0, ANY6, 81, 0);
	assert_true(clash(f, 1, A1, 81, 0)); /* dual-stack: every IPv4 address too */
}

static void test_chan_bind_listen_ignores_its_own_reservation_only(void **state)
{
	struct fixture *f = *state;
	uint32_t mine = add(f, 0, 3, ANY, 80, 0);
	uid_t uid = f->app[0].procs[3].uid;
	assert_false(chan_bind_conflict(&f->cw, uid, ANY, 80, 0, &f->app[0], 3, mine));
	/* The same id from another process or application is not its own. */
	assert_true(chan_bind_conflict(&f->cw, uid, ANY, 80, 0, &f->app[0], 4, mine));
	assert_true(chan_bind_conflict(&f->cw, uid, ANY, 80, 0, &f->app[1], 3, mine));
	add(f, 1, 0, A1, 80, 0);
	assert_true(chan_bind_conflict(&f->cw, uid, ANY, 80, 0, &f->app[0], 3, mine));
}

static void test_chan_bind_drop_frees_the_port_for_its_owner_only(void **state)
{
	struct fixture *f = *state;
	uint32_t id = add(f, 0, 1, ANY, 80, 0);
	chan_bind_drop(&f->cw, &f->app[1], 1, id); /* not app 1's */
	chan_bind_drop(&f->cw, &f->app[0], 2, id); /* not process 2's */
	assert_true(clash(f, 1, ANY, 80, 0));
	chan_bind_drop(&f->cw, &f->app[0], 1, id);
	assert_false(clash(f, 1, ANY, 80, 0));
	chan_bind_drop(&f->cw, &f->app[0], 1, id); /* twice: nothing left to drop */
	assert_int_equal(f->cw.nbinds, 0);
}

static void test_chan_bind_process_end_drops_all_of_its_reservations(void **state)
{
	struct fixture *f = *state;
	for (uint16_t port = 1000; port < 1200; port++)
		add(f, 0, (unsigned)(port % 3), ANY, port, 0);
	add(f, 1, 0, ANY, 2000, 0);
	assert_int_equal(chan_bind_count(&f->cw, &f->app[0]), 200);
	chan_bind_drop_proc(&f->cw, &f->app[0], 1);
	assert_int_equal(chan_bind_count(&f->cw, &f->app[0]), 200 - 67);
	chan_bind_drop_proc(&f->cw, &f->app[0], 0);
	chan_bind_drop_proc(&f->cw, &f->app[0], 2);
	assert_int_equal(chan_bind_count(&f->cw, &f->app[0]), 0);
	assert_int_equal(chan_bind_count(&f->cw, &f->app[1]), 1);
	assert_true(clash(f, 0, ANY, 2000, 0));
	assert_false(clash(f, 1, ANY, 1000, 0));
}

static void test_chan_bind_ids_are_unique_and_never_zero(void **state)
{
	struct fixture *f = *state;
	f->cw.next_bind_id = UINT32_MAX - 2; /* about to wrap */
	uint32_t ids[6];
	for (int i = 0; i < 6; i++)
		ids[i] = add(f, 0, 0, ANY, (uint16_t)(3000 + i), 0);
	for (int i = 0; i < 6; i++)
		for (int j = i + 1; j < 6; j++)
			assert_int_not_equal(ids[i], ids[j]);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_chan_bind_same_port_clashes_without_sharing_options),
		T(test_chan_bind_distinct_addresses_share_a_port),
		T(test_chan_bind_reuseaddr_on_both_shares),
		T(test_chan_bind_reuseport_shares_only_within_one_user),
		T(test_chan_bind_dual_stack_wildcard_clashes_with_ipv4),
		T(test_chan_bind_v6only_wildcard_leaves_ipv4_free),
		T(test_chan_bind_listen_ignores_its_own_reservation_only),
		T(test_chan_bind_drop_frees_the_port_for_its_owner_only),
		T(test_chan_bind_process_end_drops_all_of_its_reservations),
		T(test_chan_bind_ids_are_unique_and_never_zero),
	};
#undef T
	return cmocka_run_group_tests(tests, NULL, NULL);
}
