#include "toeplitz.h"

#include <string.h>

#include "bytes.h"

const uint8_t toeplitz_symmetric_key[TOEPLITZ_KEY_LEN] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

/* The 32 key bits that start at bit `bit` (0 = the key's most significant bit). */
static uint32_t key_window(const uint8_t *key, unsigned bit)
{
	uint64_t w = 0;
	for (unsigned i = 0; i < 5; i++) {
		unsigned byte = bit / 8 + i;
		w = w << 8 | (byte < TOEPLITZ_KEY_LEN ? key[byte] : 0);
	}
	return (uint32_t)(w >> (8 - bit % 8));
}

void toeplitz_init(struct toeplitz *t, const uint8_t key[TOEPLITZ_KEY_LEN])
{
	/* Input bit j (counted from the first byte's top bit) contributes the key window that
	 * starts at bit j when it is set; a byte's contribution is the xor of its bits'. */
	for (unsigned pos = 0; pos < TOEPLITZ_MAX_INPUT; pos++) {
		uint32_t bit_part[8];
		for (unsigned b = 0; b < 8; b++)
			bit_part[b] = key_window(key, pos * 8 + b);
		for (unsigned v = 0; v < 256; v++) {
			uint32_t h = 0;
			for (unsigned b = 0; b < 8; b++)
				if (v & (0x80u >> b))
					h ^= bit_part[b];
			t->t[pos][v] = h;
		}
	}
}

uint32_t toeplitz_hash(const struct toeplitz *t, const uint8_t *in, size_t n)
{
	uint32_t h = 0;
	for (size_t i = 0; i < n && i < TOEPLITZ_MAX_INPUT; i++)
		h ^= t->t[i][in[i]];
	return h;
}

uint32_t toeplitz_ipv4_l4(const struct toeplitz *t, uint32_t src, uint32_t dst, uint16_t sport,
			  uint16_t dport)
{
	uint8_t in[12];
	wire_put_be32(in, src);
	wire_put_be32(in + 4, dst);
	wire_put_be16(in + 8, sport);
	wire_put_be16(in + 10, dport);
	return toeplitz_hash(t, in, sizeof(in));
}

uint32_t toeplitz_ipv4(const struct toeplitz *t, uint32_t src, uint32_t dst)
{
	uint8_t in[8];
	wire_put_be32(in, src);
	wire_put_be32(in + 4, dst);
	return toeplitz_hash(t, in, sizeof(in));
}

uint32_t toeplitz_ipv6_l4(const struct toeplitz *t, const uint8_t src[16], const uint8_t dst[16],
			  uint16_t sport, uint16_t dport)
{
	uint8_t in[36];
	memcpy(in, src, 16);
	memcpy(in + 16, dst, 16);
	wire_put_be16(in + 32, sport);
	wire_put_be16(in + 34, dport);
	return toeplitz_hash(t, in, sizeof(in));
}
