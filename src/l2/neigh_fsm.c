/* The neighbour reachability state machine: RFC 4861 §7.3 (Neighbor Unreachability
 * Detection) applied to ARP (RFC 826) the way Linux does, within the rules of RFC 1122
 * §2.3.2 (cache timeouts, request rate limit, queueing while unresolved).
 *
 *   (none) --resolve--> INCOMPLETE: broadcast request, then one every retrans_ms
 *   INCOMPLETE --reply--> REACHABLE (solicited) | STALE, queued packets sent
 *   INCOMPLETE --mcast_probes unanswered--> FAILED, queued packets dropped
 *   REACHABLE --reachable_ms without confirmation--> STALE
 *   STALE --resolve--> DELAY --delay_ms--> PROBE: unicast request every retrans_ms
 *   PROBE --ucast_probes unanswered--> FAILED
 *   any dynamic state --solicited reply--> REACHABLE; --new MAC, unsolicited--> STALE
 *   FAILED --failed_hold_ms--> removed;  STALE --gc_stale_ms unused--> removed
 *   STATIC: never changes.
 *
 * Timers: each entry has one deadline, timer_ms, armed when it enters a state (neigh_enter)
 * and run by neigh_expire when now >= timer_ms: a timer of d ms armed at t fires at t + d,
 * not before. neigh_tick runs every entry's timer; neigh_resolve and neigh_learn first run
 * the timer of the entry they touch, so their answer does not depend on how often the caller
 * ticks (a REACHABLE entry is not used past its lifetime just because no tick came yet).
 * Time must not go backwards; if it does, timers only fire later.
 *
 * Callbacks: drop_packet may answer with ICMP, whose output calls neigh_resolve again, so
 * every callback runs with its entry in a consistent state that nothing nested can break:
 * requests go out after probes and timer are updated, queued packets are released after the
 * new state is set, and a queue is dropped while its entry is out of reach (unlinked, or
 * INCOMPLETE with its timer disarmed, which nothing evicts or expires). Callbacks may call
 * neigh_resolve and neigh_learn; they must not delete, flush or destroy. */
#include <errno.h>

#include "neigh_priv.h"

static uint64_t neigh_after(uint64_t now_ms, uint32_t ms)
{
	return now_ms > NEIGH_NEVER - ms ? NEIGH_NEVER : now_ms + ms;
}

static void neigh_clock(struct neigh_table *t, uint64_t now_ms)
{
	if (now_ms > t->now_ms)
		t->now_ms = now_ms;
}

/* Requests per episode. Entering the state sends the first one, so 0 behaves as 1. */
static uint32_t neigh_max_probes(const struct neigh_table *t, enum neigh_state s)
{
	return s == NEIGH_INCOMPLETE ? t->p.mcast_probes : t->p.ucast_probes;
}

/* One ARP request and the next retransmission slot. Only here are requests sent, and always
 * retrans_ms after the previous one of the entry: RFC 1122 §2.3.2.1 requires a limit on
 * requests for one address (recommended: 1 per second). INCOMPLETE asks by broadcast (RFC
 * 826); PROBE asks the cached address by unicast (RFC 4861 §7.3.3). */
static void neigh_send_probe(struct neigh_table *t, uint32_t idx, uint64_t now_ms)
{
	struct neigh_entry *e = &t->slots[idx];

	e->probes++;
	e->timer_ms = neigh_after(now_ms, t->p.retrans_ms);
	t->ops->send_request(t->ctx, e->port, e->ip, e->state == NEIGH_PROBE ? &e->mac : NULL);
}

/* Enters state s at now_ms: arms its timer and runs its entry action. Entering the current
 * state again re-arms the timer (a new confirmation, a new address) but keeps updated_ms. */
