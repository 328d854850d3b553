/* Data transfer on an established connection (RFC 9293 §3.8–3.10). Receiving: in-order
 * delivery, out-of-order segments held and acknowledged at once with SACK blocks, most recent
 * first (RFC 2018 §4), holes filled, D-SACK for duplicates (RFC 2883), overlap trimming, data
 * past the window, the ACK-every-second-segment / 40 ms delayed-ACK policy (RFC 5681 §4.2),
 * the receive window as the FIFO fills and receiver SWS avoidance (§3.8.6.2.2). Sending:
 * MSS-sized segments, the initial window (RFC 6928), slow start (RFC 5681 §3.1), the peer's
 * window, Nagle (§3.7.4), zero-window probing (§3.8.6.1) and sender SWS avoidance
 * (§3.8.6.2.1). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"
#include "../../src/wire/icmp6.h"

/* Our MSS for the route's 1500-byte MTU (no more than the peer's 1460) less the 12 bytes of
 * timestamps. */
#define MSS_TS (TP_MSS_1500 - 12)
#define P0 (TP_PEER_ISN + 1) /* the peer's first data byte */

static struct tp_seg segs[TS_MAX_FRAMES];
static uint8_t pat[256 * 1024];
static uint8_t buf[256 * 1024];

/* ---- helpers ---- */

static void fill_pattern(void)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = ts_pattern(i);
}

static int data_setup(void **state)
{
	fill_pattern();
	return tp_setup(state);
}

/* Peer data: bytes [off, off + len) of the pattern stream, at P0 + off. */
static void peer_data_at(struct tp_peer *p, uint32_t off, uint32_t len)
{
	tp_send_at(p, P0 + off, p->rcv_nxt, TCP_FLAG_ACK, pat + off, len, NULL);
}

/* A passive open on a listener with options o, the peer's SYN carrying syn (NULL: none). */
static struct tcp_conn *open_with(struct tp_peer *p, const struct tcp_sockopts *o,
				  const struct tcp_options *syn)
{
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 16, o, &tp_owner, &l), 0);
	struct tcp_options none = {0};
	p->ts = syn != NULL && syn->has_timestamps;
	tp_send(p, TCP_FLAG_SYN, NULL, 0, syn != NULL ? syn : &none);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	p->rcv_nxt = g.th.seq + 1;
	if (g.th.options.has_timestamps)
		p->tsecr = g.th.options.tsval;
	if (syn != NULL && syn->has_wscale)
		p->wscale = syn->wscale;
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	return c;
}

/* A passive open with a receive FIFO of rcvbuf bytes; the peer offers Linux's options. */
static struct tcp_conn *open_rcvbuf(struct tp_peer *p, uint32_t rcvbuf)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.rcvbuf = rcvbuf;
	o.rcvbuf_locked = true; /* as SO_RCVBUF: no autotuning */
	struct tcp_options syn = tp_linux_syn_opts(p);
	return open_with(p, &o, &syn);
}

/* A peer without window scaling (so its window is exact in bytes), with SACK and
 * timestamps; its SYN announces syn_window. */
static struct tcp_conn *open_noscale(struct tp_peer *p, uint16_t syn_window)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_options syn = tp_linux_syn_opts(p);
	syn.has_wscale = false;
	p->window = syn_window;
	return open_with(p, &o, &syn);
}

/* Peer data [from, to) in segments of at most MSS_TS bytes. */
static void peer_fill(struct tp_peer *p, uint32_t from, uint32_t to)
{
	while (from < to) {
		uint32_t len = to - from < MSS_TS ? to - from : MSS_TS;
		peer_data_at(p, from, len);
		from += len;
	}
}

/* The peer acknowledges up to seq (absolute) with its current window. */
static void peer_ack(struct tp_peer *p, uint32_t seq)
{
	p->rcv_nxt = seq;
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
}

static uint32_t window_of(const struct tcp_conn *c, const struct tp_seg *g)
{
	return (uint32_t)g->th.window << c->rcv_wscale;
}

/* =============================== receiving =============================== */

static void test_established_in_order_segments_delivered_in_order(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, 0, MSS_TS);
	peer_data_at(&p, MSS_TS, MSS_TS);
	peer_data_at(&p, 2 * MSS_TS, 500);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 2 * MSS_TS + 500);
	assert_memory_equal(buf, pat, 2 * MSS_TS + 500);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), -EAGAIN);
	assert_true(tp_owner_rec.events & SOCK_EV_IN);
	ts_expect_no_drops();
}

/* Data we send while holding out-of-order data carries SACK blocks (RFC 2018), and the
 * blocks come out of the payload, not on top of it: payload plus SACK option never exceeds
 * what the peer's MSS leaves beside the timestamps (MSS_TS), so no segment outgrows the MTU. */
static void test_data_segments_with_sack_blocks_fit_the_mss(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, MSS_TS, MSS_TS);      /* a hole at P0: SACK blocks pending */
	peer_data_at(&p, 3 * MSS_TS, MSS_TS);
	tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(tcp_send(c, pat, 8 * MSS_TS), 8 * MSS_TS);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n > 0);
	for (unsigned i = 0; i < n; i++) {
		unsigned sacks = segs[i].th.options.sack_count;
		uint32_t opt = sacks == 0 ? 0 : 4 + 8 * sacks;
		assert_true(segs[i].len + opt <= MSS_TS);
		if (segs[i].len > 0)
			assert_int_equal(sacks, 2); /* both holes reported with the data */
	}
}

static void test_established_out_of_order_segment_acked_at_once_with_sack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, MSS_TS, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.ack, P0);
	assert_int_equal(g.th.options.sack_count, 1);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0 + MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + 2 * MSS_TS);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), -EAGAIN);
	assert_int_equal(ts_s->events[STACK_EV_TCP_OOO_SEGS], 1);
}

