/* RFC 7323 and the SYN options that size a connection: timestamps (negotiation, the TSecr
 * rules of §4.3, PAWS of §5 with its 24-day limit and the RST exemption), window scaling
 * (§2: never in a SYN, ours chosen from the receive buffer), and the MSS (RFC 9293 §3.7.1,
 * RFC 6691: 536 by default, our MTU - 40, minus 12 for timestamps, TCP_MAXSEG). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"

#define DAY_MS (24ull * 3600 * 1000)

static struct tp_seg segs[TS_MAX_FRAMES];
static uint8_t big[64 * 1024];

static void fill_big(void)
{
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = ts_pattern(i);
}

/* Jumps the virtual clock by ms in one tick (the wheel handles the jump). */
static void jump(uint64_t ms)
{
	stack_tick(ts_s, ts_s->now_ms + ms);
}

static struct tcp_conn *listener_with(const struct tcp_sockopts *o)
{
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 16, o, &tp_owner, &l), 0);
	return l;
}

/* SYN with o (NULL: none) to a listener, SYN-ACK back in *g, the peer learns from it. */
static void syn(struct tp_peer *p, const struct tcp_options *o, struct tp_seg *g)
{
	struct tcp_options none = {0};
	p->ts = o != NULL && o->has_timestamps;
	tp_send(p, TCP_FLAG_SYN, NULL, 0, o != NULL ? o : &none);
	tp_expect_one(g);
	assert_int_equal(g->th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	p->rcv_nxt = g->th.seq + 1;
	if (g->th.options.has_timestamps)
		p->tsecr = g->th.options.tsval;
	if (o != NULL && o->has_wscale)
		p->wscale = o->wscale;
}

/* ---- timestamp negotiation (RFC 7323 §3.2) ---- */

static void test_listen_syn_with_timestamps_gets_them_echoed(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	p.tsval = 123456;
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_true(g.th.options.has_timestamps);
	assert_int_equal(g.th.options.tsecr, 123456);
}

static void test_passive_without_peer_timestamps_none_sent(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460, .sack_permitted = true};
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_false(ci.timestamps);
	assert_int_equal(tcp_send(c, "abc", 3), 3);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_false(g.th.options.has_timestamps);
}

static void test_passive_with_timestamps_data_carries_them(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "abc", 3), 3);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.options.has_timestamps);
	assert_int_equal(g.th.options.tsecr, p.tsval);
}

static void test_syn_sent_offers_timestamps(void **state)
{
	(void)state;
	struct tp_seg g;
	tp_connect(NULL, TP_PPORT, &g);
	assert_true(g.th.options.has_timestamps);
	assert_int_equal(g.th.options.tsecr, 0);
}

static void test_syn_sent_peer_without_timestamps_none_used(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tcp_conn *c = tp_open_active(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_false(ci.timestamps);
	assert_int_equal(ci.snd_mss, 1460);
	assert_int_equal(tcp_send(c, "abc", 3), 3);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_false(g.th.options.has_timestamps);
}

static void test_syn_sent_peer_with_timestamps_ack_echoes_them(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.tsval = 4242;
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tcp_conn *c = tp_open_active(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_true(ci.timestamps);
	assert_int_equal(c->ts_recent, 4242);
}

/* RFC 7323 §3.2: timestamps in a later segment of a connection that did not negotiate them
 * are ignored: no PAWS, no echo. */
static void test_established_unnegotiated_timestamps_ignored(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	tp_quickack_spent(c);
	struct tcp_options ts = {.has_timestamps = true, .tsval = 1000};
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ab", 2, &ts);
	ts.tsval = 10; /* would be a PAWS failure */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "cd", 2, &ts);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_false(g.th.options.has_timestamps);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 0);
}

/* ---- TSecr (RFC 7323 §4.3) ---- */

/* Case (A): a delayed ACK covering two segments echoes the earlier one's TSval. */
static void test_established_delayed_ack_echoes_earliest_unacked_tsval(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p));
	p.tsval = 6000;
	tp_send(&p, TCP_FLAG_ACK, "one", 3, NULL);
	p.tsval = 7000;
	tp_send(&p, TCP_FLAG_ACK, "two", 3, NULL);
	tp_expect_none();
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(g.th.options.tsecr, 6000);
}

/* Case (B): a segment beyond a hole does not update TS.Recent; the dupACK echoes the TSval of
 * the last segment that advanced the window. */
