/* Loss detection and recovery for connections with SACK, on the sent map (tcp_sentmap.h):
 * - RACK (RFC 8985 §6): a segment is lost once a segment sent after it was delivered and a
 *   reordering window has passed; the reorder timer (§6.3) catches the ones still waiting.
 *   A lost retransmission is found the same way and sent again, with no timeout.
 * - TLP (§7): when nothing comes back for about two round trips, one probe segment makes the
 *   receiver's SACKs reveal a tail loss, which would otherwise wait for the RTO.
 * - PRR (RFC 6937) paces the resends so that the window falls to ssthresh over one round
 *   trip instead of stalling or bursting; after an RTO, resends follow the map too (only what
 *   is not SACKed), slow-starting from one segment (RFC 5681 §3.1).
 * - Undo (RFC 2883 §4 D-SACK, RFC 3522 Eifel with timestamps): a reduction whose every
 *   resend proves needless is taken back, as Linux does.
 * Without SACK the classic NewReno code of tcp_input.c runs; the map then only serves the
 * delivery-rate samples a model-based controller takes. */
#include "tcp_priv.h"

static uint32_t tcp_now32(const struct tcp_conn *c)
{
	return (uint32_t)c->s->now_us;
}

static bool tcp_uses_rack(const struct tcp_conn *c)
{
	return c->flags & TCPF_SACK_OK && c->sm.r != NULL;
}

uint32_t tcp_pipe(const struct tcp_conn *c)
{
	return tcp_uses_rack(c) ? c->sm.in_flight : tcp_flight(c);
}

/* --- Undo ------------------------------------------------------------------------------ */

/* A loss episode starts: remember the window to return to if it proves spurious. */
static void tcp_undo_begin(struct tcp_conn *c)
{
	c->undo_ok = true;
	c->prior_cwnd = c->cc.cwnd;
	/* Before any loss ssthresh is "infinite"; returning there would slow start past the
	 * window that was working. Linux keeps 3/4 of cwnd as the floor (tcp_current_ssthresh). */
	c->prior_ssthresh = c->cc.ssthresh != TCP_CC_SSTHRESH_INF
				    ? c->cc.ssthresh
				    : c->cc.cwnd - c->cc.cwnd / 4;
	c->undo_retrans = 0;
	c->undo_marker = c->snd_una;
	c->retrans_tsval = 0;
}

static void tcp_undo(struct tcp_conn *c)
{
	if (c->cc.cwnd < c->prior_cwnd)
		c->cc.cwnd = c->prior_cwnd;
	if (c->cc.ssthresh == TCP_CC_SSTHRESH_INF || c->cc.ssthresh < c->prior_ssthresh)
		c->cc.ssthresh = c->prior_ssthresh;
	c->undo_ok = false;
	stack_count(c->s, STACK_EV_TCP_UNDOS);
}

/* Bytes resent in this episode, which D-SACKs may prove needless one by one. */
static void tcp_undo_note_resend(struct tcp_conn *c, uint32_t bytes)
{
	if (!(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)))
		return;
	c->undo_retrans += bytes;
	if (c->retrans_tsval == 0 && c->flags & TCPF_TS_OK) {
		uint32_t ts = tcp_tsval(c);

		c->retrans_tsval = ts != 0 ? ts : 1;
	}
}

/* RFC 2883 §4: a D-SACK for a resend of this episode: the original arrived too. When every
 * resend is accounted for, none was needed (Linux tcp_try_undo_dsack). */
static void tcp_undo_dsack(struct tcp_conn *c, const struct tcp_sack_block *b)
{
	uint32_t len = b->right - b->left;

	if (!c->undo_ok || c->undo_retrans == 0 || seq_lt(b->left, c->undo_marker))
		return;
	c->undo_retrans = len < c->undo_retrans ? c->undo_retrans - len : 0;
	if (c->undo_retrans == 0)
		tcp_undo(c);
}

