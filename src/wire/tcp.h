/* TCP segments (RFC 9293) and their options: MSS (RFC 9293 §3.2), window scale and timestamps
 * (RFC 7323), SACK-permitted and SACK (RFC 2018). */
#ifndef DPS_WIRE_TCP_H
#define DPS_WIRE_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define TCP_HDR_MIN_LEN 20
#define TCP_HDR_MAX_LEN 60
#define TCP_OPTS_MAX_LEN (TCP_HDR_MAX_LEN - TCP_HDR_MIN_LEN)

#define TCP_OFF_SRC_PORT 0
#define TCP_OFF_DST_PORT 2
#define TCP_OFF_SEQ 4
#define TCP_OFF_ACK 8
#define TCP_OFF_DATA_OFF 12 /* high nibble: header length in 32-bit words; low nibble reserved */
#define TCP_OFF_FLAGS 13
#define TCP_OFF_WINDOW 14
#define TCP_OFF_CSUM 16
#define TCP_OFF_URGENT 18

/* Control bits, the byte at TCP_OFF_FLAGS (RFC 9293 §3.1; ECE and CWR from RFC 3168). */
#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_PSH 0x08
#define TCP_FLAG_ACK 0x10
#define TCP_FLAG_URG 0x20
#define TCP_FLAG_ECE 0x40
#define TCP_FLAG_CWR 0x80

/* Option kinds (IANA registry) and their fixed lengths, kind and length bytes included. */
#define TCP_OPT_EOL 0
#define TCP_OPT_NOP 1
#define TCP_OPT_MSS 2
#define TCP_OPT_WSCALE 3
#define TCP_OPT_SACK_PERM 4
#define TCP_OPT_SACK 5
#define TCP_OPT_TIMESTAMPS 8

#define TCP_OPT_MSS_LEN 4
#define TCP_OPT_WSCALE_LEN 3
#define TCP_OPT_SACK_PERM_LEN 2
#define TCP_OPT_TIMESTAMPS_LEN 10
#define TCP_OPT_SACK_BASE_LEN 2   /* then 8 bytes per block */
#define TCP_OPT_SACK_BLOCK_LEN 8

#define TCP_SACK_MAX_BLOCKS 4     /* 2 + 4 * 8 = 34 bytes: the most the option area holds */
#define TCP_WSCALE_MAX 14         /* RFC 7323 §2.3 */

/* One SACK block: the sequence numbers of the first byte and of the byte after the last. */
struct tcp_sack_block {
	uint32_t left;
	uint32_t right;
};

/* The options of one segment, host order. Which of them count depends on the segment (MSS,
 * window scale and SACK-permitted only in a SYN): that is the state machine's decision. */
struct tcp_options {
	bool has_mss;
	uint16_t mss;
	bool has_wscale;
	uint8_t wscale;           /* 0..14: larger shifts are clamped to 14 (RFC 7323 §2.3) */
	bool sack_permitted;
	bool has_timestamps;
	uint32_t tsval;
	uint32_t tsecr;
	uint8_t sack_count;       /* 0..TCP_SACK_MAX_BLOCKS */
	struct tcp_sack_block sack_blocks[TCP_SACK_MAX_BLOCKS];
};

/* The parsed segment header, host order. The payload is buf[hdr_len..len) of the parsed
 * buffer. */
struct tcp_repr {
	uint16_t src_port;
	uint16_t dst_port;
	uint32_t seq;
	uint32_t ack;
	size_t hdr_len;           /* 20..60, a multiple of 4 */
	uint8_t flags;            /* TCP_FLAG_* */
	uint16_t window;          /* as on the wire, not scaled */
	uint16_t urgent;
	struct tcp_options options;
};

/* Parses the segment buf[0..len), where len is the IP payload length (header and data).
 * Checks, in order: 20 bytes present (TRUNCATED), data offset >= 5 and header within len
 * (BAD_HDR_LEN), the options through tcp_options_parse (BAD_OPTION), then semantics
 * (BAD_FIELD): neither port is 0 (any combination of flags passes: tcp_input, which knows
 * whether a connection exists, decides what SYN with FIN or RST means). The reserved bits
 * of byte 12 are ignored (RFC 9293 §3.1: "must be zero in generated segments and must be
 * ignored in received segments"). The checksum is not examined: see tcp_checksum. */
enum wire_status tcp_parse(const uint8_t *buf, size_t len, struct tcp_repr *out);

/* Walks the options area opts[0..len) (len = hdr_len - 20). EOL ends the walk, NOP is one
 * byte; every other option needs a length byte >= 2 that stays within len. Known kinds must
 * have their exact length: MSS 4, window scale 3, SACK-permitted 2, timestamps 10, SACK 2 + 8n
 * with n 1..4. Any failure is BAD_OPTION. Unknown kinds are skipped by their length.
 * A window scale above 14 is read as 14 (RFC 7323 §2.3: "MUST use 14 instead"), not refused.
 * An option that appears twice: the last one wins, as in Linux (tcp_parse_options), so that
 * we read a segment as the kernel peers and middleboxes do; the RFCs are silent. */
enum wire_status tcp_options_parse(const uint8_t *opts, size_t len, struct tcp_options *out);

/* Writes the header of r (hdr_len is ignored) with the options in r->options, laid out as
 * Linux does (tcp_options_write): MSS; SACK-permitted and timestamps together (4,2,8,10), or
 * either one after two NOPs; NOP + window scale; two NOPs + SACK. Every item is a multiple of
 * 4 bytes, so no padding follows. SACK blocks that do not fit in the 40-byte option area are
 * left out from the last one (RFC 2018 §4: the first block is the most recent), as Linux
 * does; a sack_count above 4 counts as 4. The window scale is written as given (the caller
 * keeps it <= 14). The reserved bits and the checksum field are 0: the caller sums the header
 * with its payload (tcp_checksum) and stores the result. Returns the header length, or 0 when
 * cap is too small for it. */
size_t tcp_build(uint8_t *buf, size_t cap, const struct tcp_repr *r);

/* The TCP checksum of seg[0..len) under the IPv4 pseudo-header of src and dst (host order;
 * RFC 9293 §3.1), host order. With the checksum field zeroed it is the value to store; over
 * a segment that carries its checksum it is 0 when the segment is intact. len <= 65535. */
uint16_t tcp_checksum(uint32_t src, uint32_t dst, const uint8_t *seg, size_t len);

#endif
