#include "worker_rest.h"

#include "stack/stack_internal.h"

void worker_rest_place(struct worker *w)
{
	struct worker_rest *r = &w->rest;
	struct rte_mbuf *same[WORKER_BURST];
	while (r->n > 0) {
		const uint16_t port = r->port[0];
		uint16_t nb_same = 0, left = 0;
		for (uint16_t k = 0; k < r->n; k++) {
			if (r->port[k] == port) {
				same[nb_same++] = r->m[k];
			} else {
				r->m[left] = r->m[k];
				r->port[left++] = r->port[k];
			}
		}
		r->n = left;
		const uint8_t slot = w->clusters.rest_slot[port];
		if (slot == 0 || !cluster_flow_place(&w->clusters, slot - 1u, port, same, nb_same))
			for (uint16_t k = 0; k < nb_same; k++)
				stack_drop(w->stack, STACK_DROP_CLUSTER_REST_GONE, same[k]);
	}
}

void worker_to_rest(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct worker *w = ctx;
	struct worker_rest *r = &w->rest;
	if (r->n == WORKER_BURST)
		worker_rest_place(w);
	r->m[r->n] = m;
	r->port[r->n++] = port;
}
