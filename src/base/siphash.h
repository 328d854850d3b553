/* SipHash-2-4 (J.-P. Aumasson, D. J. Bernstein, "SipHash: a fast short-input PRF", 2012): a
 * keyed 64-bit PRF for short inputs. TCP uses it as the F() of RFC 6528 (initial sequence
 * numbers) and as the MAC of SYN cookies, where the input is a 4-tuple and a few counters and
 * the key is secret, so an off-path attacker can neither predict nor forge the output. */
#ifndef DPS_BASE_SIPHASH_H
#define DPS_BASE_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

/* The 128-bit key as two 64-bit words. k0 is the key's bytes 0..7 read little-endian, k1 its
 * bytes 8..15 (the paper's convention, which its test vectors use). */
struct siphash_key {
	uint64_t k0;
	uint64_t k1;
};

/* SipHash-2-4 of len bytes at data (any alignment; data may be NULL when len is 0). The result
 * is the paper's 64-bit output as an integer; its little-endian bytes are the published
 * test-vector bytes. */
uint64_t siphash24(const struct siphash_key *k, const void *data, size_t len);

#endif
