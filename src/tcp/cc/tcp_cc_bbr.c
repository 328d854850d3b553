/* BBR v1: Bottleneck Bandwidth and Round-trip propagation time (N. Cardwell et al.,
 * draft-cardwell-iccrg-bbr-congestion-control-00; the model of Linux's tcp_bbr.c).
 *
 * BBR does not read loss as congestion. It keeps a model of the path: BtlBw, the largest
 * delivery rate seen over the last 10 round trips (rate samples that the application limited
 * can only raise it), and RTprop, the smallest RTT seen over the last 10 seconds. Their
 * product is the BDP. It paces at pacing_gain * BtlBw and caps what is in flight at
 * cwnd_gain * BDP, with gains chosen by a state machine:
 *   STARTUP    both gains 2/ln 2 (2.885): the sending rate doubles each round, until three
 *              rounds in a row fail to grow BtlBw by 25 % (the pipe is full);
 *   DRAIN      pacing gain ln 2 / 2, to empty the queue STARTUP built, until what is in flight
 *              is no more than the BDP;
 *   PROBE_BW   cwnd gain 2 and an eight-phase pacing gain cycle 1.25, 0.75, 1 x 6, a phase per
 *              RTprop, starting at a random phase other than 0.75: one phase probes for more
 *              bandwidth, the next drains what that probe queued;
 *   PROBE_RTT  when RTprop has not been lowered for 10 s: cwnd 4 segments for 200 ms and a
 *              round, so that the queue empties and the RTT can be measured again.
 *
 * Inputs come from the core's per-ACK rate samples (cong_control); the core's recovery state
 * (cc->state) is read to conserve packets in the first round of fast recovery and to return
 * to the window saved before recovery or an RTO once it ends.
 *
 * Units: windows in bytes, bandwidth in bytes per second (64 bits), gains in 1/256 (BBR_UNIT),
 * times in microseconds.
 *
 * Decisions where this differs from, or leaves out parts of, Linux's tcp_bbr.c:
 *  - No long-term bandwidth (policer detection, lt_bw) and no ACK-aggregation allowance
 *    (extra_acked): cwnd = cwnd_gain * BDP + 3 segments (room for a segment waiting at the
 *    sender, one in the NIC and one held back by a delayed ACK; there is no TSO here).
 *  - A round trip can end on any sample that delivered data, also one without a valid rate
 *    interval; the bandwidth filter takes only valid ones.
 *  - on_rto: the prior cwnd is saved and cwnd becomes the loss window, 1 SMSS (the interface's
 *    rule and what Linux's core does). In the LOSS state that follows, cwnd grows by what each
 *    ACK delivers (at least 4 segments from the first ACK on) up to the model's target, and
 *    returns to at least the saved cwnd when the core leaves LOSS. Fast recovery entered from
 *    LOSS gets packet conservation as from OPEN. If STARTUP was still running, its growth
 *    test starts over (Linux resets full_bw too); a pipe already found full stays so.
 *  - on_idle: BBR relies on pacing instead of the RFC 5681 §4.1 restart window, so cwnd is
 *    kept; in PROBE_BW the rate is the estimated bandwidth (gain 1) until data is delivered
 *    again, and PROBE_RTT ends at once if its time has passed.
 *  - Data sent in PROBE_RTT is taken as application-limited (Linux sets the core's app_limited
 *    mark; here the controller keeps the mark itself, by delivered count), so that a PROBE_RTT
 *    lasting many rounds (short RTTs: 200 ms is 100 rounds at 2 ms) cannot age the bandwidth
 *    estimate out.
 *  - The random PROBE_BW start phase is a hash of the sample's clock and delivered count:
 *    deterministic for a given input, different between connections.
 *  - Entering DRAIN sets ssthresh to the BDP plus that allowance (as newer Linux does), so that
 *    "cwnd < ssthresh" still reads as "slow start" for whoever looks. */
#include <stddef.h>

#include "tcp_cc.h"

