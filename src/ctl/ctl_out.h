/* The output of one control command: human text or JSON, or an error message. */
#ifndef DPS_CTL_OUT_H
#define DPS_CTL_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_JSON_MAX_DEPTH 16

struct ctl_out {
	char *buf;
	size_t len;
	size_t cap;
	bool json;
	bool failed;             /* buf holds the error message */
	bool oom;
	unsigned depth;
	bool need_comma[CTL_JSON_MAX_DEPTH];
};

void ctl_out_init(struct ctl_out *o, bool json);
void ctl_out_fini(struct ctl_out *o);

/* Appends formatted text (human output). */
__attribute__((format(printf, 2, 3))) void ctl_printf(struct ctl_out *o, const char *fmt, ...);
/* Replaces any output with a one-line error and marks the command failed. Returns -1 so
 * handlers can `return ctl_error(...)`. */
__attribute__((format(printf, 2, 3))) int ctl_error(struct ctl_out *o, const char *fmt, ...);

/* A small JSON writer: key is NULL inside arrays. Commas are placed automatically. */
void json_obj_begin(struct ctl_out *o, const char *key);
void json_obj_end(struct ctl_out *o);
void json_arr_begin(struct ctl_out *o, const char *key);
void json_arr_end(struct ctl_out *o);
void json_str(struct ctl_out *o, const char *key, const char *val);
void json_u64(struct ctl_out *o, const char *key, uint64_t val);
void json_bool(struct ctl_out *o, const char *key, bool val);
/* A fractional number with that many decimals; null when val is not finite. */
void json_f64(struct ctl_out *o, const char *key, double val, int decimals);

#endif
