/* The IPv4 routing table: longest-prefix match through rte_lpm, whose 24-bit next-hop value is
 * an index into our own array of route entries. Like Linux's local and main tables in one:
 * LOCAL (/32, an address of ours) and BROADCAST (/32, a subnet's broadcast address) entries
 * come from addresses, CONNECTED entries from address prefixes, GATEWAY entries from
 * `ip route add ... via`. One table per worker (lookups without locks) and one master copy in
 * the control thread, changed by the same calls in the same order. */
#ifndef DPS_STACK_ROUTE_H
#define DPS_STACK_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

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
	uint32_t prefix;        /* host order, host bits zero */
	uint8_t plen;
	enum route_type type;
	uint16_t port;          /* output port (LOCAL/BROADCAST: the address's port) */
	uint32_t gateway;       /* GATEWAY only */
	uint32_t src;           /* preferred source address; 0 = choose from the port */
	uint16_t mtu;           /* 0 = the port's MTU */
	bool from_addr;         /* made for the address src (Linux's "proto kernel"): it
				 * passes to another address that makes the same route when
				 * src goes, and goes with the last one (netcfg.c) */
	bool synced;            /* mirrors a route of a port's kernel interface (the kernel
				 * sync, src/ctl/kernel_sync.h), not made by a user */
	uint8_t proto;          /* synced: the kernel route's rtm_protocol (bird, static...) */
};

#define ROUTE_MAX 4096

struct route_table;

/* name must be unique in the process (it names the rte_lpm). Returns NULL with rte_errno set. */
struct route_table *route_table_create(const char *name, int socket_id);
void route_table_destroy(struct route_table *t);

/* Adds r. Returns 0, -EEXIST when the same prefix/plen is present, -ENOSPC when full, -EINVAL
 * for host bits set or plen > 32. */
int route_add(struct route_table *t, const struct route *r);
/* Deletes the route with exactly this prefix/plen; when type_mask is non-zero only routes
 * whose (1 << type) is in the mask (so `ip route del` cannot remove LOCAL entries).
 * Returns 0, -ENOENT, or -EINVAL for host bits set or plen > 32. */
int route_del(struct route_table *t, uint32_t prefix, uint8_t plen, unsigned type_mask);
/* Longest-prefix match; NULL when no route covers dst. The pointer is valid until the next
 * change of the table. */
const struct route *route_lookup(const struct route_table *t, uint32_t dst);
/* Exact match; NULL also for host bits set or plen > 32. */
const struct route *route_find(const struct route_table *t, uint32_t prefix, uint8_t plen);
/* Calls fn for every route in index order; stops when fn returns non-zero and returns it. */
int route_walk(const struct route_table *t, int (*fn)(const struct route *, void *), void *arg);

#endif