static void test_established_out_of_order_segment_does_not_update_ts_recent(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	p.tsval = 6000;
	tp_send(&p, TCP_FLAG_ACK, "aaaa", 4, NULL);
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.options.tsecr, 6000);
	uint32_t hole = p.snd_nxt;
	p.tsval = 8000;
	tp_send_at(&p, hole + 4, p.rcv_nxt, TCP_FLAG_ACK, "cccc", 4, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, hole);
	assert_int_equal(g.th.options.tsecr, 6000);
}

/* Case (C): the segment that fills the hole advances the window: its TSval is echoed. */
static void test_established_hole_filling_segment_tsval_echoed(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t hole = p.snd_nxt;
	p.tsval = 8000;
	tp_send_at(&p, hole + 4, p.rcv_nxt, TCP_FLAG_ACK, "cccc", 4, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.options.tsecr, 5000); /* the handshake ACK's */
	p.tsval = 9000;
	tp_send_at(&p, hole, p.rcv_nxt, TCP_FLAG_ACK, "bbbb", 4, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, hole + 8);
	assert_int_equal(g.th.options.tsecr, 9000);
	char b[16];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 8);
	assert_memory_equal(b, "bbbbcccc", 8);
}

static void test_established_lower_tsval_at_left_edge_does_not_lower_ts_recent(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	p.tsval = 7000;
	tp_send(&p, TCP_FLAG_ACK, "a", 1, NULL);
	assert_int_equal(c->ts_recent, 7000);
	p.tsval = 7000;
	tp_send(&p, TCP_FLAG_ACK, "b", 1, NULL);
	assert_int_equal(c->ts_recent, 7000);
}

/* RFC 5681 §4.2 with RFC 7323: a sender using timestamps fills segments with MSS - 12 bytes
 * of data (Linux sends 1448 for an MSS of 1460), which count as full-sized: every second one
 * is acknowledged at once. */
static void test_established_two_full_timestamped_segments_acked_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p));
	fill_big();
	uint32_t full = TP_MSS_1500 - TCPOLEN_TSTAMP_ALIGNED;
	tp_send(&p, TCP_FLAG_ACK, big, full, NULL);
	tp_expect_none();
	tp_send(&p, TCP_FLAG_ACK, big + full, full, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
}

/* ---- PAWS (RFC 7323 §5) ---- */

static void test_established_paws_older_tsval_acked_and_dropped(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	p.tsval = 4999;
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, "old", 3, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.ack, p.snd_nxt);
	assert_int_equal(g.th.options.tsecr, 5000);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 1);
	assert_int_equal(c->ts_recent, 5000);
}

static void test_established_paws_equal_tsval_accepted(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "same", 4, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 0);
}

static void test_established_paws_tsval_wraps_forward_accepted(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.tsval = 0xfffffff0u;
	struct tcp_conn *c = tp_open_passive(&p);
	p.tsval = 0x10; /* after the wrap: newer in modulo-2^32 order */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "wrap", 4, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	assert_int_equal(c->ts_recent, 0x10);
}

static void test_established_paws_pure_ack_with_old_tsval_ignored(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "data", 4), 4);
	struct tp_seg g;
	tp_expect_one(&g);
	uint32_t una = c->snd_una;
	p.tsval = 1;
	p.rcv_nxt = g.th.seq + 4;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g); /* answered with an ACK, not taken */
	assert_int_equal(c->snd_una, una);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 1);
}

static void test_established_paws_reordered_dupack_with_sack_is_taken(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "abcdefgh", 8), 8);
	struct tp_seg g;
	tp_expect_one(&g);
	/* The peer's duplicate ACK with a SACK block, overtaken by a newer segment: its
	 * timestamp is a little older than TS.Recent. It carries no data: PAWS lets it in
	 * (Linux's tcp_disordered_ack), and its SACK reaches the sent map. */
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "new", 3, NULL);
	tp_collect(segs, TS_MAX_FRAMES);
	struct tcp_options o = {.has_timestamps = true, .tsval = p.tsval - 1, .tsecr = p.tsecr,
				.sack_count = 1};
	o.sack_blocks[0] = (struct tcp_sack_block){g.th.seq + 4, g.th.seq + 8};
	tp_send_at(&p, p.snd_nxt, g.th.seq, TCP_FLAG_ACK, NULL, 0, &o);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 0);
	assert_int_equal(c->sb.sacked, 4);
	assert_int_equal(c->ts_recent, p.tsval);
}

