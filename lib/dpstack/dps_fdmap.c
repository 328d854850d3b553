/* Descriptor-indexed tables of atomic pointers (dps_fdmap.h). */
#include <stdlib.h>

#include "dps_fdmap.h"

dps_fdmap_slot *dps_fdmap_slot_of(struct dps_fdmap *m, int fd, bool make)
{
	if (fd < 0 || fd >= DPS_FDMAP_MAX)
		return NULL;
	_Atomic(dps_fdmap_slot *) *cp = &m->chunks[fd / DPS_FDMAP_CHUNK];
	dps_fdmap_slot *chunk = atomic_load_explicit(cp, memory_order_acquire);
	if (chunk == NULL && make) {
		dps_fdmap_slot *n = calloc(DPS_FDMAP_CHUNK, sizeof(*n));
		if (n == NULL)
			return NULL;
		if (atomic_compare_exchange_strong_explicit(cp, &chunk, n, memory_order_acq_rel,
							    memory_order_acquire))
			chunk = n;
		else
			free(n); /* another thread made it first */
	}
	return chunk != NULL ? &chunk[fd % DPS_FDMAP_CHUNK] : NULL;
}
