/* Loss and liveness on an established connection: the retransmission timer (RFC 6298:
 * initial RTO, RTT estimation, the 200 ms floor, Karn's rule, exponential backoff), the retry
 * limit and the user timeout (RFC 5482), fast retransmit and NewReno recovery without SACK
 * (RFC 5681 §3.2, RFC 6582), with SACK RACK-TLP (RFC 8985: time-based loss marking, the
 * reorder timer, lost retransmissions, tail loss probes), PRR (RFC 6937), RTO recovery from
 * the sent map, undo by D-SACK and timestamps (RFC 2883, RFC 3522), the "recover" guard
 * against a second fast retransmit, keepalive (RFC 1122 §4.2.3.6), and the congestion
 * controller chosen per socket. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"

static struct tp_seg segs[TS_MAX_FRAMES];
static uint8_t pat[64 * 1024];

/* ---- helpers ---- */

static int rtx_setup(void **state)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = ts_pattern(i);
	int rc = tp_setup(state);
	/* Away from 0: the handshake's RTT timing needs a clock that has started. */
	tp_advance(1000);
	return rc;
}

/* How a test wants its connection. */
struct conn_cfg {
	const char *cc;          /* NULL: the default controller */
	bool sack;
	bool ts;
	uint32_t hs_rtt_ms;      /* delay of the handshake's last ACK (the first RTT sample) */
	uint32_t user_timeout_ms;
	bool keepalive;
	uint32_t keep_idle_ms, keep_intvl_ms, keep_cnt;
};

static struct tcp_conn *listener;

/* A passive open from peer p, on a listener with cfg's options (made on first use). */
static struct tcp_conn *open_conn(struct tp_peer *p, const struct conn_cfg *cfg)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	if (cfg->cc != NULL) {
		o.cc = tcp_cc_find(cfg->cc);
		assert_non_null(o.cc);
	}
	o.user_timeout_ms = cfg->user_timeout_ms;
	if (cfg->keepalive) {
		o.keepalive = true;
		o.keep_idle_ms = cfg->keep_idle_ms;
		o.keep_intvl_ms = cfg->keep_intvl_ms;
		o.keep_cnt = cfg->keep_cnt;
	}
	if (listener == NULL || tcp_conn_state(listener) != TCP_LISTEN)
		assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 64, &o, &tp_owner,
			&listener), 0);
	struct tcp_options syn = {.has_mss = true, .mss = 1460, .has_wscale = true, .wscale = 7,
				  .sack_permitted = cfg->sack, .has_timestamps = cfg->ts,
				  .tsval = p->tsval};
	p->ts = cfg->ts;
	p->wscale = 7;
	tp_send(p, TCP_FLAG_SYN, NULL, 0, &syn);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	p->rcv_nxt = g.th.seq + 1;
	if (g.th.options.has_timestamps)
		p->tsecr = g.th.options.tsval;
	tp_advance(cfg->hs_rtt_ms);
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	struct tcp_conn *c = tcp_accept(listener, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	return c;
}

static int rtx_teardown(void **state)
{
	listener = NULL;
	return tp_teardown(state);
}

/* NewReno without SACK, timestamps on, handshake RTT 100 ms (RTO 300 ms). */
static const struct conn_cfg cfg_newreno = {.cc = "newreno", .ts = true, .hs_rtt_ms = 100};
/* The same with SACK (Linux's options). */
static const struct conn_cfg cfg_sack = {.cc = "newreno", .sack = true, .ts = true,
					 .hs_rtt_ms = 100};

/* Collects what the stack sent; the peer echoes the newest timestamp. */
static unsigned collect(struct tp_peer *p)
{
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	for (unsigned i = 0; i < n; i++)
		if (segs[i].th.options.has_timestamps)
			p->tsecr = segs[i].th.options.tsval;
	return n;
}

static void expect_one_seg(struct tp_peer *p, uint32_t seq, uint32_t len)
{
	assert_int_equal(collect(p), 1);
	assert_int_equal(segs[0].th.seq, seq);
	assert_int_equal(segs[0].len, len);
}

/* A pure ACK from the peer: ack, and SACK blocks [una + l*mss, una + r*mss) in units of
 * segments (pairs in blk, n pairs). */
static void peer_ack_sack(struct tp_peer *p, uint32_t ack, uint32_t una, uint32_t mss,
			  const unsigned (*blk)[2], unsigned n)
{
	struct tcp_options o = {0};
	if (p->ts) {
		o.has_timestamps = true;
		o.tsval = p->tsval;
		o.tsecr = p->tsecr;
	}
	o.sack_count = (uint8_t)n;
	for (unsigned i = 0; i < n; i++)
		o.sack_blocks[i] = (struct tcp_sack_block){una + blk[i][0] * mss,
							   una + blk[i][1] * mss};
	tp_send_at(p, p->snd_nxt, ack, TCP_FLAG_ACK, NULL, 0, &o);
}

static void peer_ack(struct tp_peer *p, uint32_t ack)
{
	tp_send_at(p, p->snd_nxt, ack, TCP_FLAG_ACK, NULL, 0, NULL);
}

/* Queues n full segments (and more behind them when extra): returns the first sequence
 * number. What the window lets go is collected. */