#define BBR_UNIT 256u			/* gain 1.0 */
#define BBR_HIGH_GAIN 739u		/* 2/ln(2) = 2.885, rounded up */
#define BBR_DRAIN_GAIN 88u		/* 1/2.885 */
#define BBR_PROBE_BW_CWND_GAIN 512u	/* 2.0 */
#define BBR_CYCLE_LEN 8u
#define BBR_BW_WINDOW_ROUNDS 10u	/* BtlBw filter length, round trips */
#define BBR_MIN_RTT_WINDOW_US 10000000ull /* RTprop filter length: 10 s */
#define BBR_PROBE_RTT_US 200000ull	/* time at 4 segments in PROBE_RTT */
#define BBR_MIN_CWND_SEGS 4u		/* cwnd floor, and the PROBE_RTT window */
#define BBR_QUANTA_SEGS 3u		/* cwnd allowance on top of gain * BDP */
#define BBR_FULL_BW_GROWTH 320u		/* 1.25: growth that counts as "still growing" */
#define BBR_FULL_BW_ROUNDS 3u		/* flat rounds that end STARTUP */
#define BBR_PACING_MARGIN_PCT 1u	/* pace this much under the estimate */
#define BBR_NOMINAL_RTT_US 1000u	/* initial pacing before any RTT: 1 ms */
#define BBR_EXTRA_ACKED_ROUNDS 5u	/* one slot of the ACK-aggregation maximum, rounds */
#define BBR_EXTRA_ACKED_MAX_US 100000ull /* the allowance never exceeds 100 ms of bw */
#define BBR_ACK_EPOCH_MAX_SEGS (1u << 20) /* an epoch this long is too old to judge by */

/* Pacing gain of each PROBE_BW phase. */
static const uint16_t bbr_cycle_gain[BBR_CYCLE_LEN] = {
	320, 192, 256, 256, 256, 256, 256, 256	/* 1.25, 0.75, then cruise at 1.0 */
};

static uint32_t bbr_min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t bbr_max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

static uint64_t bbr_min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* a is before b on a clock that may wrap (they are less than 2^63 apart) */
static bool bbr_before(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) < 0;
}

static uint32_t bbr_sat32(uint64_t x)
{
	return x > TCP_CC_CWND_MAX ? TCP_CC_CWND_MAX : (uint32_t)x;
}

/* --- Bandwidth filter: windowed maximum over BBR_BW_WINDOW_ROUNDS rounds ----------------
 *
 * Three candidates are kept, best first, each stamped with its round: bw[0] the maximum of the
 * window, bw[1] the best seen after bw[0]'s round, bw[2] the best seen after bw[1]'s. A new
 * value replaces every candidate it beats (a larger, newer value makes older, smaller ones
 * useless). When the oldest candidate leaves the window the others move up. To keep the
 * fallbacks spread over the window, the second candidate is refreshed once a quarter of the
 * window has passed without one, the third once half has. */

static void bbr_bw_set_all(struct tcp_cc_bbr *b, uint32_t round, uint64_t bw)
{
	for (int i = 0; i < 3; i++) {
		b->bw[i] = bw;
		b->bw_round[i] = round;
	}
}

static void bbr_bw_update(struct tcp_cc_bbr *b, uint32_t round, uint64_t bw)
{
	uint32_t age;

	if (bw >= b->bw[0] || round - b->bw_round[2] >= BBR_BW_WINDOW_ROUNDS) {
		/* a new maximum, or nothing in the window is still valid */
		bbr_bw_set_all(b, round, bw);
		return;
	}
	if (bw >= b->bw[1]) {
		b->bw[1] = b->bw[2] = bw;
		b->bw_round[1] = b->bw_round[2] = round;
	} else if (bw >= b->bw[2]) {
		b->bw[2] = bw;
		b->bw_round[2] = round;
	}

	age = round - b->bw_round[0];
	if (age >= BBR_BW_WINDOW_ROUNDS) {
		/* the best has aged out: promote, and the newest value becomes the third */
		b->bw[0] = b->bw[1];
		b->bw_round[0] = b->bw_round[1];
		b->bw[1] = b->bw[2];
		b->bw_round[1] = b->bw_round[2];
		b->bw[2] = bw;
		b->bw_round[2] = round;
		if (round - b->bw_round[0] >= BBR_BW_WINDOW_ROUNDS) {
			b->bw[0] = b->bw[1];
			b->bw_round[0] = b->bw_round[1];
			b->bw[1] = b->bw[2];
			b->bw_round[1] = b->bw_round[2];
		}
	} else if (b->bw_round[1] == b->bw_round[0] && age > BBR_BW_WINDOW_ROUNDS / 4) {
		b->bw[1] = b->bw[2] = bw;
		b->bw_round[1] = b->bw_round[2] = round;
	} else if (b->bw_round[2] == b->bw_round[1] && age > BBR_BW_WINDOW_ROUNDS / 2) {
		b->bw[2] = bw;
		b->bw_round[2] = round;
	}
}