/* RFC 3522 §3.2 (Eifel detection): an ACK for resent data that echoes a timestamp older
 * than the first resend was sent for the original: the episode was spurious. */
static void tcp_undo_eifel(struct tcp_conn *c, const struct tcp_repr *th)
{
	if (!c->undo_ok || c->retrans_tsval == 0 || !(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)))
		return;
	if (!th->options.has_timestamps || th->options.tsecr == 0 ||
	    !seq_gt(th->ack, c->undo_marker) || !seq_lt(th->options.tsecr, c->retrans_tsval))
		return;
	tcp_undo(c);
}

void tcp_recovery_ack_deliveries(struct tcp_conn *c, const struct tcp_repr *th,
				 struct tcp_sm_delivery *d)
{
	tcp_sm_delivery_begin(&c->sm, d, tcp_now32(c), c->rack.min_rtt_us);
	if (c->sm.r == NULL)
		return;
	d->fack = c->rack.fack;
	if (seq_gt(th->ack, c->snd_una))
		tcp_sm_cum_ack(&c->sm, th->ack, d);
	if (c->flags & TCPF_SACK_OK) {
		uint32_t base = seq_max(th->ack, c->snd_una);
		uint32_t span = c->snd_max - base;

		for (unsigned k = 0; k < th->options.sack_count; k++) {
			const struct tcp_sack_block *b = &th->options.sack_blocks[k];

			/* Within [ack, SND.MAX] only (tcp_sb_update counts the others). A
			 * D-SACK block there names data the receiver holds: marking it is
			 * right too. */
			if (b->left - base < b->right - base && b->right - base <= span)
				tcp_sm_sack(&c->sm, b->left, b->right, d);
		}
	}
	tcp_sm_delivery_end(&c->sm, d);
	tcp_rack_update(&c->rack, d);
	/* Before SND.UNA moves, and before this ACK can end the episode. */
	if (c->flags & TCPF_SACK_OK)
		tcp_undo_eifel(c, th);
}

/* --- Entering and leaving recovery -------------------------------------------------------- */

static void tcp_recovery_enter(struct tcp_conn *c)
{
	struct stack *s = c->s;
	uint32_t flight = tcp_flight(c);

	tcp_undo_begin(c);
	c->recover = c->snd_max;
	c->cc.ssthresh = c->cc.ops->ssthresh(&c->cc, flight, s->now_us);
	c->flags |= TCPF_IN_RECOVERY;
	c->flags &= ~TCPF_RTT_TIMING;
	c->cc.state = TCP_CC_RECOVERY;
	/* RFC 6937 §3: RecoverFS = FlightSize when recovery starts. */
	c->prr_delivered = 0;
	c->prr_out = 0;
	c->recover_fs = flight;
	if (c->flags & TCPF_ECN_OK)
		c->flags |= TCPF_CWR;
	c->rack.tlp_out = false;
	tcp_timer_cancel(c, TCP_T_TLP);
	stack_count(s, STACK_EV_TCP_FAST_RETRANS);
}

void tcp_recovery_exit(struct tcp_conn *c)
{
	bool fast = c->flags & TCPF_IN_RECOVERY;

	c->flags &= ~(TCPF_IN_RECOVERY | TCPF_LOSS);
	/* The controller sees the state it is leaving to (tcp_cc.h); after an RTO its on_rto
	 * ended the episode already. */
	c->cc.state = TCP_CC_OPEN;
	if (fast)
		c->cc.ops->on_recovery_exit(&c->cc, tcp_flight(c), c->s->now_us);
	tcp_rack_recovery_done(&c->rack);
}

