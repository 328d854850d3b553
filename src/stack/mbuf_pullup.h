/* Making the first bytes of a chained mbuf contiguous, as BSD's m_pullup and Linux's
 * pskb_may_pull do: the parsers of a network layer read headers through one view, and a
 * chain (software GRO's merged segment, our own loopback segments whose payload is lent,
 * or anything a fuzzer builds) need not hold them all in its first segment. */
#ifndef DPS_STACK_MBUF_PULLUP_H
#define DPS_STACK_MBUF_PULLUP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

/* Moves bytes from the segments after m's first into its first until it holds n bytes (or
 * the whole packet, when it is shorter), dropping segments it empties. True when the first
 * segment then holds min(n, pkt_len) bytes; false, with m unchanged or only partly pulled
 * (still a valid chain of the same bytes), when its buffer has no room for them or it is
 * not m's own to write (indirect, external or shared). */
bool mbuf_pullup(struct rte_mbuf *m, uint32_t n);

#endif
