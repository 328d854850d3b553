/* A token bucket on a millisecond clock, for ICMP errors (RFC 1812 §4.3.2.8) and ARP. */
#ifndef DPS_BASE_RATELIMIT_H
#define DPS_BASE_RATELIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct ratelimit {
	uint32_t rate_per_s;   /* 0: unlimited */
	uint32_t burst;
	uint64_t tokens_milli; /* thousandths of a token, so slow rates refill smoothly */
	uint64_t last_ms;
};

static inline void ratelimit_init(struct ratelimit *r, uint32_t rate_per_s, uint32_t burst,
				  uint64_t now_ms)
{
	r->rate_per_s = rate_per_s;
	r->burst = burst;
	r->tokens_milli = (uint64_t)burst * 1000;
	r->last_ms = now_ms;
}

/* Takes one token if there is one. */
static inline bool ratelimit_allow(struct ratelimit *r, uint64_t now_ms)
{
	if (r->rate_per_s == 0)
		return true;
	if (now_ms > r->last_ms) {
		uint64_t cap = (uint64_t)r->burst * 1000;
		uint64_t add = (now_ms - r->last_ms) * r->rate_per_s;
		r->tokens_milli = r->tokens_milli + add > cap ? cap : r->tokens_milli + add;
		r->last_ms = now_ms;
	}
	if (r->tokens_milli < 1000)
		return false;
	r->tokens_milli -= 1000;
	return true;
}

#endif
