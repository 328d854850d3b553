/* BBR v1 (draft-cardwell-iccrg-bbr-congestion-control) through its ops, as the TCP core will
 * drive them: on_rtt then cong_control with one rate sample per ACK, cc->state written before
 * each hook. Two drivers on a virtual microsecond clock:
 *   - a feed of hand-made samples (fd_*): a given bandwidth and RTT, one call per round trip,
 *     for exact checks of the filters, the state machine and recovery;
 *   - a packet-level simulation of one path (sim_*): a FIFO bottleneck of SIM_BW bytes/s and
 *     a propagation RTT of SIM_RTT, a sender limited by cwnd and paced at cc->pacing_rate, one
 *     ACK per segment and rate samples computed as draft-cheng-iccrg-delivery-rate-estimation
 *     says, for the dynamics: STARTUP's growth, DRAIN, the PROBE_BW cycle, PROBE_RTT and the
 *     steady state (cwnd about 2 BDP, pacing about the bottleneck rate).
 * Windows in bytes, bandwidth in bytes per second. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tcp/cc/tcp_cc.h"

#define MSS 1000u
#define SEG(n) ((uint32_t)(n) * MSS)
#define T0 1000000000ull	/* an arbitrary start of the virtual clock, µs */

/* BBR's constants as the draft gives them, in the implementation's 1/256 units. */
#define GAIN_UNIT 256u
#define HIGH_GAIN 739u		/* 2/ln 2 */
#define DRAIN_GAIN 88u

static uint64_t pacing_of(uint64_t bw, uint32_t gain)
{
	uint64_t r = bw * gain / GAIN_UNIT;

	return r / 100 * 99 + r % 100 * 99 / 100;
}

static uint64_t absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

/* a within pct percent of b */
static bool near(uint64_t a, uint64_t b, unsigned pct)
{
	return absdiff(a, b) * 100 <= b * pct;
}

/* ===================================================================================== */
/* Hand-made samples                                                                     */
/* ===================================================================================== */

struct feed {
	struct tcp_cc cc;
	uint64_t now;
	uint64_t delivered;	/* C.delivered */
	uint32_t in_flight;	/* what the next samples report in flight after the ACK;
				 * 0 = cwnd minus the ACK */
};

static void fd_init(struct feed *f)
{
	memset(f, 0, sizeof(*f));
	tcp_cc_init(&f->cc, &tcp_cc_bbr_ops, MSS);
	f->now = T0;
}

/* One ACK of `acked` bytes, measuring bw over one RTT of rtt_us, with prior_delivered =
 * round_base (a round ends at the first ACK whose prior_delivered reaches the delivered count
 * at the round's start). */
static void fd_ack(struct feed *f, uint32_t acked, uint64_t round_base, uint64_t bw,
		   uint32_t rtt_us, bool app_limited, uint32_t lost)
{
	struct tcp_rate_sample rs;
	uint32_t in_flight = f->in_flight;

	if (in_flight == 0)
		in_flight = f->cc.cwnd > acked ? f->cc.cwnd - acked : 0;
	f->delivered += acked;
	memset(&rs, 0, sizeof(rs));
	rs.now_us = f->now;
	rs.delivered = f->delivered;
	rs.prior_delivered = round_base;
	rs.interval_us = rtt_us;
	rs.delivered_bytes = (uint32_t)(bw * rtt_us / 1000000u);
	rs.rtt_us = rtt_us;
	rs.acked_sacked = acked;
	rs.newly_lost = lost;
	rs.prior_in_flight = in_flight + acked;
	rs.in_flight = in_flight;
	rs.is_app_limited = app_limited;
	f->cc.ops->on_rtt(&f->cc, rtt_us, f->now);
	f->cc.ops->cong_control(&f->cc, &rs);
}

/* n ACKs of one segment each, step_us apart, each measuring bw and an RTT of rtt_us, all
 * for data sent after the first of them was: a round ends at the first. */
static void fd_acks(struct feed *f, uint32_t n, uint32_t step_us, uint64_t bw,
		    uint32_t rtt_us, bool app_limited)
{
	uint64_t base = f->delivered;
	uint32_t i;

	for (i = 1; i <= n; i++) {
		f->now += step_us;
		fd_ack(f, MSS, base, bw, rtt_us, app_limited, 0);
	}
}

/* One round trip: n ACKs spread over rtt_us. */
static void fd_round_n(struct feed *f, uint32_t n, uint64_t bw, uint32_t rtt_us,
		       bool app_limited)
{
	fd_acks(f, n, n != 0 ? rtt_us / n : 0, bw, rtt_us, app_limited);
}

static void fd_round(struct feed *f, uint64_t bw, uint32_t rtt_us)
{
	fd_round_n(f, 10, bw, rtt_us, false);
}

/* Rounds at a flat bw until STARTUP ends (at most 40). */
static void fd_fill_pipe(struct feed *f, uint64_t bw, uint32_t rtt_us)
{
	int i;

	for (i = 0; i < 40 && !f->cc.u.bbr.full_bw_reached; i++)
		fd_round(f, bw, rtt_us);
	assert_true(f->cc.u.bbr.full_bw_reached);
}

