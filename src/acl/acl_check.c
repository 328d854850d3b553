#include "acl.h"

bool acl_set_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
		    const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	/* One datagram at a time: the stack meets the hooks per datagram, after reassembly,
	 * steering and the route lookup have decided which hook it reaches. */
	struct acl_key key;
	const struct acl_key *k = &key;
	uint32_t slot;
	acl_key_build(&key, m, ip, hook);
	acl_set_classify(set, &k, &slot, 1);
	if (slot == ACL_NO_MATCH)
		return false;
	if (worker < set->nb_workers)
		set->hits[worker * set->stride + slot]++;
	return set->deny[slot];
}
