/* `cluster add|del|show` (docs/CLUSTERS.md), and the daemon's cluster manager from start to
 * stop: the ports named by the config's cluster lines get shared packet memory before they
 * start. */
#include "cmd.h"
#include "cmd_cluster.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cluster_mgr.h"

struct cluster_call {
	int (*fn)(struct cluster_wtab *t, void *arg);
	void *arg;
	struct cluster_wtab *tab;
};

/* Runs the change on the worker's table, then tells its stack which ports' rest a cluster
 * takes (stack/exception.h reads that flag, never the table). */
static int cluster_call_tramp(struct stack *s, void *arg)
{
	struct cluster_call *c = arg;
	int rc = c->fn(c->tab, c->arg);
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		s->rest_port[p] = c->tab->rest_slot[p] != 0;
	return rc;
}

static int cluster_run(void *ctx, unsigned w, int (*fn)(struct cluster_wtab *t, void *arg),
		       void *arg)
{
	struct daemon *d = ctx;
	struct cluster_call c = {.fn = fn, .arg = arg, .tab = &d->workers[w].clusters};
	if (!d->workers_running)
		return cluster_call_tramp(d->workers[w].stack, &c);
	return worker_call(&d->workers[w], cluster_call_tramp, &c);
}

/* The port named in a ports list, or -1. */
static int cluster_port_index(const struct daemon *d, const char *name, size_t len)
{
	for (unsigned i = 0; i < d->nb_ports; i++)
		if (strlen(d->ports[i].name) == len && strncmp(d->ports[i].name, name, len) == 0)
			return (int)i;
	return -1;
}

/* Splits "a,b,c" and calls fn on each piece; stops at the first failure. */
static int cluster_each_item(const char *list, int (*fn)(void *ctx, const char *s, size_t n),
			     void *ctx)
{
	for (const char *s = list;;) {
		size_t n = strcspn(s, ",");
		if (n == 0 || fn(ctx, s, n) != 0)
			return -1;
		if (s[n] == '\0')
			return 0;
		s += n + 1;
	}
}

struct port_list_ctx {
	struct daemon *d;
	struct cluster_def *def;
	struct ctl_out *o;
};

static int cluster_add_port(void *ctx, const char *s, size_t n)
{
	struct port_list_ctx *c = ctx;
	int p = cluster_port_index(c->d, s, n);
	if (p < 0)
		return ctl_error(c->o, "no port named '%.*s'", (int)n, s);
	for (unsigned i = 0; i < c->def->nb_ports; i++)
		if (c->def->ports[i] == p)
			return ctl_error(c->o, "port '%.*s' named twice", (int)n, s);
	if (c->def->nb_ports == DPC_MAX_REGIONS)
		return ctl_error(c->o, "at most %u ports in one cluster", DPC_MAX_REGIONS);
	c->def->ports[c->def->nb_ports++] = (uint16_t)p;
	return 0;
}

static int cluster_add_group(void *ctx, const char *s, size_t n)
{
	struct port_list_ctx *c = ctx;
	char num[16];
	uint32_t v;
	if (n >= sizeof(num))
		return ctl_error(c->o, "consumers must be numbers from 1 to %u", CLUSTER_MAX_CONSUMERS);
	memcpy(num, s, n);
	num[n] = '\0';
	if (cmd_parse_u32(num, 1, CLUSTER_MAX_CONSUMERS, &v, "a group's consumers", c->o) != 0)
		return -1;
	if (c->def->nb_groups == CLUSTER_MAX_GROUPS)
		return ctl_error(c->o, "at most %u groups", CLUSTER_MAX_GROUPS);
	c->def->group_size[c->def->nb_groups++] = (uint16_t)v;
	return 0;
}

/* A program's "PATH[:NAME]" into dst, or -1 with the error. */
static int cluster_parse_prog(const char *what, const char *v, char *dst, size_t len,
			      struct ctl_out *o)
{
	if (strlen(v) >= len)
		return ctl_error(o, "%s: a program's path has at most %zu characters", what,
				 len - 1);
	strcpy(dst, v);
	return 0;
}

/* cluster add NAME ports P[,P...] [hash H | hash custom PROG] [consumers N[,M...]]
 *             [mode balance|fanout] [ring N] [bounce PORT [filter PROG]]
 *             [take all|flow|rest]
 * (consumers or bounce, or both) */
