#include "route6.h"

#include <errno.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_lpm6.h>

/* rte_lpm6 takes depths 1..128: the default route (::/0) lives beside it, as in route.c. */
#define ROUTE6_NO_DEFAULT UINT32_MAX

struct route6_table {
	struct rte_lpm6 *lpm;
	uint32_t default_idx;
	bool used[ROUTE6_MAX];
	struct route6 routes[ROUTE6_MAX];
};

struct route6_table *route6_table_create(const char *name, int socket_id)
{
	struct route6_table *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	struct rte_lpm6_config cfg = {.max_rules = ROUTE6_MAX, .number_tbl8s = ROUTE6_TBL8S};
	t->default_idx = ROUTE6_NO_DEFAULT;
	t->lpm = rte_lpm6_create(name, socket_id, &cfg);
	if (t->lpm == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void route6_table_destroy(struct route6_table *t)
{
	if (t == NULL)
		return;
	rte_lpm6_free(t->lpm);
	free(t);
}

static bool prefix_valid(const struct ip6_addr *prefix, uint8_t plen)
{
	if (plen > 128)
		return false;
	struct ip6_addr masked = *prefix;
	ip6_prefix_mask(&masked, plen);
	return ip6_addr_equal(&masked, prefix);
}

/* The index of exactly prefix/plen: -EINVAL for host bits set or plen > 128, -ENOENT. */
static int route6_index_find(const struct route6_table *t, const struct ip6_addr *prefix,
			     uint8_t plen)
{
	if (!prefix_valid(prefix, plen))
		return -EINVAL;
	if (plen == 0)
		return t->default_idx == ROUTE6_NO_DEFAULT ? -ENOENT : (int)t->default_idx;
	uint32_t idx;
	/* rte_lpm6_is_rule_present takes a non-const table; it does not change it. */
	if (rte_lpm6_is_rule_present((struct rte_lpm6 *)t->lpm, prefix->b, plen, &idx) != 1)
		return -ENOENT;
	return (int)idx;
}

int route6_add(struct route6_table *t, const struct route6 *r)
{
	if ((unsigned)r->type >= ROUTE_TYPE_COUNT || r->type == ROUTE_BROADCAST)
		return -EINVAL;
	int found = route6_index_find(t, &r->prefix, r->plen);
	if (found == -EINVAL)
		return -EINVAL;
	if (found >= 0)
		return -EEXIST;
	uint32_t idx = 0;
	while (idx < ROUTE6_MAX && t->used[idx])
		idx++;
	if (idx == ROUTE6_MAX)
		return -ENOSPC;
	if (r->plen == 0) {
		t->default_idx = idx;
	} else {
		int rc = rte_lpm6_add(t->lpm, r->prefix.b, r->plen, idx);
		if (rc < 0)
			return rc;
	}
	t->routes[idx] = *r;
	t->used[idx] = true;
	return 0;
}

int route6_del(struct route6_table *t, const struct ip6_addr *prefix, uint8_t plen,
	       unsigned type_mask)
{
	int idx = route6_index_find(t, prefix, plen);
	if (idx < 0)
		return idx;
	if (type_mask != 0 && !(type_mask & (1u << t->routes[idx].type)))
		return -ENOENT;
	if (plen == 0)
		t->default_idx = ROUTE6_NO_DEFAULT;
	else
		rte_lpm6_delete(t->lpm, prefix->b, plen);
	t->used[idx] = false;
	return 0;
}

const struct route6 *route6_lookup(const struct route6_table *t, const struct ip6_addr *dst)
{
	uint32_t idx;
	if (rte_lpm6_lookup(t->lpm, dst->b, &idx) != 0) {
		if (t->default_idx == ROUTE6_NO_DEFAULT)
			return NULL;
		idx = t->default_idx;
	}
	return &t->routes[idx];
}

const struct route6 *route6_find(const struct route6_table *t, const struct ip6_addr *prefix,
				 uint8_t plen)
{
	int idx = route6_index_find(t, prefix, plen);
	return idx < 0 ? NULL : &t->routes[idx];
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
