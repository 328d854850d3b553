/* sync on | off | show: the kernel sync (kernel_sync.h), its state and counters. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void sync_show(struct daemon *d, struct ctl_out *o)
{
	const struct kernel_sync *s = &d->sync;
	bool on = s->fd >= 0;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_bool(o, "sync", on);
		json_arr_begin(o, "interfaces");
	} else {
		ctl_printf(o, "sync %s\n", on ? "on" : "off");
	}
	for (unsigned p = 0; p < d->nb_ports; p++) {
		const struct exception_if *k = &d->ports[p].kernel;
		if (k->ifname[0] == '\0')
			continue;
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "port", d->ports[p].name);
			json_str(o, "kernel", k->ifname);
			json_u64(o, "ifindex", s->ifindex[p]);
			json_obj_end(o);
		} else {
			ctl_printf(o, "  %s: kernel %s%s\n", d->ports[p].name, k->ifname,
				   on && s->ifindex[p] == 0 ? " (not in dpstackd's network namespace)"
							    : "");
		}
	}
	if (o->json) {
		json_arr_end(o);
		json_obj_begin(o, "counters");
#define SYNC_JSON(name, text) json_u64(o, #name, s->c.name);
		KERNEL_SYNC_COUNTER_LIST(SYNC_JSON)
#undef SYNC_JSON
		json_obj_end(o);
		json_str(o, "last_refused", s->last_refused);
		json_obj_end(o);
		return;
	}
	unsigned n = 0;
#define SYNC_TEXT(name, text) \
	ctl_printf(o, "%s%s %llu", n++ % 4 == 0 ? (n == 1 ? "  " : "\n  ") : ", ", #name, \
		   (unsigned long long)s->c.name);
	KERNEL_SYNC_COUNTER_LIST(SYNC_TEXT)
#undef SYNC_TEXT
	ctl_printf(o, "\n");
	if (s->last_refused[0] != '\0')
		ctl_printf(o, "  last refused: %s\n", s->last_refused);
}

int cmd_sync(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc == 0 || (argc == 1 && strcmp(argv[0], "show") == 0)) {
		sync_show(d, o);
		return 0;
	}
	if (argc != 1)
		return -1;
	if (strcmp(argv[0], "off") == 0) {
		kernel_sync_stop(d);
		return 0;
	}
	if (strcmp(argv[0], "on") != 0)
		return -1;
	bool any = false;
	for (unsigned p = 0; p < d->nb_ports; p++)
		any |= d->ports[p].kernel.ifname[0] != '\0';
	if (!any)
		return ctl_error(o, "sync on: no port has a kernel interface (port add NAME DEVICE "
				    "kernel IFNAME, or link set PORT kernel IFNAME)");
	if (d->dry_run)
		return 0;
	char err[128];
	if (kernel_sync_start(d, err, sizeof(err)) != 0)
		return ctl_error(o, "sync on: %s", err);
	return 0;
}
