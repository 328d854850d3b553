/* TCP timers on the worker's timer wheel: retransmission with exponential backoff and the
 * retry/user-timeout limits (RFC 6298 §5, RFC 9293 §3.8.3, RFC 5482), RACK's reorder timer
 * and the tail loss probe (RFC 8985 §6.3, §7; their work is in tcp_recovery.c), the persist timer
 * (§3.8.6.1), delayed ACKs (§3.8.6.3), keepalive (RFC 1122 §4.2.3.6), FIN-WAIT-2 and
 * TIME-WAIT expiry (§3.10.7.4), and the RTT estimator that sets the RTO (RFC 6298 §2). */
#include <errno.h>
#include <stddef.h>

#include "tcp_priv.h"

static struct tcp_conn *tcp_timer_conn(struct tw_timer *tw)
{
	struct tcp_timer *t = (struct tcp_timer *)tw;
	struct tcp_timer *first = t - t->kind;
	return (struct tcp_conn *)((char *)first - offsetof(struct tcp_conn, timers));
}

void tcp_timer_arm(struct tcp_conn *c, enum tcp_timer_kind k, uint64_t delay_ms)
{
	tw_timer_arm(c->s->tcp->timers, &c->timers[k].tw, c->s->now_ms + delay_ms);
}

void tcp_timer_cancel(struct tcp_conn *c, enum tcp_timer_kind k)
{
	tw_timer_cancel(&c->timers[k].tw);
}

bool tcp_timer_armed(const struct tcp_conn *c, enum tcp_timer_kind k)
{
	return tw_timer_armed(&c->timers[k].tw);
}

void tcp_timers_cancel(struct tcp_conn *c)
{
	for (unsigned k = 0; k < TCP_T_COUNT; k++)
		tw_timer_cancel(&c->timers[k].tw);
}

static uint32_t tcp_backed_off_rto(const struct tcp_conn *c)
{
	uint64_t rto = (uint64_t)c->rto_ms << (c->backoff < 16 ? c->backoff : 16);
	return rto > TCP_RTO_MAX_MS ? TCP_RTO_MAX_MS : (uint32_t)rto;
}

void tcp_timer_rtx_arm(struct tcp_conn *c)
{
	tcp_timer_arm(c, TCP_T_RTX, tcp_backed_off_rto(c));
}

void tcp_timer_keepalive_arm(struct tcp_conn *c)
{
	if (c->opts.keepalive)
		tcp_timer_arm(c, TCP_T_KEEP, c->opts.keep_idle_ms);
}

/* RFC 6298 §2.2–2.4, in microseconds: RTO = SRTT + max(G, 4*RTTVAR), G = 1 ms (our clock). */
void tcp_rtt_sample(struct tcp_conn *c, uint32_t rtt_us)
{
	if (rtt_us == 0)
		rtt_us = 1;
	if (c->srtt_us == 0) {
		c->srtt_us = rtt_us;
		c->rttvar_us = rtt_us / 2;
	} else {
		uint32_t delta = c->srtt_us > rtt_us ? c->srtt_us - rtt_us : rtt_us - c->srtt_us;
		c->rttvar_us = c->rttvar_us - c->rttvar_us / 4 + delta / 4;
		c->srtt_us = c->srtt_us - c->srtt_us / 8 + rtt_us / 8;
	}
	uint32_t var = 4 * c->rttvar_us < 1000 ? 1000 : 4 * c->rttvar_us;
	uint32_t rto = (c->srtt_us + var + 999) / 1000;
	uint32_t floor = c->s->tcp->params.rto_min_ms;
	c->rto_ms = rto < floor ? floor : rto > TCP_RTO_MAX_MS ? TCP_RTO_MAX_MS : rto;
	if (c->cc.ops->on_rtt != NULL)
		c->cc.ops->on_rtt(&c->cc, rtt_us, c->s->now_us);
}

static bool tcp_gave_up(struct tcp_conn *c, unsigned limit)
{
	if (c->opts.user_timeout_ms != 0)
		return c->s->now_ms - c->rtx_since_ms >= c->opts.user_timeout_ms;
	return c->retries >= limit;
}

/* The timeout's resend, when tcp_output held it back: the peer shut its window with data in
 * flight (it took part and dropped the rest), or shrank it below what sender SWS avoidance
 * sends into. RFC 9293 §3.8.6.1: "retransmit ... even if the send window is zero"; so the
 * first unacknowledged bytes go anyway, up to a segment of what was sent before and no
 * more than a window that is open, and draw the ACK with the window (as Linux's
 * tcp_retransmit_timer and tcp_retransmit_skb do). */