static void test_established_sack_blocks_list_most_recent_first(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	peer_data_at(&p, 1 * MSS_TS, MSS_TS);
	peer_data_at(&p, 3 * MSS_TS, MSS_TS);
	peer_data_at(&p, 5 * MSS_TS, MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 3);
	const struct tcp_options *o = &segs[2].th.options;
	assert_int_equal(o->sack_count, 3);
	assert_int_equal(o->sack_blocks[0].left, P0 + 5 * MSS_TS);
	assert_int_equal(o->sack_blocks[1].left, P0 + 3 * MSS_TS);
	assert_int_equal(o->sack_blocks[2].left, P0 + 1 * MSS_TS);
	/* The segment joining two blocks makes the merged block the most recent. */
	peer_data_at(&p, 4 * MSS_TS, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0);
	assert_int_equal(g.th.options.sack_count, 2);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0 + 3 * MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + 6 * MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[1].left, P0 + 1 * MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[1].right, P0 + 2 * MSS_TS);
}

static void test_established_hole_filled_delivers_everything_and_acks_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, MSS_TS, MSS_TS);
	peer_data_at(&p, 2 * MSS_TS, MSS_TS);
	ts_clear();
	peer_data_at(&p, 0, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 3 * MSS_TS);
	assert_int_equal(g.th.options.sack_count, 0);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 3 * MSS_TS);
	assert_memory_equal(buf, pat, 3 * MSS_TS);
}

static void test_established_hole_partly_filled_acks_up_to_next_hole(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, 1 * MSS_TS, MSS_TS);
	peer_data_at(&p, 3 * MSS_TS, MSS_TS);
	ts_clear();
	peer_data_at(&p, 0, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 2 * MSS_TS);
	assert_int_equal(g.th.options.sack_count, 1);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0 + 3 * MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + 4 * MSS_TS);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 2 * MSS_TS);
	assert_memory_equal(buf, pat, 2 * MSS_TS);
	peer_data_at(&p, 2 * MSS_TS, MSS_TS);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 4 * MSS_TS);
	assert_int_equal(g.th.options.sack_count, 0);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 2 * MSS_TS);
	assert_memory_equal(buf, pat + 2 * MSS_TS, 2 * MSS_TS);
}

static void test_established_duplicate_segment_acked_at_once_with_dsack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p));
	peer_data_at(&p, 0, MSS_TS);
	tp_expect_none(); /* delayed */
	uint64_t dups = ts_s->events[STACK_EV_TCP_DUPLICATE_SEGS];
	uint64_t outside = ts_s->drops[STACK_DROP_TCP_OUT_OF_WINDOW];
	peer_data_at(&p, 0, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + MSS_TS);
	/* Nothing is lost: an event, not a drop (a drop is data beyond the window). */
	assert_int_equal(ts_s->events[STACK_EV_TCP_DUPLICATE_SEGS], dups + 1);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_OUT_OF_WINDOW], outside);
	/* RFC 2883 §4: the first block reports the duplicate. */
	assert_true(g.th.options.sack_count >= 1);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + MSS_TS);
	/* Reported once: the next ACK carries no D-SACK. */
	peer_data_at(&p, MSS_TS, 100);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + MSS_TS + 100);
	assert_int_equal(g.th.options.sack_count, 0);
}

static void test_established_old_duplicate_dsack_limited_to_below_rcv_nxt(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	peer_data_at(&p, 0, 1000);
	peer_data_at(&p, 1000, 1000);
	tp_collect(segs, TS_MAX_FRAMES);
	/* A resend of the middle of the first segment only. */
	peer_data_at(&p, 200, 300);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 2000);
	assert_int_equal(g.th.options.sack_count, 1);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0 + 200);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + 500);
}

static void test_established_partial_overlap_trimmed_and_dsacked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	peer_data_at(&p, 0, 1000);
	peer_data_at(&p, 600, 1400); /* 600..1000 again, then 400 new bytes */
	tp_advance(TCP_DELACK_MS);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 1);
	struct tp_seg *g = &segs[n - 1];
	assert_int_equal(g->th.ack, P0 + 2000);
	assert_int_equal(g->th.options.sack_count, 1);
	assert_int_equal(g->th.options.sack_blocks[0].left, P0 + 600);
	assert_int_equal(g->th.options.sack_blocks[0].right, P0 + 1000);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 2000);
	assert_memory_equal(buf, pat, 2000);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PARTIAL_DUPLICATES], 1);
}

static void test_established_duplicate_out_of_order_segment_dsacked_then_sacked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_open_passive(&p);
	peer_data_at(&p, MSS_TS, MSS_TS);
	ts_clear();
	peer_data_at(&p, MSS_TS, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0);
	/* RFC 2883 §4.2.1: the D-SACK block, then the SACK block that holds it. */
	assert_int_equal(g.th.options.sack_count, 2);
	assert_int_equal(g.th.options.sack_blocks[0].left, P0 + MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[0].right, P0 + 2 * MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[1].left, P0 + MSS_TS);
	assert_int_equal(g.th.options.sack_blocks[1].right, P0 + 2 * MSS_TS);
}

static void test_established_data_past_window_trimmed_and_counted(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 4096);
	tp_quickack_spent(c);
	peer_data_at(&p, 0, MSS_TS);
	peer_data_at(&p, MSS_TS, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(window_of(c, &g), 4096 - 2 * MSS_TS);
	/* 1448 bytes into a 1200-byte window: the last 248 are trimmed. */
	peer_data_at(&p, 2 * MSS_TS, MSS_TS);
	ts_expect_drop(STACK_DROP_TCP_DATA_PAST_WINDOW, 1);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 4096);
	assert_int_equal(g.th.window, 0);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 4096);
	assert_memory_equal(buf, pat, 4096);
}