/* A connection cruising in PROBE_BW at bw and rtt_us, with what is in flight about one BDP. */
static void fd_probe_bw(struct feed *f, uint64_t bw, uint32_t rtt_us)
{
	uint32_t bdp = (uint32_t)(bw * rtt_us / 1000000u);
	int i;

	fd_init(f);
	f->in_flight = bdp;
	fd_fill_pipe(f, bw, rtt_us);
	for (i = 0; i < 3 && f->cc.u.bbr.mode != TCP_CC_BBR_PROBE_BW; i++)
		fd_round(f, bw, rtt_us);
	assert_int_equal(f->cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	/* rounds enough to let cwnd reach its target */
	for (i = 0; i < 20; i++)
		fd_round_n(f, 40, bw, rtt_us, false);
	f->in_flight = 0;
}

/* ===================================================================================== */
/* A simulated path                                                                      */
/* ===================================================================================== */

#define SIM_BW 12500000ull	/* 100 Mbit/s */
#define SIM_RTT 40000u		/* µs */
#define SIM_SER_NS (MSS * 1000000000ull / SIM_BW)	/* 80 µs a segment at the bottleneck */
#define SIM_MIN_RTT (SIM_RTT + SIM_SER_NS / 1000)
#define SIM_BDP ((uint32_t)(SIM_BW * SIM_MIN_RTT / 1000000u))
#define SIM_RING 16384u

struct sim_pkt {
	uint64_t sent_us;
	uint64_t ack_us;
	uint64_t delivered;	/* C.delivered when sent */
	uint64_t delivered_us;	/* C.delivered_time when sent */
	uint64_t first_sent_us;	/* C.first_sent_time when sent */
};

struct sim {
	struct tcp_cc cc;
	uint64_t now;
	uint64_t delivered, delivered_us, first_sent_us;
	uint64_t link_free_ns;	/* the bottleneck is busy until then */
	uint64_t next_send_ns;	/* pacing: the next segment may leave then */
	uint32_t min_rtt;	/* the sender's own, for the rate sample's validity */
	uint32_t rtt_us;	/* propagation RTT, SIM_RTT unless a test changes it */
	uint32_t head, tail;	/* segments in flight: ring[head..tail) */
	uint32_t max_in_flight;	/* largest flight seen */
	uint32_t max_rtt;	/* largest RTT sample seen */
	struct sim_pkt ring[SIM_RING];
};

/* One at a time (static: a failed assertion longjmps past any free). */
static struct sim sim_storage;

static struct sim *sim_new(void)
{
	struct sim *s = &sim_storage;

	memset(s, 0, sizeof(*s));
	tcp_cc_init(&s->cc, &tcp_cc_bbr_ops, MSS);
	s->now = T0;
	s->min_rtt = UINT32_MAX;
	s->rtt_us = SIM_RTT;
	return s;
}

static uint32_t sim_in_flight(const struct sim *s)
{
	return (s->tail - s->head) * MSS;
}

static void sim_send(struct sim *s)
{
	struct sim_pkt *p = &s->ring[s->tail % SIM_RING];
	uint64_t now_ns = s->now * 1000, depart_ns;

	if (s->head == s->tail)
		s->first_sent_us = s->delivered_us = s->now;
	p->sent_us = s->now;
	p->delivered = s->delivered;
	p->delivered_us = s->delivered_us;
	p->first_sent_us = s->first_sent_us;
	depart_ns = (now_ns > s->link_free_ns ? now_ns : s->link_free_ns) + SIM_SER_NS;
	s->link_free_ns = depart_ns;
	p->ack_us = (depart_ns + 999) / 1000 + s->rtt_us;
	s->tail++;
	if (sim_in_flight(s) > s->max_in_flight)
		s->max_in_flight = sim_in_flight(s);
	if (s->cc.pacing_rate != 0) {
		uint64_t base = s->next_send_ns > now_ns ? s->next_send_ns : now_ns;

		s->next_send_ns = base + MSS * 1000000000ull / s->cc.pacing_rate;
	}
}

static void sim_ack(struct sim *s)
{
	struct sim_pkt *p = &s->ring[s->head % SIM_RING];
	struct tcp_rate_sample rs;
	uint32_t prior_in_flight = sim_in_flight(s);
	uint64_t send_elapsed, ack_elapsed, interval;
	uint32_t rtt = (uint32_t)(s->now - p->sent_us);

	s->head++;
	s->delivered += MSS;
	s->delivered_us = s->now;
	if (rtt < s->min_rtt)
		s->min_rtt = rtt;
	if (rtt > s->max_rtt)
		s->max_rtt = rtt;
	send_elapsed = p->sent_us - p->first_sent_us;
	ack_elapsed = s->delivered_us - p->delivered_us;
	s->first_sent_us = p->sent_us;
	interval = send_elapsed > ack_elapsed ? send_elapsed : ack_elapsed;

	memset(&rs, 0, sizeof(rs));
	rs.now_us = s->now;
	rs.delivered = s->delivered;
	rs.prior_delivered = p->delivered;
	rs.delivered_bytes = (uint32_t)(s->delivered - p->delivered);
	rs.interval_us = interval < s->min_rtt ? 0 : (uint32_t)interval;
	rs.rtt_us = rtt;
	rs.acked_sacked = MSS;
	rs.prior_in_flight = prior_in_flight;
	rs.in_flight = sim_in_flight(s);
	s->cc.state = TCP_CC_OPEN;
	s->cc.ops->on_rtt(&s->cc, rtt, s->now);
	s->cc.ops->cong_control(&s->cc, &rs);
	/* never below 4 segments outside recovery, never past the maximum */
	assert_true(s->cc.cwnd >= SEG(4) && s->cc.cwnd <= TCP_CC_CWND_MAX);
}

/* The next event: an ACK, or a segment leaving when cwnd and pacing allow. */
static void sim_step(struct sim *s)
{
	uint64_t t_ack = s->head != s->tail ? s->ring[s->head % SIM_RING].ack_us : UINT64_MAX;
	uint64_t t_send = UINT64_MAX;

	if (sim_in_flight(s) + MSS <= s->cc.cwnd && s->tail - s->head < SIM_RING) {
		uint64_t paced = (s->next_send_ns + 999) / 1000;

		t_send = paced > s->now ? paced : s->now;
	}
	assert_true(t_send != UINT64_MAX || t_ack != UINT64_MAX);
	if (t_send <= t_ack) {
		s->now = t_send;
		sim_send(s);
	} else {
		s->now = t_ack;
		sim_ack(s);
	}
}

static void sim_run_until(struct sim *s, uint64_t t)
{
	while (s->now < t)
		sim_step(s);
}

static void sim_run_until_mode(struct sim *s, uint8_t mode, uint64_t limit_us)
{
	uint64_t end = s->now + limit_us;

	while (s->cc.u.bbr.mode != mode && s->now < end)
		sim_step(s);
	assert_int_equal(s->cc.u.bbr.mode, mode);
}

/* ===================================================================================== */
/* Registry, start                                                                       */
/* ===================================================================================== */

static void test_bbr_registered_by_name_but_not_the_default(void **state)
{
	(void)state;
	assert_ptr_equal(tcp_cc_find("bbr"), &tcp_cc_bbr_ops);
	assert_string_equal(tcp_cc_bbr_ops.name, "bbr");
	assert_ptr_not_equal(tcp_cc_default(), &tcp_cc_bbr_ops);
	assert_non_null(tcp_cc_bbr_ops.cong_control);
	assert_non_null(tcp_cc_bbr_ops.on_ack);
	assert_non_null(tcp_cc_bbr_ops.on_rtt);
	assert_non_null(tcp_cc_bbr_ops.on_idle);
}

static void test_bbr_state_fits_in_a_small_union(void **state)
{
	(void)state;
	assert_true(sizeof(struct tcp_cc_bbr) <= 160);
}

static void test_bbr_init_starts_in_startup_paced_from_nominal_1ms(void **state)
{
	struct tcp_cc cc;
	uint32_t iw;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_bbr_ops, MSS);
	iw = tcp_cc_initial_window(MSS);
	assert_int_equal(cc.cwnd, iw);
	assert_int_equal(cc.ssthresh, TCP_CC_SSTHRESH_INF);
	assert_int_equal(cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
	assert_int_equal(cc.u.bbr.pacing_gain, HIGH_GAIN);
	assert_int_equal(cc.u.bbr.cwnd_gain, HIGH_GAIN);
	assert_int_equal(tcp_cc_bbr_max_bw(&cc), 0);
	/* IW per nominal 1 ms, times 2.885, less 1 % */
	assert_int_equal(cc.pacing_rate, pacing_of((uint64_t)iw * 1000, HIGH_GAIN));
}

static void test_bbr_first_rtt_sample_sets_pacing_from_cwnd_over_rtt(void **state)
{
	struct tcp_cc cc;
	uint32_t iw;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_bbr_ops, MSS);
	iw = cc.cwnd;
	cc.ops->on_rtt(&cc, 50000, T0);
	assert_int_equal(cc.min_rtt_us, 50000);
	assert_int_equal(cc.u.bbr.min_rtt_us, 50000);
	assert_int_equal(cc.pacing_rate, pacing_of((uint64_t)iw * 1000000 / 50000, HIGH_GAIN));
}

/* ===================================================================================== */
/* STARTUP and DRAIN                                                                     */
/* ===================================================================================== */

