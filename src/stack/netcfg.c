#include "netcfg.h"

#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "netcfg6.h"
#include "netcfg_priv.h"

#include "wire/ipv4.h"

int netcfg_init(struct netcfg *c, uint32_t max_routes)
{
	memset(c, 0, sizeof(*c));
	c->forwarding = true;
	c->gen = 1;
	c->routes = route_table_create(max_routes);
	return c->routes == NULL ? -rte_errno : 0;
}

void netcfg_fini(struct netcfg *c)
{
	route_table_destroy(c->routes);
	c->routes = NULL;
}

bool netcfg_port_valid(const struct netcfg *c, uint16_t port)
{
	return port < NETCFG_MAX_PORTS && c->ifaces[port].present;
}

int netcfg_iface_add(struct netcfg *c, uint16_t port, const char *name,
		     const struct eth_addr *mac, uint16_t mtu)
{
	if (port >= NETCFG_MAX_PORTS || name[0] == '\0' || strlen(name) >= NETCFG_NAME_LEN ||
	    mtu < NETCFG_MIN_MTU || mtu > NETCFG_MAX_MTU)
		return -EINVAL;
	if (c->ifaces[port].present || netcfg_iface_by_name(c, name) >= 0)
		return -EEXIST;
	struct netcfg_iface *i = &c->ifaces[port];
	i->present = true;
	i->up = true;
	strcpy(i->name, name);
	i->mac = *mac;
	i->mtu = mtu;
	c->gen++;
	struct ip6_addr ll = netcfg6_link_local(mac);
	return netcfg6_addr_add(c, port, &ll, 64, NETCFG6_AUTO);
}

int netcfg_iface_by_name(const struct netcfg *c, const char *name)
{
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++)
		if (c->ifaces[p].present && strcmp(c->ifaces[p].name, name) == 0)
			return p;
	return -ENODEV;
}

int netcfg_iface_set_mtu(struct netcfg *c, uint16_t port, uint16_t mtu)
{
	if (!netcfg_port_valid(c, port))
		return -ENODEV;
	if (mtu < NETCFG_MIN_MTU || mtu > NETCFG_MAX_MTU)
		return -EINVAL;
	c->ifaces[port].mtu = mtu;
	c->gen++;
	return 0;
}

int netcfg_iface_set_up(struct netcfg *c, uint16_t port, bool up)
{
	if (!netcfg_port_valid(c, port))
		return -ENODEV;
	c->ifaces[port].up = up;
	c->gen++;
	return 0;
}

static struct netcfg_addr *addr_find(struct netcfg *c, uint16_t port, uint32_t addr)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		if (c->addrs[i].used && c->addrs[i].port == port && c->addrs[i].addr == addr)
			return &c->addrs[i];
	return NULL;
}

bool netcfg_addr_is_local(const struct netcfg *c, uint32_t addr)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		if (c->addrs[i].used && c->addrs[i].addr == addr)
			return true;
	return false;
}

/* RFC 1122 §3.2.1.3 and RFC 3021: which host addresses may be assigned. */
static bool addr_assignable(uint32_t addr, uint8_t plen)
{
	if (plen == 0 || plen > 32 || ip4_is_multicast(addr) || ip4_is_limited_broadcast(addr) ||
	    ip4_is_zeronet(addr) || ip4_is_loopback(addr) || (addr >> 28) == 0xf)
		return false;
	if (plen >= 31)
		return true; /* RFC 3021 point-to-point and host addresses have no host-part rule */
	uint32_t host = addr & ~ip4_mask(plen);
	return host != 0 && host != ~ip4_mask(plen);
}

/* True when a makes the CONNECTED route prefix/plen: it is a's subnet. */
static bool addr_makes_connected(const struct netcfg_addr *a, uint32_t prefix, uint8_t plen)
{
	return plen < 32 && a->plen == plen && (a->addr & ip4_mask(plen)) == prefix;
}

/* True when a makes the BROADCAST route prefix/plen: its subnet's broadcast address
 * (prefixes of different lengths may share one: 10.0.0.2/24 and 10.0.0.130/25). */
static bool addr_makes_broadcast(const struct netcfg_addr *a, uint32_t prefix, uint8_t plen)
{
	return plen == 32 && a->plen < 31 && (a->addr | ~ip4_mask(a->plen)) == prefix;
}

/* An address that makes the route prefix/plen (makes()), one on port if there is one; NULL
 * when no address makes it. */
static const struct netcfg_addr *
route_maker(const struct netcfg *c, uint16_t port, uint32_t prefix, uint8_t plen,
	    bool (*makes)(const struct netcfg_addr *, uint32_t, uint8_t))
{
	const struct netcfg_addr *other = NULL;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		const struct netcfg_addr *a = &c->addrs[i];
		if (!a->used || !makes(a, prefix, plen))
			continue;
		if (a->port == port)
			return a;
		if (other == NULL)
			other = a;
	}
	return other;
}

/* Adds the route type prefix/plen for address addr on port, unless a route of that prefix
 * exists: one another address made, which serves this one too, or a user's, which comes
 * first (as the first of Linux's equal routes; the address's returns when the user deletes
 * it, netcfg_route_del). Returns 1 when added, 0 when one was there, or -errno. */
static int addr_route_add(struct netcfg *c, enum route_type type, uint32_t prefix,
			  uint8_t plen, uint16_t port, uint32_t addr)
{
	if (route_find(c->routes, INET_ADDR_V4(prefix), plen) != NULL)
		return 0;
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = type,
			  .port = port, .src = inet_addr_v4(addr), .from_addr = true};
	int rc = route_add(c->routes, &r);
	return rc < 0 ? rc : 1;
}

