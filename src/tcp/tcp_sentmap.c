/* The sender's map of sent segments (see tcp_sentmap.h).
 *
 * Every record is in exactly one of three states, each with its byte count: SACKed
 * (sm->sacked), lost and waiting to be sent again (sm->lost), or in flight on the
 * transmission-ordered list (sm->in_flight; sm->retrans counts the retransmitted ones among
 * them). Every change of state goes through sent_leave / sent_enter so the counts cannot
 * drift. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_sentmap.h"
#include "tcp_seq.h"

static uint32_t sent_len(const struct tcp_sent *r)
{
	return r->end - r->seq;
}

static void tlist_unlink(struct tcp_sentmap *sm, uint32_t pos)
{
	struct tcp_sent *r = &sm->r[pos];

	if (r->tprev != TCP_SM_NIL)
		sm->r[r->tprev].tnext = r->tnext;
	else
		sm->thead = r->tnext;
	if (r->tnext != TCP_SM_NIL)
		sm->r[r->tnext].tprev = r->tprev;
	else
		sm->ttail = r->tprev;
	r->tprev = r->tnext = TCP_SM_NIL;
}

static void tlist_append(struct tcp_sentmap *sm, uint32_t pos)
{
	struct tcp_sent *r = &sm->r[pos];

	r->tnext = TCP_SM_NIL;
	r->tprev = sm->ttail;
	if (sm->ttail != TCP_SM_NIL)
		sm->r[sm->ttail].tnext = pos;
	else
		sm->thead = pos;
	sm->ttail = pos;
}

/* Takes the record at pos out of its state's count (and the list). */
static void sent_leave(struct tcp_sentmap *sm, uint32_t pos)
{
	struct tcp_sent *r = &sm->r[pos];
	uint32_t len = sent_len(r);

	if (r->flags & TCP_SENT_SACKED) {
		sm->sacked -= len;
	} else if (r->flags & TCP_SENT_LOST) {
		sm->lost -= len;
	} else {
		tlist_unlink(sm, pos);
		sm->in_flight -= len;
		if (r->flags & TCP_SENT_RETRANS)
			sm->retrans -= len;
	}
}

/* Counts the record at pos in the state its flags name (in flight: at the list's tail). */
static void sent_enter(struct tcp_sentmap *sm, uint32_t pos)
{
	struct tcp_sent *r = &sm->r[pos];
	uint32_t len = sent_len(r);

	if (r->flags & TCP_SENT_SACKED) {
		sm->sacked += len;
	} else if (r->flags & TCP_SENT_LOST) {
		sm->lost += len;
	} else {
		tlist_append(sm, pos);
		sm->in_flight += len;
		if (r->flags & TCP_SENT_RETRANS)
			sm->retrans += len;
	}
}

int tcp_sm_init(struct tcp_sentmap *sm)
{
	memset(sm, 0, sizeof(*sm));
	sm->r = malloc(TCP_SM_INITIAL_RECORDS * sizeof(*sm->r));
	if (sm->r == NULL)
		return -ENOMEM;
	sm->cap = TCP_SM_INITIAL_RECORDS;
	sm->thead = sm->ttail = TCP_SM_NIL;
	return 0;
}

void tcp_sm_fini(struct tcp_sentmap *sm)
{
	free(sm->r);
	memset(sm, 0, sizeof(*sm));
}

/* Doubles the ring, records keeping their order from index 0. */
static bool sm_grow(struct tcp_sentmap *sm)
{
	uint32_t cap = sm->cap * 2;
	struct tcp_sent *r;

	if (cap > TCP_SM_MAX_RECORDS)
		return false;
	r = malloc(cap * sizeof(*r));
	if (r == NULL)
		return false;
	for (uint32_t i = 0; i < sm->n; i++) {
		struct tcp_sent *to = &r[i];

		*to = *tcp_sm_at(sm, i);
		if (to->tprev != TCP_SM_NIL)
			to->tprev = tcp_sm_index(sm, to->tprev);
		if (to->tnext != TCP_SM_NIL)
			to->tnext = tcp_sm_index(sm, to->tnext);
	}
	if (sm->thead != TCP_SM_NIL) {
		sm->thead = tcp_sm_index(sm, sm->thead);
		sm->ttail = tcp_sm_index(sm, sm->ttail);
	}
	free(sm->r);
	sm->r = r;
	sm->cap = cap;
	sm->head = 0;
	return true;
}

/* The delivery-rate snapshot a transmission takes (draft-cheng §3.2). */
static void sent_snapshot(struct tcp_sentmap *sm, struct tcp_sent *r, uint32_t now_us)
{
	if (sm->in_flight == 0)
		sm->first_tx_us = sm->delivered_us = now_us;
	r->xmit_us = now_us;
	r->delivered = (uint32_t)sm->delivered;
	r->delivered_us = sm->delivered_us;
	r->first_tx_us = sm->first_tx_us;
	if (sm->app_limited != 0)
		r->flags |= TCP_SENT_APP_LIMITED;
	else
		r->flags &= ~TCP_SENT_APP_LIMITED;
}