void tcp_recovery_on_rto(struct tcp_conn *c)
{
	struct stack *s = c->s;
	bool first = c->backoff == 0;

	if (first && !(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)))
		tcp_undo_begin(c);
	/* RFC 5681 §3.1 eq. 4 once per loss episode, cwnd to the loss window. */
	if (first)
		c->cc.ops->on_rto(&c->cc, tcp_flight(c), s->now_us);
	else
		c->cc.cwnd = c->cc.mss;
	c->flags &= ~(TCPF_IN_RECOVERY | TCPF_RTT_TIMING);
	c->flags |= TCPF_LOSS;
	c->cc.state = TCP_CC_LOSS;
	/* RFC 6582: dupACKs of the window sent before the timeout start no fast recovery. */
	c->recover = c->snd_max;
	c->dupacks = 0;
	/* RFC 8985 §6.3 / RFC 6675 §5.1: everything not SACKed is lost. The SACK marks stay
	 * (Linux does) unless this is a repeated timeout: then the receiver may have dropped
	 * what it SACKed (reneging, RFC 2018 §8), and everything is sent again. */
	tcp_sm_mark_all_lost(&c->sm, !first);
	if (!first)
		tcp_sb_clear(&c->sb);
	c->rack.tlp_out = false;
	tcp_timer_cancel(c, TCP_T_TLP);
	tcp_timer_cancel(c, TCP_T_REO);
}

/* --- RACK ------------------------------------------------------------------------------ */

/* RFC 8985 §6.2 step 5 and §6.3: marks what RACK finds lost, arms the reorder timer for what
 * may still be. Returns the bytes marked. */
static uint32_t tcp_rack_mark_losses(struct tcp_conn *c)
{
	uint32_t sacked_segs = c->sm.sacked / c->snd_mss;
	bool recovering = c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS);
	uint32_t reo = tcp_rack_reo_wnd(&c->rack, recovering, sacked_segs, c->srtt_us);
	uint32_t wait;
	uint32_t lost = tcp_rack_detect(&c->rack, &c->sm, tcp_now32(c), reo, &wait);

	if (lost != 0)
		stack_count_n(c->s, STACK_EV_TCP_RACK_LOST, (lost + c->snd_mss - 1) / c->snd_mss);
	if (wait != 0)
		tcp_timer_arm(c, TCP_T_REO, (wait + 999) / 1000);
	else
		tcp_timer_cancel(c, TCP_T_REO);
	return lost;
}

/* RFC 6937 §3: how much recovery may send on this ACK, as a cwnd over the pipe. */
static void tcp_prr(struct tcp_conn *c, uint32_t delivered)
{
	uint32_t pipe = c->sm.in_flight;
	uint32_t ssthresh = c->cc.ssthresh;
	int64_t sndcnt;

	c->prr_delivered += delivered;
	if (pipe > ssthresh) {
		/* Proportional: send ssthresh/RecoverFS of what left the network. */
		uint64_t fs = c->recover_fs != 0 ? c->recover_fs : 1;
		uint64_t due = ((uint64_t)c->prr_delivered * ssthresh + fs - 1) / fs;

		sndcnt = (int64_t)due - c->prr_out;
	} else {
		/* Slow-start reduction bound (PRR-SSRB): grow back to ssthresh, at most one
		 * segment more than was delivered. */
		int64_t limit = (int64_t)c->prr_delivered - c->prr_out;

		if (limit < (int64_t)delivered)
			limit = delivered;
		limit += c->snd_mss;
		sndcnt = (int64_t)ssthresh - pipe;
		if (sndcnt > limit)
			sndcnt = limit;
	}
	/* The first lost segment goes at once, whatever the pipe (RFC 6675 §5 step 4.3). */
	if (sndcnt < (int64_t)c->snd_mss && c->prr_out == 0)
		sndcnt = c->snd_mss;
	if (sndcnt < 0)
		sndcnt = 0;
	c->cc.cwnd = pipe + (uint32_t)sndcnt;
}

/* --- Tail loss probe ------------------------------------------------------------------- */

/* RFC 8985 §7.4: what the ACKs say about an outstanding probe. A D-SACK of the resent tail
 * means the original arrived too: no loss. An ACK beyond the probe without such a D-SACK
 * means the probe repaired a real loss: the window is reduced once, as for a loss, without
 * a recovery episode. A duplicate ACK at the probe's end means both copies arrived. Until
 * one of these is seen (as Linux waits for it), no other probe goes. */
