/* Pluggable TCP congestion control: the interface between the TCP core and a congestion
 * controller, the registry of controllers, and the Reno arithmetic controllers share.
 *
 * Division of labour, as in Linux: the core detects loss and runs recovery (without SACK,
 * fast retransmit after three duplicate ACKs and NewReno partial ACKs per RFC 6582; with
 * SACK, RACK-TLP (RFC 8985) over the sent map with PRR (RFC 6937); the retransmission timer,
 * the once-per-window ECN reaction of RFC 3168 §6.1.2) and calls the connection's controller
 * (cc->ops) at the points documented on each hook. The controller owns how cwnd and ssthresh
 * evolve outside recovery and picks ssthresh on congestion.
 *
 * Who writes cwnd and ssthresh when:
 *   open (no recovery)     the controller: on_ack, on_idle
 *   congestion signal      the core: ssthresh = ops->ssthresh(), then cwnd as its recovery
 *                          algorithm says (SACK: RFC 6937 PRR, or ssthresh when a tail loss
 *                          probe revealed the loss, RFC 8985 §7.4; RFC 5681: ssthresh +
 *                          3 SMSS, inflated; ECN: ssthresh)
 *   during recovery / CWR  the core; on_ack is not called
 *   recovery exit          the controller: on_recovery_exit
 *   retransmission timeout the controller: on_rto (first timeout of a segment); the core
 *                          sets cwnd = mss itself on a repeated timeout of the same segment
 *
 * All windows are in BYTES; SMSS is cc->mss. Time is in microseconds (ms where a hook says
 * so) on a monotonic clock; now_us must not go backwards between calls on one tcp_cc. The
 * per-ACK hooks use integer arithmetic only. No allocation: a controller's state lives in
 * the fixed-size union of struct tcp_cc. Not thread-safe: a tcp_cc belongs to one
 * connection on one worker.
 *
 * Every hook of the built-in controllers is non-NULL and keeps
 * mss <= cwnd <= TCP_CC_CWND_MAX and ssthresh >= 2 * mss once set. Controllers: "cubic"
 * (RFC 9438; the default, as in Linux), "newreno" (RFC 5681 with RFC 3465 byte counting),
 * "vegas" (Brakmo & Peterson 1995), "bbr" (BBR v1, draft-cardwell-iccrg-bbr-congestion-control;
 * model-based: it needs the core's cong_control, rate samples and pacing). */
#ifndef DPS_TCP_CC_TCP_CC_H
#define DPS_TCP_CC_TCP_CC_H

#include <stdbool.h>
#include <stdint.h>

/* ssthresh before the first congestion signal: "arbitrarily high" (RFC 5681 §3.1). */
#define TCP_CC_SSTHRESH_INF UINT32_MAX
/* cwnd never grows past this: twice the largest window TCP can advertise (2^30, RFC 7323
 * §2.2), and small enough that the sum of two windows cannot wrap 32 bits. */
#define TCP_CC_CWND_MAX (1u << 31)
/* tcp_cc_init takes an MSS of 0 as this (RFC 9293 §3.7.1 default). */
#define TCP_CC_MSS_DEFAULT 536

struct tcp_cc;

/* One ACK that advanced SND.UNA (never a duplicate ACK), received outside loss recovery. */
struct tcp_cc_ack {
	/* Bytes by which this ACK advanced SND.UNA: cumulative acknowledgement only; bytes
	 * SACKed earlier or by this ACK do not count. A controller ignores acked == 0. */
	uint32_t acked;
	/* FlightSize before this ACK: SND.NXT - SND.UNA with the old SND.UNA (RFC 5681 §2).
	 * Vegas uses it to find where a round trip ends. */
	uint32_t in_flight;
	/* This ACK's RTT sample (µs, 0 = none), for information only: the core delivers every
	 * sample through on_rtt, before on_ack, and controllers take samples only from there. */
	uint32_t rtt_us;
	uint64_t now_us;
	/* cwnd was not what limited the sender: the application had no more data, or the
	 * peer's receive window was the limit (RFC 9438 §5.8; RFC 7661's "rate-limited"). The
	 * core's rule; a sound one is "in_flight + mss < cwnd when this ACK arrived and no
	 * unsent data could have gone out". Controllers do not grow cwnd on such an ACK, and
	 * CUBIC's clock stops (RFC 9438 §5.8). */
	bool app_limited;
};

/* Where the core's loss recovery stands; the core writes cc->state before each hook call.
 * A model-based controller (cong_control) reads it to hold cwnd during recovery and to
 * restore it after (Linux's tcp_ca_state, reduced to what a controller needs). */