static void test_bbr_startup_doubles_per_round_until_bandwidth_plateaus(void **state)
{
	struct sim *s = sim_new();
	uint64_t bw_at_round[64] = { 0 };
	uint32_t r0 = s->cc.u.bbr.round_count, r, growing = 0;

	(void)state;
	while (s->cc.u.bbr.mode == TCP_CC_BBR_STARTUP && s->now < T0 + 5000000) {
		sim_step(s);
		r = s->cc.u.bbr.round_count - r0;
		if (r < 64)
			bw_at_round[r] = tcp_cc_bbr_max_bw(&s->cc);
	}
	assert_int_not_equal(s->cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
	r = s->cc.u.bbr.round_count - r0;
	assert_true(r < 30);
	/* while well below the bottleneck, each round delivers about twice the last (the
	 * sending rate grows by 2.885 per round, the ACK clock by 2) */
	for (uint32_t i = 2; i + 1 < r; i++) {
		if (bw_at_round[i] == 0 || bw_at_round[i + 1] > SIM_BW / 2)
			continue;
		assert_true(bw_at_round[i + 1] * 10 >= bw_at_round[i] * 17);
		assert_true(bw_at_round[i + 1] <= bw_at_round[i] * 3);
		growing++;
	}
	assert_true(growing >= 3);
	/* and it ended at the bottleneck's rate, the estimate flat for the last rounds */
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 3));
	assert_true(s->cc.u.bbr.full_bw_reached);
}

static void test_bbr_three_flat_rounds_end_startup(void **state)
{
	struct feed f;
	int i;

	(void)state;
	fd_init(&f);
	/* growing by 2x a round: stays in STARTUP */
	for (i = 0; i < 6; i++) {
		fd_round(&f, 1000000ull << i, 20000);
		assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
	}
	/* growth under 25 % (here +20 %) counts as flat */
	fd_round(&f, (1000000ull << 5) * 6 / 5, 20000);
	fd_round(&f, (1000000ull << 5) * 6 / 5, 20000);
	assert_false(f.cc.u.bbr.full_bw_reached);
	assert_int_equal(f.cc.u.bbr.full_bw_cnt, 2);
	fd_round(&f, (1000000ull << 5) * 6 / 5, 20000);
	assert_true(f.cc.u.bbr.full_bw_reached);
	assert_int_not_equal(f.cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
}

static void test_bbr_app_limited_rounds_do_not_count_as_flat(void **state)
{
	struct feed f;
	int i;

	(void)state;
	fd_init(&f);
	fd_round(&f, 5000000, 20000);
	fd_round(&f, 10000000, 20000);
	for (i = 0; i < 10; i++)
		fd_round_n(&f, 10, 10000000, 20000, true);
	assert_false(f.cc.u.bbr.full_bw_reached);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
}

static void test_bbr_drain_then_probe_bw_once_in_flight_is_bdp(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;	/* 10 MB/s */
	uint32_t rtt = 20000, bdp = 200000;

	(void)state;
	fd_init(&f);
	f.in_flight = 3 * bdp;		/* STARTUP queued two BDPs */
	fd_fill_pipe(&f, bw, rtt);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_DRAIN);
	assert_int_equal(f.cc.u.bbr.pacing_gain, DRAIN_GAIN);
	assert_int_equal(f.cc.u.bbr.cwnd_gain, HIGH_GAIN);
	assert_int_equal(f.cc.pacing_rate, pacing_of(bw, DRAIN_GAIN));
	/* ssthresh now says "out of slow start": the BDP plus the allowance */
	assert_int_equal(f.cc.ssthresh, bdp + SEG(3));
	fd_round(&f, bw, rtt);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_DRAIN);
	f.in_flight = bdp + SEG(3) + 1;
	fd_round(&f, bw, rtt);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_DRAIN);
	f.in_flight = bdp + SEG(3);
	fd_round_n(&f, 1, bw, rtt, false);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_int_equal(f.cc.u.bbr.cwnd_gain, 512);
}

static void test_bbr_simulated_startup_drains_the_queue_to_bdp(void **state)
{
	struct sim *s = sim_new();
	uint32_t peak;

	(void)state;
	sim_run_until_mode(s, TCP_CC_BBR_DRAIN, 5000000);
	peak = sim_in_flight(s);
	assert_true(peak > SIM_BDP * 3 / 2);	/* STARTUP did overshoot */
	sim_run_until_mode(s, TCP_CC_BBR_PROBE_BW, 2000000);
	/* left DRAIN with no more than a BDP (plus the allowance) in flight */
	assert_true(sim_in_flight(s) <= SIM_BDP + SEG(3) + SEG(1));
	assert_true(near(s->cc.u.bbr.min_rtt_us, SIM_MIN_RTT, 1));
}

/* ===================================================================================== */
/* PROBE_BW and the steady state                                                         */
/* ===================================================================================== */

static void test_bbr_steady_state_cwnd_twice_bdp_pacing_at_bottleneck(void **state)
{
	struct sim *s = sim_new();
	uint64_t start_delivered, start, pace_sum = 0, pace_n = 0;

	(void)state;
	sim_run_until(s, T0 + 3000000);
	assert_int_equal(s->cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	start_delivered = s->delivered;
	start = s->now;
	s->max_in_flight = 0;
	s->max_rtt = 0;
	while (s->now < T0 + 6000000) {
		sim_step(s);
		pace_sum += s->cc.pacing_rate;
		pace_n++;
	}
	/* cwnd = 2 BDP + 3 segments */
	assert_true(near(s->cc.cwnd, 2 * SIM_BDP + SEG(3), 5));
	/* the estimate is the bottleneck, the average pacing rate about it, and the path
	 * is kept busy */
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 2));
	assert_true(near(pace_sum / pace_n, SIM_BW, 6));
	assert_true(near((s->delivered - start_delivered) * 1000000 / (s->now - start), SIM_BW, 3));
	/* and the queue stays small: only the 1.25 phase queues, a quarter of a BDP, so
	 * the RTT stays within 30 % of the base RTT and the flight within 1.3 BDP */
	assert_true(s->max_rtt * 10 <= SIM_MIN_RTT * 13);
	assert_true(s->max_in_flight * 10 <= SIM_BDP * 13);
}