static uint32_t send_segs(struct tp_peer *p, struct tcp_conn *c, unsigned queued, unsigned sent)
{
	uint32_t una = p->rcv_nxt;
	uint32_t len = queued * c->snd_mss;
	assert_int_equal(tcp_send(c, pat, len), len);
	assert_int_equal(collect(p), sent);
	assert_int_equal(segs[0].th.seq, una);
	return una;
}

/* ============================ retransmission timer ============================ */

static void test_established_no_rtt_sample_first_rto_is_one_second(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 8, &o, &tp_owner, &listener),
		0);
	struct tcp_options syn = tp_linux_syn_opts(&p);
	p.ts = true;
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &syn);
	struct tp_seg g;
	tp_expect_one(&g);
	tp_advance(TCP_RTO_INIT_MS); /* the SYN-ACK is lost and resent */
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	p.rcv_nxt = g.th.seq + 1;
	p.tsecr = g.th.options.tsval;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(listener, &tp_owner);
	assert_non_null(c);
	/* Karn: the ACK of a resent SYN-ACK is no sample; RFC 6298 §2.1: RTO = 1 s. */
	assert_int_equal(c->srtt_us, 0);
	assert_int_equal(c->rto_ms, TCP_RTO_INIT_MS);
	assert_int_equal(tcp_send(c, pat, 1000), 1000);
	expect_one_seg(&p, p.rcv_nxt, 1000);
	tp_advance(TCP_RTO_INIT_MS - 1);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, p.rcv_nxt, 1000);
	assert_memory_equal(segs[0].data, pat, 1000);
}

static void test_established_rto_resends_only_the_first_unacked_segment(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	/* Without SACK: no tail loss probe comes before the timer (see the TLP tests). */
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	assert_int_equal(c->rto_ms, 300);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 3, 3);
	tp_advance(299);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, una, mss);
	assert_memory_equal(segs[0].data, pat, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 1);
	assert_int_equal(c->retransmits, 1);
}

static void test_established_rto_backs_off_exponentially(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t una = send_segs(&p, c, 1, 1);
	uint32_t rto = c->rto_ms;
	for (unsigned i = 0; i < 6; i++) {
		tp_advance((rto << i) - 1);
		tp_expect_none();
		tp_advance(1);
		expect_one_seg(&p, una, c->snd_mss);
	}
	assert_int_equal(c->rto_ms, rto); /* the estimate stays; the backoff doubles it */
}

static void test_established_retry_limit_resets_with_etimedout(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t una = send_segs(&p, c, 2, 2);
	uint64_t rto = c->rto_ms;
	for (unsigned i = 0; i < TCP_DATA_RETRIES; i++) {
		uint64_t wait = rto << i;
		tp_advance(wait > TCP_RTO_MAX_MS ? TCP_RTO_MAX_MS : wait);
		expect_one_seg(&p, una, c->snd_mss);
		assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	}
	tp_advance(TCP_RTO_MAX_MS);
	assert_int_equal(collect(&p), 1);
	assert_true(segs[0].th.flags & TCP_FLAG_RST);
	assert_true(seq_ge(segs[0].th.seq, una) && seq_le(segs[0].th.seq, una + 2 * c->snd_mss));
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIMEOUTS], 1);
	assert_int_equal(tcp_send(c, "x", 1), -EPIPE);
	tcp_close(c);
}

static void test_established_user_timeout_aborts_when_data_unacked_that_long(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_sack;
	cfg.user_timeout_ms = 3000;
	struct tcp_conn *c = open_conn(&p, &cfg);
	send_segs(&p, c, 1, 1);
	/* RFC 5482 §2: data may stay unacknowledged for the user timeout, no longer; Linux
	 * clamps the retransmission timer to it. */
	tp_advance(3000 - 1);
	collect(&p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	tp_advance(1);
	assert_int_equal(collect(&p), 1);
	assert_true(segs[0].th.flags & TCP_FLAG_RST);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TIMEOUTS], 1);
	tcp_close(c);
}

static void test_established_user_timeout_runs_from_the_last_progress(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_sack;
	cfg.user_timeout_ms = 3000;
	struct tcp_conn *c = open_conn(&p, &cfg);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 2, 2);
	tp_advance(2000);
	collect(&p);
	peer_ack(&p, una + mss); /* progress: the clock starts again */
	collect(&p);
	tp_advance(2999);
	collect(&p);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	tp_advance(1);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	tcp_close(c);
}

/* ================================ RTT estimation ================================ */

static void test_syn_received_handshake_rtt_is_the_first_sample(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = {.sack = true, .hs_rtt_ms = 100};
	struct tcp_conn *c = open_conn(&p, &cfg);
	/* RFC 6298 §2.2: SRTT = R, RTTVAR = R/2, RTO = SRTT + 4 RTTVAR. */
	assert_int_equal(c->srtt_us, 100000);
	assert_int_equal(c->rttvar_us, 50000);
	assert_int_equal(c->rto_ms, 300);
}

static void test_established_second_rtt_sample_smoothed_per_rfc6298(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = {.sack = true, .hs_rtt_ms = 100};
	struct tcp_conn *c = open_conn(&p, &cfg);
	uint32_t una = send_segs(&p, c, 1, 1);
	tp_advance(200);
	peer_ack(&p, una + c->snd_mss);
	/* RFC 6298 §2.3: RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms,
	 * SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms, RTO = 112.5 + 4 * 62.5 = 362.5 ms. */
	assert_int_equal(c->rttvar_us, 62500);
	assert_int_equal(c->srtt_us, 112500);
	assert_int_equal(c->rto_ms, 363);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_int_equal(ci.srtt_us, 112500);
	assert_int_equal(ci.rto_ms, 363);
}