static void test_established_paws_rst_exempt(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	p.tsval = 1;
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNRESET);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 0);
	tcp_close(c);
}

static void test_established_paws_applies_within_24_days(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	jump(23 * DAY_MS);
	ts_clear();
	p.tsval = 4000;
	tp_send_at(&p, p.snd_nxt, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, "old", 3, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), -EAGAIN);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 1);
}

static void test_established_ts_recent_older_than_24_days_not_used(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	jump(24 * DAY_MS + 1000);
	ts_clear();
	p.tsval = 4000;
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "late", 4, NULL);
	char b[8];
	assert_int_equal(tcp_recv(c, b, sizeof(b)), 4);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_PAWS], 0);
	assert_int_equal(c->ts_recent, 4000);
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.options.tsecr, 4000);
}

/* ---- window scale (RFC 7323 §2) ---- */

static void test_syn_received_window_of_syn_not_scaled(void **state)
{
	(void)state;
	struct tcp_conn *l = tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	p.window = 724;
	struct tcp_options o = tp_linux_syn_opts(&p);
	o.wscale = 2;
	struct tp_seg g;
	syn(&p, &o, &g);
	struct tcp_conn *child = TAILQ_FIRST(&l->syn_q);
	assert_non_null(child);
	assert_int_equal(child->snd_wnd, 724);
	assert_int_equal(child->snd_wscale, 2);
}

static void test_passive_peer_window_scaled_after_syn(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.window = 724;
	struct tcp_options o = tp_linux_syn_opts(&p);
	o.wscale = 2;
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_wscale, 2);
	assert_int_equal(ci.snd_wnd, 724 << 2);
	/* The scaled window bounds what is sent: 2896 bytes, two segments of 1448. */
	fill_big();
	assert_int_equal(tcp_send(c, big, 10000), 10000);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	uint32_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += segs[i].len;
	assert_int_equal(total, 724 << 2);
}

static void test_syn_sent_syn_ack_window_not_scaled_later_ones_are(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.window = 1000;
	struct tcp_options o = tp_linux_syn_opts(&p);
	o.wscale = 3;
	struct tcp_conn *c = tp_open_active(&p, &o);
	assert_int_equal(c->snd_wnd, 1000);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(c->snd_wnd, 8000);
}

static void test_listen_syn_ack_offers_our_shift_from_the_buffer(void **state)
{
	(void)state;
	struct tcp_sockopts so;
	tcp_sockopts_default(&so);
	so.rcvbuf = 1024 * 1024;
	so.rcvbuf_locked = true; /* as SO_RCVBUF: the shift follows it */
	listener_with(&so);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_true(g.th.options.has_wscale);
	assert_int_equal(g.th.options.wscale, 5); /* 2^20 >> 5 fits in 16 bits, >> 4 does not */
	assert_int_equal(g.th.window, 65535);    /* a SYN's window is never scaled */
}

static void test_established_our_window_advertised_with_our_shift(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	uint8_t shift = tcp_rcv_wscale_of(&c->opts);
	assert_true(shift > 0);
	assert_int_equal(ci.rcv_wscale, shift);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "x", 1, NULL);
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	/* The room, less the slack kept for rounding the edge (tcp_rcv_slack: an eighth of the
	 * FIFO here), in whole units of the shift. */
	assert_int_equal(tcp_rcv_slack(c), tcp_sock(c)->rx->size / 8);
	uint32_t free_room = fifo_free(tcp_sock(c)->rx) - tcp_sock(c)->rx->size / 8;
	assert_int_equal((uint32_t)g.th.window << shift, free_room & ~((1u << shift) - 1));
}

static void test_syn_sent_offers_our_shift_from_the_buffer(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tp_seg g;
	tp_connect(&o, TP_PPORT, &g);
	assert_true(g.th.options.has_wscale);
	assert_int_equal(g.th.options.wscale, tcp_rcv_wscale_of(&o));
	assert_true(g.th.options.wscale > 0);
}

