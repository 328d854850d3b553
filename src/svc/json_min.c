/* A minimal JSON object reader: see json_min.h. One cursor walks the input once; every read
 * checks the position against the length first. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "json_min.h"

struct json_cur {
	const char *in;
	size_t len;
	size_t pos;
	char *arena;          /* NULL while only validating */
	size_t arena_len;
	size_t arena_pos;
};

static bool cur_end(const struct json_cur *c)
{
	return c->pos >= c->len;
}

/* The next byte, or -1 at the end. */
static int cur_peek(const struct json_cur *c)
{
	return cur_end(c) ? -1 : (unsigned char)c->in[c->pos];
}

static void cur_skip_ws(struct json_cur *c)
{
	while (!cur_end(c)) {
		char ch = c->in[c->pos];
		if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
			return;
		c->pos++;
	}
}

static bool cur_take(struct json_cur *c, char ch)
{
	if (cur_peek(c) != (unsigned char)ch)
		return false;
	c->pos++;
	return true;
}

static int arena_put(struct json_cur *c, char ch)
{
	if (c->arena == NULL)
		return 0;
	if (c->arena_pos >= c->arena_len)
		return -ENOBUFS;
	c->arena[c->arena_pos++] = ch;
	return 0;
}

static int hex4(struct json_cur *c, uint32_t *out)
{
	if (c->len - c->pos < 4)
		return -EINVAL;
	uint32_t v = 0;
	for (int k = 0; k < 4; k++) {
		char h = c->in[c->pos++];
		v <<= 4;
		if (h >= '0' && h <= '9')
			v |= (uint32_t)(h - '0');
		else if (h >= 'a' && h <= 'f')
			v |= (uint32_t)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			v |= (uint32_t)(h - 'A' + 10);
		else
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* After "\u": one code point (a surrogate pair counts as one), written as UTF-8. */
static int string_unicode(struct json_cur *c)
{
	uint32_t cp;
	int rc = hex4(c, &cp);
	if (rc != 0)
		return rc;
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return -EINVAL;                  /* a low surrogate first */
	if (cp >= 0xd800 && cp <= 0xdbff) {
		uint32_t lo;
		if (c->len - c->pos < 2 || c->in[c->pos] != '\\' || c->in[c->pos + 1] != 'u')
			return -EINVAL;          /* a high surrogate alone */
		c->pos += 2;
		rc = hex4(c, &lo);
		if (rc != 0)
			return rc;
		if (lo < 0xdc00 || lo > 0xdfff)
			return -EINVAL;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	if (cp == 0)
		return -EINVAL;                  /* would cut the C string */
	char utf8[4];
	int n;
	if (cp < 0x80) {
		utf8[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		utf8[0] = (char)(0xc0 | (cp >> 6));
		utf8[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		utf8[0] = (char)(0xe0 | (cp >> 12));
		utf8[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		utf8[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		utf8[0] = (char)(0xf0 | (cp >> 18));
		utf8[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		utf8[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		utf8[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	for (int k = 0; k < n; k++) {
		rc = arena_put(c, utf8[k]);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* A string at the cursor (its opening quote included). With an arena, its decoded text and
 * a NUL are appended there, described by *out and *out_len. */
static int parse_string(struct json_cur *c, const char **out, size_t *out_len)
{
	if (!cur_take(c, '"'))
		return -EINVAL;
	size_t start = c->arena_pos;
	int rc;
	for (;;) {
		if (cur_end(c))
			return -EINVAL;
		unsigned char ch = (unsigned char)c->in[c->pos++];
		if (ch == '"')
			break;
		if (ch < 0x20)
			return -EINVAL;          /* control characters (NUL included) */
		if (ch != '\\') {
			rc = arena_put(c, (char)ch);
			if (rc != 0)
				return rc;
			continue;
		}
		if (cur_end(c))
			return -EINVAL;
		char e = c->in[c->pos++];
		char dec;
		switch (e) {
		case '"': dec = '"'; break;
		case '\\': dec = '\\'; break;
		case '/': dec = '/'; break;
		case 'b': dec = '\b'; break;
		case 'f': dec = '\f'; break;
		case 'n': dec = '\n'; break;
		case 'r': dec = '\r'; break;
		case 't': dec = '\t'; break;
		case 'u':
			rc = string_unicode(c);
			if (rc != 0)
				return rc;
			continue;
		default:
			return -EINVAL;
		}
		rc = arena_put(c, dec);
		if (rc != 0)
			return rc;
	}
	if (c->arena == NULL)
		return 0;
	rc = arena_put(c, '\0');
	if (rc != 0)
		return rc;
	if (out != NULL) {
		*out = c->arena + start;
		*out_len = c->arena_pos - start - 1;
	}
	return 0;
}

static bool is_digit(int ch)
{
	return ch >= '0' && ch <= '9';
}

/* A number (RFC 8259 §6: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?). With m, its
 * value is stored there. */
static int parse_number(struct json_cur *c, struct json_min_member *m)
{
	size_t start = c->pos;
	bool integral = true, overflow = false, neg = false;
	uint64_t mag = 0;
	if (cur_take(c, '-'))
		neg = true;
	if (cur_take(c, '0')) {
		if (is_digit(cur_peek(c)))
			return -EINVAL;          /* leading zero */
	} else if (is_digit(cur_peek(c))) {
		while (is_digit(cur_peek(c))) {
			unsigned d = (unsigned)(c->in[c->pos++] - '0');
			if (mag > (UINT64_MAX - d) / 10)
				overflow = true;
			else
				mag = mag * 10 + d;
		}
	} else {
		return -EINVAL;
	}
	if (cur_take(c, '.')) {
		integral = false;
		if (!is_digit(cur_peek(c)))
			return -EINVAL;
		while (is_digit(cur_peek(c)))
			c->pos++;
	}
	if (cur_peek(c) == 'e' || cur_peek(c) == 'E') {
		integral = false;
		c->pos++;
		if (cur_peek(c) == '+' || cur_peek(c) == '-')
			c->pos++;
		if (!is_digit(cur_peek(c)))
			return -EINVAL;
		while (is_digit(cur_peek(c)))
			c->pos++;
	}
	size_t n = c->pos - start;
	if (n > JSON_MIN_NUMBER_MAX)
		return -EINVAL;
	if (m == NULL)
		return 0;
	m->type = JSON_MIN_NUMBER;
	char text[JSON_MIN_NUMBER_MAX + 1];
	memcpy(text, c->in + start, n);
	text[n] = '\0';
	m->num = strtod(text, NULL);   /* the grammar was checked above; the C locale is ours */
	if (m->num >= (double)INT64_MAX)
		m->i = INT64_MAX;
	else if (m->num <= (double)INT64_MIN)
		m->i = INT64_MIN;
	else
		m->i = (int64_t)m->num;
	/* Exact for integers that fit: the double may have rounded them. */
	m->is_int = false;
	if (integral && !overflow) {
		if (!neg && mag <= (uint64_t)INT64_MAX) {
			m->i = (int64_t)mag;
			m->is_int = true;
		} else if (neg && mag <= (uint64_t)INT64_MAX + 1) {
			m->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
			m->is_int = true;
		}
	}
	return 0;
}

static bool take_literal(struct json_cur *c, const char *lit)
{
	size_t n = strlen(lit);
	if (c->len - c->pos < n || memcmp(c->in + c->pos, lit, n) != 0)
		return false;
	c->pos += n;
	return true;
}

/* A value below the top object that is only checked: nothing goes to the arena. depth is
 * the nesting of the container holding it (the top object is 0). */
static int skip_value(struct json_cur *c, unsigned depth);

static int skip_container(struct json_cur *c, unsigned depth, char close, bool object)
{
	if (depth > JSON_MIN_DEPTH_MAX)
		return -EINVAL;
	c->pos++;                /* the opening bracket */
	cur_skip_ws(c);
	if (cur_take(c, close))
		return 0;
	for (;;) {
		int rc;
		if (object) {
			rc = parse_string(c, NULL, NULL);
			if (rc != 0)
				return rc;
			cur_skip_ws(c);
			if (!cur_take(c, ':'))
				return -EINVAL;
			cur_skip_ws(c);
		}
		rc = skip_value(c, depth);
		if (rc != 0)
			return rc;
		cur_skip_ws(c);
		if (cur_take(c, close))
			return 0;
		if (!cur_take(c, ','))
			return -EINVAL;
		cur_skip_ws(c);
	}
}

static int skip_value(struct json_cur *c, unsigned depth)
{
	switch (cur_peek(c)) {
	case '{':
		return skip_container(c, depth + 1, '}', true);
	case '[':
		return skip_container(c, depth + 1, ']', false);
	case '"':
		return parse_string(c, NULL, NULL);
	case 't':
		return take_literal(c, "true") ? 0 : -EINVAL;
	case 'f':
		return take_literal(c, "false") ? 0 : -EINVAL;
	case 'n':
		return take_literal(c, "null") ? 0 : -EINVAL;
	default:
		return parse_number(c, NULL);
	}
}

/* A member's value, stored in m (strings into the arena). */
static int parse_member_value(struct json_cur *c, struct json_min_member *m)
{
	int ch = cur_peek(c);
	if (ch == '{' || ch == '[') {
		m->type = JSON_MIN_NESTED;
		char *arena = c->arena;
		c->arena = NULL;         /* validated only */
		int rc = skip_value(c, 0);
		c->arena = arena;
		return rc;
	}
	if (ch == '"') {
		m->type = JSON_MIN_STRING;
		return parse_string(c, &m->str, &m->str_len);
	}
	if (take_literal(c, "true")) {
		m->type = JSON_MIN_TRUE;
		return 0;
	}
	if (take_literal(c, "false")) {
		m->type = JSON_MIN_FALSE;
		return 0;
	}
	if (take_literal(c, "null")) {
		m->type = JSON_MIN_NULL;
		return 0;
	}
	return parse_number(c, m);
}

int json_min_parse_object(const char *in, size_t len, struct json_min_member *m, size_t max,
			  char *arena, size_t arena_len)
{
	static char no_arena;
	struct json_cur c = {
		.in = in,
		.len = in != NULL ? len : 0,
		/* Validating into a zero-sized arena must still report -ENOBUFS, not skip. */
		.arena = arena != NULL ? arena : &no_arena,
		.arena_len = arena != NULL ? arena_len : 0,
	};
	size_t n = 0;
	if (max > INT32_MAX)
		max = INT32_MAX;          /* the count is returned as an int */
	cur_skip_ws(&c);
	if (!cur_take(&c, '{'))
		return -EINVAL;
	cur_skip_ws(&c);
	if (!cur_take(&c, '}')) {
		for (;;) {
			if (n == max)
				return -E2BIG;
			struct json_min_member *cur = &m[n];
			memset(cur, 0, sizeof(*cur));
			size_t key_len;
			int rc = parse_string(&c, &cur->key, &key_len);
			if (rc != 0)
				return rc;
			cur_skip_ws(&c);
			if (!cur_take(&c, ':'))
				return -EINVAL;
			cur_skip_ws(&c);
			rc = parse_member_value(&c, cur);
			if (rc != 0)
				return rc;
			n++;
			cur_skip_ws(&c);
			if (cur_take(&c, '}'))
				break;
			if (!cur_take(&c, ','))
				return -EINVAL;
			cur_skip_ws(&c);
		}
	}
	cur_skip_ws(&c);
	if (!cur_end(&c))
		return -EINVAL;          /* anything after the object (a NUL included) */
	return (int)n;
}

static int ascii_lower(int ch)
{
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

const struct json_min_member *json_min_find(const struct json_min_member *m, size_t n,
					    const char *key)
{
	for (size_t i = 0; i < n; i++) {
		const unsigned char *a = (const unsigned char *)m[i].key;
		const unsigned char *b = (const unsigned char *)key;
		while (*a != '\0' && ascii_lower(*a) == ascii_lower(*b)) {
			a++;
			b++;
		}
		if (*a == '\0' && *b == '\0')
			return &m[i];
	}
	return NULL;
}
