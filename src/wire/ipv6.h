/* IPv6 headers and extension headers (RFC 8200), addresses and their text (RFC 4291,
 * RFC 5952). */
#ifndef DPS_WIRE_IPV6_H
#define DPS_WIRE_IPV6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "status.h"

#define IP6_HDR_LEN 40
#define IP6_MIN_MTU 1280 /* RFC 8200 §5 */

#define IP6_OFF_VTC_FLOW 0
#define IP6_OFF_PAYLOAD_LEN 4
#define IP6_OFF_NEXT_HEADER 6
#define IP6_OFF_HOP_LIMIT 7
#define IP6_OFF_SRC 8
#define IP6_OFF_DST 24

/* Next Header values (IANA "Assigned Internet Protocol Numbers"). */
#define IP6_NH_HOPOPTS 0
#define IP6_NH_TCP 6
#define IP6_NH_UDP 17
#define IP6_NH_ROUTING 43
#define IP6_NH_FRAGMENT 44
#define IP6_FRAG_HDR_LEN 8 /* RFC 8200 §4.5 */
#define IP6_NH_ESP 50
#define IP6_NH_AH 51
#define IP6_NH_ICMPV6 58
#define IP6_NH_NONE 59
#define IP6_NH_DSTOPTS 60

#define IP6_DEFAULT_HOP_LIMIT 64

struct ip6_addr {
	uint8_t b[16];
};

/* The parsed fixed header, host order. */
struct ip6_repr {
	uint8_t tclass;          /* traffic class: DSCP and ECN (RFC 8200 §7, RFC 3168) */
	uint32_t flow;           /* 20-bit flow label (RFC 6437) */
	uint16_t payload_len;    /* bytes after the fixed header; 40 + it <= the buffer's length */
	uint8_t next_header;
	uint8_t hop_limit;
	struct ip6_addr src;
	struct ip6_addr dst;
};

/* Parses the fixed header at buf[0..len), where len is every byte the link layer delivered
 * (padding included). Checks, in order: 40 bytes present (TRUNCATED), version 6
 * (BAD_VERSION), payload length not zero (a jumbogram, RFC 2675, which no link here carries:
 * BAD_LENGTH, so that a zero never reads as "to the end of the buffer") and 40 + payload
 * length <= len (BAD_LENGTH), then semantics (BAD_FIELD): the source is neither multicast
 * (RFC 4291 §2.7), the loopback address (§2.5.3) nor IPv4-mapped (§2.5.5.2), the
 * destination is not the unspecified address (§2.5.2). The caller trims the frame to
 * 40 + payload_len. Extension headers are ip6_ext_walk's. */
enum wire_status ip6_parse(const uint8_t *buf, size_t len, struct ip6_repr *out);

/* Writes the 40-byte fixed header from repr. Returns 40, or 0 when cap is too small. */
size_t ip6_build(uint8_t *buf, size_t cap, const struct ip6_repr *repr);

/* The fragment header (RFC 8200 §4.5), host order. */
struct ip6_frag_repr {
	uint16_t offset;      /* in bytes (field value * 8) */
	bool more;            /* M flag */
	uint32_t id;
};

/* What a walk of the extension headers found. */
struct ip6_ext_info {
	uint8_t proto;        /* the Next Header after the last extension header walked */
	size_t l4_off;        /* where that header starts, from the start of the IPv6 header */
	size_t proto_field_off; /* the byte that holds proto (for Parameter Problem code 1) */
	unsigned count;       /* extension headers walked */
	bool has_frag;
	struct ip6_frag_repr frag;
	size_t frag_hdr_off;  /* where the fragment header starts, when has_frag */
	size_t unfrag_len;    /* bytes of the per-fragment headers before it (RFC 8200 §4.5) */
	bool router_alert;    /* Hop-by-Hop Router Alert option (RFC 2711) */
	/* When the walk fails: the ICMPv6 Parameter Problem the datagram deserves (RFC 8200
	 * §4: code 0 erroneous field, 1 unrecognized Next Header, 2 unrecognized option,
	 * RFC 7112 code 3 incomplete header chain), pointer the offending byte's offset from
	 * the start of the IPv6 header, and send_error whether to send it at all (an option
	 * whose type says "discard silently", or "discard, no ICMP to multicast"). */
	uint8_t problem_code;
	uint32_t problem_pointer;
	bool send_error;
};

