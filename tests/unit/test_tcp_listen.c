/* Listeners (RFC 9293 §3.10.7.2, §3.5): the SYN and accept queues and their limits, SYN
 * cookies when the SYN queue is full (RFC 4987 §3.6), SYN-ACK retransmission and the
 * SYN-RECEIVED give-up, duplicate SYNs, closing a listener with children, address
 * selection between listeners, and ECN negotiation and marking (RFC 3168 §6.1). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>

#include "test_tcp_util.h"
#include "tcp/tcp_syncookie.h"

#define IP_ECN_MASK 0x03
#define IP_ECT0 0x02
#define IP_CE 0x03

static struct tp_seg segs[TS_MAX_FRAMES];

static void peer_at(struct tp_peer *p, unsigned i)
{
	tp_peer_init(p);
	p->port = (uint16_t)(TP_PPORT + i);
	p->snd_nxt = TP_PEER_ISN + i * 100000u;
}

/* A SYN with o (NULL: Linux's options) and extra flags; the SYN-ACK in *g. */
static void syn_flags(struct tp_peer *p, const struct tcp_options *o, uint8_t extra,
		      struct tp_seg *g)
{
	struct tcp_options lo = tp_linux_syn_opts(p);
	if (o == NULL)
		o = &lo;
	p->ts = o->has_timestamps;
	tp_send(p, TCP_FLAG_SYN | extra, NULL, 0, o);
	tp_expect_one(g);
	assert_int_equal(g->th.flags & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST),
			 TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g->th.ack, p->snd_nxt);
	p->rcv_nxt = g->th.seq + 1;
	if (g->th.options.has_timestamps)
		p->tsecr = g->th.options.tsval;
	if (o->has_wscale)
		p->wscale = o->wscale;
}

static void syn(struct tp_peer *p, const struct tcp_options *o, struct tp_seg *g)
{
	syn_flags(p, o, 0, g);
}

/* SYN, SYN-ACK, ACK: the connection waits in the accept queue. */
static void handshake(struct tp_peer *p)
{
	struct tp_seg g;
	syn(p, NULL, &g);
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
}

static unsigned nconns(void)
{
	return ts_s->tcp->nconns;
}

static struct tcp_conn *listen_on(uint32_t addr, unsigned backlog)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, INET_ADDR_V4(addr), TP_LPORT, backlog, &o, &tp_owner, &l),
		0);
	return l;
}

/* ---- queues ---- */

static void test_listen_accept_on_empty_queue_returns_null(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	assert_null(tcp_accept(l, &tp_owner));
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	assert_null(tcp_accept(l, &tp_owner)); /* SYN-RECEIVED is not acceptable yet */
	assert_int_equal(l->syn_qlen, 1);
}

static void test_listen_accept_returns_connections_in_order(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p, q;
	peer_at(&p, 0);
	peer_at(&q, 1);
	handshake(&p);
	handshake(&q);
	assert_int_equal(l->accept_qlen, 2);
	struct tcp_conn *a = tcp_accept(l, &tp_owner);
	struct tcp_conn *b = tcp_accept(l, &tp_owner);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(tcp_sock(a)->rport, p.port);
	assert_int_equal(tcp_sock(b)->rport, q.port);
	assert_null(tcp_accept(l, &tp_owner));
	assert_int_equal(l->accept_qlen, 0);
}

static void test_listen_accept_queue_full_syn_dropped_and_counted(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(1);
	struct tp_peer p, q;
	peer_at(&p, 0);
	peer_at(&q, 1);
	handshake(&p);
	assert_int_equal(l->accept_qlen, 1);
	unsigned n = nconns();
	struct tcp_options o = tp_linux_syn_opts(&q);
	tp_send(&q, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_none();
	assert_int_equal(nconns(), n);
	assert_int_equal(ts_s->events[STACK_EV_TCP_LISTEN_OVERFLOWS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_SENT], 0);
	/* Once the owner accepts, the resent SYN is answered. */
	assert_non_null(tcp_accept(l, &tp_owner));
	tp_send_at(&q, q.snd_nxt - 1, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
}

static void test_listen_syn_queue_full_answers_with_cookie_keeping_no_state(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(1); /* SYN queue: 2 */
	struct tp_peer p[3];
	struct tp_seg g;
	for (unsigned i = 0; i < 2; i++) {
		peer_at(&p[i], i);
		syn(&p[i], NULL, &g);
	}
	assert_int_equal(l->syn_qlen, 2);
	unsigned n = nconns();
	peer_at(&p[2], 2);
	syn(&p[2], NULL, &g);
	assert_int_equal(nconns(), n);
	assert_int_equal(l->syn_qlen, 2);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_SENT], 1);
	assert_null(tcp_conn_lookup(ts_s, INET_ADDR_V4(TS_ADDR0), TP_LPORT, INET_ADDR_V4(TS_HOST_A),
		p[2].port));
	/* The cookie SYN-ACK offers what Linux's does when the SYN had timestamps. */
	assert_true(g.th.options.has_mss);
	assert_true(g.th.options.has_timestamps);
	assert_int_equal(g.th.options.tsecr, p[2].tsval);
	assert_true(g.th.options.sack_permitted);
	assert_true(g.th.options.has_wscale);
}

