/* The kernel sync (`sync on`): addresses and routes configured on the ports' kernel
 * interfaces (by `ip`, a DHCP client, a routing daemon such as BIRD) mirrored into the
 * stack, removals too, as they happen.
 *
 * An rtnetlink listener in the control thread (its socket sits in the control loop's poll
 * set) hears the kernel's address and route news (RTMGRP_IPV4/IPV6_IFADDR, _ROUTE, LINK)
 * and changes the stack through the calls `ip addr add|del` and `ip route add|del` make
 * (the master copy, then every worker's): it knows no route-table internals. What it
 * mirrors:
 *  - addresses of a kernel interface, on its port, once the kernel finished Duplicate
 *    Address Detection (not while tentative); IPv6 link-local ones stay the stack's own
 *    (the same MAC gives the same address);
 *  - routes of the main table whose output interface is a port's kernel interface, but the
 *    kernel's own (`proto kernel`: what its addresses make, which the mirrored addresses
 *    make in the stack too). A gateway route becomes `via GW dev PORT`, a device route
 *    `dev PORT`; prefsrc, MTU and the kernel route's protocol (bird, static, dhcp, ra...)
 *    go with it; of several routes to one prefix (metrics) the lowest metric is mirrored,
 *    and a better one replaces it on each worker in one step, so forwarding never sees the
 *    prefix missing. Multipath routes mirror their first hop on a kernel interface.
 * What the stack's user configured wins: an address or route already there (a user's, or
 * an address's connected route) is left alone, counted as a conflict, and never removed by
 * the sync; only what the sync added (`synced` in `ip addr show`, `proto NAME` in `ip route
 * show`) goes when the kernel removes it. The stack never writes its configuration to the
 * kernel, so nothing it sets comes back as news: there is no loop to break.
 * The kernel does not announce every removal (IPv4 routes flushed when an interface goes
 * down or loses an address), and a listener that fell behind loses news (ENOBUFS): after
 * those, and at `sync on`, the sync rereads the kernel's tables and removes what it
 * mirrored and the kernel no longer has. `sync off` stops listening and leaves what was
 * mirrored; `sync on` again reconciles. The kernel interfaces must be in dpstackd's network
 * namespace. */
#ifndef DPS_CTL_KERNEL_SYNC_H
#define DPS_CTL_KERNEL_SYNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stack/netcfg.h"

#define KERNEL_SYNC_COUNTER_LIST(X) \
	X(events,          "rtnetlink messages read") \
	X(addrs_added,     "addresses mirrored into the stack") \
	X(addrs_removed,   "mirrored addresses removed") \
	X(routes_added,    "routes mirrored into the stack") \
	X(routes_replaced, "mirrored routes replaced by a better or changed kernel route") \
	X(routes_removed,  "mirrored routes removed") \
	X(refused,         "kernel addresses or routes the stack refused (see the log)") \
	X(conflicts,       "kernel addresses or routes left out: the stack's user has one there") \
	X(resyncs,         "rereads of the kernel's tables") \
	X(overruns,        "times the listener fell behind (ENOBUFS) and reread")

struct kernel_sync_counters {
#define KERNEL_SYNC_FIELD(name, text) uint64_t name;
	KERNEL_SYNC_COUNTER_LIST(KERNEL_SYNC_FIELD)
#undef KERNEL_SYNC_FIELD
};

struct sync_route;

struct kernel_sync {
	int fd;                            /* the listener; -1 when off */
	int req_fd;                        /* for dumps; -1 when off */
	bool resync;                       /* a reread is due after this batch of news */
	unsigned ifindex[NETCFG_MAX_PORTS]; /* each port's kernel interface here; 0: none */
	struct sync_route *routes;         /* the kernel's routes on those interfaces */
	unsigned nb_routes, cap_routes;
	struct kernel_sync_counters c;
	char last_refused[192];
};

struct daemon;

static inline void kernel_sync_init(struct kernel_sync *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = s->req_fd = -1;
}
/* Starts listening and mirrors what the kernel has now (again, when it was on). Returns 0
 * or -errno with a message in err. */
int kernel_sync_start(struct daemon *d, char *err, size_t errlen);
/* Stops listening; what was mirrored stays. */
void kernel_sync_stop(struct daemon *d);
/* Reads and applies the news waiting on kernel_sync.fd. */
void kernel_sync_input(struct daemon *d);

#endif
