/* The flow rules the workers judge in software: the rules of one moment in the order they are
 * judged, with a hit counter per rule and worker. Built by the control thread, handed to the
 * workers whole (src/dp/worker_flow.h) and never changed afterwards, so every frame is judged
 * by one whole set. Pure C (no DPDK).
 *
 * The first matching rule decides, found by walking the rules in order. A walk, not a
 * classifier such as rte_acl: flow rules are few (a NIC's flow table holds hundreds, and
 * every rule here may become one of them), each test is a handful of masked compares on a
 * key read once per frame (flow_test_holds), and a frame that matches no rule costs one
 * pass: a few ns per rule (README, bench/flow.sh). Long permit/deny lists belong in the ACL,
 * which rte_acl judges in a time that does not grow with the rules. */
#ifndef DPS_FLOW_SET_H
#define DPS_FLOW_SET_H

#include <stddef.h>
#include <stdint.h>

#include "flow_match.h"

/* What the packet path needs of a rule, packed for the walk. */
struct flow_entry {
	struct flow_test t;
	uint32_t id;
	uint8_t action;             /* enum flow_action */
	uint16_t worker;            /* steer */
	uint16_t cluster;           /* cluster: its slot */
};

struct flow_set {
	uint32_t nb;
	struct flow_entry *entries; /* in the order they are judged */
	unsigned nb_workers;
	size_t stride;              /* counters per worker row: whole cache lines */
	uint64_t *hits;             /* [worker * stride + slot]: written only by that worker */
};

/* Builds the set of rules[0..n) (in judge order, n >= 1) for nb_workers workers; NULL when
 * out of memory. */
struct flow_set *flow_set_build(const struct flow_rule *rules, uint32_t n, unsigned nb_workers);
void flow_set_free(struct flow_set *set);

/* The first rule of set matching k, its hit counted in worker's row; NULL when none. */
static inline const struct flow_entry *flow_set_judge(const struct flow_set *set,
						       unsigned worker, const struct flow_key *k)
{
	for (uint32_t i = 0; i < set->nb; i++)
		if (flow_test_holds(&set->entries[i].t, k)) {
			set->hits[worker * set->stride + i]++;
			return &set->entries[i];
		}
	return NULL;
}

/* The hits of slot summed over the workers (a moment's view, read while they count). */
uint64_t flow_set_hits(const struct flow_set *set, uint32_t slot);

#endif
