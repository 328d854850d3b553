/* Sender-side SACK scoreboard of one TCP connection: records which octets above SND.UNA the
 * peer has selectively acknowledged (RFC 2018), validates each ACK's SACK blocks against what
 * was sent, and detects D-SACK blocks (RFC 2883 §4). It decides nothing about loss: loss
 * detection is RACK's, over the per-segment sent map (tcp_sentmap.h, tcp_rack.h).
 *
 * Layout: a fixed array of at most TCP_SB_MAX_RANGES half-open ranges [left, right), sorted,
 * disjoint and never adjacent, all within [SND.UNA, SND.MAX]. Sequence numbers compare
 * modulo 2^32 (tcp_seq.h); the flight is below 2^31, which keeps the ranges ordered.
 *
 * Conventions for the parameters below:
 * - snd_una: the oldest unacknowledged sequence number.
 * - snd_nxt: one past the highest octet ever sent (SND.MAX when SND.NXT was pulled back
 *   after a timeout).
 *
 * Reneging (RFC 2018 §8): SACKed octets stay SACKed until the cumulative ACK passes them or
 * the caller clears the board (on RTO, if it chooses: RFC 6675 §5.1); the caller keeps the
 * data itself until it is cumulatively acknowledged. A range the peer stops reporting is
 * never dropped on that account.
 *
 * Capacity: when a new block would need a range beyond TCP_SB_MAX_RANGES, the highest range
 * (by sequence number, possibly the new block itself) is forgotten. Forgetting is safe: the
 * sent map marks SACKed segments itself, from each ACK's blocks, so only this board's account
 * gets coarser; a forgotten range that the peer reports again counts as newly SACKed once
 * more, never the reverse. The peer repeats its most recent blocks in every ACK, so the top
 * is learned again once the lower holes close. */
#ifndef DPS_TCP_TCP_SACK_H
#define DPS_TCP_TCP_SACK_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/tcp.h"

#define TCP_SB_MAX_RANGES 32
/* The largest receive window (65535 << 14, RFC 7323 §2.3), rounded up: a D-SACK block must
 * end at or below snd_nxt and start no further than this below it. */
#define TCP_SB_DSACK_MAX_SPAN (1u << 30)

struct tcp_scoreboard {
	struct tcp_sack_block r[TCP_SB_MAX_RANGES];   /* r[0..n) sorted by left */
	unsigned n;
	uint32_t sacked;          /* sum of right - left over r[0..n) */
};

/* What one ACK's SACK blocks did to the board. The identity
 *   sacked_after = sacked_before - (SACKed octets below the new ack) + newly_sacked - forgotten
 * holds exactly. */
struct tcp_sb_result {
	uint32_t newly_sacked;    /* octets SACKed now that were not before */
	uint32_t forgotten;       /* octets SACKed before, dropped for capacity */
	unsigned ignored;         /* blocks ignored: left >= right, or outside [snd_una, snd_nxt] */
	bool dsack;               /* the first block was a D-SACK */
	struct tcp_sack_block dsack_block;
};

void tcp_sb_init(struct tcp_scoreboard *sb);

/* Forgets everything (on RTO, when the caller decides to: RFC 6675 §5.1). */
void tcp_sb_clear(struct tcp_scoreboard *sb);

/* Takes one ACK: cumulative ack `ack` (validated by the caller: snd_una <= ack <= snd_nxt,
 * with snd_una its value before this ACK) and its SACK blocks blocks[0..nblocks).
 *
 * 1. D-SACK (RFC 2883 §4): the first block is a D-SACK when it lies below the cumulative ack
 *    (its left edge is below ack), or when it lies within the second block. A D-SACK is
 *    reported in res and never marks anything; it must have left < right <= snd_nxt and
 *    start at most TCP_SB_DSACK_MAX_SPAN below snd_nxt, or it counts as ignored.
 * 2. Ranges at or below ack are forgotten; a range straddling ack is trimmed to start there.
 * 3. Every other block must satisfy snd_una <= left < right <= snd_nxt, or it is ignored
 *    (counted in res->ignored): malformed (left >= right), beyond what was sent, below
 *    SND.UNA, or a "huge" range wrapping around the sequence space. The part of a valid
 *    block below ack is stale and skipped; the rest is merged into the board (blocks may come
 *    in any order and overlap each other and the board).
 *
 * Returns res->newly_sacked. res may be NULL. */
uint32_t tcp_sb_update(struct tcp_scoreboard *sb, uint32_t snd_una, uint32_t ack,
		       uint32_t snd_nxt, const struct tcp_sack_block *blocks, unsigned nblocks,
		       struct tcp_sb_result *res);

/* Octets SACKed above SND.UNA. */
uint32_t tcp_sb_sacked_bytes(const struct tcp_scoreboard *sb);

/* Number of ranges held. */
unsigned tcp_sb_count(const struct tcp_scoreboard *sb);

#endif
