#include "addrconf.h"

#include <errno.h>
#include <string.h>

/* RFC 4861 §10 host constants. */
#define MAX_RTR_SOLICITATION_DELAY_MS 1000
#define RTR_SOLICITATION_INTERVAL_MS 4000
#define MAX_RTR_SOLICITATIONS 3
/* RFC 4862 §5.5.3(e): the valid lifetime an unauthenticated advertisement may cut to. */
#define TWO_HOURS_S 7200u
#define INFINITE_LIFETIME 0xffffffffu
#define SLAAC_PLEN 64 /* the modified EUI-64 identifier is 64 bits (§5.5.3(d)) */

static const char *const state_names[] = {
#define ADDRCONF_STATE_NAME(name, text) text,
	ADDRCONF_STATE_LIST(ADDRCONF_STATE_NAME)
#undef ADDRCONF_STATE_NAME
};

static const char *const counter_names[] = {
#define ADDRCONF_COUNTER_NAME(name, text) text,
	ADDRCONF_COUNTER_LIST(ADDRCONF_COUNTER_NAME)
#undef ADDRCONF_COUNTER_NAME
};

const char *addrconf_state_str(enum addrconf_state st)
{
	return (unsigned)st < sizeof(state_names) / sizeof(state_names[0]) ? state_names[st] : "?";
}

const char *addrconf_counter_str(enum addrconf_counter c)
{
	return (unsigned)c < ADDRCONF_C_COUNT ? counter_names[c] : "?";
}

uint64_t addrconf_random_ms(struct addrconf_port *p, uint64_t max_ms)
{
	/* xorshift64: the delays only spread hosts apart, they guard nothing. */
	p->rand ^= p->rand << 13;
	p->rand ^= p->rand >> 7;
	p->rand ^= p->rand << 17;
	return max_ms == 0 ? 0 : p->rand % (max_ms + 1);
}

void addrconf_port_init(struct addrconf_port *p, uint16_t port, const uint8_t mac[6],
			uint16_t link_mtu, uint64_t seed, const struct addrconf_ops *ops)
{
	memset(p, 0, sizeof(*p));
	p->port = port;
	memcpy(p->mac, mac, 6);
	p->link_mtu = link_mtu;
	p->dad_transmits = ADDRCONF_DAD_TRANSMITS;
	p->ops = *ops;
	p->rand = seed | 1;
	p->rs_next_ms = ADDRCONF_NEVER;
	p->mld_version = 2;
	p->mld_join_next_ms = ADDRCONF_NEVER;
	p->mld_answer_ms = ADDRCONF_NEVER;
	p->mld_leave_next_ms = ADDRCONF_NEVER;
}

static struct addrconf_addr *addr_find(struct addrconf_port *p, const struct ip6_addr *addr)
{
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++)
		if (p->addrs[i].used && ip6_addr_equal(&p->addrs[i].addr, addr))
			return &p->addrs[i];
	return NULL;
}

const struct addrconf_addr *addrconf_addr_find(const struct addrconf_port *p,
					       const struct ip6_addr *addr)
{
	return addr_find((struct addrconf_port *)p, addr);
}

/* Adds a to the table; its group is joined when it is new. */
static struct addrconf_addr *addr_track(struct addrconf_port *p, uint64_t now,
					const struct ip6_addr *addr, uint8_t plen, bool dad)
{
	struct addrconf_addr *a = NULL;
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS && a == NULL; i++)
		if (!p->addrs[i].used)
			a = &p->addrs[i];
	if (a == NULL)
		return NULL;
	struct ip6_addr group = ip6_solicited_node(addr);
	bool new_group = !addrconf_mld_member(p, &group);
	bool tentative = dad && p->dad_transmits != 0;
	*a = (struct addrconf_addr){.used = true, .addr = *addr, .plen = plen,
				    .state = tentative ? ADDRCONF_TENTATIVE : ADDRCONF_PREFERRED,
				    .probes_left = tentative ? p->dad_transmits : 0,
				    .next_ms = tentative ? now : ADDRCONF_NEVER,
				    .valid_until = ADDRCONF_NEVER,
				    .preferred_until = ADDRCONF_NEVER};
	/* §5.4.2: the solicited-node group is joined before the first probe (the MLD
	 * report goes out in the same tick, ahead of it). */
	if (new_group)
		addrconf_mld_changed(p, now, &group, true);
	return a;
}

