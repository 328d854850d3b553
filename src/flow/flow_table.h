/* The control thread's list of flow rules, kept in the order they are judged, with what each
 * has counted so far and where it runs: the first nb_hw rules also in the ports' hardware
 * (rte_flow, flow_hw.h). The workers walk every rule in software (flow_set.h): a frame a
 * hardware drop rule took never reaches them, and one a hardware steer rule queued meets
 * that rule again first. Hardware rules always come first, so a frame sees the rules in one
 * order wherever each is carried out. Only the control thread touches it. Pure C. */
#ifndef DPS_FLOW_TABLE_H
#define DPS_FLOW_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "flow_set.h"

#define FLOW_MAX_RULES 1024
#define FLOW_NOTE_LEN 128

struct flow_hw_rule;

struct flow_table_entry {
	struct flow_rule r;
	uint64_t hits_retired;      /* counted by sets and hardware rules since replaced */
	struct flow_hw_rule *hw;    /* its hardware flows, or NULL: judged in software */
	char note[FLOW_NOTE_LEN];   /* why it is in software, when hardware was tried */
};

struct flow_table {
	struct flow_table_entry *e; /* in judge order (flow_rule_order) */
	uint32_t nb, cap;
	uint32_t next_id;           /* ids start at 1 and are never reused */
	uint32_t nb_hw;             /* e[0..nb_hw) run in hardware */
	struct flow_set *set;       /* what the workers walk: the rules as they were when it was
				     * built; NULL: no rules */
};

/* Inserts r in judge order with the next id (written back into r). Returns its index, or
 * -ENOSPC beyond FLOW_MAX_RULES, -ENOMEM. */
int flow_table_insert(struct flow_table *t, struct flow_rule *r);
/* The index of rule id, or -1. */
int flow_table_find(const struct flow_table *t, uint32_t id);
/* Removes the rule at index i (which must not run in hardware). */
void flow_table_remove(struct flow_table *t, uint32_t i);
/* Puts a rule just removed from index i back there. */
void flow_table_put_back(struct flow_table *t, uint32_t i, const struct flow_table_entry *e);

/* Builds the set of the table's rules for nb_workers workers into *out (NULL when there are
 * none). Returns 0 or -ENOMEM. */
int flow_table_build(const struct flow_table *t, unsigned nb_workers, struct flow_set **out);

/* Once no worker walks old any more: adds its hits to the rules still in the table (by id),
 * then frees it. */
void flow_table_retire(struct flow_table *t, struct flow_set *old);

/* The software hits of the rule at index i: retired ones and those of the set in use. */
uint64_t flow_table_sw_hits(const struct flow_table *t, uint32_t i);

/* Frees everything (no worker may run; hardware rules already removed). */
void flow_table_fini(struct flow_table *t);

#endif
