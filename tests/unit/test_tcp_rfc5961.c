/* Blind in-window attack defences (RFC 5961) on top of RFC 9293 §3.10.7.4: a reset resets only
 * at exactly RCV.NXT (§3.2), any SYN on a synchronized connection draws a challenge ACK (§4.2),
 * ACKs outside [SND.UNA - MAX.SND.WND, SND.NXT] are refused (§5.2), challenge ACKs are rate
 * limited per stack (§7), and the SYN-SENT / SYN-RECEIVED special cases. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"

static struct tp_seg segs[TS_MAX_FRAMES];

/* The window the stack last advertised, in bytes from RCV.NXT. */
static uint32_t adv_window(const struct tcp_conn *c)
{
	return c->rcv_adv - c->rcv_nxt;
}

/* The segment is a bare ACK of exactly what the peer has sent (seq = our SND.NXT). */
static void expect_pure_ack(const struct tp_seg *g, const struct tp_peer *p)
{
	assert_int_equal(g->th.flags, TCP_FLAG_ACK);
	assert_int_equal(g->len, 0);
	assert_int_equal(g->th.seq, p->rcv_nxt);
	assert_int_equal(g->th.ack, p->snd_nxt);
}

/* ---- RST (RFC 5961 §3.2) ---- */

static void test_established_rst_at_rcv_nxt_resets_and_tells_owner(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	assert_true(tp_owner_rec.events & SOCK_EV_HUP);
	assert_ptr_equal(tp_owner_rec.last, tcp_sock(c));
	assert_int_equal(ts_s->events[STACK_EV_TCP_IN_RSTS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ESTAB_RESETS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 0);
	char b[4];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -ECONNRESET);
	tcp_close(c);
}

static void test_established_rst_ack_at_rcv_nxt_resets(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_RST | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	tcp_close(c);
}

static void test_close_wait_rst_at_rcv_nxt_reports_epipe(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	ts_clear();
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, EPIPE); /* as Linux's tcp_reset */
	tcp_close(c);
}

static void test_established_rst_in_window_gets_challenge_ack_and_survives(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	tp_send_at(&p, p.snd_nxt + 1000, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(tp_owner_rec.calls, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_IN_RSTS], 0);
	/* The connection still carries data. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "alive", 5, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 5);
}

static void test_established_rst_one_past_rcv_nxt_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + 1, p.rcv_nxt, TCP_FLAG_RST | TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_established_rst_at_last_window_byte_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t wnd = adv_window(c);
	assert_true(wnd > 1);
	tp_send_at(&p, p.snd_nxt + wnd - 1, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_established_rst_at_right_window_edge_dropped_silently(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + adv_window(c), p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_OUT_OF_WINDOW], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 0);
}

static void test_established_rst_before_rcv_nxt_dropped_silently(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt - 1, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	tp_send_at(&p, p.snd_nxt - 0x40000000u, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_OUT_OF_WINDOW], 2);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
}

/* The RFC 5961 §3.2 exchange: a peer that really lost the connection answers the challenge
 * ACK with a reset at its acknowledgment number, which is RCV.NXT. */
static void test_established_challenge_ack_answered_by_exact_rst_resets(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + 5000, 0, TCP_FLAG_RST, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	tp_send_at(&p, g.th.ack, 0, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	tcp_close(c);
}

/* ---- SYN (RFC 5961 §4.2) ---- */

static void test_established_syn_in_window_gets_challenge_ack_and_survives(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt + 100, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(tp_owner_rec.calls, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 1);
}

static void test_established_syn_at_rcv_nxt_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
}

/* RFC 5961 §4.2: "If the SYN bit is set, irrespective of the sequence number, TCP MUST send
 * an ACK (also referred to as challenge ACK)"; Linux (tcp_validate_incoming) sends its
 * rate-limited challenge ACK for out-of-window SYNs too. */
static void test_established_syn_outside_window_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt - 0x10000000u, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 1);
}

static void test_established_syn_ack_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt + 10, p.rcv_nxt, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
}

static void test_established_syn_with_data_not_delivered(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt, TCP_FLAG_SYN | TCP_FLAG_ACK, "evil", 4, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
}

