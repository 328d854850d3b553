/* Deterministic randomness for unit tests: the same seed gives the same orders and sizes on
 * every run, so a failure always reproduces. */
#ifndef DPS_TEST_RAND_H
#define DPS_TEST_RAND_H

#include <stdint.h>

/* xorshift32; *s must not be 0. */
static inline uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/* Fisher-Yates shuffle of v[0..n). */
static inline void shuffle(unsigned *v, unsigned n, uint32_t seed)
{
	for (unsigned i = n; i > 1; i--) {
		unsigned j = rnd(&seed) % i, t = v[i - 1];
		v[i - 1] = v[j];
		v[j] = t;
	}
}

#endif
