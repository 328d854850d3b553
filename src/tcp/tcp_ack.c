/* The ACK of a segment in a synchronized state (RFC 9293 §3.10.7.4): acceptability
 * (RFC 5961 §5.2), the send window, what the ACK delivered taken off the sent map, duplicate
 * ACKs and NewReno's fast recovery without SACK (RFC 5681, RFC 6582), the RACK-driven
 * recovery with SACK (tcp_recovery.c), congestion control, ECN reactions (RFC 3168) and the
 * closing states the ACK of our FIN advances. */
#include "tcp_input.h"

/* Without SACK: enters fast recovery on the third duplicate ACK (RFC 5681 §3.2), unless the
 * ACK covers no more than "recover" (RFC 6582 §3.2 step 1: a loss already being repaired).
 * With SACK, RACK decides (tcp_recovery.c). */
static void tcp_enter_recovery(struct tcp_conn *c)
{
	struct stack *s = c->s;
	uint32_t flight = tcp_flight(c);
	c->recover = c->snd_max;
	c->cc.ssthresh = c->cc.ops->ssthresh(&c->cc, flight, s->now_us);
	c->flags |= TCPF_IN_RECOVERY;
	c->flags &= ~TCPF_RTT_TIMING;
	c->cc.state = TCP_CC_RECOVERY;
	stack_count(s, STACK_EV_TCP_FAST_RETRANS);
	if (c->flags & TCPF_ECN_OK)
		c->flags |= TCPF_CWR;
	uint32_t len = flight < c->snd_mss ? flight : c->snd_mss;
	if (c->snd_una + len == c->snd_max && c->flags & TCPF_FIN_SENT && len > 0)
		len--; /* the FIN is resent by output, not as data */
	/* RFC 6582 §3.2 step 2: retransmit, cwnd = ssthresh + 3*SMSS. */
	c->cc.cwnd = c->cc.ssthresh + 3 * c->snd_mss;
	if (len > 0 && tcp_send_segment(c, c->snd_una, len, TCP_FLAG_ACK) >= 0) {
		c->retransmits++;
		stack_count(s, STACK_EV_TCP_RETRANS_SEGS);
	}
	tcp_timer_rtx_arm(c);
}

static void tcp_dupack(struct tcp_conn *c, const struct tcp_seg *g)
{
	c->dupacks++;
	stack_count(c->s, STACK_EV_TCP_DUPACKS);
	if (c->flags & TCPF_SACK_OK)
		return; /* RACK decides what is lost (tcp_recovery.c) */
	if (c->flags & TCPF_IN_RECOVERY) {
		c->cc.cwnd += c->snd_mss; /* RFC 6582 §3.2 step 4: inflate; output follows */
		return;
	}
	if (c->dupacks >= TCP_DUPTHRESH && seq_gt(g->th.ack, c->recover))
		tcp_enter_recovery(c);
	else if (c->dupacks >= TCP_DUPTHRESH)
		stack_count(c->s, STACK_EV_TCP_DUPACKS_AFTER_RTO);
}