static void test_established_rto_floored_at_200ms(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = {.sack = true, .hs_rtt_ms = 10};
	struct tcp_conn *c = open_conn(&p, &cfg);
	assert_int_equal(c->srtt_us, 10000);
	assert_int_equal(c->rto_ms, TCP_RTO_MIN_MS); /* 10 + 4 * 5 = 30 ms, below the floor */
	uint32_t una = send_segs(&p, c, 1, 1);
	tp_advance(TCP_RTO_MIN_MS - 1);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, una, c->snd_mss);
}

static void test_established_ack_of_retransmitted_segment_is_no_rtt_sample(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = {.sack = true, .hs_rtt_ms = 100};
	struct tcp_conn *c = open_conn(&p, &cfg);
	uint32_t una = send_segs(&p, c, 1, 1);
	tp_advance(c->rto_ms);
	expect_one_seg(&p, una, c->snd_mss);
	tp_advance(700);
	peer_ack(&p, una + c->snd_mss);
	/* Karn (RFC 6298 §3): which transmission does this ACK answer? No sample. */
	assert_int_equal(c->srtt_us, 100000);
	assert_int_equal(c->rttvar_us, 50000);
	assert_int_equal(c->rto_ms, 300);
}

static void test_syn_sent_rtt_measured_from_the_syn(void **state)
{
	(void)state;
	tp_advance(5000);
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(NULL, TP_PPORT, &g);
	tp_advance(50);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options none = {.has_mss = true, .mss = 1460};
	tp_send_at(&p, p.snd_nxt, g.th.seq + 1, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &none);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(c->srtt_us, 50000);
	assert_int_equal(c->rto_ms, TCP_RTO_MIN_MS);
}

/* ===================== fast retransmit, NewReno (no SACK) ===================== */

static void test_established_third_dupack_fast_retransmits_newreno(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 20, 10);
	peer_ack(&p, una);
	peer_ack(&p, una);
	tp_expect_none();
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 0);
	peer_ack(&p, una);
	expect_one_seg(&p, una, mss);
	assert_memory_equal(segs[0].data, pat, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 1);
	assert_true(c->flags & TCPF_IN_RECOVERY);
	/* RFC 5681 §3.2 step 2 / RFC 6582: ssthresh = FlightSize / 2, cwnd = ssthresh + 3. */
	assert_int_equal(c->cc.ssthresh, 5 * mss);
	assert_int_equal(c->cc.cwnd, 8 * mss);
}

static void test_established_recovery_dupacks_inflate_and_send_new_data_newreno(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 20, 10);
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una);
	collect(&p);
	/* Each further dupACK: cwnd += SMSS (RFC 6582 §3.2 step 4); once cwnd exceeds the
	 * 10 segments outstanding, new data goes. */
	peer_ack(&p, una);
	peer_ack(&p, una);
	tp_expect_none();
	peer_ack(&p, una);
	expect_one_seg(&p, una + 10 * mss, mss);
	assert_int_equal(c->cc.cwnd, 11 * mss);
	assert_int_equal(c->retransmits, 1);
}

static void test_established_partial_ack_resends_next_hole_newreno(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 20, 10);
	/* Segments 0 and 4 are lost: 1-3 and 5-9 arrive, each answered by a dupACK. */
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una);
	expect_one_seg(&p, una, mss);
	for (unsigned i = 0; i < 5; i++)
		peer_ack(&p, una);
	collect(&p); /* new data from the inflated window */
	uint32_t recover = c->recover;
	assert_int_equal(recover, una + 10 * mss);
	/* The resent segment 0 fills the first hole: ACK up to segment 4, below recover. */
	peer_ack(&p, una + 4 * mss);
	unsigned n = collect(&p);
	assert_true(n >= 1);
	assert_int_equal(segs[0].th.seq, una + 4 * mss); /* RFC 6582 §3.2 step 5 */
	assert_int_equal(segs[0].len, mss);
	assert_memory_equal(segs[0].data, pat + 4 * mss, mss);
	for (unsigned i = 1; i < n; i++)
		assert_true(seq_ge(segs[i].th.seq, una + 10 * mss)); /* the rest is new data */
	assert_true(c->flags & TCPF_IN_RECOVERY);
	assert_int_equal(c->retransmits, 2);
}

static void test_established_full_ack_ends_recovery_cwnd_at_ssthresh_newreno(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 30, 10);
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una);
	for (unsigned i = 0; i < 5; i++)
		peer_ack(&p, una);
	peer_ack(&p, una + 4 * mss);
	collect(&p);
	uint32_t ssthresh = c->cc.ssthresh;
	assert_int_equal(ssthresh, 5 * mss);
	/* The resent segment 4 completes everything below recover: a full ACK. */
	peer_ack(&p, c->recover);
	assert_false(c->flags & TCPF_IN_RECOVERY);
	uint32_t flight = c->snd_max - c->snd_una;
	/* RFC 6582 §3.2 step 3 (1): cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS). */
	uint32_t want = flight + mss < ssthresh ? flight + mss : ssthresh;
	assert_int_equal(c->cc.cwnd, want);
	assert_int_equal(c->cc.cwnd, ssthresh); /* enough was in flight in this script */
	assert_int_equal(c->cc.ssthresh, ssthresh);
	assert_int_equal(c->retransmits, 2);
}

