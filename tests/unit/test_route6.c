/* The route table (src/stack/route.c) with IPv6 routes: exact find, errors, type masks on
 * delete, the default route, deletes that must keep every other entry reachable through
 * the probe sequence (Knuth's algorithm R), capacity, random tables checked against a
 * brute-force longest-prefix match; and both families in one table, kept apart. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/route.h"
#include "wire/ipv4.h"
#include "test_wire_hex.h"

#define MAX 1024

static struct route_table *t;

static int setup(void **state)
{
	(void)state;
	t = route_table_create(MAX);
	assert_non_null(t);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	route_table_destroy(t);
	t = NULL;
	return 0;
}

static struct inet_addr I6(struct ip6_addr a)
{
	return inet_addr_v6(&a);
}

static int del6(const struct ip6_addr *prefix, uint8_t plen, unsigned type_mask)
{
	return route_del(t, INET_ADDR_V6(prefix), plen, type_mask);
}

static const struct route *find6(const struct ip6_addr *prefix, uint8_t plen)
{
	return route_find(t, INET_ADDR_V6(prefix), plen);
}

/* A CONNECTED route whose port tells the routes apart in lookups. */
static struct route rt(const char *prefix, uint8_t plen, uint16_t tag)
{
	struct route r = {.prefix = I6(ip6_addr_of(prefix)), .plen = plen, .type = ROUTE_CONNECTED,
			   .port = tag};
	return r;
}

static int lookup_tag(const char *dst)
{
	struct ip6_addr a = ip6_addr_of(dst);
	const struct route *r = route_lookup6(t, &a);
	return r == NULL ? -1 : r->port;
}

static void test_longest_prefix_wins(void **state)
{
	(void)state;
	struct route rs[] = {rt("::", 0, 1), rt("2001:db8::", 32, 2), rt("2001:db8:1::", 48, 3),
			      rt("2001:db8:1:2::", 64, 4), rt("2001:db8:1:2::5", 128, 5)};
	for (size_t i = 0; i < sizeof(rs) / sizeof(rs[0]); i++)
		assert_int_equal(route_add(t, &rs[i]), 0);
	assert_int_equal(lookup_tag("2001:db8:1:2::5"), 5);
	assert_int_equal(lookup_tag("2001:db8:1:2::6"), 4);
	assert_int_equal(lookup_tag("2001:db8:1:3::1"), 3);
	assert_int_equal(lookup_tag("2001:db8:ffff::1"), 2);
	assert_int_equal(lookup_tag("2001:db9::1"), 1);
	struct ip6_addr any = ip6_addr_of("::");
	assert_int_equal(del6(&any, 0, 0), 0);
	assert_int_equal(lookup_tag("2001:db9::1"), -1);
	assert_int_equal(lookup_tag("2001:db8:1:2::6"), 4);
}

static void test_errors(void **state)
{
	(void)state;
	struct route host_bits = rt("2001:db8::1", 64, 0);
	assert_int_equal(route_add(t, &host_bits), -EINVAL);
	struct route too_long = rt("2001:db8::", 129, 0);
	assert_int_equal(route_add(t, &too_long), -EINVAL);
	struct route bcast = rt("2001:db8::", 64, 0);
	bcast.type = ROUTE_BROADCAST;
	assert_int_equal(route_add(t, &bcast), -EINVAL);
	struct route ok = rt("2001:db8::", 64, 0);
	assert_int_equal(route_add(t, &ok), 0);
	assert_int_equal(route_add(t, &ok), -EEXIST);
	struct ip6_addr p = ip6_addr_of("2001:db8::");
	assert_int_equal(del6(&p, 48, 0), -ENOENT);
	struct ip6_addr bad = ip6_addr_of("2001:db8::1");
	assert_int_equal(del6(&bad, 64, 0), -EINVAL);
	assert_null(find6(&bad, 64));
	/* A type mask that does not name the route's type keeps it. */
	assert_int_equal(del6(&p, 64, 1u << ROUTE_LOCAL), -ENOENT);
	assert_non_null(find6(&p, 64));
	assert_int_equal(del6(&p, 64, 1u << ROUTE_CONNECTED), 0);
	assert_null(find6(&p, 64));
}

