#include "chan_arena.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHAN_ARENA_PAGE ((uint64_t)1 << CHAN_ARENA_MIN_SHIFT)
#define CHAN_ARENA_PAGE_SLOTS (CHAN_ARENA_PAGE / CHAN_ARENA_SLOT)

void chan_arena_init(struct chan_arena *a, int memfd, void *base, uint64_t start, uint64_t size)
{
	memset(a, 0, sizeof(*a));
	a->memfd = memfd;
	a->base = base;
	a->start = a->next = start;
	a->end = a->low = start + size;
}

void chan_arena_fini(struct chan_arena *a)
{
	for (unsigned c = 0; c < CHAN_ARENA_CLASSES; c++)
		free(a->free[c]);
	memset(a->free, 0, sizeof(a->free));
	free(a->slots);
	a->slots = NULL;
}

static int chan_arena_class(size_t bytes)
{
	for (unsigned c = 0; c < CHAN_ARENA_CLASSES; c++)
		if (((size_t)1 << (c + CHAN_ARENA_MIN_SHIFT)) >= bytes)
			return (int)c;
	return -1;
}

/* Room for n more entries in a list of offsets. */
static bool chan_arena_list_room(uint64_t **list, uint32_t used, uint32_t *cap, uint32_t n)
{
	if (used + n <= *cap)
		return true;
	uint32_t c = *cap == 0 ? 16 : *cap;
	while (c < used + n)
		c *= 2;
	uint64_t *l = realloc(*list, c * sizeof(*l));
	if (l == NULL)
		return false;
	*list = l;
	*cap = c;
	return true;
}

static void *chan_arena_block(struct chan_arena *a, int c)
{
	uint64_t size = (uint64_t)1 << (c + CHAN_ARENA_MIN_SHIFT), off;
	if (a->nfree[c] > 0) {
		off = a->free[c][--a->nfree[c]];
	} else {
		/* Natural alignment keeps big blocks on huge-page boundaries of the segment. */
		off = (a->next + size - 1) & ~(size - 1);
		if (off + size > a->low || off + size < off)
			return NULL;
		a->next = off + size;
	}
	a->live_blocks++;
	a->live_bytes += size;
	return a->base + off;
}

/* A slot, from a new page when none is free. */
static void *chan_arena_slot(struct chan_arena *a)
{
	if (a->nslots == 0) {
		if (!chan_arena_list_room(&a->slots, 0, &a->cap_slots, CHAN_ARENA_PAGE_SLOTS))
			return NULL;
		if (a->low - a->next < CHAN_ARENA_PAGE)
			return NULL;
		a->low -= CHAN_ARENA_PAGE;
		a->live_blocks++;
		a->live_bytes += CHAN_ARENA_PAGE;
		uint64_t off = a->low;
		/* Lowest last: handed out first, as the page is touched from its start. */
		for (uint64_t i = CHAN_ARENA_PAGE_SLOTS; i-- > 0;)
			a->slots[a->nslots++] = off + i * CHAN_ARENA_SLOT;
	}
	return a->base + a->slots[--a->nslots];
}

void *chan_arena_alloc(struct chan_arena *a, size_t bytes)
{
	if (bytes <= CHAN_ARENA_SLOT)
		return chan_arena_slot(a);
	int c = chan_arena_class(bytes);
	return c < 0 ? NULL : chan_arena_block(a, c);
}

void chan_arena_free(struct chan_arena *a, void *p, size_t bytes)
{
	uint64_t off = (uint64_t)((char *)p - a->base);
	if (bytes <= CHAN_ARENA_SLOT) {
		if (chan_arena_list_room(&a->slots, a->nslots, &a->cap_slots, 1))
			a->slots[a->nslots++] = off;
		return; /* else the slot is lost to this arena, not to the system */
	}
	int c = chan_arena_class(bytes);
	uint64_t size = (uint64_t)1 << (c + CHAN_ARENA_MIN_SHIFT);
	a->live_blocks--;
	a->live_bytes -= size;
	if (a->nfree[c] >= CHAN_ARENA_KEEP) {
		/* Enough of this size kept for reuse: give the memory back (the range reads as
		 * zeros afterwards and may be handed out again). */
		fallocate(a->memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			  (off_t)size);
	}
	if (!chan_arena_list_room(&a->free[c], a->nfree[c], &a->cap[c], 1))
		return; /* the block is lost to this arena, not to the system */
	a->free[c][a->nfree[c]++] = off;
}
