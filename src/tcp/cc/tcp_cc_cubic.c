/* CUBIC congestion control (RFC 9438), the default controller.
 *
 * After a reduction the window follows W_cubic(t) = C * (t - K)^3 + W_max (§4.2): concave up
 * to the window where the last loss happened, flat around it, then convex as it probes
 * beyond (§4.4, §4.5). It never grows slower than the Reno-friendly estimate W_est (§4.3).
 * On congestion ssthresh = 0.7 * FlightSize (§4.6) and W_max is lowered when the window is
 * shrinking from one loss to the next (fast convergence, §4.7). After an RTO the next stage
 * starts a fresh curve with K = 0 (§4.8). Below ssthresh it slow starts as Reno does (§4.10;
 * HyStart++ is not implemented).
 *
 * Integer arithmetic throughout. The RFC counts windows in segments and time in seconds;
 * here windows are bytes and t, K are milliseconds, so W_cubic in bytes is
 * 0.4 * (t - K)^3 * mss / 10^9 + W_max and K^3 = (W_max - cwnd_epoch) * 2.5 * 10^9 / mss.
 * With mss < 2^16, windows < 2^32 and |t - K| capped at 2^21 ms (35 minutes: far past any
 * window a 32-bit cwnd can hold) no intermediate product exceeds 2^64. The only division on
 * the per-ACK path is by constants and by cwnd; the cube root runs once per stage. The RTT in
 * W_cubic(t + RTT) is the smallest sample seen, as Linux uses. */
#include "tcp_cc.h"

#define CUBIC_K3_PER_BYTE 2500000000ull	/* 10^9 ms^3/s^3 / C, C = 0.4 (§4.2) */
#define CUBIC_D_MAX_MS (1ull << 21)		/* cap on |t - K|, keeps (t - K)^3 < 2^64 */
#define CUBIC_E10 10000000000ull
#define CUBIC_BETA_NUM 7			/* β_cubic = 0.7 (§4.6) */
#define CUBIC_BETA_DEN 10
#define CUBIC_FC_NUM 17				/* (1 + β_cubic) / 2 = 0.85 (§4.7) */
#define CUBIC_FC_DEN 20
/* α_cubic = 3 (1 - β_cubic) / (1 + β_cubic) = 9/17 (§4.3, Figure 3); 17/17 once W_est has
 * reached cwnd_prior. */
#define CUBIC_ALPHA_NUM 9
#define CUBIC_ALPHA_ONE 17
#define CUBIC_ALPHA_DEN 17

static uint32_t cubic_min(uint64_t a, uint64_t b)
{
	return (uint32_t)(a < b ? a : b);
}

static uint64_t cubic_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The arithmetic needs 1 <= mss < 2^16 (tcp_cc.h asks the core for that anyway). */
static uint64_t cubic_mss(uint32_t mss)
{
	if (mss == 0)
		return 1;
	return mss > UINT16_MAX ? UINT16_MAX : mss;
}

uint32_t tcp_cc_cubic_k_ms(uint32_t w_max, uint32_t cwnd_epoch, uint32_t mss)
{
	if (cwnd_epoch >= w_max)
		return 0;
	/* (2^32 - 1) * 2.5e9 < 1.08e19 < 2^64 */
	return tcp_cc_icbrt64((uint64_t)(w_max - cwnd_epoch) * CUBIC_K3_PER_BYTE /
			      cubic_mss(mss));
}

uint32_t tcp_cc_cubic_window(uint64_t t_ms, uint32_t k_ms, uint32_t w_max, uint32_t mss)
{
	uint64_t d = t_ms >= k_ms ? t_ms - k_ms : k_ms - t_ms;
	uint64_t m = 4 * cubic_mss(mss);	/* C * 10 * mss, < 2^18 */
	uint64_t q, delta;

	if (d > CUBIC_D_MAX_MS)
		d = CUBIC_D_MAX_MS;
	q = d * d * d;				/* <= 2^63 */
	/* q * 0.4 * mss / 10^9 = q * m / 10^10, split so each product stays below 2^52. */
	delta = q / CUBIC_E10 * m + q % CUBIC_E10 * m / CUBIC_E10;
	if (t_ms >= k_ms)
		return cubic_min((uint64_t)w_max + delta, TCP_CC_CWND_MAX);
	return delta >= w_max ? 0 : w_max - (uint32_t)delta;
}