static void test_established_fast_retransmit_whatever_the_iss(void **state)
{
	(void)state;
	/* RFC 6582 §3.2: "recover" starts at the ISS. One left at 0 would read as "after"
	 * every sequence number in the upper half of the space and block fast retransmit for
	 * half of all connections: find a connection whose ISS lies there. */
	struct tp_peer p;
	struct tcp_conn *c = NULL;
	for (unsigned i = 0; i < 64 && c == NULL; i++) {
		tp_peer_init(&p);
		p.port = (uint16_t)(TP_PPORT + i);
		c = open_conn(&p, &cfg_newreno);
		if (c->iss < 0x80000000u || c->iss > 0xf0000000u)
			c = NULL; /* left open: another port gives another ISS */
	}
	assert_non_null(c);
	uint32_t una = send_segs(&p, c, 20, 10);
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una);
	expect_one_seg(&p, una, c->snd_mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 1);
}

/* ========================= SACK-based recovery (RFC 6675) ========================= */

static const unsigned b1_2[][2] = {{1, 2}};
static const unsigned b1_3[][2] = {{1, 3}};
static const unsigned b1_4[][2] = {{1, 4}};

/* ============================ RACK (RFC 8985 §6) ============================ */

/* The sender's ACKs come one RTT (the handshake's 100 ms) after what they acknowledge. */
static uint32_t send_then_wait_rtt(struct tp_peer *p, struct tcp_conn *c, unsigned queued,
				   unsigned sent)
{
	uint32_t una = send_segs(p, c, queued, sent);
	tp_advance(100);
	tp_expect_none();
	return una;
}

/* What the stack sent over several steps (segs holds only the last collect). */
static struct tp_seg sent[4 * TS_MAX_FRAMES];
static unsigned n_sent;

static void collect_more(struct tp_peer *p)
{
	unsigned n = collect(p);
	assert_true(n_sent + n <= sizeof(sent) / sizeof(sent[0]));
	memcpy(sent + n_sent, segs, n * sizeof(segs[0]));
	n_sent += n;
}

static unsigned count_sent_at(const struct tp_seg *v, unsigned n, uint32_t seq)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++)
		k += v[i].th.seq == seq;
	return k;
}

static void test_established_rack_three_sacked_segments_mark_the_hole_lost_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	peer_ack_sack(&p, una, una, mss, b1_2, 1);
	peer_ack_sack(&p, una, una, mss, b1_3, 1);
	/* One or two segments above a hole may be reordering: RACK waits (§6.2 step 4). */
	tp_expect_none();
	assert_true(tcp_timer_armed(c, TCP_T_REO));
	peer_ack_sack(&p, una, una, mss, b1_4, 1);
	/* Three SACKed: no reordering window (DupThresh's equivalent); the hole goes now, one
	 * segment whatever the pipe (RFC 6675 §5 step 4.3 through PRR's first send). */
	expect_one_seg(&p, una, mss);
	assert_memory_equal(segs[0].data, pat, mss);
	assert_true(c->flags & TCPF_IN_RECOVERY);
	assert_int_equal(c->cc.ssthresh, 5 * mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RACK_LOST], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 1);
}

static void test_established_rack_reorder_timer_marks_a_lone_hole_lost_after_a_quarter_rtt(
	void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	peer_ack_sack(&p, una, una, mss, b1_2, 1);
	/* RACK.reo_wnd = min_RTT / 4 = 25 ms past the RTT of the segment SACKed (§6.3). */
	tp_advance(24);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, una, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RACK_REO_TIMEOUTS], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 0);
	assert_true(c->flags & TCPF_IN_RECOVERY);
}

static void test_established_rack_reordered_original_is_no_loss(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	peer_ack_sack(&p, una, una, mss, b1_2, 1);
	/* Segment 0 was only late: its ACK comes inside the reordering window. */
	tp_advance(10);
	peer_ack(&p, una + 2 * mss);
	tp_advance(100);
	unsigned n = collect(&p);
	assert_int_equal(count_sent_at(segs, n, una), 0);
	assert_false(c->flags & TCPF_IN_RECOVERY);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RACK_LOST], 0);
	assert_true(c->rack.reordering_seen);
}

static void test_established_rack_resends_a_lost_retransmission_without_an_rto(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 40, 10);
	n_sent = 0;
	/* Segment 0 is lost; 1-9 arrive: the hole is resent, then new data as PRR allows. */
	for (unsigned k = 2; k <= 10; k++) {
		unsigned blk[1][2] = {{1, k}};
		peer_ack_sack(&p, una, una, mss, (const unsigned (*)[2])blk, 1);
		collect_more(&p);
	}
	assert_int_equal(count_sent_at(sent, n_sent, una), 1);
	assert_true(seq_gt(c->snd_max, una + 10 * mss));
	/* The resend is lost too. A round trip later new data sent after it is SACKed: RACK
	 * knows the resend should have arrived by then (§6.2), and sends it again. */
	tp_advance(100);
	static const unsigned past[][2] = {{1, 11}};
	peer_ack_sack(&p, una, una, mss, past, 1);
	unsigned n = collect(&p);
	assert_int_equal(count_sent_at(segs, n, una), 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 0);
	assert_int_equal(c->retransmits, 2);
}

