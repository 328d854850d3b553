/* Memory back after a storm of connections. The stack's own sockets (built-in services)
 * take their FIFOs from the heap, and glibc's dynamic mmap threshold soon serves even
 * 256 KiB FIFOs from its arenas, which keep them after they are freed: 8,000 connections
 * left the daemon 200 MB larger after they had all closed. So large blocks always come
 * from mmap (freed at once), and after the count of connections has fallen far from its
 * peak, malloc_trim gives the free pages inside the arenas (control blocks) back too.
 * Applications' FIFOs live in their segments, whose freed blocks chan_arena.c punches out. */
#ifndef DPS_CTL_MEM_TRIM_H
#define DPS_CTL_MEM_TRIM_H

#include <stdbool.h>
#include <stdint.h>

#define MEM_TRIM_MMAP_THRESHOLD (128 * 1024)    /* glibc's initial value, kept fixed */
#define MEM_TRIM_DROP 1024                      /* connections closed since the peak */
#define MEM_TRIM_INTERVAL_MS 1000               /* how often the control thread looks */

struct daemon;

struct mem_trim {
	uint64_t peak;                  /* connections at most since the last trim */
	uint64_t trims;                 /* malloc_trim calls made */
};

/* Before any thread allocates: large blocks from mmap, always. */
void mem_trim_setup(void);
/* Is a trim due with conns connections now? Moves the peak (pure: unit-tested). */
static inline bool mem_trim_due(struct mem_trim *t, uint64_t conns)
{
	if (conns > t->peak)
		t->peak = conns;
	if (t->peak - conns < MEM_TRIM_DROP)
		return false;
	t->peak = conns;
	return true;
}
/* Counts the workers' connections and trims when due (control thread). */
void mem_trim_tick(struct mem_trim *t, struct daemon *d);

#endif
