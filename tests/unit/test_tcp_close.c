/* Closing (RFC 9293 §3.6): active close through FIN-WAIT-1/2 and TIME-WAIT, passive close
 * through CLOSE-WAIT and LAST-ACK, simultaneous close through CLOSING, half-close, the
 * TIME-WAIT timer, resets on close with unread data (RFC 2525 §2.17) and SO_LINGER 0. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "test_tcp_util.h"

static struct tp_seg segs[TS_MAX_FRAMES];

static void ack_all(struct tp_peer *p, const struct tp_seg *g)
{
	p->rcv_nxt = g->th.seq + g->len + !!(g->th.flags & TCP_FLAG_FIN);
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
}

static void test_active_close_sends_fin_and_enters_fin_wait_1(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_shutdown(c, SHUT_WR), 0);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags & TCP_FLAG_FIN, TCP_FLAG_FIN);
	assert_int_equal(tcp_conn_state(c), TCP_FIN_WAIT_1);
}

static void test_fin_wait_1_ack_of_fin_enters_fin_wait_2(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	assert_int_equal(tcp_conn_state(c), TCP_FIN_WAIT_2);
}

static void test_fin_wait_2_fin_enters_time_wait_and_acks(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
	char b[4];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 0);
}

static void test_time_wait_expires_after_2msl(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	tcp_close(c);
	struct tcp_stack *t = ts_s->tcp;
	unsigned before = t->nconns;
	tp_advance(2 * TCP_MSL_MS - 1);
	assert_int_equal(t->nconns, before);
	tp_advance(1);
	assert_int_equal(t->nconns, before - 1);
}

static void test_time_wait_retransmitted_fin_is_acked_again(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	tp_send_at(&p, p.snd_nxt - 1, p.rcv_nxt, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
}

static void test_passive_close_fin_enters_close_wait_and_eof(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSE_WAIT);
	assert_true(tp_owner_rec.events & SOCK_EV_RDHUP);
	char b[4];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 0);
}

static void test_close_wait_can_still_send(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	ts_clear();
	assert_int_equal(tcp_send(c, "late", 4), 4);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 4);
}

static void test_close_wait_close_sends_fin_last_ack_then_closed(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	ts_clear();
	unsigned n = ts_s->tcp->nconns;
	tcp_close(c);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_FIN);
	ack_all(&p, &g);
	tp_expect_none();
	assert_int_equal(ts_s->tcp->nconns, n - 1);
}

static void test_simultaneous_close_goes_through_closing(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	/* The peer's FIN crosses ours: it does not acknowledge our FIN yet. */
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSING);
	ts_clear();
	ack_all(&p, &g);
	assert_int_equal(tcp_conn_state(c), TCP_TIME_WAIT);
}

static void test_fin_follows_queued_data(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	static uint8_t data[4000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = ts_pattern(i);
	assert_int_equal(tcp_send(c, data, sizeof(data)), sizeof(data));
	tcp_shutdown(c, SHUT_WR);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 3);
	uint32_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += segs[i].len;
	assert_int_equal(total, sizeof(data));
	assert_true(segs[n - 1].th.flags & TCP_FLAG_FIN);
	for (unsigned i = 0; i + 1 < n; i++)
		assert_false(segs[i].th.flags & TCP_FLAG_FIN);
}

static void test_half_close_peer_data_still_received(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "more", 4, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	assert_memory_equal(b, "more", 4);
}

static void test_send_after_shutdown_is_epipe(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	assert_int_equal(tcp_send(c, "x", 1), -EPIPE);
}

static void test_close_with_unread_data_sends_rst(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "unread", 6, NULL);
	ts_clear();
	tcp_close(c);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
	assert_int_equal(g.th.seq, p.rcv_nxt);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ABORT_ON_CLOSE], 1);
}

static void test_close_with_linger_zero_sends_rst(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	c->opts.linger = true;
	tcp_close(c);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
}

static void test_orphan_fin_wait_2_expires(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	unsigned n = ts_s->tcp->nconns;
	tcp_close(c);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_advance(TCP_FIN_WAIT2_MS);
	assert_int_equal(ts_s->tcp->nconns, n - 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_FIN_WAIT2_TIMEOUTS], 1);
}

static void test_close_in_fin_wait_2_bounds_the_wait(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	unsigned n = ts_s->tcp->nconns;
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	assert_int_equal(tcp_conn_state(c), TCP_FIN_WAIT_2);
	tcp_close(c); /* after the FIN was acknowledged: now an orphan in FIN-WAIT-2 */
	tp_advance(TCP_FIN_WAIT2_MS);
	assert_int_equal(ts_s->tcp->nconns, n - 1);
}

static void test_fin_retransmitted_when_not_acked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	uint32_t fin_seq = g.th.seq;
	tp_advance(c->rto_ms);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_FIN);
	assert_int_equal(g.th.seq, fin_seq);
	/* A resent FIN is a retransmitted segment like any other. */
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 1);
	assert_int_equal(c->retransmits, 1);
	tp_advance(2 * c->rto_ms);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_FIN);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 2);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 2);
}