/* Index of the first record ending after seq (n when none). */
static uint32_t sm_find(const struct tcp_sentmap *sm, uint32_t seq)
{
	uint32_t lo = 0, hi = sm->n;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (seq_gt(tcp_sm_at(sm, mid)->end, seq))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static void sm_append(struct tcp_sentmap *sm, uint32_t seq, uint32_t end, bool fin,
		      uint32_t now_us)
{
	struct tcp_sent *r;
	uint32_t pos;

	if (sm->n == sm->cap && !sm_grow(sm)) {
		/* Full: the last record takes the new bytes, in flight as of now. */
		pos = tcp_sm_pos(sm, sm->n - 1);
		r = &sm->r[pos];
		sent_leave(sm, pos);
		r->flags &= ~(TCP_SENT_SACKED | TCP_SENT_LOST);
		r->end = end;
	} else {
		pos = tcp_sm_pos(sm, sm->n);
		r = &sm->r[pos];
		sm->n++;
		memset(r, 0, sizeof(*r));
		r->seq = seq;
		r->end = end;
	}
	if (fin)
		r->flags |= TCP_SENT_FIN;
	sent_snapshot(sm, r, now_us);
	sent_enter(sm, pos);
}

uint32_t tcp_sm_sent(struct tcp_sentmap *sm, uint32_t seq, uint32_t end, bool fin,
		     uint32_t now_us)
{
	uint32_t resent = 0;

	if (sm->n != 0 && seq_lt(seq, tcp_sm_top(sm))) {
		for (uint32_t i = sm_find(sm, seq); i < sm->n; i++) {
			uint32_t pos = tcp_sm_pos(sm, i);
			struct tcp_sent *r = &sm->r[pos];

			if (!seq_lt(r->seq, end))
				break;
			if (r->flags & TCP_SENT_SACKED)
				continue;
			sent_leave(sm, pos);
			r->flags &= ~TCP_SENT_LOST;
			r->flags |= TCP_SENT_RETRANS;
			sent_snapshot(sm, r, now_us);
			sent_enter(sm, pos);
			resent += sent_len(r);
		}
		seq = tcp_sm_top(sm);
		if (!seq_lt(seq, end))
			return resent;
	}
	if (sm->n == 0 || seq_le(tcp_sm_top(sm), seq))
		sm_append(sm, seq, end, fin, now_us);
	return resent;
}

void tcp_sm_delivery_begin(const struct tcp_sentmap *sm, struct tcp_sm_delivery *d,
			   uint32_t now_us, uint32_t min_rtt_us)
{
	(void)sm;
	memset(d, 0, sizeof(*d));
	d->now_us = now_us;
	d->min_rtt_us = min_rtt_us;
}

/* Record r was delivered for the first time (acked or SACKed). */
static void sent_delivered(struct tcp_sentmap *sm, const struct tcp_sent *r,
			   struct tcp_sm_delivery *d)
{
	uint32_t len = sent_len(r);
	bool resent = r->flags & TCP_SENT_RETRANS;
	uint64_t before = sm->delivered;
	uint64_t p_delivered = before - (uint32_t)((uint32_t)before - r->delivered);

	d->bytes += len;
	sm->delivered += len;
	sm->delivered_us = d->now_us;

	/* RFC 8985 §6.2 step 2: a resent record delivered within min_RTT of its resend was the
	 * original's delivery; it says nothing about when the resend arrived. */
	if (!(resent && d->min_rtt_us != 0 && d->now_us - r->xmit_us < d->min_rtt_us)) {
		if (!d->has_newest || tcp_time_before(d->newest_xmit_us, r->xmit_us) ||
		    (d->newest_xmit_us == r->xmit_us && seq_gt(r->end, d->newest_end))) {
			d->has_newest = true;
			d->newest_xmit_us = r->xmit_us;
			d->newest_end = r->end;
			d->rtt_us = d->now_us - r->xmit_us;
		}
	}
	/* RFC 6298 §3 (Karn): only a segment never resent gives an unambiguous RTT. */
	if (!resent && (d->karn_rtt_us == 0 || !tcp_time_before(r->xmit_us, d->karn_xmit_us))) {
		uint32_t rtt = d->now_us - r->xmit_us;

		d->karn_xmit_us = r->xmit_us;
		d->karn_rtt_us = rtt != 0 ? rtt : 1;
	}
	/* RFC 8985 §6.2 step 3: an original delivered below the highest delivered sequence
	 * number arrived out of order. */
	if (!resent && seq_lt(r->end, d->fack))
		d->reordered = true;
	if (seq_gt(r->end, d->fack))
		d->fack = r->end;

	/* draft-cheng §3.3: the sample comes from the most recently sent packet delivered. */
	if (!d->has_rate || p_delivered >= d->prior_delivered) {
		d->has_rate = true;
		d->prior_delivered = p_delivered;
		d->prior_time_us = r->delivered_us;
		d->app_limited = r->flags & TCP_SENT_APP_LIMITED;
		d->send_elapsed_us = r->xmit_us - r->first_tx_us;
		d->ack_elapsed_us = sm->delivered_us - r->delivered_us;
		sm->first_tx_us = r->xmit_us;
	}
}

void tcp_sm_cum_ack(struct tcp_sentmap *sm, uint32_t ack, struct tcp_sm_delivery *d)
{
	while (sm->n != 0) {
		uint32_t pos = sm->head;
		struct tcp_sent *r = &sm->r[pos];

		if (seq_le(r->end, ack)) {
			if (!(r->flags & TCP_SENT_SACKED))
				sent_delivered(sm, r, d);
			sent_leave(sm, pos);
			sm->head = (sm->head + 1) & (sm->cap - 1);
			sm->n--;
			if (sm->lost_from > 0)
				sm->lost_from--;
			continue;
		}
		if (seq_lt(r->seq, ack)) {
			/* The ACK cuts the record (the peer took part of it): the rest keeps its
			 * state and its place in the time order. */
			uint32_t part = ack - r->seq;

			r->seq = ack;
			if (r->flags & TCP_SENT_SACKED) {
				sm->sacked -= part;
			} else {
				if (r->flags & TCP_SENT_LOST) {
					sm->lost -= part;
				} else {
					sm->in_flight -= part;
					if (r->flags & TCP_SENT_RETRANS)
						sm->retrans -= part;
				}
				d->bytes += part;
				sm->delivered += part;
				sm->delivered_us = d->now_us;
			}
		}
		break;
	}
	if (seq_gt(ack, d->fack))
		d->fack = ack;
}

void tcp_sm_sack(struct tcp_sentmap *sm, uint32_t left, uint32_t right,
		 struct tcp_sm_delivery *d)
{
	for (uint32_t i = sm_find(sm, left); i < sm->n; i++) {
		uint32_t pos = tcp_sm_pos(sm, i);
		struct tcp_sent *r = &sm->r[pos];

		if (!seq_le(r->end, right))
			break;
		if (r->flags & TCP_SENT_SACKED || seq_lt(r->seq, left))
			continue;
		sent_delivered(sm, r, d);
		sent_leave(sm, pos);
		r->flags |= TCP_SENT_SACKED;
		sent_enter(sm, pos);
	}
}

void tcp_sm_mark_lost(struct tcp_sentmap *sm, uint32_t i)
{
	uint32_t pos = tcp_sm_pos(sm, i);
	struct tcp_sent *r = &sm->r[pos];

	if (r->flags & (TCP_SENT_SACKED | TCP_SENT_LOST))
		return;
	sent_leave(sm, pos);
	r->flags |= TCP_SENT_LOST;
	r->flags &= ~TCP_SENT_RETRANS;
	sent_enter(sm, pos);
	if (i < sm->lost_from)
		sm->lost_from = i;
}

void tcp_sm_mark_all_lost(struct tcp_sentmap *sm, bool forget_sacks)
{
	for (uint32_t i = 0; i < sm->n; i++) {
		uint32_t pos = tcp_sm_pos(sm, i);
		struct tcp_sent *r = &sm->r[pos];

		if (r->flags & TCP_SENT_SACKED) {
			if (!forget_sacks)
				continue;
			sent_leave(sm, pos);
			r->flags &= ~TCP_SENT_SACKED;
			r->flags |= TCP_SENT_LOST;
			sent_enter(sm, pos);
			continue;
		}
		tcp_sm_mark_lost(sm, i);
	}
	sm->lost_from = 0;
}

uint32_t tcp_sm_next_lost(struct tcp_sentmap *sm)
{
	if (sm->lost == 0) {
		sm->lost_from = sm->n;
		return TCP_SM_NIL;
	}
	for (uint32_t i = sm->lost_from; i < sm->n; i++) {
		if (tcp_sm_at(sm, i)->flags & TCP_SENT_LOST) {
			sm->lost_from = i;
			return i;
		}
	}
	sm->lost_from = sm->n;
	return TCP_SM_NIL;
}

void tcp_sm_app_limited(struct tcp_sentmap *sm)
{
	uint64_t mark = sm->delivered + sm->in_flight;

	sm->app_limited = mark != 0 ? mark : 1;
}

void tcp_sm_delivery_end(struct tcp_sentmap *sm, struct tcp_sm_delivery *d)
{
	/* draft-cheng §3.4: the app-limited period ends once its bubble is delivered. */
	if (sm->app_limited != 0 && sm->delivered > sm->app_limited)
		sm->app_limited = 0;
	if (d->has_rate) {
		d->rate_bytes = (uint32_t)(sm->delivered - d->prior_delivered);
		/* §3.3: the longer of the send and ack phases, so that neither an ACK
		 * compression nor a send burst inflates the rate. */
		d->interval_us = d->send_elapsed_us > d->ack_elapsed_us ? d->send_elapsed_us
									: d->ack_elapsed_us;
		if (d->min_rtt_us != 0 && d->interval_us < d->min_rtt_us)
			d->interval_us = 0;	/* shorter than a round trip: not a valid sample */
	}
}
