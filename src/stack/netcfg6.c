#include "netcfg6.h"

#include <errno.h>

#include "netcfg_priv.h"

struct ip6_addr netcfg6_link_local(const struct eth_addr *mac)
{
	struct ip6_addr a = {.b = {0xfe, 0x80}};
	ip6_set_eui64(&a, mac->b);
	return a;
}

static bool addr_assignable(const struct ip6_addr *a, uint8_t plen)
{
	return plen != 0 && plen <= 128 && !ip6_is_multicast(a) && !ip6_is_unspecified(a) &&
	       !ip6_is_loopback(a) && !ip6_is_v4mapped(a);
}

const struct netcfg_addr6 *netcfg6_find(const struct netcfg *c, uint16_t port,
					const struct ip6_addr *addr)
{
	bool scoped = ip6_is_link_local(addr);
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6; i++) {
		const struct netcfg_addr6 *a = &c->addrs6[i];
		if (a->used && (!scoped || a->port == port) && ip6_addr_equal(&a->addr, addr))
			return a;
	}
	return NULL;
}

const struct netcfg_addr6 *netcfg6_local(const struct netcfg *c, uint16_t port,
					 const struct ip6_addr *addr)
{
	const struct netcfg_addr6 *a = netcfg6_find(c, port, addr);
	return a != NULL && !(a->flags & NETCFG6_UNUSABLE) ? a : NULL;
}

int netcfg6_addr_set_flags(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
			   uint8_t set, uint8_t clear)
{
	struct netcfg_addr6 *a = (struct netcfg_addr6 *)netcfg6_find(c, port, addr);
	if (a == NULL || a->port != port)
		return -EADDRNOTAVAIL;
	a->flags = (uint8_t)((a->flags & ~clear) | set);
	c->gen++;
	return 0;
}

bool netcfg_inet_is_local(const struct netcfg *c, const struct inet_addr *a, uint16_t scope)
{
	if (inet_addr_is_v4(a))
		return netcfg_addr_is_local(c, inet_addr_to_v4(a));
	struct ip6_addr v6 = inet_addr_to_v6(a);
	return netcfg6_local(c, scope, &v6) != NULL;
}

bool netcfg6_listens(const struct netcfg *c, uint16_t port, const struct ip6_addr *group)
{
	static const struct ip6_addr all_nodes = {.b = {0xff, 0x02, [15] = 1}};
	if (ip6_addr_equal(group, &all_nodes))
		return true;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6; i++) {
		const struct netcfg_addr6 *a = &c->addrs6[i];
		if (!a->used || a->port != port || (a->flags & NETCFG6_DADFAILED))
			continue;
		struct ip6_addr sn = ip6_solicited_node(&a->addr);
		if (ip6_addr_equal(&sn, group))
			return true;
	}
	return false;
}

static unsigned common_prefix_len(const struct ip6_addr *a, const struct ip6_addr *b)
{
	unsigned n = 0;
	for (unsigned i = 0; i < 16; i++) {
		uint8_t x = a->b[i] ^ b->b[i];
		if (x != 0)
			return n + (unsigned)__builtin_clz(x) - 24;
		n += 8;
	}
	return n;
}

bool netcfg6_source_for(const struct netcfg *c, uint16_t port, const struct ip6_addr *dst,
			struct ip6_addr *src)
{
	bool want_ll = ip6_is_link_local(dst) || ip6_is_multicast(dst);
	const struct netcfg_addr6 *best = NULL;
	int best_score = -1;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6; i++) {
		const struct netcfg_addr6 *a = &c->addrs6[i];
		if (!a->used || a->port != port || (a->flags & NETCFG6_UNUSABLE))
			continue;
		/* Rule 2, appropriate scope, dominates; rule 3, avoid deprecated addresses,
		 * comes next; rule 8, the longest matching prefix, breaks ties. */
		int score = (ip6_is_link_local(&a->addr) == want_ll) << 9 |
			    !(a->flags & NETCFG6_DEPRECATED) << 8 |
			    (int)common_prefix_len(&a->addr, dst);
		if (score > best_score) {
			best = a;
			best_score = score;
		}
	}
	if (best == NULL)
		return false;
	*src = best->addr;
	return true;
}

static struct ip6_addr prefix_of(const struct ip6_addr *a, uint8_t plen)
{
	struct ip6_addr p = *a;
	ip6_prefix_mask(&p, plen);
	return p;
}

