/* acl add/del/flush/show: the rules live in the control thread's table (src/acl/acl_table.h);
 * every change builds a new rte_acl set off-line and swaps it into every worker between two
 * bursts (src/acl/acl.h), then frees the old one. During the config file the changes only
 * gather: the set is built once, at cmd_acl_start, not once per line (10,000 lines would
 * mean 10,000 builds). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cmd.h"

static int acl_swap_on_stack(struct stack *s, void *arg)
{
	s->acl = arg;
	return 0;
}

/* Hands set to every worker; once each has taken it, none holds the old set any more. */
static void acl_publish(struct daemon *d, struct acl_set *set)
{
	struct acl_set *old = d->acl.set;
	daemon_each_worker(d, acl_swap_on_stack, set);
	d->acl.set = set;
	acl_table_retire(&d->acl, old);
}

/* Builds the table's rules but skip (UINT32_MAX: all) and publishes them. */
static int acl_rebuild(struct daemon *d, uint32_t skip, struct ctl_out *o)
{
	if (!d->acl.live)
		return 0;
	char err[128];
	struct acl_set *set;
	if (acl_table_build(&d->acl, skip, d->nb_workers, &set, err, sizeof(err)) != 0)
		return ctl_error(o, "%s", err);
	acl_publish(d, set);
	return 0;
}

int cmd_acl_start(struct daemon *d, struct ctl_out *o)
{
	d->acl.live = true;
	return acl_rebuild(d, UINT32_MAX, o);
}

void cmd_acl_fini(struct daemon *d)
{
	acl_table_fini(&d->acl);
}

static int acl_port_by_name(void *ctx, const char *name)
{
	return netcfg_iface_by_name(&((struct daemon *)ctx)->master, name);
}

int cmd_acl_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct acl_rule r;
	char err[160];
	if (acl_rule_parse(argc, argv, acl_port_by_name, d, &r, err, sizeof(err)) != 0)
		return ctl_error(o, "%s", err);
	int rc = acl_table_append(&d->acl, &r);
	if (rc != 0)
		return ctl_error(o, "%s", rc == -ENOSPC ? "too many ACL rules (at most 65536)"
							: "out of memory");
	if (acl_rebuild(d, UINT32_MAX, o) != 0) {
		acl_table_drop_last(&d->acl);
		return -1;
	}
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "id", r.id);
		json_obj_end(o);
	} else {
		ctl_printf(o, "rule %" PRIu32 " added\n", r.id);
	}
	return 0;
}

static int acl_parse_id(const char *w, int *index, struct daemon *d, struct ctl_out *o)
{
	uint32_t id;
	if (cmd_parse_u32(w, 1, UINT32_MAX, &id, "rule id", o) != 0)
		return -1;
	*index = acl_table_find(&d->acl, id);
	if (*index < 0)
		return ctl_error(o, "no ACL rule with id %" PRIu32 " (see acl show)", id);
	return 0;
}

int cmd_acl_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	int i;
	if (argc != 1)
		return -1;
	if (acl_parse_id(argv[0], &i, d, o) != 0)
		return -1;
	if (acl_rebuild(d, (uint32_t)i, o) != 0)
		return -1;
	acl_table_remove(&d->acl, (uint32_t)i);
	return 0;
}

int cmd_acl_flush(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	if (d->acl.live)
		acl_publish(d, NULL);
	d->acl.nb_rules = 0;
	return 0;
}

static void acl_rule_json(struct daemon *d, struct ctl_out *o, const struct acl_rule *r,
			  uint64_t hits)
{
	char buf[160];
	json_obj_begin(o, NULL);
	json_u64(o, "id", r->id);
	json_u64(o, "prio", r->prio);
	json_str(o, "action", r->deny ? "deny" : "permit");
	json_str(o, "hook", acl_hooks_format(r->hooks, buf, sizeof(buf)));
	cmd_acl_match_json(d, o, r);
	json_u64(o, "hits", hits);
	json_obj_end(o);
}

void cmd_acl_match_json(struct daemon *d, struct ctl_out *o, const struct acl_rule *r)
{
	char buf[256];
	if (r->dev != ACL_DEV_ANY)
		json_str(o, "dev", d->master.ifaces[r->dev].name);
	if (r->proto != ACL_PROTO_ANY)
		json_u64(o, "proto", (uint64_t)r->proto);
	json_str(o, "family", r->family == ACL_FAMILY_IP4   ? "ipv4"
			      : r->family == ACL_FAMILY_IP6 ? "ipv6"
							    : "any");
	if (r->family == ACL_FAMILY_IP6) {
		cmd_json_prefix6(o, "src", &r->src6, r->src_len);
		cmd_json_prefix6(o, "dst", &r->dst6, r->dst_len);
	} else {
		cmd_json_prefix(o, "src", r->src, r->src_len);
		cmd_json_prefix(o, "dst", r->dst, r->dst_len);
	}
	json_u64(o, "sport_min", r->sport_lo);
	json_u64(o, "sport_max", r->sport_hi);
	json_u64(o, "dport_min", r->dport_lo);
	json_u64(o, "dport_max", r->dport_hi);
	if (r->flags_mask != 0) {
		json_str(o, "flags", acl_tcp_flags_format(r->flags_set, buf, sizeof(buf)));
		json_str(o, "flags_mask", acl_tcp_flags_format(r->flags_mask, buf, sizeof(buf)));
	}
	json_str(o, "match", acl_rule_match_format(r, buf, sizeof(buf)));
}

int cmd_acl_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	const struct acl_table *t = &d->acl;
	uint32_t *order = malloc((t->nb_rules + 1) * sizeof(*order));
	if (order == NULL)
		return ctl_error(o, "out of memory");
	for (uint32_t i = 0; i < t->nb_rules; i++)
		order[i] = i;
	/* In the order they are judged. */
	qsort_r(order, t->nb_rules, sizeof(*order), acl_rule_index_order, t->rules);
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "denied", cmd_drop_total(d, STACK_DROP_ACL_DENIED));
		json_u64(o, "denied6", cmd_drop_total(d, STACK_DROP_ACL6_DENIED));
		json_arr_begin(o, "rules");
	} else {
		ctl_printf(o, "%-6s %-5s %-6s %-13s %-8s %-44s %s\n", "ID", "PRIO", "ACTION",
			   "HOOK", "DEV", "MATCH", "HITS");
	}
	for (uint32_t k = 0; k < t->nb_rules; k++) {
		const struct acl_rule *r = &t->rules[order[k]];
		uint64_t hits = acl_table_hits(t, order[k]);
		if (o->json) {
			acl_rule_json(d, o, r, hits);
			continue;
		}
		char hooks[32], match[256];
		ctl_printf(o, "%-6" PRIu32 " %-5u %-6s %-13s %-8s %-44s %" PRIu64 "\n", r->id,
			   r->prio, r->deny ? "deny" : "permit",
			   acl_hooks_format(r->hooks, hooks, sizeof(hooks)),
			   r->dev == ACL_DEV_ANY ? "any" : d->master.ifaces[r->dev].name,
			   acl_rule_match_format(r, match, sizeof(match)), hits);
	}
	if (o->json) {
		json_arr_end(o);
		json_obj_end(o);
	} else {
		ctl_printf(o, "%" PRIu32 " rules; denied %" PRIu64 " IPv4 datagrams (acl.denied), "
			   "%" PRIu64 " IPv6 (acl6.denied)\n", t->nb_rules,
			   cmd_drop_total(d, STACK_DROP_ACL_DENIED),
			   cmd_drop_total(d, STACK_DROP_ACL6_DENIED));
	}
	free(order);
	return 0;
}