static void test_established_sack_recovery_resends_holes_never_sacked_data(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	/* Segments 0 and 2 are lost; 1 and 3-9 arrive. */
	static const unsigned acks[][2][2] = {
		{{1, 2}, {0, 0}}, {{3, 4}, {1, 2}}, {{3, 5}, {1, 2}}, {{3, 6}, {1, 2}},
		{{3, 7}, {1, 2}}, {{3, 8}, {1, 2}}, {{3, 9}, {1, 2}}, {{3, 10}, {1, 2}},
	};
	n_sent = 0;
	for (unsigned i = 0; i < 8; i++) {
		peer_ack_sack(&p, una, una, mss, acks[i], i == 0 ? 1 : 2);
		collect_more(&p);
	}
	for (unsigned i = 0; i < n_sent; i++) {
		uint32_t off = sent[i].th.seq - una;
		assert_true(off == 0 || off == 2 * mss || off >= 10 * mss);
	}
	assert_int_equal(count_sent_at(sent, n_sent, una), 1);
	assert_int_equal(count_sent_at(sent, n_sent, una + 2 * mss), 1);
	assert_int_equal(c->retransmits, 2);
	/* Both holes filled: the full ACK ends recovery. */
	peer_ack(&p, una + 10 * mss);
	assert_false(c->flags & TCPF_IN_RECOVERY);
	assert_true(c->cc.cwnd <= c->cc.ssthresh);
}

/* ============================ PRR (RFC 6937) ============================ */

static void test_established_prr_resends_as_segments_leave_the_network(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	/* Segments 0-3 lost, 4-9 arrive. ssthresh = 5 segments. */
	static const unsigned d1[][2] = {{4, 5}}, d2[][2] = {{4, 6}}, d3[][2] = {{4, 7}},
			      d4[][2] = {{4, 8}}, d5[][2] = {{4, 9}};
	peer_ack_sack(&p, una, una, mss, d1, 1);
	peer_ack_sack(&p, una, una, mss, d2, 1);
	tp_expect_none();
	peer_ack_sack(&p, una, una, mss, d3, 1);
	/* The pipe (7-9) is below ssthresh: slow-start reduction bound, at most one segment
	 * more than was delivered: two resends. */
	assert_int_equal(collect(&p), 2);
	assert_int_equal(segs[0].th.seq, una);
	assert_int_equal(segs[1].th.seq, una + mss);
	/* Each further SACKed segment lets one more go. */
	peer_ack_sack(&p, una, una, mss, d4, 1);
	expect_one_seg(&p, una + 2 * mss, mss);
	peer_ack_sack(&p, una, una, mss, d5, 1);
	expect_one_seg(&p, una + 3 * mss, mss);
	assert_int_equal(c->retransmits, 4);
}

static void test_established_prr_sends_new_data_when_the_pipe_allows(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 20, 10);
	/* Only segment 0 is lost. */
	n_sent = 0;
	for (unsigned k = 2; k <= 10; k++) {
		unsigned blk[1][2] = {{1, k}};
		peer_ack_sack(&p, una, una, mss, (const unsigned (*)[2])blk, 1);
		collect_more(&p);
	}
	/* RFC 6675 §5 NextSeg rule 2: with the hole resent and the pipe below cwnd, new data
	 * goes, whatever SND.NXT - SND.UNA says. */
	bool new_data = false;
	for (unsigned i = 0; i < n_sent; i++)
		new_data |= seq_ge(sent[i].th.seq, una + 10 * mss);
	assert_int_equal(count_sent_at(sent, n_sent, una), 1);
	assert_true(new_data);
	assert_true(c->sm.in_flight <= c->cc.cwnd);
	assert_true(c->sm.in_flight <= c->cc.ssthresh);
}

/* ============================ tail loss probe (RFC 8985 §7) ============================ */

static void test_established_tlp_probes_the_last_segment_after_two_srtt(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 3, 3);
	/* PTO = 2·SRTT + 2 ms = 202 ms, before the 300 ms RTO (§7.2). */
	tp_advance(201);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, una + 2 * mss, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TLP_PROBES], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 0);
	/* One probe per episode; the RTO follows a full RTO after it (§7.3). */
	tp_advance(299);
	tp_expect_none();
	tp_advance(1);
	expect_one_seg(&p, una, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RTO], 1);
}

static void test_established_tlp_one_segment_waits_for_a_delayed_ack_too(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_sack;
	cfg.hs_rtt_ms = 10;     /* RTO at its 200 ms floor */
	struct tcp_conn *c = open_conn(&p, &cfg);
	send_segs(&p, c, 1, 1);
	/* PTO = 2·SRTT + 2 ms + WCDelAckT (200 ms) > RTO: the RTO comes first (§7.2). */
	tp_advance(199);
	tp_expect_none();
	tp_advance(1);
	assert_int_equal(collect(&p), 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TLP_PROBES] + ts_s->events[STACK_EV_TCP_RTO], 1);
}

