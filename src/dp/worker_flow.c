#include "worker_flow.h"

#include "flow/flow_set.h"
#include "stack/exception.h"

/* Marks m the way rte_flow's MARK action would (rte_flow.rst, "Action: MARK"): the flags and
 * the rule's id where a NIC puts them. */
static void worker_flow_mark(struct rte_mbuf *m, uint32_t rule_id)
{
	m->ol_flags |= RTE_MBUF_F_RX_FDIR | STACK_MBUF_FLOW_STEERED;
	m->hash.fdir.hi = rule_id;
}

/* Carries out a steer to worker to: false when the frame stays here. */
static bool worker_flow_steer(struct worker *w, uint16_t port, struct rte_mbuf *m,
			      const struct flow_entry *e)
{
	worker_flow_mark(m, e->id);
	if (e->worker == w->index || e->worker >= w->nb_peers)
		return false;
	struct worker_handoff h = {.m = m, .arg = WORKER_HANDOFF_FRAME | port};
	if (worker_hand_to(w, e->worker, w->peers[e->worker].steer_in, &h))
		stack_count(w->stack, STACK_EV_FLOW_STEERED_OUT);
	else
		stack_drop(w->stack, STACK_DROP_FLOW_STEER_FULL, m);
	return true;
}

/* Hands the frames rules sent to clusters, slot[k] naming frame k's, one cluster at a time
 * so that each publishes to its consumers once per burst. */
static void worker_flow_to_clusters(struct worker *w, uint16_t port, struct rte_mbuf **pkts,
				    uint16_t *slot, uint16_t n)
{
	struct rte_mbuf *same[WORKER_BURST];
	while (n > 0) {
		const uint16_t s = slot[0];
		uint16_t nb_same = 0, rest = 0;
		for (uint16_t k = 0; k < n; k++) {
			if (slot[k] == s) {
				same[nb_same++] = pkts[k];
			} else {
				pkts[rest] = pkts[k];
				slot[rest++] = slot[k];
			}
		}
		if (!cluster_flow_place(&w->clusters, s, port, same, nb_same))
			for (uint16_t k = 0; k < nb_same; k++)
				stack_drop(w->stack, STACK_DROP_FLOW_CLUSTER_GONE, same[k]);
		n = rest;
	}
}

uint16_t worker_flow_judge_burst(struct worker *w, uint16_t port, struct rte_mbuf **burst,
				 uint16_t n)
{
	const struct flow_set *set = w->stack->flow;
	struct rte_mbuf *to_cluster[WORKER_BURST];
	uint16_t cluster_slot[WORKER_BURST];
	uint16_t kept = 0, nb_cluster = 0;
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = burst[k];
		struct flow_key key;
		flow_key_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), port,
			       &key);
		const struct flow_entry *e = flow_set_judge(set, w->index, &key);
		if (e == NULL) {
			burst[kept++] = m;
			continue;
		}
		switch ((enum flow_action)e->action) {
		case FLOW_ACT_DROP:
			stack_drop(w->stack, STACK_DROP_FLOW_DROPPED, m);
			break;
		case FLOW_ACT_STEER:
			if (!worker_flow_steer(w, port, m, e))
				burst[kept++] = m;
			break;
		case FLOW_ACT_KERNEL:
			/* `flow add` made sure the port has a kernel interface. */
			if (!stack_to_kernel(w->stack, port, m, STACK_EV_KERNEL_FLOW))
				burst[kept++] = m;
			break;
		case FLOW_ACT_CLUSTER:
			to_cluster[nb_cluster] = m;
			cluster_slot[nb_cluster++] = e->cluster;
			break;
		case FLOW_ACT_COUNT:
			burst[kept++] = m; /* not an action (flow_rule.h) */
			break;
		}
	}
	worker_flow_to_clusters(w, port, to_cluster, cluster_slot, nb_cluster);
	return kept;
}
