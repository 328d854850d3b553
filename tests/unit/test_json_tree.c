/* dpstackctl's JSON reader (tools/dpstackctl/json_tree.c): a `stats -j`-shaped reply walked
 * by key, every value type, escapes decoded in place, integers kept exact beyond 2^53, and
 * malformed input of every kind (every truncation, RFC 8259's forbidden forms, NUL bytes,
 * nesting past the limit). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_tree.h"

static struct json_tree t;
static char text[4096];

static int parse(const char *s)
{
	size_t n = strlen(s);
	assert_true(n < sizeof(text));
	memcpy(text, s, n + 1);
	return json_tree_parse(&t, text, n);
}

static void assert_invalid(const char *s)
{
	int rc = parse(s);
	if (rc != -EINVAL)
		print_error("accepted or wrong error (%d): %s\n", rc, s);
	assert_int_equal(rc, -EINVAL);
	assert_null(t.nodes);
}

static void test_json_tree_stats_reply_walked_by_key(void **state)
{
	assert_int_equal(parse("{\"tsc_hz\":2000000000,\"ports\":{\"port0\":{\"rx_packets\":12,"
			       "\"tx_dropped\":0}},\"workers\":[{\"worker\":0,\"lcore\":1},"
			       "{\"worker\":1,\"lcore\":2}],\"drops\":{}}"),
			 0);
	assert_int_equal(json_tree_u64(&t, 0, "tsc_hz", 0), 2000000000);
	int port0 = json_tree_get(&t, json_tree_get(&t, 0, "ports"), "port0");
	assert_true(port0 > 0);
	assert_int_equal(json_tree_u64(&t, port0, "rx_packets", 0), 12);
	assert_int_equal(json_tree_u64(&t, port0, "missing", 77), 77);
	int workers = json_tree_get(&t, 0, "workers");
	assert_int_equal(t.nodes[workers].type, JSON_ARRAY);
	unsigned n = 0;
	for (int c = t.nodes[workers].child; c >= 0; c = t.nodes[c].next, n++)
		assert_int_equal(json_tree_u64(&t, c, "lcore", 0), n + 1);
	assert_int_equal(n, 2);
	int drops = json_tree_get(&t, 0, "drops");
	assert_int_equal(t.nodes[drops].type, JSON_OBJECT);
	assert_int_equal(t.nodes[drops].child, -1);
	/* not an object: no members */
	assert_int_equal(json_tree_get(&t, workers, "worker"), -1);
	assert_int_equal(json_tree_get(&t, -1, "x"), -1);
	json_tree_free(&t);
}

static void test_json_tree_every_type_and_escape(void **state)
{
	assert_int_equal(parse(" [null, true ,false, -1.5e2, 0,"
			       " \"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\","
			       " 18446744073709551615, 18446744073709551616, {\"k\\u0041\":[]}] "),
			 0);
	int c = t.nodes[0].child;
	static const enum json_type types[] = {JSON_NULL, JSON_TRUE, JSON_FALSE, JSON_NUMBER,
					       JSON_NUMBER, JSON_STRING, JSON_NUMBER, JSON_NUMBER,
					       JSON_OBJECT};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++, c = t.nodes[c].next) {
		assert_true(c >= 0);
		assert_int_equal(t.nodes[c].type, types[i]);
		if (i == 3) {
			assert_true(t.nodes[c].num == -150.0);
			assert_false(t.nodes[c].is_u64);
		}
		if (i == 4)
			assert_true(t.nodes[c].is_u64 && t.nodes[c].u64 == 0);
		if (i == 5)
			assert_string_equal(t.nodes[c].str, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80");
		if (i == 6)
			assert_true(t.nodes[c].is_u64 && t.nodes[c].u64 == UINT64_MAX);
		if (i == 7)
			assert_false(t.nodes[c].is_u64); /* past 64 bits: a double only */
		if (i == 8) {
			int k = json_tree_get(&t, c, "kA");
			assert_true(k >= 0);
			assert_int_equal(t.nodes[k].type, JSON_ARRAY);
		}
	}
	assert_int_equal(c, -1);
	json_tree_free(&t);
}

static void test_json_tree_malformed_refused(void **state)
{
	static const char *const bad[] = {
		"", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "{'a':1}", "[01]",
		"[1.]", "[.5]", "[1e]", "[-]", "[+1]", "[tru]", "[nul]", "\"abc", "\"a\\x\"",
		"\"a\\u12\"", "\"\\u0000\"", "\"\\udc00\"", "\"\\ud800\"", "\"\\ud800\\u0041\"",
		"\"tab\there\"", "{} {}", "[1] x", "{\"a\":1 \"b\":2}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i]);
	/* a NUL byte inside the input */
	memcpy(text, "[1,\0 2]", 7);
	assert_int_equal(json_tree_parse(&t, text, 7), -EINVAL);
}

static void test_json_tree_every_truncation_refused(void **state)
{
	static const char full[] = "{\"ports\":{\"p\":{\"rx\":1,\"s\":\"x\\u00e9\"}},\"w\":[true,null]}";
	for (size_t n = 0; n < sizeof(full) - 1; n++) {
		char buf[sizeof(full)];
		memcpy(buf, full, n);
		if (json_tree_parse(&t, buf, n) != -EINVAL) {
			print_error("truncation to %zu accepted\n", n);
			fail();
		}
	}
	assert_int_equal(parse(full), 0);
	json_tree_free(&t);
}

static void test_json_tree_nesting_bounded(void **state)
{
	char deep[2 * (JSON_TREE_DEPTH_MAX + 2) + 1];
	for (unsigned depth = JSON_TREE_DEPTH_MAX + 1; depth <= JSON_TREE_DEPTH_MAX + 2; depth++) {
		memset(deep, '[', depth);
		memset(deep + depth, ']', depth);
		deep[2 * depth] = '\0';
		int rc = parse(deep);
		if (depth == JSON_TREE_DEPTH_MAX + 1) {
			assert_int_equal(rc, 0); /* the root and JSON_TREE_DEPTH_MAX levels below */
			json_tree_free(&t);
		} else {
			assert_int_equal(rc, -EINVAL);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_tree_stats_reply_walked_by_key),
		cmocka_unit_test(test_json_tree_every_type_and_escape),
		cmocka_unit_test(test_json_tree_malformed_refused),
		cmocka_unit_test(test_json_tree_every_truncation_refused),
		cmocka_unit_test(test_json_tree_nesting_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