/* RFC 5961 §4: a restarted peer answers the challenge ACK with a reset at its ACK number. */
static void test_established_syn_then_rst_at_challenge_ack_resets(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, 777777, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	tp_send_at(&p, g.th.ack, 0, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	tcp_close(c);
}

/* ---- ACK (RFC 5961 §5.2, RFC 9293 §3.10.7.4 "fifth") ---- */

static void test_established_ack_beyond_snd_nxt_answered_and_dropped(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt + 1, TCP_FLAG_ACK | TCP_FLAG_PSH, "data", 4, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p); /* the data was not accepted: ACK stays at p.snd_nxt */
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ACK_CHALLENGED], 1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_established_ack_beyond_snd_nxt_does_not_move_snd_una(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "0123456789", 10), 10);
	struct tp_seg g;
	tp_expect_one(&g);
	uint32_t una = c->snd_una;
	tp_send_at(&p, p.snd_nxt, g.th.seq + 11, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.len, 0);
	assert_int_equal(c->snd_una, una);
	/* Still outstanding: the retransmission timer resends it. */
	tp_advance(c->rto_ms);
	tp_expect_one(&g);
	assert_int_equal(g.len, 10);
}

static void test_established_ack_older_than_max_snd_wnd_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t old = c->snd_una - c->max_sndwnd - 1;
	tp_send_at(&p, p.snd_nxt, old, TCP_FLAG_ACK | TCP_FLAG_PSH, "data", 4, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ACK_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 1);
}

static void test_established_old_ack_within_max_snd_wnd_data_accepted(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t old = c->snd_una - c->max_sndwnd;
	tp_send_at(&p, p.snd_nxt, old, TCP_FLAG_ACK | TCP_FLAG_PSH, "data", 4, NULL);
	p.snd_nxt += 4;
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ACK_CHALLENGED], 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
}

/* RFC 9293 §3.10.7.4: the window is taken only when SND.UNA =< SEG.ACK =< SND.NXT; an old
 * ACK's window is relative to that old ACK (Linux: tcp_ack's old_ack path skips it). */
static void test_established_old_ack_does_not_update_send_window(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t old = p.rcv_nxt;
	assert_int_equal(tcp_send(c, "0123456789", 10), 10);
	struct tp_seg g;
	tp_expect_one(&g);
	p.rcv_nxt = g.th.seq + 10;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ab", 2, NULL);
	uint32_t wnd = c->snd_wnd;
	assert_int_equal(wnd, (uint32_t)p.window << p.wscale);
	/* Reordered: newer data, but sent before the peer saw our 10 bytes. */
	p.window = 1;
	tp_send_at(&p, p.snd_nxt, old, TCP_FLAG_ACK | TCP_FLAG_PSH, "late", 4, NULL);
	p.snd_nxt += 4;
	assert_int_equal(c->snd_wnd, wnd);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 6);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ACK_CHALLENGED], 0);
}

/* ---- data outside the window (RFC 9293 §3.10.7.4 "first") ---- */

static void test_established_data_beyond_window_acked_not_delivered(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + adv_window(c), p.rcv_nxt, TCP_FLAG_ACK, "late", 4, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_OUT_OF_WINDOW], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
}

static void test_established_old_data_acked_not_delivered_again(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "once", 4, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	tp_advance(TCP_DELACK_MS);
	ts_clear();
	tp_send_at(&p, p.snd_nxt - 4, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, "once", 4, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
}

static void test_established_out_of_window_acks_are_not_rate_limited_challenges(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + adv_window(c) + 10, p.rcv_nxt, TCP_FLAG_ACK, "x", 1, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ACK_CHALLENGED], 0);
}

/* ---- the challenge ACK limit (RFC 5961 §7) ---- */

static unsigned send_in_window_rsts(struct tp_peer *p, unsigned n)
{
	unsigned out = 0;
	for (unsigned i = 0; i < n; i++) {
		tp_send_at(p, p->snd_nxt + 1 + i % 100, p->rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
		if (ts_nframes > TS_MAX_FRAMES / 2) {
			out += tp_collect(segs, TS_MAX_FRAMES);
		}
	}
	return out + tp_collect(segs, TS_MAX_FRAMES);
}

static void test_established_challenge_acks_limited_per_second(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_advance(1000); /* a budget window starts with the first challenge below */
	assert_int_equal(send_in_window_rsts(&p, TCP_CHALLENGE_ACK_PER_S + 10),
			 TCP_CHALLENGE_ACK_PER_S);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], TCP_CHALLENGE_ACK_PER_S);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACK_LIMITED], 10);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], TCP_CHALLENGE_ACK_PER_S + 10);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_established_challenge_ack_budget_not_renewed_before_a_second(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	tp_advance(1000);
	assert_int_equal(send_in_window_rsts(&p, TCP_CHALLENGE_ACK_PER_S + 1),
			 TCP_CHALLENGE_ACK_PER_S);
	tp_advance(999);
	assert_int_equal(send_in_window_rsts(&p, 1), 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACK_LIMITED], 2);
}

