/* The Internet checksum: RFC 1071 (computation), RFC 1624 (incremental update). */
#include "checksum.h"

#include <string.h>

#include "bytes.h"

/* Folds carries above bit 15 back into the low 16 bits (end-around carry, RFC 1071 §2). */
static uint32_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

/* The one's complement sum does not depend on byte order (RFC 1071 §2(B)): add the buffer
 * as native 32-bit words into a 64-bit accumulator (no carry lost below 2^32 words), fold to
 * 16 bits, and swap once at the end on little-endian hosts. This is the receive path's
 * hottest loop (every TCP segment without checksum offload). */
uint32_t wire_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc = 0;

	for (; len >= 16; p += 16, len -= 16) {
		uint64_t a, b;
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		acc += (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32);
	}
	for (; len >= 4; p += 4, len -= 4) {
		uint32_t w;
		memcpy(&w, p, 4);
		acc += w;
	}
	if (len >= 2) {
		uint16_t w;
		memcpy(&w, p, 2);
		acc += w;
		p += 2;
		len -= 2;
	}
	if (len == 1) {
		/* Pad the odd byte with zero (RFC 1071 §4.1): it is the first byte of a word. */
		uint8_t last[2] = {p[0], 0};
		uint16_t w;
		memcpy(&w, last, 2);
		acc += w;
	}
	acc = (acc & 0xffffffffu) + (acc >> 32);
	acc = (acc & 0xffffffffu) + (acc >> 32);
	uint32_t folded = (uint32_t)((acc & 0xffff) + ((acc >> 16) & 0xffff) + (acc >> 32));
	folded = (folded & 0xffff) + (folded >> 16);
	folded = (folded & 0xffff) + (folded >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	folded = (uint32_t)__builtin_bswap16((uint16_t)folded);
#endif
	uint64_t total = (uint64_t)sum + folded;
	return (uint32_t)((total & 0xffffffffu) + (total >> 32));
}

uint16_t wire_csum_finish(uint32_t sum)
{
	return (uint16_t)~csum_fold(sum);
}

uint16_t wire_csum(const void *buf, size_t len)
{
	return wire_csum_finish(wire_csum_add(0, buf, len));
}

uint16_t wire_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word)
{
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). Unlike eqn. 2 it never yields 0xffff (-0)
	 * for a header whose new sum is non-zero, so it agrees with a full recomputation. */
	uint64_t sum = (uint16_t)~csum;

	sum += (uint16_t)~old_word;
	sum += new_word;
	return (uint16_t)~csum_fold(sum);
}

uint32_t wire_csum_pseudo4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
	/* Six 16-bit words (the zero byte and proto form one): at most 6 * 0xffff, no carry
	 * is lost in 32 bits. */
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

uint32_t wire_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t next_header,
			   uint32_t len)
{
	/* wire_csum_add folds to 16 bits before adding, so the three small words after the
	 * addresses lose no carry in 32 bits. */
	uint32_t sum = wire_csum_add(0, src, 16);
	sum = wire_csum_add(sum, dst, 16);
	return sum + (len >> 16) + (len & 0xffff) + next_header;
}
