/* The IPv6 half of a netcfg: addresses of ports and the routes they and users make.
 * Link-local addresses (fe80::/10) are scoped to their port (RFC 4291 §2.5.6): the same one
 * may sit on two ports, they make no route (a link-local destination is resolved on the
 * port it concerns), and they are chosen as sources only for link-local destinations
 * (RFC 6724 §5 rule 2). */
#ifndef DPS_STACK_NETCFG6_H
#define DPS_STACK_NETCFG6_H

#include "netcfg.h"
#include "wire/inet_addr.h"

/* fe80::/64 with the modified EUI-64 interface identifier of mac (ip6_set_eui64); SLAAC
 * forms its addresses with the same identifier (src/addrconf). */
struct ip6_addr netcfg6_link_local(const struct eth_addr *mac);

/* Adds addr/plen on port with, for a global address, its LOCAL /128 route and its
 * CONNECTED prefix route (plen < 128) where no route of that prefix exists. Returns 0,
 * -ENODEV, -EINVAL (multicast, unspecified, loopback, IPv4-mapped, plen 0 or > 128),
 * -EEXIST (on that port already; a global address on any port), -ENOSPC. On error nothing
 * changed. */
int netcfg6_addr_add(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
		     uint8_t plen, uint8_t flags);
/* Removes it and the routes it made; a prefix route passes to another address of the same
 * prefix while one remains. Returns 0 or -EADDRNOTAVAIL. */
int netcfg6_addr_del(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
		     uint8_t plen);
/* Our address addr as seen on port: a link-local one only on that port, a global one on
 * any (the weak host model, as for IPv4). NULL when it is not ours, or not yet (tentative)
 * or never (dadfailed): RFC 4862 §5.4. */
const struct netcfg_addr6 *netcfg6_local(const struct netcfg *c, uint16_t port,
					 const struct ip6_addr *addr);
/* As netcfg6_local, in every state (tentative and dadfailed included). */
const struct netcfg_addr6 *netcfg6_find(const struct netcfg *c, uint16_t port,
					const struct ip6_addr *addr);
/* Sets and clears NETCFG6_* flags of addr on port. Returns 0 or -EADDRNOTAVAIL. */
int netcfg6_addr_set_flags(struct netcfg *c, uint16_t port, const struct ip6_addr *addr,
			   uint8_t set, uint8_t clear);
/* Either family: one of our addresses (IPv4 as netcfg_addr_is_local says; IPv6 as
 * netcfg6_local on scope, the port a link-local address belongs to). */
bool netcfg_inet_is_local(const struct netcfg *c, const struct inet_addr *a, uint16_t scope);
/* True when group is a multicast group port listens to: all-nodes (ff02::1) or the
 * solicited-node group of one of its addresses, tentative ones included (RFC 4291 §2.8,
 * RFC 4862 §5.4.2: joined before Duplicate Address Detection starts). */
bool netcfg6_listens(const struct netcfg *c, uint16_t port, const struct ip6_addr *group);
/* The source for a datagram to dst out of port (RFC 6724 §5, the rules that apply with one
 * address per scope: same scope first, then non-deprecated, then the longest common
 * prefix), never a tentative or dadfailed address. False when the port has no address to
 * send from. */
bool netcfg6_source_for(const struct netcfg *c, uint16_t port, const struct ip6_addr *dst,
			struct ip6_addr *src);

#endif
