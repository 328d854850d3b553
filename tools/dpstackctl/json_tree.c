#include "json_tree.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct json_parser {
	struct json_tree *t;
	char *p;       /* next byte to read */
	char *end;
	int err;       /* the first error: -EINVAL or -ENOMEM */
};

static int parse_fail(struct json_parser *jp, int err)
{
	if (jp->err == 0)
		jp->err = err;
	return -1;
}

static void skip_ws(struct json_parser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' || *jp->p == '\n' ||
				   *jp->p == '\r'))
		jp->p++;
}

static int node_new(struct json_parser *jp, enum json_type type, const char *key)
{
	struct json_tree *t = jp->t;
	if (t->n == t->cap) {
		size_t cap = t->cap == 0 ? 64 : t->cap * 2;
		if (cap > (size_t)INT32_MAX)
			return parse_fail(jp, -ENOMEM);
		struct json_node *nodes = realloc(t->nodes, cap * sizeof(*nodes));
		if (nodes == NULL)
			return parse_fail(jp, -ENOMEM);
		t->nodes = nodes;
		t->cap = cap;
	}
	t->nodes[t->n] = (struct json_node){.type = type, .key = key, .child = -1, .next = -1};
	return (int)t->n++;
}

static int hex4(const char *s, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Writes code point cp as UTF-8 at *w (at most 4 bytes; an escape takes at least 6). */
static void put_utf8(char **w, unsigned cp)
{
	unsigned char *o = (unsigned char *)*w;
	if (cp < 0x80) {
		*o++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*o++ = (unsigned char)(0xc0 | cp >> 6);
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (unsigned char)(0xe0 | cp >> 12);
		*o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (unsigned char)(0xf0 | cp >> 18);
		*o++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3f));
		*o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*w = (char *)o;
}

/* The \u escape at *r (after the backslash and 'u'), with its low surrogate if it needs
 * one (RFC 8259 §7). */
static int unicode_escape(struct json_parser *jp, char **r, unsigned *cp)
{
	if (jp->end - *r < 4 || hex4(*r, cp) != 0)
		return -1;
	*r += 4;
	if (*cp >= 0xdc00 && *cp <= 0xdfff)
		return -1;
	if (*cp >= 0xd800 && *cp <= 0xdbff) {
		unsigned lo;
		if (jp->end - *r < 6 || (*r)[0] != '\\' || (*r)[1] != 'u' || hex4(*r + 2, &lo) != 0 ||
		    lo < 0xdc00 || lo > 0xdfff)
			return -1;
		*r += 6;
		*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	return *cp == 0 ? -1 : 0;
}

/* The string at jp->p (its opening quote), decoded in place: decoding never lengthens, and
 * the closing quote's byte or an earlier one takes the NUL. */
static char *parse_string(struct json_parser *jp)
{
	char *r = jp->p + 1, *w = r, *start = r;
	for (;;) {
		if (r >= jp->end) {
			parse_fail(jp, -EINVAL);
			return NULL;
		}
		unsigned char c = (unsigned char)*r++;
		if (c == '"')
			break;
		if (c < 0x20) {
			parse_fail(jp, -EINVAL);
			return NULL;
		}
		if (c != '\\') {
			*w++ = (char)c;
			continue;
		}
		if (r >= jp->end) {
			parse_fail(jp, -EINVAL);
			return NULL;
		}
		char e = *r++;
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *k = e != '\0' ? strchr(from, e) : NULL;
		if (k != NULL) {
			*w++ = to[k - from];
			continue;
		}
		unsigned cp;
		if (e != 'u' || unicode_escape(jp, &r, &cp) != 0) {
			parse_fail(jp, -EINVAL);
			return NULL;
		}
		put_utf8(&w, cp);
	}
	*w = '\0';
	jp->p = r;
	return start;
}

/* RFC 8259 §6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)? */
static int parse_number(struct json_parser *jp, int node)
{
	char *s = jp->p, *q = s;
	bool plain = true;
	if (q < jp->end && *q == '-') {
		q++;
		plain = false;
	}
	if (q >= jp->end || *q < '0' || *q > '9')
		return parse_fail(jp, -EINVAL);
	if (*q == '0' && q + 1 < jp->end && q[1] >= '0' && q[1] <= '9')
		return parse_fail(jp, -EINVAL);
	while (q < jp->end && *q >= '0' && *q <= '9')
		q++;
	if (q < jp->end && *q == '.') {
		plain = false;
		if (++q >= jp->end || *q < '0' || *q > '9')
			return parse_fail(jp, -EINVAL);
		while (q < jp->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < jp->end && (*q == 'e' || *q == 'E')) {
		plain = false;
		q++;
		if (q < jp->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= jp->end || *q < '0' || *q > '9')
			return parse_fail(jp, -EINVAL);
		while (q < jp->end && *q >= '0' && *q <= '9')
			q++;
	}
	char buf[64];
	if ((size_t)(q - s) >= sizeof(buf))
		return parse_fail(jp, -EINVAL);
	memcpy(buf, s, (size_t)(q - s));
	buf[q - s] = '\0';
	struct json_node *n = &jp->t->nodes[node];
	n->num = strtod(buf, NULL);
	if (plain) {
		errno = 0;
		unsigned long long v = strtoull(buf, NULL, 10);
		n->is_u64 = errno == 0;
		n->u64 = (uint64_t)v;
	}
	jp->p = q;
	return 0;
}

static int parse_literal(struct json_parser *jp, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n) != 0)
		return parse_fail(jp, -EINVAL);
	jp->p += n;
	return 0;
}

