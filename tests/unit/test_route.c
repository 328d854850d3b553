/* The route table (src/stack/route.c) with IPv4 routes: longest-prefix match, exact find,
 * errors, type masks on delete, walk order, capacity, and random tables checked against a
 * brute-force longest-prefix match. Plain memory, no EAL. test_route6.c has the IPv6 side
 * and both families in one table. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>

#include "stack/route.h"
#include "../../src/wire/ipv4.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* The table's size in these tests. */
#define MAX 4096

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

/* A CONNECTED route whose port tells the routes apart in lookups. */
static struct route rt(uint32_t prefix, uint8_t plen, uint16_t tag)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = ROUTE_CONNECTED,
			  .port = tag};
	return r;
}

static int del4(uint32_t prefix, uint8_t plen, unsigned type_mask)
{
	return route_del(t, INET_ADDR_V4(prefix), plen, type_mask);
}

static const struct route *find4(uint32_t prefix, uint8_t plen)
{
	return route_find(t, INET_ADDR_V4(prefix), plen);
}

static int add(uint32_t prefix, uint8_t plen, uint16_t tag)
{
	struct route r = rt(prefix, plen, tag);
	return route_add(t, &r);
}

static int add_typed(uint32_t prefix, uint8_t plen, enum route_type type)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = type};
	return route_add(t, &r);
}

/* The tag of the route that route_lookup4 picks for dst, or -1 for none; route_lookup
 * with the mapped address must pick the same. */
static int lookup_tag(uint32_t dst)
{
	const struct route *r = route_lookup4(t, dst);
	assert_ptr_equal(route_lookup(t, INET_ADDR_V4(dst)), r);
	return r == NULL ? -1 : r->port;
}

static void add_ladder(void)
{
	assert_int_equal(add(0, 0, 0), 0);
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 8), 0);
	assert_int_equal(add(IP(10, 1, 0, 0), 16, 16), 0);
	assert_int_equal(add(IP(10, 1, 2, 0), 24, 24), 0);
	assert_int_equal(add(IP(10, 1, 2, 3), 32, 32), 0);
}

static void test_route_lookup_empty_table_returns_null(void **state)
{
	(void)state;
	assert_null(route_lookup4(t, IP(10, 0, 0, 1)));
	assert_null(route_lookup4(t, 0));
	assert_null(route_lookup4(t, 0xffffffffu));
}

static void test_route_lookup_ladder_longest_prefix_wins(void **state)
{
	(void)state;
	add_ladder();
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 32);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 4)), 24);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 2)), 24);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 255)), 24);
	assert_int_equal(lookup_tag(IP(10, 1, 3, 3)), 16);
	assert_int_equal(lookup_tag(IP(10, 1, 255, 255)), 16);
	assert_int_equal(lookup_tag(IP(10, 2, 2, 3)), 8);
	assert_int_equal(lookup_tag(IP(10, 255, 255, 255)), 8);
	assert_int_equal(lookup_tag(IP(11, 1, 2, 3)), 0);
	assert_int_equal(lookup_tag(IP(9, 255, 255, 255)), 0);
}

static void test_route_lookup_default_route_catches_everything(void **state)
{
	(void)state;
	assert_int_equal(add(0, 0, 7), 0);
	assert_int_equal(lookup_tag(0), 7);
	assert_int_equal(lookup_tag(IP(1, 2, 3, 4)), 7);
	assert_int_equal(lookup_tag(IP(192, 168, 1, 1)), 7);
	assert_int_equal(lookup_tag(0xffffffffu), 7);
	const struct route *r = route_lookup4(t, IP(8, 8, 8, 8));
	assert_non_null(r);
	assert_true(inet_addr_equal(&r->prefix, INET_ADDR_V4(0)));
	assert_int_equal(r->plen, 0);
}

