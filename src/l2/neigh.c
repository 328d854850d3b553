/* Neighbour cache storage: the fixed table, its hash, the per-entry packet queues, the
 * eviction lists and the operations that do not depend on the state machine. The state
 * machine itself (resolve, learn, timers) is in neigh_fsm.c.
 *
 * Layout: everything is allocated once in neigh_table_create. Entries live in an array of
 * max_entries slots; a slot is found through chained hashing on (port, address), the chains linked
 * by slot index, and unused slots are chained on a free list. Each slot owns a ring of
 * queue_len packet pointers (a ring: a callback may queue a packet while the queue drains,
 * see neigh_fsm.c). Nothing allocates after create, so neither the packet path nor
 * the timer path can fail for lack of memory.
 *
 * Eviction policy (a full table and a new entry): take the entry that has been FAILED the
 * longest; if none, the entry that has been STALE the longest (unused since, as using a STALE
 * entry moves it to DELAY). Never a STATIC entry (configured), never an INCOMPLETE one
 * (resolution under way, maybe with packets queued) and never REACHABLE, DELAY or PROBE ones
 * (in use). Neither FAILED nor STALE entries hold packets, so eviction drops nothing. Both
 * candidates sit on lists ordered by the time they entered the state, so the choice is O(1),
 * which matters when an address scan keeps the table full. The same policy serves resolve,
 * learn with NEIGH_F_CREATE and add_static. */
#include <errno.h>
#include <stdlib.h>

#include "neigh_priv.h"

static const char *const neigh_state_names[] = {
#define NEIGH_STATE_NAME(name, text) text,
	NEIGH_STATE_LIST(NEIGH_STATE_NAME)
#undef NEIGH_STATE_NAME
};

const char *neigh_state_str(enum neigh_state s)
{
	if ((unsigned)s >= NEIGH_STATE_COUNT)
		return "?";
	return neigh_state_names[s];
}

void neigh_params_default(struct neigh_params *p)
{
	/* Linux's net.ipv4.neigh.default values (RFC 4861 §10 constants for the timers);
	 * failed_hold_ms and queue_len are ours. */
	*p = (struct neigh_params){
		.reachable_ms = 30000,
		.delay_ms = 5000,
		.retrans_ms = 1000,
		.mcast_probes = 3,
		.ucast_probes = 3,
		.failed_hold_ms = 3000,
		.gc_stale_ms = 60000,
		.queue_len = 8,
		.max_entries = 1024,
	};
}

/* Fibonacci hashing: the top bits of the key times 2^64/phi depend on every key bit, so the
 * same address on many ports, or consecutive addresses on one port, spread over all buckets.
 * The 128-bit address folds into the key first: the halves are mixed with a multiply so
 * that IPv4-mapped addresses (all in the low half) and IPv6 interface identifiers (also)
 * keep their spread. */
static uint32_t neigh_bucket(const struct neigh_table *t, uint16_t port,
			     const struct inet_addr *addr)
{
	uint64_t hi, lo;
	memcpy(&hi, addr->b, 8);
	memcpy(&lo, addr->b + 8, 8);
	uint64_t key = (hi * UINT64_C(0xc2b2ae3d27d4eb4f)) ^ lo ^ ((uint64_t)port << 48);

	return (uint32_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> t->hash_shift);
}

static struct neigh_list *neigh_age_list(struct neigh_table *t, enum neigh_state s)
{
	if (s == NEIGH_FAILED)
		return &t->age[NEIGH_AGE_FAILED];
	if (s == NEIGH_STALE)
		return &t->age[NEIGH_AGE_STALE];
	return NULL;
}

static void neigh_list_append(struct neigh_table *t, struct neigh_list *l, uint32_t idx)
{
	struct neigh_entry *e = &t->slots[idx];

	e->age_prev = l->tail;
	e->age_next = NEIGH_NIL;
	if (l->tail != NEIGH_NIL)
		t->slots[l->tail].age_next = idx;
	else
		l->head = idx;
	l->tail = idx;
}

static void neigh_list_unlink(struct neigh_table *t, struct neigh_list *l, uint32_t idx)
{
	struct neigh_entry *e = &t->slots[idx];

	if (e->age_prev != NEIGH_NIL)
		t->slots[e->age_prev].age_next = e->age_next;
	else
		l->head = e->age_next;
	if (e->age_next != NEIGH_NIL)
		t->slots[e->age_next].age_prev = e->age_prev;
	else
		l->tail = e->age_prev;
	e->age_prev = e->age_next = NEIGH_NIL;
}