static int cluster_parse(struct daemon *d, int argc, char **argv, struct cluster_def *def,
			 struct ctl_out *o)
{
	memset(def, 0, sizeof(*def));
	def->hash = CLUSTER_HASH_5TUPLE;
	def->ring_size = CLUSTER_RING_DEFAULT;
	def->bounce_port = -1;
	if (argc < 1)
		return -1;
	if (strlen(argv[0]) >= DPC_NAME_LEN || strpbrk(argv[0], "@:,") != NULL)
		return ctl_error(o, "a cluster name has at most %u characters and no '@', ':' or "
				 "','", DPC_NAME_LEN - 1);
	strcpy(def->name, argv[0]);
	struct port_list_ctx c = {.d = d, .def = def, .o = o};
	const char *mode = NULL;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return ctl_error(o, "'%s' needs a value", argv[i]);
		const char *k = argv[i], *v = argv[i + 1];
		if (strcmp(k, "ports") == 0 && def->nb_ports == 0) {
			if (cluster_each_item(v, cluster_add_port, &c) != 0)
				return o->failed ? -1 : ctl_error(o, "bad port list '%s'", v);
		} else if (strcmp(k, "consumers") == 0 && def->nb_groups == 0) {
			if (cluster_each_item(v, cluster_add_group, &c) != 0)
				return o->failed ? -1 : ctl_error(o, "bad consumers '%s'", v);
		} else if (strcmp(k, "hash") == 0) {
			int h = cluster_hash_parse(v);
			if (h < 0)
				return ctl_error(o, "hash must be ip, mac, proto, 5tuple or custom "
						 "PROG, not '%s'", v);
			def->hash = (enum cluster_hash_kind)h;
			if (h == CLUSTER_HASH_CUSTOM) {
				if (++i + 1 >= argc)
					return ctl_error(o, "hash custom needs a program: "
							 "PATH[:NAME] (docs/CLUSTERS.md)");
				if (cluster_parse_prog("hash custom", argv[i + 1], def->hash_prog,
						       sizeof(def->hash_prog), o) != 0)
					return -1;
			}
		} else if (strcmp(k, "bounce") == 0 && def->bounce_port < 0) {
			int p = cluster_port_index(d, v, strlen(v));
			if (p < 0)
				return ctl_error(o, "bounce: no port named '%s'", v);
			def->bounce_port = p;
		} else if (strcmp(k, "filter") == 0 && def->filter[0] == '\0') {
			if (cluster_parse_prog("filter", v, def->filter, sizeof(def->filter), o) != 0)
				return -1;
		} else if (strcmp(k, "mode") == 0) {
			if (strcmp(v, "balance") != 0 && strcmp(v, "fanout") != 0)
				return ctl_error(o, "mode must be balance or fanout, not '%s'", v);
			mode = v;
		} else if (strcmp(k, "take") == 0) {
			int take = cluster_take_parse(v);
			if (take < 0)
				return ctl_error(o, "take must be all (the ports are the cluster's), "
						 "flow (what flow rules send) or rest (what the "
						 "stack does not own), not '%s'", v);
			def->take = (enum cluster_take)take;
		} else if (strcmp(k, "ring") == 0) {
			if (cmd_parse_u32(v, CLUSTER_RING_MIN, CLUSTER_RING_MAX, &def->ring_size,
					  "ring", o) != 0)
				return -1;
			if ((def->ring_size & (def->ring_size - 1)) != 0)
				return ctl_error(o, "ring must be a power of two, not %u",
						 def->ring_size);
		} else {
			return ctl_error(o, "unknown or repeated word '%s'", k);
		}
	}
	if (def->nb_ports == 0 || (def->nb_groups == 0 && def->bounce_port < 0))
		return ctl_error(o, "a cluster needs ports, and consumers or a bounce port");
	if (def->filter[0] != '\0' && def->bounce_port < 0)
		return ctl_error(o, "filter decides what bounce forwards: name a bounce port");
	if (def->nb_groups == 0 && (mode != NULL || def->hash_prog[0] != '\0'))
		return ctl_error(o, "mode and hash place frames on consumers: this cluster has "
				 "none");
	/* One number and fanout: that many groups of one (each consumer gets every frame). */
	if (mode != NULL && strcmp(mode, "fanout") == 0 && def->nb_groups == 1) {
		unsigned n = def->group_size[0];
		if (n > CLUSTER_MAX_GROUPS)
			return ctl_error(o, "at most %u groups", CLUSTER_MAX_GROUPS);
		def->nb_groups = n;
		for (unsigned g = 0; g < n; g++)
			def->group_size[g] = 1;
	} else if (mode != NULL && strcmp(mode, "balance") == 0 && def->nb_groups > 1) {
		return ctl_error(o, "mode balance has one group: consumers N (several groups "
				 "get every frame each: mode fanout)");
	}
	def->fanout = def->nb_groups > 1;
	for (unsigned i = 0; i < def->nb_ports && def->take == CLUSTER_TAKE_REST; i++) {
		const struct port *p = &d->ports[def->ports[i]];
		/* What the stack does not own goes to one place: the kernel interface's host
		 * would otherwise lose its traffic without a word. */
		if (p->kernel.ifname[0] != '\0')
			return ctl_error(o, "take rest: port %s gives what the stack does not own "
					 "to its kernel interface %s", p->name, p->kernel.ifname);
	}
	return 0;
}