static void tcp_timer_rtx_held_back(struct tcp_conn *c)
{
	uint32_t len = c->sk.tx != NULL ? fifo_used(c->sk.tx) : 0;
	uint32_t mss = tcp_cur_mss(c);
	if (len > mss)
		len = mss;
	if (len > c->snd_max - c->snd_una)
		len = c->snd_max - c->snd_una;
	if (c->snd_wnd != 0 && len > c->snd_wnd)
		len = c->snd_wnd;
	if (len == 0 || tcp_send_segment(c, c->snd_una, len, TCP_FLAG_ACK) < 0)
		return;
	c->snd_nxt = c->snd_una + len;
	c->retransmits++;
	stack_count(c->s, STACK_EV_TCP_RETRANS_SEGS);
}

static void tcp_timer_persist_fire(struct tcp_conn *c)
{
	struct stack *s = c->s;
	if (c->snd_una != c->snd_max || tcp_unsent(c) == 0)
		return; /* data went out since: the retransmission timer has it */
	if (c->snd_wnd != 0) {
		/* Sender SWS avoidance held back a short segment for too long (RFC 9293
		 * §3.8.6.2.1 override timeout): send what the window takes. */
		c->flags |= TCPF_SWS_OVERRIDE;
		tcp_output(c, false);
		c->flags &= ~TCPF_SWS_OVERRIDE;
		return;
	}
	/* Probe the zero window with an old sequence number, which draws an ACK carrying the
	 * current window without putting new data at risk. A peer that answers keeps the
	 * connection for as long as it likes (RFC 9293 §3.8.6.1, any segment resets
	 * c->probes); one that stays silent through the retry limit (fewer for an orphan, as
	 * Linux's tcp_orphan_retries) is gone. */
	unsigned limit = c->flags & TCPF_ORPHAN ? TCP_ORPHAN_RETRIES : s->tcp->params.retries;
	if (c->probes >= limit) {
		stack_count(s, STACK_EV_TCP_TIMEOUTS);
		tcp_conn_done(c, ETIMEDOUT);
		return;
	}
	c->probes++;
	stack_count(s, STACK_EV_TCP_WINDOW_PROBES);
	tcp_send_segment(c, c->snd_una - 1, 0, TCP_FLAG_ACK);
	if (c->backoff < 16)
		c->backoff++;
	tcp_timer_arm(c, TCP_T_PERSIST, tcp_backed_off_rto(c));
}

static void tcp_timer_rtx_fire(struct tcp_conn *c)
{
	struct stack *s = c->s;
	if (c->snd_una == c->snd_max)
		return;
	bool handshake = c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED;
	const struct tcp_params *tp = &s->tcp->params;
	unsigned limit = c->state == TCP_SYN_SENT ? tp->syn_retries
			 : c->state == TCP_SYN_RECEIVED ? tp->synack_retries : tp->retries;
	if (c->retries == 0)
		/* RFC 5482 §2: the user timeout bounds how long data stays unacknowledged, so
		 * it runs from when this timer was armed (the send, or the last ACK that made
		 * progress), one RTO ago, not from this first retransmission. */
		c->rtx_since_ms = s->now_ms - tcp_backed_off_rto(c);
	if (tcp_gave_up(c, limit)) {
		stack_count(s, STACK_EV_TCP_TIMEOUTS);
		if (!handshake)
			tcp_send_rst(c);
		tcp_conn_done(c, c->soft_error != 0 ? c->soft_error : ETIMEDOUT);
		return;
	}
	c->retries++;
	stack_count(s, STACK_EV_TCP_RTO);
	if (handshake) {
		/* RFC 6298 §5.7: the RTO after a lost SYN starts at 3 s when data flows;
		 * we just back off from the initial 1 s. */
		c->snd_nxt = c->iss;
		c->retransmits++;
		stack_count(s, STACK_EV_TCP_RETRANS_SEGS);
	} else if (c->flags & TCPF_SACK_OK && c->sm.r != NULL) {
		tcp_recovery_on_rto(c);
	} else {
		/* RFC 5681 §3.1 eq. 4 once per loss episode, cwnd to the loss window; RFC 6582:
		 * recover = highest sent, so dupACKs of the old window start no fast retransmit. */
		if (c->backoff == 0)
			c->cc.ops->on_rto(&c->cc, tcp_flight(c), s->now_us);
		else
			c->cc.cwnd = c->cc.mss;
		c->flags &= ~(TCPF_IN_RECOVERY | TCPF_RTT_TIMING);
		c->recover = c->snd_max;
		c->dupacks = 0;
		/* RFC 6675 §5.1: the scoreboard may be stale (the receiver may renege). */
		tcp_sb_clear(&c->sb);
		c->snd_nxt = c->snd_una;
	}
	if (c->backoff < 16)
		c->backoff++;
	/* RFC 6298 §5.5–5.6: back off, then retransmit the earliest unacknowledged segment. */
	tcp_timer_rtx_arm(c);
	if (c->opts.user_timeout_ms != 0) {
		/* Never sleep past the user timeout (Linux tcp_clamp_rto_to_user_timeout). */
		uint64_t end = c->rtx_since_ms + c->opts.user_timeout_ms;
		if (end > s->now_ms && end - s->now_ms < tcp_backed_off_rto(c))
			tcp_timer_arm(c, TCP_T_RTX, end - s->now_ms);
	}
	tcp_output(c, false);
	if (!handshake && c->snd_nxt == c->snd_una)
		tcp_timer_rtx_held_back(c);
}

