/* The MLD listener side of a port (RFC 3810 §6, RFC 2710 §4 towards a version 1 querier):
 * the groups are the solicited-node groups of the port's addresses (all-nodes is never
 * reported, RFC 3810 §6); a join is reported unsolicited [Robustness Variable] times, a
 * leave likewise, and a query answered after a random delay up to its Maximum Response
 * Delay. A group-specific query about one of our groups is answered like a general one,
 * with the current state of every group: more records than asked, never fewer. */
#include <string.h>

#include "addrconf.h"

#define MLD_ROBUSTNESS 2                    /* RFC 3810 §9.1 default */
#define MLD_UNSOLICITED_INTERVAL_MS 1000    /* §9.11 */
/* §9.12 Older Version Querier Present Timeout: robustness × Query Interval (125 s) + Query
 * Response Interval (10 s). */
#define MLD_V1_QUERIER_TIMEOUT_MS (MLD_ROBUSTNESS * 125000ull + 10000)

bool addrconf_mld_member(const struct addrconf_port *p, const struct ip6_addr *group)
{
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++) {
		const struct addrconf_addr *a = &p->addrs[i];
		if (!a->used || a->state == ADDRCONF_DADFAILED)
			continue;
		struct ip6_addr g = ip6_solicited_node(&a->addr);
		if (ip6_addr_equal(&g, group))
			return true;
	}
	return false;
}

/* The groups we are a member of, each once. */
static unsigned mld_groups(const struct addrconf_port *p, struct ip6_addr *out)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++) {
		const struct addrconf_addr *a = &p->addrs[i];
		if (!a->used || a->state == ADDRCONF_DADFAILED)
			continue;
		struct ip6_addr g = ip6_solicited_node(&a->addr);
		unsigned k = 0;
		while (k < n && !ip6_addr_equal(&out[k], &g))
			k++;
		if (k == n)
			out[n++] = g;
	}
	return n;
}

static void mld_send(struct addrconf_port *p, uint8_t rtype, const struct ip6_addr *groups,
		     unsigned n)
{
	if (n == 0)
		return;
	p->counters[ADDRCONF_C_MLD_REPORTS]++;
	p->ops.send_mld(p->ops.ctx, p->port, p->mld_version, rtype, groups, n);
}

static void mld_send_current(struct addrconf_port *p, uint8_t rtype)
{
	struct ip6_addr groups[ADDRCONF_MAX_ADDRS];
	mld_send(p, rtype, groups, mld_groups(p, groups));
}

void addrconf_mld_changed(struct addrconf_port *p, uint64_t now, const struct ip6_addr *group,
			  bool joined)
{
	unsigned k = 0;
	while (k < p->mld_nb_leaving && !ip6_addr_equal(&p->mld_leaving[k], group))
		k++;
	if (joined) {
		if (k < p->mld_nb_leaving) /* back before its leave was done */
			p->mld_leaving[k] = p->mld_leaving[--p->mld_nb_leaving];
		p->mld_join_left = MLD_ROBUSTNESS;
		p->mld_join_next_ms = now;
		return;
	}
	if (k == p->mld_nb_leaving && k < ADDRCONF_MAX_ADDRS)
		p->mld_leaving[p->mld_nb_leaving++] = *group;
	p->mld_leave_left = MLD_ROBUSTNESS;
	p->mld_leave_next_ms = now;
}

void addrconf_mld_query(struct addrconf_port *p, uint64_t now, const struct mld_query *q)
{
	p->counters[ADDRCONF_C_MLD_QUERIES]++;
	if (q->version == 1) {
		p->mld_version = 1;
		p->mld_v1_until = now + MLD_V1_QUERIER_TIMEOUT_MS;
	}
	if (!ip6_is_unspecified(&q->group) && !addrconf_mld_member(p, &q->group))
		return;
	uint64_t at = now + addrconf_random_ms(p, q->max_resp_ms);
	if (at < p->mld_answer_ms)
		p->mld_answer_ms = at;
}

void addrconf_mld_tick(struct addrconf_port *p, uint64_t now)
{
	if (p->mld_version == 1 && p->mld_v1_until <= now)
		p->mld_version = 2;
	if (p->mld_leave_left > 0 && p->mld_leave_next_ms <= now) {
		mld_send(p, MLD2_CHANGE_TO_INCLUDE, p->mld_leaving, p->mld_nb_leaving);
		if (--p->mld_leave_left == 0) {
			p->mld_nb_leaving = 0;
			p->mld_leave_next_ms = ADDRCONF_NEVER;
		} else {
			p->mld_leave_next_ms =
				now + 1 + addrconf_random_ms(p, MLD_UNSOLICITED_INTERVAL_MS);
		}
	}
	if (p->mld_join_left > 0 && p->mld_join_next_ms <= now) {
		mld_send_current(p, MLD2_CHANGE_TO_EXCLUDE);
		p->mld_join_next_ms = --p->mld_join_left == 0
			? ADDRCONF_NEVER : now + 1 + addrconf_random_ms(p, MLD_UNSOLICITED_INTERVAL_MS);
	}
	if (p->mld_answer_ms <= now) {
		p->mld_answer_ms = ADDRCONF_NEVER;
		mld_send_current(p, MLD2_MODE_IS_EXCLUDE);
	}
}

uint64_t addrconf_mld_next_ms(const struct addrconf_port *p)
{
	uint64_t next = p->mld_answer_ms;
	if (p->mld_join_left > 0 && p->mld_join_next_ms < next)
		next = p->mld_join_next_ms;
	if (p->mld_leave_left > 0 && p->mld_leave_next_ms < next)
		next = p->mld_leave_next_ms;
	if (p->mld_version == 1 && p->mld_v1_until < next)
		next = p->mld_v1_until;
	return next;
}
