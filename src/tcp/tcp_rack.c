/* RACK-TLP (RFC 8985); see tcp_rack.h. */
#include <string.h>

#include "tcp_rack.h"
#include "tcp_seq.h"

void tcp_rack_init(struct tcp_rack *rk, uint32_t una)
{
	memset(rk, 0, sizeof(*rk));
	rk->fack = una;
	rk->reo_wnd_mult = 1;
}

/* RACK_sent_after(t1, seq1, t2, seq2): was (t1, seq1) sent after (t2, seq2)? */
static bool rack_sent_after(uint32_t t1, uint32_t seq1, uint32_t t2, uint32_t seq2)
{
	return tcp_time_before(t2, t1) || (t1 == t2 && seq_gt(seq1, seq2));
}

void tcp_rack_update(struct tcp_rack *rk, const struct tcp_sm_delivery *d)
{
	if (d->has_newest) {
		/* min_RTT from every sample RACK takes (§6.2 step 2 uses it as the floor). */
		if (rk->min_rtt_us == 0 || d->rtt_us < rk->min_rtt_us)
			rk->min_rtt_us = d->rtt_us != 0 ? d->rtt_us : 1;
		if (!rk->has || rack_sent_after(d->newest_xmit_us, d->newest_end, rk->xmit_us,
						rk->end_seq)) {
			rk->has = true;
			rk->xmit_us = d->newest_xmit_us;
			rk->end_seq = d->newest_end;
			rk->rtt_us = d->rtt_us;
		}
	}
	if (d->reordered)
		rk->reordering_seen = true;
	if (seq_gt(d->fack, rk->fack))
		rk->fack = d->fack;
}

void tcp_rack_dsack(struct tcp_rack *rk, uint32_t snd_una, uint32_t snd_max)
{
	if (rk->dsack_round_valid && !seq_ge(snd_una, rk->dsack_round))
		return;
	rk->dsack_round_valid = true;
	rk->dsack_round = snd_max;
	if (rk->reo_wnd_mult < UINT8_MAX)
		rk->reo_wnd_mult++;
	rk->reo_wnd_persist = TCP_RACK_REO_PERSIST;
}

void tcp_rack_recovery_done(struct tcp_rack *rk)
{
	if (rk->reo_wnd_persist > 0 && --rk->reo_wnd_persist == 0)
		rk->reo_wnd_mult = 1;
}

uint32_t tcp_rack_reo_wnd(const struct tcp_rack *rk, bool in_recovery, uint32_t sacked_segs,
			  uint32_t srtt_us)
{
	uint64_t wnd;

	/* Without reordering seen, a loss in recovery or beyond DupThresh SACKed segments is
	 * repaired at once, as the classic rule would (§6.2 step 4). */
	if (!rk->reordering_seen && (in_recovery || sacked_segs >= 3))
		return 0;
	wnd = (uint64_t)rk->reo_wnd_mult * rk->min_rtt_us / 4;
	if (srtt_us != 0 && wnd > srtt_us)
		wnd = srtt_us;
	return (uint32_t)wnd;
}

uint32_t tcp_rack_detect(struct tcp_rack *rk, struct tcp_sentmap *sm, uint32_t now_us,
			 uint32_t reo_wnd_us, uint32_t *timeout_us)
{
	uint32_t lost = 0, wait = 0;
	uint32_t pos = sm->thead;

	*timeout_us = 0;
	if (!rk->has)
		return 0;
	/* The in-flight list is in transmission order: past the first record sent after
	 * RACK.xmit_ts, every one is. */
	while (pos != TCP_SM_NIL) {
		struct tcp_sent *r = &sm->r[pos];
		uint32_t next = r->tnext;
		int32_t remaining;

		if (!rack_sent_after(rk->xmit_us, rk->end_seq, r->xmit_us, r->end))
			break;
		remaining = (int32_t)(r->xmit_us + rk->rtt_us + reo_wnd_us - now_us);
		if (remaining <= 0) {
			lost += r->end - r->seq;
			tcp_sm_mark_lost(sm, tcp_sm_index(sm, pos));
		} else if ((uint32_t)remaining > wait) {
			wait = (uint32_t)remaining;
		}
		pos = next;
	}
	*timeout_us = wait;
	return lost;
}

uint32_t tcp_tlp_pto_us(uint32_t srtt_us, bool one_segment, uint32_t rto_left_us)
{
	uint64_t pto;

	if (srtt_us == 0)
		pto = 1000000;          /* §7.2: no RTT sample yet: 1 s */
	else
		pto = 2 * (uint64_t)srtt_us + TCP_TLP_MIN_US;
	if (one_segment)
		pto += TCP_TLP_MAX_ACK_DELAY_US;
	return pto < rto_left_us ? (uint32_t)pto : rto_left_us;
}
