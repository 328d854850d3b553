#include "route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>

#include "wire/ipv4.h"

/* The prefix lengths in use in one family, longest first, and how many routes each has. */
struct route_lengths {
	uint32_t per_plen[129];
	uint8_t plens[129];
	unsigned nb;
};

enum { ROUTE_V4, ROUTE_V6 };

/* Open addressing with linear probing, at most half full: slots (a power of two, at least
 * twice max) each hold an entry index plus one (0: empty) and the key's hash, so that a
 * probe past other keys (every length a lookup tries but the one that matches) reads the
 * slot array only, not their entries. Entries are taken lowest index first, so `ip route
 * show` lists them in the order they came, holes refilled. */
struct route_slot {
	uint32_t idx1;
	uint32_t hash;
};

struct route_table {
	uint32_t max, count;
	uint32_t slot_mask, slot_shift;
	uint32_t first_free;     /* no entry below it is free */
	struct route_slot *slots;
	struct route *routes;
	bool *used;
	struct route_lengths fam[2];
};

static const char *const route_type_names[] = {
#define ROUTE_TYPE_NAME(id, name) [ROUTE_##id] = name,
	ROUTE_TYPE_LIST(ROUTE_TYPE_NAME)
#undef ROUTE_TYPE_NAME
};

const char *route_type_str(enum route_type t)
{
	return (unsigned)t < ROUTE_TYPE_COUNT ? route_type_names[t] : "?";
}

struct route_table *route_table_create(uint32_t max)
{
	if (max < ROUTE_MAX_MIN || max > ROUTE_MAX_LIMIT) {
		rte_errno = EINVAL;
		return NULL;
	}
	struct route_table *t = calloc(1, sizeof(*t));
	uint32_t nb_slots = rte_align32pow2(2 * max);
	if (t != NULL) {
		t->slots = calloc(nb_slots, sizeof(*t->slots));
		t->routes = calloc(max, sizeof(*t->routes));
		t->used = calloc(max, sizeof(*t->used));
	}
	if (t == NULL || t->slots == NULL || t->routes == NULL || t->used == NULL) {
		route_table_destroy(t);
		rte_errno = ENOMEM;
		return NULL;
	}
	t->max = max;
	t->slot_mask = nb_slots - 1;
	t->slot_shift = 32 - (uint32_t)rte_log2_u32(nb_slots);
	return t;
}

void route_table_destroy(struct route_table *t)
{
	if (t == NULL)
		return;
	free(t->slots);
	free(t->routes);
	free(t->used);
	free(t);
}

uint32_t route_count(const struct route_table *t)
{
	return t->count;
}

uint32_t route_capacity(const struct route_table *t)
{
	return t->max;
}

/* CRC32C (one instruction per word on x86 and arm64): the keys are a handful of words and a
 * lookup hashes once per prefix length, so the hash must cost next to nothing. CRC is
 * linear, and prefixes with their host bits zero span few dimensions, so its low bits alone
 * collide in long runs (10,000 routes of /16-/28: 372 ns a lookup); slot_of takes the high
 * bits of its product with 2^32/phi (Fibonacci hashing, Knuth 6.4), which mix all of it. */
static uint32_t hash4(uint32_t prefix, uint8_t plen)
{
	return rte_hash_crc_4byte(prefix, plen);
}

static uint32_t hash6(const struct inet_addr *prefix, uint8_t plen)
{
	uint64_t w[2];
	memcpy(w, prefix->b, sizeof(w)); /* an inet_addr may sit at any byte */
	return rte_hash_crc_8byte(w[1], rte_hash_crc_8byte(w[0], plen | 0x100u));
}

static uint32_t slot_of(const struct route_table *t, uint32_t hash)
{
	return (hash * 2654435769u) >> t->slot_shift;
}

static uint32_t hash_of(const struct inet_addr *prefix, uint8_t plen)
{
	return inet_addr_is_v4(prefix) ? hash4(inet_addr_to_v4(prefix), plen) : hash6(prefix, plen);
}

/* The slot holding exactly prefix/plen (whose hash is hash), or the empty slot where it
 * would go. */
static uint32_t slot_probe(const struct route_table *t, uint32_t hash,
			   const struct inet_addr *prefix, uint8_t plen)
{
	for (uint32_t s = slot_of(t, hash);; s = (s + 1) & t->slot_mask) {
		const struct route_slot *sl = &t->slots[s];
		if (sl->idx1 == 0)
			return s;
		if (sl->hash != hash)
			continue;
		const struct route *r = &t->routes[sl->idx1 - 1];
		if (r->plen == plen && inet_addr_equal(&r->prefix, prefix))
			return s;
	}
}

static uint32_t slot_find(const struct route_table *t, const struct inet_addr *prefix,
			  uint8_t plen)
{
	return slot_probe(t, hash_of(prefix, plen), prefix, plen);
}

/* Deleting from linear probing: the entries after the hole that would no longer be found
 * move back into it (Knuth's algorithm R, TAOCP 6.4), so no tombstones pile up. */