static void test_established_tlp_probe_that_repairs_a_tail_loss_reduces_the_window_once(
	void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 3, 3);
	tp_advance(202);
	expect_one_seg(&p, una + 2 * mss, mss);
	/* The last segment had been lost: the probe's ACK covers everything, and no D-SACK
	 * follows; the next ACK beyond the probe settles it (§7.4). */
	peer_ack(&p, una + 3 * mss);
	assert_true(c->rack.tlp_out);
	assert_int_equal(tcp_send(c, pat, mss), mss);
	expect_one_seg(&p, una + 3 * mss, mss);
	peer_ack(&p, una + 4 * mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TLP_RECOVERIES], 1);
	assert_false(c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS));
	assert_int_equal(c->cc.ssthresh, 2 * mss);
	assert_int_equal(c->cc.cwnd, c->cc.ssthresh);
	assert_false(c->rack.tlp_out);
}

static void test_established_tlp_probe_answered_by_a_dsack_keeps_the_window(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 3, 3);
	uint32_t cwnd = c->cc.cwnd;
	tp_advance(202);
	expect_one_seg(&p, una + 2 * mss, mss);
	/* Nothing was lost, only slow: the ACK of everything, then the probe's D-SACK. */
	peer_ack(&p, una + 3 * mss);
	static const unsigned dup2[][2] = {{2, 3}};
	peer_ack_sack(&p, una + 3 * mss, una, mss, dup2, 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_DSACKS_RX], 1);
	assert_false(c->rack.tlp_out);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TLP_RECOVERIES], 0);
	assert_true(c->cc.cwnd >= cwnd);
}

static void test_established_tlp_sends_new_data_as_its_probe_when_there_is_some(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 20, 10);
	tp_advance(202);
	/* §7.3: new data when the peer's window takes it (cwnd is full). */
	expect_one_seg(&p, una + 10 * mss, mss);
	assert_memory_equal(segs[0].data, pat + 10 * mss, mss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TLP_PROBES], 1);
	assert_int_equal(c->retransmits, 0);
}

/* ============================ after a timeout ============================ */

static void test_established_rto_resends_from_the_map_not_go_back_n(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 10, 10);
	tp_advance(202);
	expect_one_seg(&p, una + 9 * mss, mss); /* the probe */
	tp_advance(300);
	expect_one_seg(&p, una, mss);
	assert_true(c->flags & TCPF_LOSS);
	assert_int_equal(c->snd_nxt, c->snd_max);
	assert_int_equal(c->cc.cwnd, mss); /* RFC 5681 §3.1: the loss window */
	assert_int_equal(c->cc.ssthresh, 5 * mss);
	/* The probe had arrived: slow start resends 1 and 2, never the SACKed 9. */
	static const unsigned b9[][2] = {{9, 10}};
	peer_ack_sack(&p, una + mss, una, mss, b9, 1);
	assert_int_equal(collect(&p), 2);
	assert_int_equal(segs[0].th.seq, una + mss);
	assert_int_equal(segs[1].th.seq, una + 2 * mss);
	assert_memory_equal(segs[1].data, pat + 2 * mss, mss);
	assert_int_equal(c->cc.cwnd, 2 * mss);
	/* Everything up to 9 acknowledged: 9 was never sent again, RTO recovery ends. */
	n_sent = 0;
	for (unsigned k = 2; k <= 9; k++) {
		peer_ack_sack(&p, una + k * mss, una, mss, b9, 1);
		collect_more(&p);
	}
	assert_int_equal(count_sent_at(sent, n_sent, una + 9 * mss), 0);
	peer_ack(&p, una + 10 * mss);
	assert_false(c->flags & TCPF_LOSS);
}

static void test_established_repeated_rto_forgets_sacks_the_receiver_may_have_reneged(
	void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 2, 2);
	tp_advance(202);
	expect_one_seg(&p, una + mss, mss); /* the probe */
	static const unsigned b1[][2] = {{1, 2}};
	peer_ack_sack(&p, una, una, mss, b1, 1);
	expect_one_seg(&p, una, mss); /* RACK: 0 was sent long before the probe arrived */
	tp_advance(300);
	expect_one_seg(&p, una, mss); /* the first RTO resends 0 only: 1 is SACKed */
	assert_int_equal(c->sm.sacked, mss);
	tp_advance(600);
	assert_int_equal(collect(&p), 1);
	/* RFC 2018 §8: after a second timeout the SACK may have been reneged on. */
	assert_int_equal(c->sm.sacked, 0);
	assert_int_equal(tcp_sb_sacked_bytes(&c->sb), 0);
}

/* ============================ undo ============================ */

static void test_established_dsack_of_every_resend_undoes_the_reduction(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_then_wait_rtt(&p, c, 10, 10);
	uint32_t cwnd = c->cc.cwnd;
	peer_ack_sack(&p, una, una, mss, b1_2, 1);
	peer_ack_sack(&p, una, una, mss, b1_3, 1);
	peer_ack_sack(&p, una, una, mss, b1_4, 1);
	expect_one_seg(&p, una, mss);
	assert_int_equal(c->cc.ssthresh, 5 * mss);
	/* Segment 0 was only delayed: the peer got it twice and says so (RFC 2883). */
	static const unsigned dup0[][2] = {{0, 1}};
	peer_ack_sack(&p, una + 10 * mss, una, mss, dup0, 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_UNDOS], 1);
	assert_int_equal(c->cc.cwnd, cwnd);
	assert_int_equal(c->cc.ssthresh, cwnd - cwnd / 4);
}