static void test_established_segment_beyond_window_dropped_and_acked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 4096);
	peer_data_at(&p, 5000, 500); /* starts past the 4096-byte window */
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0);
	assert_int_equal(window_of(c, &g), 4096);
	assert_int_equal(g.th.options.sack_count, 0);
	ts_expect_drop(STACK_DROP_TCP_OUT_OF_WINDOW, 1);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), -EAGAIN);
}

static void test_established_zero_window_data_dropped_and_acked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 4096);
	peer_fill(&p, 0, 4096);
	tp_advance(TCP_DELACK_MS);
	tp_collect(segs, TS_MAX_FRAMES);
	peer_data_at(&p, 4096, 100);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 4096);
	assert_int_equal(g.th.window, 0);
	/* At RCV.NXT: the text is dropped, the segment's ACK still counts (RFC 9293). */
	ts_expect_drop(STACK_DROP_TCP_DATA_PAST_WINDOW, 1);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 4096);
}

/* A connection whose 4 KB receive FIFO the peer filled (our window is zero), with a 5-byte
 * reply of ours in flight that ends at *our_end. */
static struct tcp_conn *open_full_with_reply(struct tp_peer *p, uint32_t *our_end)
{
	tp_peer_init(p);
	struct tcp_conn *c = open_rcvbuf(p, 4096);
	peer_fill(p, 0, 4096);
	tp_advance(TCP_DELACK_MS);
	tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(tcp_send(c, "reply", 5), 5);
	struct tp_seg g;
	tp_expect_one(&g);
	*our_end = g.th.seq + 5;
	return c;
}

/* RFC 7323 §2.4: a scaled window rounded down loses a sliver the peer may already have used;
 * its segments from there (SND.NXT past our window) still carry ACKs that count. Here the
 * offer that was taken back is set directly: the creep that leads to it needs thousands of
 * ACKs. */
static void test_established_ack_from_the_sliver_of_a_retracted_window_counts(void **state)
{
	(void)state;
	struct tp_peer p;
	uint32_t our_end;
	struct tcp_conn *c = open_full_with_reply(&p, &our_end);
	c->rcv_adv_max = c->rcv_nxt + 256;
	/* Beyond even that: unacceptable, its ACK ignored. */
	tp_send_at(&p, c->rcv_nxt + 257, our_end, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_collect(segs, TS_MAX_FRAMES);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.tx_queued, 5);
	ts_expect_drop(STACK_DROP_TCP_OUT_OF_WINDOW, 1);
	/* A pure ACK from inside the sliver acknowledges our reply. */
	tp_send_at(&p, c->rcv_nxt + 200, our_end, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_collect(segs, TS_MAX_FRAMES);
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.tx_queued, 0);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 4096);
}

static void test_established_zero_window_segment_ack_still_processed(void **state)
{
	(void)state;
	struct tp_peer p;
	uint32_t our_end;
	struct tcp_conn *c = open_full_with_reply(&p, &our_end);
	/* The peer sends on into our zero window, acknowledging our reply. */
	tp_send_at(&p, P0 + 4096, our_end, TCP_FLAG_ACK, pat, 100, NULL);
	tp_collect(segs, TS_MAX_FRAMES);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.tx_queued, 0); /* acknowledged, so released */
	assert_false(tcp_timer_armed(c, TCP_T_RTX));
}

/* RFC 7323 §2.4: with a scaled window the right edge (ACK + window << scale) we offer moves
 * left by less than one unit at most, and rarely; a peer that fills exactly what we offered
 * never has a byte trimmed (the edge never passes the FIFO's room), whatever odd sizes its
 * segments have while the owner does not read. */
static void test_scaled_window_right_edge_never_retracts(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	/* A 256 KB buffer that SO_RCVBUF fixed: a shift of 3. */
	struct tcp_conn *c = open_rcvbuf(&p, 256 * 1024);
	assert_int_equal(c->rcv_wscale, 3);
	uint32_t edge = c->rcv_adv, off = 0;
	unsigned retractions = 0;
	static const uint32_t sizes[] = {1, 999, 1448, 7, 1000, 333, 1448, 1448, 65};
	for (unsigned round = 0; round < 2000; round++) {
		uint32_t room = edge - (P0 + off);
		if (room == 0)
			break;
		uint32_t len = sizes[round % 9];
		if (len > room)
			len = room;
		tp_send_at(&p, P0 + off, p.rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, pat, len, NULL);
		off += len;
		tp_advance(TCP_DELACK_MS);
		unsigned n = tp_collect(segs, TS_MAX_FRAMES);
		for (unsigned i = 0; i < n; i++) {
			uint32_t e = segs[i].th.ack + ((uint32_t)segs[i].th.window << c->rcv_wscale);
			if (seq_lt(e, edge)) {
				/* RFC 7323 §2.4: only by less than the scale's granularity. */
				assert_true(edge - e < (1u << c->rcv_wscale));
				retractions++;
			}
			edge = e;
		}
	}
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_DATA_PAST_WINDOW], 0);
	assert_int_equal(c->rcv_nxt, P0 + off);
	assert_true(seq_ge(edge, c->rcv_nxt));
	assert_true(fifo_free(c->sk.rx) >= edge - c->rcv_nxt);
	/* The slack absorbs the creep for a long while: retractions stay rare. */
	assert_true(retractions < 350 / 4);
}