int addrconf_addr_added(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr,
			uint8_t plen, bool dad)
{
	if (addr_find(p, addr) != NULL)
		return -EEXIST;
	struct addrconf_addr *a = addr_track(p, now, addr, plen, dad);
	if (a == NULL) {
		p->counters[ADDRCONF_C_ADDR_TABLE_FULL]++;
		return -ENOSPC;
	}
	return (int)a->state;
}

/* Forgets a, leaving its group when no other address needs it. */
static void addr_forget(struct addrconf_port *p, uint64_t now, struct addrconf_addr *a)
{
	struct ip6_addr group = ip6_solicited_node(&a->addr);
	a->used = false;
	if (!addrconf_mld_member(p, &group))
		addrconf_mld_changed(p, now, &group, false);
}

void addrconf_addr_removed(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr)
{
	struct addrconf_addr *a = addr_find(p, addr);
	if (a != NULL)
		addr_forget(p, now, a);
}

static struct addrconf_addr *slaac_form(struct addrconf_port *p, uint64_t now,
					const struct ip6_addr *prefix, uint8_t dad_counter);

/* RFC 7217 §6: a stable identifier found duplicate gives way to the next DAD_Counter's, up to
 * IDGEN_RETRIES times; the address keeps the lifetimes the prefix gave. */
static bool stable_retry(struct addrconf_port *p, uint64_t now, struct addrconf_addr *a)
{
	if (!a->slaac || !a->stable || a->dad_counter >= ADDRCONF_IDGEN_RETRIES)
		return false;
	struct addrconf_addr old = *a;
	p->ops.addr_del(p->ops.ctx, p->port, &a->addr, a->plen);
	addr_forget(p, now, a);
	p->counters[ADDRCONF_C_IDGEN_RETRIES]++;
	struct addrconf_addr *n = slaac_form(p, now, &old.addr, (uint8_t)(old.dad_counter + 1));
	if (n != NULL) {
		n->valid_until = old.valid_until;
		n->preferred_until = old.preferred_until;
	}
	return true;
}

void addrconf_dad_conflict(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr)
{
	struct addrconf_addr *a = addr_find(p, addr);
	if (a == NULL || a->state != ADDRCONF_TENTATIVE)
		return;
	if (stable_retry(p, now, a)) {
		p->counters[ADDRCONF_C_DAD_FAILED]++;
		return;
	}
	/* §5.4.5: the address is not used; a link-local one found duplicate should also
	 * stop IPv6 on the port, which we leave to the operator who reads the log. */
	struct ip6_addr group = ip6_solicited_node(&a->addr);
	a->state = ADDRCONF_DADFAILED;
	a->next_ms = ADDRCONF_NEVER;
	p->counters[ADDRCONF_C_DAD_FAILED]++;
	p->ops.addr_state(p->ops.ctx, p->port, &a->addr, ADDRCONF_DADFAILED);
	if (!addrconf_mld_member(p, &group))
		addrconf_mld_changed(p, now, &group, false);
}

static uint64_t lifetime_end(uint64_t now, uint32_t seconds)
{
	return seconds == INFINITE_LIFETIME ? ADDRCONF_NEVER : now + (uint64_t)seconds * 1000;
}

/* §5.5.3(e): the valid lifetime an advertisement sets on an address formed before. */
static void slaac_refresh(struct addrconf_port *p, uint64_t now, struct addrconf_addr *a,
			  const struct nd_prefix *pi)
{
	uint64_t remaining_s = a->valid_until == ADDRCONF_NEVER ? UINT64_MAX
			       : a->valid_until > now ? (a->valid_until - now) / 1000 : 0;
	if (pi->valid_lifetime > TWO_HOURS_S || pi->valid_lifetime > remaining_s)
		a->valid_until = lifetime_end(now, pi->valid_lifetime);
	else if (remaining_s > TWO_HOURS_S)
		a->valid_until = lifetime_end(now, TWO_HOURS_S);
	/* else: an advertisement may not cut a lifetime of two hours or less. */
	a->preferred_until = lifetime_end(now, pi->preferred_lifetime);
	if (a->state == ADDRCONF_DEPRECATED && a->preferred_until > now) {
		a->state = ADDRCONF_PREFERRED;
		p->ops.addr_state(p->ops.ctx, p->port, &a->addr, ADDRCONF_PREFERRED);
	}
}

