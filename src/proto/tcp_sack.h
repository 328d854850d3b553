/* Sender-side SACK scoreboard of one TCP connection: which octets above SND.UNA the peer has
 * selectively acknowledged (RFC 2018), D-SACK detection (RFC 2883 §4), and the queries of
 * SACK-based loss recovery (RFC 6675 §4: IsLost, SetPipe, NextSeg rules 1 and 3).
 *
 * Layout: a fixed array of at most TCP_SB_MAX_RANGES half-open ranges [left, right), sorted,
 * disjoint and never adjacent, all within [SND.UNA, SND.MAX]. Sequence numbers compare
 * modulo 2^32 (tcp_seq.h); the flight is below 2^31, which keeps the ranges ordered.
 *
 * Conventions for the parameters below:
 * - snd_una: the oldest unacknowledged sequence number (RFC 6675 HighACK).
 * - snd_nxt: one past the highest octet ever sent (RFC 6675 HighData + 1; SND.MAX when
 *   SND.NXT was pulled back after a timeout).
 * - high_rxt: one past the highest octet retransmitted in this recovery (RFC 6675 HighRxt
 *   + 1), so the search for the next hole starts at high_rxt; set it to snd_una when recovery
 *   begins. Values below snd_una count as snd_una.
 * - smss: the sender maximum segment size (RFC 6675 SMSS), > 0.
 *
 * Reneging (RFC 2018 §8): SACKed octets stay SACKed until the cumulative ACK passes them or
 * the caller clears the board (on RTO, if it chooses: RFC 6675 §5.1); the caller keeps the
 * data itself until it is cumulatively acknowledged. A range the peer stops reporting is
 * never dropped on that account.
 *
 * Capacity: when a new block would need a range beyond TCP_SB_MAX_RANGES, the highest range
 * (by sequence number, possibly the new block itself) is forgotten. Forgetting SACK
 * information is always safe: those octets count as in flight (pipe grows) and may be
 * retransmitted needlessly, never the reverse. The low ranges are the ones loss recovery
 * works on (it repairs holes from SND.UNA up), and the peer repeats its most recent blocks
 * in every ACK, so the top is learned again once the lower holes close. */
#ifndef DPS_PROTO_TCP_SACK_H
#define DPS_PROTO_TCP_SACK_H

#include <stdbool.h>
#include <stdint.h>

#include "../wire/tcp.h"

#define TCP_SB_MAX_RANGES 32
#define TCP_SB_DUPTHRESH 3        /* RFC 6675 §2 DupThresh */
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

/* Whether octet seq is SACKed. */
bool tcp_sb_is_sacked(const struct tcp_scoreboard *sb, uint32_t seq);

/* RFC 6675 §4 IsLost(seq): true when at least DupThresh discontiguous SACKed ranges hold
 * octets above seq, or more than (DupThresh - 1) * smss SACKed octets lie above seq. Both
 * counts only fall as seq grows, so loss is decided per hole: every octet of a hole (a run
 * of unSACKed octets) gets the same answer. */
bool tcp_sb_is_lost(const struct tcp_scoreboard *sb, uint32_t seq, uint32_t smss);

/* RFC 6675 §4 SetPipe: the octets in flight over [snd_una, snd_nxt). Each unSACKed octet
 * adds 1 unless IsLost, and 1 more if it was retransmitted (below high_rxt). Computed per
 * hole, top down, in O(ranges); equal to the RFC's per-octet definition. */
uint32_t tcp_sb_pipe(const struct tcp_scoreboard *sb, uint32_t snd_una, uint32_t snd_nxt,
		     uint32_t high_rxt, uint32_t smss);

/* RFC 6675 §4 NextSeg() rules 1 and 3; rule 2 (new data) and rule 4 (rescue) are the
 * caller's, who knows the send buffer and RescueRxt. Looks for the lowest unSACKed octet S
 * with S >= max(high_rxt, snd_una) (1.a) and below the highest SACKed octet (1.b).
 * Rule 1: if IsLost(S) (1.c), returns true with [*seq, *seq + *len) = S and up to smss
 * octets, stopping at the next SACKed range. Since IsLost only falls as S grows, no later
 * hole can qualify when S does not.
 * Rule 3 (only when rule3 is true: rules 1 and 2 have failed): the same S without 1.c.
 * Returns false, leaving *seq and *len alone, when no such octet exists (or smss is 0). */
bool tcp_sb_next_seg(const struct tcp_scoreboard *sb, uint32_t snd_una, uint32_t snd_nxt,
		     uint32_t high_rxt, uint32_t smss, bool rule3, uint32_t *seq, uint32_t *len);

/* Octets SACKed above SND.UNA. */
uint32_t tcp_sb_sacked_bytes(const struct tcp_scoreboard *sb);

/* Number of ranges held. */
unsigned tcp_sb_count(const struct tcp_scoreboard *sb);

/* The right edge of the highest SACKed range (one past the highest SACKed octet) in *right;
 * false, with *right left alone, when nothing is SACKed. */
bool tcp_sb_highest_sacked(const struct tcp_scoreboard *sb, uint32_t *right);

#endif
