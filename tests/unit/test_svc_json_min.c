/* The iperf3 service's JSON reader (src/svc/json_min.c): the messages iperf3 3.12 sends,
 * every scalar type, escapes, skipped nested values and their depth limit, the limits on
 * members and arena, and malformed input of every kind (every truncation, RFC 8259's
 * forbidden forms, NUL bytes, random bytes). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "json_min.h"

#define MEMBERS 32

static struct json_min_member m[MEMBERS];
static char arena[4096];

static int parse(const char *s)
{
	return json_min_parse_object(s, strlen(s), m, MEMBERS, arena, sizeof(arena));
}

static void assert_invalid(const char *s)
{
	int rc = parse(s);
	if (rc != -EINVAL)
		print_error("accepted or wrong error (%d): %s\n", rc, s);
	assert_int_equal(rc, -EINVAL);
}

static const struct json_min_member *find(int n, const char *key)
{
	return json_min_find(m, (size_t)n, key);
}

/* --- what iperf3 sends --- */

static void test_iperf3_parameters_parsed(void **state)
{
	(void)state;
	const char *s = "{\"tcp\":true,\"omit\":0,\"time\":10,\"num\":0,\"blockcount\":0,"
			"\"parallel\":4,\"reverse\":true,\"len\":131072,\"pacing_timer\":1000,"
			"\"client_version\":\"3.12\"}";
	int n = parse(s);
	assert_int_equal(n, 10);
	assert_int_equal(find(n, "tcp")->type, JSON_MIN_TRUE);
	assert_int_equal(find(n, "reverse")->type, JSON_MIN_TRUE);
	assert_int_equal(find(n, "parallel")->type, JSON_MIN_NUMBER);
	assert_int_equal(find(n, "parallel")->i, 4);
	assert_true(find(n, "parallel")->is_int);
	assert_int_equal(find(n, "len")->i, 131072);
	assert_int_equal(find(n, "time")->i, 10);
	assert_string_equal(find(n, "client_version")->str, "3.12");
	assert_int_equal(find(n, "client_version")->str_len, 4);
	assert_null(find(n, "udp"));
	assert_null(find(n, "bidirectional"));
}

static void test_iperf3_results_with_streams_array(void **state)
{
	(void)state;
	const char *s = "{\"cpu_util_total\":1.5,\"cpu_util_user\":0.25,\"cpu_util_system\":1.25,"
			"\"sender_has_retransmits\":1,\"congestion_used\":\"cubic\","
			"\"streams\":[{\"id\":1,\"bytes\":1048576,\"retransmits\":0,\"jitter\":0,"
			"\"errors\":0,\"packets\":0,\"start_time\":0,\"end_time\":10.000123},"
			"{\"id\":3,\"bytes\":5,\"retransmits\":0,\"jitter\":0,\"errors\":0,"
			"\"packets\":0,\"start_time\":0,\"end_time\":10.0}]}";
	int n = parse(s);
	assert_int_equal(n, 6);
	assert_int_equal(find(n, "streams")->type, JSON_MIN_NESTED);
	assert_int_equal(find(n, "sender_has_retransmits")->i, 1);
	const struct json_min_member *cpu = find(n, "cpu_util_total");
	assert_false(cpu->is_int);
	assert_true(cpu->num > 1.49 && cpu->num < 1.51);
	assert_int_equal(cpu->i, 1);
}

/* --- scalars --- */

static void test_empty_object_and_whitespace(void **state)
{
	(void)state;
	assert_int_equal(parse("{}"), 0);
	assert_int_equal(parse(" \t\r\n{ \n}\r\n "), 0);
	int n = parse("\n{ \"a\" :\t1 ,\r\n \"b\" : null }\n");
	assert_int_equal(n, 2);
	assert_string_equal(m[0].key, "a");
	assert_string_equal(m[1].key, "b");
	assert_int_equal(m[1].type, JSON_MIN_NULL);
}

static void test_literals(void **state)
{
	(void)state;
	int n = parse("{\"t\":true,\"f\":false,\"n\":null}");
	assert_int_equal(n, 3);
	assert_int_equal(m[0].type, JSON_MIN_TRUE);
	assert_int_equal(m[1].type, JSON_MIN_FALSE);
	assert_int_equal(m[2].type, JSON_MIN_NULL);
}

