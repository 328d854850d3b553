/* `tcp params`: the stack-wide TCP tunables and the default congestion controller. */
#include <stddef.h>
#include <string.h>

#include "cmd.h"
#include "daemon.h"
#include "tcp/tcp.h"
#include "tcp/cc/tcp_cc.h"

static int tcp_params_get_stack(struct stack *s, void *arg)
{
	tcp_get_params(s, arg);
	return 0;
}

static int tcp_params_set_stack(struct stack *s, void *arg)
{
	return tcp_set_params(s, arg);
}

/* The tunables by name, with the bounds tcp_set_params enforces (checked here first so the
 * error names the parameter). */
static const struct {
	const char *name;
	size_t offset;
	uint32_t min;
	uint32_t max;
} tcp_tunables[] = {
	{"syn-retries", offsetof(struct tcp_params, syn_retries), 1, 127},
	{"synack-retries", offsetof(struct tcp_params, synack_retries), 1, 127},
	{"retries", offsetof(struct tcp_params, retries), 1, 127},
	{"rto-min-ms", offsetof(struct tcp_params, rto_min_ms), 1, 1000},
	{"delack-ms", offsetof(struct tcp_params, delack_ms), 1, 499},
	{"fin-timeout-ms", offsetof(struct tcp_params, fin_timeout_ms), 1, 3600000},
	{"time-wait-ms", offsetof(struct tcp_params, time_wait_ms), 1, 3600000},
	{"syncookies", offsetof(struct tcp_params, syncookies), 0, 1},
	{"max-orphans", offsetof(struct tcp_params, max_orphans), 0, 16777216},
};

#define TCP_TUNABLES (sizeof(tcp_tunables) / sizeof(tcp_tunables[0]))

static uint32_t *tcp_tunable(struct tcp_params *p, size_t i)
{
	return (uint32_t *)((char *)p + tcp_tunables[i].offset);
}

/* tcp params [NAME VALUE]... [cc NAME] */
int cmd_tcp_params(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc % 2 != 0)
		return -1;
	struct tcp_params p = {0};
	daemon_each_worker(d, tcp_params_get_stack, &p); /* all workers hold the same */
	const char *cc = NULL;
	for (int i = 0; i < argc; i += 2) {
		if (strcmp(argv[i], "cc") == 0) {
			if (tcp_cc_find(argv[i + 1]) == NULL)
				return ctl_error(o, "unknown congestion control '%s'", argv[i + 1]);
			cc = argv[i + 1];
			continue;
		}
		size_t k = 0;
		while (k < TCP_TUNABLES && strcmp(argv[i], tcp_tunables[k].name) != 0)
			k++;
		if (k == TCP_TUNABLES)
			return ctl_error(o, "unknown TCP parameter '%s'", argv[i]);
		if (cmd_parse_u32(argv[i + 1], tcp_tunables[k].min, tcp_tunables[k].max,
				  tcp_tunable(&p, k), argv[i], o) != 0)
			return -1;
	}
	if (argc != 0) {
		int rc = daemon_each_worker(d, tcp_params_set_stack, &p);
		if (rc != 0)
			return ctl_error(o, "tcp params: %s", cmd_strerror(-rc));
		if (cc != NULL)
			tcp_cc_set_default(cc); /* found above: cannot fail */
		return 0;
	}
	if (o->json)
		json_obj_begin(o, NULL);
	for (size_t k = 0; k < TCP_TUNABLES; k++) {
		if (o->json)
			json_u64(o, tcp_tunables[k].name, *tcp_tunable(&p, k));
		else
			ctl_printf(o, "%s %u\n", tcp_tunables[k].name, *tcp_tunable(&p, k));
	}
	const char *names[8];
	unsigned n = tcp_cc_names(names, 8);
	if (o->json) {
		json_str(o, "cc", tcp_cc_default()->name);
		json_arr_begin(o, "cc_available");
		for (unsigned i = 0; i < n && i < 8; i++)
			json_str(o, NULL, names[i]);
		json_arr_end(o);
		json_obj_end(o);
	} else {
		ctl_printf(o, "cc %s (available:", tcp_cc_default()->name);
		for (unsigned i = 0; i < n && i < 8; i++)
			ctl_printf(o, " %s", names[i]);
		ctl_printf(o, ")\n");
	}
	return 0;
}
