/* UDP datagrams (RFC 768) and their checksum (RFC 768, RFC 1122 §4.1.3.4). */
#ifndef DPS_WIRE_UDP_H
#define DPS_WIRE_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define UDP_HDR_LEN 8
#define UDP_MAX_LEN 65535 /* the length field is 16 bits */

#define UDP_OFF_SRC_PORT 0
#define UDP_OFF_DST_PORT 2
#define UDP_OFF_LEN 4
#define UDP_OFF_CSUM 6

/* RFC 768: a transmitted checksum of zero means the sender computed none. */
#define UDP_CSUM_NONE 0x0000

/* The parsed 8-byte header, host order. */
struct udp_repr {
	uint16_t src_port;      /* 0 when the sender expects no reply (RFC 768) */
	uint16_t dst_port;
	uint16_t length;        /* header + payload: 8..the parsed buffer's length */
	uint16_t checksum;      /* as transmitted; UDP_CSUM_NONE when the sender sent none */
	size_t payload_len;     /* length - 8 */
};

/* Parses the datagram at buf[0..len), where len is the IP payload length (the IP layer has
 * already trimmed the link-layer padding to its total length). Checks, in order: 8 bytes
 * present (TRUNCATED), 8 <= length field <= len (BAD_LENGTH), destination port not 0
 * (BAD_FIELD). A length field below len is accepted: the bytes past it are padding that is
 * no part of the datagram, so the caller uses out->length — not len — from here on (for the
 * checksum as for the payload). The checksum is not examined: see udp_checksum_ok. */
enum wire_status udp_parse(const uint8_t *buf, size_t len, struct udp_repr *out);

/* Verifies the checksum of the datagram dgram[0..len) (len = the parsed length field) sent
 * from src to dst (host order), over the IPv4 pseudo-header, header and payload (RFC 768).
 * A transmitted checksum of 0 means "none" and is accepted (RFC 768; RFC 1122 §4.1.3.4 lets a
 * host refuse such datagrams, which is the caller's decision). False when len < 8 or
 * len > 65535, which no datagram has. */
bool udp_checksum_ok(uint32_t src, uint32_t dst, const uint8_t *dgram, size_t len);

/* The checksum to store at UDP_OFF_CSUM (host order) for the datagram dgram[0..len) sent
 * from src to dst (host order); whatever the checksum field holds is treated as zero. An
 * all-zero result is returned as 0xffff (RFC 768: it is sent as all ones, since 0 means
 * "none"), so the result is never 0 — except for len < 8 or len > 65535, which is no
 * datagram and returns 0. */
uint16_t udp_checksum(uint32_t src, uint32_t dst, const uint8_t *dgram, size_t len);

/* Writes the 8-byte header from r, with r->checksum stored as given (r->payload_len is
 * ignored): the caller adds the payload and then, to send a checksum, stores
 * udp_checksum() over header + payload at UDP_OFF_CSUM. Returns 8, or 0 if cap < 8. */
size_t udp_build(uint8_t *buf, size_t cap, const struct udp_repr *r);

#endif