static void test_numbers(void **state)
{
	(void)state;
	int n = parse("{\"a\":0,\"b\":-0,\"c\":-17,\"d\":3.25,\"e\":1e3,\"f\":-2.5E-1,"
		      "\"g\":9223372036854775807,\"h\":-9223372036854775808,"
		      "\"i\":9223372036854775808,\"j\":1e400,\"k\":-1e400,\"l\":18446744073709551616}");
	assert_int_equal(n, 12);
	assert_int_equal(m[0].i, 0);
	assert_true(m[0].is_int);
	assert_int_equal(m[1].i, 0);
	assert_int_equal(m[2].i, -17);
	assert_true(m[2].is_int);
	assert_false(m[3].is_int);
	assert_int_equal(m[3].i, 3);             /* truncated, like cJSON's valueint */
	assert_false(m[4].is_int);
	assert_int_equal(m[4].i, 1000);
	assert_int_equal(m[5].i, 0);
	assert_true(m[5].num < -0.24 && m[5].num > -0.26);
	assert_true(m[6].is_int);
	assert_int_equal(m[6].i, INT64_MAX);     /* exact, not through a double */
	assert_true(m[7].is_int);
	assert_int_equal(m[7].i, INT64_MIN);
	assert_false(m[8].is_int);               /* 2^63: saturated */
	assert_int_equal(m[8].i, INT64_MAX);
	assert_int_equal(m[9].i, INT64_MAX);
	assert_int_equal(m[10].i, INT64_MIN);
	assert_false(m[11].is_int);
	assert_int_equal(m[11].i, INT64_MAX);
}

static void test_bad_numbers_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"a\":01}", "{\"a\":-01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":+1}",
		"{\"a\":-}", "{\"a\":1e}", "{\"a\":1e+}", "{\"a\":0x10}", "{\"a\":1.2.3}",
		"{\"a\":NaN}", "{\"a\":Infinity}", "{\"a\":-Infinity}", "{\"a\":1 2}",
		"{\"a\":--1}", "{\"a\":1ee5}",
		/* longer than JSON_MIN_NUMBER_MAX characters */
		"{\"a\":1234567890123456789012345678901234567890123456789012345678901234567890}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i]);
}

static void test_string_escapes_decoded(void **state)
{
	(void)state;
	int n = parse("{\"s\":\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t\",\"u\":\"\\u0041\\u00e9\\u20ac"
		      "\\ud83d\\ude00\",\"e\":\"\",\"k\\u0065y\":1}");
	assert_int_equal(n, 4);
	assert_string_equal(m[0].str, "q\" b\\ s/ \b\f\n\r\t");
	assert_int_equal(m[0].str_len, strlen("q\" b\\ s/ \b\f\n\r\t"));
	assert_string_equal(m[1].str, "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_int_equal(m[2].type, JSON_MIN_STRING);
	assert_int_equal(m[2].str_len, 0);
	assert_string_equal(m[3].key, "key");     /* keys are decoded too */
	assert_non_null(find(n, "KEY"));
}

static void test_non_ascii_bytes_pass_through(void **state)
{
	(void)state;
	int n = parse("{\"t\":\"caf\xc3\xa9\"}");
	assert_int_equal(n, 1);
	assert_string_equal(m[0].str, "caf\xc3\xa9");
}

static void test_bad_strings_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"a\":\"x}",                   /* unterminated */
		"{\"a\":\"\\x\"}",               /* unknown escape */
		"{\"a\":\"\\u12\"}",             /* short \u */
		"{\"a\":\"\\u12g4\"}",
		"{\"a\":\"\\u0000\"}",           /* would cut the C string */
		"{\"a\":\"\\ud800\"}",           /* lone high surrogate */
		"{\"a\":\"\\ud800\\u0041\"}",    /* high surrogate, then no low one */
		"{\"a\":\"\\udc00\"}",           /* lone low surrogate */
		"{\"a\":\"tab\there\"}",         /* raw control character */
		"{\"a\":\"nl\nhere\"}",
		"{\"a\":'single'}",
		"{'a':1}",
		"{\"a\":\"\\",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i]);
}