static void test_route_lookup_returns_stored_fields(void **state)
{
	(void)state;
	struct route in = {.prefix = inet_addr_v4(IP(192, 168, 0, 0)), .plen = 16,
			   .type = ROUTE_GATEWAY, .port = 3, .gateway = inet_addr_v4(IP(10, 0, 0, 1)),
			   .src = inet_addr_v4(IP(10, 0, 0, 2)), .mtu = 1400};
	assert_int_equal(route_add(t, &in), 0);
	const struct route *r = route_lookup4(t, IP(192, 168, 77, 1));
	assert_non_null(r);
	assert_true(inet_addr_equal(&r->prefix, &in.prefix));
	assert_int_equal(r->plen, in.plen);
	assert_int_equal(r->type, ROUTE_GATEWAY);
	assert_int_equal(r->port, 3);
	assert_int_equal(route_gateway4(r), IP(10, 0, 0, 1));
	assert_int_equal(route_src4(r), IP(10, 0, 0, 2));
	assert_true(route_src_set(r));
	assert_int_equal(r->mtu, 1400);
}

static void test_route_lookup_host_route_matches_only_its_address(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 5), 32, 1), 0);
	assert_int_equal(lookup_tag(IP(10, 0, 0, 5)), 1);
	assert_int_equal(lookup_tag(IP(10, 0, 0, 4)), -1);
	assert_int_equal(lookup_tag(IP(10, 0, 0, 6)), -1);
}

static void test_route_lookup_slash0_and_slash32_of_zero_coexist(void **state)
{
	(void)state;
	assert_int_equal(add(0, 0, 1), 0);
	assert_int_equal(add(0, 32, 2), 0);
	assert_int_equal(add(0xffffffffu, 32, 3), 0);
	assert_int_equal(lookup_tag(0), 2);
	assert_int_equal(lookup_tag(1), 1);
	assert_int_equal(lookup_tag(0xffffffffu), 3);
	assert_int_equal(lookup_tag(0xfffffffeu), 1);
}

static void test_route_add_duplicate_returns_eexist(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 1), 0);
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 2), -EEXIST);
	assert_int_equal(add_typed(IP(10, 0, 0, 0), 8, ROUTE_BLACKHOLE), -EEXIST);
	/* The first one is untouched. */
	assert_int_equal(lookup_tag(IP(10, 9, 9, 9)), 1);
	assert_int_equal(find4(IP(10, 0, 0, 0), 8)->type, ROUTE_CONNECTED);
}

static void test_route_add_duplicate_default_returns_eexist(void **state)
{
	(void)state;
	assert_int_equal(add(0, 0, 1), 0);
	assert_int_equal(add(0, 0, 2), -EEXIST);
	assert_int_equal(lookup_tag(IP(1, 1, 1, 1)), 1);
}

static void test_route_add_same_prefix_other_plen_both_kept(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 8), 0);
	assert_int_equal(add(IP(10, 0, 0, 0), 16, 16), 0);
	assert_int_equal(add(IP(10, 0, 0, 0), 24, 24), 0);
	assert_int_equal(lookup_tag(IP(10, 0, 0, 1)), 24);
	assert_int_equal(lookup_tag(IP(10, 0, 1, 1)), 16);
	assert_int_equal(lookup_tag(IP(10, 1, 0, 1)), 8);
}

static void test_route_add_host_bits_set_returns_einval(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 1), 24, 1), -EINVAL);
	assert_int_equal(add(IP(10, 128, 0, 0), 8, 1), -EINVAL);
	assert_int_equal(add(1, 0, 1), -EINVAL);
	assert_int_equal(add(IP(10, 0, 0, 1), 31, 1), -EINVAL);
	assert_null(route_lookup4(t, IP(10, 0, 0, 1)));
	assert_int_equal(add(IP(10, 0, 0, 2), 31, 1), 0);
}

static void test_route_add_plen_33_returns_einval(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 1), 33, 1), -EINVAL);
	assert_int_equal(add(0, 33, 1), -EINVAL);
	assert_int_equal(add(0, 255, 1), -EINVAL);
	assert_null(route_lookup4(t, IP(10, 0, 0, 1)));
}

static void test_route_add_bad_type_returns_einval(void **state)
{
	(void)state;
	assert_int_equal(add_typed(IP(10, 0, 0, 0), 8, ROUTE_TYPE_COUNT), -EINVAL);
	assert_int_equal(add_typed(IP(10, 0, 0, 0), 8, (enum route_type)99), -EINVAL);
	assert_null(route_lookup4(t, IP(10, 0, 0, 1)));
}