static void test_bbr_probe_bw_cycles_gains_each_min_rtt(void **state)
{
	struct sim *s = sim_new();
	uint8_t idx;
	uint64_t stamp;
	int changes = 0, saw_up = 0, saw_down = 0;

	(void)state;
	sim_run_until(s, T0 + 2000000);
	assert_int_equal(s->cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	idx = s->cc.u.bbr.cycle_idx;
	stamp = s->now;
	while (changes < 24) {
		sim_step(s);
		assert_int_equal(s->cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
		if (s->cc.u.bbr.cycle_idx == idx)
			continue;
		/* phases advance one at a time, in order */
		assert_int_equal(s->cc.u.bbr.cycle_idx, (idx + 1) % 8);
		/* a phase lasts a min RTT; 1.25 may last longer, until its data is out */
		if (changes > 0 && idx >= 2) {
			assert_true(s->now - stamp > s->cc.u.bbr.min_rtt_us);
			assert_true(s->now - stamp <= s->cc.u.bbr.min_rtt_us + 2000);
		}
		if (changes > 0 && idx == 0)
			assert_true(s->now - stamp > s->cc.u.bbr.min_rtt_us);
		idx = s->cc.u.bbr.cycle_idx;
		stamp = s->now;
		changes++;
		switch (idx) {
		case 0:
			assert_int_equal(s->cc.u.bbr.pacing_gain, 320);
			assert_int_equal(s->cc.pacing_rate,
					 pacing_of(tcp_cc_bbr_max_bw(&s->cc), 320));
			saw_up++;
			break;
		case 1:
			assert_int_equal(s->cc.u.bbr.pacing_gain, 192);
			assert_int_equal(s->cc.pacing_rate,
					 pacing_of(tcp_cc_bbr_max_bw(&s->cc), 192));
			saw_down++;
			break;
		default:
			assert_int_equal(s->cc.u.bbr.pacing_gain, GAIN_UNIT);
			break;
		}
		assert_int_equal(s->cc.u.bbr.cwnd_gain, 512);
	}
	assert_true(saw_up >= 2 && saw_down >= 2);
}

static void test_bbr_probe_bw_drain_phase_ends_early_when_queue_is_gone(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	uint32_t rtt = 20000, bdp = 200000;

	(void)state;
	fd_probe_bw(&f, bw, rtt);
	/* put it in the probing phase, with the probe's extra data in flight */
	f.cc.u.bbr.cycle_idx = 0;
	f.cc.u.bbr.cycle_stamp_us = f.now;
	f.in_flight = bdp * 5 / 4 + SEG(4);
	fd_acks(&f, 10, 1000, bw, rtt, false);	/* half an RTT: stays */
	assert_int_equal(f.cc.u.bbr.cycle_idx, 0);
	fd_acks(&f, 10, 1000, bw, rtt, false);	/* a whole one, not more: stays */
	assert_int_equal(f.cc.u.bbr.cycle_idx, 0);
	fd_acks(&f, 1, 1, bw, rtt, false);
	assert_int_equal(f.cc.u.bbr.cycle_idx, 1);
	/* 0.75: once no more than a BDP is in flight, on at once */
	f.in_flight = bdp + SEG(3) - MSS;
	fd_acks(&f, 1, 100, bw, rtt, false);
	assert_int_equal(f.cc.u.bbr.cycle_idx, 2);
}

static void test_bbr_probe_bw_probing_phase_waits_for_its_data_in_flight(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	uint32_t rtt = 20000, bdp = 200000;

	(void)state;
	fd_probe_bw(&f, bw, rtt);
	f.cc.u.bbr.cycle_idx = 0;
	f.cc.u.bbr.cycle_stamp_us = f.now;
	f.in_flight = bdp;	/* the extra quarter never made it out */
	fd_round(&f, bw, rtt);
	fd_round(&f, bw, rtt);
	assert_int_equal(f.cc.u.bbr.cycle_idx, 0);
	/* a loss ends the probe */
	fd_ack(&f, MSS, f.delivered, bw, rtt, false, MSS);
	assert_int_equal(f.cc.u.bbr.cycle_idx, 1);
}

static void test_bbr_probe_bw_start_phase_is_random_but_never_the_drain_phase(void **state)
{
	unsigned seen[8] = { 0 };
	int i;

	(void)state;
	for (i = 0; i < 200; i++) {
		struct feed f;

		fd_init(&f);
		f.now = T0 + (uint64_t)i * 7919;	/* connections starting at other times */
		f.in_flight = 100000;
		fd_fill_pipe(&f, 10000000, 10000);
		while (f.cc.u.bbr.mode != TCP_CC_BBR_PROBE_BW)
			fd_round_n(&f, 1, 10000000, 10000, false);
		seen[f.cc.u.bbr.cycle_idx]++;
	}
	assert_int_equal(seen[1], 0);
	for (i = 0; i < 8; i++)
		if (i != 1)
			assert_true(seen[i] > 5);
}

static void test_bbr_probe_bw_start_phase_is_deterministic(void **state)
{
	struct feed a, b;

	(void)state;
	fd_init(&a);
	fd_init(&b);
	a.in_flight = b.in_flight = 100000;
	fd_fill_pipe(&a, 10000000, 10000);
	fd_fill_pipe(&b, 10000000, 10000);
	fd_round(&a, 10000000, 10000);
	fd_round(&b, 10000000, 10000);
	assert_int_equal(a.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_int_equal(a.cc.u.bbr.cycle_idx, b.cc.u.bbr.cycle_idx);
	assert_int_equal(a.cc.pacing_rate, b.cc.pacing_rate);
}

/* ===================================================================================== */
/* PROBE_RTT                                                                             */
/* ===================================================================================== */

static void test_bbr_probe_rtt_after_10s_without_new_min_rtt_holds_4_segments_for_200ms(
	void **state)
{
	struct sim *s = sim_new();
	uint64_t min_stamp, entered, armed = 0, left;
	uint32_t prior;

	(void)state;
	sim_run_until(s, T0 + 1000000);
	min_stamp = s->cc.u.bbr.min_rtt_stamp_us;
	assert_true(s->cc.u.bbr.mode == TCP_CC_BBR_PROBE_BW);
	/* the path's RTT never drops below what was seen: 10 s on, PROBE_RTT */
	while (s->cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT) {
		sim_step(s);
		assert_true(s->now <= min_stamp + 10000000 + 100000);
	}
	entered = s->now;
	assert_true(entered > min_stamp + 10000000);
	assert_int_equal(s->cc.cwnd, SEG(4));
	prior = s->cc.u.bbr.prior_cwnd;
	assert_true(near(prior, 2 * SIM_BDP + SEG(3), 10));
	assert_int_equal(s->cc.u.bbr.pacing_gain, GAIN_UNIT);
	while (s->cc.u.bbr.mode == TCP_CC_BBR_PROBE_RTT) {
		sim_step(s);
		if (s->cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT)
			break;
		assert_int_equal(s->cc.cwnd, SEG(4));
		if (armed == 0 && s->cc.u.bbr.probe_rtt_armed) {
			armed = s->now;
			assert_true(sim_in_flight(s) <= SEG(4));
		}
		assert_true(s->now < entered + 1000000);
	}
	left = s->now;
	assert_true(armed != 0);
	/* 200 ms at 4 segments once the queue had drained, and at least a round */
	assert_true(left - armed >= 200000);
	assert_true(left - armed <= 200000 + 2 * SIM_MIN_RTT);
	/* back to cruising with the window from before (capped by the model's target, which
	 * moved a little with the bandwidth filter), and 10 s until the next probe */
	assert_int_equal(s->cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_true(near(s->cc.cwnd, prior, 2));
	assert_true(s->cc.u.bbr.min_rtt_stamp_us >= left - 1);
	assert_true(near(s->cc.u.bbr.min_rtt_us, SIM_MIN_RTT, 1));
	/* the window is back at 2 BDP and the rate at the bottleneck soon after */
	sim_run_until(s, s->now + 500000);
	assert_true(near(s->cc.cwnd, 2 * SIM_BDP + SEG(3), 5));
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 2));
}

static void test_bbr_probe_rtt_of_many_short_rounds_keeps_the_bw_estimate(void **state)
{
	struct sim *s = sim_new();
	uint64_t bdp = SIM_BW * (2000 + SIM_SER_NS / 1000) / 1000000;

	(void)state;
	s->rtt_us = 2000;	/* 200 ms of PROBE_RTT is 100 rounds */
	sim_run_until(s, T0 + 1000000);
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 2));
	sim_run_until_mode(s, TCP_CC_BBR_PROBE_RTT, 10000000);
	sim_run_until_mode(s, TCP_CC_BBR_PROBE_BW, 1000000);
	/* 4 segments a round for 100 rounds did not become the estimate */
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 2));
	sim_run_until(s, s->now + 100000);
	assert_true(near(tcp_cc_bbr_max_bw(&s->cc), SIM_BW, 2));
	assert_true(near(s->cc.cwnd, 2 * bdp + SEG(3), 8));
}