enum tcp_cc_state {
	TCP_CC_OPEN,		/* no loss being repaired */
	TCP_CC_RECOVERY,	/* fast recovery: RACK/SACK found a loss, or three duplicate ACKs */
	TCP_CC_LOSS,		/* after a retransmission timeout, until everything sent then is
				 * acknowledged */
};

/* A delivery rate sample (draft-cheng-iccrg-delivery-rate-estimation §3): what one ACK
 * delivered and over what interval. The core makes one for every ACK that acknowledged or
 * SACKed data or marked data lost, and hands it to cong_control. All amounts in bytes. */
struct tcp_rate_sample {
	uint64_t now_us;
	uint64_t delivered;	  /* C.delivered: bytes delivered (acked or SACKed) since the
				   * connection opened, this ACK included */
	uint64_t prior_delivered; /* C.delivered when the most recently sent packet this ACK
				   * delivered was sent: a round trip ends once it passes the
				   * value of delivered at the round's start */
	uint32_t delivered_bytes; /* rs.delivered: bytes delivered over interval_us */
	uint32_t interval_us;	  /* rs.interval: max(send elapsed, ack elapsed); 0 = no rate
				   * sample from this ACK (delivered_bytes then means nothing) */
	uint32_t rtt_us;	  /* RTT of the most recently sent packet this ACK delivered
				   * (never a retransmission, Karn), 0 = none */
	uint32_t acked_sacked;	  /* bytes newly acknowledged or SACKed by this ACK */
	uint32_t newly_lost;	  /* bytes this ACK's processing marked lost */
	uint32_t prior_in_flight; /* bytes in flight (the pipe) before this ACK */
	uint32_t in_flight;	  /* bytes in flight after it, losses marked */
	bool is_app_limited;	  /* the sample's packet was sent while the application, not
				   * cwnd, limited the sender: its rate is a lower bound only */
};

/* A congestion controller. All hooks of the built-in loss-based controllers are non-NULL;
 * an outside controller may leave on_rtt and on_idle NULL (the core checks those two), and
 * cong_control is NULL except in a model-based controller (BBR). */
struct tcp_cc_ops {
	const char *name;	/* "bbr", "cubic", "newreno", "vegas": what tcp_cc_find takes */

	/* Called by tcp_cc_init and tcp_cc_set_ops only, never by the core: sets up cc->u.
	 * mss, cwnd, ssthresh and min_rtt_us are already set (fresh connection: the initial
	 * window, infinite ssthresh, no RTT; switch: the live values). */
	void (*init)(struct tcp_cc *cc);

	/* Every ACK that advanced SND.UNA while not in fast recovery, not in the CWR period
	 * after an ECN reaction, and not at the full ACK that ends recovery (on_recovery_exit
	 * handles that one). After an RTO the core does call it: the sender slow starts from
	 * the loss window (RFC 5681 §3.1). Grows cwnd: slow start while cwnd < ssthresh
	 * (RFC 5681 §3.1, RFC 3465 §2.2 with L = 2), congestion avoidance from cwnd >= ssthresh.
	 * Vegas may also shrink it. */
	void (*on_ack)(struct tcp_cc *cc, const struct tcp_cc_ack *a);

	/* A congestion signal, at most once per window of data (the core guards with RFC 6582's
	 * "recover" or its ECN recovery point): entering fast recovery (RFC 5681 §3.2 step 2;
	 * with SACK, when RACK marks a segment lost, RFC 8985 §6.2, or the ACK of a tail loss
	 * probe reveals a loss, §7.4) or reacting to ECN-Echo (RFC 3168 §6.1.2). in_flight is
	 * FlightSize (SND.NXT - SND.UNA) when the signal was detected; cc->cwnd must still be the
	 * window from before the signal. Returns the new ssthresh, >= 2 * mss, and records what
	 * the controller needs (CUBIC: W_max, RFC 9438 §4.6-4.7) but writes neither cwnd nor
	 * ssthresh: the core stores the result in cc->ssthresh and sets cwnd for recovery. */
	uint32_t (*ssthresh)(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us);

	/* Recovery is over: the full ACK of RFC 6582 §3.2 step 3 (RFC 6675: RecoveryPoint
	 * acknowledged), or the end of the CWR period, one window after an ECN reaction.
	 * in_flight is FlightSize after that ACK. Sets cwnd = min(ssthresh, max(in_flight, mss)
	 * + mss), RFC 6582 §3.2 step 3 option (1), which cannot release a burst when little is
	 * in flight. The full ACK itself is not also passed to on_ack. */
	void (*on_recovery_exit)(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us);