static void neigh_enter(struct neigh_table *t, uint32_t idx, enum neigh_state s,
			uint64_t now_ms)
{
	struct neigh_entry *e = &t->slots[idx];

	neigh_slot_set_state(t, idx, s, now_ms);
	if (s != NEIGH_FAILED)
		e->probes = 0; /* FAILED keeps the count of the episode that failed, for show */

	switch (s) {
	case NEIGH_INCOMPLETE:
	case NEIGH_PROBE:
		neigh_send_probe(t, idx, now_ms);
		break;
	case NEIGH_REACHABLE:
		/* RFC 4861 §6.3.2 randomizes ReachableTime; the caller may vary reachable_ms. */
		e->timer_ms = neigh_after(now_ms, t->p.reachable_ms);
		break;
	case NEIGH_STALE:
		/* Using a STALE entry moves it to DELAY, so time in STALE is time unused. */
		e->timer_ms = neigh_after(now_ms, t->p.gc_stale_ms);
		break;
	case NEIGH_DELAY:
		e->timer_ms = neigh_after(now_ms, t->p.delay_ms);
		break;
	case NEIGH_FAILED:
		/* The hold is a negative cache: without it every packet to a dead host would
		 * start a new round of broadcasts (RFC 1122 §2.3.2.1 flooding). */
		memset(&e->mac, 0, sizeof(e->mac));
		e->timer_ms = neigh_after(now_ms, t->p.failed_hold_ms);
		break;
	default: /* NEIGH_STATIC */
		e->timer_ms = NEIGH_NEVER;
		break;
	}
}

/* Runs the entry's timer if it is due. Returns false when the entry was removed. */
static bool neigh_expire(struct neigh_table *t, uint32_t idx, uint64_t now_ms)
{
	struct neigh_entry *e = &t->slots[idx];

	/* Loops only through transitions that send nothing (with zero timers an entry may go
	 * REACHABLE -> STALE -> removed at once); after a request it stops, whatever the
	 * timers, so a late tick never sends a burst. */
	while (e->timer_ms <= now_ms) {
		switch (e->state) {
		case NEIGH_INCOMPLETE:
		case NEIGH_PROBE:
			if (e->probes < neigh_max_probes(t, (enum neigh_state)e->state)) {
				neigh_send_probe(t, idx, now_ms);
				return true;
			}
			/* RFC 4861 §7.3.3: no answer after the last retransmission. The queue
			 * goes first, while the entry is still out of reach (see the top);
			 * a packet queued to it meanwhile goes with the others. */
			e->timer_ms = NEIGH_NEVER;
			neigh_queue_drop(t, idx, NEIGH_DROP_RESOLVE_FAILED);
			neigh_enter(t, idx, NEIGH_FAILED, now_ms);
			break;
		case NEIGH_REACHABLE:
			/* RFC 4861 §7.3.3; RFC 1122 §2.3.2.1 asks for cache timeouts. */
			neigh_enter(t, idx, NEIGH_STALE, now_ms);
			break;
		case NEIGH_DELAY:
			/* No confirmation within delay_ms: probe (RFC 4861 §7.3.3). */
			neigh_enter(t, idx, NEIGH_PROBE, now_ms);
			return true;
		case NEIGH_STALE:
		case NEIGH_FAILED:
			neigh_slot_remove(t, idx, NEIGH_DROP_FLUSHED); /* neither holds packets */
			return false;
		default: /* NEIGH_STATIC: no timer; only a clock at UINT64_MAX gets here */
			return true;
		}
	}
	return true;
}

/* The entry for (port, ip) with its due timer run, or NEIGH_NIL. */
static uint32_t neigh_find_current(struct neigh_table *t, uint64_t now_ms, uint16_t port,
				   uint32_t ip)
{
	uint32_t idx = neigh_slot_find(t, port, ip);

	if (idx != NEIGH_NIL && !neigh_expire(t, idx, now_ms))
		return NEIGH_NIL;
	return idx;
}

static enum neigh_result neigh_reject(struct neigh_table *t, void *pkt, enum neigh_drop why)
{
	if (pkt != NULL)
		t->ops->drop_packet(t->ctx, pkt, why);
	return NEIGH_UNREACHABLE;
}

enum neigh_result neigh_resolve(struct neigh_table *t, uint64_t now_ms, uint16_t port,
				uint32_t ip, void *pkt, struct eth_addr *mac)
{
	struct neigh_entry *e;
	uint32_t idx;

	neigh_clock(t, now_ms);
	idx = neigh_find_current(t, now_ms, port, ip);
	if (idx == NEIGH_NIL) {
		idx = neigh_slot_alloc(t, port, ip, now_ms);
		if (idx == NEIGH_NIL)
			return neigh_reject(t, pkt, NEIGH_DROP_TABLE_FULL);
		neigh_enter(t, idx, NEIGH_INCOMPLETE, now_ms);
	}
	e = &t->slots[idx];

	switch (e->state) {
	case NEIGH_INCOMPLETE:
		/* RFC 1122 §2.3.2.2: hold packets for an unresolved address. No new request
		 * here: retransmissions are paced by the timer alone. The queue keeps the first
		 * queue_len packets; later ones are refused, as neigh.h specifies. */
		if (pkt != NULL && !neigh_queue_push(t, idx, pkt))
			return neigh_reject(t, pkt, NEIGH_DROP_QUEUE_FULL);
		return NEIGH_QUEUED;
	case NEIGH_FAILED:
		return neigh_reject(t, pkt, NEIGH_DROP_RESOLVE_FAILED);
	case NEIGH_STALE:
		/* RFC 4861 §7.3.3: first use of a STALE entry: send, and probe later unless
		 * something confirms the neighbour meanwhile. */
		neigh_enter(t, idx, NEIGH_DELAY, now_ms);
		break;
	default:
		/* REACHABLE, STATIC, and DELAY/PROBE which keep using the cached address while
		 * they verify it (RFC 4861 §7.3.3). */
		break;
	}
	if (mac != NULL)
		*mac = e->mac;
	return NEIGH_RESOLVED;
}

