#include "flow_set.h"

#include <stdlib.h>
#include <string.h>

#define CACHE_LINE 64

struct flow_set *flow_set_build(const struct flow_rule *rules, uint32_t n, unsigned nb_workers)
{
	struct flow_set *set = calloc(1, sizeof(*set));
	if (set == NULL)
		return NULL;
	set->nb = n;
	set->nb_workers = nb_workers;
	/* A row per worker, padded to whole lines: workers never write a line another reads
	 * for its own counting. */
	const size_t per_line = CACHE_LINE / sizeof(uint64_t);
	set->stride = (n + per_line - 1) / per_line * per_line;
	set->entries = calloc(n, sizeof(*set->entries));
	set->hits = aligned_alloc(CACHE_LINE, set->stride * nb_workers * sizeof(uint64_t));
	if (set->entries == NULL || set->hits == NULL) {
		flow_set_free(set);
		return NULL;
	}
	memset(set->hits, 0, set->stride * nb_workers * sizeof(uint64_t));
	for (uint32_t i = 0; i < n; i++) {
		set->entries[i] = (struct flow_entry){.id = rules[i].id,
						      .action = (uint8_t)rules[i].action,
						      .worker = rules[i].worker,
						      .cluster = rules[i].cluster_slot};
		flow_test_compile(&rules[i].m, &set->entries[i].t);
	}
	return set;
}

void flow_set_free(struct flow_set *set)
{
	if (set == NULL)
		return;
	free(set->entries);
	free(set->hits);
	free(set);
}

uint64_t flow_set_hits(const struct flow_set *set, uint32_t slot)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < set->nb_workers; w++)
		sum += __atomic_load_n(&set->hits[w * set->stride + slot], __ATOMIC_RELAXED);
	return sum;
}