static void test_bbr_new_min_rtt_postpones_probe_rtt(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	int i;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	/* 9 s at 20 ms, then a 19 ms sample: another 10 s without PROBE_RTT */
	while (f.now < f.cc.u.bbr.min_rtt_stamp_us + 9000000)
		fd_round(&f, bw, 20000);
	fd_round(&f, bw, 19000);
	assert_int_equal(f.cc.u.bbr.min_rtt_us, 19000);
	for (i = 0; i < 400; i++) {	/* 8 s */
		fd_round(&f, bw, 20000);
		assert_int_not_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	}
	for (i = 0; i < 150 && f.cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT; i++)
		fd_round(&f, bw, 20000);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	/* the expired minimum was replaced by the current RTT */
	assert_int_equal(f.cc.u.bbr.min_rtt_us, 20000);
}

static void test_bbr_probe_rtt_needs_a_round_as_well_as_200ms(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;

	(void)state;
	fd_probe_bw(&f, bw, 300000);	/* an RTT longer than 200 ms */
	while (f.cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT)
		fd_round_n(&f, 2, bw, 300000, false);
	f.in_flight = SEG(4);
	fd_ack(&f, MSS, f.delivered - MSS, bw, 300000, false, 0);	/* arms the timer */
	assert_true(f.cc.u.bbr.probe_rtt_armed);
	/* 250 ms on, still inside the round that began at arming */
	f.now += 250000;
	fd_ack(&f, MSS, f.delivered - 2 * MSS, bw, 300000, false, 0);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	/* the round ends: done */
	f.now += 60000;
	fd_ack(&f, MSS, f.delivered, bw, 300000, false, 0);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
}

static void test_bbr_probe_rtt_returns_to_startup_if_pipe_never_full(void **state)
{
	struct feed f;
	uint32_t cwnd;
	int i;

	(void)state;
	fd_init(&f);
	/* an application that never fills the pipe: STARTUP for 10 s */
	for (i = 0; i < 600 && f.cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT; i++)
		fd_round_n(&f, 10, 1000000, 20000, true);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	assert_false(f.cc.u.bbr.full_bw_reached);
	cwnd = f.cc.u.bbr.prior_cwnd;
	for (i = 0; i < 30 && f.cc.u.bbr.mode == TCP_CC_BBR_PROBE_RTT; i++)
		fd_round_n(&f, 10, 1000000, 20000, true);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
	assert_true(f.cc.cwnd >= cwnd);
	assert_int_equal(f.cc.u.bbr.pacing_gain, HIGH_GAIN);
}

static void test_bbr_idle_ends_a_probe_rtt_whose_time_has_passed(void **state)
{
	struct feed f;
	uint32_t cwnd;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	cwnd = f.cc.cwnd;
	f.now += 11000000;
	f.in_flight = SEG(3);
	fd_acks(&f, 1, 0, 10000000, 20000, false);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	assert_true(f.cc.u.bbr.probe_rtt_armed);
	assert_int_equal(f.cc.cwnd, SEG(4));
	/* idle for 100 ms: not yet */
	f.cc.ops->on_idle(&f.cc, 200, 100);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	/* idle for 300 ms: the 200 ms are over, back to cruising at the old window */
	f.cc.ops->on_idle(&f.cc, 200, 300);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_int_equal(f.cc.cwnd, cwnd);
}

/* ===================================================================================== */
/* Bandwidth filter                                                                      */
/* ===================================================================================== */

static void test_bbr_app_limited_samples_do_not_lower_max_bw(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	int i;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), bw);
	/* 30 rounds of an application sending a tenth of that */
	for (i = 0; i < 30; i++)
		fd_round_n(&f, 10, bw / 10, 20000, true);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), bw);
	assert_true(f.cc.pacing_rate >= pacing_of(bw, 192));
}

static void test_bbr_app_limited_sample_above_max_raises_it(void **state)
{
	struct feed f;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	fd_round_n(&f, 1, 12000000, 20000, true);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 12000000);
}

static void test_bbr_max_bw_ages_out_after_10_rounds(void **state)
{
	struct feed f;
	int i;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	/* the path slows to 4 MB/s: the old maximum holds for the window, then goes */
	for (i = 0; i < 8; i++) {
		fd_round(&f, 4000000, 20000);
		assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 10000000);
	}
	for (i = 0; i < 3; i++)
		fd_round(&f, 4000000, 20000);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 4000000);
}

static void test_bbr_max_bw_falls_back_to_the_next_best_in_the_window(void **state)
{
	struct feed f;
	int i;

	(void)state;
	fd_init(&f);
	fd_round(&f, 9000000, 20000);
	for (i = 0; i < 4; i++)
		fd_round(&f, 5000000, 20000);
	fd_round(&f, 7000000, 20000);	/* a second best, 5 rounds younger */
	for (i = 0; i < 3; i++)
		fd_round(&f, 3000000, 20000);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 9000000);
	for (i = 0; i < 3; i++)
		fd_round(&f, 3000000, 20000);
	/* 9 MB/s has aged out, 7 MB/s is still in the window */
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 7000000);
}

static void test_bbr_samples_without_interval_do_not_touch_max_bw(void **state)
{
	struct feed f;

	(void)state;
	fd_init(&f);
	fd_round(&f, 5000000, 20000);
	fd_round_n(&f, 5, 0, 0, false);		/* interval 0: no rate sample */
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 5000000);
}

/* ===================================================================================== */
/* Pacing                                                                                */
/* ===================================================================================== */

static void test_bbr_pacing_rate_follows_bw_times_gain(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	uint64_t before;

	(void)state;
	fd_init(&f);
	f.in_flight = 300000;
	fd_round(&f, 2000000, 20000);
	assert_int_equal(f.cc.pacing_rate, pacing_of(2000000, HIGH_GAIN));
	/* STARTUP: up with the estimate... */
	fd_round(&f, 4000000, 20000);
	assert_int_equal(f.cc.pacing_rate, pacing_of(4000000, HIGH_GAIN));
	/* ...never down before the pipe is full */
	before = f.cc.pacing_rate;
	f.cc.u.bbr.bw[0] = f.cc.u.bbr.bw[1] = f.cc.u.bbr.bw[2] = 1000000;
	fd_round_n(&f, 1, 1000000, 20000, false);
	assert_int_equal(f.cc.pacing_rate, before);
	fd_fill_pipe(&f, bw, 20000);
	assert_int_equal(f.cc.pacing_rate, pacing_of(bw, DRAIN_GAIN));
	f.in_flight = 100000;
	fd_round_n(&f, 1, bw, 20000, false);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_int_equal(f.cc.pacing_rate, pacing_of(bw, f.cc.u.bbr.pacing_gain));
	/* 1 % below the estimate when cruising */
	f.cc.u.bbr.cycle_idx = 3;
	f.cc.u.bbr.cycle_stamp_us = f.now;
	fd_acks(&f, 1, 100, bw, 20000, false);
	assert_int_equal(f.cc.pacing_rate, 9900000);
}

