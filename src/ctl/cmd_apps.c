/* `apps limits`: what one application or one user may take of the daemon (chan_limit.h),
 * shown with each user's current use, and changed at run time. `stats` shows the same. */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"

#define APPS_USERS_SHOWN CHAN_MAX_APPS

void cmd_apps_limits_out(struct daemon *d, struct ctl_out *o)
{
	uint32_t now[CHAN_LIMIT_COUNT];
	struct chan_limit_bounds b;
	chan_limits_read(d->chan, now, &b);
	static struct chan_user_use users[APPS_USERS_SHOWN];
	unsigned n = chan_users(d->chan, users, APPS_USERS_SHOWN);
	if (o->json) {
		json_obj_begin(o, "limits");
		for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
			json_u64(o, chan_limit_info[k].name, now[k]);
		json_obj_end(o);
		json_arr_begin(o, "users");
		for (unsigned i = 0; i < n; i++) {
			json_obj_begin(o, NULL);
			json_u64(o, "uid", users[i].uid);
			json_bool(o, "exempt", users[i].exempt);
			json_u64(o, "apps", users[i].apps);
			json_u64(o, "socks", users[i].socks);
			json_u64(o, "listeners", users[i].listeners);
			json_u64(o, "arena_bytes", users[i].arena_bytes);
			json_obj_end(o);
		}
		json_arr_end(o);
		return;
	}
	ctl_printf(o, "Limits (apps limits NAME VALUE):\n");
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		ctl_printf(o, "  %-20s %10u  (at most %u) %s\n", chan_limit_info[k].name, now[k],
			   b.max[k], chan_limit_info[k].text);
	ctl_printf(o, "Users with applications:%s\n", n == 0 ? " none" : "");
	for (unsigned i = 0; i < n; i++)
		ctl_printf(o, "  uid %-10u %u apps, %" PRIu64 " sockets, %u listeners, %" PRIu64
			   " MiB of socket buffers%s\n",
			   users[i].uid, users[i].apps, users[i].socks, users[i].listeners,
			   users[i].arena_bytes >> 20, users[i].exempt ? " (exempt from per-user limits)" : "");
}

/* apps limits [NAME VALUE]... : every value is checked before any is set. */
int cmd_apps_limits(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc % 2 != 0)
		return -1;
	uint32_t now[CHAN_LIMIT_COUNT] = {0};
	struct chan_limit_bounds b;
	/* The bounds depend on the running workers' tables: a dry run checks names and
	 * numbers only. */
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		b.max[k] = UINT32_MAX;
	if (d->chan != NULL)
		chan_limits_read(d->chan, now, &b);
	else if (!d->dry_run)
		return ctl_error(o, "the application channel is not running");
	for (int i = 0; i < argc; i += 2) {
		int k = chan_limit_by_name(argv[i]);
		if (k < 0)
			return ctl_error(o, "unknown limit '%s' (see 'apps limits')", argv[i]);
		if (cmd_parse_u32(argv[i + 1], 0, b.max[k], &now[k], argv[i], o) != 0)
			return -1;
	}
	if (d->dry_run)
		return 0;
	if (argc == 0) {
		if (o->json)
			json_obj_begin(o, NULL);
		cmd_apps_limits_out(d, o);
		if (o->json)
			json_obj_end(o);
		return 0;
	}
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		chan_limit_set(d->chan, k, now[k]); /* within the bounds checked above */
	return 0;
}
