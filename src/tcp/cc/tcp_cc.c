/* Congestion control plumbing: the registry of controllers by name with a settable default,
 * a connection's set-up, and the Reno arithmetic (slow start, byte counting, restart and
 * post-recovery windows) that every controller builds on. The controllers themselves are in
 * tcp_cc_<name>.c; tcp_cc.h says who owns cwnd when. */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "tcp_cc.h"

/* --- Registry --------------------------------------------------------------------------- */

#define TCP_CC_ENTRY(n) &tcp_cc_##n##_ops,
static const struct tcp_cc_ops *const tcp_cc_all[] = {
	TCP_CC_LIST(TCP_CC_ENTRY)
};
#undef TCP_CC_ENTRY

#define TCP_CC_COUNT (sizeof(tcp_cc_all) / sizeof(tcp_cc_all[0]))

/* Written by the control thread, read by workers when they open a connection. */
static const struct tcp_cc_ops *_Atomic tcp_cc_default_ops = &tcp_cc_cubic_ops;

const struct tcp_cc_ops *tcp_cc_find(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < TCP_CC_COUNT; i++)
		if (strcmp(tcp_cc_all[i]->name, name) == 0)
			return tcp_cc_all[i];
	return NULL;
}

const struct tcp_cc_ops *tcp_cc_default(void)
{
	return atomic_load_explicit(&tcp_cc_default_ops, memory_order_relaxed);
}

int tcp_cc_set_default(const char *name)
{
	const struct tcp_cc_ops *ops = tcp_cc_find(name);

	if (ops == NULL)
		return -ENOENT;
	atomic_store_explicit(&tcp_cc_default_ops, ops, memory_order_relaxed);
	return 0;
}

unsigned tcp_cc_names(const char **out, unsigned max)
{
	unsigned i;

	for (i = 0; i < max && i < TCP_CC_COUNT; i++)
		out[i] = tcp_cc_all[i]->name;
	return (unsigned)TCP_CC_COUNT;
}

/* --- Shared arithmetic ------------------------------------------------------------------ */

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

static uint32_t max_u32(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

uint32_t tcp_cc_initial_window(uint32_t mss)
{
	uint64_t ten = 10 * (uint64_t)mss;
	uint64_t two = 2 * (uint64_t)mss > 14600 ? 2 * (uint64_t)mss : 14600;

	return (uint32_t)(ten < two ? ten : two);
}

uint32_t tcp_cc_reno_ssthresh(const struct tcp_cc *cc, uint32_t in_flight)
{
	return max_u32(in_flight / 2, 2 * cc->mss);
}

uint32_t tcp_cc_slow_start(struct tcp_cc *cc, uint32_t acked)
{
	uint32_t limit = min_u32(cc->ssthresh, TCP_CC_CWND_MAX);
	uint32_t inc = min_u32(acked, 2 * cc->mss);	/* RFC 3465 §2.2, L = 2 */
	uint32_t room;

	if (cc->cwnd >= limit)
		return acked;
	room = limit - cc->cwnd;
	if (inc <= room) {
		cc->cwnd += inc;
		return 0;
	}
	/* Reached ssthresh: the rest of this ACK counts in congestion avoidance, as Linux does
	 * (RFC 5681 §3.1 allows either algorithm when cwnd == ssthresh). */
	cc->cwnd = limit;
	return acked - room;
}

void tcp_cc_reno_avoid(struct tcp_cc *cc, uint32_t acked, uint32_t *ca_acked)
{
	uint64_t n = (uint64_t)*ca_acked + acked;

	if (n >= cc->cwnd) {
		/* RFC 3465 §2.1: bytes_acked -= cwnd, cwnd += SMSS; at most once per ACK, and a
		 * stretch ACK larger than two windows does not bank credit for later. */
		n -= cc->cwnd;
		cc->cwnd = min_u32(cc->cwnd + cc->mss, TCP_CC_CWND_MAX);
		if (n >= cc->cwnd)
			n = cc->cwnd - 1;
	}
	*ca_acked = (uint32_t)n;
}

void tcp_cc_reno_recovery_exit(struct tcp_cc *cc, uint32_t in_flight)
{
	uint64_t fs = (uint64_t)max_u32(in_flight, cc->mss) + cc->mss;

	cc->cwnd = fs < cc->ssthresh ? (uint32_t)fs : cc->ssthresh;
	cc->cwnd = min_u32(max_u32(cc->cwnd, cc->mss), TCP_CC_CWND_MAX);
}

void tcp_cc_restart_window(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms)
{
	/* RFC 5681 §4.1: RW = min(IW, cwnd); cwnd is set to no more than RW. */
	if (idle_ms > rto_ms)
		cc->cwnd = min_u32(cc->cwnd, tcp_cc_initial_window(cc->mss));
}

void tcp_cc_rtt_min(struct tcp_cc *cc, uint32_t rtt_us)
{
	if (rtt_us != 0 && (cc->min_rtt_us == 0 || rtt_us < cc->min_rtt_us))
		cc->min_rtt_us = rtt_us;
}

void tcp_cc_reno_ack(struct tcp_cc *cc, uint32_t acked, uint32_t *ca_acked)
{
	if (cc->cwnd < cc->ssthresh) {
		acked = tcp_cc_slow_start(cc, acked);
		if (acked == 0)
			return;
	}
	tcp_cc_reno_avoid(cc, acked, ca_acked);
}

/* Digit-by-digit cube root in base 2: three bits of x per step, one bit of the root. At each
 * step (2y + 1)^3 - (2y)^3 = 3 * 2y * (2y + 1) + 1 is what setting the new bit costs. */
uint32_t tcp_cc_icbrt64(uint64_t x)
{
	uint64_t y = 0;
	int s;

	for (s = 63; s >= 0; s -= 3) {
		uint64_t b;

		y <<= 1;
		b = 3 * y * (y + 1) + 1;
		if ((x >> s) >= b) {
			x -= b << s;
			y++;
		}
	}
	return (uint32_t)y;
}

/* --- Connection set-up ---------------------------------------------------------------- */

void tcp_cc_set_ops(struct tcp_cc *cc, const struct tcp_cc_ops *ops)
{
	cc->ops = ops != NULL ? ops : tcp_cc_default();
	memset(&cc->u, 0, sizeof(cc->u));
	cc->pacing_rate = 0;	/* a loss-based controller does not pace */
	if (cc->ops->init != NULL)
		cc->ops->init(cc);
}

void tcp_cc_init(struct tcp_cc *cc, const struct tcp_cc_ops *ops, uint32_t mss)
{
	memset(cc, 0, sizeof(*cc));
	cc->mss = mss == 0 ? TCP_CC_MSS_DEFAULT : min_u32(mss, UINT16_MAX);
	cc->cwnd = tcp_cc_initial_window(cc->mss);	/* RFC 6928 §2 */
	cc->ssthresh = TCP_CC_SSTHRESH_INF;		/* RFC 5681 §3.1 */
	tcp_cc_set_ops(cc, ops);
}