	/* The retransmission timer expired and the oldest segment had not been retransmitted
	 * by the timer before (first timeout of this loss episode; RFC 5681 §3.1 holds ssthresh
	 * on later ones, where the core only sets cwnd = mss). in_flight is FlightSize before the
	 * timeout. Sets ssthresh like ssthresh() does and cwnd = the loss window, 1 SMSS
	 * (RFC 5681 §3.1). Also ends any recovery: no on_recovery_exit follows. */
	void (*on_rto)(struct tcp_cc *cc, uint32_t in_flight, uint64_t now_us);

	/* An RTT sample (µs, > 0), taken under Karn's rule (RFC 6298 §3) or from timestamps
	 * (RFC 7323 §4), in or out of recovery, before the on_ack of the same ACK. Updates
	 * cc->min_rtt_us. */
	void (*on_rtt)(struct tcp_cc *cc, uint32_t rtt_us, uint64_t now_us);

	/* About to send new data after the connection was idle (nothing in flight) for idle_ms;
	 * rto_ms is the current RTO. Call it for every idle period, long or short: when idle_ms
	 * > rto_ms the controller sets cwnd = min(cwnd, RW) with the restart window
	 * RW = min(IW, cwnd) (RFC 5681 §4.1), keeping ssthresh; in every case CUBIC takes the
	 * idle time out of its clock (RFC 9438 §5.8). BBR keeps cwnd (pacing spreads the restart)
	 * and paces at its bandwidth estimate until data is delivered again. */
	void (*on_idle)(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms);

	/* A model-based controller (Linux's cong_control): when non-NULL the core calls it with
	 * every rate sample, in and out of recovery, after on_rtt, and calls neither on_ack nor
	 * applies its own recovery window (PRR): the controller alone sets cwnd and
	 * pacing_rate. ssthresh, on_rto and on_recovery_exit are still called at their points;
	 * such a controller leaves ssthresh as it is (returns cc->ssthresh) and keeps the
	 * window it wants to return to after recovery itself. */
	void (*cong_control)(struct tcp_cc *cc, const struct tcp_rate_sample *rs);
};

/* NewReno: the congestion-avoidance byte counter (RFC 3465 §2.1). */
struct tcp_cc_newreno {
	uint32_t ca_acked;	/* bytes acked towards the next +SMSS */
};

/* CUBIC (RFC 9438 §4). The RFC's quantities in segments are kept in bytes; t and K in ms. */
struct tcp_cc_cubic {
	uint64_t epoch_us;	/* t_epoch: start of this congestion-avoidance stage (§4.2) */
	uint64_t last_us;	/* previous on_ack, to stop the clock while app-limited (§5.8) */
	uint64_t ca_frac;	/* remainder of sum((target - cwnd) * acked) / cwnd (§4.4) */
	uint64_t est_frac;	/* remainder of the W_est increase (§4.3), units 1/(17 cwnd) */
	uint32_t w_max;		/* W_max: cwnd just before the last reduction (§4.6, §4.7) */
	uint32_t cwnd_prior;	/* cwnd_prior: cwnd when ssthresh was last set (§4.3, §4.6) */
	uint32_t cwnd_epoch;	/* cwnd_epoch: cwnd at the start of the stage (§4.2) */
	uint32_t w_est;		/* W_est, the Reno-friendly estimate (§4.3) */
	uint32_t k_ms;		/* K (§4.2 Figure 2) */
	bool in_epoch;		/* epoch_us, cwnd_epoch, k_ms, w_est are valid */
	bool restart;		/* no usable W_max (start, after an RTO): the next stage takes
				 * W_max = cwnd_epoch, so K = 0 (§4.8) */
};

/* Vegas: one adjustment per round trip. A round ends once the bytes in flight at its start
 * have been acknowledged (the boundary Linux marks with the sequence number sent last,
 * measured in bytes here). */
struct tcp_cc_vegas {
	uint32_t ca_acked;	/* Reno byte counter, for the fallback */
	uint32_t round_left;	/* bytes still to be acked before this round ends */
	uint32_t round_min_us;	/* smallest RTT sample in this round, UINT32_MAX = none */
	uint32_t round_samples;	/* RTT samples in this round */
	bool active;		/* the last round had enough samples: Vegas, not Reno, rules */
};

/* BBR v1 (draft-cardwell-iccrg-bbr-congestion-control-00 §4; tcp_cc_bbr.c). Its modes: */
enum tcp_cc_bbr_mode {
	TCP_CC_BBR_STARTUP,	/* doubling the sending rate each round to find the bandwidth */
	TCP_CC_BBR_DRAIN,	/* emptying the queue STARTUP built */
	TCP_CC_BBR_PROBE_BW,	/* cruising at the bandwidth, probing with the gain cycle */
	TCP_CC_BBR_PROBE_RTT,	/* 4 segments in flight for a while, to measure the RTT again */
};

