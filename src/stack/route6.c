#include "route6.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_jhash.h>

/* Open addressing with linear probing, at most half full: ROUTE6_MAX entries in twice as
 * many slots, each an entry index plus one (0: empty). */
#define ROUTE6_SLOTS (2 * ROUTE6_MAX)

struct route6_table {
	uint16_t slots[ROUTE6_SLOTS];
	bool used[ROUTE6_MAX];
	struct route6 routes[ROUTE6_MAX];
	uint32_t per_plen[129];  /* routes of each prefix length */
	uint8_t plens[129];      /* the lengths in use, longest first */
	unsigned nb_plens;
};

struct route6_table *route6_table_create(void)
{
	struct route6_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		rte_errno = ENOMEM;
	return t;
}

void route6_table_destroy(struct route6_table *t)
{
	free(t);
}

static uint32_t slot_of(const struct ip6_addr *prefix, uint8_t plen)
{
	/* As whole words: an ip6_addr may sit at any byte in its caller's struct, and
	 * rte_jhash reads 32-bit words from the key wherever it is. */
	uint32_t words[4];
	memcpy(words, prefix->b, sizeof(words));
	return rte_jhash_32b(words, 4, plen) & (ROUTE6_SLOTS - 1);
}

/* The slot holding exactly prefix/plen, or the empty slot where it would go. */
static uint32_t slot_find(const struct route6_table *t, const struct ip6_addr *prefix,
			  uint8_t plen)
{
	uint32_t s = slot_of(prefix, plen);
	for (;; s = (s + 1) & (ROUTE6_SLOTS - 1)) {
		uint16_t v = t->slots[s];
		if (v == 0)
			return s;
		const struct route6 *r = &t->routes[v - 1];
		if (r->plen == plen && ip6_addr_equal(&r->prefix, prefix))
			return s;
	}
}

/* Deleting from linear probing: the entries after the hole that would no longer be found
 * move back into it (Knuth's algorithm R), so no tombstones pile up. */
static void slot_clear(struct route6_table *t, uint32_t hole)
{
	t->slots[hole] = 0;
	for (uint32_t s = (hole + 1) & (ROUTE6_SLOTS - 1); t->slots[s] != 0;
	     s = (s + 1) & (ROUTE6_SLOTS - 1)) {
		const struct route6 *r = &t->routes[t->slots[s] - 1];
		uint32_t home = slot_of(&r->prefix, r->plen);
		/* It may move to the hole when its home is not cyclically in (hole, s]. */
		bool stays = hole < s ? (home > hole && home <= s) : (home > hole || home <= s);
		if (!stays) {
			t->slots[hole] = t->slots[s];
			t->slots[s] = 0;
			hole = s;
		}
	}
}

static void plen_use(struct route6_table *t, uint8_t plen, int delta)
{
	t->per_plen[plen] += (uint32_t)delta;
	t->nb_plens = 0;
	for (int l = 128; l >= 0; l--)
		if (t->per_plen[l] != 0)
			t->plens[t->nb_plens++] = (uint8_t)l;
}

static bool prefix_valid(const struct ip6_addr *prefix, uint8_t plen)
{
	if (plen > 128)
		return false;
	struct ip6_addr masked = *prefix;
	ip6_prefix_mask(&masked, plen);
	return ip6_addr_equal(&masked, prefix);
}

int route6_add(struct route6_table *t, const struct route6 *r)
{
	if ((unsigned)r->type >= ROUTE_TYPE_COUNT || r->type == ROUTE_BROADCAST ||
	    !prefix_valid(&r->prefix, r->plen))
		return -EINVAL;
	uint32_t s = slot_find(t, &r->prefix, r->plen);
	if (t->slots[s] != 0)
		return -EEXIST;
	uint32_t idx = 0;
	while (idx < ROUTE6_MAX && t->used[idx])
		idx++;
	if (idx == ROUTE6_MAX)
		return -ENOSPC;
	t->routes[idx] = *r;
	t->used[idx] = true;
	t->slots[s] = (uint16_t)(idx + 1);
	plen_use(t, r->plen, 1);
	return 0;
}

int route6_del(struct route6_table *t, const struct ip6_addr *prefix, uint8_t plen,
	       unsigned type_mask)
{
	if (!prefix_valid(prefix, plen))
		return -EINVAL;
	uint32_t s = slot_find(t, prefix, plen);
	if (t->slots[s] == 0)
		return -ENOENT;
	uint32_t idx = t->slots[s] - 1u;
	if (type_mask != 0 && !(type_mask & (1u << t->routes[idx].type)))
		return -ENOENT;
	slot_clear(t, s);
	t->used[idx] = false;
	plen_use(t, plen, -1);
	return 0;
}

const struct route6 *route6_lookup(const struct route6_table *t, const struct ip6_addr *dst)
{
	for (unsigned i = 0; i < t->nb_plens; i++) {
		struct ip6_addr p = *dst;
		ip6_prefix_mask(&p, t->plens[i]);
		uint32_t s = slot_find(t, &p, t->plens[i]);
		if (t->slots[s] != 0)
			return &t->routes[t->slots[s] - 1];
	}
	return NULL;
}

const struct route6 *route6_find(const struct route6_table *t, const struct ip6_addr *prefix,
				 uint8_t plen)
{
	if (!prefix_valid(prefix, plen))
		return NULL;
	uint32_t s = slot_find(t, prefix, plen);
	return t->slots[s] == 0 ? NULL : &t->routes[t->slots[s] - 1];
}

int route6_walk(const struct route6_table *t, int (*fn)(const struct route6 *, void *),
		void *arg)
{
	for (uint32_t i = 0; i < ROUTE6_MAX; i++) {
		if (!t->used[i])
			continue;
		int rc = fn(&t->routes[i], arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