uint64_t tcp_cc_bbr_max_bw(const struct tcp_cc *cc)
{
	return cc->u.bbr.bw[0];
}

/* --- The model ------------------------------------------------------------------------ */

/* gain * bw * RTprop in bytes, rounded up, saturated at TCP_CC_CWND_MAX; without an RTprop
 * the initial window (as Linux: nothing better is known). */
static uint32_t bbr_bdp(const struct tcp_cc *cc, uint64_t bw, uint32_t gain)
{
	const struct tcp_cc_bbr *b = &cc->u.bbr;
	uint64_t w;

	if (b->min_rtt_us == UINT32_MAX)
		return tcp_cc_initial_window(cc->mss);
	if (bw != 0 && b->min_rtt_us > UINT64_MAX / bw)
		return TCP_CC_CWND_MAX;
	w = bw * b->min_rtt_us / 1000000u;	/* bytes */
	if (w > ((uint64_t)TCP_CC_CWND_MAX << 2))
		return TCP_CC_CWND_MAX;
	return bbr_sat32((w * gain + BBR_UNIT - 1) / BBR_UNIT);
}

/* What BBR allows in flight at this gain: gain * BDP plus the quantization allowance. */
static uint32_t bbr_inflight(const struct tcp_cc *cc, uint64_t bw, uint32_t gain)
{
	return bbr_sat32((uint64_t)bbr_bdp(cc, bw, gain) + BBR_QUANTA_SEGS * cc->mss);
}

/* bw * gain, less the pacing margin, bytes/s. bw is at most 2^32 * 10^6 (one sample's bytes
 * over 1 µs) and gain below 2^10: no overflow. */
static uint64_t bbr_pacing_for(uint64_t bw, uint32_t gain)
{
	uint64_t r = bw * gain / BBR_UNIT;

	return r / 100u * (100u - BBR_PACING_MARGIN_PCT) +
	       r % 100u * (100u - BBR_PACING_MARGIN_PCT) / 100u;
}

/* Before any bandwidth sample: as if cwnd were delivered each RTprop (or each nominal 1 ms
 * while there is no RTT yet), at the STARTUP gain (Linux's bbr_init_pacing_rate_from_rtt). */
static void bbr_init_pacing(struct tcp_cc *cc)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint32_t rtt = BBR_NOMINAL_RTT_US;
	uint64_t bw;

	if (b->min_rtt_us != UINT32_MAX) {
		rtt = b->min_rtt_us != 0 ? b->min_rtt_us : 1;
		b->has_seen_rtt = 1;
	}
	bw = (uint64_t)cc->cwnd * 1000000u / rtt;
	cc->pacing_rate = bbr_pacing_for(bw, BBR_HIGH_GAIN);
}

static void bbr_set_pacing(struct tcp_cc *cc, uint64_t bw, uint32_t gain)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint64_t rate = bbr_pacing_for(bw, gain);

	if (!b->has_seen_rtt && b->min_rtt_us != UINT32_MAX)
		bbr_init_pacing(cc);
	/* While STARTUP looks for the bandwidth the rate only rises: an early low estimate
	 * must not slow the search down. */
	if (b->full_bw_reached || rate > cc->pacing_rate)
		cc->pacing_rate = rate;
}

/* Remembers the window to return to after recovery, an RTO or PROBE_RTT. A second
 * episode on top of the first keeps the larger of the two. */
static void bbr_save_cwnd(struct tcp_cc *cc)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (b->prev_state == TCP_CC_OPEN && b->mode != TCP_CC_BBR_PROBE_RTT)
		b->prior_cwnd = cc->cwnd;
	else
		b->prior_cwnd = bbr_max_u32(b->prior_cwnd, cc->cwnd);
}

