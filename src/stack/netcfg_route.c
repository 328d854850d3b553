/* User routes of both families (`ip route add|del`, `ip -6 route add|del`): the checks a
 * route must pass before it enters the table, the same for IPv4 and IPv6 but for the
 * gateway's scope and the least MTU, and what comes back when one goes. */
#include <errno.h>

#include "netcfg_priv.h"

#include "wire/ipv4.h"

/* A gateway must be a neighbour: on a CONNECTED route (its port then comes from that route,
 * or must be that route's), or an IPv6 link-local address with its port given, since
 * such an address means nothing without its link (RFC 4291 §2.5.6). */
static int gateway_check(const struct netcfg *c, struct route *r)
{
	if (inet_addr_is_v4(&r->gateway) != route_is_v4(r))
		return -EINVAL;
	if (!route_is_v4(r)) {
		struct ip6_addr gw = inet_addr_to_v6(&r->gateway);
		if (ip6_is_link_local(&gw)) {
			if (!netcfg_port_valid(c, r->port))
				return r->port == NETCFG_PORT_ANY ? -ENETUNREACH : -ENODEV;
			return 0;
		}
	}
	const struct route *via = route_lookup(c->routes, &r->gateway);
	if (via == NULL || via->type != ROUTE_CONNECTED)
		return -ENETUNREACH;
	if (r->port == NETCFG_PORT_ANY)
		r->port = via->port;
	else if (r->port != via->port)
		return -ENETUNREACH;
	return 0;
}

int netcfg_route_add(struct netcfg *c, const struct route *r)
{
	struct route nr = *r;
	nr.from_addr = false;
	if (!route_prefix_valid(&nr.prefix, nr.plen))
		return -EINVAL;
	int rc = 0;
	switch (nr.type) {
	case ROUTE_GATEWAY:
		rc = gateway_check(c, &nr);
		break;
	case ROUTE_CONNECTED:
		rc = netcfg_port_valid(c, nr.port) ? 0 : -ENODEV;
		break;
	case ROUTE_BLACKHOLE:
	case ROUTE_UNREACHABLE:
		nr.port = 0;
		break;
	default:
		return -EINVAL;
	}
	if (rc < 0)
		return rc;
	uint16_t min_mtu = route_is_v4(&nr) ? NETCFG_MIN_MTU : IP6_MIN_MTU;
	if (nr.mtu != 0 && (nr.mtu < min_mtu || nr.mtu > NETCFG_MAX_MTU))
		return -EINVAL;
	return route_add(c->routes, &nr);
}

int netcfg_route_del(struct netcfg *c, const struct inet_addr *prefix, uint8_t plen)
{
	unsigned mask = 1u << ROUTE_GATEWAY | 1u << ROUTE_CONNECTED | 1u << ROUTE_BLACKHOLE |
			1u << ROUTE_UNREACHABLE;
	const struct route *r = route_find(c->routes, prefix, plen);
	bool users = r != NULL && !r->from_addr;
	if (route_del(c->routes, prefix, plen, mask) != 0)
		return -ESRCH;
	if (!users)
		return 0;
	if (inet_addr_is_v4(prefix)) {
		netcfg4_addr_route_restore(c, inet_addr_to_v4(prefix), plen);
	} else {
		struct ip6_addr p = inet_addr_to_v6(prefix);
		netcfg6_addr_route_restore(c, &p, plen);
	}
	return 0;
}

uint16_t netcfg_route_mtu(const struct netcfg *c, const struct route *r)
{
	uint16_t port_mtu = r->port < NETCFG_MAX_PORTS ? c->ifaces[r->port].mtu : 0;
	if (r->mtu != 0 && (port_mtu == 0 || r->mtu < port_mtu))
		return r->mtu;
	return port_mtu;
}
