/* Internals of the neighbour cache shared by neigh.c (storage: slots, hash, queues, eviction
 * lists, table-wide operations) and neigh_fsm.c (the state machine and its timers). Nothing
 * outside src/l2/neigh*.c includes this file. */
#ifndef DPS_L2_NEIGH_PRIV_H
#define DPS_L2_NEIGH_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "neigh.h"

#define NEIGH_NIL UINT32_MAX         /* "no slot" in chains and lists */
#define NEIGH_FREE NEIGH_STATE_COUNT /* state of an unused slot */
#define NEIGH_NEVER UINT64_MAX       /* timer of an entry that has none (STATIC) */

/* One slot of the fixed table. Packets waiting for resolution live in the slot's own ring of
 * queue_len pointers inside neigh_table.queues. */
struct neigh_entry {
	uint32_t ip;
	uint16_t port;
	uint8_t state;           /* enum neigh_state, or NEIGH_FREE */
	struct eth_addr mac;     /* zero while INCOMPLETE and FAILED */
	uint32_t probes;         /* requests sent in the current INCOMPLETE/PROBE episode */
	uint32_t next;           /* next slot in the hash chain, or in the free list */
	uint32_t age_prev;       /* neighbours in an eviction list (FAILED and STALE only) */
	uint32_t age_next;
	uint32_t q_head;         /* oldest queued packet */
	uint32_t q_count;
	uint64_t updated_ms;     /* last state change */
	uint64_t timer_ms;       /* when the current state's timer fires (see neigh_fsm.c) */
};

/* A doubly linked list of slots, oldest first. */
struct neigh_list {
	uint32_t head;
	uint32_t tail;
};

/* The eviction candidates: entries are appended when they enter the state, so each list is
 * ordered by updated_ms and its head is the entry that has been in that state the longest. */
enum { NEIGH_AGE_FAILED, NEIGH_AGE_STALE, NEIGH_AGE_COUNT };

struct neigh_table {
	struct neigh_params p;
	const struct neigh_ops *ops;
	void *ctx;
	struct neigh_entry *slots;   /* max_entries */
	void **queues;               /* max_entries * queue_len packet pointers */
	uint32_t *buckets;           /* heads of the hash chains; a power of two of them */
	unsigned hash_shift;         /* 64 - log2(number of buckets) */
	uint32_t free_head;          /* chain of unused slots through neigh_entry.next */
	size_t count;
	uint64_t now_ms;             /* latest time passed in: the clock of neigh_add_static */
	struct neigh_list age[NEIGH_AGE_COUNT];
};

/* Storage, in neigh.c. Slots are named by index so chains survive without pointers. */
uint32_t neigh_slot_find(const struct neigh_table *t, uint16_t port, uint32_t ip);
/* A zeroed slot in the hash under (port, ip), state INCOMPLETE since now_ms with no timer and
 * in no list, or NEIGH_NIL when the table is full and no entry may be evicted (policy in
 * neigh.c). */
uint32_t neigh_slot_alloc(struct neigh_table *t, uint16_t port, uint32_t ip, uint64_t now_ms);
/* Drops the slot's queue with why and returns the slot to the free list. */
void neigh_slot_remove(struct neigh_table *t, uint32_t idx, enum neigh_drop why);
/* Changes the state and keeps the eviction lists and updated_ms in step; timers are the
 * caller's business. Setting the current state again changes nothing. */
void neigh_slot_set_state(struct neigh_table *t, uint32_t idx, enum neigh_state s,
			  uint64_t now_ms);

bool neigh_queue_push(struct neigh_table *t, uint32_t idx, void *pkt);
/* Hands every queued packet, oldest first, to send_packet with the entry's MAC. */
void neigh_queue_release(struct neigh_table *t, uint32_t idx);
/* Hands every queued packet, oldest first, to drop_packet with why. */
void neigh_queue_drop(struct neigh_table *t, uint32_t idx, enum neigh_drop why);

/* struct eth_addr helpers, kept here so the cache does not depend on src/wire/eth.c. */
static inline bool neigh_mac_equal(const struct eth_addr *a, const struct eth_addr *b)
{
	return memcmp(a->b, b->b, ETH_ADDR_LEN) == 0;
}

static inline bool neigh_mac_usable(const struct eth_addr *a)
{
	static const struct eth_addr zero;

	/* The group bit marks multicast and broadcast (IEEE 802.3 §3.2.3). */
	return !(a->b[0] & 0x01) && !neigh_mac_equal(a, &zero);
}

#endif
