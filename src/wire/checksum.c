/* The Internet checksum: RFC 1071 (computation), RFC 1624 (incremental update). */
#include "checksum.h"

#include "bytes.h"

/* Folds carries above bit 15 back into the low 16 bits (end-around carry, RFC 1071 §2). */
static uint32_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint32_t)sum;
}

uint32_t wire_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc = sum;   /* 64 bits: no carry is lost, whatever len is */
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		acc += wire_get_be16(p + i);
	if (len & 1)
		acc += (uint32_t)p[len - 1] << 8; /* pad the odd byte with zero (RFC 1071 §4.1) */

	/* Folding keeps the value modulo 0xffff, so the result is an equivalent 32-bit sum. */
	while (acc >> 32)
		acc = (acc & 0xffffffffu) + (acc >> 32);
	return (uint32_t)acc;
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