static void cubic_init(struct tcp_cc *cc)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;

	c->in_epoch = false;
	c->restart = true;	/* no congestion seen yet: the first stage starts with K = 0 */
	c->w_max = 0;
	c->cwnd_prior = 0;
}

/* The first congestion-avoidance ACK of a stage (§4.2): t_epoch = now, cwnd_epoch = cwnd. */
static void cubic_epoch_begin(struct tcp_cc *cc, uint64_t now_us)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;

	c->in_epoch = true;
	c->epoch_us = now_us;
	c->last_us = now_us;
	c->cwnd_epoch = cc->cwnd;
	/* §4.8: after a timeout (and at the start, before any W_max) W_max is the window at
	 * the beginning of this stage. Likewise when the window is already past W_max (slow
	 * start beyond it): the plateau lies behind, so probe from here. */
	if (c->restart || c->w_max < cc->cwnd) {
		c->w_max = cc->cwnd;
		c->restart = false;
	}
	c->k_ms = tcp_cc_cubic_k_ms(c->w_max, c->cwnd_epoch, cc->mss);
	c->w_est = cc->cwnd;	/* §4.3: W_est = cwnd_epoch */
	c->est_frac = 0;
	c->ca_frac = 0;
}

static void cubic_avoid(struct tcp_cc *cc, uint32_t acked, uint64_t now_us)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;
	uint64_t mss = cubic_mss(cc->mss);
	uint32_t cwnd = cc->cwnd;
	uint64_t t_us = now_us > c->epoch_us ? now_us - c->epoch_us : 0;
	uint64_t den = CUBIC_ALPHA_DEN * (uint64_t)cwnd;
	uint32_t w_t, target, most;

	/* Both rules are per segment acknowledged; an ACK counts for at most one window, so
	 * a stretch ACK (possible when the flight exceeds a reduced cwnd) cannot add more than
	 * a round trip's growth. */
	if (acked > cwnd)
		acked = cwnd;
	/* §4.3 Figure 4: W_est += α_cubic * segments_acked / cwnd, in bytes
	 * α * acked * mss / cwnd; α becomes 1 once W_est has reached cwnd_prior. */
	c->est_frac += (c->w_est >= c->cwnd_prior ? CUBIC_ALPHA_ONE : CUBIC_ALPHA_NUM) *
		       (uint64_t)acked * mss;
	if (c->est_frac >= den) {
		c->w_est = cubic_min((uint64_t)c->w_est + c->est_frac / den, TCP_CC_CWND_MAX);
		c->est_frac %= den;
	}

	w_t = tcp_cc_cubic_window(t_us / 1000, c->k_ms, c->w_max, cc->mss);
	if (w_t < c->w_est) {
		/* §4.3 Reno-friendly region: cwnd = W_est. An ACK never shrinks the window:
		 * cwnd may sit above W_est after growing towards W_cubic(t + RTT). */
		if (c->w_est > cwnd)
			cc->cwnd = c->w_est;
		return;
	}

	/* §4.4 (cwnd < W_max, concave) and §4.5 (convex) grow alike: the target is
	 * W_cubic(t + RTT) clamped to [cwnd, 1.5 cwnd], and cwnd += (target - cwnd) / cwnd per
	 * segment acked, that is (target - cwnd) * acked / cwnd bytes. */
	target = tcp_cc_cubic_window(cubic_add_sat(t_us, cc->min_rtt_us) / 1000, c->k_ms,
				     c->w_max, cc->mss);
	most = cwnd + cwnd / 2;		/* cwnd <= 2^31: no wrap */
	if (target > most)
		target = most;
	if (target <= cwnd)
		return;
	c->ca_frac += (uint64_t)(target - cwnd) * acked;	/* < 2^30 * 2^32 + 2^31 */
	if (c->ca_frac >= cwnd) {
		cc->cwnd = cubic_min((uint64_t)cwnd + c->ca_frac / cwnd, TCP_CC_CWND_MAX);
		c->ca_frac %= cwnd;
	}
}

