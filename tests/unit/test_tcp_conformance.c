/* Where applications or peers notice, behave as Linux does (issue 13's conformance list): a
 * SYN+FIN on a synchronized connection draws the RFC 5961 §4 challenge ACK; a FIN beyond a
 * hole is kept and taken when the hole fills; the first data segments are ACKed at once
 * (quick-ACK); a reset in CLOSING or LAST-ACK is ECONNRESET; TIME-WAIT ACKs what it must
 * (RFC 9293 §3.10.7.4) and keeps quiet otherwise; TCP_CORK and MSG_MORE hold short segments;
 * a forged frag-needed cannot push the path MTU below 552. All on the virtual clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "test_tcp_util.h"
#include "../../src/wire/icmp4.h"
#include "../../src/wire/ipv4.h"

static struct tp_seg segs[TS_MAX_FRAMES];
static uint8_t pat[16384];

static void expect_bare_ack(const struct tp_seg *g, uint32_t ack)
{
	assert_int_equal(g->th.flags, TCP_FLAG_ACK);
	assert_int_equal(g->len, 0);
	assert_int_equal(g->th.ack, ack);
}

/* ---- 1. SYN+FIN (RFC 5961 §4) ---- */

static void test_established_syn_fin_gets_challenge_ack_fin_ignored(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t rcv_nxt = c->rcv_nxt;
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt, TCP_FLAG_SYN | TCP_FLAG_FIN, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(c->rcv_nxt, rcv_nxt); /* the FIN was not taken */
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_FIN_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_FLAGS], 0);
}

static void test_established_syn_fin_ack_out_of_window_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt - 100000, p.rcv_nxt, TCP_FLAG_SYN | TCP_FLAG_FIN | TCP_FLAG_ACK,
		   NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_listen_syn_fin_dropped_without_answer(void **state)
{
	(void)state;
	tp_listen(4);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_FIN, NULL, 0, &o);
	tp_expect_none();
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_FLAGS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PASSIVE_OPENS], 0);
}

/* Linux's tcp_v4_send_reset answers it as any segment to a closed port (RFC 9293
 * §3.10.7.1): <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>, the SYN and the FIN counted. */
static void test_closed_port_syn_fin_answered_by_reset(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t seq = p.snd_nxt;
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_FIN, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST | TCP_FLAG_ACK);
	assert_int_equal(g.th.seq, 0);
	assert_int_equal(g.th.ack, seq + 2);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_FLAGS], 0);
}

/* SYN with RST: a reset (Linux checks RST before SYN), RFC 5961 §3. */
static void test_established_syn_rst_at_rcv_nxt_resets(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 0);
	tcp_close(c);
}

static void test_established_syn_rst_in_window_gets_challenge_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send_at(&p, p.snd_nxt + 10, 0, TCP_FLAG_SYN | TCP_FLAG_RST, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RST_CHALLENGED], 1);
}

static void test_listen_syn_rst_ignored(void **state)
{
	(void)state;
	tp_listen(4);
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(ts_s->events[STACK_EV_TCP_PASSIVE_OPENS], 0);
}

static void test_closed_port_syn_rst_not_answered(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(ts_s->events[STACK_EV_TCP_NO_CONN], 1);
}

/* ---- 2. A FIN beyond a hole (RFC 9293 §3.10.7.4, RFC 5681 §4.2) ---- */

static void test_established_ooo_bare_fin_dupacked_with_sack_then_taken_when_hole_fills(
	void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t p0 = p.snd_nxt;
	tp_send_at(&p, p0 + 100, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p0);
	assert_int_equal(g.th.options.sack_count, 1);
	assert_int_equal(g.th.options.sack_blocks[0].left, p0 + 100);
	assert_int_equal(g.th.options.sack_blocks[0].right, p0 + 101);
	assert_int_equal(ts_s->events[STACK_EV_TCP_OOO_FINS], 1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	/* The hole fills: the ACK covers the FIN at once, no resend of the FIN needed. */
	tp_send_at(&p, p0, p.rcv_nxt, TCP_FLAG_ACK, pat, 100, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p0 + 101);
	assert_int_equal(g.th.options.sack_count, 0);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSE_WAIT);
	char b[200];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 100);
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 0);
}

static void test_established_ooo_data_with_fin_taken_when_hole_fills(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t p0 = p.snd_nxt;
	tp_send_at(&p, p0 + 100, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, pat + 100, 100, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p0);
	assert_int_equal(g.th.options.sack_blocks[0].left, p0 + 100);
	assert_int_equal(g.th.options.sack_blocks[0].right, p0 + 201); /* the FIN included */
	tp_send_at(&p, p0, p.rcv_nxt, TCP_FLAG_ACK, pat, 100, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p0 + 201);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSE_WAIT);
	char b[300];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 200);
	assert_memory_equal(b, pat, 200);
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 0);
}

