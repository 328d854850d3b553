/* The IPv6 routing table, with route.h's route types (no BROADCAST: IPv6 has none, RFC 4291
 * §2). Longest-prefix match probes one hash table keyed by (prefix, length) once per prefix
 * length in use, longest first: a host or edge router holds a handful of lengths (/128 for
 * its addresses, /64, /48, the default), so that is a few probes, and the table costs tens
 * of kilobytes where rte_lpm6's fixed 2^24-entry first level costs 64 MiB per copy (one per
 * worker and the master). LOCAL /128 entries and CONNECTED prefixes come from
 * addresses, GATEWAY entries from `ip route add ... via`. One table per worker and a master
 * copy in the control thread, changed by the same calls in the same order. */
#ifndef DPS_STACK_ROUTE6_H
#define DPS_STACK_ROUTE6_H

#include <stdbool.h>
#include <stdint.h>

#include "route.h"
#include "wire/ipv6.h"

struct route6 {
	struct ip6_addr prefix;  /* host bits zero */
	uint8_t plen;
	enum route_type type;
	uint16_t port;           /* output port (LOCAL: the address's port) */
	struct ip6_addr gateway; /* GATEWAY only; a link-local gateway needs its port */
	struct ip6_addr src;     /* preferred source; :: = choose (RFC 6724) */
	uint16_t mtu;            /* 0 = the port's MTU */
	bool from_addr;          /* made by an address (iproute2's "proto kernel") */
	bool synced;             /* mirrors a kernel route (route.h) */
	uint8_t proto;           /* synced: its rtm_protocol */
};

#define ROUTE6_MAX 1024

struct route6_table;

/* NULL with rte_errno set. */
struct route6_table *route6_table_create(void);
void route6_table_destroy(struct route6_table *t);

/* Adds r. Returns 0, -EEXIST (same prefix/plen present), -ENOSPC (full), -EINVAL (host bits
 * set, plen > 128, a type IPv6 has not). */
int route6_add(struct route6_table *t, const struct route6 *r);
/* Deletes exactly prefix/plen; when type_mask is non-zero only a route whose (1 << type) is
 * in it. Returns 0, -ENOENT or -EINVAL. */
int route6_del(struct route6_table *t, const struct ip6_addr *prefix, uint8_t plen,
	       unsigned type_mask);
/* Longest-prefix match, or NULL. Valid until the next change of the table. */
const struct route6 *route6_lookup(const struct route6_table *t, const struct ip6_addr *dst);
/* Exact match, or NULL. */
const struct route6 *route6_find(const struct route6_table *t, const struct ip6_addr *prefix,
				 uint8_t plen);
/* Calls fn for every route in index order; stops at fn's first non-zero and returns it. */
int route6_walk(const struct route6_table *t, int (*fn)(const struct route6 *, void *),
		void *arg);

#endif
