/* A compiled rule set: the rules of one moment built into rte_acl contexts (one per family,
 * as their keys differ), with a hit counter per rule and worker. The control thread builds
 * a set off-line and hands the workers a pointer to it (acl.h); its rules never change once
 * built, so every packet is judged by one whole set. Each hook is an rte_acl category: one classification gives a
 * datagram's verdict at every hook. */
#ifndef DPS_ACL_SET_H
#define DPS_ACL_SET_H

#include <stddef.h>
#include <stdint.h>

#include "acl_key.h"
#include "acl_rule.h"

struct rte_acl_ctx;

/* Results per key: rte_acl_classify takes 1 or a multiple of RTE_ACL_RESULTS_MULTIPLIER (4)
 * categories; category c holds the verdict at hook 1 << c. */
#define ACL_CATEGORIES 4
#define ACL_BURST_MAX 32         /* keys classified together (a worker's RX burst) */

static inline unsigned acl_hook_category(uint8_t hook)
{
	return (unsigned)__builtin_ctz(hook);
}

/* A worker's last RX burst, classified at once (acl_rx_burst); the hooks look their
 * datagram's key up here before classifying it alone. */
struct acl_burst {
	struct acl_key keys[ACL_BURST_MAX];
	uint32_t slots[ACL_BURST_MAX * ACL_CATEGORIES];
	uint32_t n;              /* keys of the burst */
	uint32_t next;           /* where the next lookup starts: datagrams reach the hooks in
				  * the order they were received */
} __attribute__((aligned(64)));

struct acl_set {
	struct rte_acl_ctx *ctx;         /* IPv4 rules and rules of both families; NULL: none */
	struct rte_acl_ctx *ctx6;        /* IPv6 rules and rules of both families; NULL: none */
	uint32_t nb_rules;
	uint32_t *ids;           /* slot -> rule id */
	uint8_t *deny;           /* slot -> the rule denies */
	unsigned nb_workers;
	size_t stride;           /* counters per worker row, a whole number of cache lines */
	uint64_t *hits;          /* [worker * stride + slot]: written only by that worker */
	struct acl_burst *bursts;        /* [worker]: written only by that worker */
};

/* Builds a set from rules[0..n) (n >= 1) for nb_workers workers. Rule i gets slot i, in the
 * context of its family, or in both when it judges both (acl_rule.h).
 * Returns NULL with a message in err when rte_acl cannot build it (memory). */
struct acl_set *acl_set_build(const struct acl_rule *rules, uint32_t n, unsigned nb_workers,
			      char *err, size_t cap);
void acl_set_free(struct acl_set *set);

/* Compares two indexes into the array of rules arg by acl_rule_order (for qsort_r). */
int acl_rule_index_order(const void *a, const void *b, void *arg);

/* Classifies keys[0..n) in one rte_acl_classify call (DPDK's SIMD paths judge several keys
 * at once): slots[i * ACL_CATEGORIES + c] is the slot of the first rule matching key i at
 * the hook of category c, or ACL_NO_MATCH. */
#define ACL_NO_MATCH UINT32_MAX
void acl_set_classify(const struct acl_set *set, const struct acl_key *const *keys,
		      uint32_t *slots, uint32_t n);

/* The same for one IPv6 key (the IPv6 hooks classify each datagram alone). */
void acl_set_classify6(const struct acl_set *set, const struct acl_key6 *key, uint32_t *slots);

/* The hits of slot summed over the workers (read while they count: each 64-bit counter is
 * read whole, the sum is a moment's view). */
uint64_t acl_set_hits(const struct acl_set *set, uint32_t slot);

#endif