static void tcp_timer_keep_fire(struct tcp_conn *c)
{
	struct stack *s = c->s;
	switch (c->state) {
	case TCP_TIME_WAIT:
		tcp_conn_done(c, 0);
		return;
	case TCP_FIN_WAIT_2:
		/* Orphaned and the peer never closes: give up as Linux does (tcp_fin_timeout). */
		if (c->flags & TCPF_ORPHAN) {
			stack_count(s, STACK_EV_TCP_FIN_WAIT2_TIMEOUTS);
			tcp_conn_done(c, 0);
			return;
		}
		break;
	default:
		break;
	}
	if (!c->opts.keepalive || (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT &&
				   c->state != TCP_FIN_WAIT_2))
		return;
	uint64_t idle = s->now_ms - c->last_rx_ms;
	if (c->probes == 0 && idle < c->opts.keep_idle_ms) {
		tcp_timer_arm(c, TCP_T_KEEP, c->opts.keep_idle_ms - idle);
		return;
	}
	if (c->probes >= c->opts.keep_cnt) {
		stack_count(s, STACK_EV_TCP_KEEPALIVE_TIMEOUTS);
		tcp_send_rst(c);
		tcp_conn_done(c, ETIMEDOUT);
		return;
	}
	/* RFC 1122 §4.2.3.6: a segment with SEG.SEQ = SND.NXT-1 and no data draws an ACK. */
	stack_count(s, STACK_EV_TCP_KEEPALIVE_PROBES);
	c->probes++;
	tcp_send_segment(c, c->snd_una - 1, 0, TCP_FLAG_ACK);
	tcp_timer_arm(c, TCP_T_KEEP, c->opts.keep_intvl_ms);
}

static void tcp_timer_fire(struct tw_timer *tw, void *ctx)
{
	(void)ctx;
	struct tcp_conn *c = tcp_timer_conn(tw);
	if (c->flags & TCPF_FREED)
		return;
	switch (((struct tcp_timer *)tw)->kind) {
	case TCP_T_RTX:
		tcp_timer_rtx_fire(c);
		break;
	case TCP_T_PERSIST:
		tcp_timer_persist_fire(c);
		break;
	case TCP_T_DELACK:
		stack_count(c->s, STACK_EV_TCP_DELAYED_ACKS);
		c->flags &= ~TCPF_PINGPONG; /* no answer came to carry it (Linux) */
		tcp_send_ack(c);
		break;
	case TCP_T_KEEP:
		tcp_timer_keep_fire(c);
		break;
	case TCP_T_REO:
		tcp_rack_timer_fire(c);
		break;
	case TCP_T_TLP:
		tcp_tlp_fire(c);
		break;
	case TCP_T_PACE:
		tcp_output(c, false);
		break;
	}
}

void tcp_stack_tick(struct stack *s)
{
	timer_wheel_advance(s->tcp->timers, s->now_ms, tcp_timer_fire, s);
	tcp_deliver_events(s);
	tcp_reap(s);
}
