/* The IPv6 routing table (src/stack/route6.c): exact find, errors, type masks on delete, the
 * default route, deletes that must keep every other entry reachable through the probe
 * sequence, capacity, and random tables checked against a brute-force longest-prefix
 * match. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/route6.h"
#include "test_wire_hex.h"

static struct route6_table *t;

static int setup(void **state)
{
	(void)state;
	t = route6_table_create();
	assert_non_null(t);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	route6_table_destroy(t);
	t = NULL;
	return 0;
}

/* A CONNECTED route whose port tells the routes apart in lookups. */
static struct route6 rt(const char *prefix, uint8_t plen, uint16_t tag)
{
	struct route6 r = {.prefix = ip6_addr_of(prefix), .plen = plen, .type = ROUTE_CONNECTED,
			   .port = tag};
	return r;
}

static int lookup_tag(const char *dst)
{
	struct ip6_addr a = ip6_addr_of(dst);
	const struct route6 *r = route6_lookup(t, &a);
	return r == NULL ? -1 : r->port;
}

static void test_longest_prefix_wins(void **state)
{
	(void)state;
	struct route6 rs[] = {rt("::", 0, 1), rt("2001:db8::", 32, 2), rt("2001:db8:1::", 48, 3),
			      rt("2001:db8:1:2::", 64, 4), rt("2001:db8:1:2::5", 128, 5)};
	for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
		assert_int_equal(route6_add(t, &rs[i]), 0);
	assert_int_equal(lookup_tag("2001:db8:1:2::5"), 5);
	assert_int_equal(lookup_tag("2001:db8:1:2::6"), 4);
	assert_int_equal(lookup_tag("2001:db8:1:3::1"), 3);
	assert_int_equal(lookup_tag("2001:db8:ffff::1"), 2);
	assert_int_equal(lookup_tag("2001:db9::1"), 1);
	struct ip6_addr any = ip6_addr_of("::");
	assert_int_equal(route6_del(t, &any, 0, 0), 0);
	assert_int_equal(lookup_tag("2001:db9::1"), -1);
	assert_int_equal(lookup_tag("2001:db8:1:2::6"), 4);
}

static void test_errors(void **state)
{
	(void)state;
	struct route6 host_bits = rt("2001:db8::1", 64, 0);
	assert_int_equal(route6_add(t, &host_bits), -EINVAL);
	struct route6 too_long = rt("2001:db8::", 129, 0);
	assert_int_equal(route6_add(t, &too_long), -EINVAL);
	struct route6 bcast = rt("2001:db8::", 64, 0);
	bcast.type = ROUTE_BROADCAST;
	assert_int_equal(route6_add(t, &bcast), -EINVAL);
	struct route6 ok = rt("2001:db8::", 64, 0);
	assert_int_equal(route6_add(t, &ok), 0);
	assert_int_equal(route6_add(t, &ok), -EEXIST);
	struct ip6_addr p = ip6_addr_of("2001:db8::");
	assert_int_equal(route6_del(t, &p, 48, 0), -ENOENT);
	struct ip6_addr bad = ip6_addr_of("2001:db8::1");
	assert_int_equal(route6_del(t, &bad, 64, 0), -EINVAL);
	assert_null(route6_find(t, &bad, 64));
	/* A type mask that does not name the route's type keeps it. */
	assert_int_equal(route6_del(t, &p, 64, 1u << ROUTE_LOCAL), -ENOENT);
	assert_non_null(route6_find(t, &p, 64));
	assert_int_equal(route6_del(t, &p, 64, 1u << ROUTE_CONNECTED), 0);
	assert_null(route6_find(t, &p, 64));
}

static int count_fn(const struct route6 *r, void *arg)
{
	(void)r;
	(*(unsigned *)arg)++;
	return 0;
}

