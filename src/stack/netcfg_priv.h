/* What the parts of a netcfg (netcfg.c for IPv4 addresses, netcfg6.c for IPv6 ones,
 * netcfg_route.c for user routes of both families) share, and nothing else sees. */
#ifndef DPS_STACK_NETCFG_PRIV_H
#define DPS_STACK_NETCFG_PRIV_H

#include "netcfg.h"

/* True when port is a registered interface. */
bool netcfg_port_valid(const struct netcfg *c, uint16_t port);

/* A user's route at prefix/plen is gone: the route an address of that family makes there,
 * which the user's kept out, comes back (in Linux it was there all along, behind the
 * user's). */
void netcfg4_addr_route_restore(struct netcfg *c, uint32_t prefix, uint8_t plen);
void netcfg6_addr_route_restore(struct netcfg *c, const struct ip6_addr *prefix, uint8_t plen);

#endif
