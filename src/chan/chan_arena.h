/* A worker's allocator inside one application's segment: the socket FIFOs and accept rings
 * that this worker makes for that application. Used by that worker only (no locks), and all
 * its bookkeeping is in daemon memory, out of the application's reach.
 *
 * Blocks are powers of two from 4 KiB, carved from the arena by a bump pointer and recycled
 * through one free list per size. Only the touched part of a block costs memory (the
 * segment is a sparse memfd), so rounding up costs address space, not RAM. Beyond
 * CHAN_ARENA_KEEP free blocks of one size, freed blocks are punched out of the memfd and
 * their memory goes back to the system.
 *
 * Requests of at most CHAN_ARENA_SLOT bytes (a FIFO's positions, struct fifo_pos) get a
 * slot of a 4 KiB page cut into slots: a block each would take 32 times the memory. Those
 * pages are carved from the arena's other end, downwards, so that they never leave gaps
 * between the naturally aligned blocks (a page between two 256 KiB blocks would cost the
 * next one 252 KiB of alignment). Freed slots are reused; their pages stay with the arena
 * while it lives (the most FIFOs it ever held, at 128 bytes each: 2.5 MB for 10,000
 * connections), and are counted in live_bytes until then. */
#ifndef DPS_CHAN_ARENA_H
#define DPS_CHAN_ARENA_H

#include <stddef.h>
#include <stdint.h>

#define CHAN_ARENA_MIN_SHIFT 12
#define CHAN_ARENA_CLASSES 28          /* 4 KiB .. 512 GiB */
#define CHAN_ARENA_KEEP 32
#define CHAN_ARENA_SLOT 128            /* cache-line aligned, two lines */

struct chan_arena {
	int memfd;                     /* for punching holes */
	char *base;                    /* the segment in the daemon */
	uint64_t start, end, next;     /* offsets in the segment; blocks from next up */
	uint64_t low;                  /* slot pages from end down to low */
	uint64_t *free[CHAN_ARENA_CLASSES];
	uint32_t nfree[CHAN_ARENA_CLASSES], cap[CHAN_ARENA_CLASSES];
	uint64_t *slots;               /* free slots (offsets) */
	uint32_t nslots, cap_slots;
	uint64_t live_blocks, live_bytes;       /* slot pages count as blocks */
};

void chan_arena_init(struct chan_arena *a, int memfd, void *base, uint64_t start, uint64_t size);
void chan_arena_fini(struct chan_arena *a);
/* Returns a block of at least bytes, aligned to 4 KiB (a slot, aligned to its size, for
 * bytes <= CHAN_ARENA_SLOT), or NULL. */
void *chan_arena_alloc(struct chan_arena *a, size_t bytes);
/* bytes: as allocated. */
void chan_arena_free(struct chan_arena *a, void *p, size_t bytes);

#endif
