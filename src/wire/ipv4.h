/* IPv4 headers (RFC 791) and options (RFC 791, RFC 7126). */
#ifndef DPS_WIRE_IPV4_H
#define DPS_WIRE_IPV4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define IP4_HDR_MIN_LEN 20
#define IP4_HDR_MAX_LEN 60
#define IP4_MAX_LEN 65535

#define IP4_OFF_VER_IHL 0
#define IP4_OFF_TOS 1
#define IP4_OFF_TOTAL_LEN 2
#define IP4_OFF_ID 4
#define IP4_OFF_FRAG 6
#define IP4_OFF_TTL 8
#define IP4_OFF_PROTO 9
#define IP4_OFF_CSUM 10
#define IP4_OFF_SRC 12
#define IP4_OFF_DST 16

#define IP4_FLAG_RESERVED 0x8000
#define IP4_FLAG_DF 0x4000
#define IP4_FLAG_MF 0x2000
#define IP4_FRAG_OFF_MASK 0x1fff

#define IP4_PROTO_ICMP 1
#define IP4_PROTO_TCP 6
#define IP4_PROTO_UDP 17

#define IP4_DEFAULT_TTL 64
/* The ECN field, the two low bits of the TOS byte (RFC 3168 §5). */
#define IP_ECN_MASK 0x03
#define IP_ECN_ECT0 0x02
#define IP_ECN_CE 0x03

/* Option types (RFC 791, IANA registry). */
#define IP4_OPT_EOL 0
#define IP4_OPT_NOP 1
#define IP4_OPT_RR 7
#define IP4_OPT_TS 68
#define IP4_OPT_LSRR 131
#define IP4_OPT_SSRR 137
#define IP4_OPT_RA 148

/* The parsed header, host order. */
struct ip4_repr {
	size_t hdr_len;      /* 20..60 */
	uint8_t tos;
	uint16_t total_len;  /* header + payload; <= the parsed buffer's length */
	uint16_t id;
	bool df;
	bool mf;
	uint16_t frag_off;   /* in bytes (field value * 8) */
	uint8_t ttl;
	uint8_t proto;
	uint32_t src;
	uint32_t dst;
};

/* Parses the header at buf[0..len), where len is every byte the link layer delivered (padding
 * included). Checks, in order: 20 bytes present (TRUNCATED), version 4 (BAD_VERSION),
 * IHL >= 5 and header within len (BAD_HDR_LEN), header <= total length <= len (BAD_LENGTH),
 * checksum when verify_csum (BAD_CHECKSUM), then semantics (BAD_FIELD): the reserved flag is
 * clear; fragment offset + total length <= 65535; a fragment with MF set carries a multiple of 8
 * payload bytes (RFC 791); the source is not multicast, 255.255.255.255 or 127/8 (RFC 1122
 * §3.2.1.3, RFC 1812 §5.3.7). The caller trims the frame to
 * total_len. Options are not examined: see ip4_options_check. */
enum wire_status ip4_parse(const uint8_t *buf, size_t len, bool verify_csum,
			   struct ip4_repr *out);

/* What ip4_options_check found. */
struct ip4_opts_info {
	bool source_route;   /* LSRR or SSRR present (RFC 7126 §4.3, §4.4: drop) */
	bool record_route;
	bool timestamp;
	bool router_alert;
	unsigned unknown;    /* options of unknown type, skipped by their length */
};

/* Walks the options area opts[0..len) (len = hdr_len - 20). Every option but EOL and NOP
 * needs a length byte >= 2 that stays within len (else BAD_OPTION); EOL ends the walk. */
enum wire_status ip4_options_check(const uint8_t *opts, size_t len, struct ip4_opts_info *out);

/* Writes a 20-byte header (no options) from repr, computing the checksum; repr->hdr_len is
 * ignored and frag_off is rounded down to a multiple of 8. Returns 20, or 0 when cap is too
 * small. */
size_t ip4_build(uint8_t *buf, size_t cap, const struct ip4_repr *repr);

/* Address classes, host order. */
static inline bool ip4_is_multicast(uint32_t a) { return (a & 0xf0000000u) == 0xe0000000u; }
static inline bool ip4_is_limited_broadcast(uint32_t a) { return a == 0xffffffffu; }
static inline bool ip4_is_loopback(uint32_t a) { return (a >> 24) == 127; }
static inline bool ip4_is_zeronet(uint32_t a) { return (a >> 24) == 0; }

/* Dotted quad into buf (>= 16 bytes); returns buf. */
char *ip4_addr_format(uint32_t addr, char *buf, size_t cap);
/* Parses a strict dotted quad ("10.0.0.1": four decimal parts 0..255, no sign, no leading
 * zeros — inet_aton would read "010" as octal — no trailing bytes). Returns 0 or -EINVAL. */
int ip4_addr_parse(const char *s, uint32_t *out);
/* Parses "A.B.C.D/N" (N 0..32) or, when the slash is absent, "A.B.C.D" as /32.
 * Returns 0 or -EINVAL. */
int ip4_prefix_parse(const char *s, uint32_t *addr, uint8_t *plen);
static inline uint32_t ip4_mask(uint8_t plen) { return plen ? ~0u << (32 - plen) : 0; }

#endif