static int count_fn(const struct route *r, void *arg)
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
	for (unsigned i = 0; i < MAX; i++) {
		struct route r = {.prefix = I6(host_n(i)), .plen = 128, .type = ROUTE_LOCAL,
				   .port = (uint16_t)i};
		assert_int_equal(route_add(t, &r), 0);
	}
	struct route extra = {.prefix = I6(host_n(MAX)), .plen = 128, .type = ROUTE_LOCAL};
	assert_int_equal(route_add(t, &extra), -ENOSPC);
	for (unsigned i = 0; i < MAX; i += 2) {
		struct ip6_addr a = host_n(i);
		assert_int_equal(del6(&a, 128, 0), 0);
	}
	for (unsigned i = 0; i < MAX; i++) {
		struct ip6_addr a = host_n(i);
		const struct route *r = route_lookup6(t, &a);
		if (i % 2 == 0) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->port, i);
		}
	}
	unsigned n = 0;
	route_walk(t, count_fn, &n);
	assert_int_equal(n, MAX / 2);
	assert_int_equal(route_add(t, &extra), 0);
}

/* rounds random changes: a route of shadow[0..n) present (present[i]) goes, one absent
 * comes (unless another index drew the same prefix). */
static void churn(const struct route *shadow, bool *present, unsigned n, unsigned rounds)
{
	for (unsigned round = 0; round < rounds; round++) {
		unsigned i = (unsigned)rand() % n;
		if (present[i]) {
			assert_int_equal(route_del(t, &shadow[i].prefix, shadow[i].plen, 0), 0);
			present[i] = false;
			continue;
		}
		int rc = route_add(t, &shadow[i]);
		if (rc == -EEXIST)
			continue;
		assert_int_equal(rc, 0);
		present[i] = true;
	}
}

/* Random prefixes under a few /32s, added and deleted at random, against a brute force. */
static void test_random_against_brute_force(void **state)
{
	(void)state;
	enum { N = 400, LOOKUPS = 4000 };
	static struct route shadow[N];
	static bool present[N];
	srand(6);
	for (unsigned i = 0; i < N; i++) {
		struct ip6_addr a = ip6_addr_of("2001:db8::");
		a.b[3] = (uint8_t)(rand() % 4);
		for (unsigned k = 4; k < 16; k++)
			a.b[k] = (uint8_t)(rand() % 3);
		uint8_t plen = (uint8_t)(rand() % 129);
		ip6_prefix_mask(&a, plen);
		shadow[i] = (struct route){.prefix = I6(a), .plen = plen, .type = ROUTE_CONNECTED,
					    .port = (uint16_t)i};
	}
	churn(shadow, present, N, 3 * N);
	for (unsigned l = 0; l < LOOKUPS; l++) {
		struct ip6_addr dst = ip6_addr_of("2001:db8::");
		dst.b[3] = (uint8_t)(rand() % 4);
		for (unsigned k = 4; k < 16; k++)
			dst.b[k] = (uint8_t)(rand() % 3);
		int best = -1;
		for (unsigned i = 0; i < N; i++) {
			struct ip6_addr m = dst;
			ip6_prefix_mask(&m, shadow[i].plen);
			if (present[i] && inet_addr_equal(INET_ADDR_V6(&m), &shadow[i].prefix) &&
			    (best < 0 || shadow[i].plen > shadow[best].plen))
				best = (int)i;
		}
		const struct route *r = route_lookup6(t, &dst);
		if (best < 0) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->plen, shadow[best].plen);
			assert_true(inet_addr_equal(&r->prefix, &shadow[best].prefix));
		}
	}
}

/* ::/0 does not cover IPv4 destinations (their mapped form ::ffff:a.b.c.d is an IPv4
 * key), nor 0.0.0.0/0 IPv6 ones; a prefix of one family and the same bytes in the other are
 * two routes. */
static void test_families_kept_apart(void **state)
{
	(void)state;
	struct route v6_default = rt("::", 0, 6);
	assert_int_equal(route_add(t, &v6_default), 0);
	assert_null(route_lookup4(t, 0x0a000001u));
	assert_null(route_lookup(t, INET_ADDR_V4(0)));
	struct route v4_default = {.prefix = inet_addr_v4(0), .plen = 0,
				   .type = ROUTE_CONNECTED, .port = 4};
	assert_int_equal(route_add(t, &v4_default), 0);
	assert_int_equal(route_lookup4(t, 0x0a000001u)->port, 4);
	assert_int_equal(lookup_tag("2001:db8::1"), 6);
	/* An IPv6 packet to an IPv4-mapped address has no route, not even ::/0; as a key the
	 * address is IPv4's. */
	assert_int_equal(lookup_tag("::ffff:10.0.0.1"), -1);
	assert_int_equal(route_lookup(t, INET_ADDR_V4(0x0a000001u))->port, 4);
	/* An IPv4-mapped key is IPv4: a length beyond 32 is no prefix. */
	struct route mapped = {.prefix = inet_addr_v4(0), .plen = 96, .type = ROUTE_CONNECTED};
	assert_int_equal(route_add(t, &mapped), -EINVAL);
	/* Broadcast routes are IPv4's only. */
	struct route b4 = {.prefix = inet_addr_v4(0x0a0000ffu), .plen = 32,
			   .type = ROUTE_BROADCAST};
	assert_int_equal(route_add(t, &b4), 0);
	assert_int_equal(route_count(t), 3);
	assert_int_equal(route_del(t, &v6_default.prefix, 0, 0), 0);
	assert_null(route_lookup6(t, &(struct ip6_addr){{0x20, 0x01}}));
	assert_int_equal(route_lookup4(t, 0x0b000001u)->port, 4);
}

