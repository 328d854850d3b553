/* Golden packets written as hex text in the wire tests, and addresses written as text.
 * Include after cmocka.h. */
#ifndef DPS_TEST_WIRE_HEX_H
#define DPS_TEST_WIRE_HEX_H

#include <stddef.h>
#include <stdint.h>

#include "ipv6.h"

/* Decodes the hex digits of text into out, at most cap bytes; returns the bytes written. */
static inline size_t hex_decode(const char *text, uint8_t *out, size_t cap)
{
	size_t n = 0;
	for (; n < cap && text[0] != '\0' && text[1] != '\0'; text += 2) {
		unsigned v = 0;
		for (int k = 0; k < 2; k++) {
			char c = text[k];
			v = v << 4 | (unsigned)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		}
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* The IPv6 address text names (which must parse). */
static inline struct ip6_addr ip6_addr_of(const char *text)
{
	struct ip6_addr a;
	assert_int_equal(ip6_addr_parse(text, &a), 0);
	return a;
}

#endif
