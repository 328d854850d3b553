#include "mem_trim.h"

#include <malloc.h>

#include "daemon.h"
#include "tcp/tcp.h"

void mem_trim_setup(void)
{
	/* Setting it turns glibc's dynamic threshold off (mallopt(3)). */
	mallopt(M_MMAP_THRESHOLD, MEM_TRIM_MMAP_THRESHOLD);
}

void mem_trim_tick(struct mem_trim *t, struct daemon *d)
{
	if (!d->workers_running)
		return;
	uint64_t conns = 0;
	for (unsigned w = 0; w < d->nb_workers; w++)
		conns += tcp_conn_count(d->workers[w].stack);
	if (!mem_trim_due(t, conns))
		return;
	/* Walks every arena under its lock: a worker allocating meanwhile waits that long,
	 * which is why it runs only after a storm, not on a timer. */
	malloc_trim(0);
	t->trims++;
}
