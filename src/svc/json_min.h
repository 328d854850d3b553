/* A minimal JSON reader (RFC 8259) for the control messages of the iperf3 service: one
 * object whose members are read as scalars (numbers, booleans, null, strings); members whose
 * value is an array or an object are checked for syntax, to a bounded depth, and reported
 * as JSON_MIN_NESTED without their content. Pure C, no allocation, no DPDK: unit-tested and
 * fuzzable alone.
 *
 * The input is untrusted and bounded by its length: no NUL terminator is needed and a NUL
 * byte anywhere is an error. Everything RFC 8259 forbids is refused (trailing commas, single
 * quotes, leading zeros, control characters in strings, invalid escapes, lone surrogates,
 * anything but whitespace after the object); \u0000 is refused too, because keys and strings
 * are handed out as C strings. Bytes >= 0x80 pass through unchecked (not validated UTF-8). */
#ifndef DPS_SVC_JSON_MIN_H
#define DPS_SVC_JSON_MIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MIN_DEPTH_MAX 16    /* nesting of skipped arrays/objects below the top object */
#define JSON_MIN_NUMBER_MAX 64   /* characters of one number */

enum json_min_type {
	JSON_MIN_NULL,
	JSON_MIN_FALSE,
	JSON_MIN_TRUE,
	JSON_MIN_NUMBER,
	JSON_MIN_STRING,
	JSON_MIN_NESTED,   /* an array or object: syntax checked, content not kept */
};

struct json_min_member {
	const char *key;          /* decoded, NUL-terminated, in the caller's arena */
	enum json_min_type type;
	/* JSON_MIN_NUMBER: the value, and as an integer truncated toward zero and saturated
	 * to the int64_t range (what cJSON's valueint holds). is_int: no fraction, no
	 * exponent, and within the int64_t range. */
	double num;
	int64_t i;
	bool is_int;
	/* JSON_MIN_STRING: decoded, NUL-terminated, in the arena; str_len excludes the NUL. */
	const char *str;
	size_t str_len;
};

/* Parses the object in in[0..len) into m[0..max). Decoded keys and strings go into
 * arena[0..arena_len); an arena of len bytes is always enough (decoding never lengthens,
 * and each NUL replaces a quote). Members keep their order; duplicate keys are kept (see
 * json_min_find). Returns the number of members, or -EINVAL (not one valid JSON object;
 * nesting beyond JSON_MIN_DEPTH_MAX), -E2BIG (more than max members), -ENOBUFS (arena too
 * small). */
int json_min_parse_object(const char *in, size_t len, struct json_min_member *m, size_t max,
			  char *arena, size_t arena_len);

/* The first member called key, compared ignoring ASCII case (as cJSON_GetObjectItem does,
 * so that the service reads what an iperf3 server would); NULL when there is none. */
const struct json_min_member *json_min_find(const struct json_min_member *m, size_t n,
					    const char *key);

#endif
