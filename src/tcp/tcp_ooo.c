/* Out-of-order range bookkeeping for the TCP receiver (see tcp_ooo.h).
 *
 * Inside tcp_ooo_add every position is handled as an offset from rcv_nxt: after pruning,
 * all held ranges and the new segment lie in [rcv_nxt, rcv_nxt + 2^31), where offsets
 * compare as plain unsigned numbers, wraparound of the sequence space included. With at most
 * TCP_OOO_MAX_RANGES entries, linear scans and memmove are cheaper than anything cleverer. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tcp_ooo.h"
#include "tcp_seq.h"

void tcp_ooo_init(struct tcp_ooo *o)
{
	memset(o, 0, sizeof(*o));
}

void tcp_ooo_clear(struct tcp_ooo *o)
{
	tcp_ooo_init(o);
}

uint32_t tcp_ooo_bytes(const struct tcp_ooo *o)
{
	return o->bytes;
}

unsigned tcp_ooo_count(const struct tcp_ooo *o)
{
	return o->n;
}

bool tcp_ooo_empty(const struct tcp_ooo *o)
{
	return o->n == 0;
}

static void ooo_remove(struct tcp_ooo *o, unsigned i, unsigned count)
{
	for (unsigned k = i; k < i + count; k++)
		o->bytes -= o->r[k].right - o->r[k].left;
	memmove(&o->r[i], &o->r[i + count], (o->n - i - count) * sizeof(o->r[0]));
	o->n -= count;
}

/* Drops ranges entirely at or below rcv_nxt; trims one that straddles it. */
static void ooo_prune(struct tcp_ooo *o, uint32_t rcv_nxt)
{
	unsigned gone = 0;

	while (gone < o->n && seq_le(o->r[gone].right, rcv_nxt))
		gone++;
	if (gone)
		ooo_remove(o, 0, gone);
	if (o->n && seq_lt(o->r[0].left, rcv_nxt)) {
		o->bytes -= rcv_nxt - o->r[0].left;
		o->r[0].left = rcv_nxt;
	}
}

/* A fresh recency stamp. When the counter would wrap (after 2^32 segments), the stamps in
 * use are renumbered 1..n in their current order, which keeps every comparison valid. */
static uint32_t ooo_stamp(struct tcp_ooo *o)
{
	if (o->clock == UINT32_MAX) {
		uint32_t rank[TCP_OOO_MAX_RANGES];

		for (unsigned i = 0; i < o->n; i++) {
			rank[i] = 1;
			for (unsigned k = 0; k < o->n; k++)
				if (o->r[k].stamp < o->r[i].stamp)
					rank[i]++;
		}
		for (unsigned i = 0; i < o->n; i++)
			o->r[i].stamp = rank[i];
		o->clock = o->n;
	}
	return ++o->clock;
}

int tcp_ooo_add(struct tcp_ooo *o, uint32_t rcv_nxt, uint32_t seq, uint32_t len,
		struct tcp_sack_block *dsack, bool *has_dsack)
{
	uint32_t off = seq - rcv_nxt;
	uint32_t end, lo, hi, stamp;
	uint32_t held = 0;
	bool dup = false;
	unsigned i, j;

	if (len == 0 || !seq_gt(seq, rcv_nxt) || (uint64_t)off + len > INT32_MAX)
		return -EINVAL;
	end = off + len;
	ooo_prune(o, rcv_nxt);

	/* [i, j): the held ranges that overlap or touch [off, end). */
	for (i = 0; i < o->n && o->r[i].right - rcv_nxt < off; i++)
		;
	for (j = i; j < o->n && o->r[j].left - rcv_nxt <= end; j++)
		;

	if (i == j) {
		if (o->n == TCP_OOO_MAX_RANGES)
			return -ENOSPC;
		stamp = ooo_stamp(o);
		memmove(&o->r[i + 1], &o->r[i], (o->n - i) * sizeof(o->r[0]));
		o->n++;
		o->r[i].left = seq;
		o->r[i].right = seq + len;
		o->r[i].stamp = stamp;
		o->bytes += len;
		if (has_dsack)
			*has_dsack = false;
		return (int)len;
	}

	lo = off;
	hi = end;
	for (unsigned k = i; k < j; k++) {
		uint32_t l = o->r[k].left - rcv_nxt;
		uint32_t r = o->r[k].right - rcv_nxt;
		uint32_t ovl = l > off ? l : off;
		uint32_t ovr = r < end ? r : end;

		if (ovl < ovr) {
			held += ovr - ovl;
			/* RFC 2883 §4: the first duplicate contiguous sequence. */
			if (!dup && dsack) {
				dsack->left = rcv_nxt + ovl;
				dsack->right = rcv_nxt + ovr;
			}
			dup = true;
		}
		if (l < lo)
			lo = l;
		if (r > hi)
			hi = r;
	}

	stamp = ooo_stamp(o);

	/* Collapse r[i..j) into r[i]. */
	ooo_remove(o, i + 1, j - i - 1);
	o->bytes += (hi - lo) - (o->r[i].right - o->r[i].left);
	o->r[i].left = rcv_nxt + lo;
	o->r[i].right = rcv_nxt + hi;
	o->r[i].stamp = stamp;
	if (has_dsack)
		*has_dsack = dup;
	return (int)(len - held);
}

uint32_t tcp_ooo_advance(struct tcp_ooo *o, uint32_t rcv_nxt)
{
	unsigned gone = 0;
	uint32_t next;

	while (gone < o->n && seq_le(o->r[gone].right, rcv_nxt))
		gone++;
	if (gone)
		ooo_remove(o, 0, gone);
	if (o->n == 0 || seq_gt(o->r[0].left, rcv_nxt))
		return rcv_nxt;
	next = o->r[0].right;
	ooo_remove(o, 0, 1);
	return next;
}

unsigned tcp_ooo_sack_blocks(const struct tcp_ooo *o, const struct tcp_sack_block *dsack,
			     struct tcp_sack_block *out, unsigned max)
{
	unsigned idx[TCP_OOO_MAX_RANGES];
	unsigned cnt = 0;

	if (max == 0)
		return 0;
	if (dsack)
		out[cnt++] = *dsack;

	/* Indices by stamp, most recent first (insertion sort over <= 16 entries). */
	for (unsigned i = 0; i < o->n; i++) {
		unsigned k = i;

		while (k > 0 && o->r[idx[k - 1]].stamp < o->r[i].stamp) {
			idx[k] = idx[k - 1];
			k--;
		}
		idx[k] = i;
	}
	for (unsigned i = 0; i < o->n && cnt < max; i++) {
		out[cnt].left = o->r[idx[i]].left;
		out[cnt].right = o->r[idx[i]].right;
		cnt++;
	}
	return cnt;
}