static void test_bbr_idle_restart_in_probe_bw_paces_at_bw(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	f.cc.u.bbr.cycle_idx = 0;
	f.cc.u.bbr.cycle_stamp_us = f.now;
	fd_acks(&f, 1, 100, bw, 20000, false);
	assert_int_equal(f.cc.pacing_rate, pacing_of(bw, 320));
	f.cc.ops->on_idle(&f.cc, 200, 5000);
	assert_int_equal(f.cc.pacing_rate, pacing_of(bw, GAIN_UNIT));
	assert_true(f.cc.u.bbr.idle_restart);
	/* no cwnd cut on restart: pacing spreads the first flight */
	assert_true(f.cc.cwnd > tcp_cc_initial_window(MSS));
	f.now += 5000000;
	fd_round_n(&f, 1, bw, 20000, false);
	assert_false(f.cc.u.bbr.idle_restart);
}

static void test_bbr_idle_restart_does_not_start_probe_rtt(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	f.cc.ops->on_idle(&f.cc, 200, 11000);
	f.now += 11000000;		/* idle past the RTprop window */
	/* an ACK that delivered nothing (a pure window update, say) keeps the flag */
	{
		struct tcp_rate_sample rs = { .now_us = f.now, .delivered = f.delivered,
					      .in_flight = SEG(10), .prior_in_flight = SEG(10) };

		f.cc.ops->cong_control(&f.cc, &rs);
	}
	assert_int_not_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
}

/* ===================================================================================== */
/* Recovery, RTO                                                                         */
/* ===================================================================================== */

static void test_bbr_ssthresh_saves_cwnd_and_leaves_ssthresh(void **state)
{
	struct feed f;
	uint32_t cwnd, ss;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	cwnd = f.cc.cwnd;
	ss = f.cc.ssthresh;
	f.cc.state = TCP_CC_RECOVERY;
	assert_int_equal(f.cc.ops->ssthresh(&f.cc, cwnd, f.now), ss);
	assert_int_equal(f.cc.cwnd, cwnd);
	assert_int_equal(f.cc.u.bbr.prior_cwnd, cwnd);
}

static void test_bbr_recovery_conserves_packets_and_restores_prior_cwnd(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	uint32_t cwnd, bdp = 200000, i;
	uint64_t base;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	cwnd = f.cc.cwnd;
	assert_true(near(cwnd, 2 * bdp + SEG(3), 2));
	/* the core finds a loss: ssthresh, then samples in RECOVERY */
	f.cc.state = TCP_CC_RECOVERY;
	f.cc.ssthresh = f.cc.ops->ssthresh(&f.cc, cwnd, f.now);
	f.in_flight = SEG(150);
	base = f.delivered;
	fd_ack(&f, MSS, base, bw, 20000, false, SEG(3));
	/* entering: cwnd = in flight + what this ACK delivered */
	assert_int_equal(f.cc.cwnd, SEG(151));
	assert_true(f.cc.u.bbr.packet_conservation);
	/* for the rest of the round: never below in flight + acked, no growth past it */
	for (i = 0; i < 20; i++) {
		f.in_flight = SEG(150 - i);
		f.now += 100;
		fd_ack(&f, MSS, base, bw, 20000, false, 0);
		assert_true(f.cc.cwnd >= f.in_flight + MSS);
		assert_true(f.cc.cwnd <= SEG(151));
	}
	f.in_flight = SEG(170);
	fd_ack(&f, 2 * MSS, base, bw, 20000, false, 0);
	assert_int_equal(f.cc.cwnd, SEG(172));
	/* a round later conservation stops: cwnd grows by what is acked, towards the
	 * target */
	f.in_flight = SEG(100);
	fd_ack(&f, MSS, f.delivered, bw, 20000, false, 0);
	assert_false(f.cc.u.bbr.packet_conservation);
	assert_int_equal(f.cc.cwnd, SEG(173));
	/* recovery ends: at least the window from before */
	f.cc.state = TCP_CC_OPEN;
	f.cc.ops->on_recovery_exit(&f.cc, SEG(100), f.now);
	assert_int_equal(f.cc.cwnd, cwnd);
	/* then growth by what is acked, within the target (which the ACK-aggregation
	 * allowance may lift above the window from before) */
	fd_ack(&f, MSS, f.delivered, bw, 20000, false, 0);
	assert_true(f.cc.cwnd >= cwnd && f.cc.cwnd <= cwnd + MSS);
	/* ssthresh untouched throughout: what DRAIN set */
	assert_int_equal(f.cc.ssthresh, bdp + SEG(3));
}

static void test_bbr_recovery_end_seen_in_state_restores_without_the_hook(void **state)
{
	struct feed f;
	uint32_t cwnd;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	cwnd = f.cc.cwnd;
	f.cc.state = TCP_CC_RECOVERY;
	f.cc.ops->ssthresh(&f.cc, cwnd, f.now);
	f.in_flight = SEG(20);
	fd_ack(&f, MSS, f.delivered, 10000000, 20000, false, 0);
	assert_int_equal(f.cc.cwnd, SEG(21));
	f.cc.state = TCP_CC_OPEN;
	fd_ack(&f, MSS, f.delivered, 10000000, 20000, false, 0);
	assert_true(f.cc.cwnd >= cwnd && f.cc.cwnd <= cwnd + MSS);
}

static void test_bbr_ack_aggregation_lifts_the_cwnd_target_by_the_burst(void **state)
{
	struct feed f;
	uint32_t before, i;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);	/* 10 MB/s, 20 ms: BDP 200 KB */
	before = f.cc.cwnd;
	/* The receiver's ACKs now come in bursts: 40 KB at once after a 4 ms gap (10 MB/s
	 * would have delivered 40 KB over those 4 ms: the burst is 40 KB early), repeated. */
	for (i = 0; i < 40; i++) {
		f.now += 4000;
		fd_ack(&f, 40000, f.delivered, 10000000, 20000, false, 0);
		for (unsigned k = 0; k < 4; k++)
			fd_ack(&f, 10000, f.delivered, 10000000, 20000, false, 0);
	}
	assert_true(f.cc.u.bbr.extra_acked[0] != 0 || f.cc.u.bbr.extra_acked[1] != 0);
	assert_true(f.cc.cwnd > before);
	/* never more than 100 ms of bandwidth on top of the target */
	assert_true(f.cc.cwnd <= before + 10000000u / 10u + MSS);
}

static void test_bbr_losses_in_a_sample_take_bytes_off_cwnd(void **state)
{
	struct feed f;
	uint32_t cwnd;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	f.cc.state = TCP_CC_RECOVERY;
	f.cc.ops->ssthresh(&f.cc, f.cc.cwnd, f.now);
	f.in_flight = SEG(100);
	fd_ack(&f, MSS, f.delivered - MSS, 10000000, 20000, false, 0);
	cwnd = f.cc.cwnd;
	/* in the same round, 10 segments marked lost: out of cwnd, but in flight + acked
	 * still kept */
	f.in_flight = SEG(50);
	fd_ack(&f, MSS, f.delivered - 2 * MSS, 10000000, 20000, false, SEG(10));
	assert_int_equal(f.cc.cwnd, cwnd - SEG(10));
	f.in_flight = SEG(200);
	fd_ack(&f, MSS, f.delivered - 2 * MSS, 10000000, 20000, false, SEG(500));
	assert_int_equal(f.cc.cwnd, SEG(201));
}