static void test_syn_sent_peer_with_wscale_our_window_scaled(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tcp_conn *c = tp_open_active(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	uint8_t shift = tcp_rcv_wscale_of(&c->opts);
	assert_int_equal(ci.rcv_wscale, shift);
	assert_int_equal(ci.snd_wscale, 7);
	/* Our window covers the whole receive buffer, beyond 64 KB. */
	assert_true(ci.rcv_wnd > UINT16_MAX);
}

static void test_passive_no_peer_wscale_both_shifts_zero(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460, .has_timestamps = true,
				.tsval = p.tsval};
	p.window = 1000;
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.rcv_wscale, 0);
	assert_int_equal(ci.snd_wnd, 1000);
	assert_int_equal(tcp_send(c, "x", 1), 1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.window, 65535); /* the 256 KB buffer, capped to 16 bits */
}

static void test_listen_syn_without_wscale_gets_none_back(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_false(g.th.options.has_wscale);
}

static void test_syn_sent_peer_without_wscale_both_shifts_zero(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	p.window = 1000;
	struct tcp_conn *c = tp_open_active(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_wscale, 0);
	assert_int_equal(ci.rcv_wscale, 0);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(c->snd_wnd, 1000);
}

/* The ACK of a SYN-ACK announces the whole (unscaled, capped) window whatever the peer's
 * ISN: RCV.ADV must not be a value left from before the ISN was known. */
static void syn_sent_ack_window_for_peer_isn(uint32_t isn)
{
	struct tp_peer p;
	tp_peer_init(&p);
	p.snd_nxt = isn;
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tcp_conn *c;
	struct tcp_sockopts so;
	tcp_sockopts_default(&so);
	assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(0), TP_LPORT, INET_ADDR_V4(TS_HOST_A),
		p.port, &so, &tp_owner, &c), 0);
	struct tp_seg g;
	tp_expect_one(&g);
	p.rcv_nxt = g.th.seq + 1;
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.window, 65535);
	tcp_close(c);
	ts_clear();
}

static void test_syn_sent_peer_isn_in_upper_half_window_not_garbled(void **state)
{
	(void)state;
	syn_sent_ack_window_for_peer_isn(0x90000000u);
}

static void test_syn_sent_peer_isn_near_wrap_window_not_garbled(void **state)
{
	(void)state;
	syn_sent_ack_window_for_peer_isn(0xfffeff00u);
}

static void test_syn_sent_small_peer_isn_window_full(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.snd_nxt = 100;
	struct tcp_options o = {.has_mss = true, .mss = 1460};
	struct tcp_sockopts so;
	tcp_sockopts_default(&so);
	struct tcp_conn *c;
	assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(0), TP_LPORT, INET_ADDR_V4(TS_HOST_A),
		p.port, &so, &tp_owner, &c), 0);
	struct tp_seg g;
	tp_expect_one(&g);
	p.rcv_nxt = g.th.seq + 1;
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.window, 65535);
}

/* ---- MSS (RFC 9293 §3.7.1, RFC 6691) ---- */

static void test_passive_no_mss_option_defaults_to_536(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive_opts(&p, NULL);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, TCP_MSS_DEFAULT);
	fill_big();
	assert_int_equal(tcp_send(c, big, 2000), 2000);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 3);
	for (unsigned i = 0; i < n; i++)
		assert_true(segs[i].len <= TCP_MSS_DEFAULT);
	assert_int_equal(segs[0].len, TCP_MSS_DEFAULT);
}

static void test_passive_no_mss_option_with_timestamps_is_524(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_timestamps = true, .tsval = p.tsval};
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, TCP_MSS_DEFAULT - TCPOLEN_TSTAMP_ALIGNED);
}

static void test_syn_sent_no_mss_option_defaults_to_536(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_active(&p, NULL);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, TCP_MSS_DEFAULT);
}

static void test_passive_large_peer_mss_clamped_to_our_mtu(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 8960};
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, TP_MSS_1500);
	assert_int_equal(ci.rcv_mss, TP_MSS_1500);
}

static void test_passive_smaller_mtu_lowers_both_mss(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&ts_s->cfg, 0, 1280), 0);
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_int_equal(g.th.options.mss, 1280 - 40);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(tcp_listener_lookup(ts_s, INET_ADDR_V4(TS_ADDR0), TP_LPORT),
		&tp_owner);
	assert_non_null(c);
	assert_int_equal(c->snd_mss, 1280 - 40 - TCPOLEN_TSTAMP_ALIGNED);
}