/* Fills the SYN queue of a backlog-1 listener with two half-open connections. */
static struct tcp_conn *listener_with_full_syn_queue(void)
{
	struct tcp_conn *l = tp_listen(1);
	struct tp_peer p;
	struct tp_seg g;
	for (unsigned i = 0; i < 2; i++) {
		peer_at(&p, 10 + i);
		syn(&p, NULL, &g);
	}
	assert_int_equal(l->syn_qlen, 2);
	return l;
}

static void test_listen_cookie_ack_completes_connection_with_options(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tcp_options o = tp_linux_syn_opts(&p);
	o.mss = 1400;
	o.wscale = 6;
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_SENT], 1);
	unsigned n = nconns();
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(nconns(), n + 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_RECV], 1);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_true(ci.timestamps);
	assert_true(ci.sack);
	assert_int_equal(ci.snd_wscale, 6);
	assert_int_equal(ci.rcv_wscale, g.th.options.wscale);
	assert_int_equal(ci.snd_mss, 1400 - TCPOLEN_TSTAMP_ALIGNED);
	/* Data flows both ways. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "req", 3, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 3);
	ts_clear(); /* the read may announce the scaled window beyond the SYN-ACK's 64 KB */
	assert_int_equal(tcp_send(c, "resp", 4), 4);
	tp_expect_one(&g);
	assert_int_equal(g.len, 4);
	assert_int_equal(g.th.seq, p.rcv_nxt);
	assert_int_equal(g.th.ack, p.snd_nxt);
}

static void test_listen_cookie_mss_rounded_down_to_table(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tcp_options o = {.has_mss = true, .mss = 1420};
	struct tp_seg g;
	syn(&p, &o, &g);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, tcp_syncookie_mss_pick(1420));
	assert_int_equal(ci.snd_mss, 1400);
}

/* The MSS option of a SYN-ACK says what we can receive (RFC 9293 §3.7.1): the cookie keeps
 * the peer's MSS, but the option announces ours, as Linux's cookie SYN-ACKs do. */
static void test_listen_cookie_syn_ack_announces_our_mss(void **state)
{
	(void)state;
	listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tcp_options o = {.has_mss = true, .mss = 1300};
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_true(g.th.options.has_mss);
	assert_int_equal(g.th.options.mss, TP_MSS_1500);
}

static void test_listen_cookie_without_timestamps_restores_mss_only(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tcp_options o = {.has_mss = true, .mss = 1460, .sack_permitted = true,
				.has_wscale = true, .wscale = 7};
	struct tp_seg g;
	syn(&p, &o, &g);
	/* Nowhere to keep SACK and window scale: not offered (RFC 4987 §3.6, as Linux). */
	assert_false(g.th.options.has_timestamps);
	assert_false(g.th.options.sack_permitted);
	assert_false(g.th.options.has_wscale);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_false(ci.timestamps);
	assert_false(ci.sack);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.rcv_wscale, 0);
	assert_int_equal(ci.snd_mss, 1460);
}

/* The ACK completing a cookie handshake may carry the first request (or be lost, so that
 * the first data segment completes it): the data is taken, as Linux does. */
static void test_listen_cookie_ack_with_data_delivers_it(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "GET /", 5, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 5);
	assert_memory_equal(b, "GET /", 5);
}

