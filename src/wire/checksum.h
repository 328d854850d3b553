/* The Internet checksum (RFC 1071) and its incremental update (RFC 1624). */
#ifndef DPS_WIRE_CHECKSUM_H
#define DPS_WIRE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* Adds the 16-bit big-endian words of buf[0..len) to the running 32-bit sum `sum` and returns
 * a 32-bit sum equivalent to the total modulo 0xffff (not necessarily the unfolded one). An odd trailing byte is padded with zero, so chunks other than the last
 * one must have even length. */
uint32_t wire_csum_add(uint32_t sum, const void *buf, size_t len);

/* Folds a running sum to 16 bits and complements it: the value to store in a header, in host
 * order (store it with wire_put_be16). */
uint16_t wire_csum_finish(uint32_t sum);

/* Checksum of one contiguous buffer, host order. Verifying a header that includes its own
 * checksum field yields 0 when the header is intact. */
uint16_t wire_csum(const void *buf, size_t len);

/* RFC 1624 eqn. 3: the new checksum (host order) after a 16-bit field changed from old_word
 * to new_word (both host order), without touching the rest of the data. It equals a full
 * recomputation except when the data becomes all zeros: then it gives 0x0000 where only
 * 0xffff verifies (callers that can produce all-zero data must check a 0 result). */
uint16_t wire_csum_update16(uint16_t csum, uint16_t old_word, uint16_t new_word);

/* The running sum of the IPv4 pseudo-header that TCP and UDP checksums cover (RFC 9293 §3.1,
 * RFC 768): source and destination addresses, zero, protocol, and len, the length of the
 * TCP or UDP header plus data (all host order). Pass the result as `sum` to wire_csum_add over
 * the segment, then wire_csum_finish. */
uint32_t wire_csum_pseudo4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);

/* The same for IPv6 (RFC 8200 §8.1): source, destination (network order, as in the header),
 * the upper-layer packet length len and the Next Header value of the upper layer. */
uint32_t wire_csum_pseudo6(const uint8_t src[16], const uint8_t dst[16], uint8_t next_header,
			   uint32_t len);

#endif