/* The address SLAAC formed from the /64 prefix (whatever its identifier), or NULL. */
static struct addrconf_addr *slaac_find(struct addrconf_port *p, const struct ip6_addr *prefix)
{
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++) {
		struct addrconf_addr *a = &p->addrs[i];
		if (a->used && a->slaac && memcmp(a->addr.b, prefix->b, 8) == 0)
			return a;
	}
	return NULL;
}

/* Forms, tracks and adds the address of prefix with the port's identifier (lifetimes left
 * to the caller); NULL when it is the user's already or cannot be added. */
static struct addrconf_addr *slaac_form(struct addrconf_port *p, uint64_t now,
					const struct ip6_addr *prefix, uint8_t dad_counter)
{
	struct ip6_addr addr = *prefix;
	ip6_prefix_mask(&addr, SLAAC_PLEN);
	addrconf_iid_form(p, &addr, dad_counter);
	if (addr_find(p, &addr) != NULL)
		return NULL;
	struct addrconf_addr *a = addr_track(p, now, &addr, SLAAC_PLEN, true);
	if (a == NULL) {
		p->counters[ADDRCONF_C_ADDR_TABLE_FULL]++;
		return NULL;
	}
	if (p->ops.addr_add(p->ops.ctx, p->port, &addr, SLAAC_PLEN,
			    a->state == ADDRCONF_TENTATIVE) != 0) {
		addr_forget(p, now, a);
		return NULL;
	}
	a->slaac = true;
	a->stable = p->addrgen == ADDRCONF_ADDRGEN_STABLE_PRIVACY;
	a->dad_counter = dad_counter;
	p->counters[ADDRCONF_C_ADDR_FORMED]++;
	return a;
}

/* §5.5.3: one Prefix Information option. */
static void slaac_prefix(struct addrconf_port *p, uint64_t now, const struct nd_prefix *pi)
{
	struct ip6_addr prefix = pi->prefix;
	ip6_prefix_mask(&prefix, pi->plen);
	/* (a) no A flag, (b) link-local prefix: nothing to form; (c) preferred past valid,
	 * (d) a prefix that leaves no 64 bits for the identifier: invalid. */
	if (!(pi->flags & ND_PREFIX_AUTO) || ip6_is_link_local(&prefix))
		return;
	if (pi->preferred_lifetime > pi->valid_lifetime || pi->plen != SLAAC_PLEN) {
		p->counters[ADDRCONF_C_PREFIX_IGNORED]++;
		return;
	}
	struct addrconf_addr *a = slaac_find(p, &prefix);
	if (a != NULL) {
		slaac_refresh(p, now, a, pi);
		return;
	}
	if (pi->valid_lifetime == 0)
		return;
	a = slaac_form(p, now, &prefix, 0);
	if (a == NULL)
		return;
	a->valid_until = lifetime_end(now, pi->valid_lifetime);
	a->preferred_until = lifetime_end(now, pi->preferred_lifetime);
}

void addrconf_ra_input(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
		       const struct nd_repr *ra)
{
	if (!p->autoconf)
		return;
	p->counters[ADDRCONF_C_RA_RX]++;
	p->rs_left = 0; /* §6.3.7: an advertisement ends the solicitations */
	p->rs_next_ms = ADDRCONF_NEVER;
	uint16_t mtu = p->mtu;
	uint8_t hop_limit = ra->cur_hop_limit != 0 ? ra->cur_hop_limit : p->hop_limit;
	/* §6.3.4: an MTU below the minimum or above the link's is ignored. */
	if (ra->mtu != 0 && ra->mtu >= IP6_MIN_MTU && ra->mtu <= p->link_mtu)
		mtu = (uint16_t)ra->mtu;
	if (mtu != p->mtu || hop_limit != p->hop_limit) {
		p->mtu = mtu;
		p->hop_limit = hop_limit;
		p->ops.link(p->ops.ctx, p->port, mtu, hop_limit);
	}
	addrconf_router_update(p, now, src, ra->router_lifetime, ra->router_pref);
	p->counters[ADDRCONF_C_PREFIX_IGNORED] += ra->prefixes_ignored;
	for (unsigned i = 0; i < ra->nb_prefixes; i++)
		slaac_prefix(p, now, &ra->prefixes[i]);
}