/* Receive autotuning (tcp_rcvbuf.c). Stream byte x is stream_byte(x), so that data
 * across FIFO moves can be checked at any length. */
static uint8_t stream_byte(uint32_t x)
{
	return (uint8_t)(x * 7u + (x >> 12));
}

static void stream_send(struct tp_peer *p, uint32_t off, uint32_t len)
{
	uint8_t seg[MSS_TS];
	for (uint32_t i = 0; i < len; i++)
		seg[i] = stream_byte(off + i);
	tp_send_at(p, P0 + off, p->rcv_nxt, TCP_FLAG_ACK | TCP_FLAG_PSH, seg, len, NULL);
}

static void stream_recv_check(struct tcp_conn *c, uint32_t off, uint32_t len)
{
	while (len > 0) {
		uint32_t want = len < sizeof(buf) ? len : (uint32_t)sizeof(buf);
		assert_int_equal(tcp_recv(c, buf, want), want);
		for (uint32_t i = 0; i < want; i++)
			if (buf[i] != stream_byte(off + i))
				fail_msg("stream byte %u differs", off + i);
		off += want;
		len -= want;
	}
}

/* The peer fills whatever window is offered from stream offset from, then the owner reads
 * everything after read_after_ms. Returns the bytes sent. */
static uint32_t fill_window_then_read(struct tp_peer *p, struct tcp_conn *c, uint32_t from,
				      uint64_t read_after_ms)
{
	uint32_t off = from;
	while (seq_gt(c->rcv_adv, P0 + off)) {
		uint32_t room = c->rcv_adv - (P0 + off);
		uint32_t len = room < MSS_TS ? room : MSS_TS;
		stream_send(p, off, len);
		off += len;
		tp_collect(segs, TS_MAX_FRAMES);
	}
	tp_advance(read_after_ms);
	stream_recv_check(c, from, off - from);
	tp_collect(segs, TS_MAX_FRAMES);
	return off - from;
}

static void test_rcvbuf_doubles_for_a_reader_that_keeps_up(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	const uint32_t first = c->sk.rx->size;
	assert_int_equal(c->rcv_wscale, 7); /* room for the largest buffer (4 MB) */
	uint32_t off = fill_window_then_read(&p, c, 0, 0);
	assert_true(off > first / 2);
	assert_int_equal(c->sk.rx->size, first);
	/* Emptied at once: the next data finds a FIFO twice as big, offered at once. */
	stream_send(&p, off, MSS_TS);
	tp_advance(TCP_DELACK_MS);
	assert_int_equal(c->sk.rx->size, 2 * first);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RCVBUF_GROWN], 1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(((uint32_t)g.th.window << c->rcv_wscale) > first);
	stream_recv_check(c, off, MSS_TS);
	ts_expect_no_drops();
}

static void test_rcvbuf_stops_at_the_largest_size(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t off = 0;
	for (unsigned round = 0; round < 8; round++)
		off += fill_window_then_read(&p, c, off, 0);
	assert_int_equal(c->sk.rx->size, 4u << 20);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RCVBUF_GROWN], 4); /* 256 KB to 4 MB */
	ts_expect_no_drops();
}

static void test_rcvbuf_stays_for_a_slow_reader(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	const uint32_t first = c->sk.rx->size;
	uint32_t off = 0;
	for (unsigned round = 0; round < 3; round++)
		off += fill_window_then_read(&p, c, off, 5); /* 5 ms to take a buffer */
	assert_int_equal(c->sk.rx->size, first);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RCVBUF_GROWN], 0);
}

static void test_rcvbuf_set_by_the_owner_is_kept(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 65536); /* locked, as SO_RCVBUF */
	uint32_t off = 0;
	for (unsigned round = 0; round < 3; round++)
		off += fill_window_then_read(&p, c, off, 0);
	assert_int_equal(c->sk.rx->size, 65536);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RCVBUF_GROWN], 0);
}

static void test_established_two_full_segments_acked_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p)); /* timestamps: a full segment carries 1448 bytes */
	peer_data_at(&p, 0, MSS_TS);
	tp_expect_none();
	peer_data_at(&p, MSS_TS, MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 2 * MSS_TS);
	/* And the count starts again. */
	peer_data_at(&p, 2 * MSS_TS, MSS_TS);
	tp_expect_none();
	peer_data_at(&p, 3 * MSS_TS, MSS_TS);
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 4 * MSS_TS);
}

static void test_established_two_full_segments_without_timestamps_acked_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options syn = {.has_mss = true, .mss = 1460, .sack_permitted = true};
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	tp_quickack_spent(open_with(&p, &o, &syn));
	peer_data_at(&p, 0, 1460);
	tp_expect_none();
	peer_data_at(&p, 1460, 1460);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 2920);
}

static void test_established_single_small_segment_acked_after_40ms(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p));
	peer_data_at(&p, 0, 100);
	tp_advance(TCP_DELACK_MS - 1);
	tp_expect_none();
	tp_advance(1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 100);
	assert_int_equal(ts_s->events[STACK_EV_TCP_DELAYED_ACKS], 1);
	tp_advance(1000);
	tp_expect_none();
}

static void test_established_delayed_ack_rides_on_outgoing_data(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_quickack_spent(c);
	peer_data_at(&p, 0, 100);
	tp_expect_none();
	assert_int_equal(tcp_send(c, "reply", 5), 5);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 5);
	assert_int_equal(g.th.ack, P0 + 100);
	tp_advance(TCP_DELACK_MS);
	tp_expect_none(); /* the timer was cancelled */
}

