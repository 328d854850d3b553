#include "ctl_out.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_out_init(struct ctl_out *o, bool json)
{
	memset(o, 0, sizeof(*o));
	o->json = json;
}

void ctl_out_fini(struct ctl_out *o)
{
	free(o->buf);
	memset(o, 0, sizeof(*o));
}

static void out_vappend(struct ctl_out *o, const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || o->oom)
		return;
	if (o->len + (size_t)n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 1024;
		while (cap < o->len + (size_t)n + 1)
			cap *= 2;
		char *nb = realloc(o->buf, cap);
		if (nb == NULL) {
			o->oom = true;
			return;
		}
		o->buf = nb;
		o->cap = cap;
	}
	vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
	o->len += (size_t)n;
}

void ctl_printf(struct ctl_out *o, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	out_vappend(o, fmt, ap);
	va_end(ap);
}

int ctl_error(struct ctl_out *o, const char *fmt, ...)
{
	o->len = 0;
	o->failed = true;
	va_list ap;
	va_start(ap, fmt);
	out_vappend(o, fmt, ap);
	va_end(ap);
	return -1;
}

static void json_escaped(struct ctl_out *o, const char *s)
{
	ctl_printf(o, "\"");
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			ctl_printf(o, "\\%c", *p);
		else if (*p < 0x20)
			ctl_printf(o, "\\u%04x", *p);
		else
			ctl_printf(o, "%c", *p);
	}
	ctl_printf(o, "\"");
}

static void json_key(struct ctl_out *o, const char *key)
{
	if (o->depth > 0 && o->need_comma[o->depth])
		ctl_printf(o, ",");
	if (o->depth > 0)
		o->need_comma[o->depth] = true;
	if (key != NULL) {
		json_escaped(o, key);
		ctl_printf(o, ":");
	}
}

static void json_open(struct ctl_out *o, const char *key, char c)
{
	json_key(o, key);
	ctl_printf(o, "%c", c);
	if (o->depth + 1 < CTL_JSON_MAX_DEPTH)
		o->depth++;
	o->need_comma[o->depth] = false;
}

static void json_close(struct ctl_out *o, char c)
{
	if (o->depth > 0)
		o->depth--;
	ctl_printf(o, "%c", c);
	if (o->depth == 0)
		ctl_printf(o, "\n");
}

void json_obj_begin(struct ctl_out *o, const char *key) { json_open(o, key, '{'); }
void json_obj_end(struct ctl_out *o) { json_close(o, '}'); }
void json_arr_begin(struct ctl_out *o, const char *key) { json_open(o, key, '['); }
void json_arr_end(struct ctl_out *o) { json_close(o, ']'); }

void json_str(struct ctl_out *o, const char *key, const char *val)
{
	json_key(o, key);
	json_escaped(o, val);
}

void json_u64(struct ctl_out *o, const char *key, uint64_t val)
{
	json_key(o, key);
	ctl_printf(o, "%" PRIu64, val);
}

void json_f64(struct ctl_out *o, const char *key, double val, int decimals)
{
	json_key(o, key);
	if (isfinite(val))
		ctl_printf(o, "%.*f", decimals, val);
	else
		ctl_printf(o, "null"); /* RFC 8259 §6 has no NaN or infinity */
}

void json_bool(struct ctl_out *o, const char *key, bool val)
{
	json_key(o, key);
	ctl_printf(o, "%s", val ? "true" : "false");
}