static void tcp_tlp_ack(struct tcp_conn *c, const struct tcp_repr *th,
			const struct tcp_sack_block *dsack, uint32_t prior_in_flight, bool dup)
{
	struct tcp_rack *rk = &c->rack;

	if (!rk->tlp_out || seq_lt(th->ack, rk->tlp_end_seq))
		return;
	if (!rk->tlp_retrans || (dsack != NULL && seq_le(dsack->right, rk->tlp_end_seq))) {
		rk->tlp_out = false;
		return;
	}
	if (th->ack == rk->tlp_end_seq) {
		if (dup)
			rk->tlp_out = false;
		return;
	}
	rk->tlp_out = false;
	c->cc.ssthresh = c->cc.ops->ssthresh(&c->cc, prior_in_flight, c->s->now_us);
	if (c->cc.ops->cong_control == NULL)
		c->cc.cwnd = c->cc.ssthresh;
	if (c->flags & TCPF_ECN_OK)
		c->flags |= TCPF_CWR;
	stack_count(c->s, STACK_EV_TCP_TLP_RECOVERIES);
}

static bool tcp_tlp_allowed(const struct tcp_conn *c)
{
	return tcp_uses_rack(c) && !(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)) &&
	       c->snd_una != c->snd_max && !c->rack.tlp_out && c->srtt_us != 0 &&
	       tcp_timer_armed(c, TCP_T_RTX);
}

void tcp_tlp_arm(struct tcp_conn *c)
{
	if (!tcp_tlp_allowed(c)) {
		tcp_timer_cancel(c, TCP_T_TLP);
		return;
	}
	uint64_t expires = c->timers[TCP_T_RTX].tw.expires;
	uint64_t now = c->s->now_ms;
	uint64_t rto_left_us = expires > now ? (expires - now) * 1000 : 0;
	uint32_t pto = tcp_tlp_pto_us(c->srtt_us, tcp_flight(c) <= c->snd_mss,
				      rto_left_us > UINT32_MAX ? UINT32_MAX : (uint32_t)rto_left_us);

	tcp_timer_arm(c, TCP_T_TLP, (pto + 999) / 1000);
}

/* Resends record i of the map (in pieces when the MSS shrank since). Nothing that starts
 * beyond the peer's window goes, except the first unacknowledged octets, which go even into
 * a closed window (RFC 9293 §3.8.6.1); a piece crossing the window's edge is cut there (as
 * Linux's __tcp_retransmit_skb). 0, or -1 when nothing could go. */
static int tcp_resend_record(struct tcp_conn *c, uint32_t i)
{
	const struct tcp_sent *r = tcp_sm_at(&c->sm, i);
	bool fin = r->flags & TCP_SENT_FIN;
	uint32_t seq = r->seq;
	uint32_t data_end = fin ? r->end - 1 : r->end;
	uint32_t wnd_end = c->snd_una + c->snd_wnd;

	if (seq != c->snd_una && !seq_lt(seq, wnd_end))
		return -1;
	do {
		uint32_t mss = tcp_cur_mss(c);
		uint32_t len = data_end - seq < mss ? data_end - seq : mss;
		uint8_t flags = TCP_FLAG_ACK;

		if (seq_lt(seq, wnd_end) && len > wnd_end - seq)
			len = wnd_end - seq;
		if (seq + len == data_end && fin)
			flags |= TCP_FLAG_FIN;
		if (tcp_send_segment(c, seq, len, flags) < 0)
			return -1;
		c->retransmits++;
		stack_count(c->s, STACK_EV_TCP_RETRANS_SEGS);
		tcp_undo_note_resend(c, len + (flags & TCP_FLAG_FIN ? 1 : 0));
		seq += len;
	} while (seq != data_end && seq_lt(seq, wnd_end));
	return 0;
}