/* An ACK that moved SND.UNA. */
static void tcp_new_ack(struct tcp_conn *c, const struct tcp_seg *g, uint32_t acked,
			const struct tcp_sm_delivery *d)
{
	struct stack *s = c->s;
	uint32_t flight = tcp_flight(c);
	uint32_t data = acked;
	if (tcp_fin_acked(c) || (c->flags & TCPF_FIN_SENT && g->th.ack == c->snd_max))
		data--; /* the FIN's sequence number is not a byte in the FIFO */
	uint32_t queued = fifo_used(c->sk.tx);
	fifo_consume(c->sk.tx, data < queued ? data : queued);
	c->bytes_acked += data;
	/* RTT (Karn: never across a resend): the sent map's µs sample of the newest segment
	 * delivered, else the timed segment, else the timestamp echo (ms). */
	uint32_t rtt_us = d->karn_rtt_us;
	if (c->flags & TCPF_RTT_TIMING && seq_gt(g->th.ack, c->rtt_seq)) {
		if (rtt_us == 0)
			rtt_us = (uint32_t)(s->now_us - c->rtt_start_us);
		c->flags &= ~TCPF_RTT_TIMING;
	} else if (rtt_us == 0 && c->flags & TCPF_TS_OK && g->th.options.has_timestamps &&
		   g->th.options.tsecr != 0 && c->backoff == 0) {
		uint32_t ms = tcp_now_ts(s) + c->ts_offset - g->th.options.tsecr;
		if (ms < TCP_RTO_MAX_MS)
			rtt_us = ms * 1000;
	}
	if (rtt_us != 0)
		tcp_rtt_sample(c, rtt_us);
	c->snd_una = g->th.ack;
	if (seq_lt(c->snd_nxt, c->snd_una))
		c->snd_nxt = c->snd_una;
	c->backoff = 0;
	c->retries = 0;
	c->rtx_since_ms = 0;
	c->dupacks = 0;

	if (c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS) && seq_ge(g->th.ack, c->recover)) {
		/* Full ACK (RFC 6582 §3.2 step 3, RFC 6675 §5 step 4): leave recovery. */
		tcp_recovery_exit(c);
	} else if (c->flags & TCPF_IN_RECOVERY) {
		if (!(c->flags & TCPF_SACK_OK)) {
			/* Partial ACK (RFC 6582 §3.2 step 5): resend the next hole, deflate. */
			uint32_t len = tcp_flight(c) < c->snd_mss ? tcp_flight(c) : c->snd_mss;
			if (len > 0 && tcp_send_segment(c, c->snd_una, len, TCP_FLAG_ACK) >= 0) {
				c->retransmits++;
				stack_count(s, STACK_EV_TCP_RETRANS_SEGS);
			}
			c->cc.cwnd = c->cc.cwnd > acked ? c->cc.cwnd - acked : 0;
			c->cc.cwnd += c->snd_mss;
			tcp_timer_rtx_arm(c);
		}
	} else if (c->cc.ops->cong_control == NULL) {
		/* Open, or slow start after an RTO (RFC 5681 §3.1). A model-based controller
		 * takes its rate sample in tcp_recovery_ack instead. */
		struct tcp_cc_ack a = {
			.acked = data,
			.in_flight = flight,
			.rtt_us = rtt_us,
			.now_us = s->now_us,
			/* cwnd was not the limit: the application or the peer's window was
			 * (RFC 7661); growing cwnd then only inflates it. */
			.app_limited = flight + c->snd_mss < c->cc.cwnd,
		};
		c->cc.ops->on_ack(&c->cc, &a);
	}
	/* RFC 3168 §6.1.2: react to ECE once per window of data, like a loss without resend. */
	if (c->flags & TCPF_ECN_OK && g->th.flags & TCP_FLAG_ECE &&
	    seq_gt(g->th.ack, c->ecn_recover) && !(c->flags & TCPF_IN_RECOVERY)) {
		c->cc.ssthresh = c->cc.ops->ssthresh(&c->cc, flight, s->now_us);
		c->cc.cwnd = c->cc.ssthresh;
		c->ecn_recover = c->snd_max;
		c->flags |= TCPF_CWR;
		stack_count(s, STACK_EV_TCP_ECN_REDUCTIONS);
	}
	if (c->snd_una == c->snd_max)
		tcp_timer_cancel(c, TCP_T_RTX);
	else
		tcp_timer_rtx_arm(c);
	if (c->sk.tx != NULL && fifo_free(c->sk.tx) > 0)
		tcp_notify(c, SOCK_EV_OUT);
}