static struct ip6_addr host_n(unsigned n)
{
	struct ip6_addr a = ip6_addr_of("2001:db8::");
	a.b[12] = (uint8_t)(n >> 24);
	a.b[13] = (uint8_t)(n >> 16);
	a.b[14] = (uint8_t)(n >> 8);
	a.b[15] = (uint8_t)n;
	return a;
}

/* A full table refuses one more; deleting every other entry (holes all along the probe
 * sequences) leaves the rest reachable, and the freed entries take new routes. */
static void test_full_then_holes(void **state)
{
	(void)state;
	for (unsigned i = 0; i < ROUTE6_MAX; i++) {
		struct route6 r = {.prefix = host_n(i), .plen = 128, .type = ROUTE_LOCAL,
				   .port = (uint16_t)i};
		assert_int_equal(route6_add(t, &r), 0);
	}
	struct route6 extra = {.prefix = host_n(ROUTE6_MAX), .plen = 128, .type = ROUTE_LOCAL};
	assert_int_equal(route6_add(t, &extra), -ENOSPC);
	for (unsigned i = 0; i < ROUTE6_MAX; i += 2) {
		struct ip6_addr a = host_n(i);
		assert_int_equal(route6_del(t, &a, 128, 0), 0);
	}
	for (unsigned i = 0; i < ROUTE6_MAX; i++) {
		struct ip6_addr a = host_n(i);
		const struct route6 *r = route6_lookup(t, &a);
		if (i % 2 == 0) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->port, i);
		}
	}
	unsigned n = 0;
	route6_walk(t, count_fn, &n);
	assert_int_equal(n, ROUTE6_MAX / 2);
	assert_int_equal(route6_add(t, &extra), 0);
}

/* Random prefixes under a few /32s, added and deleted at random, against a brute force. */
static void test_random_against_brute_force(void **state)
{
	(void)state;
	enum { N = 400, LOOKUPS = 4000 };
	static struct route6 shadow[N];
	static bool present[N];
	srand(6);
	for (unsigned i = 0; i < N; i++) {
		struct ip6_addr a = ip6_addr_of("2001:db8::");
		a.b[3] = (uint8_t)(rand() % 4);
		for (unsigned k = 4; k < 16; k++)
			a.b[k] = (uint8_t)(rand() % 3);
		uint8_t plen = (uint8_t)(rand() % 129);
		ip6_prefix_mask(&a, plen);
		shadow[i] = (struct route6){.prefix = a, .plen = plen, .type = ROUTE_CONNECTED,
					    .port = (uint16_t)i};
	}
	for (unsigned round = 0; round < 3 * N; round++) {
		unsigned i = (unsigned)rand() % N;
		if (present[i]) {
			assert_int_equal(route6_del(t, &shadow[i].prefix, shadow[i].plen, 0), 0);
			present[i] = false;
			continue;
		}
		int rc = route6_add(t, &shadow[i]);
		if (rc == -EEXIST)
			continue; /* another index drew the same prefix */
		assert_int_equal(rc, 0);
		present[i] = true;
	}
	for (unsigned l = 0; l < LOOKUPS; l++) {
		struct ip6_addr dst = ip6_addr_of("2001:db8::");
		dst.b[3] = (uint8_t)(rand() % 4);
		for (unsigned k = 4; k < 16; k++)
			dst.b[k] = (uint8_t)(rand() % 3);
		int best = -1;
		for (unsigned i = 0; i < N; i++) {
			struct ip6_addr m = dst;
			ip6_prefix_mask(&m, shadow[i].plen);
			if (present[i] && ip6_addr_equal(&m, &shadow[i].prefix) &&
			    (best < 0 || shadow[i].plen > shadow[best].plen))
				best = (int)i;
		}
		const struct route6 *r = route6_lookup(t, &dst);
		if (best < 0) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->plen, shadow[best].plen);
			assert_true(ip6_addr_equal(&r->prefix, &shadow[best].prefix));
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_longest_prefix_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_then_holes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_against_brute_force, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