static void test_established_eifel_timestamps_undo_a_spurious_rto(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_sack);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 2, 2);
	uint32_t cwnd = c->cc.cwnd;
	uint32_t original_ts = p.tsecr;
	tp_advance(202);
	collect(&p); /* the probe */
	tp_advance(300);
	expect_one_seg(&p, una, mss);
	assert_true(c->flags & TCPF_LOSS);
	/* The ACK echoes the originals' timestamp: they arrived, the timeout was spurious
	 * (RFC 3522 §3.2). */
	p.tsecr = original_ts;
	peer_ack_sack(&p, una + 2 * mss, una, mss, NULL, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_UNDOS], 1);
	assert_false(c->flags & TCPF_LOSS);
	assert_true(c->cc.cwnd >= cwnd);
}

static void test_established_dupacks_after_rto_start_no_fast_retransmit(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 10, 10);
	tp_advance(c->rto_ms);
	expect_one_seg(&p, una, mss);
	/* The originals of 1..3 arrive late at the peer, which answers with dupACKs: the loss
	 * they report is already being repaired (RFC 6582 §3.2 step 1, recover = SND.MAX). */
	for (unsigned i = 0; i < 4; i++)
		peer_ack(&p, una);
	tp_expect_none();
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 0);
	assert_true(ts_s->events[STACK_EV_TCP_DUPACKS_AFTER_RTO] >= 1);
	assert_false(c->flags & TCPF_IN_RECOVERY);
	assert_int_equal(c->cc.cwnd, mss);
}

static void test_established_loss_after_recover_fast_retransmits_again(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_newreno);
	uint32_t mss = c->snd_mss;
	uint32_t una = send_segs(&p, c, 40, 10);
	tp_advance(c->rto_ms);
	collect(&p);
	/* Everything of the old window is acknowledged, then the first new segment: SND.UNA
	 * passes recover, and a loss beyond it is a new congestion event. (DupACKs at exactly
	 * recover are not: RFC 6582 §4, they may come from go-back-N resends.) */
	peer_ack(&p, una + 10 * mss);
	assert_true(collect(&p) >= 2);
	peer_ack(&p, una + 11 * mss);
	assert_true(collect(&p) >= 2);
	uint32_t una2 = c->snd_una;
	assert_int_equal(una2, una + 11 * mss);
	uint32_t max = c->snd_max;
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una2);
	unsigned n = collect(&p);
	assert_true(n >= 1);
	assert_int_equal(segs[0].th.seq, una2);
	assert_int_equal(segs[0].len, mss);
	for (unsigned i = 1; i < n; i++)
		assert_true(seq_ge(segs[i].th.seq, max)); /* and new data the window allows */
	assert_int_equal(ts_s->events[STACK_EV_TCP_FAST_RETRANS], 1);
}

/* ================================ keepalive ================================ */

static const struct conn_cfg cfg_keep = {.sack = true, .ts = true, .hs_rtt_ms = 10,
					 .keepalive = true, .keep_idle_ms = 10000,
					 .keep_intvl_ms = 1000, .keep_cnt = 3};

static void test_established_keepalive_off_by_default(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	assert_false(o.keepalive);
	assert_true(o.keep_idle_ms >= 7200u * 1000); /* RFC 1122 §4.2.3.6: two hours */
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_keep;
	cfg.keepalive = false;
	struct tcp_conn *c = open_conn(&p, &cfg);
	c->opts.keep_idle_ms = 10000; /* short times change nothing while it is off */
	tp_advance(60000);
	tp_expect_none();
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_PROBES], 0);
}

static void test_established_keepalive_probe_after_idle_time(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	open_conn(&p, &cfg_keep);
	uint32_t snd_nxt = p.rcv_nxt;
	tp_advance(10000 - 1);
	tp_expect_none();
	tp_advance(1);
	struct tp_seg g;
	tp_expect_one(&g);
	/* RFC 1122 §4.2.3.6: SEG.SEQ = SND.NXT - 1, no data: the peer must answer. */
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	assert_int_equal(g.th.seq, snd_nxt - 1);
	assert_int_equal(g.len, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_PROBES], 1);
}

static void test_established_keepalive_unanswered_probes_reset_with_etimedout(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_keep);
	tp_advance(10000);
	assert_int_equal(collect(&p), 1);
	for (unsigned i = 1; i < 3; i++) {
		tp_advance(1000 - 1);
		tp_expect_none();
		tp_advance(1);
		assert_int_equal(collect(&p), 1);
		assert_int_equal(segs[0].len, 0);
	}
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	tp_advance(1000);
	assert_int_equal(collect(&p), 1);
	assert_true(segs[0].th.flags & TCP_FLAG_RST);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_PROBES], 3);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_TIMEOUTS], 1);
	tcp_close(c);
}

static void test_established_keepalive_answered_probe_keeps_connection(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_conn(&p, &cfg_keep);
	for (unsigned round = 0; round < 5; round++) {
		tp_advance(10000);
		assert_int_equal(collect(&p), 1);
		peer_ack(&p, p.rcv_nxt); /* the peer is alive */
		tp_expect_none();
	}
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_PROBES], 5);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_TIMEOUTS], 0);
}