/* A well-mixed 64-bit hash (the splitmix64 finalizer). */
static uint64_t bbr_mix(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void bbr_enter_probe_bw(struct tcp_cc *cc, uint64_t now_us, uint64_t delivered)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	/* one of the seven phases other than 1 (gain 0.75): 0, 2, 3, ..., 7 */
	uint32_t r = (uint32_t)(bbr_mix(now_us ^ (delivered << 17) ^ b->round_count) % 7u);

	b->mode = TCP_CC_BBR_PROBE_BW;
	b->cycle_idx = (uint8_t)(r == 0 ? 0 : r + 1);
	b->cycle_stamp_us = now_us;
}

/* After PROBE_RTT: back to the search if the pipe was never found full, else cruise. */
static void bbr_reset_mode(struct tcp_cc *cc, uint64_t now_us, uint64_t delivered)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (b->full_bw_reached)
		bbr_enter_probe_bw(cc, now_us, delivered);
	else
		b->mode = TCP_CC_BBR_STARTUP;
}

static void bbr_update_round(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	b->round_start = 0;
	if (rs->acked_sacked == 0)
		return;
	if (rs->prior_delivered >= b->next_round_delivered) {
		b->next_round_delivered = rs->delivered;
		b->round_count++;
		b->round_start = 1;
		b->packet_conservation = 0;
	}
}

static void bbr_update_bw(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint64_t bw;

	if (rs->interval_us == 0 || rs->delivered_bytes == 0)
		return;
	bw = (uint64_t)rs->delivered_bytes * 1000000u / rs->interval_us;
	/* An application-limited sample says only "at least this much": it may raise the
	 * estimate, never let a larger one age out in favour of it. */
	if (!rs->is_app_limited || bw >= b->bw[0])
		bbr_bw_update(b, b->round_count, bw);
}

static void bbr_update_cycle_phase(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint32_t gain = bbr_cycle_gain[b->cycle_idx];
	bool full_length;
	bool next;

	if (b->mode != TCP_CC_BBR_PROBE_BW)
		return;
	full_length = b->min_rtt_us != UINT32_MAX &&
		      rs->now_us - b->cycle_stamp_us > b->min_rtt_us;
	if (gain == BBR_UNIT) {
		next = full_length;
	} else if (gain > BBR_UNIT) {
		/* probe until a round has passed and the extra data is in flight (or loss
		 * says the pipe is full) */
		next = full_length && (rs->newly_lost != 0 ||
				       rs->prior_in_flight >= bbr_inflight(cc, b->bw[0], gain));
	} else {
		/* drain: done early once the queue is gone */
		next = full_length || rs->prior_in_flight <= bbr_inflight(cc, b->bw[0], BBR_UNIT);
	}
	if (next) {
		b->cycle_idx = (uint8_t)((b->cycle_idx + 1) % BBR_CYCLE_LEN);
		b->cycle_stamp_us = rs->now_us;
	}
}

static void bbr_check_full_bw(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (b->full_bw_reached || !b->round_start || rs->is_app_limited)
		return;
	if (b->bw[0] >= b->full_bw * BBR_FULL_BW_GROWTH / BBR_UNIT) {
		b->full_bw = b->bw[0];
		b->full_bw_cnt = 0;
		return;
	}
	if (++b->full_bw_cnt >= BBR_FULL_BW_ROUNDS)
		b->full_bw_reached = 1;
}

static void bbr_check_drain(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (b->mode == TCP_CC_BBR_STARTUP && b->full_bw_reached) {
		b->mode = TCP_CC_BBR_DRAIN;
		cc->ssthresh = bbr_max_u32(bbr_inflight(cc, b->bw[0], BBR_UNIT), 2 * cc->mss);
	}
	if (b->mode == TCP_CC_BBR_DRAIN &&
	    rs->in_flight <= bbr_inflight(cc, b->bw[0], BBR_UNIT))
		bbr_enter_probe_bw(cc, rs->now_us, rs->delivered);
}