static void test_listen_forged_cookie_ack_answered_with_rst(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	unsigned n = nconns();
	tp_send_at(&p, p.snd_nxt, 0x12345678, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(g.th.seq, 0x12345678);
	assert_int_equal(nconns(), n);
	assert_null(tcp_accept(l, &tp_owner));
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_FAILED], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_RECV], 0);
}

static void test_listen_cookie_ack_with_other_peer_seq_answered_with_rst(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	unsigned n = nconns();
	tp_send_at(&p, p.snd_nxt + 1, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(nconns(), n);
	assert_null(tcp_accept(l, &tp_owner));
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_FAILED], 1);
}

static void test_listen_cookie_ack_from_other_port_answered_with_rst(void **state)
{
	(void)state;
	listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	p.port++;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_FAILED], 1);
}

static void test_listen_cookie_still_valid_after_two_minutes(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	tp_advance(2 * TCP_SYNCOOKIE_PERIOD_MS - 1); /* the half-open children give up meanwhile */
	ts_clear();
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	assert_non_null(tcp_accept(l, &tp_owner));
}

static void test_listen_expired_cookie_answered_with_rst(void **state)
{
	(void)state;
	struct tcp_conn *l = listener_with_full_syn_queue();
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	tp_advance((TCP_SYNCOOKIE_MAX_AGE + 1) * TCP_SYNCOOKIE_PERIOD_MS);
	ts_clear();
	unsigned n = nconns();
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(nconns(), n);
	assert_null(tcp_accept(l, &tp_owner));
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYNCOOKIES_FAILED], 1);
}

static void test_listen_cookie_ack_with_accept_queue_full_dropped(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(1);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p); /* accept queue: full */
	struct tp_peer q;
	peer_at(&q, 1);
	/* A cookie made while the queues had room for it, as if from a previous moment. */
	uint16_t mss;
	uint32_t cookie = tcp_syncookie_make(&ts_s->tcp->secret, INET_ADDR_V4(TS_ADDR0), TP_LPORT,
		INET_ADDR_V4(TS_HOST_A),
					     q.port, q.snd_nxt, 1460, ts_s->now_ms, &mss);
	unsigned n = nconns();
	tp_send_at(&q, q.snd_nxt + 1, cookie + 1, TCP_FLAG_ACK, NULL, 0, NULL);
	/* Dropped without a reset (Linux, tcp_abort_on_overflow 0): the cookie stays good, so
	 * the peer's next segment can still complete the connection once there is room. */
	tp_expect_none();
	assert_int_equal(nconns(), n);
	assert_int_equal(l->accept_qlen, 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_LISTEN_OVERFLOWS], 1);
}

/* ---- SYN-RECEIVED ---- */

static void test_syn_received_syn_ack_retransmitted_with_backoff_then_given_up(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	uint32_t iss = g.th.seq;
	unsigned n = nconns();
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	uint64_t wait = TCP_RTO_INIT_MS;
	for (unsigned i = 0; i < TCP_SYNACK_RETRIES; i++) {
		tp_advance(wait - 1);
		tp_expect_none();
		tp_advance(1);
		tp_expect_one(&g);
		assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
		assert_int_equal(g.th.seq, iss);
		assert_int_equal(g.th.ack, p.snd_nxt);
		wait *= 2;
	}
	assert_int_equal(l->syn_qlen, 1);
	tp_advance(wait);
	tp_expect_none(); /* no reset for a handshake that never finished */
	assert_int_equal(nconns(), n - 1);
	assert_int_equal(l->syn_qlen, 0);
	assert_int_equal(l->accept_qlen, 0);
	assert_true(TAILQ_EMPTY(&l->syn_q));
	assert_true(TAILQ_EMPTY(&l->accept_q));
	assert_int_equal(tp_owner_rec.calls, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIMEOUTS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], TCP_SYNACK_RETRIES);
	/* The listener still works. */
	struct tp_peer q;
	peer_at(&q, 1);
	handshake(&q);
	assert_non_null(tcp_accept(l, &tp_owner));
}

static void test_syn_received_late_ack_after_give_up_answered_with_rst(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	tp_advance(63 * 1000 + 1000);
	ts_clear();
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(g.th.seq, p.rcv_nxt);
}

static void test_syn_received_ack_after_retransmitted_syn_ack_completes(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	syn(&p, NULL, &g);
	tp_advance(TCP_RTO_INIT_MS);
	tp_expect_one(&g);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	/* Karn: no RTT sample from a retransmitted SYN-ACK. */
	assert_int_equal(c->srtt_us, 0);
}