static void test_route_del_missing_returns_enoent(void **state)
{
	(void)state;
	assert_int_equal(del4(IP(10, 0, 0, 0), 8, 0), -ENOENT);
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 1), 0);
	/* Same prefix, other length: not the route. */
	assert_int_equal(del4(IP(10, 0, 0, 0), 16, 0), -ENOENT);
	assert_int_equal(del4(IP(10, 0, 0, 0), 7, 0), -ENOENT);
	assert_int_equal(lookup_tag(IP(10, 1, 1, 1)), 1);
}

static void test_route_del_existing_removes_it(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 1), 0);
	assert_int_equal(del4(IP(10, 0, 0, 0), 8, 0), 0);
	assert_null(route_lookup4(t, IP(10, 1, 1, 1)));
	assert_null(find4(IP(10, 0, 0, 0), 8));
	assert_int_equal(del4(IP(10, 0, 0, 0), 8, 0), -ENOENT);
}

static void test_route_del_more_specific_falls_back_to_shorter(void **state)
{
	(void)state;
	add_ladder();
	assert_int_equal(del4(IP(10, 1, 2, 3), 32, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 24);
	assert_int_equal(del4(IP(10, 1, 2, 0), 24, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 16);
	assert_int_equal(del4(IP(10, 1, 0, 0), 16, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 8);
	assert_int_equal(del4(IP(10, 0, 0, 0), 8, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 0);
	assert_int_equal(del4(0, 0, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), -1);
}

static void test_route_del_less_specific_keeps_more_specific(void **state)
{
	(void)state;
	add_ladder();
	assert_int_equal(del4(IP(10, 1, 0, 0), 16, 0), 0);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 3)), 32);
	assert_int_equal(lookup_tag(IP(10, 1, 2, 9)), 24);
	assert_int_equal(lookup_tag(IP(10, 1, 3, 9)), 8);
}

static void test_route_del_type_mask_mismatch_keeps_route(void **state)
{
	(void)state;
	assert_int_equal(add_typed(IP(10, 0, 0, 2), 32, ROUTE_LOCAL), 0);
	unsigned user = 1u << ROUTE_GATEWAY | 1u << ROUTE_CONNECTED | 1u << ROUTE_BLACKHOLE;
	assert_int_equal(del4(IP(10, 0, 0, 2), 32, user), -ENOENT);
	const struct route *r = find4(IP(10, 0, 0, 2), 32);
	assert_non_null(r);
	assert_int_equal(r->type, ROUTE_LOCAL);
	assert_non_null(route_lookup4(t, IP(10, 0, 0, 2)));
}

static void test_route_del_type_mask_match_deletes(void **state)
{
	(void)state;
	assert_int_equal(add_typed(IP(10, 0, 0, 2), 32, ROUTE_LOCAL), 0);
	assert_int_equal(add_typed(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST), 0);
	assert_int_equal(del4(IP(10, 0, 0, 2), 32, 1u << ROUTE_LOCAL | 1u << ROUTE_GATEWAY),
			 0);
	assert_null(find4(IP(10, 0, 0, 2), 32));
	assert_int_equal(del4(IP(10, 0, 0, 255), 32, 1u << ROUTE_LOCAL), -ENOENT);
	assert_int_equal(del4(IP(10, 0, 0, 255), 32, 1u << ROUTE_BROADCAST), 0);
	assert_null(find4(IP(10, 0, 0, 255), 32));
}

static void test_route_del_plen_33_returns_einval(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 1), 32, 1), 0);
	assert_int_equal(del4(IP(10, 0, 0, 1), 33, 0), -EINVAL);
	assert_non_null(find4(IP(10, 0, 0, 1), 32));
}

/* route.h: "Deletes the route with exactly this prefix/plen". 10.0.0.1/24 is not the prefix
 * 10.0.0.0/24. */
static void test_route_del_host_bits_set_returns_einval_keeps_route(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 24, 1), 0);
	assert_int_equal(del4(IP(10, 0, 0, 1), 24, 0), -EINVAL);
	assert_non_null(find4(IP(10, 0, 0, 0), 24));
	assert_int_equal(lookup_tag(IP(10, 0, 0, 7)), 1);
}