static void bbr_check_probe_rtt_done(struct tcp_cc *cc, uint64_t now_us, uint64_t delivered)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (!b->probe_rtt_armed || bbr_before(now_us, b->probe_rtt_done_us))
		return;
	b->min_rtt_stamp_us = now_us;	/* the RTT was measured: 10 s until the next probe */
	cc->cwnd = bbr_max_u32(cc->cwnd, b->prior_cwnd);
	b->probe_rtt_armed = 0;
	bbr_reset_mode(cc, now_us, delivered);
}

static void bbr_update_min_rtt(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	bool expired = rs->now_us - b->min_rtt_stamp_us > BBR_MIN_RTT_WINDOW_US;

	if (rs->rtt_us != 0 && (rs->rtt_us < b->min_rtt_us || expired)) {
		b->min_rtt_us = rs->rtt_us;
		b->min_rtt_stamp_us = rs->now_us;
	}
	if (expired && !b->idle_restart && b->mode != TCP_CC_BBR_PROBE_RTT) {
		b->mode = TCP_CC_BBR_PROBE_RTT;
		bbr_save_cwnd(cc);
		b->probe_rtt_armed = 0;
	}
	if (b->mode == TCP_CC_BBR_PROBE_RTT) {
		/* What is sent now goes out at 4 segments a round: its samples say nothing
		 * about the bottleneck and must not age the estimate out (Linux marks the
		 * connection application-limited for this; the interface has no way to ask
		 * the core, so the mark is kept here). */
		b->probe_rtt_app_limited = rs->delivered + rs->in_flight + 1;
		if (!b->probe_rtt_armed &&
		    rs->in_flight <= BBR_MIN_CWND_SEGS * cc->mss) {
			/* the queue is drained: hold here 200 ms and at least a round */
			b->probe_rtt_done_us = rs->now_us + BBR_PROBE_RTT_US;
			b->probe_rtt_armed = 1;
			b->probe_rtt_round_done = 0;
			b->next_round_delivered = rs->delivered;
		} else if (b->probe_rtt_armed) {
			if (b->round_start)
				b->probe_rtt_round_done = 1;
			if (b->probe_rtt_round_done)
				bbr_check_probe_rtt_done(cc, rs->now_us, rs->delivered);
		}
	}
	if (rs->acked_sacked != 0)
		b->idle_restart = 0;
}

static void bbr_update_gains(struct tcp_cc *cc)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	switch (b->mode) {
	case TCP_CC_BBR_STARTUP:
		b->pacing_gain = BBR_HIGH_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;
		break;
	case TCP_CC_BBR_DRAIN:
		b->pacing_gain = BBR_DRAIN_GAIN;
		b->cwnd_gain = BBR_HIGH_GAIN;	/* keep the window; only the rate drops */
		break;
	case TCP_CC_BBR_PROBE_BW:
		b->pacing_gain = bbr_cycle_gain[b->cycle_idx];
		b->cwnd_gain = BBR_PROBE_BW_CWND_GAIN;
		break;
	default:
		b->pacing_gain = BBR_UNIT;
		b->cwnd_gain = BBR_UNIT;
		break;
	}
}

/* Recovery and RTO as the core reports them through cc->state: on entering fast recovery,
 * packet conservation for a round (cwnd = what is in flight plus what this ACK delivered, so
 * one segment goes out for each that left); on leaving recovery or LOSS, at least the window
 * saved before. Returns true while conserving: cwnd is then final for this ACK. */
static bool bbr_recover_or_restore(struct tcp_cc *cc, const struct tcp_rate_sample *rs,
				   uint32_t *cwnd)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint8_t state = cc->state, prev = b->prev_state;
	uint64_t conserve = (uint64_t)rs->in_flight + rs->acked_sacked;

	if (rs->newly_lost != 0)
		*cwnd = *cwnd > (uint64_t)rs->newly_lost + cc->mss ? *cwnd - rs->newly_lost
								   : cc->mss;
	if (state == TCP_CC_RECOVERY && prev != TCP_CC_RECOVERY) {
		b->packet_conservation = 1;
		b->next_round_delivered = rs->delivered;	/* the round starts now */
		*cwnd = bbr_sat32(conserve);
	} else if (prev != TCP_CC_OPEN && state == TCP_CC_OPEN) {
		*cwnd = bbr_max_u32(*cwnd, b->prior_cwnd);
		b->packet_conservation = 0;
	}
	b->prev_state = state;
	if (b->packet_conservation) {
		*cwnd = bbr_max_u32(*cwnd, bbr_sat32(conserve));
		return true;
	}
	return false;
}