int cmd_cluster_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct cluster_def def;
	if (cluster_parse(d, argc, argv, &def, o) != 0)
		return -1;
	if (d->dry_run || d->clusters == NULL)
		return 0;
	char err[256];
	if (cluster_add(d->clusters, &def, err, sizeof(err)) != 0)
		return ctl_error(o, "%s", err);
	return 0;
}

int cmd_cluster_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 1)
		return -1;
	if (d->dry_run || d->clusters == NULL)
		return 0;
	char err[256];
	if (cmd_flow_rules_of_cluster(d, argv[0], err, sizeof(err)) != 0)
		return ctl_error(o, "flow rules %s send to cluster '%s': delete them first (flow "
				 "del ID)", err, argv[0]);
	if (cluster_del(d->clusters, argv[0], err, sizeof(err)) != 0)
		return ctl_error(o, "%s", err);
	return 0;
}

struct show_ctx {
	struct daemon *d;
	struct ctl_out *o;
	const char *name;
};

static void show_cluster(void *ctx, const struct cluster_def *def,
			 const struct cluster_totals *t)
{
	struct show_ctx *s = ctx;
	struct ctl_out *o = s->o;
	s->name = def->name;
	const char *bounce = def->bounce_port >= 0 ? s->d->ports[def->bounce_port].name : NULL;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "name", def->name);
		json_arr_begin(o, "ports");
		for (unsigned i = 0; i < def->nb_ports; i++)
			json_str(o, NULL, s->d->ports[def->ports[i]].name);
		json_arr_end(o);
		json_str(o, "hash", cluster_hash_name(def->hash));
		if (def->hash_prog[0] != '\0')
			json_str(o, "hash_prog", def->hash_prog);
		json_str(o, "mode", def->fanout ? "fanout" : "balance");
		json_str(o, "take", cluster_take_name(def->take));
		json_arr_begin(o, "groups");
		for (unsigned g = 0; g < def->nb_groups; g++)
			json_u64(o, NULL, def->group_size[g]);
		json_arr_end(o);
		json_u64(o, "ring", def->ring_size);
		if (bounce != NULL) {
			json_str(o, "bounce", bounce);
			if (def->filter[0] != '\0')
				json_str(o, "filter", def->filter);
			json_u64(o, "bounced", t->bounced);
			json_u64(o, "filtered", t->filtered);
		}
		json_u64(o, "forwarded", t->forwarded);
		json_u64(o, "unsupported", t->unsupported);
		json_u64(o, "pool_in_use", t->pool_in_use);
		json_arr_begin(o, "consumers");
		return;
	}
	ctl_printf(o, "cluster %s ports ", def->name);
	for (unsigned i = 0; i < def->nb_ports; i++)
		ctl_printf(o, "%s%s", i ? "," : "", s->d->ports[def->ports[i]].name);
	if (def->nb_groups > 0) {
		ctl_printf(o, " hash %s%s%s mode %s consumers ", cluster_hash_name(def->hash),
			   def->hash_prog[0] != '\0' ? " " : "", def->hash_prog,
			   def->fanout ? "fanout" : "balance");
		for (unsigned g = 0; g < def->nb_groups; g++)
			ctl_printf(o, "%s%u", g ? "," : "", def->group_size[g]);
		ctl_printf(o, " ring %u", def->ring_size);
	}
	ctl_printf(o, " take %s", cluster_take_name(def->take));
	if (bounce != NULL)
		ctl_printf(o, " bounce %s%s%s", bounce, def->filter[0] != '\0' ? " filter " : "",
			   def->filter);
	ctl_printf(o, "\n  unsupported %lu, mbufs in use %lu, forwarded %lu",
		   (unsigned long)t->unsupported, (unsigned long)t->pool_in_use,
		   (unsigned long)t->forwarded);
	if (bounce != NULL)
		ctl_printf(o, ", bounced %lu, filtered %lu", (unsigned long)t->bounced,
			   (unsigned long)t->filtered);
	ctl_printf(o, "\n");
	if (def->nb_groups > 0)
		ctl_printf(o, "  %-24s %-8s %12s %12s %12s %12s\n", "consumer", "pid",
			   "delivered", "dropped", "absent", "outstanding");
}