/* FIN after data: the timeout resends data and FIN, each counted. */
static void test_fin_with_unacked_data_retransmitted_counts_both(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "abc", 3), 3);
	tcp_shutdown(c, SHUT_WR);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 1);
	assert_true(segs[n - 1].th.flags & TCP_FLAG_FIN);
	tp_advance(c->rto_ms);
	n = tp_collect(segs, TS_MAX_FRAMES);
	unsigned resent = 0;
	for (unsigned i = 0; i < n; i++)
		resent += segs[i].len != 0 || (segs[i].th.flags & TCP_FLAG_FIN);
	assert_true(resent >= 1);
	/* Each segment resent counts once, a FIN alone among them (whether the tail loss probe
	 * or the timer sent it). */
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], resent);
}

static void test_time_wait_new_syn_with_higher_seq_reopens(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	tcp_close(c);
	p.tsval += 1000;
	struct tcp_options o = tp_linux_syn_opts(&p);
	p.snd_nxt += 100000;
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIME_WAIT_REUSED], 1);
}

static void test_time_wait_reused_while_owner_holds_it_stays_valid(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_shutdown(c, SHUT_WR);
	struct tp_seg g;
	tp_expect_one(&g);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	/* The owner has not closed c when the new SYN takes its 4-tuple. */
	p.tsval += 1000;
	struct tcp_options o = tp_linux_syn_opts(&p);
	p.snd_nxt += 100000;
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	char b[4];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 0);
	tcp_close(c);
}

/* RFC 1122 §4.2.2.13: data arriving after the owner closed can never be read: RST, and the
 * connection is gone (Linux does the same). Data after a mere shutdown(SHUT_WR) is still
 * received (test_half_close_peer_data_still_received). */
static void test_data_after_close_is_answered_by_rst(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tcp_close(c);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_FIN);
	ack_all(&p, &g);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "late", 4, NULL);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
	/* The connection is gone: more data meets no connection (answered by RST again). */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "more", 4, NULL);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
	assert_int_equal(g.th.seq, p.rcv_nxt);
}

static void test_close_beyond_max_orphans_resets_instead_of_finishing(void **state)
{
	(void)state;
	struct tcp_params prm;
	tcp_get_params(ts_s, &prm);
	prm.max_orphans = 2;
	assert_int_equal(tcp_set_params(ts_s, &prm), 0);
	struct tp_peer p[4];
	struct tcp_conn *c[4];
	struct tp_seg g;
	for (unsigned i = 0; i < 4; i++) {
		tp_peer_init(&p[i]);
		p[i].port = (uint16_t)(TP_PPORT + 1 + i);
		c[i] = tp_open_active(&p[i], NULL);
	}
	for (unsigned i = 0; i < 2; i++) {
		tcp_close(c[i]);
		tp_expect_one(&g);
		assert_true(g.th.flags & TCP_FLAG_FIN);
		p[i].rcv_nxt = g.th.seq + 1;
	}
	/* Two closed connections still wait for their peers: a third close resets (Linux's
	 * tcp_max_orphans), its buffers freed at once. */
	tcp_close(c[2]);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ORPHANS_RESET], 1);
	/* One of the two finishes (TIME-WAIT holds no buffers): a close may finish again. */
	tp_send(&p[0], TCP_FLAG_FIN | TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(tcp_conn_state(c[0]), TCP_TIME_WAIT);
	tcp_close(c[3]);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_FIN);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ORPHANS_RESET], 1);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tp_setup, tp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_active_close_sends_fin_and_enters_fin_wait_1),
		T(test_fin_wait_1_ack_of_fin_enters_fin_wait_2),
		T(test_data_after_close_is_answered_by_rst),
		T(test_fin_wait_2_fin_enters_time_wait_and_acks),
		T(test_time_wait_expires_after_2msl),
		T(test_time_wait_retransmitted_fin_is_acked_again),
		T(test_passive_close_fin_enters_close_wait_and_eof),
		T(test_close_wait_can_still_send),
		T(test_close_wait_close_sends_fin_last_ack_then_closed),
		T(test_simultaneous_close_goes_through_closing),
		T(test_fin_follows_queued_data),
		T(test_half_close_peer_data_still_received),
		T(test_send_after_shutdown_is_epipe),
		T(test_close_with_unread_data_sends_rst),
		T(test_close_with_linger_zero_sends_rst),
		T(test_orphan_fin_wait_2_expires),
		T(test_close_in_fin_wait_2_bounds_the_wait),
		T(test_fin_retransmitted_when_not_acked),
		T(test_fin_with_unacked_data_retransmitted_counts_both),
		T(test_time_wait_new_syn_with_higher_seq_reopens),
		T(test_time_wait_reused_while_owner_holds_it_stays_valid),
		T(test_close_beyond_max_orphans_resets_instead_of_finishing),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