int netcfg_addr_add(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen)
{
	if (!netcfg_port_valid(c, port))
		return -ENODEV;
	if (!addr_assignable(addr, plen))
		return -EINVAL;
	if (netcfg_addr_is_local(c, addr))
		return -EEXIST;
	struct netcfg_addr *slot = NULL;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS && slot == NULL; i++)
		if (!c->addrs[i].used)
			slot = &c->addrs[i];
	if (slot == NULL)
		return -ENOSPC;

	struct route local = {.prefix = inet_addr_v4(addr), .plen = 32, .type = ROUTE_LOCAL,
			      .port = port, .src = inet_addr_v4(addr), .from_addr = true};
	int rc = route_add(c->routes, &local);
	if (rc < 0)
		return rc;
	uint32_t net = addr & ip4_mask(plen);
	uint32_t bcast = net | ~ip4_mask(plen);
	int bc = 0;
	if (plen < 31)
		rc = bc = addr_route_add(c, ROUTE_BROADCAST, bcast, 32, port, addr);
	if (rc >= 0 && plen < 32)
		rc = addr_route_add(c, ROUTE_CONNECTED, net, plen, port, addr);
	if (rc < 0) {
		if (bc == 1)
			route_del(c->routes, INET_ADDR_V4(bcast), 32, 0);
		route_del(c->routes, INET_ADDR_V4(addr), 32, 0);
		return rc;
	}
	*slot = (struct netcfg_addr){.used = true, .port = port, .addr = addr, .plen = plen};
	c->gen++;
	return 0;
}

/* Address old, which made the route prefix/plen (makes), is gone (Linux fib_del_ifaddr).
 * While another address makes the same route, the route passes to it, preferring one on the
 * same port, and takes it as its source, as the remaining address's own prefix route does
 * in Linux, so nothing is sent from an address that is no longer ours; after the last one
 * it goes. A user's route, or one held by another address, stays as it is. */
static void addr_route_release(struct netcfg *c, uint32_t prefix, uint8_t plen, uint32_t old,
			       bool (*makes)(const struct netcfg_addr *, uint32_t, uint8_t))
{
	const struct route *r = route_find(c->routes, INET_ADDR_V4(prefix), plen);
	if (r == NULL || !r->from_addr || route_src4(r) != old)
		return;
	struct route nr = *r;
	const struct netcfg_addr *heir = route_maker(c, r->port, prefix, plen, makes);
	route_del(c->routes, INET_ADDR_V4(prefix), plen, 0);
	if (heir == NULL)
		return;
	nr.src = inet_addr_v4(heir->addr);
	nr.port = heir->port;
	(void)route_add(c->routes, &nr); /* cannot fail: it takes the entry just freed */
}

struct route_key_of_src {
	struct inet_addr src;
	struct inet_addr prefix;
	uint8_t plen;
};

static int route_has_src(const struct route *r, void *arg)
{
	struct route_key_of_src *k = arg;
	if (!inet_addr_equal(&r->src, &k->src))
		return 0;
	k->prefix = r->prefix;
	k->plen = r->plen;
	return 1;
}

/* Routes a user gave the source src go with that address (Linux fib_sync_down_addr), rather
 * than send from an address that is no longer ours. */
static void routes_del_src(struct netcfg *c, const struct inet_addr *src)
{
	struct route_key_of_src k = {.src = *src};
	while (route_walk(c->routes, route_has_src, &k) != 0)
		route_del(c->routes, &k.prefix, k.plen, 0);
}

int netcfg_addr_del(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen)
{
	struct netcfg_addr *a = addr_find(c, port, addr);
	if (a == NULL || a->plen != plen)
		return -EADDRNOTAVAIL;
	a->used = false;
	route_del(c->routes, INET_ADDR_V4(addr), 32, 1u << ROUTE_LOCAL);
	if (plen < 32)
		addr_route_release(c, addr & ip4_mask(plen), plen, addr, addr_makes_connected);
	if (plen < 31)
		addr_route_release(c, addr | ~ip4_mask(plen), 32, addr, addr_makes_broadcast);
	routes_del_src(c, INET_ADDR_V4(addr));
	c->gen++;
	return 0;
}

bool netcfg_port_has_addr(const struct netcfg *c, uint16_t port)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		if (c->addrs[i].used && c->addrs[i].port == port)
			return true;
	return false;
}

uint32_t netcfg_source_for(const struct netcfg *c, uint16_t port, uint32_t dst)
{
	uint32_t first = 0;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		const struct netcfg_addr *a = &c->addrs[i];
		if (!a->used || a->port != port)
			continue;
		if (((a->addr ^ dst) & ip4_mask(a->plen)) == 0)
			return a->addr;
		if (first == 0)
			first = a->addr;
	}
	return first;
}

uint32_t netcfg_route_source4(const struct netcfg *c, const struct route *r, uint32_t dst)
{
	uint32_t src = route_src4(r);
	return src != 0 ? src : netcfg_source_for(c, r->port, dst);
}

/* A user's route at prefix/plen is gone: the route an address makes there, which it kept
 * out (addr_route_add), comes back; in Linux it was there all along, behind the user's. */
void netcfg4_addr_route_restore(struct netcfg *c, uint32_t prefix, uint8_t plen)
{
	const struct netcfg_addr *a =
		route_maker(c, NETCFG_PORT_ANY, prefix, plen, addr_makes_connected);
	enum route_type type = ROUTE_CONNECTED;
	if (a == NULL) {
		a = route_maker(c, NETCFG_PORT_ANY, prefix, plen, addr_makes_broadcast);
		type = ROUTE_BROADCAST;
	}
	if (a != NULL) /* cannot fail: it takes the entry just freed */
		(void)addr_route_add(c, type, prefix, plen, a->port, a->addr);
}

