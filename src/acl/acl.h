/* The ACL as the packet path sees it: a classification of each RX burst, and one call at
 * each hook of the IPv4 and IPv6 paths.
 *
 * Publication: each worker's stack holds a pointer to the set it judges with
 * (struct stack.acl, NULL when there are no rules). The control thread builds a new set
 * off-line (acl_table.h) and swaps every worker's pointer through the worker mailbox
 * (worker_call, src/dp/worker.h), which runs between two bursts: a packet is judged
 * wholly by the old set or wholly by the new one. Once every worker has answered, none
 * can still hold the old set (the mailbox call is the workers' quiescent state, as
 * rte_rcu_qsbr's would be), and the control thread frees it.
 *
 * Bursts: the stack meets the hooks one datagram at a time, after validation, reassembly,
 * steering and the route lookup. So the worker classifies each RX burst first, in one
 * rte_acl_classify call with a category per hook (acl_rx_burst), and a hook looks its
 * datagram's key up among that burst's results. A verdict depends only on the set and the
 * key, so a result found there is right whatever happened to the packet in between; a
 * datagram not found (reassembled, from another worker or from our own loopback, or
 * changed) is classified alone. IPv6 datagrams are always classified alone, at the hook:
 * their key needs the extension header walk, which the stack makes there anyway. */
#ifndef DPS_ACL_H
#define DPS_ACL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "acl_set.h"

/* Judges datagram m (IP header at its data, parsed into ip, m->port its port) at hook by
 * set, counting the hit on the matching rule in worker's row. True when the datagram must
 * be dropped. */
bool acl_set_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
		    const struct rte_mbuf *m, const struct ip4_repr *ip);

/* The same for the IPv6 datagram m (at its IPv6 header, parsed into ip; ext its extension
 * headers walked, or NULL to walk them here). */
bool acl_set_denies6(const struct acl_set *set, unsigned worker, uint8_t hook,
		     const struct rte_mbuf *m, const struct ip6_repr *ip,
		     const struct ip6_ext_info *ext);

/* Classifies the IPv4 frames of an RX burst (Ethernet frames received on our port dev) for
 * worker's next hooks. Frames that are not untagged IPv4 with a valid header are left to
 * the hooks (which see them only if the stack accepts them). */
void acl_set_classify_burst(const struct acl_set *set, unsigned worker, uint16_t dev,
			    struct rte_mbuf *const *frames, uint16_t n);

/* The hook itself: no rules, no work. */
static inline bool acl_ip4_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
				  const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	return set != NULL && acl_set_denies(set, worker, hook, m, ip);
}

static inline bool acl_ip6_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
				  const struct rte_mbuf *m, const struct ip6_repr *ip,
				  const struct ip6_ext_info *ext)
{
	return set != NULL && acl_set_denies6(set, worker, hook, m, ip, ext);
}

static inline void acl_rx_burst(const struct acl_set *set, unsigned worker, uint16_t dev,
				struct rte_mbuf *const *frames, uint16_t n)
{
	if (set != NULL && n != 0)
		acl_set_classify_burst(set, worker, dev, frames, n);
}

#endif
