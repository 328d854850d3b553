/* flow add/del/show: the rules live in the control thread's table (src/flow/flow_table.h),
 * kept in the order they are judged. The workers always walk every rule in software; some
 * are also in the ports' hardware (flow_hw.h). Every change goes the same way, so that each
 * frame is judged by the whole old rule list or the whole new one:
 *   1. the rules in hardware, if any, are taken out of the ports (their counts kept): the
 *      software walk, which holds them too, carries them out meanwhile;
 *   2. the table changes and its whole list is handed to the workers as a new set;
 *   3. the rules are offered to the ports' hardware in order (rte_flow_validate, then
 *      create), until the first that some port refuses: hardware rules always come first
 *      (flow_table.h), so the NIC never decides a frame that an earlier software rule would
 *      have decided otherwise. */
#include <errno.h>
#include <inttypes.h>

#include "cluster/cluster_mgr.h"
#include "cmd.h"
#include "flow/flow_hw.h"

static int flow_swap_on_stack(struct stack *s, void *arg)
{
	s->flow = arg;
	return 0;
}

/* Hands the workers the set of the table's rules; once each has taken it, none walks the
 * old one, whose hits the table keeps. */
static int flow_publish(struct daemon *d)
{
	struct flow_table *t = &d->flow;
	struct flow_set *set;
	if (flow_table_build(t, d->nb_workers, &set) != 0)
		return -ENOMEM;
	struct flow_set *old = t->set;
	daemon_each_worker(d, flow_swap_on_stack, set);
	t->set = set;
	flow_table_retire(t, old);
	return 0;
}

/* Step 1: no rule in hardware. */
static void flow_hw_off(struct daemon *d)
{
	struct flow_table *t = &d->flow;
	for (uint32_t i = 0; i < t->nb_hw; i++) {
		t->e[i].hits_retired += flow_hw_remove(t->e[i].hw);
		t->e[i].hw = NULL;
	}
	t->nb_hw = 0;
}

/* The running ports as rte_flow sees them; 0 in a dry run (no ports were started). */
static unsigned flow_hw_ports(struct daemon *d, struct flow_hw_port *out)
{
	unsigned n = 0;
	for (unsigned p = 0; p < d->nb_ports && !d->dry_run; p++)
		if (d->ports[p].used)
			out[n++] = (struct flow_hw_port){.name = d->ports[p].name,
							 .eth_port = d->ports[p].eth_port,
							 .nb_queues = d->ports[p].nb_queues,
							 .index = (int16_t)p};
	return n;
}

/* Step 3: the longest prefix of the rules that the hardware takes, then the rest in
 * software. The first rule left in software notes why; the others, whom they follow. */
static void flow_hw_on(struct daemon *d)
{
	struct flow_table *t = &d->flow;
	struct flow_hw_port ports[NETCFG_MAX_PORTS];
	unsigned nb_ports = flow_hw_ports(d, ports);
	uint32_t i = 0;
	for (; i < t->nb && nb_ports > 0; i++) {
		struct flow_table_entry *e = &t->e[i];
		if (flow_hw_install(ports, nb_ports, &e->r, i, &e->hw, e->note, sizeof(e->note)) != 0)
			break;
		e->note[0] = '\0';
	}
	t->nb_hw = i;
	for (uint32_t k = i + 1; k < t->nb && nb_ports > 0; k++)
		snprintf(t->e[k].note, sizeof(t->e[k].note),
			 "after rule %" PRIu32 ", which runs in software", t->e[i].r.id);
}

void cmd_flow_fini(struct daemon *d)
{
	struct flow_table *t = &d->flow;
	for (uint32_t i = 0; i < t->nb_hw; i++)
		flow_hw_remove(t->e[i].hw);
	flow_table_fini(t);
}

static int flow_port_by_name(void *ctx, const char *name)
{
	return netcfg_iface_by_name(&((struct daemon *)ctx)->master, name);
}

/* The kernel action needs a kernel interface on every port the rule can match (`port add
 * NAME DEVICE kernel IFNAME`), so that it means the same on every frame it takes: the
 * first port without one, or -1. */
static int flow_port_without_kernel(const struct daemon *d, const struct flow_rule *r)
{
	for (unsigned i = 0; i < d->nb_ports; i++)
		if ((r->m.dev == FLOW_ANY || r->m.dev == (int32_t)i) &&
		    d->ports[i].kernel.ifname[0] == '\0')
			return (int)i;
	return -1;
}

