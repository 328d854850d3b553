#include "route.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_lpm.h>

#include "wire/ipv4.h"

/* rte_lpm takes depths 1..32 only: the default route (plen 0) is kept beside it, in
 * default_idx, and answers lookups that the LPM misses. */
#define ROUTE_NO_DEFAULT UINT32_MAX

struct route_table {
	struct rte_lpm *lpm;
	uint32_t count;
	uint32_t default_idx;   /* index of the /0 route, or ROUTE_NO_DEFAULT */
	bool used[ROUTE_MAX];
	struct route routes[ROUTE_MAX];
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

struct route_table *route_table_create(const char *name, int socket_id)
{
	struct route_table *t = calloc(1, sizeof(*t));
	if (t == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	/* Each /25../32 prefix may need a tbl8 group; ROUTE_MAX of them bounds the worst case
	 * (1 KiB each). */
	struct rte_lpm_config cfg = {
		.max_rules = ROUTE_MAX,
		.number_tbl8s = ROUTE_MAX,
	};
	t->default_idx = ROUTE_NO_DEFAULT;
	t->lpm = rte_lpm_create(name, socket_id, &cfg);
	if (t->lpm == NULL) {
		free(t);
		return NULL;
	}
	return t;
}

void route_table_destroy(struct route_table *t)
{
	if (t == NULL)
		return;
	rte_lpm_free(t->lpm);
	free(t);
}

/* The index of exactly prefix/plen; -EINVAL for host bits set (rte_lpm would mask them and
 * find the covering prefix) or plen > 32, -ENOENT when absent. */
static int route_index_find(const struct route_table *t, uint32_t prefix, uint8_t plen)
{
	uint32_t idx;
	if (plen > 32 || (prefix & ~ip4_mask(plen)) != 0)
		return -EINVAL;
	if (plen == 0)
		return t->default_idx == ROUTE_NO_DEFAULT ? -ENOENT : (int)t->default_idx;
	if (rte_lpm_is_rule_present(t->lpm, prefix, plen, &idx) != 1)
		return -ENOENT;
	return (int)idx;
}

int route_add(struct route_table *t, const struct route *r)
{
	if (r->plen > 32 || (r->prefix & ~ip4_mask(r->plen)) != 0 ||
	    (unsigned)r->type >= ROUTE_TYPE_COUNT)
		return -EINVAL;
	if (route_index_find(t, r->prefix, r->plen) >= 0)
		return -EEXIST;
	uint32_t idx = 0;
	while (idx < ROUTE_MAX && t->used[idx])
		idx++;
	if (idx == ROUTE_MAX)
		return -ENOSPC;
	if (r->plen == 0) {
		t->default_idx = idx;
	} else {
		int rc = rte_lpm_add(t->lpm, r->prefix, r->plen, idx);
		if (rc < 0)
			return rc == -ENOSPC ? -ENOSPC : rc;
	}
	t->routes[idx] = *r;
	t->used[idx] = true;
	t->count++;
	return 0;
}

int route_del(struct route_table *t, uint32_t prefix, uint8_t plen, unsigned type_mask)
{
	int idx = route_index_find(t, prefix, plen);
	if (idx < 0)
		return idx;
	if (type_mask != 0 && !(type_mask & (1u << t->routes[idx].type)))
		return -ENOENT;
	if (plen == 0)
		t->default_idx = ROUTE_NO_DEFAULT;
	else
		rte_lpm_delete(t->lpm, prefix, plen);
	t->used[idx] = false;
	t->count--;
	return 0;
}

const struct route *route_lookup(const struct route_table *t, uint32_t dst)
{
	uint32_t idx;
	if (rte_lpm_lookup(t->lpm, dst, &idx) != 0) {
		if (t->default_idx == ROUTE_NO_DEFAULT)
			return NULL;
		idx = t->default_idx;
	}
	return &t->routes[idx];
}

const struct route *route_find(const struct route_table *t, uint32_t prefix, uint8_t plen)
{
	int idx = route_index_find(t, prefix, plen);
	return idx < 0 ? NULL : &t->routes[idx];
}

int route_walk(const struct route_table *t, int (*fn)(const struct route *, void *), void *arg)
{
	for (uint32_t i = 0; i < ROUTE_MAX; i++) {
		if (!t->used[i])
			continue;
		int rc = fn(&t->routes[i], arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
