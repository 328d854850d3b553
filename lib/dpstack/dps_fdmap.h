/* A table of atomic pointers indexed by descriptor number, read without a lock: chunks of
 * slots made on first use and never moved or freed, so the address of a slot stays good and
 * a lookup is two loads. libdpstack's descriptor table (dps_fd.c) and the preload shim's
 * pending table (lib/preload/preload_pending.c) are such tables. */
#ifndef DPS_FDMAP_H
#define DPS_FDMAP_H

#include <stdatomic.h>
#include <stdbool.h>

#define DPS_FDMAP_CHUNK 1024
#define DPS_FDMAP_CHUNKS 1024           /* descriptors up to 2^20, Linux's default nr_open */
#define DPS_FDMAP_MAX (DPS_FDMAP_CHUNK * DPS_FDMAP_CHUNKS)

typedef _Atomic(void *) dps_fdmap_slot;

struct dps_fdmap {
	_Atomic(dps_fdmap_slot *) chunks[DPS_FDMAP_CHUNKS];
};

/* fd's slot, making its chunk when make is set; NULL when fd is out of range or its chunk
 * was never made (or there was no memory for it). */
dps_fdmap_slot *dps_fdmap_slot_of(struct dps_fdmap *m, int fd, bool make);

/* Chunk c: the slots of descriptors c * DPS_FDMAP_CHUNK on, or NULL if never made. */
static inline dps_fdmap_slot *dps_fdmap_chunk(struct dps_fdmap *m, unsigned c)
{
	return atomic_load_explicit(&m->chunks[c], memory_order_acquire);
}

#endif
