/* An address of either family as one 16-byte value: IPv6 as itself, IPv4 as its
 * IPv4-mapped IPv6 address ::ffff:a.b.c.d (RFC 4291 §2.5.5.2), so that one table keyed by
 * address (the neighbour cache, sockets) serves both families. */
#ifndef DPS_WIRE_INET_ADDR_H
#define DPS_WIRE_INET_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ipv6.h"

struct inet_addr {
	uint8_t b[16];
};

/* From an IPv4 address in host order. */
static inline struct inet_addr inet_addr_v4(uint32_t a)
{
	struct inet_addr x = {.b = {[10] = 0xff, [11] = 0xff, [12] = (uint8_t)(a >> 24),
				    [13] = (uint8_t)(a >> 16), [14] = (uint8_t)(a >> 8),
				    [15] = (uint8_t)a}};
	return x;
}

/* A pointer to a temporary inet_addr for an IPv4 address (host order), for the calls that
 * take one (a compound literal: it lives to the end of the enclosing block). */
#define INET_ADDR_V4(a) ((const struct inet_addr[]){inet_addr_v4(a)})

static inline struct inet_addr inet_addr_v6(const struct ip6_addr *a)
{
	struct inet_addr x;
	memcpy(x.b, a->b, 16);
	return x;
}

/* The same for an IPv6 address. */
#define INET_ADDR_V6(a) ((const struct inet_addr[]){inet_addr_v6(a)})

static inline bool inet_addr_is_v4(const struct inet_addr *a)
{
	static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
	return memcmp(a->b, mapped, sizeof(mapped)) == 0;
}

static inline struct ip6_addr inet_addr_to_v6(const struct inet_addr *a)
{
	struct ip6_addr x;
	memcpy(x.b, a->b, 16);
	return x;
}

/* The IPv4 address in host order; meaningful when inet_addr_is_v4. */
static inline uint32_t inet_addr_to_v4(const struct inet_addr *a)
{
	return (uint32_t)a->b[12] << 24 | (uint32_t)a->b[13] << 16 | (uint32_t)a->b[14] << 8 |
	       a->b[15];
}

static inline bool inet_addr_equal(const struct inet_addr *a, const struct inet_addr *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}

/* The wildcard of a family: 0.0.0.0 as a mapped address for IPv4, :: for IPv6. A socket
 * bound to :: hears IPv4 too unless it is IPv6-only (RFC 3493 §5.3, IPV6_V6ONLY). */
static inline struct inet_addr inet_addr_any(bool v6)
{
	return v6 ? (struct inet_addr){{0}} : inet_addr_v4(0);
}

/* Either family's wildcard. */
static inline bool inet_addr_is_any(const struct inet_addr *a)
{
	static const uint8_t zero[16];
	return memcmp(a->b, zero, 16) == 0 || (inet_addr_is_v4(a) && inet_addr_to_v4(a) == 0);
}

/* The pseudo-header sum of a TCP or UDP segment of len bytes between src and dst, both of
 * one family: RFC 793 §3.1's for IPv4, RFC 8200 §8.1's for IPv6 (wire_csum_pseudo4/6). */
uint32_t inet_addr_csum_pseudo(const struct inet_addr *src, const struct inet_addr *dst,
			       uint8_t proto, uint32_t len);

/* A dotted quad for IPv4, RFC 5952 text for IPv6, into buf (>= INET_ADDR_TEXT_LEN bytes);
 * returns buf. */
#define INET_ADDR_TEXT_LEN 46
char *inet_addr_format(const struct inet_addr *a, char *buf, size_t cap);
/* Parses either family's text (a dotted quad, or what ip6_addr_parse takes). 0 or -EINVAL. */
int inet_addr_parse(const char *s, struct inet_addr *out);

#endif