/* Both families in one table, at random: adds and deletes, with lookups of each family
 * checked against a brute-force longest match over the routes present, then the walk. */
static void test_mixed_families_random_against_brute_force(void **state)
{
	(void)state;
	enum { N = 600, ROUNDS = 4 * N, LOOKUPS = 3000 };
	static struct route shadow[N];
	static bool present[N];
	srand(46);
	for (unsigned i = 0; i < N; i++) {
		uint8_t plen;
		struct inet_addr a;
		if (i % 2 == 0) {
			plen = (uint8_t)(rand() % 33);
			uint32_t v = (uint32_t)(10 + rand() % 2) << 24 | (uint32_t)(rand() % 4) << 16 |
				     (uint32_t)(rand() % 3) << 8 | (uint32_t)(rand() % 3);
			a = inet_addr_v4(v & ip4_mask(plen));
		} else {
			plen = (uint8_t)(rand() % 129);
			struct ip6_addr v = ip6_addr_of("2001:db8::");
			v.b[3] = (uint8_t)(rand() % 2);
			for (unsigned k = 4; k < 16; k++)
				v.b[k] = (uint8_t)(rand() % 2);
			ip6_prefix_mask(&v, plen);
			a = inet_addr_v6(&v);
		}
		shadow[i] = (struct route){.prefix = a, .plen = plen, .type = ROUTE_GATEWAY,
					   .port = (uint16_t)i};
	}
	churn(shadow, present, N, ROUNDS);
	unsigned live = 0;
	for (unsigned i = 0; i < N; i++)
		live += present[i];
	assert_int_equal(route_count(t), live);
	for (unsigned l = 0; l < LOOKUPS; l++) {
		struct inet_addr dst;
		if (l % 2 == 0) {
			dst = inet_addr_v4((uint32_t)(10 + rand() % 2) << 24 |
					   (uint32_t)(rand() % 4) << 16 | (uint32_t)(rand() % 3) << 8 |
					   (uint32_t)(rand() % 3));
		} else {
			struct ip6_addr v = ip6_addr_of("2001:db8::");
			v.b[3] = (uint8_t)(rand() % 2);
			for (unsigned k = 4; k < 16; k++)
				v.b[k] = (uint8_t)(rand() % 2);
			dst = inet_addr_v6(&v);
		}
		bool v4 = inet_addr_is_v4(&dst);
		int best = -1;
		for (unsigned i = 0; i < N; i++) {
			if (!present[i] || inet_addr_is_v4(&shadow[i].prefix) != v4)
				continue;
			bool covers;
			if (v4) {
				covers = ((inet_addr_to_v4(&dst) ^ inet_addr_to_v4(&shadow[i].prefix)) &
					  ip4_mask(shadow[i].plen)) == 0;
			} else {
				struct ip6_addr m = inet_addr_to_v6(&dst);
				ip6_prefix_mask(&m, shadow[i].plen);
				covers = inet_addr_equal(INET_ADDR_V6(&m), &shadow[i].prefix);
			}
			if (covers && (best < 0 || shadow[i].plen > shadow[best].plen))
				best = (int)i;
		}
		const struct route *r = route_lookup(t, &dst);
		if (best < 0) {
			assert_null(r);
		} else {
			assert_non_null(r);
			assert_int_equal(r->port, shadow[best].port);
		}
	}
	unsigned walked = 0;
	assert_int_equal(route_walk(t, count_fn, &walked), 0);
	assert_int_equal(walked, live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_longest_prefix_wins, setup, teardown),
		cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_then_holes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_against_brute_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_families_kept_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mixed_families_random_against_brute_force,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
