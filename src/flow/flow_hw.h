/* Flow rules in the ports' hardware, through rte_flow (DPDK's generic flow API,
 * doc/guides/prog_guide/rte_flow.rst): a rule becomes one rte_flow per port it applies to,
 * with the same match and the same action.
 *  - drop: DROP and COUNT. The frames never reach a worker, so the NIC counts them.
 *  - steer WORKER: QUEUE to the worker's RX queue on that port. The frames then meet the same
 *    rule in the worker's software walk, which counts and marks them and finds them already
 *    at their worker: the NIC saves the hand-over between cores, and needs neither MARK nor
 *    COUNT (which few virtual PMDs have).
 * rte_flow_validate decides: a rule goes to hardware only when every port it applies to
 * accepts it whole, else it stays in software and the reason is kept for `flow show`. */
#ifndef DPS_FLOW_HW_H
#define DPS_FLOW_HW_H

#include <stddef.h>
#include <stdint.h>

#include "flow_rule.h"

/* A port as rte_flow sees it. */
struct flow_hw_port {
	const char *name;           /* ours, for messages */
	uint16_t eth_port;
	uint16_t nb_queues;         /* RX queue i is worker i's */
	int16_t index;              /* our port index (flow_match.dev) */
};

struct flow_hw_rule;

/* Puts rule r (at rte_flow priority prio: 0 is judged first) into the hardware of every port
 * of ports[0..n) that it applies to. Returns 0 with *out, or -1 with the reason it cannot
 * ("port0: ...") in why, and nothing left in any port. */
int flow_hw_install(const struct flow_hw_port *ports, unsigned n, const struct flow_rule *r,
		    uint32_t prio, struct flow_hw_rule **out, char *why, size_t cap);

/* Hits counted by the hardware so far (rte_flow_query of COUNT, summed over the ports; 0
 * for a steer rule, which the software walk counts). */
uint64_t flow_hw_hits(const struct flow_hw_rule *h);

/* Removes the rule from the hardware; returns its last hit count. */
uint64_t flow_hw_remove(struct flow_hw_rule *h);

#endif
