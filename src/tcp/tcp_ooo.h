/* Receiver-side out-of-order bookkeeping for one TCP connection: which sequence ranges above
 * RCV.NXT are held (RFC 9293 §3.10.7.4: segments beyond RCV.NXT but in the window are kept
 * for later processing), and the SACK blocks that describe them (RFC 2018 §4, RFC 2883).
 *
 * The payload bytes are not here: the caller stores them in its receive FIFO at offset
 * (seq - rcv_nxt). This module only records the ranges, so it is small enough to embed in the
 * connection block and pure enough to test alone.
 *
 * Layout: a fixed array of at most TCP_OOO_MAX_RANGES half-open ranges [left, right), sorted
 * by sequence number, disjoint and never adjacent (touching ranges are merged). Each carries
 * a recency stamp, raised whenever a segment lands in it, so the SACK option can list the
 * block holding the latest segment first (RFC 2018 §4). All comparisons are modulo 2^32
 * (tcp_seq.h); every range lies within the receive window above rcv_nxt, i.e. well under
 * 2^31 away from it, which keeps them ordered. Not thread-safe: one connection, one worker. */
#ifndef DPS_TCP_TCP_OOO_H
#define DPS_TCP_TCP_OOO_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/tcp.h"

/* More ranges means more holes the peer may open in our receive window; each costs a slot
 * in every connection. Linux keeps no such limit but prunes under memory pressure; 16 holes
 * per window is far past what real loss produces. */
#define TCP_OOO_MAX_RANGES 16

struct tcp_ooo_range {
	uint32_t left;            /* first sequence number held */
	uint32_t right;           /* one past the last */
	uint32_t stamp;           /* recency: higher is more recent, 0 never used */
};

struct tcp_ooo {
	struct tcp_ooo_range r[TCP_OOO_MAX_RANGES];
	unsigned n;               /* ranges in use, r[0..n) sorted by left */
	uint32_t clock;           /* last stamp handed out */
	uint32_t bytes;           /* sum of right - left over r[0..n) */
};

void tcp_ooo_init(struct tcp_ooo *o);

/* Records that [seq, seq + len) was received above rcv_nxt. The caller guarantees
 * seq_gt(seq, rcv_nxt), len > 0 and that the range fits in the receive window (so below
 * 2^31); a call breaking this returns -EINVAL and records nothing. Ranges that lie entirely
 * at or below rcv_nxt are forgotten first and a range straddling it is trimmed to start there
 * (the caller should have called tcp_ooo_advance; this keeps the state sane if it did not).
 * The new range is merged with every range it overlaps or touches; the merged range becomes
 * the most recent one.
 *
 * Returns the number of bytes of [seq, seq + len) that were not held before (0: an entire
 * duplicate), or -ENOSPC when holding it would need more than TCP_OOO_MAX_RANGES ranges:
 * then nothing is recorded and the caller drops the segment (and counts the drop).
 *
 * When some bytes were already held, *has_dsack is set true and *dsack gets the first
 * (lowest) contiguous duplicate part, to be reported as a D-SACK block (RFC 2883 §4: each
 * duplicate contiguous sequence is reported in its own D-SACK block; we report the first).
 * Otherwise *has_dsack is set false and *dsack is left alone. Either pointer may be NULL
 * when the caller does not care; both are left alone on error. */
int tcp_ooo_add(struct tcp_ooo *o, uint32_t rcv_nxt, uint32_t seq, uint32_t len,
		struct tcp_sack_block *dsack, bool *has_dsack);

/* Called after in-order data moved RCV.NXT to rcv_nxt. Forgets every range that lies
 * entirely at or below rcv_nxt. If the lowest remaining range then starts at or before
 * rcv_nxt, its bytes are now in order: it is removed and its right edge is returned (the new
 * RCV.NXT; the caller hands the bytes between to the application). Since held ranges never
 * touch, one call is enough. Otherwise returns rcv_nxt unchanged. */
uint32_t tcp_ooo_advance(struct tcp_ooo *o, uint32_t rcv_nxt);

/* Writes the SACK blocks for our next ACK into out[0..max) and returns how many were
 * written (RFC 2018 §4). If dsack is not NULL it goes first (RFC 2883 §4: "the first SACK
 * block ... D-SACK"); then the held ranges, most recently received first, so that the block
 * holding the segment that triggered this ACK leads and the others repeat the most recently
 * reported ones. The caller limits max to what the option space allows (3 with
 * timestamps, TCP_SACK_MAX_BLOCKS without). */
unsigned tcp_ooo_sack_blocks(const struct tcp_ooo *o, const struct tcp_sack_block *dsack,
			     struct tcp_sack_block *out, unsigned max);

/* Total bytes held above RCV.NXT. */
uint32_t tcp_ooo_bytes(const struct tcp_ooo *o);

/* Number of ranges held (holes the peer still has to fill, at most TCP_OOO_MAX_RANGES). */
unsigned tcp_ooo_count(const struct tcp_ooo *o);

bool tcp_ooo_empty(const struct tcp_ooo *o);

/* Forgets everything (the receive FIFO was flushed, e.g. on reset or SHUT_RD). */
void tcp_ooo_clear(struct tcp_ooo *o);

#endif