static int parse_value(struct json_parser *jp, const char *key, unsigned depth);

/* The elements of an array or members of an object, after its opening bracket. */
static int parse_container(struct json_parser *jp, int node, bool object, unsigned depth)
{
	char close = object ? '}' : ']';
	int last = -1;
	skip_ws(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return 0;
	}
	for (;;) {
		skip_ws(jp);
		const char *key = NULL;
		if (object) {
			if (jp->p >= jp->end || *jp->p != '"')
				return parse_fail(jp, -EINVAL);
			key = parse_string(jp);
			if (key == NULL)
				return -1;
			skip_ws(jp);
			if (jp->p >= jp->end || *jp->p != ':')
				return parse_fail(jp, -EINVAL);
			jp->p++;
		}
		int child = parse_value(jp, key, depth + 1);
		if (child < 0)
			return -1;
		if (last < 0)
			jp->t->nodes[node].child = child;
		else
			jp->t->nodes[last].next = child;
		last = child;
		skip_ws(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return 0;
		}
		return parse_fail(jp, -EINVAL);
	}
}

/* Returns the new node's index, or -1. */
static int parse_value(struct json_parser *jp, const char *key, unsigned depth)
{
	if (depth > JSON_TREE_DEPTH_MAX)
		return parse_fail(jp, -EINVAL);
	skip_ws(jp);
	if (jp->p >= jp->end)
		return parse_fail(jp, -EINVAL);
	char c = *jp->p;
	int node;
	switch (c) {
	case '{':
	case '[':
		node = node_new(jp, c == '{' ? JSON_OBJECT : JSON_ARRAY, key);
		jp->p++;
		if (node < 0 || parse_container(jp, node, c == '{', depth) != 0)
			return -1;
		return node;
	case '"': {
		node = node_new(jp, JSON_STRING, key);
		const char *s = node < 0 ? NULL : parse_string(jp);
		if (s == NULL)
			return -1;
		jp->t->nodes[node].str = s;
		return node;
	}
	case 't':
		node = node_new(jp, JSON_TRUE, key);
		return node < 0 || parse_literal(jp, "true") != 0 ? -1 : node;
	case 'f':
		node = node_new(jp, JSON_FALSE, key);
		return node < 0 || parse_literal(jp, "false") != 0 ? -1 : node;
	case 'n':
		node = node_new(jp, JSON_NULL, key);
		return node < 0 || parse_literal(jp, "null") != 0 ? -1 : node;
	default:
		node = node_new(jp, JSON_NUMBER, key);
		return node < 0 || parse_number(jp, node) != 0 ? -1 : node;
	}
}

int json_tree_parse(struct json_tree *t, char *text, size_t len)
{
	memset(t, 0, sizeof(*t));
	struct json_parser jp = {.t = t, .p = text, .end = text + len};
	if (memchr(text, '\0', len) != NULL)
		parse_fail(&jp, -EINVAL);
	else if (parse_value(&jp, NULL, 0) >= 0) {
		skip_ws(&jp);
		if (jp.p != jp.end)
			parse_fail(&jp, -EINVAL);
	}
	if (jp.err != 0)
		json_tree_free(t);
	return jp.err;
}

void json_tree_free(struct json_tree *t)
{
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

int json_tree_get(const struct json_tree *t, int obj, const char *key)
{
	if (obj < 0 || (size_t)obj >= t->n || t->nodes[obj].type != JSON_OBJECT)
		return -1;
	for (int c = t->nodes[obj].child; c >= 0; c = t->nodes[c].next)
		if (strcmp(t->nodes[c].key, key) == 0)
			return c;
	return -1;
}

uint64_t json_tree_u64(const struct json_tree *t, int obj, const char *key, uint64_t dflt)
{
	int c = json_tree_get(t, obj, key);
	return c >= 0 && t->nodes[c].type == JSON_NUMBER && t->nodes[c].is_u64 ? t->nodes[c].u64
										  : dflt;
}

const char *json_tree_str(const struct json_tree *t, int obj, const char *key)
{
	int c = json_tree_get(t, obj, key);
	return c >= 0 && t->nodes[c].type == JSON_STRING ? t->nodes[c].str : NULL;
}