/* --- nested values --- */

static void test_nested_values_skipped(void **state)
{
	(void)state;
	int n = parse("{\"a\":[],\"b\":{},\"c\":[1,\"x\",true,null,{\"d\":[[]]}],\"e\":2}");
	assert_int_equal(n, 4);
	assert_int_equal(m[0].type, JSON_MIN_NESTED);
	assert_int_equal(m[1].type, JSON_MIN_NESTED);
	assert_int_equal(m[2].type, JSON_MIN_NESTED);
	assert_int_equal(m[3].i, 2);
	/* Members of a skipped object are not members of the top one. */
	assert_null(find(n, "d"));
}

static void nest(char *buf, size_t cap, unsigned depth)
{
	size_t k = 0;
	k += (size_t)snprintf(buf + k, cap - k, "{\"a\":");
	for (unsigned i = 0; i < depth; i++)
		buf[k++] = '[';
	for (unsigned i = 0; i < depth; i++)
		buf[k++] = ']';
	buf[k++] = '}';
	buf[k] = '\0';
}

static void test_nesting_depth_limit(void **state)
{
	(void)state;
	char buf[256];
	nest(buf, sizeof(buf), JSON_MIN_DEPTH_MAX);
	assert_int_equal(parse(buf), 1);
	nest(buf, sizeof(buf), JSON_MIN_DEPTH_MAX + 1);
	assert_invalid(buf);
	nest(buf, sizeof(buf), 100);
	assert_invalid(buf);
}

static void test_bad_nested_values_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"a\":[1,]}", "{\"a\":[,1]}", "{\"a\":[1 2]}", "{\"a\":{\"b\"}}",
		"{\"a\":{\"b\":1,}}", "{\"a\":{1:2}}", "{\"a\":[}", "{\"a\":{]}", "{\"a\":[01]}",
		"{\"a\":[\"\\q\"]}", "{\"a\":[tru]}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i]);
}

/* --- malformed objects --- */

static void test_not_an_object_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"", " ", "[]", "[1]", "\"s\"", "1", "true", "null", "{", "}", "{{}}",
		"{\"a\"}", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{\"a\":1,}", "{,}", "{\"a\":1 \"b\":2}",
		"{\"a\":1}}", "{\"a\":1}x", "{\"a\":1} {}", "{\"a\":1};",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_invalid(bad[i]);
}

static void test_nul_bytes_refused(void **state)
{
	(void)state;
	static const char with_nul[] = "{\"a\":1}\0";
	assert_int_equal(json_min_parse_object(with_nul, sizeof(with_nul) - 1, m, MEMBERS, arena,
					       sizeof(arena)), -EINVAL);
	static const char in_string[] = "{\"a\":\"x\0y\"}";
	assert_int_equal(json_min_parse_object(in_string, sizeof(in_string) - 1, m, MEMBERS,
					       arena, sizeof(arena)), -EINVAL);
	static const char in_key[] = "{\"\0\":1}";
	assert_int_equal(json_min_parse_object(in_key, sizeof(in_key) - 1, m, MEMBERS, arena,
					       sizeof(arena)), -EINVAL);
	assert_int_equal(json_min_parse_object(NULL, 10, m, MEMBERS, arena, sizeof(arena)),
			 -EINVAL);
}

static void test_every_truncation_refused(void **state)
{
	(void)state;
	const char *s = "{\"tcp\":true,\"n\":-12.5e3,\"s\":\"a\\u00e9\\n\",\"x\":[{\"y\":null}],"
			"\"f\":false}";
	size_t len = strlen(s);
	assert_int_equal(json_min_parse_object(s, len, m, MEMBERS, arena, sizeof(arena)), 5);
	for (size_t k = 0; k < len; k++)
		assert_int_equal(json_min_parse_object(s, k, m, MEMBERS, arena, sizeof(arena)),
				 -EINVAL);
}

/* --- limits --- */