static void test_established_window_shrinks_as_fifo_fills_down_to_zero(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 16384);
	assert_int_equal(c->rcv_wscale, 0);
	uint32_t off = 0, last = 16384;
	while (off < 16384) {
		uint32_t len = 16384 - off < 1000 ? 16384 - off : 1000;
		peer_data_at(&p, off, len);
		off += len;
		tp_advance(TCP_DELACK_MS);
		unsigned n = tp_collect(segs, TS_MAX_FRAMES);
		assert_int_equal(n, 1);
		assert_int_equal(segs[0].th.ack, P0 + off);
		assert_int_equal(segs[0].th.window, 16384 - off);
		assert_true(segs[0].th.window < last);
		last = segs[0].th.window;
	}
	assert_int_equal(last, 0);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.rcv_wnd, 0);
	assert_int_equal(ci.rx_queued, 16384);
}

static void test_established_zero_window_reopened_when_owner_reads_enough(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 16384);
	peer_fill(&p, 0, 16384);
	tp_advance(TCP_DELACK_MS);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(segs[n - 1].th.window, 0);
	/* A small read is not worth a window update (receiver SWS avoidance). */
	assert_int_equal(tcp_recv(c, buf, 1000), 1000);
	tp_expect_none();
	/* Two segments' worth is (RFC 9293 §3.8.6.2.2). */
	assert_int_equal(tcp_recv(c, buf + 1000, 2000), 2000);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.ack, P0 + 16384);
	assert_int_equal(g.th.window, 3000);
	assert_memory_equal(buf, pat, 3000);
	/* The peer may send into the new window. */
	peer_fill(&p, 16384, 16384 + 3000);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 16384 - 3000 + 3000);
	assert_memory_equal(buf, pat + 3000, 16384);
	ts_expect_no_drops();
}

static void test_established_kick_after_direct_read_sends_window_update(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 16384);
	peer_fill(&p, 0, 16384);
	tp_advance(TCP_DELACK_MS);
	tp_collect(segs, TS_MAX_FRAMES);
	/* Zero-copy owners consume from the FIFO themselves, then kick. */
	fifo_consume(tcp_sock(c)->rx, 8192);
	tp_expect_none();
	tcp_kick(c);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.window, 8192);
}

static void test_zero_window_probe_answered_with_zero_until_an_mss_is_free(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_rcvbuf(&p, 16384);
	peer_fill(&p, 0, 16384);
	tp_advance(TCP_DELACK_MS);
	tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(tcp_recv(c, buf, 1000), 1000);
	tp_expect_none();
	/* Linux's zero-window probe: SEG.SEQ = RCV.NXT - 1, no data. */
	tp_send_at(&p, P0 + 16384 - 1, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, P0 + 16384);
	/* RFC 9293 §3.8.6.2.2: 1000 bytes is less than min(RCV.BUFF / 2, MSS): keep it shut. */
	assert_int_equal(g.th.window, 0);
	assert_int_equal(tcp_recv(c, buf, 1000), 1000);
	tp_send_at(&p, P0 + 16384 - 1, p.rcv_nxt, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_one(&g);
	assert_int_equal(g.th.window, 2000);
}

static void test_syn_received_window_bounded_by_rcvbuf_whatever_the_peer_isn(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.snd_nxt = 0x90000000u; /* the other half of the sequence space from 0 */
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.rcvbuf = 4096;
	o.rcvbuf_locked = true;
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 16, &o, &tp_owner, &l), 0);
	struct tcp_options syn = tp_linux_syn_opts(&p);
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &syn);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g.th.window, 4096);
	p.rcv_nxt = g.th.seq + 1;
	p.ts = true;
	p.tsecr = g.th.options.tsval;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	tp_send(&p, TCP_FLAG_ACK, pat, 100, NULL);
	tp_advance(TCP_DELACK_MS);
	tp_expect_one(&g);
	assert_int_equal(window_of(c, &g), 4096 - 100);
}

/* =============================== sending ================================ */

static void test_established_send_cut_into_mss_segments_next_short_one_after_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, pat, 5000), 5000);
	/* Nagle as Linux applies it (Minshall): full segments in flight do not hold the short
	 * tail back; the short tail holds the next short segment until it is acknowledged. */
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(n, 4);
	assert_int_equal(tcp_send(c, pat + 5000, 100), 100);
	tp_expect_none();
	peer_ack(&p, segs[0].th.seq + 3 * MSS_TS);
	tp_expect_none();                      /* the short one is still out */
	peer_ack(&p, segs[0].th.seq + 5000);
	n += tp_collect(segs + 4, TS_MAX_FRAMES - 4);
	assert_int_equal(n, 5);
	assert_int_equal(segs[4].len, 100);
	assert_int_equal(segs[4].th.seq, segs[0].th.seq + 5000);
	n = 4;
	uint32_t seq = segs[0].th.seq, off = 0;
	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(segs[i].th.seq, seq + off);
		assert_int_equal(segs[i].len, i < 3 ? MSS_TS : 5000 - 3 * MSS_TS);
		assert_memory_equal(segs[i].data, pat + off, segs[i].len);
		assert_int_equal(!!(segs[i].th.flags & TCP_FLAG_PSH), i == 3);
		off += segs[i].len;
	}
}

static void test_established_initial_window_is_ten_segments(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, pat, 20 * MSS_TS), 20 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 10); /* RFC 6928 §2 */
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.cwnd, 10 * MSS_TS);
	assert_int_equal(ci.tx_queued, 20 * MSS_TS);
}