void addrconf_set_autoconf(struct addrconf_port *p, uint64_t now, bool on)
{
	if (on == p->autoconf)
		return;
	p->autoconf = on;
	if (on) {
		p->rs_left = MAX_RTR_SOLICITATIONS;
		p->rs_next_ms = now + addrconf_random_ms(p, MAX_RTR_SOLICITATION_DELAY_MS);
		return;
	}
	p->rs_left = 0;
	p->rs_next_ms = ADDRCONF_NEVER;
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++) {
		struct addrconf_addr *a = &p->addrs[i];
		if (a->used && a->slaac) {
			p->ops.addr_del(p->ops.ctx, p->port, &a->addr, a->plen);
			addr_forget(p, now, a);
		}
	}
	addrconf_routers_clear(p, now);
	if (p->mtu != 0 || p->hop_limit != 0) {
		p->mtu = 0;
		p->hop_limit = 0;
		p->ops.link(p->ops.ctx, p->port, 0, 0);
	}
}

void addrconf_set_dad_transmits(struct addrconf_port *p, uint64_t now, uint8_t n)
{
	p->dad_transmits = n;
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS && n == 0; i++) {
		struct addrconf_addr *a = &p->addrs[i];
		if (a->used && a->state == ADDRCONF_TENTATIVE) {
			a->probes_left = 0;
			a->next_ms = now; /* the next tick ends it as if the probes had been sent */
		}
	}
}

/* One address's DAD and lifetimes at now. */
static void addr_tick(struct addrconf_port *p, uint64_t now, struct addrconf_addr *a)
{
	if (a->slaac && a->valid_until <= now) {
		/* §5.5.4: an invalid address is removed. */
		p->counters[ADDRCONF_C_ADDR_EXPIRED]++;
		p->ops.addr_del(p->ops.ctx, p->port, &a->addr, a->plen);
		addr_forget(p, now, a);
		return;
	}
	if (a->state == ADDRCONF_TENTATIVE && a->next_ms <= now) {
		if (a->probes_left > 0) {
			a->probes_left--;
			a->next_ms = now + ADDRCONF_RETRANS_MS;
			p->counters[ADDRCONF_C_DAD_PROBES]++;
			p->ops.send_dad(p->ops.ctx, p->port, &a->addr);
			return;
		}
		/* §5.4.3: RetransTimer after the last probe without a conflict. */
		a->next_ms = ADDRCONF_NEVER;
		a->state = ADDRCONF_PREFERRED;
		p->counters[ADDRCONF_C_DAD_DONE]++;
		p->ops.addr_state(p->ops.ctx, p->port, &a->addr, ADDRCONF_PREFERRED);
	}
	if (a->state == ADDRCONF_PREFERRED && a->preferred_until <= now) {
		a->state = ADDRCONF_DEPRECATED;
		p->ops.addr_state(p->ops.ctx, p->port, &a->addr, ADDRCONF_DEPRECATED);
	}
}

void addrconf_tick(struct addrconf_port *p, uint64_t now)
{
	addrconf_mld_tick(p, now);
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++)
		if (p->addrs[i].used)
			addr_tick(p, now, &p->addrs[i]);
	addrconf_router_tick(p, now);
	if (p->rs_left > 0 && p->rs_next_ms <= now) {
		p->rs_left--;
		p->rs_next_ms = p->rs_left > 0 ? now + RTR_SOLICITATION_INTERVAL_MS : ADDRCONF_NEVER;
		p->counters[ADDRCONF_C_RS_SENT]++;
		p->ops.send_rs(p->ops.ctx, p->port);
	}
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

uint64_t addrconf_next_ms(const struct addrconf_port *p)
{
	uint64_t next = min_u64(addrconf_mld_next_ms(p), p->rs_next_ms);
	next = min_u64(next, addrconf_router_next_ms(p));
	for (unsigned i = 0; i < ADDRCONF_MAX_ADDRS; i++) {
		const struct addrconf_addr *a = &p->addrs[i];
		if (!a->used)
			continue;
		if (a->state == ADDRCONF_TENTATIVE)
			next = min_u64(next, a->next_ms);
		if (a->slaac)
			next = min_u64(next, a->valid_until);
		if (a->state == ADDRCONF_PREFERRED)
			next = min_u64(next, a->preferred_until);
	}
	return next;
}
