#include "bypass_set.h"

#include <stdlib.h>
#include <string.h>

#define BYPASS_HITS_PER_LINE (64 / sizeof(uint64_t))

struct bypass_set *bypass_set_create(const struct acl_rule *rules, uint32_t n,
				     unsigned nb_workers)
{
	struct bypass_set *set = calloc(1, sizeof(*set));
	if (set == NULL)
		return NULL;
	set->nb_rules = n;
	set->nb_workers = nb_workers;
	set->stride = (n + BYPASS_HITS_PER_LINE - 1) / BYPASS_HITS_PER_LINE * BYPASS_HITS_PER_LINE;
	set->rules = malloc((n ? n : 1) * sizeof(*rules));
	set->hits = aligned_alloc(64, ((size_t)set->stride * nb_workers + BYPASS_HITS_PER_LINE) *
					      sizeof(uint64_t));
	if (set->rules == NULL || set->hits == NULL) {
		bypass_set_free(set);
		return NULL;
	}
	memcpy(set->rules, rules, n * sizeof(*rules));
	memset(set->hits, 0, (size_t)set->stride * nb_workers * sizeof(uint64_t));
	return set;
}

void bypass_set_free(struct bypass_set *set)
{
	if (set == NULL)
		return;
	free(set->rules);
	free(set->hits);
	free(set);
}

uint64_t bypass_set_hits(const struct bypass_set *set, uint32_t i)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < set->nb_workers; w++)
		sum += set->hits[(size_t)w * set->stride + i];
	return sum;
}

static bool prefix_has(uint32_t prefix, uint8_t len, uint32_t addr_be)
{
	uint32_t mask = len == 0 ? 0 : ~0u << (32 - len);
	return (rte_be_to_cpu_32(addr_be) & mask) == prefix;
}

static bool prefix6_has(const struct ip6_addr *prefix, uint8_t len, const uint8_t addr[16])
{
	struct ip6_addr a;
	memcpy(a.b, addr, 16);
	ip6_prefix_mask(&a, len);
	return ip6_addr_equal(&a, prefix);
}

/* What a rule asks of either family's key past the addresses. */
static bool rule_matches_rest(const struct acl_rule *r, uint8_t proto, uint8_t dev, uint8_t l4,
			      uint16_t sport_be, uint16_t dport_be, uint8_t tcp_flags)
{
	if (r->proto != ACL_PROTO_ANY && r->proto != proto)
		return false;
	if (r->dev != ACL_DEV_ANY && r->dev != dev)
		return false;
	bool any_ports = r->sport_lo == 0 && r->sport_hi == 65535 && r->dport_lo == 0 &&
			 r->dport_hi == 65535;
	if (any_ports && r->flags_mask == 0)
		return true;
	/* As in iptables, a rule on ports never matches a datagram without them (a later
	 * fragment). */
	if (!l4)
		return false;
	uint16_t sport = rte_be_to_cpu_16(sport_be), dport = rte_be_to_cpu_16(dport_be);
	return sport >= r->sport_lo && sport <= r->sport_hi && dport >= r->dport_lo &&
	       dport <= r->dport_hi && (tcp_flags & r->flags_mask) == r->flags_set;
}

bool bypass_rule_matches(const struct acl_rule *r, const struct acl_key *k)
{
	return r->family != ACL_FAMILY_IP6 && prefix_has(r->src, r->src_len, k->src) &&
	       prefix_has(r->dst, r->dst_len, k->dst) &&
	       rule_matches_rest(r, k->proto, k->dev, k->l4, k->sport, k->dport, k->tcp_flags);
}

bool bypass_rule_matches6(const struct acl_rule *r, const struct acl_key6 *k)
{
	if (r->family == ACL_FAMILY_IP4)
		return false;
	/* A rule of both families has no prefixes (length 0 matches anything). */
	return prefix6_has(&r->src6, r->src_len, k->src) &&
	       prefix6_has(&r->dst6, r->dst_len, k->dst) &&
	       rule_matches_rest(r, k->proto, k->dev, k->l4, k->sport, k->dport, k->tcp_flags);
}

/* Whether a rule of set matches key (an acl_key6 when v6, else an acl_key), the hit counted
 * on the first in worker's row. */
static bool set_first_match(const struct bypass_set *set, unsigned worker, const void *key,
			    bool v6)
{
	for (uint32_t i = 0; i < set->nb_rules; i++)
		if (v6 ? bypass_rule_matches6(&set->rules[i], key)
		       : bypass_rule_matches(&set->rules[i], key)) {
			set->hits[(size_t)worker * set->stride + i]++;
			return true;
		}
	return false;
}

bool bypass_set_matches(const struct bypass_set *set, unsigned worker,
			const struct rte_mbuf *m, const struct ip4_repr *ip)
{
	if (worker >= set->nb_workers)
		return false;
	struct acl_key key;
	acl_key_build(&key, m, 0, ip, m->port);
	return set_first_match(set, worker, &key, false);
}

bool bypass_set_matches6(const struct bypass_set *set, unsigned worker,
			 const struct rte_mbuf *m, const struct ip6_repr *ip,
			 const struct ip6_ext_info *ext)
{
	if (worker >= set->nb_workers)
		return false;
	struct acl_key6 key;
	acl_key6_build(&key, m, ip, ext, m->port);
	return set_first_match(set, worker, &key, true);
}
