/* neigh show/add/del/flush: the neighbour caches live in the workers, so every command runs
 * on them through their mailboxes. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "wire/ipv4.h"

#define NEIGH_SHOW_MAX 8192

struct neigh_snapshot {
	unsigned worker;
	int only_port;            /* -1: all */
	size_t n;
	struct {
		unsigned worker;
		struct neigh_info info;
	} rows[NEIGH_SHOW_MAX];
};

static int neigh_collect_one(const struct neigh_info *ni, void *arg)
{
	struct neigh_snapshot *snap = arg;
	if (snap->only_port >= 0 && ni->port != snap->only_port)
		return 0;
	if (snap->n == NEIGH_SHOW_MAX)
		return 1;
	snap->rows[snap->n].worker = snap->worker;
	snap->rows[snap->n].info = *ni;
	snap->n++;
	return 0;
}

static int neigh_collect(struct stack *s, void *arg)
{
	struct neigh_snapshot *snap = arg;
	snap->worker = s->id;
	neigh_walk(s->neigh, neigh_collect_one, snap);
	return 0;
}

int cmd_neigh_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	int only;
	if (cmd_parse_dev_filter(d, argc, argv, &only, o) != 0)
		return -1;
	struct neigh_snapshot *snap = calloc(1, sizeof(*snap));
	if (snap == NULL)
		return ctl_error(o, "out of memory");
	snap->only_port = only;
	daemon_each_worker(d, neigh_collect, snap);
	if (o->json)
		json_arr_begin(o, NULL);
	for (size_t i = 0; i < snap->n; i++) {
		const struct neigh_info *ni = &snap->rows[i].info;
		char ip[46], mac[18];
		inet_addr_format(&ni->addr, ip, sizeof(ip));
		eth_addr_format(&ni->mac, mac, sizeof(mac));
		const char *dev = d->master.ifaces[ni->port].name;
		const char *state = neigh_state_str(ni->state);
		bool has_mac = ni->state != NEIGH_INCOMPLETE && ni->state != NEIGH_FAILED;
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "dst", ip);
			json_str(o, "dev", dev);
			if (has_mac)
				json_str(o, "lladdr", mac);
			json_str(o, "state", state);
			json_u64(o, "worker", snap->rows[i].worker);
			json_u64(o, "queued", ni->queued);
			json_u64(o, "probes", ni->probes);
			json_obj_end(o);
		} else if (has_mac) {
			ctl_printf(o, "%s dev %s lladdr %s %s\n", ip, dev, mac, state);
		} else {
			ctl_printf(o, "%s dev %s %s\n", ip, dev, state);
		}
	}
	if (o->json)
		json_arr_end(o);
	free(snap);
	return 0;
}

struct neigh_op {
	uint16_t port;
	struct inet_addr addr;
	struct eth_addr mac;
	bool all_ports;
	unsigned deleted;     /* workers that had the entry */
};

static int neigh_add_stack(struct stack *s, void *arg)
{
	struct neigh_op *op = arg;
	return neigh_add_static(s->neigh, op->port, &op->addr, &op->mac);
}

/* Workers may have learnt different sets: the entry must exist on one of them. */
static int neigh_del_stack(struct stack *s, void *arg)
{
	struct neigh_op *op = arg;
	op->deleted += neigh_delete(s->neigh, op->port, &op->addr) == 0;
	return 0;
}

static int neigh_flush_stack(struct stack *s, void *arg)
{
	struct neigh_op *op = arg;
	neigh_flush(s->neigh, op->all_ports ? NEIGH_ALL_PORTS : op->port);
	return 0;
}

/* ADDR [lladdr MAC] dev PORT */
static int neigh_parse(struct daemon *d, int argc, char **argv, bool with_mac,
		       struct neigh_op *op, struct ctl_out *o)
{
	int want = with_mac ? 5 : 3;
	if (argc != want || strcmp(argv[want - 2], "dev") != 0 ||
	    (with_mac && strcmp(argv[1], "lladdr") != 0))
		return -1;
	if (inet_addr_parse(argv[0], &op->addr) != 0)
		return ctl_error(o, "'%s' is not an IPv4 or IPv6 address", argv[0]);
	if (with_mac) {
		if (eth_addr_parse(argv[2], &op->mac) != 0)
			return ctl_error(o, "'%s' is not a MAC address", argv[2]);
		if (eth_addr_is_multicast(&op->mac) || eth_addr_is_zero(&op->mac))
			return ctl_error(o, "%s is not a unicast MAC address", argv[2]);
	}
	return cmd_parse_port(d, argv[want - 1], &op->port, o);
}