static void slot_clear(struct route_table *t, uint32_t hole)
{
	t->slots[hole].idx1 = 0;
	for (uint32_t s = (hole + 1) & t->slot_mask; t->slots[s].idx1 != 0;
	     s = (s + 1) & t->slot_mask) {
		uint32_t home = slot_of(t, t->slots[s].hash);
		/* It may move to the hole when its home is not cyclically in (hole, s]. */
		bool stays = hole < s ? (home > hole && home <= s) : (home > hole || home <= s);
		if (!stays) {
			t->slots[hole] = t->slots[s];
			t->slots[s].idx1 = 0;
			hole = s;
		}
	}
}

static void lengths_use(struct route_lengths *f, uint8_t plen, int delta)
{
	f->per_plen[plen] += (uint32_t)delta;
	f->nb = 0;
	for (int l = 128; l >= 0; l--)
		if (f->per_plen[l] != 0)
			f->plens[f->nb++] = (uint8_t)l;
}

static struct route_lengths *lengths_of(struct route_table *t, const struct inet_addr *prefix)
{
	return &t->fam[inet_addr_is_v4(prefix) ? ROUTE_V4 : ROUTE_V6];
}

bool route_prefix_valid(const struct inet_addr *prefix, uint8_t plen)
{
	if (inet_addr_is_v4(prefix))
		return plen <= 32 && (inet_addr_to_v4(prefix) & ~ip4_mask(plen)) == 0;
	if (plen > 128)
		return false;
	struct ip6_addr masked = inet_addr_to_v6(prefix);
	ip6_prefix_mask(&masked, plen);
	return memcmp(masked.b, prefix->b, sizeof(masked.b)) == 0;
}

int route_add(struct route_table *t, const struct route *r)
{
	if ((unsigned)r->type >= ROUTE_TYPE_COUNT || !route_prefix_valid(&r->prefix, r->plen) ||
	    (r->type == ROUTE_BROADCAST && !route_is_v4(r)))
		return -EINVAL;
	uint32_t hash = hash_of(&r->prefix, r->plen);
	uint32_t s = slot_probe(t, hash, &r->prefix, r->plen);
	if (t->slots[s].idx1 != 0)
		return -EEXIST;
	if (t->count == t->max)
		return -ENOSPC;
	uint32_t idx = t->first_free;
	while (t->used[idx])
		idx++;
	t->first_free = idx + 1;
	t->routes[idx] = *r;
	t->used[idx] = true;
	t->slots[s] = (struct route_slot){.idx1 = idx + 1, .hash = hash};
	t->count++;
	lengths_use(lengths_of(t, &r->prefix), r->plen, 1);
	return 0;
}

int route_del(struct route_table *t, const struct inet_addr *prefix, uint8_t plen,
	      unsigned type_mask)
{
	if (!route_prefix_valid(prefix, plen))
		return -EINVAL;
	uint32_t s = slot_find(t, prefix, plen);
	if (t->slots[s].idx1 == 0)
		return -ENOENT;
	uint32_t idx = t->slots[s].idx1 - 1;
	if (type_mask != 0 && !(type_mask & (1u << t->routes[idx].type)))
		return -ENOENT;
	slot_clear(t, s);
	t->used[idx] = false;
	if (idx < t->first_free)
		t->first_free = idx;
	t->count--;
	lengths_use(lengths_of(t, prefix), plen, -1);
	return 0;
}

const struct route *route_lookup4(const struct route_table *t, uint32_t dst)
{
	const struct route_lengths *f = &t->fam[ROUTE_V4];
	for (unsigned i = 0; i < f->nb; i++) {
		uint8_t plen = f->plens[i];
		uint32_t p = dst & ip4_mask(plen);
		struct inet_addr key = inet_addr_v4(p);
		uint32_t s = slot_probe(t, hash4(p, plen), &key, plen);
		if (t->slots[s].idx1 != 0)
			return &t->routes[t->slots[s].idx1 - 1];
	}
	return NULL;
}

const struct route *route_lookup6(const struct route_table *t, const struct ip6_addr *dst)
{
	const struct route_lengths *f = &t->fam[ROUTE_V6];
	if (ip6_is_v4mapped(dst))
		return NULL; /* IPv4's (RFC 4291 §2.5.5.2), never an IPv6 packet's destination */
	for (unsigned i = 0; i < f->nb; i++) {
		struct ip6_addr p = *dst;
		ip6_prefix_mask(&p, f->plens[i]);
		struct inet_addr key = inet_addr_v6(&p);
		uint32_t s = slot_find(t, &key, f->plens[i]);
		if (t->slots[s].idx1 != 0)
			return &t->routes[t->slots[s].idx1 - 1];
	}
	return NULL;
}

const struct route *route_lookup(const struct route_table *t, const struct inet_addr *dst)
{
	if (inet_addr_is_v4(dst))
		return route_lookup4(t, inet_addr_to_v4(dst));
	struct ip6_addr a = inet_addr_to_v6(dst);
	return route_lookup6(t, &a);
}

const struct route *route_find(const struct route_table *t, const struct inet_addr *prefix,
			       uint8_t plen)
{
	if (!route_prefix_valid(prefix, plen))
		return NULL;
	uint32_t s = slot_find(t, prefix, plen);
	return t->slots[s].idx1 == 0 ? NULL : &t->routes[t->slots[s].idx1 - 1];
}

int route_walk(const struct route_table *t, int (*fn)(const struct route *, void *), void *arg)
{
	for (uint32_t i = 0; i < t->max; i++) {
		if (!t->used[i])
			continue;
		int rc = fn(&t->routes[i], arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