static void test_established_ooo_fin_then_in_order_fin_resend_taken_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t p0 = p.snd_nxt;
	tp_send_at(&p, p0 + 100, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	/* The peer resends everything, the FIN with its data. */
	tp_send_at(&p, p0, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, pat, 100, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p0 + 101);
	assert_int_equal(c->rcv_nxt, p0 + 101);
	assert_int_equal(ts_s->events[STACK_EV_TCP_IN_FINS], 1);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSE_WAIT);
}

static void test_fin_wait_2_ooo_fin_taken_when_hole_fills_enters_time_wait(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	p.rcv_nxt = g.th.seq + 1;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_FIN_WAIT_2);
	uint32_t p0 = p.snd_nxt;
	tp_send_at(&p, p0 + 10, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p0);
	tp_send_at(&p, p0, p.rcv_nxt, TCP_FLAG_ACK, pat, 10, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p0 + 11);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
}

/* ---- 3. Quick-ACK (Linux's quickack mode; RFC 5681 §4.2) ---- */

static void test_established_first_data_segments_acked_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	for (unsigned i = 0; i < 3; i++) {
		tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 100, NULL);
		struct tp_seg g;
		tp_expect_one(&g);
		expect_bare_ack(&g, p.snd_nxt);
	}
	assert_int_equal(ts_s->events[STACK_EV_TCP_QUICK_ACKS], 3);
	assert_int_equal(ts_s->events[STACK_EV_TCP_DELAYED_ACKS], 0);
}

static void test_established_quick_ack_run_ends_then_acks_delayed(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	unsigned quick = 0;
	for (;;) {
		tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
		if (tp_collect(segs, TS_MAX_FRAMES) == 0)
			break;
		quick++;
		assert_true(quick <= TCP_QUICKACKS);
	}
	assert_true(quick >= 2);
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(ts_s->events[STACK_EV_TCP_DELAYED_ACKS], 1);
}

static void test_established_request_answered_at_once_then_acks_ride_on_answers(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "GET", 3, NULL);
	struct tp_seg g;
	tp_expect_one(&g); /* quick ACK */
	tp_advance(1);
	assert_int_equal(tcp_send(c, "OK", 2), 2);
	tp_expect_one(&g);
	assert_int_equal(g.len, 2);
	p.rcv_nxt += 2;
	/* Our answer came within the delayed-ACK time: interactive, the next request's ACK
	 * waits for the answer rather than going alone (Linux's pingpong mode). */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "GET", 3, NULL);
	tp_expect_none();
	assert_int_equal(tcp_send(c, "OK", 2), 2);
	tp_expect_one(&g);
	assert_int_equal(g.len, 2);
	assert_int_equal(g.th.ack, p.snd_nxt);
}

static void test_established_data_after_pause_longer_than_rto_acked_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_quickack_spent(c);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	tp_expect_none();
	tp_advance(TCP_DELACK_MS);
	tp_collect(segs, TS_MAX_FRAMES);
	tp_advance(c->rto_ms + 1);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
}

static void test_established_duplicate_data_starts_quick_ack_run(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_quickack_spent(c);
	uint32_t p0 = p.snd_nxt;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	tp_expect_none();
	tp_send_at(&p, p0, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	struct tp_seg g;
	tp_expect_one(&g); /* the duplicate: at once, with a D-SACK */
	/* The ACKs may be getting lost: the next new segment is ACKed at once too. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
}

/* ---- 4. Resets in CLOSING and LAST-ACK ---- */

static void test_last_ack_rst_reports_econnreset(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(tcp_shutdown(c, SHUT_WR), 0);
	assert_int_equal(tcp_conn_state(c), TCP_LAST_ACK);
	ts_clear();
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	tcp_close(c);
}

static void test_closing_rst_reports_econnreset(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_shutdown(c, SHUT_WR), 0);
	struct tp_seg g;
	tp_expect_one(&g);
	/* The peer's FIN crosses ours: CLOSING. */
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSING);
	ts_clear();
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	tcp_close(c);
}

/* ---- 5. TIME-WAIT (RFC 9293 §3.10.7.4) ---- */