/* ACK aggregation (as Linux's BBR v1 since 4.19): when ACKs come in bursts (delayed ACKs, a
 * receiver or a NIC that batches), more is delivered in a short time than bw explains, and
 * between bursts nothing is. The excess seen in the last two 5-round slots is added to the
 * cwnd target, so the sender keeps sending between bursts instead of waiting for the next;
 * without it a flight of a few segments at a tiny RTprop ends in a lost retransmission with
 * nothing sent after it (an RTO). */
static void bbr_update_ack_aggregation(struct tcp_cc *cc, const struct tcp_rate_sample *rs)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint64_t expected, extra;

	if (rs->acked_sacked == 0)
		return;
	if (b->round_start && ++b->extra_acked_rounds >= BBR_EXTRA_ACKED_ROUNDS) {
		b->extra_acked_rounds = 0;
		b->extra_acked_slot ^= 1;
		b->extra_acked[b->extra_acked_slot] = 0;
	}
	expected = b->bw[0] * (rs->now_us - b->ack_epoch_us) / 1000000u;
	/* A slow stretch, or an epoch too old to say anything: a new epoch starts here. */
	if (b->ack_epoch_acked <= expected ||
	    b->ack_epoch_acked + rs->acked_sacked >= (uint64_t)BBR_ACK_EPOCH_MAX_SEGS * cc->mss) {
		b->ack_epoch_acked = 0;
		b->ack_epoch_us = rs->now_us;
		expected = 0;
	}
	b->ack_epoch_acked += rs->acked_sacked;
	extra = bbr_min_u64(b->ack_epoch_acked - expected, cc->cwnd);
	if (extra > b->extra_acked[b->extra_acked_slot])
		b->extra_acked[b->extra_acked_slot] = (uint32_t)extra;
}

/* The allowance on top of the cwnd target, once the pipe is known full. */
static uint32_t bbr_aggregation_cwnd(const struct tcp_cc *cc)
{
	const struct tcp_cc_bbr *b = &cc->u.bbr;
	uint64_t cap = b->bw[0] * BBR_EXTRA_ACKED_MAX_US / 1000000u;

	if (!b->full_bw_reached)
		return 0;
	return (uint32_t)bbr_min_u64(bbr_max_u32(b->extra_acked[0], b->extra_acked[1]), cap);
}

static void bbr_set_cwnd(struct tcp_cc *cc, const struct tcp_rate_sample *rs, uint64_t bw)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	uint32_t cwnd = cc->cwnd;
	uint32_t acked = rs->acked_sacked;
	uint32_t target;

	if (acked == 0)
		goto done;
	if (bbr_recover_or_restore(cc, rs, &cwnd))
		goto done;
	target = bbr_sat32((uint64_t)bbr_inflight(cc, bw, b->cwnd_gain) + bbr_aggregation_cwnd(cc));

	if (b->full_bw_reached)
		cwnd = bbr_min_u32(bbr_sat32((uint64_t)cwnd + acked), target);
	else if (cwnd < target || rs->delivered < tcp_cc_initial_window(cc->mss))
		cwnd = bbr_sat32((uint64_t)cwnd + acked);	/* grow freely while searching */
	cwnd = bbr_max_u32(cwnd, BBR_MIN_CWND_SEGS * cc->mss);
done:
	if (b->mode == TCP_CC_BBR_PROBE_RTT)
		cwnd = bbr_min_u32(cwnd, BBR_MIN_CWND_SEGS * cc->mss);
	cc->cwnd = bbr_min_u32(bbr_max_u32(cwnd, cc->mss), TCP_CC_CWND_MAX);
}

/* --- Hooks -------------------------------------------------------------------------------- */

