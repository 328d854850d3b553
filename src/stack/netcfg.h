/* The network configuration one stack instance works from: interfaces, addresses and routes.
 * The control thread keeps a master copy (validation and `show`), and every worker holds its
 * own copy changed by the same calls, run on the worker through its mailbox (DESIGN.md:
 * per-worker copies fed by messages, no locks on the packet path). */
#ifndef DPS_STACK_NETCFG_H
#define DPS_STACK_NETCFG_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/eth.h"
#include "route.h"

#define NETCFG_MAX_PORTS 16
#define NETCFG_MAX_ADDRS 256
#define NETCFG_NAME_LEN 32
#define NETCFG_MIN_MTU 68      /* RFC 791: every host must accept 68-byte datagrams */
#define NETCFG_MAX_MTU 9600

struct netcfg_iface {
	bool present;
	bool up;
	char name[NETCFG_NAME_LEN];
	struct eth_addr mac;
	uint16_t mtu;
};

struct netcfg_addr {
	bool used;
	uint16_t port;
	uint32_t addr;     /* host order */
	uint8_t plen;
	bool synced;       /* mirrors an address of the port's kernel interface (the kernel
			    * sync, src/ctl/kernel_sync.h), not set by a user */
};

/* An IPv6 address of a port (netcfg6.h). */
#define NETCFG6_AUTO 0x1        /* made by the stack (link-local from the MAC), not a user */
#define NETCFG6_SYNCED 0x2      /* mirrors an address of the port's kernel interface */
/* Duplicate Address Detection (RFC 4862 §5.4): until it ends, an address is tentative and not
 * ours (not a source, not answered for, datagrams to it dropped, §5.4); when another node
 * holds it, it stays marked dadfailed and is never used. */
#define NETCFG6_TENTATIVE 0x4
#define NETCFG6_DADFAILED 0x8
#define NETCFG6_DEPRECATED 0x10 /* preferred lifetime over (§5.5.4): no source for new traffic */
#define NETCFG6_SLAAC 0x20      /* formed from a Router Advertisement's prefix (§5.5.3) */
#define NETCFG6_UNUSABLE (NETCFG6_TENTATIVE | NETCFG6_DADFAILED)

struct netcfg_addr6 {
	bool used;
	uint16_t port;
	struct ip6_addr addr;
	uint8_t plen;
	uint8_t flags;     /* NETCFG6_* */
};

#define NETCFG_MAX_ADDRS6 256

struct netcfg {
	struct netcfg_iface ifaces[NETCFG_MAX_PORTS];
	struct netcfg_addr addrs[NETCFG_MAX_ADDRS];
	struct route_table *routes;  /* both families' (route.h) */
	struct netcfg_addr6 addrs6[NETCFG_MAX_ADDRS6];
	bool forwarding;   /* act as an IPv4 router between ports (on by default) */
	bool forwarding6;  /* act as an IPv6 router (off by default, as Linux's
			    * net.ipv6.conf.all.forwarding: ip -6 forwarding on) */
	uint32_t gen;      /* changes with every change of interfaces or addresses, never 0 */
};

/* The interface index applications see (IP_PKTINFO, SIOCGIFINDEX, `link show`): the port
 * plus one, since Linux keeps index 0 for "no interface". */
static inline unsigned netcfg_ifindex(uint16_t port)
{
	return port + 1u;
}

/* With a route table for max_routes routes (route_table_create). Returns 0 or -errno. */
int netcfg_init(struct netcfg *c, uint32_t max_routes);
void netcfg_fini(struct netcfg *c);

/* Registers port, with its IPv6 link-local address from the MAC (netcfg6.h) as Linux gives
 * one to every Ethernet interface. Returns 0, -EINVAL (bad index, name or MTU) or -EEXIST. */
int netcfg_iface_add(struct netcfg *c, uint16_t port, const char *name,
		     const struct eth_addr *mac, uint16_t mtu);
/* The port of that name, or -ENODEV. */
int netcfg_iface_by_name(const struct netcfg *c, const char *name);
int netcfg_iface_set_mtu(struct netcfg *c, uint16_t port, uint16_t mtu);
int netcfg_iface_set_up(struct netcfg *c, uint16_t port, bool up);

/* Adds addr/plen on port with its LOCAL, BROADCAST (plen < 31) and CONNECTED (plen < 32)
 * routes, the last two only where no route of their prefix exists: another address's (on
 * any port), which serves both, or a user's, which comes first. Returns 0, -EEXIST (the
 * address is configured already), -ENODEV, -EINVAL (multicast, broadcast, zero-net,
 * loopback, host part all zeros or all ones), -ENOSPC. On error nothing changed. */
int netcfg_addr_add(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen);
/* Removes it and its LOCAL route. A CONNECTED or BROADCAST route it held stays while
 * another address (on any port, this one first) makes the same route, and takes that
 * address as its port and source; it goes with the last such address. User routes whose
 * source was addr go too (Linux fib_sync_down_addr). Returns 0 or -EADDRNOTAVAIL. */
int netcfg_addr_del(struct netcfg *c, uint16_t port, uint32_t addr, uint8_t plen);
/* True when port has an address. */
bool netcfg_port_has_addr(const struct netcfg *c, uint16_t port);
/* The address configured on port in the same subnet as dst, else the port's first address,
 * else 0: the source for packets we originate (RFC 1122 §3.3.4.3). */
uint32_t netcfg_source_for(const struct netcfg *c, uint16_t port, uint32_t dst);
/* The source for packets to dst by route r (IPv4): the route's own, else
 * netcfg_source_for its port. */
uint32_t netcfg_route_source4(const struct netcfg *c, const struct route *r, uint32_t dst);
/* True when addr is one of ours (any port). */
bool netcfg_addr_is_local(const struct netcfg *c, uint32_t addr);

/* Adds a user route of either family (netcfg_route.c): GATEWAY with a gateway of the
 * prefix's family, CONNECTED with a port, BLACKHOLE or UNREACHABLE. A gateway must be
 * reachable through a CONNECTED route (when port is NETCFG_PORT_ANY it is taken from that
 * route), or be an IPv6 link-local address with its port given. Returns 0, -EEXIST,
 * -ENETUNREACH (gateway not on a connected subnet), -ENODEV, -EINVAL (bad prefix, type,
 * gateway family or MTU: 68 for IPv4, 1280 for IPv6, RFC 8200 §5), -ENOSPC. */
#define NETCFG_PORT_ANY UINT16_MAX
int netcfg_route_add(struct netcfg *c, const struct route *r);
/* Deletes a GATEWAY, CONNECTED, BLACKHOLE or UNREACHABLE route (as iproute2 can delete a
 * connected route); LOCAL and BROADCAST entries go only with their address. When a user's
 * route goes, the route an address makes at that prefix takes its place.
 * Returns 0 or -ESRCH. */
int netcfg_route_del(struct netcfg *c, const struct inet_addr *prefix, uint8_t plen);

/* The MTU to use for a route: its own or its port's. */
uint16_t netcfg_route_mtu(const struct netcfg *c, const struct route *r);

#endif
