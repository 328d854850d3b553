#include "acl_table.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static int table_grow(struct acl_table *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	struct acl_rule *rules = realloc(t->rules, cap * sizeof(*rules));
	if (rules == NULL)
		return -ENOMEM;
	t->rules = rules;
	uint64_t *hits = realloc(t->hits_retired, cap * sizeof(*hits));
	if (hits == NULL)
		return -ENOMEM;
	t->hits_retired = hits;
	t->cap = cap;
	return 0;
}

int acl_table_append(struct acl_table *t, struct acl_rule *r)
{
	if (t->nb_rules >= ACL_MAX_RULES)
		return -ENOSPC;
	if (t->nb_rules == t->cap && table_grow(t) != 0)
		return -ENOMEM;
	r->id = ++t->next_id;
	t->rules[t->nb_rules] = *r;
	t->hits_retired[t->nb_rules] = 0;
	t->nb_rules++;
	return 0;
}

void acl_table_drop_last(struct acl_table *t)
{
	t->nb_rules--;
}

int acl_table_find(const struct acl_table *t, uint32_t id)
{
	uint32_t lo = 0, hi = t->nb_rules;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->rules[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->nb_rules && t->rules[lo].id == id ? (int)lo : -1;
}

void acl_table_remove(struct acl_table *t, uint32_t i)
{
	memmove(&t->rules[i], &t->rules[i + 1], (t->nb_rules - i - 1) * sizeof(*t->rules));
	memmove(&t->hits_retired[i], &t->hits_retired[i + 1],
		(t->nb_rules - i - 1) * sizeof(*t->hits_retired));
	t->nb_rules--;
}

int acl_table_build(const struct acl_table *t, uint32_t skip, unsigned nb_workers,
		    struct acl_set **out, char *err, size_t cap)
{
	uint32_t n = t->nb_rules - (skip < t->nb_rules);
	*out = NULL;
	if (n == 0)
		return 0;
	const struct acl_rule *rules = t->rules;
	struct acl_rule *copy = NULL;
	if (skip < t->nb_rules) {
		copy = malloc(n * sizeof(*copy));
		if (copy == NULL) {
			snprintf(err, cap, "out of memory");
			return -1;
		}
		memcpy(copy, t->rules, skip * sizeof(*copy));
		memcpy(copy + skip, t->rules + skip + 1, (n - skip) * sizeof(*copy));
		rules = copy;
	}
	*out = acl_set_build(rules, n, nb_workers, err, cap);
	free(copy);
	return *out != NULL ? 0 : -1;
}

void acl_table_retire(struct acl_table *t, struct acl_set *old)
{
	if (old == NULL)
		return;
	for (uint32_t slot = 0; slot < old->nb_rules; slot++) {
		int i = acl_table_find(t, old->ids[slot]);
		if (i >= 0)
			t->hits_retired[i] += acl_set_hits(old, slot);
	}
	acl_set_free(old);
}

uint64_t acl_table_hits(const struct acl_table *t, uint32_t i)
{
	uint64_t hits = t->hits_retired[i];
	const struct acl_set *s = t->set;
	/* The set in use was built from the table as it is: rule i is its slot i. */
	if (s != NULL && i < s->nb_rules && s->ids[i] == t->rules[i].id)
		hits += acl_set_hits(s, i);
	return hits;
}

void acl_table_fini(struct acl_table *t)
{
	acl_set_free(t->set);
	free(t->rules);
	free(t->hits_retired);
	*t = (struct acl_table){0};
}
