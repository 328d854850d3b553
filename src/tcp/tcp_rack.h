/* RACK-TLP loss detection (RFC 8985) over the sent map (tcp_sentmap.h): a segment is lost
 * when one sent sufficiently later has been delivered (§6.2: time, not counts of duplicate
 * ACKs), with a reordering window that starts at zero and widens when D-SACKs show the
 * losses were reordering (§6.2 step 4); the tail loss probe's state (§7).
 *
 * Pure logic: times in µs (mod 2^32) passed in, no timers. The TCP core arms the reorder
 * timer with the timeout tcp_rack_detect returns and the probe timer with tcp_tlp_pto_us. */
#ifndef DPS_TCP_TCP_RACK_H
#define DPS_TCP_TCP_RACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_sentmap.h"

#define TCP_RACK_REO_PERSIST 16     /* recoveries a widened window lasts (§6.2 step 4) */
#define TCP_TLP_MAX_ACK_DELAY_US 200000 /* WCDelAckT: worst-case delayed ACK (§7.2) */
#define TCP_TLP_MIN_US 2000         /* timer granularity added to 2·SRTT (Linux: 2 ticks) */

struct tcp_rack {
	bool has;                   /* xmit_us, end_seq and rtt_us are valid */
	uint32_t xmit_us;           /* RACK.xmit_ts: the delivered segment sent last */
	uint32_t end_seq;           /* RACK.end_seq */
	uint32_t rtt_us;            /* RACK.rtt */
	uint32_t fack;              /* RACK.fack: highest sequence delivered */
	uint32_t min_rtt_us;        /* RACK.min_RTT */
	bool reordering_seen;       /* RACK.reordering_seen */
	uint8_t reo_wnd_mult;       /* RACK.reo_wnd_mult */
	uint8_t reo_wnd_persist;    /* RACK.reo_wnd_persist */
	bool dsack_round_valid;
	uint32_t dsack_round;       /* RACK.dsack_round: no widening until this is acked */
	/* Tail loss probe (§7) */
	bool tlp_out;               /* a probe is outstanding: TLP.end_seq is valid */
	bool tlp_retrans;           /* TLP.is_retrans */
	uint32_t tlp_end_seq;       /* TLP.end_seq: SND.NXT when the probe went */
};

void tcp_rack_init(struct tcp_rack *rk, uint32_t una);

/* §6.2 steps 1-3 with one ACK's deliveries (d, complete). */
void tcp_rack_update(struct tcp_rack *rk, const struct tcp_sm_delivery *d);

/* §6.2 step 4, on a D-SACK: widen the window once per round trip (snd_una: the ACK's,
 * snd_max: the highest sent). */
void tcp_rack_dsack(struct tcp_rack *rk, uint32_t snd_una, uint32_t snd_max);

/* A loss recovery ended: a widened window narrows again after TCP_RACK_REO_PERSIST of them
 * without D-SACK (§6.2 step 4). */
void tcp_rack_recovery_done(struct tcp_rack *rk);

/* §6.2 step 4, RACK.reo_wnd in µs. in_recovery: fast or RTO recovery; sacked_segs: how many
 * segments the scoreboard holds as SACKed; srtt_us caps it. */
uint32_t tcp_rack_reo_wnd(const struct tcp_rack *rk, bool in_recovery, uint32_t sacked_segs,
			  uint32_t srtt_us);

/* §6.2 step 5: marks lost every in-flight record sent before RACK.xmit_ts that has waited
 * RACK.rtt + reo_wnd. Returns the bytes newly marked; *timeout_us is the wait until the next
 * record qualifies (0: none is pending), for the reorder timer (§6.3). */
uint32_t tcp_rack_detect(struct tcp_rack *rk, struct tcp_sentmap *sm, uint32_t now_us,
			 uint32_t reo_wnd_us, uint32_t *timeout_us);

/* §7.2: the probe timeout: 2·SRTT, plus the worst-case delayed ACK when one segment is in
 * flight, never beyond the time left until the RTO (rto_left_us). */
uint32_t tcp_tlp_pto_us(uint32_t srtt_us, bool one_segment, uint32_t rto_left_us);

#endif