int neigh_set_params(struct neigh_table *t, const struct neigh_params *p)
{
	if (p->queue_len != t->p.queue_len || p->max_entries != t->p.max_entries ||
	    p->reachable_ms == 0 || p->delay_ms == 0 || p->retrans_ms == 0 ||
	    p->failed_hold_ms == 0 || p->gc_stale_ms == 0)
		return -EINVAL;
	t->p = *p;
	return 0;
}

void neigh_get_params(const struct neigh_table *t, struct neigh_params *out)
{
	*out = t->p;
}

struct neigh_table *neigh_table_create(const struct neigh_params *params,
				       const struct neigh_ops *ops, void *ctx)
{
	struct neigh_table *t;
	uint32_t nb = 2;
	unsigned bits = 1;

	if (params == NULL || ops == NULL || ops->send_request == NULL ||
	    ops->send_packet == NULL || ops->drop_packet == NULL)
		return NULL;
	if (params->max_entries == 0 || params->max_entries > NEIGH_MAX_ENTRIES_LIMIT ||
	    params->queue_len == 0 ||
	    params->queue_len > SIZE_MAX / sizeof(void *) / params->max_entries)
		return NULL;

	/* At most one entry per bucket on average when full. */
	while (nb < params->max_entries) {
		nb <<= 1;
		bits++;
	}

	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->p = *params;
	t->ops = ops;
	t->ctx = ctx;
	t->hash_shift = 64 - bits;
	t->slots = calloc(params->max_entries, sizeof(*t->slots));
	t->queues = calloc((size_t)params->max_entries * params->queue_len, sizeof(void *));
	t->buckets = malloc((size_t)nb * sizeof(*t->buckets));
	if (t->slots == NULL || t->queues == NULL || t->buckets == NULL) {
		free(t->slots);
		free(t->queues);
		free(t->buckets);
		free(t);
		return NULL;
	}
	for (uint32_t i = 0; i < nb; i++)
		t->buckets[i] = NEIGH_NIL;
	/* The free list hands out low slots first, which keeps a small table compact. */
	for (uint32_t i = 0; i < params->max_entries; i++) {
		t->slots[i].state = NEIGH_FREE;
		t->slots[i].next = i + 1 < params->max_entries ? i + 1 : NEIGH_NIL;
	}
	t->free_head = 0;
	for (int i = 0; i < NEIGH_AGE_COUNT; i++)
		t->age[i].head = t->age[i].tail = NEIGH_NIL;
	return t;
}

void neigh_table_destroy(struct neigh_table *t)
{
	if (t == NULL)
		return;
	for (uint32_t i = 0; i < t->p.max_entries; i++)
		if (t->slots[i].state != NEIGH_FREE)
			neigh_queue_drop(t, i, NEIGH_DROP_FLUSHED);
	free(t->slots);
	free(t->queues);
	free(t->buckets);
	free(t);
}

uint32_t neigh_slot_find(const struct neigh_table *t, uint16_t port,
			 const struct inet_addr *addr)
{
	uint32_t idx = t->buckets[neigh_bucket(t, port, addr)];

	while (idx != NEIGH_NIL) {
		const struct neigh_entry *e = &t->slots[idx];

		if (e->port == port && inet_addr_equal(&e->addr, addr))
			return idx;
		idx = e->next;
	}
	return NEIGH_NIL;
}

uint32_t neigh_slot_alloc(struct neigh_table *t, uint16_t port, const struct inet_addr *addr,
			  uint64_t now_ms)
{
	struct neigh_entry *e;
	uint32_t idx, b;

	if (t->free_head == NEIGH_NIL) {
		uint32_t victim = t->age[NEIGH_AGE_FAILED].head;

		if (victim == NEIGH_NIL)
			victim = t->age[NEIGH_AGE_STALE].head;
		if (victim == NEIGH_NIL)
			return NEIGH_NIL;
		neigh_slot_remove(t, victim, NEIGH_DROP_FLUSHED); /* queue is empty: see above */
	}
	idx = t->free_head;
	e = &t->slots[idx];
	t->free_head = e->next;

	b = neigh_bucket(t, port, addr);
	*e = (struct neigh_entry){
		.addr = *addr,
		.port = port,
		.state = NEIGH_INCOMPLETE,
		.next = t->buckets[b],
		.age_prev = NEIGH_NIL,
		.age_next = NEIGH_NIL,
		.updated_ms = now_ms,
		.timer_ms = NEIGH_NEVER,
	};
	t->buckets[b] = idx;
	t->count++;
	return idx;
}