/* A connection we closed first, in TIME-WAIT, its owner gone. */
static struct tcp_conn *time_wait(struct tp_peer *p)
{
	struct tcp_conn *c = tp_open_passive(p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	p->rcv_nxt = g.th.seq + 1;
	tp_send(p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
	tcp_close(c);
	ts_clear();
	return c;
}

static void test_time_wait_retransmitted_fin_acked_and_2msl_restarted(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	time_wait(&p);
	struct tcp_stack *t = ts_s->tcp;
	unsigned n = t->nconns;
	tp_advance(TCP_MSL_MS);
	tp_send_at(&p, p.snd_nxt - 1, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIME_WAIT_ACKS], 1);
	/* A second resend is answered too: a FIN is never rate limited (Linux). */
	tp_send_at(&p, p.snd_nxt - 1, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	tp_advance(2 * TCP_MSL_MS - 1);
	assert_int_equal(t->nconns, n);
	tp_advance(1);
	assert_int_equal(t->nconns, n - 1);
}

static void test_time_wait_ack_at_rcv_nxt_not_answered(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	time_wait(&p);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
}

static void test_time_wait_ack_off_rcv_nxt_answered_once_per_500ms(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	time_wait(&p);
	tp_send_at(&p, p.snd_nxt + 10, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	tp_send_at(&p, p.snd_nxt + 10, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	tp_advance(TCP_OOW_ACK_MS);
	tp_send_at(&p, p.snd_nxt + 10, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
}

static void test_time_wait_data_answered_by_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	time_wait(&p);
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, 10, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
}

static void test_time_wait_rst_off_rcv_nxt_ignored(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	time_wait(&p);
	unsigned n = ts_s->tcp->nconns;
	tp_send_at(&p, p.snd_nxt + 5, p.rcv_nxt, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(ts_s->tcp->nconns, n);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CHALLENGE_ACKS], 0);
	/* At RCV.NXT it ends TIME-WAIT (Linux's default, tcp_rfc1337 = 0). */
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(ts_s->tcp->nconns, n - 1);
}

static void test_time_wait_old_syn_answered_by_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.ts = false; /* no PAWS: the sequence number decides */
	struct tcp_options none = {0};
	struct tcp_conn *c = tp_open_passive_opts(&p, &none);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	p.rcv_nxt = g.th.seq + 1;
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
	tp_send_at(&p, p.snd_nxt - 1000, 0, TCP_FLAG_SYN, NULL, 0, &none);
	tp_expect_one(&g);
	expect_bare_ack(&g, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIME_WAIT_REUSED], 0);
}

/* ---- 6. TCP_CORK and MSG_MORE (Linux's TCP_NAGLE_CORK) ---- */

static void cork(struct tcp_conn *c, bool on)
{
	struct tcp_sockopts o = *tcp_get_sockopts(c);
	o.cork = on;
	assert_int_equal(tcp_set_sockopts(c, &o), 0);
}

static void test_established_cork_holds_small_writes_until_full_segment(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	cork(c, true);
	uint32_t mss = tcp_cur_mss(c);
	uint32_t sent = 0;
	while (sent + 100 < mss) {
		assert_int_equal(tcp_send(c, pat + sent, 100), 100);
		sent += 100;
		tp_expect_none();
	}
	assert_int_equal(tcp_send(c, pat + sent, 100), 100);
	sent += 100;
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, mss);
	assert_memory_equal(g.data, pat, mss);
	/* The tail stays corked; removing the cork sends it at once. */
	cork(c, false);
	tp_expect_one(&g);
	assert_int_equal(g.len, sent - mss);
}

static void test_established_cork_tail_sent_by_persist_timer(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	cork(c, true);
	assert_int_equal(tcp_send(c, pat, 100), 100);
	tp_expect_none();
	uint32_t wait = c->rto_ms < TCP_PERSIST_MIN_MS ? TCP_PERSIST_MIN_MS : c->rto_ms;
	tp_advance(wait - 1);
	tp_expect_none();
	tp_advance(1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 100);
}

static void test_established_cork_fin_not_held(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	cork(c, true);
	assert_int_equal(tcp_send(c, pat, 100), 100);
	tp_expect_none();
	assert_int_equal(tcp_shutdown(c, SHUT_WR), 0);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 1);
	assert_int_equal(segs[0].len, 100);
	assert_int_equal(segs[n - 1].th.flags & TCP_FLAG_FIN, TCP_FLAG_FIN);
}

static void test_established_msg_more_holds_until_send_without_it(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_set_more(c, true);
	assert_int_equal(tcp_send(c, pat, 100), 100);
	assert_int_equal(tcp_send(c, pat + 100, 100), 100);
	tp_expect_none();
	tcp_set_more(c, false);
	assert_int_equal(tcp_send(c, pat + 200, 100), 100);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 300);
	assert_memory_equal(g.data, pat, 300);
}

