/* The limits of applications and users (src/chan/chan_limit.c): defaults drawn from the
 * daemon's bounds and its RAM, names, who is exempt, and the check itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/chan/chan_limit.h"

static const struct chan_limit_bounds bounds = {.max = {
	[CHAN_LIMIT_APPS_PER_USER] = 256,
	[CHAN_LIMIT_SOCKS_PER_APP] = 16384,
	[CHAN_LIMIT_SOCKS_PER_USER] = 16384u * 256,
	[CHAN_LIMIT_LISTENERS_PER_USER] = 16384,
	[CHAN_LIMIT_ARENA_MB_PER_APP] = 8192,
	[CHAN_LIMIT_ARENA_MB_PER_USER] = 8192u * 256,
	[CHAN_LIMIT_BINDS_PER_APP] = 1u << 20,
}};

static void test_defaults_leave_most_of_every_table_to_other_users(void **state)
{
	struct chan_limits l;
	chan_limits_default(&l, &bounds, 4ull << 30);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_APPS_PER_USER), 32);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_SOCKS_PER_APP), 16384);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_SOCKS_PER_USER), 4 * 16384);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_LISTENERS_PER_USER), 256);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_ARENA_MB_PER_APP), 2048); /* half of 4 GiB */
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_ARENA_MB_PER_USER), 2048);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_BINDS_PER_APP), 1024);
}

static void test_listeners_per_user_default_is_a_sixty_fourth_of_the_table(void **state)
{
	struct chan_limit_bounds b = bounds;
	struct chan_limits l;
	b.max[CHAN_LIMIT_LISTENERS_PER_USER] = 65536; /* tcp-listeners 65536 */
	chan_limits_default(&l, &b, 4ull << 30);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_LISTENERS_PER_USER), 1024);
	b.max[CHAN_LIMIT_LISTENERS_PER_USER] = 1024; /* the table of old */
	chan_limits_default(&l, &b, 4ull << 30);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_LISTENERS_PER_USER), 16);
	b.max[CHAN_LIMIT_LISTENERS_PER_USER] = 10;
	chan_limits_default(&l, &b, 4ull << 30);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_LISTENERS_PER_USER), 1); /* never 0 */
}

static void test_socks_per_app_default_stays_below_its_raised_bound(void **state)
{
	struct chan_limit_bounds b = bounds;
	struct chan_limits l;
	b.max[CHAN_LIMIT_SOCKS_PER_APP] = 1u << 18;
	chan_limits_default(&l, &b, 4ull << 30);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_SOCKS_PER_APP), CHAN_SOCKS_PER_APP_DEFAULT);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_SOCKS_PER_USER),
			 4 * CHAN_SOCKS_PER_APP_DEFAULT);
}

static void test_defaults_never_exceed_the_bounds(void **state)
{
	struct chan_limit_bounds tiny = {.max = {1, 2, 3, 4, 5, 6, 7}};
	struct chan_limits l;
	chan_limits_default(&l, &tiny, 1ull << 40);
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		assert_true(chan_limit_get(&l, k) <= tiny.max[k]);
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_APPS_PER_USER), 1); /* never 0 */
	chan_limits_default(&l, &bounds, 0); /* RAM unknown: still one MiB */
	assert_int_equal(chan_limit_get(&l, CHAN_LIMIT_ARENA_MB_PER_APP), 1);
}

static void test_names_round_trip_and_unknown_is_minus_one(void **state)
{
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		assert_int_equal(chan_limit_by_name(chan_limit_info[k].name), (int)k);
	assert_int_equal(chan_limit_by_name("sockets"), -1);
	assert_int_equal(chan_limit_by_name(""), -1);
}

static void test_root_and_daemon_user_exempt_from_per_user_limits_only(void **state)
{
	assert_true(chan_limit_user_exempt(0, 1000));
	assert_true(chan_limit_user_exempt(1000, 1000));
	assert_false(chan_limit_user_exempt(65534, 1000));
	struct chan_limits l;
	chan_limits_default(&l, &bounds, 4ull << 30);
	atomic_store(&l.v[CHAN_LIMIT_SOCKS_PER_USER], 2);
	atomic_store(&l.v[CHAN_LIMIT_SOCKS_PER_APP], 2);
	assert_true(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_USER, 5, 1, true));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_USER, 2, 1, false));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_APP, 2, 1, true));
}

static void test_allows_up_to_the_limit_and_zero_refuses_all(void **state)
{
	struct chan_limits l;
	chan_limits_default(&l, &bounds, 4ull << 30);
	atomic_store(&l.v[CHAN_LIMIT_SOCKS_PER_APP], 3);
	assert_true(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_APP, 2, 1, false));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_APP, 3, 1, false));
	atomic_store(&l.v[CHAN_LIMIT_SOCKS_PER_APP], 0);
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_SOCKS_PER_APP, 0, 1, false));
}

static void test_arena_limit_counts_mebibytes_and_overflow_is_refused(void **state)
{
	struct chan_limits l;
	chan_limits_default(&l, &bounds, 4ull << 30);
	atomic_store(&l.v[CHAN_LIMIT_ARENA_MB_PER_APP], 2);
	assert_true(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_APP, 1 << 20, 1 << 20, false));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_APP, 1 << 20, (1 << 20) + 1,
				       false));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_APP, UINT64_MAX, 4096, false));
}

static void test_user_arena_limit_counts_mebibytes_and_spares_the_exempt(void **state)
{
	struct chan_limits l;
	chan_limits_default(&l, &bounds, 4ull << 30);
	atomic_store(&l.v[CHAN_LIMIT_ARENA_MB_PER_USER], 3);
	assert_true(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_USER, 2 << 20, 1 << 20, false));
	assert_false(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_USER, 2 << 20, (1 << 20) + 1,
				       false));
	assert_true(chan_limit_allows(&l, CHAN_LIMIT_ARENA_MB_PER_USER, 3 << 20, 1 << 20, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_leave_most_of_every_table_to_other_users),
		cmocka_unit_test(test_listeners_per_user_default_is_a_sixty_fourth_of_the_table),
		cmocka_unit_test(test_socks_per_app_default_stays_below_its_raised_bound),
		cmocka_unit_test(test_defaults_never_exceed_the_bounds),
		cmocka_unit_test(test_names_round_trip_and_unknown_is_minus_one),
		cmocka_unit_test(test_root_and_daemon_user_exempt_from_per_user_limits_only),
		cmocka_unit_test(test_allows_up_to_the_limit_and_zero_refuses_all),
		cmocka_unit_test(test_arena_limit_counts_mebibytes_and_overflow_is_refused),
		cmocka_unit_test(test_user_arena_limit_counts_mebibytes_and_spares_the_exempt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