static void test_syn_received_duplicate_syn_resends_syn_ack(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g, g2;
	syn(&p, NULL, &g);
	struct tcp_options o = tp_linux_syn_opts(&p);
	unsigned n = nconns();
	tp_send_at(&p, p.snd_nxt - 1, 0, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(&g2);
	assert_int_equal(g2.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g2.th.seq, g.th.seq);
	assert_int_equal(g2.th.ack, p.snd_nxt);
	assert_true(g2.th.options.has_mss);
	assert_int_equal(nconns(), n);
	assert_int_equal(l->syn_qlen, 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_SYN_CHALLENGED], 0);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_non_null(tcp_accept(l, &tp_owner));
}

static void test_syn_received_listener_owner_told_once_established(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	struct tp_seg g;
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	syn(&p, NULL, &g);
	assert_int_equal(tp_owner_rec.calls, 0);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_true(tp_owner_rec.events & SOCK_EV_IN);
	assert_ptr_equal(tp_owner_rec.last, tcp_sock(l));
}

/* ---- closing a listener ---- */

static void test_listen_close_resets_children_in_both_queues(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p, q;
	peer_at(&p, 0);
	peer_at(&q, 1);
	handshake(&p); /* accept queue */
	struct tp_seg g;
	syn(&q, NULL, &g); /* SYN queue */
	unsigned n = nconns();
	tcp_close(l);
	unsigned k = tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(k, 2);
	for (unsigned i = 0; i < k; i++) {
		const struct tp_peer *to = segs[i].th.dst_port == p.port ? &p : &q;
		assert_true(segs[i].th.flags & TCP_FLAG_RST);
		assert_int_equal(segs[i].th.seq, to->rcv_nxt);
	}
	assert_int_not_equal(segs[0].th.dst_port, segs[1].th.dst_port);
	assert_int_equal(nconns(), n - 3);
	/* Nobody listens any more: a new SYN is refused. */
	struct tp_peer r;
	peer_at(&r, 2);
	struct tcp_options o = tp_linux_syn_opts(&r);
	tp_send(&r, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST | TCP_FLAG_ACK);
}

/* A connection reset while it waits in the accept queue is still handed out by accept(),
 * with what it received before the reset and then ECONNRESET, as Linux does (an application
 * that accepts late sees the reset rather than nothing). */
static void test_reset_before_accept_handed_to_accept(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "early", 5, NULL);
	struct tp_seg g;
	tp_expect_one(&g); /* quick ACK of the data */
	unsigned n = nconns();
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(nconns(), n); /* kept, dead */
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	tp_advance(1);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	assert_true(tp_owner_rec.events & SOCK_EV_HUP);
	char buf[16];
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "early", 5);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), -ECONNRESET);
	/* Its segments meet no connection now: the peer's retry is answered with a reset. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "late", 4, NULL);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_RST);
	tcp_close(c);
	assert_int_equal(nconns(), n - 1);
	/* The accept queue is empty. */
	assert_null(tcp_accept(l, &tp_owner));
}

/* Closing the listener frees such a connection without a reset of its own. */
static void test_listen_close_frees_dead_child_silently(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p);
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	unsigned n = nconns();
	tcp_close(l);
	tp_expect_none();
	assert_int_equal(nconns(), n - 2);
}

static void test_listen_close_keeps_accepted_connections(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	tcp_close(l);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "still", 5, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 5);
}

/* ---- addresses ---- */

static void test_listen_same_wildcard_port_twice_eaddrinuse(void **state)
{
	(void)state;
	listen_on(0, 8);
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *l2 = NULL;
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 8, &o, &tp_owner, &l2),
		-EADDRINUSE);
	assert_null(l2);
}

static void test_listen_same_address_and_port_twice_eaddrinuse(void **state)
{
	(void)state;
	listen_on(TS_ADDR0, 8);
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *l2 = NULL;
	assert_int_equal(tcp_listen(ts_s, INET_ADDR_V4(TS_ADDR0), TP_LPORT, 8, &o, &tp_owner, &l2),
			 -EADDRINUSE);
	assert_null(l2);
}

