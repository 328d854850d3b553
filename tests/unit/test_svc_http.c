/* The http service's request-head parser (src/svc/http_parse.c): complete and partial heads,
 * pipelining, line ends, limits, persistence rules, and the malformed heads that must be
 * refused rather than guessed at (RFC 9112). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "http_parse.h"

static enum http_parse parse(const char *s, struct http_request *req)
{
	return http_parse_request(s, strlen(s), HTTP_HEAD_MAX, req);
}

static void assert_complete(const char *s, struct http_request *req)
{
	assert_int_equal(parse(s, req), HTTP_PARSE_COMPLETE);
	assert_int_equal(req->head_len, strlen(s));
}

static void assert_error(const char *s, unsigned status)
{
	struct http_request req;
	assert_int_equal(parse(s, &req), HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, status);
}

/* --- complete requests --- */

static void test_get_1_1_complete_persists(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET /index.html HTTP/1.1\r\nHost: a\r\n\r\n", &req);
	assert_int_equal(req.method, HTTP_METHOD_GET);
	assert_int_equal(req.minor, 1);
	assert_true(req.keep_alive);
	assert_false(req.has_te);
	assert_int_equal(req.content_length, 0);
	assert_int_equal(req.target_len, strlen("/index.html"));
	assert_memory_equal(req.target, "/index.html", req.target_len);
	assert_int_equal(req.method_len, 3);
}

static void test_head_method_recognised(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("HEAD / HTTP/1.1\r\nHost: a\r\n\r\n", &req);
	assert_int_equal(req.method, HTTP_METHOD_HEAD);
}

static void test_other_methods_parsed_as_other(void **state)
{
	static const char *const reqs[] = {
		"POST / HTTP/1.1\r\nHost: a\r\n\r\n",
		"DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
		"get / HTTP/1.1\r\nHost: a\r\n\r\n",       /* methods are case-sensitive */
		"GETS / HTTP/1.1\r\nHost: a\r\n\r\n",
		"X-CUSTOM_1 / HTTP/1.1\r\nHost: a\r\n\r\n",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct http_request req;
		assert_complete(reqs[i], &req);
		assert_int_equal(req.method, HTTP_METHOD_OTHER);
	}
}

static void test_get_1_0_closes_by_default(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.0\r\n\r\n", &req);
	assert_int_equal(req.minor, 0);
	assert_false(req.keep_alive);
}

static void test_get_1_0_keep_alive_persists(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &req);
	assert_true(req.keep_alive);
	assert_complete("GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n", &req);
	assert_true(req.keep_alive);
}

static void test_get_1_1_connection_close_closes(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", &req);
	assert_false(req.keep_alive);
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nCONNECTION:CLOSE\r\n\r\n", &req);
	assert_false(req.keep_alive);
}

static void test_connection_option_lists(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, close\r\n\r\n", &req);
	assert_false(req.keep_alive);
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: ,,  close  ,\r\n\r\n", &req);
	assert_false(req.keep_alive);
	assert_complete("GET / HTTP/1.0\r\nConnection: TE,\tkeep-alive\r\n\r\n", &req);
	assert_true(req.keep_alive);
	/* Options are whole tokens: "closed" or "keep-alive-ish" are something else. */
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n", &req);
	assert_true(req.keep_alive);
	assert_complete("GET / HTTP/1.0\r\nConnection: keep-alive-ish\r\n\r\n", &req);
	assert_false(req.keep_alive);
}

static void test_connection_close_wins_over_keep_alive(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n",
			&req);
	assert_false(req.keep_alive);
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nConnection: close, keep-alive\r\n\r\n",
			&req);
	assert_false(req.keep_alive);
}

static void test_later_1_x_minor_persists(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.2\r\nHost: a\r\n\r\n", &req);
	assert_int_equal(req.minor, 2);
	assert_true(req.keep_alive);
}

static void test_1_0_without_host_accepted(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.0\r\nUser-Agent: x\r\n\r\n", &req);
}

static void test_header_values_trimmed(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: \t 12 \t\r\n\r\n", &req);
	assert_int_equal(req.content_length, 12);
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\ncontent-length:7\r\n\r\n", &req);
	assert_int_equal(req.content_length, 7);
}

static void test_header_value_may_be_empty_or_non_ascii(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Utf8: caf\xc3\xa9\r\n\r\n",
			&req);
}

/* --- line ends --- */

