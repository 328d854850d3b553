/* The exception path's other taker: on a port with a cluster that takes the rest (`cluster
 * add ... take rest`, docs/CLUSTERS.md), what the stack does not own (stack/exception.h)
 * goes to that cluster's consumers instead of a kernel interface. The stack hands frames
 * one by one from deep in its input path (stack_ops.to_rest); the worker gathers them and
 * places them after the burst, so that a cluster publishes to its consumers once per burst
 * and not once per frame. */
#ifndef DPS_DP_WORKER_REST_H
#define DPS_DP_WORKER_REST_H

#include "worker.h"

/* stack_ops.to_rest: keeps m (at its Ethernet header, received on port) for the flush. */
void worker_to_rest(void *ctx, uint16_t port, struct rte_mbuf *m);

/* Places what worker_to_rest kept. */
void worker_rest_place(struct worker *w);

/* Called after every burst the stack took in, so that nothing is kept across a change of
 * the clusters (those run between bursts); nothing kept, no work. */
static inline void worker_rest_flush(struct worker *w)
{
	if (w->rest.n != 0)
		worker_rest_place(w);
}

#endif