static void test_established_keepalive_idle_counts_from_last_segment(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	open_conn(&p, &cfg_keep);
	tp_advance(6000);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "ping", 4, NULL);
	tp_advance(TCP_DELACK_MS);
	collect(&p);
	tp_advance(10000 - TCP_DELACK_MS - 1);
	tp_expect_none();
	tp_advance(1);
	assert_int_equal(collect(&p), 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_KEEPALIVE_PROBES], 1);
}

/* ======================= congestion control per socket ======================= */

/* Ten segments in flight, the first lost: ssthresh after the fast retransmit. */
static uint32_t ssthresh_after_fast_retransmit(const char *cc, uint32_t *mss)
{
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_newreno;
	cfg.cc = cc;
	struct tcp_conn *c = open_conn(&p, &cfg);
	*mss = c->snd_mss;
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_string_equal(ci.cc, cc);
	uint32_t una = send_segs(&p, c, 20, 10);
	for (unsigned i = 0; i < 3; i++)
		peer_ack(&p, una);
	expect_one_seg(&p, una, *mss);
	return c->cc.ssthresh;
}

static void test_established_cc_newreno_halves_the_flight_on_loss(void **state)
{
	(void)state;
	uint32_t mss;
	uint32_t ss = ssthresh_after_fast_retransmit("newreno", &mss);
	assert_int_equal(ss, 5 * mss);
}

static void test_established_cc_cubic_keeps_seven_tenths_of_the_flight(void **state)
{
	(void)state;
	uint32_t mss;
	/* RFC 9438 §4.6: β_cubic = 0.7. */
	uint32_t ss = ssthresh_after_fast_retransmit("cubic", &mss);
	assert_int_equal(ss, 10 * mss * 7 / 10);
}

static void test_established_cc_vegas_halves_the_flight_on_loss(void **state)
{
	(void)state;
	uint32_t mss;
	uint32_t ss = ssthresh_after_fast_retransmit("vegas", &mss);
	assert_int_equal(ss, 5 * mss);
}

static void test_established_cc_default_is_the_stacks(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct conn_cfg cfg = cfg_sack;
	cfg.cc = NULL;
	struct tcp_conn *c = open_conn(&p, &cfg);
	assert_ptr_equal(c->cc.ops, tcp_cc_default());
}

#define T(f) cmocka_unit_test_setup_teardown(f, rtx_setup, rtx_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_established_no_rtt_sample_first_rto_is_one_second),
		T(test_established_rto_resends_only_the_first_unacked_segment),
		T(test_established_rto_backs_off_exponentially),
		T(test_established_retry_limit_resets_with_etimedout),
		T(test_established_user_timeout_aborts_when_data_unacked_that_long),
		T(test_established_user_timeout_runs_from_the_last_progress),
		T(test_syn_received_handshake_rtt_is_the_first_sample),
		T(test_established_second_rtt_sample_smoothed_per_rfc6298),
		T(test_established_rto_floored_at_200ms),
		T(test_established_ack_of_retransmitted_segment_is_no_rtt_sample),
		T(test_syn_sent_rtt_measured_from_the_syn),
		T(test_established_third_dupack_fast_retransmits_newreno),
		T(test_established_recovery_dupacks_inflate_and_send_new_data_newreno),
		T(test_established_partial_ack_resends_next_hole_newreno),
		T(test_established_full_ack_ends_recovery_cwnd_at_ssthresh_newreno),
		T(test_established_fast_retransmit_whatever_the_iss),
		T(test_established_rack_three_sacked_segments_mark_the_hole_lost_at_once),
		T(test_established_rack_reorder_timer_marks_a_lone_hole_lost_after_a_quarter_rtt),
		T(test_established_rack_reordered_original_is_no_loss),
		T(test_established_rack_resends_a_lost_retransmission_without_an_rto),
		T(test_established_sack_recovery_resends_holes_never_sacked_data),
		T(test_established_prr_resends_as_segments_leave_the_network),
		T(test_established_prr_sends_new_data_when_the_pipe_allows),
		T(test_established_tlp_probes_the_last_segment_after_two_srtt),
		T(test_established_tlp_one_segment_waits_for_a_delayed_ack_too),
		T(test_established_tlp_probe_that_repairs_a_tail_loss_reduces_the_window_once),
		T(test_established_tlp_probe_answered_by_a_dsack_keeps_the_window),
		T(test_established_tlp_sends_new_data_as_its_probe_when_there_is_some),
		T(test_established_rto_resends_from_the_map_not_go_back_n),
		T(test_established_repeated_rto_forgets_sacks_the_receiver_may_have_reneged),
		T(test_established_dsack_of_every_resend_undoes_the_reduction),
		T(test_established_eifel_timestamps_undo_a_spurious_rto),
		T(test_established_dupacks_after_rto_start_no_fast_retransmit),
		T(test_established_loss_after_recover_fast_retransmits_again),
		T(test_established_keepalive_off_by_default),
		T(test_established_keepalive_probe_after_idle_time),
		T(test_established_keepalive_unanswered_probes_reset_with_etimedout),
		T(test_established_keepalive_answered_probe_keeps_connection),
		T(test_established_keepalive_idle_counts_from_last_segment),
		T(test_established_cc_newreno_halves_the_flight_on_loss),
		T(test_established_cc_cubic_keeps_seven_tenths_of_the_flight),
		T(test_established_cc_vegas_halves_the_flight_on_loss),
		T(test_established_cc_default_is_the_stacks),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