/* An address other than skip that makes the CONNECTED route prefix/plen, one on port first;
 * NULL when none does. */
static const struct netcfg_addr6 *prefix_maker(const struct netcfg *c, uint16_t port,
					       const struct ip6_addr *prefix, uint8_t plen,
					       const struct netcfg_addr6 *skip)
{
	const struct netcfg_addr6 *other = NULL;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6; i++) {
		const struct netcfg_addr6 *a = &c->addrs6[i];
		if (!a->used || a == skip || ip6_is_link_local(&a->addr) || a->plen != plen)
			continue;
		struct ip6_addr p = prefix_of(&a->addr, plen);
		if (!ip6_addr_equal(&p, prefix))
			continue;
		if (a->port == port)
			return a;
		if (other == NULL)
			other = a;
	}
	return other;
}

/* The CONNECTED route address a makes, unless a route of that prefix is there already.
 * Returns 1 when added, 0 when one was there, or -errno. */
static int prefix_route_add(struct netcfg *c, const struct netcfg_addr6 *a)
{
	struct ip6_addr prefix = prefix_of(&a->addr, a->plen);
	struct route r = {.prefix = inet_addr_v6(&prefix), .plen = a->plen,
			  .type = ROUTE_CONNECTED, .port = a->port, .src = inet_addr_v6(&a->addr),
			  .from_addr = true};
	if (route_find(c->routes, &r.prefix, r.plen) != NULL)
		return 0;
	int rc = route_add(c->routes, &r);
	return rc < 0 ? rc : 1;
}

int netcfg6_addr_add(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
		     uint8_t plen, uint8_t flags)
{
	if (!netcfg_port_valid(c, port))
		return -ENODEV;
	if (!addr_assignable(addr, plen))
		return -EINVAL;
	if (netcfg6_find(c, port, addr) != NULL)
		return -EEXIST;
	struct netcfg_addr6 *slot = NULL;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6 && slot == NULL; i++)
		if (!c->addrs6[i].used)
			slot = &c->addrs6[i];
	if (slot == NULL)
		return -ENOSPC;
	struct netcfg_addr6 a = {.used = true, .port = port, .addr = *addr, .plen = plen,
				 .flags = flags};
	if (!ip6_is_link_local(addr)) {
		struct route local = {.prefix = inet_addr_v6(addr), .plen = 128,
				      .type = ROUTE_LOCAL, .port = port, .src = inet_addr_v6(addr),
				      .from_addr = true};
		int rc = route_add(c->routes, &local);
		if (rc < 0)
			return rc;
		if (plen < 128 && (rc = prefix_route_add(c, &a)) < 0) {
			route_del(c->routes, &local.prefix, 128, 0);
			return rc;
		}
	}
	*slot = a;
	c->gen++;
	return 0;
}

int netcfg6_addr_del(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
		     uint8_t plen)
{
	struct netcfg_addr6 *a = (struct netcfg_addr6 *)netcfg6_find(c, port, addr);
	if (a == NULL || a->port != port || a->plen != plen)
		return -EADDRNOTAVAIL;
	a->used = false;
	if (!ip6_is_link_local(addr)) {
		struct inet_addr key = inet_addr_v6(addr), src = key;
		route_del(c->routes, &key, 128, 1u << ROUTE_LOCAL);
		struct ip6_addr prefix = prefix_of(addr, plen);
		key = inet_addr_v6(&prefix);
		const struct route *r = route_find(c->routes, &key, plen);
		if (plen < 128 && r != NULL && r->from_addr && inet_addr_equal(&r->src, &src)) {
			route_del(c->routes, &key, plen, 0);
			const struct netcfg_addr6 *heir = prefix_maker(c, port, &prefix, plen, a);
			if (heir != NULL) /* cannot fail: it takes the entry just freed */
				(void)prefix_route_add(c, heir);
		}
	}
	c->gen++;
	return 0;
}

void netcfg6_addr_route_restore(struct netcfg *c, const struct ip6_addr *prefix, uint8_t plen)
{
	const struct netcfg_addr6 *a = prefix_maker(c, NETCFG_PORT_ANY, prefix, plen, NULL);
	if (a != NULL) /* cannot fail: it takes the entry just freed */
		(void)prefix_route_add(c, a);
}