static void test_route_find_exact_match_only(void **state)
{
	(void)state;
	add_ladder();
	const struct route *r = find4(IP(10, 1, 0, 0), 16);
	assert_non_null(r);
	assert_int_equal(r->port, 16);
	assert_null(find4(IP(10, 1, 0, 0), 17));
	assert_null(find4(IP(10, 1, 0, 0), 15));
	assert_null(find4(IP(10, 2, 0, 0), 16));
	assert_null(find4(IP(10, 1, 2, 4), 32));
	assert_non_null(find4(0, 0));
	assert_null(find4(IP(10, 1, 0, 0), 33));
}

static void test_route_find_host_bits_set_returns_null(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 24, 1), 0);
	assert_null(find4(IP(10, 0, 0, 1), 24));
}

struct walk_log {
	unsigned n;
	uint16_t tags[16];
	unsigned stop_at;   /* 1-based call that returns non-zero; 0: never */
};

static int walk_fn(const struct route *r, void *arg)
{
	struct walk_log *w = arg;
	w->tags[w->n++] = r->port;
	return w->n == w->stop_at ? 42 : 0;
}

static void test_route_walk_empty_table_calls_nothing(void **state)
{
	(void)state;
	struct walk_log w = {0};
	assert_int_equal(route_walk(t, walk_fn, &w), 0);
	assert_int_equal(w.n, 0);
}

static void test_route_walk_visits_all_in_index_order(void **state)
{
	(void)state;
	assert_int_equal(add(IP(10, 0, 0, 0), 8, 1), 0);
	assert_int_equal(add(IP(11, 0, 0, 0), 8, 2), 0);
	assert_int_equal(add(IP(12, 0, 0, 0), 8, 3), 0);
	assert_int_equal(del4(IP(11, 0, 0, 0), 8, 0), 0);
	/* The freed index is reused: the new route is walked second. */
	assert_int_equal(add(IP(13, 0, 0, 0), 8, 4), 0);
	struct walk_log w = {0};
	assert_int_equal(route_walk(t, walk_fn, &w), 0);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.tags[0], 1);
	assert_int_equal(w.tags[1], 4);
	assert_int_equal(w.tags[2], 3);
}

static void test_route_walk_nonzero_return_stops_and_is_returned(void **state)
{
	(void)state;
	for (uint16_t i = 0; i < 5; i++)
		assert_int_equal(add(IP(10 + i, 0, 0, 0), 8, i), 0);
	struct walk_log w = {.stop_at = 2};
	assert_int_equal(route_walk(t, walk_fn, &w), 42);
	assert_int_equal(w.n, 2);
}

static void test_route_type_str_names_every_type(void **state)
{
	(void)state;
	assert_string_equal(route_type_str(ROUTE_LOCAL), "local");
	assert_string_equal(route_type_str(ROUTE_BROADCAST), "broadcast");
	assert_string_equal(route_type_str(ROUTE_CONNECTED), "connected");
	assert_string_equal(route_type_str(ROUTE_GATEWAY), "gateway");
	assert_string_equal(route_type_str(ROUTE_BLACKHOLE), "blackhole");
	assert_string_equal(route_type_str(ROUTE_UNREACHABLE), "unreachable");
	assert_string_equal(route_type_str(ROUTE_TYPE_COUNT), "?");
}

static void test_route_table_create_size_out_of_range_fails(void **state)
{
	(void)state;
	assert_null(route_table_create(ROUTE_MAX_MIN - 1));
	assert_int_equal(rte_errno, EINVAL);
	assert_null(route_table_create(ROUTE_MAX_LIMIT + 1));
	assert_int_equal(rte_errno, EINVAL);
	struct route_table *small = route_table_create(ROUTE_MAX_MIN);
	assert_non_null(small);
	assert_int_equal(route_capacity(small), ROUTE_MAX_MIN);
	route_table_destroy(small);
	route_table_destroy(NULL); /* no-op */
}

