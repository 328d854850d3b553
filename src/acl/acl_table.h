/* The control thread's list of ACL rules: ids, the order they were added in, and the hits
 * of rule sets gone by. Only the control thread touches it; workers see compiled sets
 * (acl_set.h) built from it. */
#ifndef DPS_ACL_TABLE_H
#define DPS_ACL_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "acl_set.h"

#define ACL_MAX_RULES 65536

struct acl_table {
	struct acl_rule *rules;        /* ascending ids (the order they were added) */
	uint64_t *hits_retired;        /* per rule: hits counted by sets since replaced */
	uint32_t nb_rules, cap;
	uint32_t next_id;              /* 0 until the first add: ids start at 1 */
	bool live;                     /* changes are published at once (after the config) */
	struct acl_set *set;           /* what the workers judge with; NULL: no rules or not
					* published yet */
};

/* Appends r with the next id (written back into r). -ENOSPC beyond ACL_MAX_RULES. */
int acl_table_append(struct acl_table *t, struct acl_rule *r);
/* Removes the last rule (an append whose set could not be built). */
void acl_table_drop_last(struct acl_table *t);
/* The index of rule id, or -1. */
int acl_table_find(const struct acl_table *t, uint32_t id);
/* Removes the rule at index i. */
void acl_table_remove(struct acl_table *t, uint32_t i);

/* Builds the set of the table's rules without the one at index skip (UINT32_MAX: none).
 * *out is NULL when no rule is left. Returns 0, or -1 with a message in err. */
int acl_table_build(const struct acl_table *t, uint32_t skip, unsigned nb_workers,
		    struct acl_set **out, char *err, size_t cap);

/* Once no worker holds old any more: keeps its hits with the rules still in the table,
 * then frees it. */
void acl_table_retire(struct acl_table *t, struct acl_set *old);

/* Hits of the rule at index i: those of past sets and of the set in use. */
uint64_t acl_table_hits(const struct acl_table *t, uint32_t i);

/* Frees the rules and the set in use (no worker may run). */
void acl_table_fini(struct acl_table *t);

#endif
