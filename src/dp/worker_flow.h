/* Flow rules on a worker's receive path: each RX burst, after the capture tap and before the
 * ACL classification and the stack, is walked against the software rules (src/flow/flow_set.h)
 * frame by frame. A frame no rule matches goes on as before; drop frees and counts it
 * (flow.dropped); steer WORKER marks it (STACK_MBUF_FLOW_STEERED) and, when WORKER is another
 * worker, hands the whole frame over on that worker's steering ring (worker_handoff with
 * WORKER_HANDOFF_FRAME), where it enters the stack as if received there. A frame a hardware
 * steer rule queued here meets its rule first and stays (src/flow/flow_hw.h).
 *
 * Publication: the set pointer lives in the worker's stack (struct stack.flow) and is swapped
 * through the worker mailbox, between two bursts, as the ACL's is (src/acl/acl.h): a frame
 * is judged by the whole old set or the whole new one, and no lock is taken. */
#ifndef DPS_DP_WORKER_FLOW_H
#define DPS_DP_WORKER_FLOW_H

#include "worker.h"

/* Judges burst[0..n) received on our port; returns how many frames stay for this worker's
 * stack, moved to the front of burst in their order. */
uint16_t worker_flow_judge_burst(struct worker *w, uint16_t port, struct rte_mbuf **burst,
				 uint16_t n);

/* No rules, no work. */
static inline uint16_t worker_flow_rx(struct worker *w, uint16_t port, struct rte_mbuf **burst,
				      uint16_t n)
{
	return w->stack->flow == NULL || n == 0 ? n : worker_flow_judge_burst(w, port, burst, n);
}

#endif
