#include "flow_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int flow_table_insert(struct flow_table *t, struct flow_rule *r)
{
	if (t->nb >= FLOW_MAX_RULES)
		return -ENOSPC;
	if (t->nb == t->cap) {
		uint32_t cap = t->cap ? t->cap * 2 : 16;
		struct flow_table_entry *e = realloc(t->e, cap * sizeof(*e));
		if (e == NULL)
			return -ENOMEM;
		t->e = e;
		t->cap = cap;
	}
	r->id = ++t->next_id;
	/* After every rule judged before it: the new rule is the youngest, so equal priorities
	 * keep it behind the older ones. */
	uint32_t i = t->nb;
	while (i > 0 && flow_rule_order(&t->e[i - 1].r, r) > 0)
		i--;
	memmove(&t->e[i + 1], &t->e[i], (t->nb - i) * sizeof(*t->e));
	t->e[i] = (struct flow_table_entry){.r = *r};
	t->nb++;
	return (int)i;
}

int flow_table_find(const struct flow_table *t, uint32_t id)
{
	for (uint32_t i = 0; i < t->nb; i++)
		if (t->e[i].r.id == id)
			return (int)i;
	return -1;
}

void flow_table_remove(struct flow_table *t, uint32_t i)
{
	memmove(&t->e[i], &t->e[i + 1], (t->nb - i - 1) * sizeof(*t->e));
	t->nb--;
}

void flow_table_put_back(struct flow_table *t, uint32_t i, const struct flow_table_entry *e)
{
	memmove(&t->e[i + 1], &t->e[i], (t->nb - i) * sizeof(*t->e));
	t->e[i] = *e;
	t->nb++;
}

int flow_table_build(const struct flow_table *t, unsigned nb_workers, struct flow_set **out)
{
	*out = NULL;
	if (t->nb == 0)
		return 0;
	struct flow_rule *rules = malloc(t->nb * sizeof(*rules));
	if (rules == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->nb; i++)
		rules[i] = t->e[i].r;
	*out = flow_set_build(rules, t->nb, nb_workers);
	free(rules);
	return *out != NULL ? 0 : -ENOMEM;
}

void flow_table_retire(struct flow_table *t, struct flow_set *old)
{
	if (old == NULL)
		return;
	for (uint32_t s = 0; s < old->nb; s++) {
		int i = flow_table_find(t, old->entries[s].id);
		if (i >= 0)
			t->e[i].hits_retired += flow_set_hits(old, s);
	}
	flow_set_free(old);
}

uint64_t flow_table_sw_hits(const struct flow_table *t, uint32_t i)
{
	uint64_t hits = t->e[i].hits_retired;
	if (t->set != NULL && i < t->set->nb && t->set->entries[i].id == t->e[i].r.id)
		hits += flow_set_hits(t->set, i);
	return hits;
}

void flow_table_fini(struct flow_table *t)
{
	flow_set_free(t->set);
	free(t->e);
	*t = (struct flow_table){0};
}