struct tcp_cc_bbr {
	/* Windowed maximum of the delivery rate (BtlBw, bytes/s) over the last 10 rounds: the
	 * best, second and third best candidates with the round each was seen in, so that
	 * when the best ages out the next takes over (K. Nichols' windowed min/max). */
	uint64_t bw[3];
	uint32_t bw_round[3];
	uint32_t round_count;	/* round trips since the start (wraps harmlessly) */
	uint64_t next_round_delivered; /* a round ends once prior_delivered reaches this */
	uint64_t full_bw;	/* bw that the full-pipe test last saw grow by 25 % */
	uint64_t min_rtt_stamp_us; /* when min_rtt_us was last set */
	uint64_t probe_rtt_done_us; /* PROBE_RTT may end at this time, once armed */
	uint64_t cycle_stamp_us; /* start of the current PROBE_BW phase */
	uint64_t last_now_us;	/* time of the last rate sample (on_idle has no clock) */
	uint64_t probe_rtt_app_limited; /* data sent before C.delivered reached this was sent
				 * in PROBE_RTT: its rate samples count as app-limited */
	/* ACK aggregation: bytes delivered since ack_epoch_us beyond what bw explains, the
	 * largest such excess in each of two 5-round slots, and where the slots stand. */
	uint64_t ack_epoch_us;
	uint64_t ack_epoch_acked;
	uint32_t extra_acked[2];
	uint32_t min_rtt_us;	/* RTprop: windowed (10 s) minimum RTT, UINT32_MAX = none */
	uint32_t prior_cwnd;	/* cwnd to return to after recovery, RTO or PROBE_RTT */
	uint16_t pacing_gain;	/* gains in 1/256 */
	uint16_t cwnd_gain;
	uint8_t mode;		/* enum tcp_cc_bbr_mode */
	uint8_t cycle_idx;	/* PROBE_BW phase, 0..7 (0: gain 1.25, 1: gain 0.75) */
	uint8_t prev_state;	/* cc->state at the previous hook, to see recovery start/end */
	uint8_t full_bw_cnt;	/* rounds in a row without 25 % growth */
	uint8_t extra_acked_rounds; /* rounds into the current extra_acked slot */
	uint8_t extra_acked_slot; /* 0 or 1 */
	uint8_t full_bw_reached : 1; /* the pipe was found full: STARTUP is over for good */
	uint8_t round_start : 1; /* this sample ended a round */
	uint8_t packet_conservation : 1; /* first round of recovery */
	uint8_t idle_restart : 1; /* restarted from idle, no data delivered since */
	uint8_t probe_rtt_armed : 1; /* the queue drained: probe_rtt_done_us is set */
	uint8_t probe_rtt_round_done : 1; /* a round passed since PROBE_RTT was armed */
	uint8_t has_seen_rtt : 1; /* the initial pacing rate used a real RTT */
	uint8_t started : 1;	/* the clocks above have been set by a first sample */
};

struct tcp_cc {
	const struct tcp_cc_ops *ops;
	/* SMSS in bytes, 1..65535. tcp_cc_init sets it; the core may write it directly when
	 * the MSS changes (PMTU), controllers read it at each call. */
	uint32_t mss;
	uint32_t cwnd;		/* congestion window, bytes */
	uint32_t ssthresh;	/* slow-start threshold, bytes; TCP_CC_SSTHRESH_INF at first */
	uint32_t min_rtt_us;	/* smallest RTT sample so far (on_rtt keeps it), 0 = none */
	/* Bytes per second the core spaces this connection's segments at, 0 = unpaced (sends as
	 * the window opens). Only cong_control controllers set it. */
	uint64_t pacing_rate;
	uint8_t state;		/* enum tcp_cc_state, written by the core */
	union {
		struct tcp_cc_newreno newreno;
		struct tcp_cc_cubic cubic;
		struct tcp_cc_vegas vegas;
		struct tcp_cc_bbr bbr;
	} u;
};

/* A connection starts: mss (0 = TCP_CC_MSS_DEFAULT, above 65535 = 65535), cwnd = the
 * initial window (RFC 6928 §2), ssthresh = infinite, no RTT sample; ops NULL means
 * tcp_cc_default(). Then ops->init. */
void tcp_cc_init(struct tcp_cc *cc, const struct tcp_cc_ops *ops, uint32_t mss);

