/* Sequence-number arithmetic modulo 2^32 (RFC 9293 §3.4): a is "before" b when the signed
 * distance from a to b is positive, which holds for distances below 2^31. */
#ifndef DPS_TCP_TCP_SEQ_H
#define DPS_TCP_TCP_SEQ_H

#include <stdbool.h>
#include <stdint.h>

static inline bool seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline bool seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline bool seq_gt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) > 0;
}

static inline bool seq_ge(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) >= 0;
}

static inline uint32_t seq_max(uint32_t a, uint32_t b)
{
	return seq_gt(a, b) ? a : b;
}

static inline uint32_t seq_min(uint32_t a, uint32_t b)
{
	return seq_lt(a, b) ? a : b;
}

/* lo <= x < hi */
static inline bool seq_in(uint32_t x, uint32_t lo, uint32_t hi)
{
	return seq_ge(x, lo) && seq_lt(x, hi);
}

#endif
