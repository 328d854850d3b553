/* The ACL as the packet path sees it: one call at each hook of the IPv4 path.
 *
 * Publication: each worker's stack holds a pointer to the set it judges with
 * (struct stack.acl, NULL when there are no rules). The control thread builds a new set
 * off-line (acl_table.h) and swaps every worker's pointer through the worker mailbox
 * (worker_call, src/dp/worker.h), which runs between two bursts: a packet is judged
 * wholly by the old set or wholly by the new one. Once every worker has answered, none
 * can still hold the old set (the mailbox call is the workers' quiescent state, as
 * rte_rcu_qsbr's would be), and the control thread frees it. */
#ifndef DPS_ACL_H
#define DPS_ACL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "acl_set.h"

/* Judges datagram m (IP header at its data, parsed into ip) at hook by set, counting the
 * hit on the matching rule in worker's row. True when the datagram must be dropped. */
bool acl_set_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
		    const struct rte_mbuf *m, const struct ip4_repr *ip);

/* The hook itself: no rules, no work. */
static inline bool acl_ip4_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
				  const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	return set != NULL && acl_set_denies(set, worker, hook, m, ip);
}

#endif
