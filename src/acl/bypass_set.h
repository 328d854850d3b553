/* Bypass rules as the packet path sees them: datagrams for the stack's own addresses that
 * an operator sends to the kernel interface instead (`bypass add`, src/ctl/cmd_bypass.c;
 * the exception path, src/stack/exception.h). A rule matches as an ACL rule does
 * (acl_rule.h: protocol, prefixes, port ranges, input port; no action), so `bypass add`
 * takes the ACL's grammar. A handful of rules is the use (a management port, a routing
 * protocol's port), so they are matched one after the other, not compiled.
 *
 * Publication as for ACL sets (acl.h): each worker's stack points at the set it applies
 * (struct stack.bypass, NULL without rules); the control thread builds a new set and swaps
 * every worker's pointer between two bursts, then frees the old one. */
#ifndef DPS_ACL_BYPASS_SET_H
#define DPS_ACL_BYPASS_SET_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "acl_key.h"
#include "acl_rule.h"

struct bypass_set {
	uint32_t nb_rules;
	unsigned nb_workers;
	uint32_t stride;                /* hits per worker row: cache lines of their own */
	struct acl_rule *rules;
	uint64_t *hits;                 /* [worker * stride + rule] */
};

/* The control thread's list of bypass rules, in the order they were added; what the
 * workers apply is a set built from it. */
#define BYPASS_MAX_RULES 256

struct bypass_table {
	struct acl_rule rules[BYPASS_MAX_RULES];
	uint64_t hits_retired[BYPASS_MAX_RULES];  /* counted by sets since replaced */
	uint32_t nb_rules;
	uint32_t next_id;                         /* the last id given (ids start at 1) */
	struct bypass_set *set;                   /* in the workers' hands, or NULL */
};

/* A set of copies of the n rules for nb_workers workers, or NULL (out of memory). */
struct bypass_set *bypass_set_create(const struct acl_rule *rules, uint32_t n,
				     unsigned nb_workers);
void bypass_set_free(struct bypass_set *set);
/* The hits of rule i summed over the workers. */
uint64_t bypass_set_hits(const struct bypass_set *set, uint32_t i);

/* Whether rule r matches key k (r->deny and r->hooks are not looked at): a rule of the
 * other family never does, one of both families may. */
bool bypass_rule_matches(const struct acl_rule *r, const struct acl_key *k);
bool bypass_rule_matches6(const struct acl_rule *r, const struct acl_key6 *k);

/* Whether a rule of set names datagram m (IP header at its data, parsed into ip, m->port its
 * port), counting the hit on the first such rule in worker's row. */
bool bypass_set_matches(const struct bypass_set *set, unsigned worker,
			const struct rte_mbuf *m, const struct ip4_repr *ip);

/* The same for the IPv6 datagram m (at its IPv6 header, parsed into ip, its extension
 * headers walked into ext). */
bool bypass_set_matches6(const struct bypass_set *set, unsigned worker,
			 const struct rte_mbuf *m, const struct ip6_repr *ip,
			 const struct ip6_ext_info *ext);

#endif