/* MAX /24 prefixes fit; one more is -ENOSPC and changes nothing; a delete makes room. */
static void test_route_add_past_route_max_returns_enospc(void **state)
{
	(void)state;
	for (uint32_t i = 0; i < MAX; i++)
		assert_int_equal(add(IP(20, 0, 0, 0) + (i << 8), 24, (uint16_t)i), 0);
	assert_int_equal(add(IP(30, 0, 0, 0), 24, 9999), -ENOSPC);
	assert_null(route_lookup4(t, IP(30, 0, 0, 1)));
	assert_null(find4(IP(30, 0, 0, 0), 24));
	for (uint32_t i = 0; i < MAX; i += 97)
		assert_int_equal(lookup_tag(IP(20, 0, 0, 1) + (i << 8)), (int)i);
	assert_int_equal(del4(IP(20, 0, 5, 0), 24, 0), 0);
	assert_int_equal(add(IP(30, 0, 0, 0), 24, 9999), 0);
	assert_int_equal(lookup_tag(IP(30, 0, 0, 1)), 9999);
}

/* Every route a /32 in its own /24 (rte_lpm's worst case, a tbl8 group each, when routes
 * were an rte_lpm): the table holds its size in routes of any length. */
static void test_route_add_route_max_host_routes_in_distinct_slash24s_fit(void **state)
{
	(void)state;
	uint32_t i;
	for (i = 0; i < MAX; i++) {
		int rc = add(IP(20, 0, 0, 1) + (i << 8), 32, (uint16_t)i);
		if (rc != 0)
			break;
	}
	assert_int_equal(i, MAX);
	assert_int_equal(add(IP(30, 0, 0, 1), 32, 1), -ENOSPC);
	for (i = 0; i < MAX; i += 61) {
		assert_int_equal(lookup_tag(IP(20, 0, 0, 1) + (i << 8)), (int)i);
		assert_int_equal(lookup_tag(IP(20, 0, 0, 2) + (i << 8)), -1);
	}
}

/* Whatever the limit, a refused long prefix leaves no trace and earlier routes keep working. */
static void test_route_add_refused_long_prefix_leaves_table_unchanged(void **state)
{
	(void)state;
	uint32_t i;
	int rc = 0;
	for (i = 0; i < MAX + 1 && rc == 0; i++)
		rc = add(IP(20, 0, 0, 1) + (i << 8), 32, (uint16_t)i);
	assert_int_equal(rc, -ENOSPC);
	uint32_t failed = i - 1;
	assert_null(find4(IP(20, 0, 0, 1) + (failed << 8), 32));
	assert_null(route_lookup4(t, IP(20, 0, 0, 1) + (failed << 8)));
	for (uint32_t k = 0; k < failed; k += 37)
		assert_int_equal(lookup_tag(IP(20, 0, 0, 1) + (k << 8)), (int)k);
	assert_int_equal(del4(IP(20, 0, 0, 1), 32, 0), 0);
	assert_int_equal(add(IP(20, 0, 0, 1) + (failed << 8), 32, 7), 0);
	assert_int_equal(lookup_tag(IP(20, 0, 0, 1) + (failed << 8)), 7);
}

/* Brute force reference. */
struct ref_route {
	uint32_t prefix;
	uint8_t plen;
	uint16_t tag;
	bool live;
};

#define REF_N 1200
static struct ref_route ref[REF_N];

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static int ref_lookup(uint32_t dst)
{
	int best = -1, best_plen = -1;
	for (unsigned i = 0; i < REF_N; i++)
		if (ref[i].live && ((dst ^ ref[i].prefix) & ip4_mask(ref[i].plen)) == 0 &&
		    ref[i].plen > best_plen) {
			best = ref[i].tag;
			best_plen = ref[i].plen;
		}
	return best;
}

static void check_against_ref(uint32_t *seed)
{
	for (unsigned k = 0; k < 20000; k++) {
		uint32_t dst = xorshift(seed);
		/* Bias half the probes into a few /8s, where the prefixes are dense. */
		if (k & 1)
			dst = (dst & 0x00ffffffu) | (uint32_t)(10 + (dst >> 24) % 4) << 24;
		assert_int_equal(lookup_tag(dst), ref_lookup(dst));
	}
	for (unsigned i = 0; i < REF_N; i++) {
		uint32_t lo = ref[i].prefix, hi = lo | ~ip4_mask(ref[i].plen);
		assert_int_equal(lookup_tag(lo), ref_lookup(lo));
		assert_int_equal(lookup_tag(hi), ref_lookup(hi));
		assert_int_equal(lookup_tag(hi + 1), ref_lookup(hi + 1));
		assert_int_equal(lookup_tag(lo - 1), ref_lookup(lo - 1));
	}
}