int neigh_learn(struct neigh_table *t, uint64_t now_ms, uint16_t port, uint32_t ip,
		const struct eth_addr *mac, unsigned flags)
{
	bool solicited = (flags & NEIGH_F_SOLICITED) != 0;
	struct neigh_entry *e;
	uint32_t idx;
	bool known;

	neigh_clock(t, now_ms);
	/* A multicast, broadcast or zero sender address is never a neighbour's (RFC 1812
	 * §3.3.2 has routers ignore ARP replies that claim multicast addresses); caching one
	 * would turn unicast into a flood or a black hole. Ignored. */
	if (!neigh_mac_usable(mac))
		return 0;

	idx = neigh_find_current(t, now_ms, port, ip);
	if (idx == NEIGH_NIL) {
		/* RFC 826: add the sender only when we are the target (the caller's CREATE). */
		if (!(flags & NEIGH_F_CREATE))
			return 0;
		idx = neigh_slot_alloc(t, port, ip, now_ms);
		if (idx == NEIGH_NIL)
			return -ENOSPC;
		t->slots[idx].mac = *mac;
		/* RFC 4861 §7.3.3: an unsolicited address is unconfirmed: STALE. */
		neigh_enter(t, idx, solicited ? NEIGH_REACHABLE : NEIGH_STALE, now_ms);
		return 0;
	}
	e = &t->slots[idx];

	if (e->state == NEIGH_STATIC)
		return neigh_mac_equal(&e->mac, mac) ? 0 : -EPERM;

	/* RFC 4861 §7.2.5: the same address without confirmation changes nothing. ARP has no
	 * Override flag and RFC 826 merges unconditionally, so a new address always replaces
	 * the old one: REACHABLE if it answers our request, STALE otherwise. */
	known = e->state != NEIGH_INCOMPLETE && e->state != NEIGH_FAILED;
	if (known && !solicited && neigh_mac_equal(&e->mac, mac))
		return 0;
	e->mac = *mac;
	neigh_enter(t, idx, solicited ? NEIGH_REACHABLE : NEIGH_STALE, now_ms);
	if (e->q_count > 0) {
		/* Sending the queued packets uses the entry: STALE moves on to DELAY as for any
		 * use (RFC 4861 §7.2.5 sends the queue, §7.3.3 the move). */
		if (e->state == NEIGH_STALE)
			neigh_enter(t, idx, NEIGH_DELAY, now_ms);
		neigh_queue_release(t, idx);
	}
	return 0;
}

int neigh_add_static(struct neigh_table *t, uint16_t port, uint32_t ip,
		     const struct eth_addr *mac)
{
	uint32_t idx = neigh_slot_find(t, port, ip);

	/* No clock in this call: updated_ms takes the latest time the table was given. */
	if (idx == NEIGH_NIL) {
		idx = neigh_slot_alloc(t, port, ip, t->now_ms);
		if (idx == NEIGH_NIL)
			return -ENOSPC;
	}
	t->slots[idx].mac = *mac;
	neigh_enter(t, idx, NEIGH_STATIC, t->now_ms);
	neigh_queue_release(t, idx);
	return 0;
}

void neigh_tick(struct neigh_table *t, uint64_t now_ms)
{
	neigh_clock(t, now_ms);
	/* O(max_entries), no allocation. Removing a slot does not move any other. */
	for (uint32_t i = 0; i < t->p.max_entries; i++)
		if (t->slots[i].state != NEIGH_FREE)
			neigh_expire(t, i, now_ms);
}