static void test_established_challenge_ack_budget_renewed_after_a_second(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	tp_advance(1000);
	assert_int_equal(send_in_window_rsts(&p, TCP_CHALLENGE_ACK_PER_S + 1),
			 TCP_CHALLENGE_ACK_PER_S);
	tp_advance(1000);
	struct tp_seg g;
	tp_send_at(&p, p.snd_nxt + 1, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_one(&g);
	expect_pure_ack(&g, &p);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], TCP_CHALLENGE_ACK_PER_S + 1);
}

static void test_established_challenge_ack_budget_shared_by_the_stack(void **state)
{
	(void)state;
	struct tp_peer p, q;
	tp_peer_init(&p);
	tp_open_passive(&p);
	tp_peer_init(&q);
	q.port = TP_PPORT + 1;
	struct tcp_conn *l = tcp_listener_lookup(ts_s, INET_ADDR_V4(TS_ADDR0), TP_LPORT);
	assert_non_null(l);
	struct tcp_options o = tp_linux_syn_opts(&q);
	q.ts = true;
	tp_send(&q, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	q.rcv_nxt = g.th.seq + 1;
	q.tsecr = g.th.options.tsval;
	tp_send(&q, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_non_null(tcp_accept(l, &tp_owner));
	tp_advance(1000);
	assert_int_equal(send_in_window_rsts(&p, TCP_CHALLENGE_ACK_PER_S),
			 TCP_CHALLENGE_ACK_PER_S);
	/* The other connection's challenge falls under the same budget. */
	assert_int_equal(send_in_window_rsts(&q, 1), 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACK_LIMITED], 1);
}

static void test_established_limited_syn_challenge_still_survives(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_advance(1000);
	send_in_window_rsts(&p, TCP_CHALLENGE_ACK_PER_S);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, p.snd_nxt + 10, 0, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACK_LIMITED], 1);
}

/* ---- SYN-SENT (RFC 9293 §3.10.7.3, RFC 5961 §3.2) ---- */

static struct tcp_conn *connect_to_peer(uint32_t *iss)
{
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(NULL, TP_PPORT, &g);
	*iss = g.th.seq;
	return c;
}

static void test_syn_sent_rst_with_bad_ack_ignored(void **state)
{
	(void)state;
	uint32_t iss;
	struct tcp_conn *c = connect_to_peer(&iss);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options none = {0};
	tp_send_at(&p, 0, iss + 2, TCP_FLAG_RST | TCP_FLAG_ACK, NULL, 0, &none);
	tp_expect_none();
	tp_send_at(&p, 0, iss, TCP_FLAG_RST | TCP_FLAG_ACK, NULL, 0, &none);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_SYN_SENT);
	assert_int_equal(tcp_sock(c)->error, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_ACK], 2);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CONN_REFUSED], 0);
	/* The real SYN-ACK still completes the handshake. */
	tp_send_at(&p, TP_PEER_ISN, iss + 1, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &none);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_syn_sent_rst_without_ack_ignored(void **state)
{
	(void)state;
	uint32_t iss;
	struct tcp_conn *c = connect_to_peer(&iss);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options none = {0};
	tp_send_at(&p, 0, 0, TCP_FLAG_RST, NULL, 0, &none);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_SYN_SENT);
	assert_int_equal(tcp_sock(c)->error, 0);
}

static void test_syn_sent_bad_ack_without_rst_answered_with_rst(void **state)
{
	(void)state;
	uint32_t iss;
	struct tcp_conn *c = connect_to_peer(&iss);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options none = {0};
	tp_send_at(&p, TP_PEER_ISN, iss + 100, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &none);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(g.th.seq, iss + 100);
	assert_int_equal(tcp_conn_state(c), TCP_SYN_SENT);
}

/* ---- SYN-RECEIVED ---- */