static void test_bbr_ecn_reaction_keeps_the_window(void **state)
{
	struct feed f;
	uint32_t cwnd, ss;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	cwnd = f.cc.cwnd;
	ss = f.cc.ssthresh;
	/* ECN-Echo: ssthresh, then the CWR period (state stays OPEN), then its end */
	f.cc.ssthresh = f.cc.ops->ssthresh(&f.cc, cwnd, f.now);
	assert_int_equal(f.cc.ssthresh, ss);
	fd_round(&f, 10000000, 20000);
	f.cc.ops->on_recovery_exit(&f.cc, cwnd, f.now);
	assert_int_equal(f.cc.cwnd, cwnd);
	fd_round(&f, 10000000, 20000);
	assert_int_equal(f.cc.cwnd, cwnd);
}

static void test_bbr_rto_then_ack_grows_back(void **state)
{
	struct feed f;
	uint64_t bw = 10000000;
	uint32_t cwnd, last, i;

	(void)state;
	fd_probe_bw(&f, bw, 20000);
	cwnd = f.cc.cwnd;
	f.cc.state = TCP_CC_LOSS;
	f.cc.ops->on_rto(&f.cc, cwnd, f.now);
	assert_int_equal(f.cc.cwnd, MSS);		/* the loss window */
	assert_int_equal(f.cc.u.bbr.prior_cwnd, cwnd);
	/* the first ACK after it: at least 4 segments, then up by what each ACK delivers */
	f.now += 300000;
	f.in_flight = 1;	/* almost nothing in flight */
	fd_ack(&f, MSS, f.delivered, bw, 20000, false, 0);
	assert_int_equal(f.cc.cwnd, SEG(4));
	last = f.cc.cwnd;
	for (i = 0; i < 20; i++) {
		f.now += 1000;
		fd_ack(&f, MSS, f.delivered - MSS, bw, 20000, false, 0);
		assert_int_equal(f.cc.cwnd, last + MSS);
		last = f.cc.cwnd;
	}
	/* the core leaves LOSS: back to at least the window from before the timeout */
	f.cc.state = TCP_CC_OPEN;
	fd_ack(&f, MSS, f.delivered, bw, 20000, false, 0);
	assert_true(f.cc.cwnd >= cwnd && f.cc.cwnd <= cwnd + MSS);
	/* the model survived: same estimate, still cruising */
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), bw);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
}

static void test_bbr_rto_during_recovery_keeps_the_larger_prior_cwnd(void **state)
{
	struct feed f;
	uint32_t cwnd;

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	cwnd = f.cc.cwnd;
	f.cc.state = TCP_CC_RECOVERY;
	f.cc.ops->ssthresh(&f.cc, cwnd, f.now);
	f.in_flight = SEG(10);
	fd_ack(&f, MSS, f.delivered, 10000000, 20000, false, 0);
	f.cc.state = TCP_CC_LOSS;
	f.cc.ops->on_rto(&f.cc, SEG(10), f.now);
	assert_int_equal(f.cc.u.bbr.prior_cwnd, cwnd);
	/* recovery again from LOSS: conservation again */
	f.cc.state = TCP_CC_RECOVERY;
	f.in_flight = SEG(6);
	fd_ack(&f, MSS, f.delivered, 10000000, 20000, false, 0);
	assert_int_equal(f.cc.cwnd, SEG(7));
	f.cc.state = TCP_CC_OPEN;
	f.cc.ops->on_recovery_exit(&f.cc, SEG(6), f.now);
	assert_int_equal(f.cc.cwnd, cwnd);
}

/* ===================================================================================== */
/* Limits, switching                                                                     */
/* ===================================================================================== */

static void test_bbr_cwnd_never_below_4_segments_nor_above_max(void **state)
{
	struct feed f;
	int i;

	(void)state;
	/* a trickle: 1 kB/s at 1 ms is a BDP of one byte */
	fd_init(&f);
	for (i = 0; i < 60; i++) {
		fd_round_n(&f, 2, 1000, 1000, false);
		assert_true(f.cc.cwnd >= SEG(4));
	}
	assert_int_equal(f.cc.cwnd, SEG(4));

	/* huge: 4 GB per 1 µs sample and a 60 s RTT */
	fd_init(&f);
	f.in_flight = 1u << 30;
	for (i = 0; i < 60; i++) {
		f.cc.ops->on_rtt(&f.cc, 60000000, f.now);
		{
			struct tcp_rate_sample rs = {
				.now_us = f.now, .delivered = f.delivered + 4000000000u,
				.prior_delivered = f.delivered, .delivered_bytes = 4000000000u,
				.interval_us = 1, .rtt_us = 60000000,
				.acked_sacked = 4000000000u, .prior_in_flight = UINT32_MAX,
				.in_flight = 1u << 30,
			};

			f.delivered += 4000000000u;
			f.now += 1;
			f.cc.ops->cong_control(&f.cc, &rs);
		}
		assert_true(f.cc.cwnd <= TCP_CC_CWND_MAX);
		assert_true(f.cc.cwnd >= SEG(4));
	}
	assert_int_equal(f.cc.cwnd, TCP_CC_CWND_MAX);
	assert_true(f.cc.pacing_rate > 0);
}

static void test_bbr_clock_wrapping_past_2_64_keeps_its_timers(void **state)
{
	struct feed f;
	uint64_t stamp;
	int i;

	(void)state;
	fd_init(&f);
	f.now = UINT64_MAX - 2000000;	/* 2 s before the clock wraps */
	f.in_flight = 200000;
	fd_fill_pipe(&f, 10000000, 20000);
	fd_round(&f, 10000000, 20000);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	stamp = f.cc.u.bbr.min_rtt_stamp_us;
	while (f.now - stamp < 9900000) {
		fd_round(&f, 10000000, 20000);
		assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	}
	assert_true(f.now < stamp);	/* wrapped */
	for (i = 0; i < 20 && f.cc.u.bbr.mode != TCP_CC_BBR_PROBE_RTT; i++)
		fd_round(&f, 10000000, 20000);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	assert_true(f.now - stamp > 10000000);
	f.in_flight = SEG(3);
	fd_round(&f, 10000000, 20000);
	stamp = f.cc.u.bbr.probe_rtt_done_us;
	for (i = 0; i < 30 && f.cc.u.bbr.mode == TCP_CC_BBR_PROBE_RTT; i++) {
		fd_round(&f, 10000000, 20000);
		if (f.cc.u.bbr.mode == TCP_CC_BBR_PROBE_RTT)
			assert_true(f.now - stamp > (1ull << 63) || f.now == stamp);
	}
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_BW);
	assert_true(f.now - stamp < 100000);
}

static void test_bbr_on_ack_is_a_harmless_no_op(void **state)
{
	struct feed f;
	struct tcp_cc before;
	struct tcp_cc_ack a = { .acked = 100 * MSS, .in_flight = SEG(10), .rtt_us = 1,
				.now_us = T0, .app_limited = false };

	(void)state;
	fd_probe_bw(&f, 10000000, 20000);
	before = f.cc;
	f.cc.ops->on_ack(&f.cc, &a);
	assert_memory_equal(&before, &f.cc, sizeof(before));
}