static int count_fn(const struct route *r, void *arg)
{
	(void)r;
	(*(unsigned *)arg)++;
	return 0;
}

static void test_route_random_prefixes_match_brute_force(void **state)
{
	(void)state;
	uint32_t seed = 0x2545f491u;
	for (unsigned i = 0; i < REF_N; i++) {
		uint32_t r = xorshift(&seed);
		uint8_t plen = (uint8_t)(r % 33);
		uint32_t a = xorshift(&seed);
		if (i % 2 == 0)
			a = (a & 0x00ffffffu) | (uint32_t)(10 + (r >> 8) % 4) << 24;
		a &= ip4_mask(plen);
		bool dup = false;
		for (unsigned j = 0; j < i; j++)
			if (ref[j].live && ref[j].prefix == a && ref[j].plen == plen)
				dup = true;
		ref[i] = (struct ref_route){.prefix = a, .plen = plen, .tag = (uint16_t)i};
		int rc = add(a, plen, (uint16_t)i);
		assert_int_equal(rc, dup ? -EEXIST : 0);
		ref[i].live = !dup;
	}
	check_against_ref(&seed);
	/* Delete about half, then check again. */
	for (unsigned i = 0; i < REF_N; i++) {
		if (!ref[i].live || xorshift(&seed) % 2 == 0)
			continue;
		assert_int_equal(del4(ref[i].prefix, ref[i].plen, 0), 0);
		ref[i].live = false;
	}
	check_against_ref(&seed);
	/* Walk sees exactly the live ones. */
	unsigned live = 0;
	for (unsigned i = 0; i < REF_N; i++)
		if (ref[i].live) {
			live++;
			const struct route *r = find4(ref[i].prefix, ref[i].plen);
			assert_non_null(r);
			assert_int_equal(r->port, ref[i].tag);
		}
	unsigned walked = 0;
	assert_int_equal(route_walk(t, count_fn, &walked), 0);
	assert_int_equal(walked, live);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_route_lookup_empty_table_returns_null),
		T(test_route_lookup_ladder_longest_prefix_wins),
		T(test_route_lookup_default_route_catches_everything),
		T(test_route_lookup_returns_stored_fields),
		T(test_route_lookup_host_route_matches_only_its_address),
		T(test_route_lookup_slash0_and_slash32_of_zero_coexist),
		T(test_route_add_duplicate_returns_eexist),
		T(test_route_add_duplicate_default_returns_eexist),
		T(test_route_add_same_prefix_other_plen_both_kept),
		T(test_route_add_host_bits_set_returns_einval),
		T(test_route_add_plen_33_returns_einval),
		T(test_route_add_bad_type_returns_einval),
		T(test_route_del_missing_returns_enoent),
		T(test_route_del_existing_removes_it),
		T(test_route_del_more_specific_falls_back_to_shorter),
		T(test_route_del_less_specific_keeps_more_specific),
		T(test_route_del_type_mask_mismatch_keeps_route),
		T(test_route_del_type_mask_match_deletes),
		T(test_route_del_plen_33_returns_einval),
		T(test_route_del_host_bits_set_returns_einval_keeps_route),
		T(test_route_find_exact_match_only),
		T(test_route_find_host_bits_set_returns_null),
		T(test_route_walk_empty_table_calls_nothing),
		T(test_route_walk_visits_all_in_index_order),
		T(test_route_walk_nonzero_return_stops_and_is_returned),
		T(test_route_type_str_names_every_type),
		T(test_route_table_create_size_out_of_range_fails),
		T(test_route_add_past_route_max_returns_enospc),
		T(test_route_add_route_max_host_routes_in_distinct_slash24s_fit),
		T(test_route_add_refused_long_prefix_leaves_table_unchanged),
		T(test_route_random_prefixes_match_brute_force),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