static void test_listen_on_foreign_address_eaddrnotavail(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, INET_ADDR_V4(IP4(10, 0, 0, 99)), TP_LPORT, 8, &o,
		&tp_owner, &l),
			 -EADDRNOTAVAIL);
}

static void test_listen_specific_address_preferred_over_wildcard(void **state)
{
	(void)state;
	struct tcp_conn *any = listen_on(0, 8);
	struct tcp_conn *one = listen_on(TS_ADDR0, 8);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p);
	assert_null(tcp_accept(any, &tp_owner));
	assert_non_null(tcp_accept(one, &tp_owner));
}

static void test_listen_wildcard_takes_other_addresses(void **state)
{
	(void)state;
	struct tcp_conn *one = listen_on(TS_ADDR1, 8);
	struct tcp_conn *any = listen_on(0, 8);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p); /* to TS_ADDR0 */
	assert_null(tcp_accept(one, &tp_owner));
	assert_non_null(tcp_accept(any, &tp_owner));
}

static void test_listen_specific_closed_wildcard_takes_over(void **state)
{
	(void)state;
	struct tcp_conn *any = listen_on(0, 8);
	struct tcp_conn *one = listen_on(TS_ADDR0, 8);
	tcp_close(one);
	struct tp_peer p;
	peer_at(&p, 0);
	handshake(&p);
	assert_non_null(tcp_accept(any, &tp_owner));
}

/* ---- the listener table (stack_params.tcp_listen_max) ---- */

static int listen_port(uint16_t port, bool reuseport, struct tcp_conn **l)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.reuseport = reuseport;
	return tcp_listen(ts_s, tp_any_addr(), port, 8, &o, &tp_owner, l);
}

static void test_listen_table_full_refuses_with_enobufs_counted_until_one_closes(void **state)
{
	struct stack_params p;
	ts_params(&p);
	p.tcp_listen_max = 4;
	ts_restart(&p, true);
	assert_int_equal(tcp_listen_capacity(ts_s), 4);
	struct tcp_conn *l[4], *extra;
	for (uint16_t i = 0; i < 4; i++)
		assert_int_equal(listen_port((uint16_t)(1000 + i), true, &l[i]), 0);
	assert_int_equal(tcp_listen_used(ts_s), 4);
	assert_int_equal(listen_port(2000, false, &extra), -ENOBUFS);
	assert_int_equal(ts_s->events[STACK_EV_TCP_LISTEN_TABLE_FULL], 1);
	/* A listener sharing an address (SO_REUSEPORT) takes no entry of its own. */
	assert_int_equal(listen_port(1000, true, &extra), 0);
	assert_int_equal(tcp_listen_used(ts_s), 4);
	tcp_close(extra);
	assert_int_equal(tcp_listen_used(ts_s), 4);
	tcp_close(l[3]);
	assert_int_equal(tcp_listen_used(ts_s), 3);
	assert_int_equal(listen_port(2000, false, &extra), 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_LISTEN_TABLE_FULL], 1);
}

static void test_listen_table_of_no_entries_or_beyond_the_limit_refused(void **state)
{
	stack_destroy(ts_s); /* its tables' names are the ones a new stack 0 would take */
	ts_s = NULL;
	struct stack_params p;
	ts_params(&p);
	assert_int_equal(p.tcp_listen_max, TCP_LISTEN_MAX_DEFAULT);
	p.tcp_listen_max = 0;
	assert_null(stack_create(&p));
	assert_int_equal(rte_errno, EINVAL);
	p.tcp_listen_max = TCP_LISTEN_MAX_LIMIT + 1;
	assert_null(stack_create(&p));
	assert_int_equal(rte_errno, EINVAL);
}

/* ---- the connection table (stack_params.tcp_conn_max) ---- */

static int connect_to_host_a(struct tcp_conn **c)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	return tcp_connect(ts_s, INET_ADDR_V4(0), 0, INET_ADDR_V4(TS_HOST_A), 80, &o, &tp_owner,
			   c);
}