static void test_established_slow_start_grows_cwnd_per_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, pat, 40 * MSS_TS), 40 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 10);
	uint32_t una = segs[0].th.seq;
	/* RFC 5681 §3.1 with RFC 3465 L = 2: an ACK of two segments opens cwnd by two, so
	 * four segments go (two replacing those acknowledged, two more). */
	tp_advance(10);
	peer_ack(&p, una + 2 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 4);
	assert_int_equal(segs[0].th.seq, una + 10 * MSS_TS);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.cwnd, 12 * MSS_TS);
	peer_ack(&p, una + 4 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 4);
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.cwnd, 14 * MSS_TS);
}

static void test_established_send_limited_by_peer_window(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_noscale(&p, 3 * MSS_TS);
	assert_int_equal(tcp_send(c, pat, 10 * MSS_TS), 10 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 3);
	uint32_t una = segs[0].th.seq;
	peer_ack(&p, una + MSS_TS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una + 3 * MSS_TS);
	/* The peer opens its window: cwnd (10 segments + 1) is the limit now. */
	p.window = 65535;
	peer_ack(&p, una + MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 6);
}

static void test_established_nagle_second_small_write_waits_for_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "a", 1), 1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 1);
	uint32_t una = g.th.seq;
	assert_int_equal(tcp_send(c, "bc", 2), 2);
	tp_expect_none();
	assert_int_equal(tcp_send(c, "d", 1), 1);
	tp_expect_none();
	peer_ack(&p, una + 1);
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una + 1);
	assert_int_equal(g.len, 3);
	assert_memory_equal(g.data, "bcd", 3);
}

static void test_established_nagle_full_segment_not_held(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "a", 1), 1);
	struct tp_seg g;
	tp_expect_one(&g);
	/* Unacknowledged data does not hold back a full-sized segment; its short tail waits. */
	assert_int_equal(tcp_send(c, pat, MSS_TS + 10), MSS_TS + 10);
	tp_expect_one(&g);
	assert_int_equal(g.len, MSS_TS);
}

static void test_established_nodelay_second_small_write_goes_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	c->opts.nodelay = true;
	assert_int_equal(tcp_send(c, "a", 1), 1);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(tcp_send(c, "b", 1), 1);
	tp_expect_one(&g);
	assert_int_equal(g.len, 1);
	assert_memory_equal(g.data, "b", 1);
}

/* The peer shuts its window, then data is queued. */
static struct tcp_conn *open_zero_window(struct tp_peer *p, uint32_t *una)
{
	struct tcp_conn *c = tp_open_passive(p);
	p->window = 0;
	peer_ack(p, p->rcv_nxt);
	tp_expect_none();
	*una = p->rcv_nxt;
	assert_int_equal(tcp_send(c, pat, 1000), 1000);
	tp_expect_none();
	return c;
}

static void test_established_peer_zero_window_probed_with_backoff(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	uint32_t rto = c->rto_ms < TCP_PERSIST_MIN_MS ? TCP_PERSIST_MIN_MS : c->rto_ms;
	for (unsigned i = 0; i < 4; i++) {
		tp_advance((rto << i) - 1);
		tp_expect_none();
		tp_advance(1);
		struct tp_seg g;
		tp_expect_one(&g);
		/* RFC 9293 §3.8.6.1: a probe that draws an ACK with the window, no new data
		 * at risk: an old sequence number and no data (as Linux). */
		assert_int_equal(g.len, 0);
		assert_int_equal(g.th.seq, una - 1);
		peer_ack(&p, una); /* still shut */
		tp_expect_none();
	}
	assert_int_equal(ts_s->events[STACK_EV_TCP_WINDOW_PROBES], 4);
	/* A probe carries no data sent before: a window probe, not a retransmission (as
	 * Linux's tcp_send_probe0, which leaves RetransSegs alone). */
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 0);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

/* The peer shut its window while data was in flight (it acknowledged part and dropped the
 * rest): the timeout resends the first unacknowledged segment anyway, which serves as the
 * zero-window probe (RFC 9293 §3.8.6.1: "retransmit ... even if the send window is zero",
 * as Linux's tcp_retransmit_timer), and counts it as a retransmission. */
static void test_established_window_shut_with_data_in_flight_rto_resends_and_counts(
	void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t una = p.rcv_nxt;
	assert_int_equal(tcp_send(c, pat, 3000), 3000);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 2);
	p.window = 0;
	peer_ack(&p, una + segs[0].len); /* the first segment in, the rest dropped */
	tp_expect_none();
	tp_advance(c->rto_ms);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una + segs[0].len);
	assert_true(g.len > 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 1);
	/* The window opens: the rest follows. */
	p.window = 0xffff;
	peer_ack(&p, una + segs[0].len + g.len);
	assert_true(tp_collect(segs, TS_MAX_FRAMES) >= 1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

/* The peer shrank its window to a sliver with data in flight: sender SWS avoidance would
 * send nothing into it (less than half the largest window seen), but the timeout's resend
 * goes, as much as the window takes, and counts. */
static void test_established_window_shrunk_small_rto_resends_what_fits_and_counts(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	uint32_t una = p.rcv_nxt;
	assert_int_equal(tcp_send(c, pat, 3000), 3000);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 2);
	p.window = 1; /* one unit of the window scale */
	peer_ack(&p, una + segs[0].len);
	tp_expect_none();
	uint32_t wnd = c->snd_wnd;
	assert_true(wnd > 0 && wnd < c->max_sndwnd / 2 && wnd < segs[1].len);
	tp_advance(c->rto_ms);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una + segs[0].len);
	assert_int_equal(g.len, wnd);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 1);
}

static void test_established_peer_answering_zero_window_probes_keeps_connection(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	for (unsigned i = 0; i < TCP_DATA_RETRIES + 5; i++) {
		tp_advance(TCP_RTO_MAX_MS);
		ts_clear();
		peer_ack(&p, una); /* alive, window still shut */
	}
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
}