static void cubic_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;
	uint32_t acked = a->acked;

	if (a->app_limited || acked == 0) {
		/* §5.8: no growth while the window is not used, and t must not count the time. */
		if (c->in_epoch && a->now_us > c->last_us)
			c->epoch_us = cubic_add_sat(c->epoch_us, a->now_us - c->last_us);
		if (a->now_us > c->last_us)
			c->last_us = a->now_us;
		return;
	}
	c->last_us = a->now_us;
	if (cc->cwnd < cc->ssthresh) {
		acked = tcp_cc_slow_start(cc, acked);	/* §4.10 */
		if (acked == 0)
			return;
	}
	if (!c->in_epoch)
		cubic_epoch_begin(cc, a->now_us);
	cubic_avoid(cc, acked, a->now_us);
}

static uint32_t cubic_ssthresh(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;
	uint32_t cwnd = cc->cwnd;
	uint32_t ss;

	(void)now_us;
	/* §4.7 fast convergence: a window that stopped short of the previous W_max means a
	 * new flow is taking its share; give way by remembering less than we reached. */
	if (cwnd < c->w_max)
		c->w_max = (uint32_t)((uint64_t)cwnd * CUBIC_FC_NUM / CUBIC_FC_DEN);
	else
		c->w_max = cwnd;
	c->cwnd_prior = cwnd;	/* §4.6 */
	c->restart = false;
	c->in_epoch = false;	/* the next stage begins at the next congestion-avoidance ACK */
	/* §4.6: ssthresh = flight_size * β_cubic, at least 2 SMSS. */
	ss = (uint32_t)((uint64_t)in_flight * CUBIC_BETA_NUM / CUBIC_BETA_DEN);
	return ss > 2 * cc->mss ? ss : 2 * cc->mss;
}

static void cubic_on_recovery_exit(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)now_us;
	tcp_cc_reno_recovery_exit(cc, in_flight);
}

static void cubic_on_rto(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	/* §4.8: Reno's reaction to a timeout, with ssthresh from β_cubic as in §4.6. */
	cc->ssthresh = cubic_ssthresh(cc, in_flight, now_us);
	cc->cwnd = cc->mss;
	cc->u.cubic.restart = true;
}

static void cubic_on_rtt(struct tcp_cc *cc, uint32_t rtt_us, uint64_t now_us)
{
	(void)now_us;
	tcp_cc_rtt_min(cc, rtt_us);
}

static void cubic_on_idle(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms)
{
	struct tcp_cc_cubic *c = &cc->u.cubic;
	uint32_t before = cc->cwnd;

	tcp_cc_restart_window(cc, rto_ms, idle_ms);
	if (!c->in_epoch)
		return;
	if (cc->cwnd != before) {
		/* The curve was anchored to a window that is gone: begin a new stage when
		 * congestion avoidance resumes (K then comes from the same W_max). */
		c->in_epoch = false;
		return;
	}
	/* §5.8: t does not include the idle period. idle_ms runs from the last transmission,
	 * up to an RTT before the window emptied, so t may lose that much; t_epoch can then lie
	 * ahead of the next ACK, which reads as t = 0. */
	c->epoch_us = cubic_add_sat(c->epoch_us, idle_ms > UINT64_MAX / 1000 ? UINT64_MAX
								   : idle_ms * 1000);
}

const struct tcp_cc_ops tcp_cc_cubic_ops = {
	.name = "cubic",
	.init = cubic_init,
	.on_ack = cubic_on_ack,
	.ssthresh = cubic_ssthresh,
	.on_recovery_exit = cubic_on_recovery_exit,
	.on_rto = cubic_on_rto,
	.on_rtt = cubic_on_rtt,
	.on_idle = cubic_on_idle,
};
