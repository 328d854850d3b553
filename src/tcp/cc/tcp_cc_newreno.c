/* NewReno congestion control: the window evolution of RFC 5681 §3.1. NewReno's partial-ACK
 * handling during fast recovery (RFC 6582) belongs to the TCP core, which owns recovery.
 *
 * Slow start grows cwnd by min(acked, 2 * SMSS) per ACK (RFC 3465 §2.2 byte counting with
 * L = 2). Congestion avoidance counts bytes (RFC 3465 §2.1): cwnd += SMSS once a full cwnd of
 * data has been acknowledged. Chosen over RFC 5681 eq. 3 (cwnd += SMSS * SMSS / cwnd per ACK)
 * because it gives exactly one SMSS per round trip whatever the receiver's ACK pattern: eq. 3
 * grows half as fast against delayed ACKs and can be gamed by ACK division (RFC 3465 §2.3).
 * On a congestion signal ssthresh = max(FlightSize / 2, 2 * SMSS) (RFC 5681 eq. 4). */
#include "tcp_cc.h"

static void newreno_init(struct tcp_cc *cc)
{
	cc->u.newreno.ca_acked = 0;
}

static void newreno_on_ack(struct tcp_cc *cc, const struct tcp_cc_ack *a)
{
	if (a->app_limited || a->acked == 0)
		return;		/* a window that is not used must not grow (RFC 7661) */
	tcp_cc_reno_ack(cc, a->acked, &cc->u.newreno.ca_acked);
}

static uint32_t newreno_ssthresh(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)now_us;
	cc->u.newreno.ca_acked = 0;
	return tcp_cc_reno_ssthresh(cc, in_flight);
}

static void newreno_on_recovery_exit(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	(void)now_us;
	tcp_cc_reno_recovery_exit(cc, in_flight);
}

static void newreno_on_rto(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us)
{
	cc->ssthresh = newreno_ssthresh(cc, in_flight, now_us);	/* RFC 5681 eq. 4 */
	cc->cwnd = cc->mss;					/* loss window */
}

static void newreno_on_rtt(struct tcp_cc *cc, uint32_t rtt_us, uint64_t now_us)
{
	(void)now_us;
	tcp_cc_rtt_min(cc, rtt_us);
}

static void newreno_on_idle(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms)
{
	tcp_cc_restart_window(cc, rto_ms, idle_ms);
}

const struct tcp_cc_ops tcp_cc_newreno_ops = {
	.name = "newreno",
	.init = newreno_init,
	.on_ack = newreno_on_ack,
	.ssthresh = newreno_ssthresh,
	.on_recovery_exit = newreno_on_recovery_exit,
	.on_rto = newreno_on_rto,
	.on_rtt = newreno_on_rtt,
	.on_idle = newreno_on_idle,
};