static void test_established_silent_peer_zero_window_probes_give_up(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	for (unsigned i = 0; i <= TCP_DATA_RETRIES + 1; i++)
		tp_advance(TCP_RTO_MAX_MS);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	assert_int_equal(ts_s->events[STACK_EV_TCP_WINDOW_PROBES], TCP_DATA_RETRIES);
	tcp_close(c);
}

static void test_orphan_silent_peer_zero_window_freed_after_orphan_retries(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	unsigned before = ts_s->tcp->nconns;
	tcp_close(c);
	for (unsigned i = 0; i <= TCP_ORPHAN_RETRIES + 1; i++)
		tp_advance(TCP_RTO_MAX_MS);
	assert_int_equal(ts_s->tcp->nconns, before - 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_WINDOW_PROBES], TCP_ORPHAN_RETRIES);
}

static void test_established_window_opening_resumes_transfer(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	tp_advance(c->rto_ms);
	struct tp_seg g;
	tp_expect_one(&g);
	p.window = 65535;
	peer_ack(&p, una);
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una);
	assert_int_equal(g.len, 1000);
	assert_memory_equal(g.data, pat, 1000);
}

static void test_established_window_opening_after_probes_restarts_rto_unbacked(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	uint32_t rto = c->rto_ms;
	tp_advance(rto);
	tp_advance(2 * rto);
	tp_advance(4 * rto);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 3);
	p.window = 65535;
	peer_ack(&p, una);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 1000);
	/* The probes were answered: the data gets a fresh, un-backed-off RTO (Linux resets
	 * the backoff when the window opens). */
	tp_advance(rto - 1);
	tp_expect_none();
	tp_advance(1);
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una);
	assert_int_equal(g.len, 1000);
}

static void test_established_window_opening_before_probe_gives_data_full_rto(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	uint32_t una;
	struct tcp_conn *c = open_zero_window(&p, &una);
	uint32_t rto = c->rto_ms;
	tp_advance(rto / 2);
	p.window = 65535;
	peer_ack(&p, una);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 1000);
	/* The persist timer had rto / 2 left: the data must not be resent then. */
	tp_advance(rto - 1);
	tp_expect_none();
	tp_advance(1);
	tp_expect_one(&g);
	assert_int_equal(g.th.seq, una);
}

static void test_established_sws_small_window_holds_tiny_segment(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_noscale(&p, 65535);
	p.window = 1000; /* far below half the largest window the peer offered */
	peer_ack(&p, p.rcv_nxt);
	assert_int_equal(tcp_send(c, pat, 5000), 5000);
	tp_expect_none(); /* RFC 9293 §3.8.6.2.1 */
	p.window = 2 * MSS_TS;
	peer_ack(&p, p.rcv_nxt);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 2);
	assert_int_equal(segs[0].len, MSS_TS);
	assert_int_equal(segs[1].len, MSS_TS);
}

static void test_established_sws_override_timeout_sends_what_fits(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_noscale(&p, 65535);
	uint32_t una = p.rcv_nxt;
	p.window = 1000;
	peer_ack(&p, una);
	assert_int_equal(tcp_send(c, pat, 5000), 5000);
	tp_expect_none();
	/* RFC 9293 §3.8.6.2.1 (4): after the override timeout (0.1-1 s; combined with the
	 * persist timer, as the RFC suggests and Linux does) what fits goes. */
	for (unsigned t = 0; t < 1000 && ts_nframes == 0; t++)
		tp_advance(1);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(n, 1);
	assert_int_equal(segs[0].th.seq, una);
	assert_int_equal(segs[0].len, 1000);
	assert_memory_equal(segs[0].data, pat, 1000);
}

static void test_established_sws_half_of_largest_window_is_enough(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_noscale(&p, 2000); /* the peer's largest window: 2000 */
	p.window = 1000;
	peer_ack(&p, p.rcv_nxt);
	assert_int_equal(tcp_send(c, pat, 5000), 5000);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 1000);
}

static void test_established_sws_all_queued_data_fits_goes(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_noscale(&p, 65535);
	p.window = 1000;
	peer_ack(&p, p.rcv_nxt);
	assert_int_equal(tcp_send(c, pat, 700), 700);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 700);
}

#define T(f) cmocka_unit_test_setup_teardown(f, data_setup, tp_teardown)

#ifdef TP_IPV6
/* An ICMPv6 Packet Too Big from a router on the way, quoting the stack's segment g. */
static void peer_packet_too_big(const struct tp_seg *g, uint32_t mtu)
{
	static uint8_t frame[ETH_HDR_LEN + IP6_HDR_LEN + ICMP6_HDR_LEN + IP6_HDR_LEN + 20];
	uint8_t *ip = frame + ETH_HDR_LEN, *icmp = ip + IP6_HDR_LEN;
	uint8_t *qip = icmp + ICMP6_HDR_LEN, *qtcp = qip + IP6_HDR_LEN;
	struct ip6_repr quoted = {.payload_len = (uint16_t)(20 + g->len), .next_header = IP6_NH_TCP,
				  .hop_limit = 64, .src = inet_addr_to_v6(tp_local_addr()),
				  .dst = inet_addr_to_v6(tp_peer_addr())};
	ip6_build(qip, IP6_HDR_LEN, &quoted);
	struct tcp_repr th = g->th;
	th.options = (struct tcp_options){0};
	tcp_build(qtcp, 20, &th);
	uint16_t icmp_len = ICMP6_HDR_LEN + IP6_HDR_LEN + 20;
	memset(icmp, 0, ICMP6_HDR_LEN);
	icmp[ICMP6_OFF_TYPE] = ICMP6_PACKET_TOO_BIG;
	wire_put_be32(icmp + ICMP6_OFF_REST, mtu);
	struct ip6_repr outer = {.payload_len = icmp_len, .next_header = IP6_NH_ICMPV6,
				 .hop_limit = 64, .src = inet_addr_to_v6(tp_peer_addr()),
				 .dst = inet_addr_to_v6(tp_local_addr())};
	ip6_build(ip, IP6_HDR_LEN, &outer);
	uint32_t sum = wire_csum_pseudo6(outer.src.b, outer.dst.b, IP6_NH_ICMPV6, icmp_len);
	wire_put_be16(icmp + ICMP6_OFF_CSUM, wire_csum_finish(wire_csum_add(sum, icmp, icmp_len)));
	struct eth_repr e = {.dst = ts_mac_port[0], .src = ts_mac_a, .ethertype = ETH_TYPE_IPV6};
	eth_build(frame, ETH_HDR_LEN, &e);
	ts_input_frame(0, frame, ETH_HDR_LEN + IP6_HDR_LEN + icmp_len);
}