static void test_bare_lf_line_ends_accepted(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("GET / HTTP/1.1\nHost: a\n\n", &req);
	assert_true(req.keep_alive);
	assert_complete("GET / HTTP/1.1\r\nHost: a\n\r\n", &req);
	assert_complete("GET / HTTP/1.0\n\n", &req);
}

static void test_leading_empty_lines_skipped(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", &req);
	assert_int_equal(req.method, HTTP_METHOD_GET);
	assert_complete("\nGET / HTTP/1.0\r\n\r\n", &req);
}

static void test_bare_cr_refused(void **state)
{
	(void)state;
	assert_error("GET / HTTP/1.1\rHost: a\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nHost: a\r\r\n\r\n", 400);
}

/* --- partial heads --- */

static void test_every_prefix_is_incomplete(void **state)
{
	static const char *const reqs[] = {
		"GET /a/b?c=d HTTP/1.1\r\nHost: example\r\nConnection: close\r\n\r\n",
		"GET / HTTP/1.0\n\n",
		"\r\nHEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n",
	};
	(void)state;
	for (size_t k = 0; k < sizeof(reqs) / sizeof(reqs[0]); k++) {
		const char *s = reqs[k];
		size_t n = strlen(s);
		for (size_t len = 0; len < n; len++) {
			struct http_request req;
			assert_int_equal(http_parse_request(s, len, HTTP_HEAD_MAX, &req),
					 HTTP_PARSE_INCOMPLETE);
		}
		struct http_request req;
		assert_int_equal(http_parse_request(s, n, HTTP_HEAD_MAX, &req),
				 HTTP_PARSE_COMPLETE);
		assert_int_equal(req.head_len, n);
	}
}

static void test_bad_request_line_refused_before_head_ends(void **state)
{
	struct http_request req;
	const char *s = "GET  / HTTP/1.1\r\nHost: a\r\n";
	(void)state;
	assert_int_equal(parse(s, &req), HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 400);
	s = "GET / HTTP/1.1\r\nBad Header: x\r\n";
	assert_int_equal(parse(s, &req), HTTP_PARSE_ERROR);
}

/* --- pipelining --- */