static void test_conn_table_full_refuses_connect_with_enobufs_counted_until_one_closes(
	void **state)
{
	struct stack_params p;
	ts_params(&p);
	p.tcp_conn_max = TCP_CONN_MAX_MIN;
	ts_restart(&p, true);
	assert_int_equal(tcp_conn_capacity(ts_s), TCP_CONN_MAX_MIN);
	struct tcp_conn *c[TCP_CONN_MAX_MIN], *extra;
	for (unsigned i = 0; i < TCP_CONN_MAX_MIN; i++)
		assert_int_equal(connect_to_host_a(&c[i]), 0);
	assert_int_equal(tcp_conn_used(ts_s), TCP_CONN_MAX_MIN);
	assert_int_equal(connect_to_host_a(&extra), -ENOBUFS);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CONN_TABLE_FULL], 1);
	/* Listeners have a table of their own. */
	struct tcp_conn *l;
	assert_int_equal(listen_port(2000, false, &l), 0);
	tcp_close(c[0]); /* SYN-SENT: gone at once */
	assert_int_equal(tcp_conn_used(ts_s), TCP_CONN_MAX_MIN - 1);
	assert_int_equal(connect_to_host_a(&c[0]), 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_CONN_TABLE_FULL], 1);
}

static void test_conn_table_below_the_minimum_or_beyond_the_limit_refused(void **state)
{
	stack_destroy(ts_s);
	ts_s = NULL;
	struct stack_params p;
	ts_params(&p);
	assert_int_equal(p.tcp_conn_max, TCP_CONN_MAX_DEFAULT);
	p.tcp_conn_max = TCP_CONN_MAX_MIN - 1;
	assert_null(stack_create(&p));
	assert_int_equal(rte_errno, EINVAL);
	p.tcp_conn_max = TCP_CONN_MAX_LIMIT + 1;
	assert_null(stack_create(&p));
	assert_int_equal(rte_errno, EINVAL);
}

/* ---- SO_REUSEPORT ---- */

static int listen_reuseport(uint32_t uid, struct tcp_conn **l)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.reuseport = true;
	o.reuseport_uid = uid;
	*l = NULL;
	return tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 64, &o, &tp_owner, l);
}

/* Connections from n peers, counted by the listener of group that accepted each. The
 * peers' ports step by two, as Linux's connect() picks them. */
static void spread_over(struct tcp_conn *const *group, unsigned k, unsigned n, unsigned *got)
{
	for (unsigned i = 0; i < n; i++) {
		struct tp_peer p;
		peer_at(&p, 2 * i);
		handshake(&p);
	}
	for (unsigned j = 0; j < k; j++)
		for (got[j] = 0; tcp_accept(group[j], &tp_owner) != NULL;)
			got[j]++;
}

static void test_reuseport_listeners_of_one_user_share_connections(void **state)
{
	(void)state;
	struct tcp_conn *g[3];
	for (unsigned j = 0; j < 3; j++)
		assert_int_equal(listen_reuseport(1000, &g[j]), 0);
	unsigned got[3];
	spread_over(g, 3, 60, got);
	assert_int_equal(got[0] + got[1] + got[2], 60);
	for (unsigned j = 0; j < 3; j++)
		assert_in_range(got[j], 5, 40); /* by hash: every one takes a share */
}

static void test_reuseport_needs_the_option_on_both_and_one_user(void **state)
{
	(void)state;
	struct tcp_conn *first, *other;
	assert_int_equal(listen_reuseport(1000, &first), 0);
	assert_int_equal(listen_reuseport(1001, &other), -EADDRINUSE);
	assert_null(other);
	struct tcp_sockopts plain;
	tcp_sockopts_default(&plain);
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 8, &plain, &tp_owner, &other),
		-EADDRINUSE);
	assert_int_equal(tcp_bind_check(ts_s, INET_ADDR_V4(0), TP_LPORT, &plain), -EADDRINUSE);
	plain.reuseport = true;
	plain.reuseport_uid = 1000;
	assert_int_equal(tcp_bind_check(ts_s, INET_ADDR_V4(0), TP_LPORT, &plain), 0);
}

static void test_reuseport_closed_listeners_leave_the_rest_serving(void **state)
{
	(void)state;
	struct tcp_conn *g[3];
	for (unsigned j = 0; j < 3; j++)
		assert_int_equal(listen_reuseport(0, &g[j]), 0);
	tcp_close(g[0]); /* the one the table holds */
	tcp_close(g[2]); /* the last of the chain */
	unsigned got[1];
	spread_over(&g[1], 1, 20, got);
	assert_int_equal(got[0], 20);
	tcp_close(g[1]);
	struct tcp_conn *again;
	assert_int_equal(listen_reuseport(5, &again), 0); /* the port is free again */
}