/* RFC 8201 §4: Packet Too Big lowers the path MTU: the MSS follows (MTU - 60 - 12 with
 * timestamps) and what was in flight goes again in smaller segments. */
static void test_established_packet_too_big_lowers_mss_and_resends(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, pat, 2 * MSS_TS), 2 * MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 2);
	peer_packet_too_big(&segs[0], 1280);
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_true(n >= 1);
	assert_int_equal(c->snd_mss, 1280 - 60 - 12);
	for (unsigned i = 0; i < n; i++)
		assert_true(segs[i].len <= 1280 - 60 - 12);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ICMP_ERRORS], 1);
}

/* RFC 8201 §4: an MTU below IPv6's minimum is taken as 1280, counted (RFC 5927 §7.2). */
static void test_established_packet_too_big_below_1280_clamped(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, pat, MSS_TS), MSS_TS);
	assert_int_equal(tp_collect(segs, TS_MAX_FRAMES), 1);
	peer_packet_too_big(&segs[0], 600);
	assert_int_equal(c->snd_mss, 1280 - 60 - 12);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PMTU_CLAMPED], 1);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_established_in_order_segments_delivered_in_order),
#ifdef TP_IPV6
		T(test_established_packet_too_big_lowers_mss_and_resends),
		T(test_established_packet_too_big_below_1280_clamped),
#endif
		T(test_established_out_of_order_segment_acked_at_once_with_sack),
		T(test_data_segments_with_sack_blocks_fit_the_mss),
		T(test_established_sack_blocks_list_most_recent_first),
		T(test_established_hole_filled_delivers_everything_and_acks_at_once),
		T(test_established_hole_partly_filled_acks_up_to_next_hole),
		T(test_established_duplicate_segment_acked_at_once_with_dsack),
		T(test_established_old_duplicate_dsack_limited_to_below_rcv_nxt),
		T(test_established_partial_overlap_trimmed_and_dsacked),
		T(test_established_duplicate_out_of_order_segment_dsacked_then_sacked),
		T(test_established_data_past_window_trimmed_and_counted),
		T(test_established_segment_beyond_window_dropped_and_acked),
		T(test_established_zero_window_data_dropped_and_acked),
		T(test_established_zero_window_segment_ack_still_processed),
		T(test_established_ack_from_the_sliver_of_a_retracted_window_counts),
		T(test_scaled_window_right_edge_never_retracts),
		T(test_rcvbuf_doubles_for_a_reader_that_keeps_up),
		T(test_rcvbuf_stops_at_the_largest_size),
		T(test_rcvbuf_stays_for_a_slow_reader),
		T(test_rcvbuf_set_by_the_owner_is_kept),
		T(test_established_two_full_segments_acked_at_once),
		T(test_established_two_full_segments_without_timestamps_acked_at_once),
		T(test_established_single_small_segment_acked_after_40ms),
		T(test_established_delayed_ack_rides_on_outgoing_data),
		T(test_established_window_shrinks_as_fifo_fills_down_to_zero),
		T(test_established_zero_window_reopened_when_owner_reads_enough),
		T(test_established_kick_after_direct_read_sends_window_update),
		T(test_zero_window_probe_answered_with_zero_until_an_mss_is_free),
		T(test_syn_received_window_bounded_by_rcvbuf_whatever_the_peer_isn),
		T(test_established_send_cut_into_mss_segments_next_short_one_after_ack),
		T(test_established_initial_window_is_ten_segments),
		T(test_established_slow_start_grows_cwnd_per_ack),
		T(test_established_send_limited_by_peer_window),
		T(test_established_nagle_second_small_write_waits_for_ack),
		T(test_established_nagle_full_segment_not_held),
		T(test_established_nodelay_second_small_write_goes_at_once),
		T(test_established_peer_zero_window_probed_with_backoff),
		T(test_established_window_shut_with_data_in_flight_rto_resends_and_counts),
		T(test_established_window_shrunk_small_rto_resends_what_fits_and_counts),
		T(test_established_peer_answering_zero_window_probes_keeps_connection),
		T(test_established_silent_peer_zero_window_probes_give_up),
		T(test_orphan_silent_peer_zero_window_freed_after_orphan_retries),
		T(test_established_window_opening_resumes_transfer),
		T(test_established_window_opening_after_probes_restarts_rto_unbacked),
		T(test_established_window_opening_before_probe_gives_data_full_rto),
		T(test_established_sws_small_window_holds_tiny_segment),
		T(test_established_sws_override_timeout_sends_what_fits),
		T(test_established_sws_half_of_largest_window_is_enough),
		T(test_established_sws_all_queued_data_fits_goes),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