/* Most extension headers a datagram may carry before the walk gives up (RFC 8200 §4.1 lists
 * six kinds, each once but Destination Options twice). */
#define IP6_EXT_MAX 8

/* Walks the extension headers of the datagram pkt[0..len) (fixed header included, len its
 * trimmed length) from the fixed header's Next Header, up to the first header that is not
 * Hop-by-Hop, Routing, Fragment or Destination Options, or up to a fragment header whose
 * offset is not zero (the rest belongs to the reassembled datagram). to_multicast: the
 * destination is a multicast address (an option's type may then ask for no ICMP error).
 * Checks: each header within len (BAD_HDR_LEN; for a first fragment RFC 7112's incomplete
 * chain, code 3), Hop-by-Hop only first (BAD_FIELD, code 1), options well formed with at
 * most 7 bytes of zero padding in a row (BAD_OPTION, RFC 4942 §2.1.9.5), an unknown
 * option's action (RFC 8200 §4.2: skip, or BAD_OPTION with code 2), a Routing header with
 * segments left (type 0 is deprecated by RFC 5095 and no other type is processed here:
 * BAD_FIELD, code 0), one fragment header at most (an atomic fragment, offset 0 and no M,
 * passes as RFC 6946 says), a non-last fragment whose length is not a multiple of 8 and a
 * fragment reaching past 65535 bytes (BAD_FIELD, code 0), at most IP6_EXT_MAX headers
 * (BAD_FIELD). */
enum wire_status ip6_ext_walk(const uint8_t *pkt, size_t len, bool to_multicast,
			      struct ip6_ext_info *out);

/* Address classes (RFC 4291 §2.4). */
static inline bool ip6_addr_equal(const struct ip6_addr *a, const struct ip6_addr *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}
static inline bool ip6_is_multicast(const struct ip6_addr *a) { return a->b[0] == 0xff; }
static inline bool ip6_is_link_local(const struct ip6_addr *a)
{
	return a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}
bool ip6_is_unspecified(const struct ip6_addr *a);
bool ip6_is_loopback(const struct ip6_addr *a);
/* ::ffff:0:0/96, an IPv4 address in an IPv6 socket (RFC 4291 §2.5.5.2). */
bool ip6_is_v4mapped(const struct ip6_addr *a);
/* The solicited-node multicast group of a (RFC 4291 §2.7.1): ff02::1:ffXX:XXXX. */
struct ip6_addr ip6_solicited_node(const struct ip6_addr *a);
/* Sets the last 64 bits of a to the modified EUI-64 interface identifier of the MAC mac
 * (RFC 4291 §2.5.1 and appendix A: ff:fe in the middle, the universal/local bit
 * inverted), as Linux makes by default (addr_gen_mode eui64). */
void ip6_set_eui64(struct ip6_addr *a, const uint8_t mac[6]);

/* RFC 5952 text (lowercase, no leading zeros, the longest run of two or more zero groups
 * as "::", the first one on a tie, a v4-mapped address with its dotted quad) into buf (>= 46
 * bytes); returns buf. */
char *ip6_addr_format(const struct ip6_addr *a, char *buf, size_t cap);
/* Parses RFC 4291 §2.2 text: eight groups of 1-4 hex digits, at most one "::", optionally
 * ending in a dotted quad; nothing else (no zone, no spaces). Returns 0 or -EINVAL. */
int ip6_addr_parse(const char *s, struct ip6_addr *out);
/* Parses "ADDR/N" (N 0..128) or, when the slash is absent, "ADDR" as /128. 0 or -EINVAL. */
int ip6_prefix_parse(const char *s, struct ip6_addr *addr, uint8_t *plen);
/* Clears the bits of a past its first plen. */
void ip6_prefix_mask(struct ip6_addr *a, uint8_t plen);

#endif
