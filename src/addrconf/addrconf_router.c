/* The Default Router List of a port (RFC 4861 §6.3.4) and the choice of the default router
 * among it (§6.3.6, with the preferences of RFC 4191 §3.2), and the destinations Redirects
 * sent elsewhere (§8.3).
 *
 * Choice: a router not known unreachable before one that is, then the higher preference,
 * then the router chosen already (a new equal router does not move the traffic), then the
 * list's order. When every router is known unreachable, §6.3.6 asks for round-robin: each
 * reachability check moves to the next, so that traffic finds whichever router comes back.
 * A router is known unreachable from the check that sees its neighbour entry failed until
 * the neighbour cache confirms it again or it advertises while its entry is not failed (an
 * entry that failed is deleted after a while: without this memory the dead router would
 * look "probably reachable" again and be chosen back). */
#include <string.h>

#include "addrconf.h"

static struct addrconf_router *router_find(struct addrconf_port *p, const struct ip6_addr *a)
{
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++)
		if (p->routers[i].used && ip6_addr_equal(&p->routers[i].addr, a))
			return &p->routers[i];
	return NULL;
}

static unsigned router_count(const struct addrconf_port *p)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++)
		n += p->routers[i].used;
	return n;
}

/* Higher is better: reachability first, then preference. */
static int router_rank(const struct addrconf_router *r)
{
	return (r->unreachable ? 0 : 4) + r->pref + 1;
}

static enum addrconf_reach router_reach(struct addrconf_port *p, const struct ip6_addr *a)
{
	if (p->ops.router_reach == NULL)
		return ADDRCONF_REACH_UNKNOWN;
	return p->ops.router_reach(p->ops.ctx, p->port, a);
}

/* Makes routers[best] (-1: none) the default router. */
static void router_choose(struct addrconf_port *p, int best)
{
	const struct ip6_addr *next = best >= 0 ? &p->routers[best].addr : NULL;
	if (p->router_present && next != NULL && ip6_addr_equal(&p->router, next))
		return;
	if (p->router_present) {
		p->router_present = false;
		p->ops.router(p->ops.ctx, p->port, &p->router, false);
		if (next != NULL)
			p->counters[ADDRCONF_C_ROUTER_CHANGES]++;
	}
	if (next != NULL) {
		p->router_present = true;
		p->router = *next;
		p->ops.router(p->ops.ctx, p->port, next, true);
	}
}

/* §6.3.6; rotate: round-robin when none is reachable (a reachability check's turn). */
static void router_select(struct addrconf_port *p, bool rotate)
{
	int cur = -1, best = -1;
	for (int i = 0; i < ADDRCONF_MAX_ROUTERS; i++)
		if (p->routers[i].used && p->router_present &&
		    ip6_addr_equal(&p->routers[i].addr, &p->router))
			cur = i;
	for (int i = 0; i < ADDRCONF_MAX_ROUTERS; i++) {
		const struct addrconf_router *r = &p->routers[i];
		if (!r->used)
			continue;
		if (best < 0 || router_rank(r) > router_rank(&p->routers[best]) ||
		    (router_rank(r) == router_rank(&p->routers[best]) && i == cur))
			best = i;
	}
	if (rotate && best >= 0 && p->routers[best].unreachable && cur >= 0) {
		for (int k = 1; k <= ADDRCONF_MAX_ROUTERS; k++) {
			int j = (cur + k) % ADDRCONF_MAX_ROUTERS;
			if (p->routers[j].used) {
				best = j;
				break;
			}
		}
	}
	router_choose(p, best);
}

/* The redirects a router gave go with it: it no longer speaks for the link. */
static void redirect_forget(struct addrconf_port *p, struct addrconf_redirect *r)
{
	r->used = false;
	(void)p->ops.redirect(p->ops.ctx, p->port, &r->dst, &r->target, false);
}

static void router_forget(struct addrconf_port *p, struct addrconf_router *r)
{
	r->used = false;
	for (unsigned i = 0; i < ADDRCONF_MAX_REDIRECTS; i++)
		if (p->redirects[i].used && ip6_addr_equal(&p->redirects[i].router, &r->addr))
			redirect_forget(p, &p->redirects[i]);
}

