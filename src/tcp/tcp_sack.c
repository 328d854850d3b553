/* The sender's SACK scoreboard (see tcp_sack.h).
 *
 * Validation works on offsets from snd_una: a block is in [snd_una, snd_nxt] exactly when
 * left - snd_una < right - snd_una <= snd_nxt - snd_una in plain unsigned arithmetic, which
 * rejects reversed, wrapped and out-of-window blocks in one comparison. Once on the board,
 * ranges lie within the flight (below 2^31), where seq_lt and friends order them. With at most
 * TCP_SB_MAX_RANGES entries, linear scans and memmove are all that is needed. */
#include <stdint.h>
#include <string.h>

#include "tcp_sack.h"
#include "tcp_seq.h"

void tcp_sb_init(struct tcp_scoreboard *sb)
{
	memset(sb, 0, sizeof(*sb));
}

void tcp_sb_clear(struct tcp_scoreboard *sb)
{
	tcp_sb_init(sb);
}

uint32_t tcp_sb_sacked_bytes(const struct tcp_scoreboard *sb)
{
	return sb->sacked;
}

unsigned tcp_sb_count(const struct tcp_scoreboard *sb)
{
	return sb->n;
}

static void sb_remove(struct tcp_scoreboard *sb, unsigned i, unsigned count)
{
	for (unsigned k = i; k < i + count; k++)
		sb->sacked -= sb->r[k].right - sb->r[k].left;
	memmove(&sb->r[i], &sb->r[i + count], (sb->n - i - count) * sizeof(sb->r[0]));
	sb->n -= count;
}

/* Forgets what the cumulative ack now covers. */
static void sb_advance(struct tcp_scoreboard *sb, uint32_t ack)
{
	unsigned gone = 0;

	while (gone < sb->n && seq_le(sb->r[gone].right, ack))
		gone++;
	if (gone)
		sb_remove(sb, 0, gone);
	if (sb->n && seq_lt(sb->r[0].left, ack)) {
		sb->sacked -= ack - sb->r[0].left;
		sb->r[0].left = ack;
	}
}

/* Merges [left, right) (validated, at or above every range's base) into the board, dropping
 * the highest range when it would need one slot too many (see tcp_sack.h). */
static void sb_insert(struct tcp_scoreboard *sb, uint32_t left, uint32_t right)
{
	uint32_t lo, hi;
	unsigned i, j;

	/* [i, j): the ranges that overlap or touch [left, right). */
	for (i = 0; i < sb->n && seq_lt(sb->r[i].right, left); i++)
		;
	for (j = i; j < sb->n && seq_le(sb->r[j].left, right); j++)
		;

	if (i == j) {
		if (sb->n == TCP_SB_MAX_RANGES) {
			if (i == sb->n)
				return;         /* the new block is the highest: it goes */
			sb_remove(sb, sb->n - 1, 1);
		}
		memmove(&sb->r[i + 1], &sb->r[i], (sb->n - i) * sizeof(sb->r[0]));
		sb->n++;
		sb->r[i].left = left;
		sb->r[i].right = right;
		sb->sacked += right - left;
		return;
	}

	/* Collapse r[i..j) and the block into r[i]. */
	lo = seq_min(left, sb->r[i].left);
	hi = seq_max(right, sb->r[j - 1].right);
	sb_remove(sb, i + 1, j - i - 1);
	sb->sacked += (hi - lo) - (sb->r[i].right - sb->r[i].left);
	sb->r[i].left = lo;
	sb->r[i].right = hi;
}

/* Octets in a but not in b (both sorted, disjoint, over the same ordered span). */
static uint32_t sb_difference(const struct tcp_scoreboard *a, const struct tcp_scoreboard *b)
{
	uint32_t sum = 0;
	unsigned k = 0;

	for (unsigned i = 0; i < a->n; i++) {
		uint32_t l = a->r[i].left, r = a->r[i].right;

		sum += r - l;
		while (k < b->n && seq_le(b->r[k].right, l))
			k++;
		for (unsigned m = k; m < b->n && seq_lt(b->r[m].left, r); m++) {
			uint32_t ovl = seq_max(l, b->r[m].left);
			uint32_t ovr = seq_min(r, b->r[m].right);

			sum -= ovr - ovl;
		}
	}
	return sum;
}

/* left < right <= snd_nxt, no further than TCP_SB_DSACK_MAX_SPAN below snd_nxt. */
static bool sb_dsack_valid(const struct tcp_sack_block *b, uint32_t snd_nxt)
{
	uint32_t back_l = snd_nxt - b->left;
	uint32_t back_r = snd_nxt - b->right;

	return back_r < back_l && back_l <= TCP_SB_DSACK_MAX_SPAN;
}

/* snd_una <= left < right <= snd_nxt. */
static bool sb_block_valid(const struct tcp_sack_block *b, uint32_t snd_una, uint32_t snd_nxt)
{
	uint32_t l = b->left - snd_una;
	uint32_t r = b->right - snd_una;

	return l < r && r <= snd_nxt - snd_una;
}

uint32_t tcp_sb_update(struct tcp_scoreboard *sb, uint32_t snd_una, uint32_t ack,
		       uint32_t snd_nxt, const struct tcp_sack_block *blocks, unsigned nblocks,
		       struct tcp_sb_result *res)
{
	struct tcp_sb_result local;
	struct tcp_scoreboard before;
	unsigned first = 0;
	bool changed = false;

	if (!res)
		res = &local;
	memset(res, 0, sizeof(*res));

	/* RFC 2883 §4: how the sender tells a D-SACK block from a SACK block. */
	if (nblocks > 0) {
		const struct tcp_sack_block *b0 = &blocks[0];
		bool is_dsack = false;

		if (seq_lt(b0->left, ack)) {
			is_dsack = true;
		} else if (nblocks > 1 && sb_block_valid(b0, snd_una, snd_nxt) &&
			   sb_block_valid(&blocks[1], snd_una, snd_nxt) &&
			   seq_ge(b0->left, blocks[1].left) && seq_le(b0->right, blocks[1].right)) {
			is_dsack = true;
		}
		if (is_dsack) {
			first = 1;
			if (sb_dsack_valid(b0, snd_nxt)) {
				res->dsack = true;
				res->dsack_block = *b0;
			} else {
				res->ignored++;
			}
		}
	}

	sb_advance(sb, ack);

	for (unsigned k = first; k < nblocks; k++) {
		const struct tcp_sack_block *b = &blocks[k];

		if (!sb_block_valid(b, snd_una, snd_nxt)) {
			res->ignored++;
			continue;
		}
		if (seq_le(b->right, ack))
			continue;               /* valid but already covered by the ack */
		if (!changed) {
			before = *sb;   /* to tell new octets from known ones below */
			changed = true;
		}
		sb_insert(sb, seq_max(b->left, ack), b->right);
	}

	if (changed) {
		res->newly_sacked = sb_difference(sb, &before);
		res->forgotten = sb_difference(&before, sb);
	}
	return res->newly_sacked;
}