static void test_pipelined_requests_parsed_one_by_one(void **state)
{
	const char *s = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n"
			"HEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n"
			"GET /3 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
			"GET /4 HT";
	size_t len = strlen(s), off = 0;
	struct http_request req;
	(void)state;
	assert_int_equal(http_parse_request(s, len, HTTP_HEAD_MAX, &req), HTTP_PARSE_COMPLETE);
	assert_memory_equal(req.target, "/1", 2);
	assert_true(req.keep_alive);
	off += req.head_len;
	assert_int_equal(http_parse_request(s + off, len - off, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_COMPLETE);
	assert_int_equal(req.method, HTTP_METHOD_HEAD);
	assert_memory_equal(req.target, "/2", 2);
	off += req.head_len;
	assert_int_equal(http_parse_request(s + off, len - off, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_COMPLETE);
	assert_memory_equal(req.target, "/3", 2);
	assert_false(req.keep_alive);
	off += req.head_len;
	assert_int_equal(http_parse_request(s + off, len - off, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_INCOMPLETE);
}

static void test_pipelined_after_body_by_content_length(void **state)
{
	const char *s = "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"
			"GET /g HTTP/1.1\r\nHost: a\r\n\r\n";
	size_t len = strlen(s);
	struct http_request req;
	(void)state;
	assert_int_equal(http_parse_request(s, len, HTTP_HEAD_MAX, &req), HTTP_PARSE_COMPLETE);
	assert_int_equal(req.content_length, 5);
	size_t off = req.head_len + req.content_length;
	assert_int_equal(http_parse_request(s + off, len - off, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_COMPLETE);
	assert_int_equal(req.method, HTTP_METHOD_GET);
	assert_int_equal(off + req.head_len, len);
}

/* --- size limits --- */

/* A head of exactly n bytes: the request line, padding in one header, the empty line. */
static size_t make_head(char *buf, size_t n)
{
	const char *start = "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: ";
	size_t fixed = strlen(start) + 4; /* "\r\n\r\n" */
	assert_true(n > fixed);
	memcpy(buf, start, strlen(start));
	memset(buf + strlen(start), 'p', n - fixed);
	memcpy(buf + n - 4, "\r\n\r\n", 4);
	return n;
}

static void test_head_of_exactly_max_accepted(void **state)
{
	static char buf[HTTP_HEAD_MAX + 64];
	struct http_request req;
	(void)state;
	size_t n = make_head(buf, HTTP_HEAD_MAX);
	assert_int_equal(http_parse_request(buf, n, HTTP_HEAD_MAX, &req), HTTP_PARSE_COMPLETE);
	assert_int_equal(req.head_len, HTTP_HEAD_MAX);
}

static void test_head_over_max_is_431(void **state)
{
	static char buf[HTTP_HEAD_MAX + 64];
	struct http_request req;
	(void)state;
	size_t n = make_head(buf, HTTP_HEAD_MAX + 1);
	/* Not answerable before max bytes are in: still incomplete one byte short. */
	assert_int_equal(http_parse_request(buf, HTTP_HEAD_MAX - 1, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_INCOMPLETE);
	assert_int_equal(http_parse_request(buf, HTTP_HEAD_MAX, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 431);
	assert_int_equal(http_parse_request(buf, n, HTTP_HEAD_MAX, &req), HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 431);
}

static void test_endless_request_line_is_431(void **state)
{
	static char buf[HTTP_HEAD_MAX];
	struct http_request req;
	(void)state;
	memcpy(buf, "GET /", 5);
	memset(buf + 5, 'a', sizeof(buf) - 5);
	assert_int_equal(http_parse_request(buf, sizeof(buf), HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 431);
}

static void test_small_max_respected(void **state)
{
	const char *s = "GET / HTTP/1.1\r\nHost: a\r\n\r\n";
	struct http_request req;
	(void)state;
	assert_int_equal(http_parse_request(s, strlen(s), 10, &req), HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 431);
	assert_int_equal(http_parse_request(s, strlen(s), strlen(s), &req), HTTP_PARSE_COMPLETE);
}

/* --- malformed request lines --- */

static void test_bad_request_lines_are_400(void **state)
{
	static const char *const lines[] = {
		"GET  / HTTP/1.1",          /* two spaces */
		"GET /  HTTP/1.1",
		" GET / HTTP/1.1",          /* leading space */
		"GET / HTTP/1.1 ",          /* trailing space */
		"GET\t/\tHTTP/1.1",         /* tabs */
		"GET /",                    /* HTTP/0.9 */
		"GET / ",
		"GET  HTTP/1.1",            /* no target */
		"/ HTTP/1.1",               /* no method */
		"GET / http/1.1",           /* version is case-sensitive */
		"GET / HTTP/1",
		"GET / HTTP/1.10",
		"GET / HTTP/11",
		"GET / HTTP/x.1",
		"GET / HTTP/1.x",
		"GET / HTTPS/1.1",
		"G(T / HTTP/1.1",           /* not a token */
		"GET /a\x01 HTTP/1.1",      /* control character in the target */
		"GET /\x7f HTTP/1.1",
		"GET /caf\xc3\xa9 HTTP/1.1",/* raw non-ASCII target */
		"GET",
		"garbage",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "%s\r\nHost: a\r\n\r\n", lines[i]);
		struct http_request req;
		enum http_parse r = parse(buf, &req);
		if (r != HTTP_PARSE_ERROR || req.error_status != 400)
			fail_msg("request line '%s' not refused with 400", lines[i]);
	}
}

static void test_nul_in_request_line_is_400(void **state)
{
	const char s[] = "GET /a\0b HTTP/1.1\r\nHost: a\r\n\r\n";
	struct http_request req;
	(void)state;
	assert_int_equal(http_parse_request(s, sizeof(s) - 1, HTTP_HEAD_MAX, &req),
			 HTTP_PARSE_ERROR);
	assert_int_equal(req.error_status, 400);
}

static void test_other_major_versions_are_505(void **state)
{
	(void)state;
	assert_error("GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505);
	assert_error("GET / HTTP/0.9\r\n\r\n", 505);
	assert_error("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505);
}

/* --- malformed headers --- */

static void test_bad_header_lines_are_400(void **state)
{
	static const char *const fields[] = {
		"Host : a",                 /* space before the colon (smuggling) */
		"Host\t: a",
		"No colon here",
		": empty-name",
		" Folded: x",               /* obsolete line folding */
		"\tFolded: x",
		"X(bad): y",
		"X-Ctl: a\x01b",
		"X-Del: a\x7f",
	};
	(void)state;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		char buf[256];
		snprintf(buf, sizeof(buf), "GET / HTTP/1.1\r\nHost: a\r\n%s\r\n\r\n", fields[i]);
		struct http_request req;
		enum http_parse r = parse(buf, &req);
		if (r != HTTP_PARSE_ERROR || req.error_status != 400)
			fail_msg("field '%s' not refused with 400", fields[i]);
	}
}

static void test_host_rules(void **state)
{
	struct http_request req;
	(void)state;
	assert_error("GET / HTTP/1.1\r\n\r\n", 400);
	assert_error("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400);
	assert_error("GET / HTTP/1.0\r\nHost: a\r\nhost: a\r\n\r\n", 400);
	assert_complete("GET / HTTP/1.1\r\nhOsT: a\r\n\r\n", &req);
	assert_complete("GET / HTTP/1.1\r\nHost:\r\n\r\n", &req); /* empty is allowed */
}

static void test_content_length_rules(void **state)
{
	struct http_request req;
	(void)state;
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5, 5\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nContent-Length: 6\r\n"
		     "\r\n", 400);
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551616\r\n"
		     "\r\n", 400);
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551615\r\n"
			"\r\n", &req);
	assert_int_equal(req.content_length, UINT64_MAX);
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nContent-Length: 6\r\n"
			"\r\n", &req);
	assert_int_equal(req.content_length, 6);
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 007\r\n\r\n", &req);
	assert_int_equal(req.content_length, 7);
}

static void test_transfer_encoding_rules(void **state)
{
	struct http_request req;
	(void)state;
	assert_complete("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", &req);
	assert_true(req.has_te);
	assert_false(req.keep_alive); /* the body cannot be skipped: close after answering */
	assert_error("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n"
		     "Content-Length: 3\r\n\r\n", 400);
	assert_error("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400);
}

static void test_empty_and_whitespace_input(void **state)
{
	struct http_request req;
	(void)state;
	assert_int_equal(http_parse_request("", 0, HTTP_HEAD_MAX, &req), HTTP_PARSE_INCOMPLETE);
	assert_int_equal(parse("\r\n\r\n\r\n", &req), HTTP_PARSE_INCOMPLETE);
	assert_error("   \r\n", 400);
}

static void test_reason_phrases(void **state)
{
	(void)state;
	assert_string_equal(http_reason(200), "OK");
	assert_string_equal(http_reason(400), "Bad Request");
	assert_string_equal(http_reason(405), "Method Not Allowed");
	assert_string_equal(http_reason(431), "Request Header Fields Too Large");
	assert_string_equal(http_reason(505), "HTTP Version Not Supported");
	assert_non_null(http_reason(999));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_1_1_complete_persists),
		cmocka_unit_test(test_head_method_recognised),
		cmocka_unit_test(test_other_methods_parsed_as_other),
		cmocka_unit_test(test_get_1_0_closes_by_default),
		cmocka_unit_test(test_get_1_0_keep_alive_persists),
		cmocka_unit_test(test_get_1_1_connection_close_closes),
		cmocka_unit_test(test_connection_option_lists),
		cmocka_unit_test(test_connection_close_wins_over_keep_alive),
		cmocka_unit_test(test_later_1_x_minor_persists),
		cmocka_unit_test(test_1_0_without_host_accepted),
		cmocka_unit_test(test_header_values_trimmed),
		cmocka_unit_test(test_header_value_may_be_empty_or_non_ascii),
		cmocka_unit_test(test_bare_lf_line_ends_accepted),
		cmocka_unit_test(test_leading_empty_lines_skipped),
		cmocka_unit_test(test_bare_cr_refused),
		cmocka_unit_test(test_every_prefix_is_incomplete),
		cmocka_unit_test(test_bad_request_line_refused_before_head_ends),
		cmocka_unit_test(test_pipelined_requests_parsed_one_by_one),
		cmocka_unit_test(test_pipelined_after_body_by_content_length),
		cmocka_unit_test(test_head_of_exactly_max_accepted),
		cmocka_unit_test(test_head_over_max_is_431),
		cmocka_unit_test(test_endless_request_line_is_431),
		cmocka_unit_test(test_small_max_respected),
		cmocka_unit_test(test_bad_request_lines_are_400),
		cmocka_unit_test(test_nul_in_request_line_is_400),
		cmocka_unit_test(test_other_major_versions_are_505),
		cmocka_unit_test(test_bad_header_lines_are_400),
		cmocka_unit_test(test_host_rules),
		cmocka_unit_test(test_content_length_rules),
		cmocka_unit_test(test_transfer_encoding_rules),
		cmocka_unit_test(test_empty_and_whitespace_input),
		cmocka_unit_test(test_reason_phrases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