static void syn_to_listener(struct tp_peer *p, struct tp_seg *synack)
{
	struct tcp_options o = tp_linux_syn_opts(p);
	p->ts = true;
	tp_send(p, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(synack);
	assert_int_equal(synack->th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	p->rcv_nxt = synack->th.seq + 1;
	p->tsecr = synack->th.options.tsval;
}

static void test_syn_received_rst_at_rcv_nxt_frees_child_quietly(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tp_seg g;
	syn_to_listener(&p, &g);
	unsigned n = ts_s->tcp->nconns;
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(ts_s->tcp->nconns, n - 1);
	assert_int_equal(l->syn_qlen, 0);
	assert_int_equal(l->accept_qlen, 0);
	assert_true(TAILQ_EMPTY(&l->syn_q));
	assert_true(TAILQ_EMPTY(&l->accept_q));
	assert_int_equal(tp_owner_rec.calls, 0);
	assert_null(tcp_accept(l, &tp_owner));
	assert_int_equal(tcp_conn_state(l), TCP_LISTEN);
	/* The listener takes the next attempt from the same port. */
	tp_peer_init(&p);
	p.snd_nxt += 5000;
	syn_to_listener(&p, &g);
	assert_int_equal(l->syn_qlen, 1);
}

static void test_syn_received_rst_in_window_gets_challenge_ack(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tp_seg g;
	syn_to_listener(&p, &g);
	tp_send_at(&p, p.snd_nxt + 10, 0, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(l->syn_qlen, 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 1);
	/* The handshake still completes. */
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_non_null(tcp_accept(l, &tp_owner));
}

static void test_syn_received_rst_then_listener_close_is_clean(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p, q;
	tp_peer_init(&p);
	tp_peer_init(&q);
	q.port = TP_PPORT + 1;
	struct tp_seg g;
	syn_to_listener(&p, &g);
	syn_to_listener(&q, &g);
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL); /* p's child was first in the SYN queue */
	tp_expect_none();
	assert_int_equal(l->syn_qlen, 1);
	tcp_close(l); /* resets q's child */
	tp_expect_one(&g);
	assert_int_equal(g.th.dst_port, q.port);
	assert_true(g.th.flags & TCP_FLAG_RST);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tp_setup, tp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_established_rst_at_rcv_nxt_resets_and_tells_owner),
		T(test_established_rst_ack_at_rcv_nxt_resets),
		T(test_close_wait_rst_at_rcv_nxt_reports_epipe),
		T(test_established_rst_in_window_gets_challenge_ack_and_survives),
		T(test_established_rst_one_past_rcv_nxt_gets_challenge_ack),
		T(test_established_rst_at_last_window_byte_gets_challenge_ack),
		T(test_established_rst_at_right_window_edge_dropped_silently),
		T(test_established_rst_before_rcv_nxt_dropped_silently),
		T(test_established_challenge_ack_answered_by_exact_rst_resets),
		T(test_established_syn_in_window_gets_challenge_ack_and_survives),
		T(test_established_syn_at_rcv_nxt_gets_challenge_ack),
		T(test_established_syn_outside_window_gets_challenge_ack),
		T(test_established_syn_ack_gets_challenge_ack),
		T(test_established_syn_with_data_not_delivered),
		T(test_established_syn_then_rst_at_challenge_ack_resets),
		T(test_established_ack_beyond_snd_nxt_answered_and_dropped),
		T(test_established_ack_beyond_snd_nxt_does_not_move_snd_una),
		T(test_established_ack_older_than_max_snd_wnd_gets_challenge_ack),
		T(test_established_old_ack_within_max_snd_wnd_data_accepted),
		T(test_established_old_ack_does_not_update_send_window),
		T(test_established_data_beyond_window_acked_not_delivered),
		T(test_established_old_data_acked_not_delivered_again),
		T(test_established_out_of_window_acks_are_not_rate_limited_challenges),
		T(test_established_challenge_acks_limited_per_second),
		T(test_established_challenge_ack_budget_not_renewed_before_a_second),
		T(test_established_challenge_ack_budget_renewed_after_a_second),
		T(test_established_challenge_ack_budget_shared_by_the_stack),
		T(test_established_limited_syn_challenge_still_survives),
		T(test_syn_sent_rst_with_bad_ack_ignored),
		T(test_syn_sent_rst_without_ack_ignored),
		T(test_syn_sent_bad_ack_without_rst_answered_with_rst),
		T(test_syn_received_rst_at_rcv_nxt_frees_child_quietly),
		T(test_syn_received_rst_in_window_gets_challenge_ack),
		T(test_syn_received_rst_then_listener_close_is_clean),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