static void test_too_many_members(void **state)
{
	(void)state;
	const char *s = "{\"a\":1,\"b\":2,\"c\":3}";
	assert_int_equal(json_min_parse_object(s, strlen(s), m, 3, arena, sizeof(arena)), 3);
	assert_int_equal(json_min_parse_object(s, strlen(s), m, 2, arena, sizeof(arena)), -E2BIG);
	assert_int_equal(json_min_parse_object(s, strlen(s), m, 0, arena, sizeof(arena)), -E2BIG);
	assert_int_equal(json_min_parse_object("{}", 2, m, 0, arena, sizeof(arena)), 0);
}

static void test_arena_of_input_length_always_enough(void **state)
{
	(void)state;
	static const char *const docs[] = {
		"{\"a\":\"b\"}", "{\"\":\"\"}", "{\"k\":\"\\u00e9\\ud83d\\ude00\\n\"}",
		"{\"a\":1,\"b\":\"xyz\",\"c\":[\"long string skipped\"]}",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		size_t len = strlen(docs[i]);
		char small[128];
		assert_true(len <= sizeof(small));
		assert_true(json_min_parse_object(docs[i], len, m, MEMBERS, small, len) >= 0);
	}
}

static void test_arena_too_small(void **state)
{
	(void)state;
	const char *s = "{\"abc\":\"defg\"}";
	char small[8];
	assert_int_equal(json_min_parse_object(s, strlen(s), m, MEMBERS, small, 4), -ENOBUFS);
	assert_int_equal(json_min_parse_object(s, strlen(s), m, MEMBERS, small, 8), -ENOBUFS);
	assert_int_equal(json_min_parse_object(s, strlen(s), m, MEMBERS, NULL, 0), -ENOBUFS);
	assert_int_equal(json_min_parse_object("{}", 2, m, MEMBERS, NULL, 0), 0);
}

/* --- lookup --- */

static void test_find_ignores_case_and_takes_the_first(void **state)
{
	(void)state;
	int n = parse("{\"MSS\":1400,\"Len\":1,\"len\":2}");
	assert_int_equal(n, 3);
	assert_int_equal(find(n, "mss")->i, 1400);
	assert_int_equal(find(n, "LEN")->i, 1);   /* duplicates: the first, as cJSON */
	assert_null(find(n, "le"));
	assert_null(find(n, "lens"));
	assert_null(json_min_find(m, 0, "MSS"));
}

/* --- random input --- */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint32_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 32);
}

static void test_random_bytes_never_crash(void **state)
{
	(void)state;
	static const char alphabet[] = "{}[]\":,\\u0123456789abcdefntrul-+.eE \t\n\x01\x80";
	char buf[64];
	char small_arena[64];
	for (int iter = 0; iter < 200000; iter++) {
		size_t len = rng() % sizeof(buf);
		for (size_t k = 0; k < len; k++)
			buf[k] = iter & 1 ? (char)rng()
					  : alphabet[rng() % (sizeof(alphabet) - 1)];
		if (len > 0 && iter % 3 == 0)
			buf[0] = '{';
		int rc = json_min_parse_object(buf, len, m, 4, small_arena, len);
		assert_true(rc == -EINVAL || rc == -E2BIG || (rc >= 0 && rc <= 4));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_iperf3_parameters_parsed),
		cmocka_unit_test(test_iperf3_results_with_streams_array),
		cmocka_unit_test(test_empty_object_and_whitespace),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_bad_numbers_refused),
		cmocka_unit_test(test_string_escapes_decoded),
		cmocka_unit_test(test_non_ascii_bytes_pass_through),
		cmocka_unit_test(test_bad_strings_refused),
		cmocka_unit_test(test_nested_values_skipped),
		cmocka_unit_test(test_nesting_depth_limit),
		cmocka_unit_test(test_bad_nested_values_refused),
		cmocka_unit_test(test_not_an_object_refused),
		cmocka_unit_test(test_nul_bytes_refused),
		cmocka_unit_test(test_every_truncation_refused),
		cmocka_unit_test(test_too_many_members),
		cmocka_unit_test(test_arena_of_input_length_always_enough),
		cmocka_unit_test(test_arena_too_small),
		cmocka_unit_test(test_find_ignores_case_and_takes_the_first),
		cmocka_unit_test(test_random_bytes_never_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