void tcp_recovery_send(struct tcp_conn *c)
{
	for (unsigned guard = 0; guard < 256; guard++) {
		if (tcp_pipe(c) + c->snd_mss > c->cc.cwnd || tcp_pace_wait(c))
			break;
		uint32_t i = tcp_sm_next_lost(&c->sm);
		if (i != TCP_SM_NIL) {
			if (tcp_resend_record(c, i) < 0)
				break;
			continue;
		}
		/* Nothing lost is waiting: new data, measured against the pipe, not
		 * SND.NXT - SND.UNA (RFC 6675 §5 step C, rule 2). */
		if (tcp_output_probe_new(c) == 0)
			break;
	}
}

void tcp_tlp_fire(struct tcp_conn *c)
{
	struct tcp_rack *rk = &c->rack;

	if (!tcp_tlp_allowed(c))
		return;
	/* §7.3: new data if there is some and the peer's window takes it; else the last
	 * segment sent, whose ACK (or SACK) tells whether anything before it was lost. */
	rk->tlp_retrans = false;
	if (tcp_output_probe_new(c) == 0) {
		uint32_t last = c->sm.n - 1;

		if (tcp_sm_at(&c->sm, last)->flags & TCP_SENT_SACKED ||
		    tcp_resend_record(c, last) < 0)
			return;
		rk->tlp_retrans = true;
	}
	rk->tlp_out = true;
	rk->tlp_end_seq = c->snd_max;
	stack_count(c->s, STACK_EV_TCP_TLP_PROBES);
	tcp_timer_rtx_arm(c);
}

void tcp_rack_timer_fire(struct tcp_conn *c)
{
	if (!tcp_uses_rack(c) || c->snd_una == c->snd_max)
		return;
	stack_count(c->s, STACK_EV_TCP_RACK_REO_TIMEOUTS);
	if (tcp_rack_mark_losses(c) != 0 && !(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)))
		tcp_recovery_enter(c);
	if (c->flags & TCPF_IN_RECOVERY && c->cc.ops->cong_control == NULL)
		tcp_prr(c, 0);
	tcp_output(c, false);
}

/* --- Per ACK ---------------------------------------------------------------------------- */

void tcp_recovery_ack(struct tcp_conn *c, const struct tcp_repr *th, uint32_t prior_una,
		      const struct tcp_sm_delivery *d, uint32_t prior_in_flight,
		      const struct tcp_sack_block *dsack)
{
	uint32_t newly_lost = 0;

	if (c->sm.r == NULL)
		return;
	if (tcp_uses_rack(c)) {
		if (dsack != NULL) {
			tcp_rack_dsack(&c->rack, th->ack, c->snd_max);
			tcp_undo_dsack(c, dsack);
		}
		tcp_tlp_ack(c, th, dsack, prior_in_flight,
			    th->ack == prior_una && d->bytes == 0);
		if (c->snd_una != c->snd_max)
			newly_lost = tcp_rack_mark_losses(c);
		else
			tcp_timer_cancel(c, TCP_T_REO);
		if (c->sm.lost != 0 && !(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS)))
			tcp_recovery_enter(c);
		if (c->flags & TCPF_IN_RECOVERY && c->cc.ops->cong_control == NULL)
			tcp_prr(c, d->bytes);
	}
	if (c->cc.ops->cong_control != NULL && (d->bytes != 0 || newly_lost != 0)) {
		struct tcp_rate_sample rs = {
			.now_us = c->s->now_us,
			.delivered = c->sm.delivered,
			.prior_delivered = d->prior_delivered,
			.delivered_bytes = d->rate_bytes,
			.interval_us = d->interval_us,
			.rtt_us = d->karn_rtt_us,
			.acked_sacked = d->bytes,
			.newly_lost = newly_lost,
			.prior_in_flight = prior_in_flight,
			.in_flight = tcp_pipe(c),
			.is_app_limited = d->app_limited,
		};
		c->cc.ops->cong_control(&c->cc, &rs);
	}
}
