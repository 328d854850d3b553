#include "netcfg.h"

#include <errno.h>
#include <string.h>

#include <rte_errno.h>

#include "../wire/ipv4.h"

int netcfg_init(struct netcfg *c, const char *name, int socket_id)
{
	memset(c, 0, sizeof(*c));
	c->forwarding = true;
	c->gen = 1;
	c->routes = route_table_create(name, socket_id);
	return c->routes == NULL ? -rte_errno : 0;
}

void netcfg_fini(struct netcfg *c)
{
	route_table_destroy(c->routes);
	c->routes = NULL;
}

static bool port_valid(const struct netcfg *c, uint16_t port)
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
	return 0;
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
	if (!port_valid(c, port))
		return -ENODEV;
	if (mtu < NETCFG_MIN_MTU || mtu > NETCFG_MAX_MTU)
		return -EINVAL;
	c->ifaces[port].mtu = mtu;
	c->gen++;
	return 0;
}

int netcfg_iface_set_up(struct netcfg *c, uint16_t port, bool up)
{
	if (!port_valid(c, port))
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

int netcfg_addr_add(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen)
{
	if (!port_valid(c, port))
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

	struct route local = {.prefix = addr, .plen = 32, .type = ROUTE_LOCAL, .port = port,
			      .src = addr};
	int rc = route_add(c->routes, &local);
	if (rc < 0)
		return rc;
	uint32_t net = addr & ip4_mask(plen);
	uint32_t bcast = net | ~ip4_mask(plen);
	bool added_bcast = false, added_conn = false;
	if (plen < 31 && route_find(c->routes, bcast, 32) == NULL) {
		struct route b = {.prefix = bcast, .plen = 32, .type = ROUTE_BROADCAST,
				  .port = port, .src = addr};
		rc = route_add(c->routes, &b);
		if (rc < 0)
			goto undo;
		added_bcast = true;
	}
	if (plen < 32 && route_find(c->routes, net, plen) == NULL) {
		struct route conn = {.prefix = net, .plen = plen, .type = ROUTE_CONNECTED,
				     .port = port, .src = addr};
		rc = route_add(c->routes, &conn);
		if (rc < 0)
			goto undo;
		added_conn = true;
	}
	*slot = (struct netcfg_addr){.used = true, .port = port, .addr = addr, .plen = plen};
	c->gen++;
	return 0;
undo:
	if (added_bcast)
		route_del(c->routes, bcast, 32, 0);
	if (added_conn)
		route_del(c->routes, net, plen, 0);
	route_del(c->routes, addr, 32, 0);
	return rc;
}

/* An address left on port with the prefix net/plen, or NULL. */
static const struct netcfg_addr *prefix_user(const struct netcfg *c, uint16_t port,
					     uint32_t net, uint8_t plen)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		const struct netcfg_addr *a = &c->addrs[i];
		if (a->used && a->port == port && a->plen == plen &&
		    (a->addr & ip4_mask(plen)) == net)
			return a;
	}
	return NULL;
}

/* An address left whose subnet has the broadcast address bcast (prefixes of different
 * lengths may share one: 10.0.0.2/24 and 10.0.0.130/25), or NULL. */
static const struct netcfg_addr *bcast_user(const struct netcfg *c, uint32_t bcast)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		const struct netcfg_addr *a = &c->addrs[i];
		if (a->used && a->plen < 31 && (a->addr | ~ip4_mask(a->plen)) == bcast)
			return a;
	}
	return NULL;
}

/* The route prefix/plen of type outlives the address old it was made for: when it still
 * names old as its source, it now belongs to a (so nothing is sent from an address that is
 * no longer ours). */
static void route_rehome(struct netcfg *c, uint32_t prefix, uint8_t plen, enum route_type type,
			 uint32_t old, const struct netcfg_addr *a)
{
	const struct route *r = route_find(c->routes, prefix, plen);
	if (r == NULL || r->type != type || r->src != old)
		return;
	struct route nr = *r;
	nr.src = a->addr;
	nr.port = a->port;
	route_del(c->routes, prefix, plen, 0);
	(void)route_add(c->routes, &nr); /* cannot fail: it takes the entry just freed */
}

int netcfg_addr_del(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen)
{
	struct netcfg_addr *a = addr_find(c, port, addr);
	if (a == NULL || a->plen != plen)
		return -EADDRNOTAVAIL;
	a->used = false;
	route_del(c->routes, addr, 32, 1u << ROUTE_LOCAL);
	if (plen < 32) {
		uint32_t net = addr & ip4_mask(plen);
		const struct netcfg_addr *u = prefix_user(c, port, net, plen);
		if (u == NULL)
			route_del(c->routes, net, plen, 1u << ROUTE_CONNECTED);
		else
			route_rehome(c, net, plen, ROUTE_CONNECTED, addr, u);
	}
	if (plen < 31) {
		uint32_t bcast = addr | ~ip4_mask(plen);
		const struct netcfg_addr *u = bcast_user(c, bcast);
		if (u == NULL)
			route_del(c->routes, bcast, 32, 1u << ROUTE_BROADCAST);
		else
			route_rehome(c, bcast, 32, ROUTE_BROADCAST, addr, u);
	}
	c->gen++;
	return 0;
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

int netcfg_route_add(struct netcfg *c, const struct route *r)
{
	struct route nr = *r;
	if (nr.plen > 32 || (nr.prefix & ~ip4_mask(nr.plen)) != 0)
		return -EINVAL;
	switch (nr.type) {
	case ROUTE_GATEWAY: {
		const struct route *via = route_lookup(c->routes, nr.gateway);
		if (via == NULL || via->type != ROUTE_CONNECTED)
			return -ENETUNREACH;
		if (nr.port == NETCFG_PORT_ANY)
			nr.port = via->port;
		else if (nr.port != via->port)
			return -ENETUNREACH;
		break;
	}
	case ROUTE_CONNECTED:
		if (!port_valid(c, nr.port))
			return -ENODEV;
		break;
	case ROUTE_BLACKHOLE:
	case ROUTE_UNREACHABLE:
		nr.port = 0;
		break;
	default:
		return -EINVAL;
	}
	if (!port_valid(c, nr.port) && nr.type != ROUTE_BLACKHOLE && nr.type != ROUTE_UNREACHABLE)
		return -ENODEV;
	if (nr.mtu != 0 && (nr.mtu < NETCFG_MIN_MTU || nr.mtu > NETCFG_MAX_MTU))
		return -EINVAL;
	return route_add(c->routes, &nr);
}

int netcfg_route_del(struct netcfg *c, uint32_t prefix, uint8_t plen)
{
	unsigned mask = 1u << ROUTE_GATEWAY | 1u << ROUTE_CONNECTED | 1u << ROUTE_BLACKHOLE |
			1u << ROUTE_UNREACHABLE;
	return route_del(c->routes, prefix, plen, mask) == 0 ? 0 : -ESRCH;
}

uint16_t netcfg_route_mtu(const struct netcfg *c, const struct route *r)
{
	uint16_t port_mtu = r->port < NETCFG_MAX_PORTS ? c->ifaces[r->port].mtu : 0;
	if (r->mtu != 0 && (port_mtu == 0 || r->mtu < port_mtu))
		return r->mtu;
	return port_mtu;
}
