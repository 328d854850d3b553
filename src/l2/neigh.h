/* The neighbour cache of one worker: IP address (either family, struct inet_addr) ->
 * Ethernet address per port, with the reachability state machine of RFC 4861 §7.3, which
 * Linux applies to ARP too
 * (INCOMPLETE -> REACHABLE -> STALE -> DELAY -> PROBE -> REACHABLE | FAILED), bounded queues
 * of packets waiting for resolution, rate-limited requests and static entries.
 *
 * Pure logic: no DPDK, no clock of its own, no I/O. Time is passed in (milliseconds, any
 * monotonic origin), requests and queued packets leave through the callbacks in neigh_ops, so
 * the whole state machine runs under unit tests on a virtual clock. Not thread-safe: each
 * worker owns its own table (DESIGN.md: per-worker copies, no locks on the packet path). */
#ifndef DPS_L2_NEIGH_H
#define DPS_L2_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/eth.h"
#include "wire/inet_addr.h"

#define NEIGH_STATE_LIST(X) \
	X(INCOMPLETE, "incomplete") /* request sent, no answer yet; packets queue */ \
	X(REACHABLE,  "reachable")  /* confirmed within reachable_ms */ \
	X(STALE,      "stale")      /* usable, but unconfirmed; first use moves it to DELAY */ \
	X(DELAY,      "delay")      /* used while stale; probe after delay_ms */ \
	X(PROBE,      "probe")      /* unicast requests every retrans_ms */ \
	X(FAILED,     "failed")     /* no answer; packets to it are dropped until failed_hold_ms */ \
	X(STATIC,     "permanent")  /* configured; never changes, never expires */

enum neigh_state {
#define NEIGH_STATE_ENUM(name, text) NEIGH_##name,
	NEIGH_STATE_LIST(NEIGH_STATE_ENUM)
#undef NEIGH_STATE_ENUM
	NEIGH_STATE_COUNT
};

const char *neigh_state_str(enum neigh_state s);

/* Tunables; neigh_params_default() gives Linux's defaults where Linux has one. */
struct neigh_params {
	uint32_t reachable_ms;    /* REACHABLE lifetime after a confirmation: 30000 */
	uint32_t delay_ms;        /* DELAY before the first probe: 5000 */
	uint32_t retrans_ms;      /* between requests in INCOMPLETE and PROBE: 1000 */
	uint32_t mcast_probes;    /* broadcast requests in INCOMPLETE before FAILED: 3 */
	uint32_t ucast_probes;    /* unicast requests in PROBE before FAILED: 3 */
	uint32_t failed_hold_ms;  /* FAILED entries answer "unreachable" this long, then go: 3000 */
	uint32_t gc_stale_ms;     /* STALE entries unused this long are removed: 60000 */
	uint32_t queue_len;       /* packets held per unresolved entry: 8 */
	uint32_t max_entries;     /* table capacity (static entries included): 1024 */
};

/* Bounds of max_entries: the config's `neighbours` takes at least a gateway and a few
 * hosts (a table of one works); at most a million, each entry holding queue_len packet
 * pointers. */
#define NEIGH_MAX_ENTRIES_MIN 8
#define NEIGH_MAX_ENTRIES_LIMIT (1u << 20)

void neigh_params_default(struct neigh_params *p);

struct neigh_table;

/* Changes the timers and probe counts of a live table; they apply from each entry's next
 * transition. queue_len and max_entries size the table and cannot change: -EINVAL if they
 * differ from the table's, or if a timer is 0. */
int neigh_set_params(struct neigh_table *t, const struct neigh_params *p);
void neigh_get_params(const struct neigh_table *t, struct neigh_params *out);

/* Why a packet handed to the table was dropped (through neigh_ops.drop_packet). */
enum neigh_drop {
	NEIGH_DROP_QUEUE_FULL,    /* the entry's queue already held queue_len packets */
	NEIGH_DROP_RESOLVE_FAILED,/* the neighbour did not answer: the entry went INCOMPLETE ->
				   * FAILED with the packet queued, or the entry was FAILED */
	NEIGH_DROP_TABLE_FULL,    /* no room for a new entry */
	NEIGH_DROP_FLUSHED,       /* the entry was deleted or the table destroyed */
};

struct neigh_ops {
	/* Ask for addr's link-layer address out of port (an ARP request, or a Neighbor
	 * Solicitation): to everyone when dst is NULL (INCOMPLETE), to *dst when probing
	 * (PROBE). */
	void (*send_request)(void *ctx, uint16_t port, const struct inet_addr *addr,
			     const struct eth_addr *dst);
	/* A queued packet's neighbour resolved: send it to mac. Ownership passes to the callee. */
	void (*send_packet)(void *ctx, uint16_t port, const struct eth_addr *mac, void *pkt);
	/* A packet cannot be delivered. Ownership passes to the callee (it counts and frees it,
	 * and may answer with ICMP host unreachable for forwarded packets). */
	void (*drop_packet)(void *ctx, void *pkt, enum neigh_drop why);
};

