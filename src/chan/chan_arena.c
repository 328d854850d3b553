#include "chan_arena.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

void chan_arena_init(struct chan_arena *a, int memfd, void *base, uint64_t start, uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->memfd = memfd;
	a->base = base;
	a->start = a->next = start;
	a->end = start + size;
}

void chan_arena_fini(struct chan_arena *a)
{
	for (unsigned c = 0; c < CHAN_ARENA_CLASSES; c++)
		free(a->free[c]);
	memset(a->free, 0, sizeof(a->free));
}

static int chan_arena_class(size_t bytes)
{
	for (unsigned c = 0; c < CHAN_ARENA_CLASSES; c++)
		if (((size_t)1 << (c + CHAN_ARENA_MIN_SHIFT)) >= bytes)
			return (int)c;
	return -1;
}

void *chan_arena_alloc(struct chan_arena *a, size_t bytes)
{
	int c = chan_arena_class(bytes);
	if (c < 0)
		return NULL;
	uint64_t size = (uint64_t)1 << (c + CHAN_ARENA_MIN_SHIFT), off;
	if (a->nfree[c] > 0) {
		off = a->free[c][--a->nfree[c]];
	} else {
		/* Natural alignment keeps big blocks on huge-page boundaries of the segment. */
		off = (a->next + size - 1) & ~(size - 1);
		if (off + size > a->end || off + size < off)
			return NULL;
		a->next = off + size;
	}
	a->live_blocks++;
	a->live_bytes += size;
	return a->base + off;
}

void chan_arena_free(struct chan_arena *a, void *p, size_t bytes)
{
	int c = chan_arena_class(bytes);
	uint64_t off = (uint64_t)((char *)p - a->base);
	uint64_t size = (uint64_t)1 << (c + CHAN_ARENA_MIN_SHIFT);
	a->live_blocks--;
	a->live_bytes -= size;
	if (a->nfree[c] >= CHAN_ARENA_KEEP) {
		/* Enough of this size kept for reuse: give the memory back (the range reads as
		 * zeros afterwards and may be handed out again). */
		fallocate(a->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			  (off_t)size);
	}
	if (a->nfree[c] == a->cap[c]) {
		uint32_t cap = a->cap[c] == 0 ? 16 : a->cap[c] * 2;
		uint64_t *n = realloc(a->free[c], cap * sizeof(*n));
		if (n == NULL)
			return; /* the block is lost to this arena, not to the system */
		a->free[c] = n;
		a->cap[c] = cap;
	}
	a->free[c][a->nfree[c]++] = off;
}