/* ---- 7. Path MTU floor (Linux ip_rt_min_pmtu, RFC 5927 §7.2) ---- */

static void send_frag_needed(uint32_t seq, uint16_t mtu)
{
	uint8_t quote[IP4_HDR_MIN_LEN + 8];
	uint8_t th[8];
	wire_put_be16(th, TP_LPORT);
	wire_put_be16(th + 2, TP_PPORT);
	wire_put_be32(th + 4, seq);
	struct ts_ip q = ts_ip_of(TS_ADDR0, TS_HOST_A, IP4_PROTO_TCP);
	q.df = true;
	q.payload = th;
	q.len = sizeof(th);
	size_t ql = ts_ip_build(quote, sizeof(quote), &q);
	uint8_t icmp[64];
	size_t il = ts_icmp_build(icmp, sizeof(icmp), ICMP4_DEST_UNREACH,
				  ICMP4_UNREACH_FRAG_NEEDED, mtu, quote, ql);
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = il;
	ts_send(0, &ip);
}

static void test_established_frag_needed_tiny_mtu_clamped_to_552(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t una = p.rcv_nxt;
	assert_int_equal(tcp_send(c, pat, 3000), 3000);
	tp_collect(segs, TS_MAX_FRAMES);
	send_frag_needed(una, 68);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PMTU_CLAMPED], 1);
	/* 552 - 40 bytes of headers - 12 of timestamps. */
	assert_int_equal(c->snd_mss, 552 - 40 - TCPOLEN_TSTAMP_ALIGNED);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 1);
	assert_int_equal(segs[0].th.seq, una);
	assert_int_equal(segs[0].len, 500);
	for (unsigned i = 0; i < n; i++)
		assert_true(segs[i].len <= 500);
}

static void test_established_frag_needed_above_floor_taken_as_is(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t una = p.rcv_nxt;
	assert_int_equal(tcp_send(c, pat, 3000), 3000);
	tp_collect(segs, TS_MAX_FRAMES);
	send_frag_needed(una, 1000);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PMTU_CLAMPED], 0);
	assert_int_equal(c->snd_mss, 1000 - 40 - TCPOLEN_TSTAMP_ALIGNED);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tp_setup, tp_teardown)

int main(void)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = (uint8_t)(i * 7 + 3);
	const struct CMUnitTest tests[] = {
		T(test_established_syn_fin_gets_challenge_ack_fin_ignored),
		T(test_established_syn_fin_ack_out_of_window_gets_challenge_ack),
		T(test_listen_syn_fin_dropped_without_answer),
		T(test_closed_port_syn_fin_answered_by_reset),
		T(test_established_syn_rst_at_rcv_nxt_resets),
		T(test_established_syn_rst_in_window_gets_challenge_ack),
		T(test_listen_syn_rst_ignored),
		T(test_closed_port_syn_rst_not_answered),
		T(test_established_ooo_bare_fin_dupacked_with_sack_then_taken_when_hole_fills),
		T(test_established_ooo_data_with_fin_taken_when_hole_fills),
		T(test_established_ooo_fin_then_in_order_fin_resend_taken_once),
		T(test_fin_wait_2_ooo_fin_taken_when_hole_fills_enters_time_wait),
		T(test_established_first_data_segments_acked_at_once),
		T(test_established_quick_ack_run_ends_then_acks_delayed),
		T(test_established_request_answered_at_once_then_acks_ride_on_answers),
		T(test_established_data_after_pause_longer_than_rto_acked_at_once),
		T(test_established_duplicate_data_starts_quick_ack_run),
		T(test_last_ack_rst_reports_econnreset),
		T(test_closing_rst_reports_econnreset),
		T(test_time_wait_retransmitted_fin_acked_and_2msl_restarted),
		T(test_time_wait_ack_at_rcv_nxt_not_answered),
		T(test_time_wait_ack_off_rcv_nxt_answered_once_per_500ms),
		T(test_time_wait_data_answered_by_ack),
		T(test_time_wait_rst_off_rcv_nxt_ignored),
		T(test_time_wait_old_syn_answered_by_ack),
		T(test_established_cork_holds_small_writes_until_full_segment),
		T(test_established_cork_tail_sent_by_persist_timer),
		T(test_established_cork_fin_not_held),
		T(test_established_msg_more_holds_until_send_without_it),
		T(test_established_frag_needed_tiny_mtu_clamped_to_552),
		T(test_established_frag_needed_above_floor_taken_as_is),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
