#include "acl.h"

#include <string.h>

#include "wire/bytes.h"
#include "wire/eth.h"

/* The slots of key in worker's last burst, or NULL. The hooks meet datagrams in the order
 * they were received, so the search starts after the last one found. */
static const uint32_t *burst_lookup(struct acl_burst *b, const struct acl_key *key)
{
	for (uint32_t j = b->next; j < b->n; j++)
		if (memcmp(&b->keys[j], key, sizeof(*key)) == 0) {
			b->next = j + 1;
			return &b->slots[j * ACL_CATEGORIES];
		}
	return NULL;
}

/* The verdict at hook among a key's slots, counting the hit on the rule that gave it. */
static bool set_verdict(const struct acl_set *set, unsigned worker, uint8_t hook,
			const uint32_t *slots)
{
	uint32_t slot = slots[acl_hook_category(hook)];
	if (slot == ACL_NO_MATCH)
		return false;
	set->hits[worker * set->stride + slot]++;
	return set->deny[slot];
}

bool acl_set_denies(const struct acl_set *set, unsigned worker, uint8_t hook,
		    const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	if (worker >= set->nb_workers)
		return false;   /* no such worker: the set was built for the daemon's workers */
	struct acl_key key;
	acl_key_build(&key, m, 0, ip, m->port);
	const uint32_t *slots = burst_lookup(&set->bursts[worker], &key);
	uint32_t alone[ACL_CATEGORIES];
	if (slots == NULL) {
		const struct acl_key *k = &key;
		acl_set_classify(set, &k, alone, 1);
		slots = alone;
	}
	return set_verdict(set, worker, hook, slots);
}

bool acl_set_denies6(const struct acl_set *set, unsigned worker, uint8_t hook,
		     const struct rte_mbuf *m, const struct ip6_repr *ip,
		     const struct ip6_ext_info *ext)
{
	if (worker >= set->nb_workers || set->ctx6 == NULL)
		return false;
	struct acl_key6 key;
	uint32_t slots[ACL_CATEGORIES];
	acl_key6_build(&key, m, ip, ext, m->port);
	acl_set_classify6(set, &key, slots);
	return set_verdict(set, worker, hook, slots);
}

void acl_set_classify_burst(const struct acl_set *set, unsigned worker, uint16_t dev,
			    struct rte_mbuf *const *frames, uint16_t n)
{
	if (worker >= set->nb_workers)
		return;
	struct acl_burst *b = &set->bursts[worker];
	const struct acl_key *keys[ACL_BURST_MAX];
	uint32_t k = 0;
	for (uint16_t i = 0; i < n && k < ACL_BURST_MAX; i++) {
		const struct rte_mbuf *m = frames[i];
		const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
		size_t len = rte_pktmbuf_data_len(m);
		struct ip4_repr ip;
		/* Untagged IPv4 only (stack_input drops tagged frames): the stack parses it
		 * again, with every check, before any hook. */
		if (len < ETH_HDR_LEN || wire_get_be16(f + ETH_OFF_TYPE) != ETH_TYPE_IPV4 ||
		    ip4_parse(f + ETH_HDR_LEN, len - ETH_HDR_LEN, false, &ip) != WIRE_OK)
			continue;
		acl_key_build(&b->keys[k], m, ETH_HDR_LEN, &ip, dev);
		keys[k] = &b->keys[k];
		k++;
	}
	b->n = k;
	b->next = 0;
	if (k != 0)
		acl_set_classify(set, keys, b->slots, k);
}