bool tcp_ack_input(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct stack *s = c->s;
	uint32_t ack = g->th.ack;
	/* RFC 5961 §5.2: acceptable only in [SND.UNA - MAX.SND.WND, SND.NXT]. */
	if (seq_gt(ack, c->snd_max) || seq_lt(ack, c->snd_una - c->max_sndwnd)) {
		stack_count(s, STACK_EV_TCP_ACK_CHALLENGED);
		tcp_send_challenge_ack(c);
		return false;
	}
	if (c->state == TCP_SYN_RECEIVED) {
		if (!seq_gt(ack, c->snd_una)) {
			tcp_send_rst_reply(s, g->ip, &g->th, g->len);
			return false;
		}
		c->snd_wnd = (uint32_t)g->th.window << c->snd_wscale;
		c->max_sndwnd = c->snd_wnd;
		c->snd_wl1 = g->th.seq;
		c->snd_wl2 = ack;
		c->snd_una++; /* the SYN */
		tcp_timer_cancel(c, TCP_T_RTX);
		if (c->retries == 0 && !(c->flags & TCPF_COOKIE) && c->rtt_start_us != 0)
			tcp_rtt_sample(c, (uint32_t)(s->now_us - c->rtt_start_us));
		if (tcp_conn_established(c) < 0) {
			stack_count(s, STACK_EV_TCP_NO_MEMORY);
			tcp_send_rst(c);
			tcp_conn_done(c, ENOMEM);
			return false;
		}
	}
	uint32_t newly_sacked = 0;
	struct tcp_sb_result sb_res;
	const struct tcp_sack_block *dsack = NULL;
	if (c->flags & TCPF_SACK_OK) {
		tcp_sb_update(&c->sb, c->snd_una, ack, c->snd_max, g->th.options.sack_blocks,
			      g->th.options.sack_count, &sb_res);
		if (sb_res.dsack) {
			stack_count(s, STACK_EV_TCP_DSACKS_RX);
			dsack = &sb_res.dsack_block;
		}
		newly_sacked = sb_res.newly_sacked;
	}
	/* What this ACK delivered, segment by segment, before SND.UNA moves. */
	uint32_t prior_in_flight = tcp_pipe(c);
	uint32_t prior_una = c->snd_una;
	struct tcp_sm_delivery delivered;
	tcp_recovery_ack_deliveries(c, &g->th, &delivered);
	uint32_t acked = ack - c->snd_una;
	/* RFC 9293 §3.10.7.4: take the window from the newest segment only (SND.WL1/WL2), and
	 * only when SND.UNA =< SEG.ACK: an old ACK's window is relative to that old ACK (Linux:
	 * tcp_ack's old_ack path). */
	bool window_changed = false;
	if (seq_ge(ack, c->snd_una) &&
	    (seq_lt(c->snd_wl1, g->th.seq) ||
	     (c->snd_wl1 == g->th.seq && seq_le(c->snd_wl2, ack)))) {
		uint32_t wnd = (uint32_t)g->th.window << c->snd_wscale;
		window_changed = wnd != c->snd_wnd;
		c->snd_wnd = wnd;
		c->snd_wl1 = g->th.seq;
		c->snd_wl2 = ack;
		if (wnd > c->max_sndwnd)
			c->max_sndwnd = wnd;
	}
	if (window_changed && c->snd_wnd != 0 && c->snd_una == c->snd_max) {
		/* The persist timer was set for the old window: stop it and its backoff (Linux
		 * tcp_ack_probe). Output arms what fits the new window, a full un-backed-off
		 * RTO for the data it sends now. */
		tcp_timer_cancel(c, TCP_T_PERSIST);
		c->backoff = 0;
	}
	/* Duplicate ACKs: RFC 5681 §2's definition (no data, no window change, nothing new),
	 * or with SACK RFC 6675 §2's: any ACK at SND.UNA that SACKs new data, whatever its
	 * window or payload; Linux peers change their window on nearly every ACK. */
	bool dup_5681 = g->len == 0 && !window_changed &&
			!(g->th.flags & (TCP_FLAG_SYN | TCP_FLAG_FIN));
	if (acked != 0 && seq_gt(ack, c->snd_una)) {
		tcp_new_ack(c, g, acked, &delivered);
	} else if (ack == c->snd_una && c->snd_una != c->snd_max &&
		   (newly_sacked != 0 || (dup_5681 && !(c->flags & TCPF_SACK_OK)) ||
		    (dup_5681 && c->flags & TCPF_SACK_OK && g->th.options.sack_count == 0))) {
		tcp_dupack(c, g);
	}
	tcp_recovery_ack(c, &g->th, prior_una, &delivered, prior_in_flight, dsack);
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		if (tcp_fin_acked(c)) {
			tcp_set_state(c, TCP_FIN_WAIT_2);
			tcp_timer_cancel(c, TCP_T_RTX);
			if (c->flags & TCPF_ORPHAN)
				tcp_timer_arm(c, TCP_T_KEEP, s->tcp->params.fin_timeout_ms);
		}
		break;
	case TCP_CLOSING:
		if (tcp_fin_acked(c))
			tcp_conn_enter_time_wait(c);
		break;
	case TCP_LAST_ACK:
		if (tcp_fin_acked(c)) {
			tcp_conn_done(c, 0);
			return false;
		}
		break;
	default:
		break;
	}
	return true;
}