int cmd_neigh_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct neigh_op op = {0};
	if (neigh_parse(d, argc, argv, true, &op, o) != 0)
		return -1;
	int rc = daemon_each_worker(d, neigh_add_stack, &op);
	if (rc != 0)
		return ctl_error(o, "neigh add %s: %s", argv[0], cmd_strerror(-rc));
	return 0;
}

int cmd_neigh_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct neigh_op op = {0};
	if (neigh_parse(d, argc, argv, false, &op, o) != 0)
		return -1;
	daemon_each_worker(d, neigh_del_stack, &op);
	if (op.deleted == 0)
		return ctl_error(o, "neigh del %s: %s", argv[0], cmd_strerror(ENOENT));
	return 0;
}

int cmd_neigh_flush(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	int only;
	if (cmd_parse_dev_filter(d, argc, argv, &only, o) != 0)
		return -1;
	struct neigh_op op = {.all_ports = only < 0, .port = only < 0 ? 0 : (uint16_t)only};
	return daemon_each_worker(d, neigh_flush_stack, &op);
}

struct neigh_params_op {
	struct neigh_params p;
};

static int neigh_params_get_stack(struct stack *s, void *arg)
{
	struct neigh_params_op *op = arg;
	neigh_get_params(s->neigh, &op->p);
	return 0;
}

static int neigh_params_set_stack(struct stack *s, void *arg)
{
	struct neigh_params_op *op = arg;
	return neigh_set_params(s->neigh, &op->p);
}

/* The tunables `neigh params` shows and sets, by name. */
static const struct {
	const char *name;
	size_t offset;
	uint32_t min;
	uint32_t max;
} neigh_tunables[] = {
	{"reachable-ms", offsetof(struct neigh_params, reachable_ms), 1, 3600000},
	{"delay-ms", offsetof(struct neigh_params, delay_ms), 1, 3600000},
	{"retrans-ms", offsetof(struct neigh_params, retrans_ms), 1, 3600000},
	{"mcast-probes", offsetof(struct neigh_params, mcast_probes), 1, 100},
	{"ucast-probes", offsetof(struct neigh_params, ucast_probes), 1, 100},
	{"failed-hold-ms", offsetof(struct neigh_params, failed_hold_ms), 1, 3600000},
	{"gc-stale-ms", offsetof(struct neigh_params, gc_stale_ms), 1, 86400000},
};

#define NEIGH_TUNABLES (sizeof(neigh_tunables) / sizeof(neigh_tunables[0]))

static uint32_t *neigh_tunable(struct neigh_params *p, size_t i)
{
	return (uint32_t *)((char *)p + neigh_tunables[i].offset);
}

/* neigh params [NAME VALUE]... */
int cmd_neigh_params(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc % 2 != 0)
		return -1;
	struct neigh_params_op op = {0};
	daemon_each_worker(d, neigh_params_get_stack, &op); /* all workers hold the same */
	for (int i = 0; i < argc; i += 2) {
		size_t k = 0;
		while (k < NEIGH_TUNABLES && strcmp(argv[i], neigh_tunables[k].name) != 0)
			k++;
		if (k == NEIGH_TUNABLES)
			return ctl_error(o, "unknown neighbour parameter '%s'", argv[i]);
		if (cmd_parse_u32(argv[i + 1], neigh_tunables[k].min, neigh_tunables[k].max,
				  neigh_tunable(&op.p, k), argv[i], o) != 0)
			return -1;
	}
	if (argc != 0) {
		int rc = daemon_each_worker(d, neigh_params_set_stack, &op);
		if (rc != 0)
			return ctl_error(o, "neigh params: %s", cmd_strerror(-rc));
		return 0;
	}
	if (o->json)
		json_obj_begin(o, NULL);
	for (size_t k = 0; k < NEIGH_TUNABLES; k++) {
		if (o->json)
			json_u64(o, neigh_tunables[k].name, *neigh_tunable(&op.p, k));
		else
			ctl_printf(o, "%s %u\n", neigh_tunables[k].name, *neigh_tunable(&op.p, k));
	}
	if (o->json)
		json_obj_end(o);
	return 0;
}