/* ---- ECN (RFC 3168 §6.1) ---- */

static struct tcp_conn *open_ecn_on(struct tcp_conn *l, unsigned i, struct tp_peer *p,
				    uint8_t syn_extra, struct tp_seg *synack)
{
	peer_at(p, i);
	syn_flags(p, NULL, syn_extra, synack);
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	return c;
}

static struct tcp_conn *open_ecn(struct tp_peer *p, uint8_t syn_extra, struct tp_seg *synack)
{
	return open_ecn_on(tp_listen(8), 0, p, syn_extra, synack);
}

static void test_listen_ecn_setup_syn_gets_syn_ack_with_ece_only(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_ECE);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, 0); /* §6.1.1: a SYN-ACK is not ECN-capable */
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_true(ci.ecn);
}

static void test_listen_syn_with_ece_alone_no_ecn(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, TCP_FLAG_ECE, &g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_false(ci.ecn);
	assert_int_equal(tcp_send(c, "x", 1), 1);
	tp_expect_one(&g);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, 0);
}

static void test_listen_syn_without_ecn_no_ece(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, 0, &g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(tcp_send(c, "x", 1), 1);
	tp_expect_one(&g);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, 0);
}

static void test_established_ecn_data_is_ect0(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
	assert_int_equal(tcp_send(c, "data", 4), 4);
	tp_expect_one(&g);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, IP_ECT0);
	assert_false(g.th.flags & (TCP_FLAG_ECE | TCP_FLAG_CWR));
}

static void test_established_ecn_pure_ack_not_ect(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "data", 4, NULL);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_int_equal(g.len, 0);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, 0);
}

static void test_established_ecn_retransmission_not_ect(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
	assert_int_equal(tcp_send(c, "data", 4), 4);
	tp_expect_one(&g);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, IP_ECT0);
	tp_advance(c->rto_ms);
	tp_expect_one(&g);
	assert_int_equal(g.len, 4);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, 0); /* §6.1.5 */
}

static void test_established_ecn_ce_echoed_with_ece_until_cwr(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	struct tcp_conn *c = open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
	p.tos = IP_CE;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ce", 2, NULL);
	tp_expect_one(&g); /* at once */
	assert_true(g.th.flags & TCP_FLAG_ECE);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ECN_CE_RX], 1);
	/* Later ACKs keep echoing, even for unmarked segments. */
	p.tos = IP_ECT0;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ok", 2, NULL);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_ECE);
	/* Our data segments carry it too. */
	assert_int_equal(tcp_send(c, "x", 1), 1);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_ECE);
	p.rcv_nxt = g.th.seq + 1;
	/* The sender's CWR ends it. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH | TCP_FLAG_CWR, "cw", 2, NULL);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_false(g.th.flags & TCP_FLAG_ECE);
	char b[16];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 6);
}

/* RFC 3168 §6.1.2: an ECE reduces cwnd once, and CWR marks the next new data. */
static void ece_reaction(struct tcp_conn *c, struct tp_peer *pp)
{
	struct tp_peer p = *pp;
	struct tp_seg g;
	uint64_t reductions = ts_s->events[STACK_EV_TCP_ECN_REDUCTIONS];
	assert_int_equal(tcp_send(c, "one", 3), 3);
	tp_expect_one(&g);
	uint32_t cwnd = c->cc.cwnd;
	p.rcv_nxt = g.th.seq + 3;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_ECE, NULL, 0, NULL);
	assert_true(c->cc.cwnd < cwnd);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ECN_REDUCTIONS], reductions + 1);
	assert_int_equal(tcp_send(c, "two", 3), 3);
	tp_expect_one(&g);
	assert_true(g.th.flags & TCP_FLAG_CWR);
	assert_int_equal(g.ip.tos & IP_ECN_MASK, IP_ECT0);
	assert_int_equal(tcp_send(c, "three", 5), 5);
	tp_expect_none(); /* Nagle: "two" is unacknowledged */
	p.rcv_nxt = g.th.seq + 3;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_false(g.th.flags & TCP_FLAG_CWR); /* once per reduction */
	*pp = p;
}

static void test_established_ecn_ece_received_sets_cwr_on_next_data(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	ece_reaction(open_ecn(&p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g), &p);
}