static void test_passive_timestamps_take_12_bytes_of_mss(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, 1460 - TCPOLEN_TSTAMP_ALIGNED);
	fill_big();
	assert_int_equal(tcp_send(c, big, 3000), 3000);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 2);
	assert_int_equal(segs[0].len, 1448);
	assert_int_equal(segs[0].th.hdr_len + segs[0].len, 20 + 1460);
}

static void test_passive_small_peer_mss_honoured(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = {.has_mss = true, .mss = 1000};
	struct tcp_conn *c = tp_open_passive_opts(&p, &o);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.snd_mss, 1000);
}

static void test_listen_tcp_maxseg_caps_announced_and_sent_mss(void **state)
{
	(void)state;
	struct tcp_sockopts so;
	tcp_sockopts_default(&so);
	so.mss = 1000;
	struct tcp_conn *l = listener_with(&so);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tp_seg g;
	syn(&p, &o, &g);
	assert_int_equal(g.th.options.mss, 1000);
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.rcv_mss, 1000);
	assert_int_equal(ci.snd_mss, 1000 - TCPOLEN_TSTAMP_ALIGNED);
}

static void test_syn_sent_tcp_maxseg_announced(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.mss = 1200;
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(&o, TP_PPORT, &g);
	assert_true(g.th.options.has_mss);
	assert_int_equal(g.th.options.mss, 1200);
	struct tp_peer p;
	tp_peer_init(&p);
	p.rcv_nxt = g.th.seq + 1;
	struct tcp_options so = {.has_mss = true, .mss = 1460};
	tp_send(&p, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &so);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(c->snd_mss, 1200);
}

#define T(f) cmocka_unit_test_setup_teardown(f, tp_setup, tp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_listen_syn_with_timestamps_gets_them_echoed),
		T(test_passive_without_peer_timestamps_none_sent),
		T(test_passive_with_timestamps_data_carries_them),
		T(test_syn_sent_offers_timestamps),
		T(test_syn_sent_peer_without_timestamps_none_used),
		T(test_syn_sent_peer_with_timestamps_ack_echoes_them),
		T(test_established_unnegotiated_timestamps_ignored),
		T(test_established_delayed_ack_echoes_earliest_unacked_tsval),
		T(test_established_out_of_order_segment_does_not_update_ts_recent),
		T(test_established_hole_filling_segment_tsval_echoed),
		T(test_established_lower_tsval_at_left_edge_does_not_lower_ts_recent),
		T(test_established_two_full_timestamped_segments_acked_at_once),
		T(test_established_paws_older_tsval_acked_and_dropped),
		T(test_established_paws_equal_tsval_accepted),
		T(test_established_paws_tsval_wraps_forward_accepted),
		T(test_established_paws_pure_ack_with_old_tsval_ignored),
		T(test_established_paws_reordered_dupack_with_sack_is_taken),
		T(test_established_paws_rst_exempt),
		T(test_established_paws_applies_within_24_days),
		T(test_established_ts_recent_older_than_24_days_not_used),
		T(test_syn_received_window_of_syn_not_scaled),
		T(test_passive_peer_window_scaled_after_syn),
		T(test_syn_sent_syn_ack_window_not_scaled_later_ones_are),
		T(test_listen_syn_ack_offers_our_shift_from_the_buffer),
		T(test_established_our_window_advertised_with_our_shift),
		T(test_syn_sent_offers_our_shift_from_the_buffer),
		T(test_syn_sent_peer_with_wscale_our_window_scaled),
		T(test_passive_no_peer_wscale_both_shifts_zero),
		T(test_listen_syn_without_wscale_gets_none_back),
		T(test_syn_sent_peer_without_wscale_both_shifts_zero),
		T(test_syn_sent_peer_isn_in_upper_half_window_not_garbled),
		T(test_syn_sent_peer_isn_near_wrap_window_not_garbled),
		T(test_syn_sent_small_peer_isn_window_full),
		T(test_passive_no_mss_option_defaults_to_536),
		T(test_passive_no_mss_option_with_timestamps_is_524),
		T(test_syn_sent_no_mss_option_defaults_to_536),
		T(test_passive_large_peer_mss_clamped_to_our_mtu),
		T(test_passive_smaller_mtu_lowers_both_mss),
		T(test_passive_timestamps_take_12_bytes_of_mss),
		T(test_passive_small_peer_mss_honoured),
		T(test_listen_tcp_maxseg_caps_announced_and_sent_mss),
		T(test_syn_sent_tcp_maxseg_announced),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