void addrconf_router_update(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
			    uint16_t lifetime_s, int8_t pref)
{
	struct addrconf_router *r = router_find(p, src);
	if (lifetime_s == 0) {
		/* §6.3.4: a lifetime of 0 takes the router off the list at once. */
		if (r != NULL) {
			router_forget(p, r);
			router_select(p, false);
		}
		return;
	}
	if (r == NULL) {
		for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS && r == NULL; i++)
			if (!p->routers[i].used)
				r = &p->routers[i];
		if (r == NULL) {
			p->counters[ADDRCONF_C_ROUTER_IGNORED]++;
			return;
		}
		*r = (struct addrconf_router){.used = true, .addr = *src};
	}
	r->until = now + (uint64_t)lifetime_s * 1000;
	r->pref = pref;
	r->unreachable = router_reach(p, src) == ADDRCONF_REACH_NO;
	router_select(p, false);
}

void addrconf_routers_clear(struct addrconf_port *p, uint64_t now)
{
	(void)now;
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++)
		if (p->routers[i].used)
			router_forget(p, &p->routers[i]);
	router_choose(p, -1);
}

/* Asks the neighbour cache about every router, then chooses again. */
static void router_check(struct addrconf_port *p)
{
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++) {
		struct addrconf_router *r = &p->routers[i];
		if (!r->used)
			continue;
		enum addrconf_reach reach = router_reach(p, &r->addr);
		if (reach == ADDRCONF_REACH_NO && !r->unreachable) {
			r->unreachable = true;
			p->counters[ADDRCONF_C_ROUTER_UNREACHABLE]++;
		} else if (reach == ADDRCONF_REACH_YES) {
			r->unreachable = false;
		}
	}
	router_select(p, true);
}

void addrconf_router_tick(struct addrconf_port *p, uint64_t now)
{
	bool changed = false;
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++) {
		struct addrconf_router *r = &p->routers[i];
		if (r->used && r->until <= now) {
			p->counters[ADDRCONF_C_ROUTER_EXPIRED]++;
			router_forget(p, r);
			changed = true;
		}
	}
	if (changed)
		router_select(p, false);
	for (unsigned i = 0; i < ADDRCONF_MAX_REDIRECTS; i++) {
		struct addrconf_redirect *r = &p->redirects[i];
		if (r->used && r->until <= now) {
			p->counters[ADDRCONF_C_REDIRECT_EXPIRED]++;
			redirect_forget(p, r);
		}
	}
	if (router_count(p) >= 2 && p->router_check_ms <= now) {
		p->router_check_ms = now + ADDRCONF_ROUTER_CHECK_MS;
		router_check(p);
	}
}

uint64_t addrconf_router_next_ms(const struct addrconf_port *p)
{
	uint64_t next = router_count(p) >= 2 ? p->router_check_ms : ADDRCONF_NEVER;
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++)
		if (p->routers[i].used && p->routers[i].until < next)
			next = p->routers[i].until;
	for (unsigned i = 0; i < ADDRCONF_MAX_REDIRECTS; i++)
		if (p->redirects[i].used && p->redirects[i].until < next)
			next = p->redirects[i].until;
	return next;
}

void addrconf_redirect_input(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
			     const struct nd_repr *redirect)
{
	const struct ip6_addr *dst = &redirect->redirect_dst, *target = &redirect->target;
	struct addrconf_redirect *r = NULL, *free_slot = NULL;
	for (unsigned i = 0; i < ADDRCONF_MAX_REDIRECTS; i++) {
		struct addrconf_redirect *x = &p->redirects[i];
		if (x->used && ip6_addr_equal(&x->dst, dst))
			r = x;
		else if (!x->used && free_slot == NULL)
			free_slot = x;
	}
	if (r != NULL && ip6_addr_equal(&r->target, target)) {
		r->router = *src;
		r->until = now + ADDRCONF_REDIRECT_MS;
		p->counters[ADDRCONF_C_REDIRECTS]++;
		return;
	}
	if (r != NULL)
		redirect_forget(p, r); /* a newer Redirect for dst replaces it */
	else
		r = free_slot;
	if (r == NULL) {
		p->counters[ADDRCONF_C_REDIRECT_FULL]++;
		return;
	}
	if (p->ops.redirect(p->ops.ctx, p->port, dst, target, true) != 0)
		return;
	*r = (struct addrconf_redirect){.used = true, .dst = *dst, .target = *target,
					.router = *src, .until = now + ADDRCONF_REDIRECT_MS};
	p->counters[ADDRCONF_C_REDIRECTS]++;
}
