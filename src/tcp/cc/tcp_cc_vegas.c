/* TCP Vegas congestion avoidance (L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion
 * Avoidance on a Global Internet", IEEE JSAC 13(8), 1995).
 *
 * Vegas reads queueing from delay instead of waiting for loss. BaseRTT is the smallest RTT
 * ever seen (cc->min_rtt_us); once per round trip, with RTT the smallest sample of that round
 * (the least disturbed by delayed ACKs), it compares the expected rate cwnd / BaseRTT with the
 * actual rate cwnd / RTT:
 *   diff = (Expected - Actual) * BaseRTT = cwnd * (RTT - BaseRTT) / RTT,
 * the data this flow keeps queued in the network, in segments. In congestion avoidance cwnd
 * grows by one segment when diff < alpha = 2, shrinks by one when diff > beta = 4, and holds in
 * between. In slow start (which here grows per ACK as Reno's does, rather than the paper's
 * doubling every other round trip) diff > gamma = 1 ends slow start with cwnd cut to the
 * window the path carries at BaseRTT, plus one segment.
 *
 * A round with fewer than three RTT samples cannot be judged (the minimum is noise): Vegas then
 * behaves as Reno until a round has enough. Losses are handled as Reno: ssthresh =
 * max(FlightSize / 2, 2 * SMSS), loss window after an RTO. */
#include "tcp_cc.h"

#define VEGAS_ALPHA 2		/* segments */
#define VEGAS_BETA 4
#define VEGAS_GAMMA 1
#define VEGAS_MIN_SAMPLES 3	/* per round, to use Vegas rather than Reno (Linux: > 2) */

/* Starts a round with nothing counted; the next ACK closes it and starts a real one. */
static void vegas_round_reset(struct tcp_cc_vegas *v)
{
	v->round_left = 0;
	v->round_min_us = UINT32_MAX;
	v->round_samples = 0;
}

static void vegas_init(struct tcp_cc *cc)
{
	struct tcp_cc_vegas *v = &cc->u.vegas;

	v->ca_acked = 0;
	v->active = false;
	vegas_round_reset(v);
}

/* The end of a round with enough samples: congestion avoidance and the slow-start exit of
 * Brakmo & Peterson §III-B and §III-C. */
static void vegas_adjust(struct tcp_cc *cc)
{
	const struct tcp_cc_vegas *v = &cc->u.vegas;
	uint64_t base = cc->min_rtt_us;
	uint64_t rtt = v->round_min_us;
	uint64_t cwnd = cc->cwnd;
	uint64_t mss = cc->mss;
	uint64_t diff;

	if (base == 0 || rtt == UINT32_MAX)
		return;
	if (rtt < base)
		rtt = base;	/* cannot happen: BaseRTT includes this round's samples */
	diff = cwnd * (rtt - base) / rtt;	/* bytes; < 2^31 * 2^32 before the division */

	if (cc->cwnd < cc->ssthresh) {
		if (diff > VEGAS_GAMMA * mss) {
			uint64_t fit = cwnd * base / rtt + mss;

			if (fit < cwnd)
				cc->cwnd = (uint32_t)fit;
			if (cc->cwnd < 2 * mss)
				cc->cwnd = (uint32_t)(2 * mss);
			cc->ssthresh = cc->cwnd;	/* congestion avoidance from here */
		}
		return;
	}
	if (diff > VEGAS_BETA * mss) {
		if (cwnd > 2 * mss) {
			cc->cwnd = (uint32_t)(cwnd - mss > 2 * mss ? cwnd - mss : 2 * mss);
			/* stay in congestion avoidance: a Vegas decrease is not a loss */
			if (cc->ssthresh > cc->cwnd)
				cc->ssthresh = cc->cwnd;
		}
	} else if (diff < VEGAS_ALPHA * mss) {
		if (cwnd + mss <= TCP_CC_CWND_MAX)
			cc->cwnd = (uint32_t)(cwnd + mss);
	}
}

static void vegas_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	struct tcp_cc_vegas *v = &cc->u.vegas;

	if (a->acked == 0)
		return;
	if (a->acked > v->round_left) {
		/* This ACK covers data sent after the round began (everything in flight then is
		 * acknowledged): judge the round, then start the next one, which ends once what
		 * is in flight now has been acknowledged. */
		v->active = v->round_samples >= VEGAS_MIN_SAMPLES;
		if (v->active && !a->app_limited)
			vegas_adjust(cc);
		v->round_left = a->in_flight > a->acked ? a->in_flight - a->acked : 0;
		v->round_min_us = UINT32_MAX;
		v->round_samples = 0;
	} else {
		v->round_left -= a->acked;
	}
	if (a->app_limited)
		return;		/* a window that is not used must not grow */
	if (!v->active) {
		tcp_cc_reno_ack(cc, a->acked, &v->ca_acked);
		return;
	}
	if (cc->cwnd < cc->ssthresh)
		tcp_cc_slow_start(cc, a->acked);
}

static void vegas_on_rtt(struct tcp_cc *cc, uint32_t rtt_us, uint64_t now_us)
{
	struct tcp_cc_vegas *v = &cc->u.vegas;

	(void)now_us;
	if (rtt_us == 0)
		return;
	tcp_cc_rtt_min(cc, rtt_us);
	if (rtt_us < v->round_min_us)
		v->round_min_us = rtt_us;
	if (v->round_samples < UINT32_MAX)
		v->round_samples++;
}

static uint32_t vegas_ssthresh(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)now_us;
	cc->u.vegas.ca_acked = 0;
	vegas_round_reset(&cc->u.vegas);
	return tcp_cc_reno_ssthresh(cc, in_flight);
}

static void vegas_on_recovery_exit(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)now_us;
	tcp_cc_reno_recovery_exit(cc, in_flight);
	/* samples taken during recovery describe a different window */
	vegas_round_reset(&cc->u.vegas);
}

static void vegas_on_rto(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	cc->ssthresh = vegas_ssthresh(cc, in_flight, now_us);
	cc->cwnd = cc->mss;	/* RFC 5681 §3.1 loss window */
}

static void vegas_on_idle(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms)
{
	tcp_cc_restart_window(cc, rto_ms, idle_ms);
	vegas_round_reset(&cc->u.vegas);
}

const struct tcp_cc_ops tcp_cc_vegas_ops = {
	.name = "vegas",
	.init = vegas_init,
	.on_ack = vegas_on_ack,
	.ssthresh = vegas_ssthresh,
	.on_recovery_exit = vegas_on_recovery_exit,
	.on_rto = vegas_on_rto,
	.on_rtt = vegas_on_rtt,
	.on_idle = vegas_on_idle,
};