/* The cluster action sends a port's frames to a cluster that takes flow and has that port
 * (so its consumers map the port's packet memory): dev must name one of its ports. Sets
 * r->cluster_slot. A dry run (--check-config) knows no clusters: the name is checked when
 * the daemon runs the line. */
static int flow_cluster_check(struct daemon *d, struct flow_rule *r, struct ctl_out *o)
{
	if (d->dry_run)
		return 0;
	struct cluster_def def;
	unsigned slot;
	if (d->clusters == NULL || !cluster_mgr_find(d->clusters, r->cluster, &def, &slot))
		return ctl_error(o, "flow action cluster: no cluster named '%s' (see cluster "
				 "show)", r->cluster);
	if (def.take == CLUSTER_TAKE_ALL)
		return ctl_error(o, "flow action cluster: cluster '%s' takes its ports whole, so "
				 "the stack never judges their frames: add it with 'take flow'",
				 r->cluster);
	for (unsigned i = 0; i < def.nb_ports; i++) {
		if (r->m.dev == (int32_t)def.ports[i]) {
			r->cluster_slot = (uint16_t)slot;
			return 0;
		}
	}
	char ports[NETCFG_MAX_PORTS * NETCFG_NAME_LEN] = "";
	for (unsigned i = 0; i < def.nb_ports; i++)
		snprintf(ports + strlen(ports), sizeof(ports) - strlen(ports), "%s%s",
			 i ? ", " : "", d->ports[def.ports[i]].name);
	return ctl_error(o, "flow action cluster: name one of cluster '%s''s ports with dev "
			 "(%s): its consumers can read only their frames", r->cluster, ports);
}

/* Whether the daemon can carry out r's action (and what it needs to, in r). */
static int flow_action_check(struct daemon *d, struct flow_rule *r, struct ctl_out *o)
{
	int bare;
	switch (r->action) {
	case FLOW_ACT_DROP:
	case FLOW_ACT_STEER:
		return 0;
	case FLOW_ACT_KERNEL:
		if ((bare = flow_port_without_kernel(d, r)) < 0)
			return 0;
		return ctl_error(o, "flow action kernel: %s has no kernel exception interface "
				 "(port add %s DEVICE kernel IFNAME)%s", d->ports[bare].name,
				 d->ports[bare].name,
				 r->m.dev == FLOW_ANY ? "; or name a port that has one with dev" : "");
	case FLOW_ACT_CLUSTER:
		return flow_cluster_check(d, r, o);
	case FLOW_ACT_COUNT:
		break;
	}
	return ctl_error(o, "flow action %d unknown", (int)r->action);
}

unsigned cmd_flow_rules_of_cluster(const struct daemon *d, const char *name, char *buf,
				   size_t cap)
{
	unsigned n = 0;
	buf[0] = '\0';
	for (uint32_t i = 0; i < d->flow.nb; i++) {
		const struct flow_rule *r = &d->flow.e[i].r;
		if (r->action != FLOW_ACT_CLUSTER || strcmp(r->cluster, name) != 0)
			continue;
		size_t len = strlen(buf);
		snprintf(buf + len, cap - len, "%s%" PRIu32, n++ ? ", " : "", r->id);
	}
	return n;
}

int cmd_flow_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct flow_rule r;
	char err[160];
	struct flow_parse_env env = {.port_by_name = flow_port_by_name, .ctx = d,
				     .nb_workers = d->nb_workers};
	if (flow_rule_parse(argc, argv, &env, &r, err, sizeof(err)) != 0)
		return ctl_error(o, "%s", err);
	if (flow_action_check(d, &r, o) != 0)
		return -1;
	if (d->flow.nb >= FLOW_MAX_RULES)
		return ctl_error(o, "too many flow rules (at most %d)", FLOW_MAX_RULES);
	flow_hw_off(d);
	int i = flow_table_insert(&d->flow, &r);
	if (i < 0 || flow_publish(d) != 0) {
		if (i >= 0)
			flow_table_remove(&d->flow, (uint32_t)i);
		flow_hw_on(d);
		return ctl_error(o, "out of memory");
	}
	flow_hw_on(d);
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "id", r.id);
		json_obj_end(o);
	} else {
		ctl_printf(o, "flow rule %" PRIu32 " added\n", r.id);
	}
	return 0;
}