struct neigh_table;

/* Returns NULL on bad params (zero capacity or queue_len 0) or out of memory. The table keeps
 * a copy of params and the ops pointer; ctx is passed to every callback. */
struct neigh_table *neigh_table_create(const struct neigh_params *params,
				       const struct neigh_ops *ops, void *ctx);
/* Drops every queued packet (NEIGH_DROP_FLUSHED) and frees the table. NULL is a no-op. */
void neigh_table_destroy(struct neigh_table *t);

enum neigh_result {
	NEIGH_RESOLVED,   /* *mac is valid: the caller sends pkt itself and keeps ownership */
	NEIGH_QUEUED,     /* the table took pkt; it leaves through send_packet or drop_packet */
	NEIGH_UNREACHABLE,/* FAILED entry, table full, or queue full: the table took pkt and
			   * passed it to drop_packet already */
};

/* Output path: the link-layer address of next hop addr on port. Creates an INCOMPLETE entry and
 * sends a broadcast request when none exists; moves STALE to DELAY (RFC 4861 §7.3.3). pkt may
 * be NULL to only trigger resolution. */
enum neigh_result neigh_resolve(struct neigh_table *t, uint64_t now_ms, uint16_t port,
				const struct inet_addr *addr, void *pkt, struct eth_addr *mac);

/* Flags for neigh_learn. */
#define NEIGH_F_SOLICITED 0x1 /* an ARP reply to us: confirms reachability (-> REACHABLE) */
#define NEIGH_F_CREATE 0x2    /* create the entry if absent (a request that targets us) */

/* Input path: an ARP packet (or a Neighbor Discovery message) from addr claimed mac
 * (RFC 826 "merge", RFC 4861 §7.2.5). Updates an existing entry
 * (a changed MAC goes STALE unless solicited), creates one with NEIGH_F_CREATE (STALE, or
 * REACHABLE when solicited), and releases queued packets once the address is known.
 * Returns 0 when learnt or ignored (no entry and no CREATE), -EPERM when addr has a static
 * entry with another MAC (a spoofing attempt: the entry is unchanged), -ENOSPC when the table
 * is full. */
int neigh_learn(struct neigh_table *t, uint64_t now_ms, uint16_t port,
		const struct inet_addr *addr, const struct eth_addr *mac, unsigned flags);

/* Adds or replaces a static entry (releasing packets queued on a dynamic one).
 * Returns 0 or -ENOSPC. */
int neigh_add_static(struct neigh_table *t, uint16_t port, const struct inet_addr *addr,
		     const struct eth_addr *mac);
/* Removes an entry of any state, dropping its queue (NEIGH_DROP_FLUSHED).
 * Returns 0 or -ENOENT. */
int neigh_delete(struct neigh_table *t, uint16_t port, const struct inet_addr *addr);
/* Removes every dynamic entry of port (all ports when port is NEIGH_ALL_PORTS), e.g. when an
 * address or the link goes away. */
#define NEIGH_ALL_PORTS UINT16_MAX
void neigh_flush(struct neigh_table *t, uint16_t port);

/* Runs timers: retransmits requests, ages REACHABLE -> STALE, DELAY -> PROBE,
 * INCOMPLETE/PROBE -> FAILED (dropping queued packets), and removes FAILED and long-unused
 * STALE entries. Call it every ~100 ms; cost O(entries). */
void neigh_tick(struct neigh_table *t, uint64_t now_ms);

/* A read-only snapshot of one entry, for `neigh show` and tests. */
struct neigh_info {
	uint16_t port;
	struct inet_addr addr;
	struct eth_addr mac;      /* zero while INCOMPLETE */
	enum neigh_state state;
	uint32_t queued;          /* packets waiting */
	uint32_t probes;          /* requests sent in the current INCOMPLETE/PROBE episode */
	uint64_t updated_ms;      /* last state change */
};

/* Looks up one entry. Returns 0 or -ENOENT. */
int neigh_lookup(const struct neigh_table *t, uint16_t port, const struct inet_addr *addr,
		 struct neigh_info *out);
/* Calls fn for every entry (order unspecified); stops early when fn returns non-zero and
 * returns that value. fn must not modify the table. */
int neigh_walk(const struct neigh_table *t, int (*fn)(const struct neigh_info *, void *),
	       void *arg);
size_t neigh_count(const struct neigh_table *t);
/* Entries the table may hold (neigh_params.max_entries). */
uint32_t neigh_capacity(const struct neigh_table *t);

#endif
