/* ICMP for IPv4 (RFC 792, RFC 1191, RFC 1812 §4.3). */
#ifndef DPS_WIRE_ICMP4_H
#define DPS_WIRE_ICMP4_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ICMP4_HDR_LEN 8

#define ICMP4_OFF_TYPE 0
#define ICMP4_OFF_CODE 1
#define ICMP4_OFF_CSUM 2
#define ICMP4_OFF_REST 4

#define ICMP4_ECHO_REPLY 0
#define ICMP4_DEST_UNREACH 3
#define ICMP4_REDIRECT 5
#define ICMP4_ECHO_REQUEST 8
#define ICMP4_TIME_EXCEEDED 11
#define ICMP4_PARAM_PROBLEM 12

/* Destination-unreachable codes. */
#define ICMP4_UNREACH_NET 0
#define ICMP4_UNREACH_HOST 1
#define ICMP4_UNREACH_PROTO 2
#define ICMP4_UNREACH_PORT 3
#define ICMP4_UNREACH_FRAG_NEEDED 4
#define ICMP4_UNREACH_ADMIN 13
/* Time-exceeded codes. */
#define ICMP4_TIMEX_TTL 0
#define ICMP4_TIMEX_REASS 1

/* The parsed 8-byte header, host order. */
struct icmp4_repr {
	uint8_t type;
	uint8_t code;
	uint32_t rest;          /* bytes 4..7: id<<16|seq for echo, next-hop MTU for frag-needed */
	size_t payload_len;     /* bytes after the 8-byte header */
};

/* Parses an ICMP message buf[0..len) (len = IP payload length). Rejects fewer than 8 bytes
 * (TRUNCATED) and, when verify_csum, a checksum over all len bytes that is not zero
 * (BAD_CHECKSUM). */
enum wire_status icmp4_parse(const uint8_t *buf, size_t len, bool verify_csum,
			     struct icmp4_repr *out);

/* Writes the 8-byte header with a zero checksum field: the caller adds the payload and then
 * stores the checksum over header + payload at ICMP4_OFF_CSUM. Returns 8, or 0 if cap < 8. */
size_t icmp4_build_header(uint8_t *buf, size_t cap, const struct icmp4_repr *repr);

/* Error messages must not answer errors (RFC 1122 §3.2.2): true for types that are errors. */
bool icmp4_type_is_error(uint8_t type);

#endif