/* The once-per-window guard starts at the ISS (RFC 6582 §3.2's "recover" likewise), not at 0:
 * every connection reacts, whichever half of the sequence space its random ISS fell in.
 * Sixteen connections miss the upper half with probability 2^-16. */
static void test_established_ecn_ece_reaction_whatever_the_iss(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(64);
	for (unsigned i = 0; i < 16; i++) {
		struct tp_peer p;
		struct tp_seg g;
		struct tcp_conn *c = open_ecn_on(l, i, &p, TCP_FLAG_ECE | TCP_FLAG_CWR, &g);
		ece_reaction(c, &p);
	}
	assert_int_equal(ts_s->events[STACK_EV_TCP_ECN_REDUCTIONS], 16);
}

static void test_established_no_ecn_ce_not_echoed(void **state)
{
	(void)state;
	struct tp_peer p;
	struct tp_seg g;
	open_ecn(&p, 0, &g);
	p.tos = IP_CE;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ce", 2, NULL);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_false(g.th.flags & TCP_FLAG_ECE);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ECN_CE_RX], 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tp_setup, tp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_listen_accept_on_empty_queue_returns_null),
		T(test_listen_table_full_refuses_with_enobufs_counted_until_one_closes),
		T(test_listen_table_of_no_entries_or_beyond_the_limit_refused),
		T(test_conn_table_full_refuses_connect_with_enobufs_counted_until_one_closes),
		T(test_conn_table_below_the_minimum_or_beyond_the_limit_refused),
		T(test_listen_accept_returns_connections_in_order),
		T(test_listen_accept_queue_full_syn_dropped_and_counted),
		T(test_listen_syn_queue_full_answers_with_cookie_keeping_no_state),
		T(test_listen_cookie_ack_completes_connection_with_options),
		T(test_listen_cookie_mss_rounded_down_to_table),
		T(test_listen_cookie_syn_ack_announces_our_mss),
		T(test_listen_cookie_without_timestamps_restores_mss_only),
		T(test_listen_cookie_ack_with_data_delivers_it),
		T(test_listen_forged_cookie_ack_answered_with_rst),
		T(test_listen_cookie_ack_with_other_peer_seq_answered_with_rst),
		T(test_listen_cookie_ack_from_other_port_answered_with_rst),
		T(test_listen_cookie_still_valid_after_two_minutes),
		T(test_listen_expired_cookie_answered_with_rst),
		T(test_listen_cookie_ack_with_accept_queue_full_dropped),
		T(test_syn_received_syn_ack_retransmitted_with_backoff_then_given_up),
		T(test_syn_received_late_ack_after_give_up_answered_with_rst),
		T(test_syn_received_ack_after_retransmitted_syn_ack_completes),
		T(test_syn_received_duplicate_syn_resends_syn_ack),
		T(test_syn_received_listener_owner_told_once_established),
		T(test_listen_close_resets_children_in_both_queues),
		T(test_reset_before_accept_handed_to_accept),
		T(test_listen_close_frees_dead_child_silently),
		T(test_listen_close_keeps_accepted_connections),
		T(test_listen_same_wildcard_port_twice_eaddrinuse),
		T(test_listen_same_address_and_port_twice_eaddrinuse),
		T(test_listen_on_foreign_address_eaddrnotavail),
		T(test_listen_specific_address_preferred_over_wildcard),
		T(test_listen_wildcard_takes_other_addresses),
		T(test_listen_specific_closed_wildcard_takes_over),
		T(test_reuseport_listeners_of_one_user_share_connections),
		T(test_reuseport_needs_the_option_on_both_and_one_user),
		T(test_reuseport_closed_listeners_leave_the_rest_serving),
		T(test_listen_ecn_setup_syn_gets_syn_ack_with_ece_only),
		T(test_listen_syn_with_ece_alone_no_ecn),
		T(test_listen_syn_without_ecn_no_ece),
		T(test_established_ecn_data_is_ect0),
		T(test_established_ecn_pure_ack_not_ect),
		T(test_established_ecn_retransmission_not_ect),
		T(test_established_ecn_ce_echoed_with_ece_until_cwr),
		T(test_established_ecn_ece_received_sets_cwr_on_next_data),
		T(test_established_ecn_ece_reaction_whatever_the_iss),
		T(test_established_no_ecn_ce_not_echoed),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