int cmd_flow_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	uint32_t id;
	if (argc != 1)
		return -1;
	if (cmd_parse_u32(argv[0], 1, UINT32_MAX, &id, "rule id", o) != 0)
		return -1;
	int i = flow_table_find(&d->flow, id);
	if (i < 0)
		return ctl_error(o, "no flow rule with id %" PRIu32 " (see flow show)", id);
	flow_hw_off(d);
	struct flow_table_entry gone = d->flow.e[i];
	flow_table_remove(&d->flow, (uint32_t)i);
	int rc = flow_publish(d);
	if (rc != 0) /* the old set still runs: the rule goes back where it was */
		flow_table_put_back(&d->flow, (uint32_t)i, &gone);
	flow_hw_on(d);
	return rc == 0 ? 0 : ctl_error(o, "out of memory");
}

static uint64_t flow_hits(const struct flow_table *t, uint32_t i)
{
	uint64_t hits = flow_table_sw_hits(t, i);
	return t->e[i].hw != NULL ? hits + flow_hw_hits(t->e[i].hw) : hits;
}

static void flow_rule_json(struct daemon *d, struct ctl_out *o, const struct flow_table_entry *e,
			   uint64_t hits)
{
	const struct flow_rule *r = &e->r;
	char buf[256];
	json_obj_begin(o, NULL);
	json_u64(o, "id", r->id);
	json_u64(o, "prio", r->prio);
	json_str(o, "action", flow_action_name(r->action));
	if (r->action == FLOW_ACT_STEER)
		json_u64(o, "worker", r->worker);
	if (r->action == FLOW_ACT_CLUSTER)
		json_str(o, "cluster", r->cluster);
	if (r->m.dev != FLOW_ANY)
		json_str(o, "dev", d->master.ifaces[r->m.dev].name);
	if (r->m.ethertype != FLOW_ANY)
		json_u64(o, "ethertype", (uint64_t)r->m.ethertype);
	if (r->m.proto != FLOW_ANY)
		json_u64(o, "proto", (uint64_t)r->m.proto);
	if (r->m.ethertype == FLOW_ETHERTYPE_IPV6) {
		cmd_json_prefix6(o, "src", &r->m.src6, r->m.src_len);
		cmd_json_prefix6(o, "dst", &r->m.dst6, r->m.dst_len);
	} else {
		cmd_json_prefix(o, "src", r->m.src, r->m.src_len);
		cmd_json_prefix(o, "dst", r->m.dst, r->m.dst_len);
	}
	json_u64(o, "sport_min", r->m.sport_lo);
	json_u64(o, "sport_max", r->m.sport_hi);
	json_u64(o, "dport_min", r->m.dport_lo);
	json_u64(o, "dport_max", r->m.dport_hi);
	json_str(o, "match", flow_match_format(&r->m, buf, sizeof(buf)));
	json_str(o, "where", e->hw != NULL ? "hw" : "sw");
	if (e->note[0] != '\0')
		json_str(o, "why_sw", e->note);
	json_u64(o, "hits", hits);
	json_obj_end(o);
}

int cmd_flow_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	const struct flow_table *t = &d->flow;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "dropped", cmd_drop_total(d, STACK_DROP_FLOW_DROPPED));
		json_arr_begin(o, "rules");
	} else {
		ctl_printf(o, "%-6s %-5s %-12s %-8s %-44s %-5s %s\n", "ID", "PRIO", "ACTION", "DEV",
			   "MATCH", "WHERE", "HITS");
	}
	/* The table is in the order rules are judged: shown as it is. */
	for (uint32_t i = 0; i < t->nb; i++) {
		const struct flow_table_entry *e = &t->e[i];
		if (o->json) {
			flow_rule_json(d, o, e, flow_hits(t, i));
			continue;
		}
		char action[48], match[256];
		ctl_printf(o, "%-6" PRIu32 " %-5u %-12s %-8s %-44s %-5s %" PRIu64 "\n", e->r.id,
			   e->r.prio, flow_action_format(&e->r, action, sizeof(action)),
			   e->r.m.dev == FLOW_ANY ? "any" : d->master.ifaces[e->r.m.dev].name,
			   flow_match_format(&e->r.m, match, sizeof(match)),
			   e->hw != NULL ? "hw" : "sw", flow_hits(t, i));
		if (e->note[0] != '\0' && i == t->nb_hw)
			ctl_printf(o, "       software: %s\n", e->note);
	}
	if (o->json) {
		json_arr_end(o);
		json_obj_end(o);
	} else {
		ctl_printf(o, "%" PRIu32 " rules (%" PRIu32 " in hardware); dropped %" PRIu64
			   " frames (flow.dropped)\n", t->nb, t->nb_hw, cmd_drop_total(d, STACK_DROP_FLOW_DROPPED));
	}
	return 0;
}
