/* A JSON reader (RFC 8259) for dpstackctl: the daemon's JSON replies parsed into a flat array
 * of nodes that the client walks by key. Strings are decoded in place in the caller's buffer,
 * so nodes point into it and no string is copied. Pure C, no DPDK: unit-tested alone.
 *
 * The reply is trusted no more than any input: everything RFC 8259 forbids is refused
 * (trailing commas, leading zeros, control characters in strings, bad escapes), and so are
 * nesting beyond JSON_TREE_DEPTH_MAX and \u0000 (strings are handed out as C strings). */
#ifndef DPS_TOOLS_JSON_TREE_H
#define DPS_TOOLS_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_TREE_DEPTH_MAX 32

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_node {
	enum json_type type;
	const char *key;    /* member of an object: its decoded name; else NULL */
	const char *str;    /* JSON_STRING: decoded, NUL-terminated */
	double num;         /* JSON_NUMBER */
	uint64_t u64;       /* JSON_NUMBER without sign, fraction or exponent, within range */
	bool is_u64;
	int child;          /* ARRAY/OBJECT: the first element, or -1 */
	int next;           /* the next sibling, or -1 */
};

struct json_tree {
	struct json_node *nodes;   /* nodes[0] is the root */
	size_t n, cap;
};

/* Parses text[0..len) (one JSON value, whitespace around it), decoding strings in place.
 * Returns 0, -EINVAL (not valid JSON), or -ENOMEM. On success, free with json_tree_free. */
int json_tree_parse(struct json_tree *t, char *text, size_t len);
void json_tree_free(struct json_tree *t);

/* The member called key of object node obj, or -1 (also when obj is not an object). */
int json_tree_get(const struct json_tree *t, int obj, const char *key);
/* The value of member key of obj as an unsigned integer; dflt when absent or not one. */
uint64_t json_tree_u64(const struct json_tree *t, int obj, const char *key, uint64_t dflt);
/* The string member key of obj, or NULL. */
const char *json_tree_str(const struct json_tree *t, int obj, const char *key);

#endif