static void bbr_cong_control(struct tcp_cc *cc, const struct tcp_rate_sample *in)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	struct tcp_rate_sample sample = *in;
	const struct tcp_rate_sample *rs = &sample;
	uint64_t bw;

	if (in->prior_delivered < b->probe_rtt_app_limited)
		sample.is_app_limited = true;	/* sent during PROBE_RTT */

	if (!b->started) {
		b->started = 1;
		b->min_rtt_stamp_us = rs->now_us;
		b->cycle_stamp_us = rs->now_us;
	}
	b->last_now_us = rs->now_us;

	bbr_update_round(cc, rs);
	bbr_update_bw(cc, rs);
	bbr_update_ack_aggregation(cc, rs);
	bbr_update_cycle_phase(cc, rs);
	bbr_check_full_bw(cc, rs);
	bbr_check_drain(cc, rs);
	bbr_update_min_rtt(cc, rs);
	bbr_update_gains(cc);

	bw = b->bw[0];
	bbr_set_pacing(cc, bw, b->pacing_gain);
	bbr_set_cwnd(cc, rs, bw);
}

static void bbr_init(struct tcp_cc *cc)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	/* cc->u is zeroed: bandwidth filter empty, round 0, no flags */
	b->min_rtt_us = cc->min_rtt_us != 0 ? cc->min_rtt_us : UINT32_MAX;
	b->prior_cwnd = cc->cwnd;
	b->prev_state = TCP_CC_OPEN;
	b->mode = TCP_CC_BBR_STARTUP;
	bbr_update_gains(cc);
	bbr_init_pacing(cc);
}

/* The core never calls on_ack for a controller with cong_control; nothing to do. */
static void bbr_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	(void)cc;
	(void)a;
}

static uint32_t bbr_ssthresh(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)in_flight;
	(void)now_us;
	bbr_save_cwnd(cc);
	/* BBR does not cut the window on loss; ssthresh is left as it is. */
	return bbr_max_u32(cc->ssthresh, 2 * cc->mss);
}

static void bbr_on_recovery_exit(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	(void)in_flight;
	(void)now_us;
	cc->cwnd = bbr_min_u32(bbr_max_u32(cc->cwnd, b->prior_cwnd), TCP_CC_CWND_MAX);
	b->packet_conservation = 0;
	b->prev_state = TCP_CC_OPEN;
}

static void bbr_on_rto(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	(void)in_flight;
	(void)now_us;
	bbr_save_cwnd(cc);
	b->prev_state = TCP_CC_LOSS;
	b->packet_conservation = 0;
	/* the path may have changed: if STARTUP is still on, its growth test starts over */
	b->full_bw = 0;
	b->full_bw_cnt = 0;
	cc->cwnd = cc->mss;	/* loss window */
}

static void bbr_on_rtt(struct tcp_cc *cc, uint32_t rtt_us, uint64_t now_us)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;

	if (rtt_us == 0)
		return;
	tcp_cc_rtt_min(cc, rtt_us);
	if (rtt_us < b->min_rtt_us) {
		b->min_rtt_us = rtt_us;
		b->min_rtt_stamp_us = now_us;
		if (!b->started) {
			b->started = 1;
			b->cycle_stamp_us = now_us;
		}
	}
	if (!b->has_seen_rtt && b->bw[0] == 0)
		bbr_init_pacing(cc);
}

static void bbr_on_idle(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms)
{
	struct tcp_cc_bbr *b = &cc->u.bbr;
	/* the hook has no clock: the idle period started at about the last sample */
	uint64_t now_us = b->last_now_us + idle_ms * 1000u;

	(void)rto_ms;
	b->idle_restart = 1;
	if (b->mode == TCP_CC_BBR_PROBE_BW && b->bw[0] != 0)
		cc->pacing_rate = bbr_pacing_for(b->bw[0], BBR_UNIT);
	else if (b->mode == TCP_CC_BBR_PROBE_RTT)
		bbr_check_probe_rtt_done(cc, now_us, b->next_round_delivered);
}

const struct tcp_cc_ops tcp_cc_bbr_ops = {
	.name = "bbr",
	.init = bbr_init,
	.on_ack = bbr_on_ack,
	.ssthresh = bbr_ssthresh,
	.on_recovery_exit = bbr_on_recovery_exit,
	.on_rto = bbr_on_rto,
	.on_rtt = bbr_on_rtt,
	.on_idle = bbr_on_idle,
	.cong_control = bbr_cong_control,
};
