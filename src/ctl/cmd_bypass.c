/* bypass add|del|show: datagrams for the stack's addresses that go to the kernel interface
 * of their port instead (the exception path, src/stack/exception.h), matched as ACL rules
 * are (the same grammar without action, priority or hook). The rules live in the control
 * thread's table (src/acl/bypass_set.h); every change builds a new set and swaps it into
 * every worker between two bursts, then keeps the old set's hits and frees it. */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"
#include "dpstack/ctl.h"

static int bypass_swap_on_stack(struct stack *s, void *arg)
{
	s->bypass = arg;
	return 0;
}

/* Hits of the rule at index i: those of past sets and of the set in use. */
static uint64_t bypass_hits(const struct bypass_table *t, uint32_t i)
{
	return t->hits_retired[i] + (t->set != NULL ? bypass_set_hits(t->set, i) : 0);
}

/* Publishes the table's rules but the one at index skip (UINT32_MAX: none), keeping the
 * hits of the set it replaces. */
static int bypass_publish(struct daemon *d, uint32_t skip, struct ctl_out *o)
{
	if (d->dry_run)
		return 0;   /* no workers: the table alone is checked */
	struct bypass_table *t = &d->bypass;
	struct acl_rule rules[BYPASS_MAX_RULES];
	uint32_t n = 0;
	for (uint32_t i = 0; i < t->nb_rules; i++)
		if (i != skip)
			rules[n++] = t->rules[i];
	struct bypass_set *set = n != 0 ? bypass_set_create(rules, n, d->nb_workers) : NULL;
	if (n != 0 && set == NULL)
		return ctl_error(o, "out of memory");
	struct bypass_set *old = t->set;
	daemon_each_worker(d, bypass_swap_on_stack, set);
	/* No worker holds old now: its hits stay with their rules (the set's order is the
	 * table's, without skip). */
	for (uint32_t i = 0, k = 0; old != NULL && i < t->nb_rules; i++)
		if (k < old->nb_rules && old->rules[k].id == t->rules[i].id)
			t->hits_retired[i] += bypass_set_hits(old, k++);
	bypass_set_free(old);
	t->set = set;
	return 0;
}

void cmd_bypass_fini(struct daemon *d)
{
	bypass_set_free(d->bypass.set);
	d->bypass.set = NULL;
}

static int bypass_port_by_name(void *ctx, const char *name)
{
	return netcfg_iface_by_name(&((struct daemon *)ctx)->master, name);
}

static bool port_has_kernel(const struct daemon *d, int p)
{
	return d->ports[p].kernel.ifname[0] != '\0';
}

/* Why the rule cannot take effect, or NULL: the ports it may see need a kernel interface. */
static const char *bypass_rule_useless(const struct daemon *d, const struct acl_rule *r)
{
	if (r->dev != ACL_DEV_ANY)
		return port_has_kernel(d, r->dev) ? NULL : "that port has no kernel interface";
	for (unsigned p = 0; p < d->nb_ports; p++)
		if (port_has_kernel(d, (int)p))
			return NULL;
	return "no port has a kernel interface";
}

int cmd_bypass_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	/* The ACL grammar's match words: an action, priority or hook means nothing here. */
	static const char *const not_here[] = {"permit", "deny", "prio", "hook", NULL};
	for (int i = 0; i < argc; i++)
		for (const char *const *w = not_here; *w != NULL; w++)
			if (strcmp(argv[i], *w) == 0)
				return ctl_error(o, "bypass add: '%s' is an ACL word; a bypass rule "
						    "only matches (family, proto, src, dst, sport, "
						    "dport, flags, dev)", argv[i]);
	char *words[DPSTACK_CTL_MAX_WORDS + 1];
	if (argc + 1 > (int)(sizeof(words) / sizeof(words[0])))
		return ctl_error(o, "bypass add: too many words");
	words[0] = (char *)"permit";
	memcpy(words + 1, argv, (size_t)argc * sizeof(*argv));
	struct acl_rule r;
	char err[160];
	if (acl_rule_parse(argc + 1, words, bypass_port_by_name, d, &r, err, sizeof(err)) != 0)
		return ctl_error(o, "bypass add: %s", err);
	const char *why = bypass_rule_useless(d, &r);
	if (why != NULL)
		return ctl_error(o, "bypass add: %s (port add NAME DEVICE kernel IFNAME)", why);
	struct bypass_table *t = &d->bypass;
	if (t->nb_rules == BYPASS_MAX_RULES)
		return ctl_error(o, "bypass add: too many rules (at most %d)", BYPASS_MAX_RULES);
	r.id = ++t->next_id;
	t->rules[t->nb_rules] = r;
	t->hits_retired[t->nb_rules] = 0;
	t->nb_rules++;
	if (bypass_publish(d, UINT32_MAX, o) != 0) {
		t->nb_rules--;
		return -1;
	}
	if (o->json) {
		json_obj_begin(o, NULL);
		json_u64(o, "id", r.id);
		json_obj_end(o);
	} else {
		ctl_printf(o, "bypass rule %" PRIu32 " added\n", r.id);
	}
	return 0;
}

int cmd_bypass_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 1)
		return -1;
	uint32_t id;
	if (cmd_parse_u32(argv[0], 1, UINT32_MAX, &id, "rule id", o) != 0)
		return -1;
	struct bypass_table *t = &d->bypass;
	uint32_t i = 0;
	while (i < t->nb_rules && t->rules[i].id != id)
		i++;
	if (i == t->nb_rules)
		return ctl_error(o, "no bypass rule with id %" PRIu32 " (see bypass show)", id);
	if (bypass_publish(d, i, o) != 0)
		return -1;
	memmove(&t->rules[i], &t->rules[i + 1], (t->nb_rules - i - 1) * sizeof(t->rules[0]));
	memmove(&t->hits_retired[i], &t->hits_retired[i + 1],
		(t->nb_rules - i - 1) * sizeof(t->hits_retired[0]));
	t->nb_rules--;
	return 0;
}

int cmd_bypass_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	const struct bypass_table *t = &d->bypass;
	if (o->json)
		json_arr_begin(o, NULL);
	else
		ctl_printf(o, "%-6s %-8s %-44s %s\n", "ID", "DEV", "MATCH", "HITS");
	for (uint32_t i = 0; i < t->nb_rules; i++) {
		const struct acl_rule *r = &t->rules[i];
		if (o->json) {
			json_obj_begin(o, NULL);
			json_u64(o, "id", r->id);
			cmd_acl_match_json(d, o, r);
			json_u64(o, "hits", bypass_hits(t, i));
			json_obj_end(o);
			continue;
		}
		char match[256];
		ctl_printf(o, "%-6" PRIu32 " %-8s %-44s %" PRIu64 "\n", r->id,
			   r->dev == ACL_DEV_ANY ? "any" : d->master.ifaces[r->dev].name,
			   acl_rule_match_format(r, match, sizeof(match)), bypass_hits(t, i));
	}
	if (o->json)
		json_arr_end(o);
	return 0;
}
