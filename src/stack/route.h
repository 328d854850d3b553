/* The routing table of both families, like Linux's local and main tables in one: LOCAL (an
 * address of ours), BROADCAST (an IPv4 subnet's broadcast address; IPv6 has none, RFC 4291
 * §2) and CONNECTED entries come from addresses, GATEWAY, BLACKHOLE and UNREACHABLE ones
 * from `ip route add`. Routes are keyed by struct inet_addr, an IPv4 prefix as its mapped
 * form ::ffff:a.b.c.d with its own prefix length (0..32), so the family of a route is the
 * family of its prefix and an IPv4 lookup never meets an IPv6 route.
 *
 * Longest-prefix match probes one open-addressing hash of (prefix, length) once per prefix
 * length in use in the destination's family, longest first: a host or an edge router
 * holds a handful of lengths (/32 and /128 for its addresses, the subnets, the default),
 * so a lookup is a few probes, and the table costs memory in proportion to its size
 * (`routes N`: about 80 bytes a route), where rte_lpm's DIR-24-8 first level costs 64 MB
 * per copy whatever it holds (README "Small footprint"). One table per worker (lookups
 * without locks) and one master copy in the control thread, changed by the same calls in
 * the same order. */
#ifndef DPS_STACK_ROUTE_H
#define DPS_STACK_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/inet_addr.h"

#define ROUTE_TYPE_LIST(X) \
	X(LOCAL,     "local") \
	X(BROADCAST, "broadcast") \
	X(CONNECTED, "connected") \
	X(GATEWAY,   "gateway") \
	X(BLACKHOLE, "blackhole") \
	X(UNREACHABLE, "unreachable")

enum route_type {
#define ROUTE_TYPE_ENUM(id, name) ROUTE_##id,
	ROUTE_TYPE_LIST(ROUTE_TYPE_ENUM)
#undef ROUTE_TYPE_ENUM
	ROUTE_TYPE_COUNT
};

const char *route_type_str(enum route_type t);

struct route {
	struct inet_addr prefix; /* host bits zero; IPv4 in its mapped form */
	uint8_t plen;            /* within the family: 0..32 for IPv4, 0..128 for IPv6 */
	enum route_type type;
	uint16_t port;           /* output port (LOCAL/BROADCAST: the address's port) */
	struct inet_addr gateway;/* GATEWAY only, the prefix's family; an IPv6 link-local one
				  * needs its port */
	struct inet_addr src;    /* preferred source address; all zeros (::) = choose from
				  * the port (an IPv4 route's then reads as 0.0.0.0) */
	uint16_t mtu;            /* 0 = the port's MTU */
	bool from_addr;          /* made for the address src (Linux's "proto kernel"): it
				  * passes to another address that makes the same route when
				  * src goes, and goes with the last one (netcfg.c) */
	bool synced;             /* mirrors a route of a port's kernel interface (the kernel
				  * sync, src/ctl/kernel_sync.h), not made by a user */
	uint8_t proto;           /* synced: the kernel route's rtm_protocol (bird, static...);
				  * RTPROT_RA for a Router Advertisement's (addrconf_run.c) */
};

/* `routes N`: routes of both families each table holds (the master and every worker's). */
#define ROUTE_MAX_DEFAULT 4096
#define ROUTE_MAX_MIN 64          /* a few addresses' LOCAL, BROADCAST, CONNECTED routes */
#define ROUTE_MAX_LIMIT (1u << 22)

struct route_table;

/* A table for max routes (ROUTE_MAX_MIN..ROUTE_MAX_LIMIT), in plain memory. NULL with
 * rte_errno set: EINVAL for max out of range, ENOMEM. */
struct route_table *route_table_create(uint32_t max);
void route_table_destroy(struct route_table *t);
/* Routes the table holds, and may hold. */
uint32_t route_count(const struct route_table *t);
uint32_t route_capacity(const struct route_table *t);

/* True when prefix/plen is a valid key: plen within its family, host bits zero. */
bool route_prefix_valid(const struct inet_addr *prefix, uint8_t plen);

/* Adds r. Returns 0, -EEXIST when the same prefix/plen is present, -ENOSPC when full, -EINVAL
 * for an invalid prefix (route_prefix_valid), an unknown type or an IPv6 BROADCAST. */
int route_add(struct route_table *t, const struct route *r);
/* Deletes the route with exactly this prefix/plen; when type_mask is non-zero only a route
 * whose (1 << type) is in the mask (so `ip route del` cannot remove LOCAL entries).
 * Returns 0, -ENOENT, or -EINVAL for an invalid prefix. */
int route_del(struct route_table *t, const struct inet_addr *prefix, uint8_t plen,
	      unsigned type_mask);
/* Longest-prefix match in dst's family; NULL when no route covers dst. The pointer is valid
 * until the next change of the table. */
const struct route *route_lookup(const struct route_table *t, const struct inet_addr *dst);
/* The same for an IPv4 destination in host order, or an IPv6 one (NULL for an IPv4-mapped
 * address: an IPv6 packet cannot go there, RFC 4291 §2.5.5.2): the packet paths'. */
const struct route *route_lookup4(const struct route_table *t, uint32_t dst);
const struct route *route_lookup6(const struct route_table *t, const struct ip6_addr *dst);
/* Exact match; NULL also for an invalid prefix. */
const struct route *route_find(const struct route_table *t, const struct inet_addr *prefix,
			       uint8_t plen);
/* Calls fn for every route in index order; stops when fn returns non-zero and returns it. */
int route_walk(const struct route_table *t, int (*fn)(const struct route *, void *), void *arg);

/* What a router does with a transit packet whose destination's route is r (NULL: none),
 * in either family: send it on, answer it with "no route" (no route, or an unreachable
 * one: RFC 1812 §5.2.7.1, RFC 4443 §3.1 code 0), or drop it without a word (a blackhole,
 * as Linux's). */
enum route_transit { ROUTE_TRANSIT_SEND, ROUTE_TRANSIT_UNREACHABLE, ROUTE_TRANSIT_SILENT };

static inline enum route_transit route_transit(const struct route *r)
{
	if (r == NULL || r->type == ROUTE_UNREACHABLE)
		return ROUTE_TRANSIT_UNREACHABLE;
	return r->type == ROUTE_BLACKHOLE ? ROUTE_TRANSIT_SILENT : ROUTE_TRANSIT_SEND;
}

/* An IPv4 route's gateway and preferred source in host order (0: none). */
static inline uint32_t route_gateway4(const struct route *r)
{
	return inet_addr_to_v4(&r->gateway);
}

static inline uint32_t route_src4(const struct route *r)
{
	return inet_addr_to_v4(&r->src);
}

/* True when r has a preferred source (either family's "none" is all zeros in its bytes). */
static inline bool route_src_set(const struct route *r)
{
	static const struct inet_addr none;
	return inet_addr_is_v4(&r->prefix) ? route_src4(r) != 0 : !inet_addr_equal(&r->src, &none);
}

static inline bool route_is_v4(const struct route *r)
{
	return inet_addr_is_v4(&r->prefix);
}

/* The prefix length of a route to one host: 32 or 128. */
static inline uint8_t route_host_plen(const struct inet_addr *prefix)
{
	return inet_addr_is_v4(prefix) ? 32 : 128;
}

#endif
