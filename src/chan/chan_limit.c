#include "chan_limit.h"

#include <string.h>

const struct chan_limit_info chan_limit_info[CHAN_LIMIT_COUNT] = {
#define CHAN_LIMIT_INFO(id, n, pu, t) [CHAN_LIMIT_##id] = {.name = n, .per_user = pu, .text = t},
	CHAN_LIMIT_LIST(CHAN_LIMIT_INFO)
#undef CHAN_LIMIT_INFO
};

static uint32_t min_u32(uint64_t a, uint64_t b)
{
	uint64_t m = a < b ? a : b;
	return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

void chan_limits_default(struct chan_limits *l, const struct chan_limit_bounds *b,
			 uint64_t ram_bytes)
{
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		atomic_init(&l->v[k], b->max[k]);
	uint32_t apps = b->max[CHAN_LIMIT_APPS_PER_USER] / 8;
	atomic_init(&l->v[CHAN_LIMIT_APPS_PER_USER], apps == 0 ? 1 : apps);
	uint32_t socks = min_u32(CHAN_SOCKS_PER_APP_DEFAULT, b->max[CHAN_LIMIT_SOCKS_PER_APP]);
	atomic_init(&l->v[CHAN_LIMIT_SOCKS_PER_APP], socks);
	atomic_init(&l->v[CHAN_LIMIT_SOCKS_PER_USER],
		    min_u32(4ull * socks, b->max[CHAN_LIMIT_SOCKS_PER_USER]));
	uint32_t listeners = b->max[CHAN_LIMIT_LISTENERS_PER_USER] / CHAN_LISTENERS_PER_USER_SHARE;
	atomic_init(&l->v[CHAN_LIMIT_LISTENERS_PER_USER],
		    min_u32(listeners == 0 ? 1 : listeners, b->max[CHAN_LIMIT_LISTENERS_PER_USER]));
	uint64_t half_ram_mb = ram_bytes / 2 >> 20;
	if (half_ram_mb == 0)
		half_ram_mb = 1;
	atomic_init(&l->v[CHAN_LIMIT_ARENA_MB_PER_APP],
		    min_u32(half_ram_mb, b->max[CHAN_LIMIT_ARENA_MB_PER_APP]));
	atomic_init(&l->v[CHAN_LIMIT_ARENA_MB_PER_USER],
		    min_u32(half_ram_mb, b->max[CHAN_LIMIT_ARENA_MB_PER_USER]));
	atomic_init(&l->v[CHAN_LIMIT_BINDS_PER_APP],
		    min_u32(CHAN_BINDS_PER_APP_DEFAULT, b->max[CHAN_LIMIT_BINDS_PER_APP]));
}

int chan_limit_by_name(const char *name)
{
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		if (strcmp(name, chan_limit_info[k].name) == 0)
			return (int)k;
	return -1;
}