static void test_bbr_switch_live_connection_to_bbr_and_away(void **state)
{
	struct tcp_cc cc;
	struct feed f;
	int i;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_cubic_ops, MSS);
	cc.cwnd = SEG(50);
	cc.ssthresh = SEG(40);
	cc.ops->on_rtt(&cc, 20000, T0);
	tcp_cc_set_ops(&cc, &tcp_cc_bbr_ops);
	assert_int_equal(cc.cwnd, SEG(50));
	assert_int_equal(cc.ssthresh, SEG(40));
	assert_int_equal(cc.min_rtt_us, 20000);
	assert_int_equal(cc.u.bbr.min_rtt_us, 20000);
	assert_int_equal(cc.u.bbr.mode, TCP_CC_BBR_STARTUP);
	/* paced from the window it has: 50 segments per 20 ms at the STARTUP gain */
	assert_int_equal(cc.pacing_rate, pacing_of(SEG(50) * 50ull, HIGH_GAIN));

	/* it runs: the model builds from the samples */
	memset(&f, 0, sizeof(f));
	f.cc = cc;
	f.now = T0 + 1000;
	f.in_flight = 200000;
	for (i = 0; i < 20; i++)
		fd_round(&f, 10000000, 20000);
	assert_int_equal(tcp_cc_bbr_max_bw(&f.cc), 10000000);
	assert_true(f.cc.cwnd >= SEG(4) && f.cc.cwnd <= TCP_CC_CWND_MAX);
	assert_true(f.cc.pacing_rate > 0);

	/* and away: the window stays, pacing stops, CUBIC works from there */
	cc = f.cc;
	tcp_cc_set_ops(&cc, &tcp_cc_cubic_ops);
	assert_int_equal(cc.pacing_rate, 0);
	assert_int_equal(cc.cwnd, f.cc.cwnd);
	assert_int_equal(cc.min_rtt_us, 20000);
	{
		struct tcp_cc_ack a = { .acked = MSS, .in_flight = cc.cwnd, .now_us = f.now };
		uint32_t w = cc.cwnd;

		cc.ops->on_ack(&cc, &a);
		assert_true(cc.cwnd >= w);
	}

	/* switched while in PROBE_RTT (cwnd at 4 segments): away keeps 4 segments, sane */
	fd_probe_bw(&f, 10000000, 20000);
	f.now += 11000000;
	f.in_flight = SEG(3);
	fd_round_n(&f, 1, 10000000, 20000, false);
	assert_int_equal(f.cc.u.bbr.mode, TCP_CC_BBR_PROBE_RTT);
	tcp_cc_set_ops(&f.cc, &tcp_cc_newreno_ops);
	assert_int_equal(f.cc.cwnd, SEG(4));
	assert_int_equal(f.cc.pacing_rate, 0);
}

static void test_bbr_switch_during_recovery_conserves_then_restores(void **state)
{
	struct tcp_cc cc;
	struct feed f;

	(void)state;
	tcp_cc_init(&cc, &tcp_cc_cubic_ops, MSS);
	cc.cwnd = SEG(30);
	cc.ssthresh = SEG(30);
	cc.state = TCP_CC_RECOVERY;
	tcp_cc_set_ops(&cc, &tcp_cc_bbr_ops);
	memset(&f, 0, sizeof(f));
	f.cc = cc;
	f.now = T0;
	f.in_flight = SEG(10);
	fd_ack(&f, MSS, 0, 1000000, 20000, false, 0);
	assert_int_equal(f.cc.cwnd, SEG(11));
	f.cc.state = TCP_CC_OPEN;
	f.cc.ops->on_recovery_exit(&f.cc, SEG(10), f.now);
	assert_int_equal(f.cc.cwnd, SEG(30));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bbr_registered_by_name_but_not_the_default),
		cmocka_unit_test(test_bbr_state_fits_in_a_small_union),
		cmocka_unit_test(test_bbr_init_starts_in_startup_paced_from_nominal_1ms),
		cmocka_unit_test(test_bbr_first_rtt_sample_sets_pacing_from_cwnd_over_rtt),
		cmocka_unit_test(test_bbr_startup_doubles_per_round_until_bandwidth_plateaus),
		cmocka_unit_test(test_bbr_three_flat_rounds_end_startup),
		cmocka_unit_test(test_bbr_app_limited_rounds_do_not_count_as_flat),
		cmocka_unit_test(test_bbr_drain_then_probe_bw_once_in_flight_is_bdp),
		cmocka_unit_test(test_bbr_simulated_startup_drains_the_queue_to_bdp),
		cmocka_unit_test(test_bbr_steady_state_cwnd_twice_bdp_pacing_at_bottleneck),
		cmocka_unit_test(test_bbr_probe_bw_cycles_gains_each_min_rtt),
		cmocka_unit_test(test_bbr_probe_bw_drain_phase_ends_early_when_queue_is_gone),
		cmocka_unit_test(test_bbr_probe_bw_probing_phase_waits_for_its_data_in_flight),
		cmocka_unit_test(test_bbr_probe_bw_start_phase_is_random_but_never_the_drain_phase),
		cmocka_unit_test(test_bbr_probe_bw_start_phase_is_deterministic),
		cmocka_unit_test(
		test_bbr_probe_rtt_after_10s_without_new_min_rtt_holds_4_segments_for_200ms),
		cmocka_unit_test(
			test_bbr_probe_rtt_of_many_short_rounds_keeps_the_bw_estimate),
		cmocka_unit_test(test_bbr_new_min_rtt_postpones_probe_rtt),
		cmocka_unit_test(test_bbr_probe_rtt_needs_a_round_as_well_as_200ms),
		cmocka_unit_test(test_bbr_probe_rtt_returns_to_startup_if_pipe_never_full),
		cmocka_unit_test(test_bbr_idle_ends_a_probe_rtt_whose_time_has_passed),
		cmocka_unit_test(test_bbr_app_limited_samples_do_not_lower_max_bw),
		cmocka_unit_test(test_bbr_app_limited_sample_above_max_raises_it),
		cmocka_unit_test(test_bbr_max_bw_ages_out_after_10_rounds),
		cmocka_unit_test(test_bbr_max_bw_falls_back_to_the_next_best_in_the_window),
		cmocka_unit_test(test_bbr_samples_without_interval_do_not_touch_max_bw),
		cmocka_unit_test(test_bbr_pacing_rate_follows_bw_times_gain),
		cmocka_unit_test(test_bbr_idle_restart_in_probe_bw_paces_at_bw),
		cmocka_unit_test(test_bbr_idle_restart_does_not_start_probe_rtt),
		cmocka_unit_test(test_bbr_ssthresh_saves_cwnd_and_leaves_ssthresh),
		cmocka_unit_test(test_bbr_recovery_conserves_packets_and_restores_prior_cwnd),
		cmocka_unit_test(test_bbr_recovery_end_seen_in_state_restores_without_the_hook),
		cmocka_unit_test(test_bbr_ack_aggregation_lifts_the_cwnd_target_by_the_burst),
		cmocka_unit_test(test_bbr_losses_in_a_sample_take_bytes_off_cwnd),
		cmocka_unit_test(test_bbr_ecn_reaction_keeps_the_window),
		cmocka_unit_test(test_bbr_rto_then_ack_grows_back),
		cmocka_unit_test(test_bbr_rto_during_recovery_keeps_the_larger_prior_cwnd),
		cmocka_unit_test(test_bbr_cwnd_never_below_4_segments_nor_above_max),
		cmocka_unit_test(test_bbr_clock_wrapping_past_2_64_keeps_its_timers),
		cmocka_unit_test(test_bbr_on_ack_is_a_harmless_no_op),
		cmocka_unit_test(test_bbr_switch_live_connection_to_bbr_and_away),
		cmocka_unit_test(test_bbr_switch_during_recovery_conserves_then_restores),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
