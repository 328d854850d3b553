/* The Toeplitz hash that NICs compute for receive-side scaling (Microsoft's RSS
 * specification), in software: the stack decides which worker owns a flow with the same
 * function and key it programs into ports that hash in hardware, so both agree.
 *
 * For every input byte position a table holds the hash contribution of each byte value,
 * so a 12-byte IPv4 4-tuple costs 12 lookups instead of 96 shift-and-xor steps (36 for
 * IPv6's, whose every byte counts: 36 KB of tables). */
#ifndef DPS_WIRE_TOEPLITZ_H
#define DPS_WIRE_TOEPLITZ_H

#include <stddef.h>
#include <stdint.h>

#define TOEPLITZ_KEY_LEN 40   /* what NICs take for IPv4 and IPv6 (input ≤ 36 bytes) */
#define TOEPLITZ_MAX_INPUT 36 /* IPv6 source, destination, source port, destination port */

struct toeplitz {
	uint32_t t[TOEPLITZ_MAX_INPUT][256];
};

/* The 40-byte key "6d5a" repeated: the hash of a→b equals that of b→a (symmetric RSS), so
 * both directions of a flow that the stack forwards meet on one worker. */
extern const uint8_t toeplitz_symmetric_key[TOEPLITZ_KEY_LEN];

void toeplitz_init(struct toeplitz *t, const uint8_t key[TOEPLITZ_KEY_LEN]);

/* The hash of n ≤ TOEPLITZ_MAX_INPUT bytes, in wire order. */
uint32_t toeplitz_hash(const struct toeplitz *t, const uint8_t *in, size_t n);

/* RSS's IPv4 inputs (host-order arguments, hashed in network order): with ports for TCP and
 * UDP, addresses only for other protocols and fragments. */
uint32_t toeplitz_ipv4_l4(const struct toeplitz *t, uint32_t src, uint32_t dst, uint16_t sport,
			  uint16_t dport);
uint32_t toeplitz_ipv4(const struct toeplitz *t, uint32_t src, uint32_t dst);
/* RSS's IPv6 input with ports (the 36 bytes src | dst | sport | dport, network order), as
 * NICs hash TCP over IPv6. */
uint32_t toeplitz_ipv6_l4(const struct toeplitz *t, const uint8_t src[16], const uint8_t dst[16],
			  uint16_t sport, uint16_t dport);

#endif