static void show_consumer(void *ctx, const struct cluster_consumer_view *v)
{
	struct show_ctx *s = ctx;
	struct ctl_out *o = s->o;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "group", v->group);
		json_u64(o, "index", v->index);
		json_bool(o, "attached", v->attached);
		json_u64(o, "pid", v->attached ? (uint64_t)v->pid : 0);
		json_u64(o, "delivered", v->ctr.delivered);
		json_u64(o, "dropped", v->ctr.dropped);
		json_u64(o, "absent", v->ctr.absent);
		json_u64(o, "outstanding", v->outstanding);
		json_obj_end(o);
		return;
	}
	char id[64], pid[16];
	snprintf(id, sizeof(id), "%s@%u:%u", s->name, v->group, v->index);
	snprintf(pid, sizeof(pid), v->attached ? "%d" : "-", (int)v->pid);
	ctl_printf(o, "  %-24s %-8s %12lu %12lu %12lu %12lu\n", id, pid,
		   (unsigned long)v->ctr.delivered, (unsigned long)v->ctr.dropped,
		   (unsigned long)v->ctr.absent, (unsigned long)v->outstanding);
}

static void show_cluster_end(void *ctx)
{
	struct show_ctx *s = ctx;
	if (s->o->json) {
		json_arr_end(s->o);
		json_obj_end(s->o);
	}
}

int cmd_cluster_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	struct show_ctx s = {.d = d, .o = o};
	struct cluster_show_cb cb = {.cluster = show_cluster, .consumer = show_consumer,
				     .cluster_end = show_cluster_end, .ctx = &s};
	if (o->json) {
		json_obj_begin(o, NULL);
		json_arr_begin(o, "clusters");
	}
	if (d->clusters != NULL)
		cluster_show(d->clusters, &cb);
	if (o->json) {
		json_arr_end(o);
		json_obj_end(o);
	}
	return 0;
}

/* The ports of a config's `cluster add` line ("ports P,P"), marked in want. */
static void cluster_config_ports(const struct daemon *d, const struct config_cmd *cmd,
				 bool *want)
{
	if (cmd->argc < 3 || strcmp(cmd->argv[0], "cluster") != 0 ||
	    strcmp(cmd->argv[1], "add") != 0)
		return;
	for (int i = 3; i + 1 < cmd->argc; i++) {
		if (strcmp(cmd->argv[i], "ports") != 0)
			continue;
		for (const char *s = cmd->argv[i + 1]; *s != '\0';) {
			size_t n = strcspn(s, ",");
			int p = cluster_port_index(d, s, n);
			if (p >= 0)
				want[p] = true;
			s += n + (s[n] == ',');
		}
	}
}

int cmd_cluster_start(struct daemon *d, const struct config *cfg, char *err, size_t errlen)
{
	struct cluster_ops ops = {.nb_workers = d->nb_workers, .run = cluster_run, .ctx = d};
	d->clusters = cluster_mgr_create(&ops);
	if (d->clusters == NULL) {
		snprintf(err, errlen, "cluster manager: out of memory");
		return -1;
	}
	bool want[NETCFG_MAX_PORTS] = {false};
	for (size_t i = 0; i < cfg->nb_cmds; i++)
		cluster_config_ports(d, &cfg->cmds[i], want);
	for (unsigned p = 0; p < d->nb_ports; p++) {
		cluster_mgr_port_name(d->clusters, (uint16_t)p, d->ports[p].name);
		if (!want[p])
			continue;
		int rc = cluster_mgr_region_add(d->clusters, (uint16_t)p, d->nb_mbufs,
						&d->port_pool[p]);
		if (rc != 0) {
			snprintf(err, errlen, "port %s: shared packet memory for its cluster: %s",
				 d->ports[p].name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int cmd_cluster_listen(struct daemon *d, char *err, size_t errlen)
{
	/* Without a port in shared memory no cluster can exist: no socket (daemons side by
	 * side then need no DPSTACK_CLUSTER_SOCK of their own). */
	bool any = false;
	for (unsigned p = 0; p < d->nb_ports; p++)
		any |= d->port_pool[p] != NULL;
	if (!any)
		return 0;
	const char *path = getenv(CLUSTER_SOCK_ENV);
	if (path == NULL || path[0] == '\0')
		path = CLUSTER_SOCK_DEFAULT;
	return cluster_mgr_listen(d->clusters, path, err, errlen);
}

void cmd_cluster_stop(struct daemon *d)
{
	cluster_mgr_stop(d->clusters);
}

void cmd_cluster_free(struct daemon *d)
{
	cluster_mgr_destroy(d->clusters);
	d->clusters = NULL;
	memset(d->port_pool, 0, sizeof(d->port_pool));
}