/* Switches a live connection to another controller (TCP_CONGESTION): mss, cwnd, ssthresh
 * and min_rtt_us are kept, the new controller's own state starts afresh (ops->init).
 * ops NULL means tcp_cc_default(). */
void tcp_cc_set_ops(struct tcp_cc *cc, const struct tcp_cc_ops *ops);

/* --- Registry --------------------------------------------------------------------------- */

/* The controller called name (exact, case-sensitive), NULL if none or name is NULL. */
const struct tcp_cc_ops *tcp_cc_find(const char *name);

/* The controller new connections get unless they ask for another: "cubic" until changed. */
const struct tcp_cc_ops *tcp_cc_default(void);

/* Makes the controller called name the default: 0, or -ENOENT (default unchanged) when none
 * has that name. For the control thread; workers read the default atomically. */
int tcp_cc_set_default(const char *name);

/* Stores up to max controller names, sorted, in out; returns how many controllers there are
 * (which may exceed max). out may be NULL when max is 0. */
unsigned tcp_cc_names(const char **out, unsigned max);

/* --- For controllers and their tests ---------------------------------------------------- */

#define TCP_CC_LIST(X) \
	X(bbr) \
	X(cubic) \
	X(newreno) \
	X(vegas)

#define TCP_CC_DECLARE(n) extern const struct tcp_cc_ops tcp_cc_##n##_ops;
TCP_CC_LIST(TCP_CC_DECLARE)
#undef TCP_CC_DECLARE

/* RFC 6928 §2: IW = min(10 * SMSS, max(2 * SMSS, 14600)). */
uint32_t tcp_cc_initial_window(uint32_t mss);

/* RFC 5681 eq. 4: max(in_flight / 2, 2 * SMSS). */
uint32_t tcp_cc_reno_ssthresh(const struct tcp_cc *cc, uint32_t in_flight);

/* Slow start (RFC 5681 §3.1) with appropriate byte counting (RFC 3465 §2.2, L = 2):
 * cwnd += min(acked, 2 * SMSS), never past ssthresh. Returns the part of acked that was left
 * over because cwnd reached ssthresh, for congestion avoidance to count (0 otherwise). */
uint32_t tcp_cc_slow_start(struct tcp_cc *cc, uint32_t acked);

/* Congestion avoidance by byte counting (RFC 3465 §2.1, allowed by RFC 5681 §3.1):
 * *ca_acked accumulates acked bytes; when it reaches cwnd, cwnd += SMSS (once per ACK). */
void tcp_cc_reno_avoid(struct tcp_cc *cc, uint32_t acked, uint32_t *ca_acked);

/* Reno's on_ack: slow start below ssthresh, byte-counting congestion avoidance above. */
void tcp_cc_reno_ack(struct tcp_cc *cc, uint32_t acked, uint32_t *ca_acked);

/* RFC 6582 §3.2 step 3 option (1): cwnd = min(ssthresh, max(in_flight, mss) + mss). */
void tcp_cc_reno_recovery_exit(struct tcp_cc *cc, uint32_t in_flight);

/* RFC 5681 §4.1: if idle_ms > rto_ms, cwnd = min(cwnd, IW). */
void tcp_cc_restart_window(struct tcp_cc *cc, uint32_t rto_ms, uint64_t idle_ms);

/* on_rtt's common part: keeps cc->min_rtt_us. */
void tcp_cc_rtt_min(struct tcp_cc *cc, uint32_t rtt_us);

/* floor(cbrt(x)), exact for every 64-bit x. */
uint32_t tcp_cc_icbrt64(uint64_t x);

/* CUBIC's K (RFC 9438 §4.2 Figure 2) in ms: cbrt((w_max - cwnd_epoch) / (C * mss)) seconds
 * with C = 0.4 and windows in bytes; 0 when cwnd_epoch >= w_max. */
uint32_t tcp_cc_cubic_k_ms(uint32_t w_max, uint32_t cwnd_epoch, uint32_t mss);

/* CUBIC's W_cubic(t) (RFC 9438 §4.2 Figure 1) in bytes: C * (t - K)^3 * mss + w_max, t and K
 * in ms, clamped to [0, TCP_CC_CWND_MAX]; |t - K| counts as at most 2^21 ms (35 min). */
uint32_t tcp_cc_cubic_window(uint64_t t_ms, uint32_t k_ms, uint32_t w_max, uint32_t mss);

/* BBR's current bottleneck bandwidth estimate (the windowed maximum), bytes/s; 0 = none. */
uint64_t tcp_cc_bbr_max_bw(const struct tcp_cc *cc);

#endif