void neigh_slot_remove(struct neigh_table *t, uint32_t idx, enum neigh_drop why)
{
	struct neigh_entry *e = &t->slots[idx];
	struct neigh_list *l = neigh_age_list(t, e->state);
	uint32_t *link = &t->buckets[neigh_bucket(t, e->port, &e->addr)];

	/* Unlink before dropping the queue: drop_packet may call neigh_resolve (see
	 * neigh_fsm.c), which must not find, evict or reuse this slot meanwhile. */
	if (l != NULL)
		neigh_list_unlink(t, l, idx);
	while (*link != idx)
		link = &t->slots[*link].next;
	*link = e->next;
	e->timer_ms = NEIGH_NEVER;
	neigh_queue_drop(t, idx, why);

	e->state = NEIGH_FREE;
	e->next = t->free_head;
	t->free_head = idx;
	t->count--;
}

void neigh_slot_set_state(struct neigh_table *t, uint32_t idx, enum neigh_state s,
			  uint64_t now_ms)
{
	struct neigh_entry *e = &t->slots[idx];
	struct neigh_list *from = neigh_age_list(t, e->state);
	struct neigh_list *to = neigh_age_list(t, s);

	if (e->state == s)
		return;
	if (from != NULL)
		neigh_list_unlink(t, from, idx);
	if (to != NULL)
		neigh_list_append(t, to, idx);
	e->state = (uint8_t)s;
	e->updated_ms = now_ms;
}

bool neigh_queue_push(struct neigh_table *t, uint32_t idx, void *pkt)
{
	struct neigh_entry *e = &t->slots[idx];
	void **q = &t->queues[(size_t)idx * t->p.queue_len];

	if (e->q_count >= t->p.queue_len)
		return false;
	q[(e->q_head + e->q_count) % t->p.queue_len] = pkt;
	e->q_count++;
	return true;
}

/* Takes the oldest packet off the queue before its callback runs, so the entry is consistent
 * whatever the callback does with the packet. */
static void *neigh_queue_pop(struct neigh_table *t, uint32_t idx)
{
	struct neigh_entry *e = &t->slots[idx];
	void **q = &t->queues[(size_t)idx * t->p.queue_len];
	void *pkt = q[e->q_head];

	q[e->q_head] = NULL;
	e->q_head = (e->q_head + 1) % t->p.queue_len;
	e->q_count--;
	return pkt;
}

void neigh_queue_release(struct neigh_table *t, uint32_t idx)
{
	struct neigh_entry *e = &t->slots[idx];

	while (e->q_count > 0) {
		void *pkt = neigh_queue_pop(t, idx);

		t->ops->send_packet(t->ctx, e->port, &e->mac, pkt);
	}
}

void neigh_queue_drop(struct neigh_table *t, uint32_t idx, enum neigh_drop why)
{
	while (t->slots[idx].q_count > 0)
		t->ops->drop_packet(t->ctx, neigh_queue_pop(t, idx), why);
}

int neigh_delete(struct neigh_table *t, uint16_t port, const struct inet_addr *addr)
{
	uint32_t idx = neigh_slot_find(t, port, addr);

	if (idx == NEIGH_NIL)
		return -ENOENT;
	neigh_slot_remove(t, idx, NEIGH_DROP_FLUSHED);
	return 0;
}

void neigh_flush(struct neigh_table *t, uint16_t port)
{
	/* Removing a slot only relinks others, so a scan by index visits each entry once. */
	for (uint32_t i = 0; i < t->p.max_entries; i++) {
		const struct neigh_entry *e = &t->slots[i];

		if (e->state == NEIGH_FREE || e->state == NEIGH_STATIC)
			continue;
		if (port == NEIGH_ALL_PORTS || e->port == port)
			neigh_slot_remove(t, i, NEIGH_DROP_FLUSHED);
	}
}

static void neigh_info_fill(const struct neigh_entry *e, struct neigh_info *out)
{
	*out = (struct neigh_info){
		.port = e->port,
		.addr = e->addr,
		.mac = e->mac,
		.state = (enum neigh_state)e->state,
		.queued = e->q_count,
		.probes = e->probes,
		.updated_ms = e->updated_ms,
	};
}

int neigh_lookup(const struct neigh_table *t, uint16_t port, const struct inet_addr *addr,
		 struct neigh_info *out)
{
	uint32_t idx = neigh_slot_find(t, port, addr);

	if (idx == NEIGH_NIL)
		return -ENOENT;
	neigh_info_fill(&t->slots[idx], out);
	return 0;
}

int neigh_walk(const struct neigh_table *t, int (*fn)(const struct neigh_info *, void *),
	       void *arg)
{
	for (uint32_t i = 0; i < t->p.max_entries; i++) {
		struct neigh_info info;
		int rc;

		if (t->slots[i].state == NEIGH_FREE)
			continue;
		neigh_info_fill(&t->slots[i], &info);
		rc = fn(&info, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

size_t neigh_count(const struct neigh_table *t)
{
	return *(const volatile size_t *)&t->count; /* `stats` reads it from another thread */
}

uint32_t neigh_capacity(const struct neigh_table *t)
{
	return t->p.max_entries;
}
