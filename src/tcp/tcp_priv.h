/* TCP internals shared by tcp_*.c: the connection block (RFC 9293 §3.3.1's TCB) and the calls
 * between input, output, timers and tables. Not for use outside src/tcp. */
#ifndef DPS_TCP_TCP_PRIV_H
#define DPS_TCP_TCP_PRIV_H

#include <sys/queue.h>

#include <rte_mbuf.h>

#include "ip4/ip4.h"
#include "ip6/ip6.h"
#include "stack/inet_hdr.h"
#include "stack/stack_internal.h"
#include "tcp.h"
#include "tcp/cc/tcp_cc.h"
#include "tcp_isn.h"
#include "tcp_ooo.h"
#include "tcp_rack.h"
#include "tcp_sack.h"
#include "tcp_sentmap.h"
#include "tcp_seq.h"
#include "base/timer_wheel.h"
#include "wire/tcp.h"

#define TCP_MSS_DEFAULT 536        /* RFC 9293 §3.7.1: when the peer sends no MSS option */
#define TCP_MSS_MIN 88             /* smallest MSS we accept from a peer (Linux: 88) */
#define TCP_PMTU_MIN 552           /* floor of a path MTU learnt from ICMP (Linux ip_rt_min_pmtu) */
#define TCP_RTO_INIT_MS 1000       /* RFC 6298 §2.1 */
#define TCP_RTO_MIN_MS 200         /* below RFC 6298's 1 s, as Linux: LAN RTTs are µs */
#define TCP_RTO_MAX_MS 120000      /* RFC 6298 §2.5 allows a maximum of at least 60 s */
#define TCP_SYN_RETRIES 6          /* Linux tcp_syn_retries: ~127 s */
#define TCP_SYNACK_RETRIES 5
#define TCP_DATA_RETRIES 15        /* Linux tcp_retries2: ~15 min of backoff */
#define TCP_ORPHAN_RETRIES 8       /* Linux's tcp_orphan_retries default */
#define TCP_MAX_ORPHANS 65536      /* per worker; Linux sizes tcp_max_orphans by memory */
#define TCP_MAX_ORPHANS_LIMIT (1u << 24)
#define TCP_DELACK_MS 40           /* RFC 9293 §3.8.6.3: < 0.5 s; Linux's minimum */
#define TCP_MSL_MS 30000           /* TIME-WAIT lasts 2*MSL = 60 s, as Linux */
#define TCP_FIN_WAIT2_MS 60000     /* orphaned FIN-WAIT-2 (Linux tcp_fin_timeout) */
#define TCP_PERSIST_MIN_MS 200
#define TCP_DUPTHRESH 3            /* RFC 5681 §3.2 */
#define TCPOLEN_TSTAMP_ALIGNED 12   /* NOP, NOP, timestamps */
#define TCP_CHALLENGE_ACK_PER_S 1000 /* RFC 5961 §7: bounded */
#define TCP_PACE_CREDIT_US 1000    /* pacing: unused time a burst may catch up (one tick) */
#define TCP_OOW_ACK_MS 500         /* TIME-WAIT ACKs to textless segments, at most one per
				      (Linux's tcp_invalid_ratelimit) */
#define TCP_QUICKACKS 16           /* quick-ACK run at most (Linux TCP_MAX_QUICKACKS) */

#define TCP_EPHEMERAL_LO 32768     /* Linux ip_local_port_range */
#define TCP_EPHEMERAL_HI 60999


/* Per-connection flags. */
#define TCPF_SACK_OK 0x0001        /* both sides sent SACK-permitted */
#define TCPF_TS_OK 0x0002          /* both sides sent timestamps */
#define TCPF_WSCALE_OK 0x0004      /* both sides sent window scale */
#define TCPF_ECN_OK 0x0008         /* ECN negotiated (RFC 3168 §6.1.1) */
#define TCPF_FIN_QUEUED 0x0010     /* the owner shut writing: FIN follows the data */
#define TCPF_FIN_SENT 0x0020
#define TCPF_RD_SHUT 0x0040        /* SHUT_RD: received data is discarded */
#define TCPF_ORPHAN 0x0080         /* the owner closed: the stack frees it when done */
#define TCPF_ACK_NOW 0x0100        /* send an ACK at the end of this input */
#define TCPF_ECE 0x0200            /* echo ECE until the peer's CWR (RFC 3168 §6.1.3) */
#define TCPF_CWR 0x0400            /* set CWR on the next data segment */
#define TCPF_IN_RECOVERY 0x0800    /* fast recovery (RFC 6582; with SACK RACK, RFC 8985) */
#define TCPF_COOKIE 0x1000         /* opened from a SYN cookie */
#define TCPF_IN_TABLE 0x2000
#define TCPF_FREED 0x4000          /* closed inside a callback: free after it returns */
#define TCPF_RTT_TIMING 0x8000     /* rtt_seq is being timed (no timestamps) */
#define TCPF_SWS_OVERRIDE 0x10000  /* the persist timer fired into an open window */
#define TCPF_DATA_SEEN 0x20000     /* data was received (the first starts quick-ACK mode) */
#define TCPF_PINGPONG 0x40000      /* interactive: we send within the delayed-ACK time of
				      receiving, so ACKs ride on our data (Linux pingpong) */
#define TCPF_OOO_FIN 0x80000       /* a FIN beyond a hole is held at ooo_fin_seq */
#define TCPF_MORE 0x100000         /* the owner's last send had MSG_MORE: hold short segments */
#define TCPF_OOW_ACKED 0x200000    /* oow_ack_ms: the last TIME-WAIT ACK to a textless
				      segment */
#define TCPF_LOSS 0x400000         /* RTO recovery: resending what the timeout marked lost */
#define TCPF_ORPHAN_COUNTED 0x800000 /* in tcp_stack.orphans */

/* The timers of one connection (RFC 9293 §3.8, RFC 1122 §4.2.3.6). The kind is stored with
 * the wheel entry so one fire function finds its connection. */
enum tcp_timer_kind {
	TCP_T_RTX,       /* retransmission (RFC 6298) */
	TCP_T_PERSIST,   /* zero-window probes, and sender SWS avoidance's override timeout
			  * (RFC 9293 §3.8.6.1, §3.8.6.2.1): armed only with nothing in flight */
	TCP_T_DELACK,    /* delayed ACK */
	TCP_T_KEEP,      /* keepalive; FIN-WAIT-2 and TIME-WAIT expiry */
	TCP_T_REO,       /* RACK's reordering window ends for a segment (RFC 8985 §6.3) */
	TCP_T_TLP,       /* tail loss probe (RFC 8985 §7.2) */
	TCP_T_PACE,      /* the pacing rate lets the next segment go */
	TCP_T_COUNT
};

struct tcp_timer {
	struct tw_timer tw;
	uint8_t kind;
};

/* A segment to send, independent of any connection: replies to strays (RST) and SYN-cookie
 * SYN-ACKs have none. Payload comes from fifo at fifo_off. */
struct tcp_seg_out {
	struct inet_addr laddr, raddr;    /* of one family */
	uint16_t scope;                   /* a link-local raddr's port, else NETCFG_PORT_ANY */
	uint16_t lport, rport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window;                  /* as on the wire */
	uint8_t tos;
	uint8_t ttl;                      /* 0: the default */
	struct tcp_options opts;
	const struct fifo *fifo;
	uint32_t fifo_off;
	uint32_t len;
	/* Set: the payload may be lent (by reference) when it goes to one of our addresses. */
	struct rte_mbuf_ext_shared_info *lend;
	/* Non-zero: len is more than one segment, which the port cuts into segments of this
	 * much payload (TSO, tcp_tso.c). */
	uint16_t tso_segsz;
};

struct tcp_conn {
	struct sock sk;
	struct stack *s;
	enum tcp_state state;
	uint32_t flags;
	struct tcp_sockopts opts;

	/* Listener (state LISTEN) */
	TAILQ_HEAD(, tcp_conn) syn_q;     /* SYN-RECEIVED children */
	TAILQ_HEAD(, tcp_conn) accept_q;  /* established, not yet accepted */
	unsigned syn_qlen, accept_qlen, backlog;
	/* Child of a listener until accepted */
	struct tcp_conn *parent;
	/* A listener with SO_REUSEPORT: the next of the listeners sharing its address (the
	 * table holds the first). */
	struct tcp_conn *reuse_next;
	TAILQ_ENTRY(tcp_conn) q_link;
	TAILQ_ENTRY(tcp_conn) all_link;   /* every connection of the stack (tcp_walk) */
	TAILQ_ENTRY(tcp_conn) notify_link;
	uint32_t pending_events;          /* SOCK_EV_* not yet told to the owner */

	/* Send sequence space (RFC 9293 §3.3.1) */
	uint32_t iss;
	uint32_t snd_una;
	uint32_t snd_nxt;
	uint32_t snd_max;                 /* highest sequence sent + 1 (snd_nxt drops back on RTO) */
	uint32_t snd_wnd;                 /* scaled */
	uint32_t snd_wl1, snd_wl2;
	uint32_t max_sndwnd;              /* largest window offered by the peer (SWS) */
	uint32_t snd_sml;                 /* end of the last short segment sent (Nagle) */
	uint8_t snd_wscale, rcv_wscale;
	uint16_t snd_mss;                 /* payload bytes per segment (options excluded) */
	uint16_t rcv_mss;                 /* what we advertised */
	/* Segments to another socket of this stack carry their payload as mbufs attached to
	 * sk.tx's bytes (tcp_seg_lend); the count of such mbufs not yet freed is the refcnt. */
	struct rte_mbuf_ext_shared_info lent;

	/* Receive sequence space */
	uint32_t irs;
	uint32_t rcv_nxt;
	uint32_t rcv_adv;                 /* right edge of the window we advertised */
	uint32_t rcv_adv_max;             /* the furthest edge we ever advertised */
	struct tcp_ooo ooo;
	uint32_t ooo_fin_seq;             /* TCPF_OOO_FIN: the held FIN's sequence number */
	bool rcv_full;                    /* the receive FIFO was seen nearly full (autotuning), */
	uint64_t rcv_full_us;             /* last at this time */
	struct tcp_sack_block dsack;      /* to report in the next ACK (RFC 2883) */
	bool has_dsack;

	/* RFC 7323 timestamps */
	uint32_t ts_recent;
	uint64_t ts_recent_ms;            /* when ts_recent was set (PAWS 24-day rule) */
	uint32_t last_ack_sent;

	/* RTT and retransmission (RFC 6298) */
	uint32_t srtt_us, rttvar_us;
	uint32_t rto_ms;
	uint32_t rtt_seq;                 /* timed segment without timestamps (Karn) */
	uint64_t rtt_start_us;
	uint8_t backoff;                  /* RTO doublings since the last new ACK */
	uint8_t retries;
	uint64_t rtx_since_ms;            /* data unacknowledged since (user timeout, RFC 5482) */
	int soft_error;                   /* last ICMP soft error: reported instead of ETIMEDOUT */

	/* Loss recovery and congestion control */
	struct tcp_cc cc;
	struct tcp_scoreboard sb;
	uint32_t dupacks;
	uint32_t recover;                 /* RFC 6582 "recover" */
	uint32_t ecn_recover;             /* one ECN reaction per window (RFC 3168 §6.1.2) */
	struct tcp_sentmap sm;            /* each segment in flight; r NULL without buffers */
	struct tcp_rack rack;             /* RFC 8985 loss detection and tail loss probe */
	uint32_t prr_delivered, prr_out;  /* RFC 6937 PRR over this recovery */
	uint32_t recover_fs;              /* RFC 6937 RecoverFS */
	/* Undo of a reduction the losses did not warrant (RFC 2883 D-SACK, RFC 3522 Eifel). */
	bool undo_ok;                     /* prior_* hold the window before this episode */
	uint32_t prior_cwnd, prior_ssthresh;
	uint32_t undo_retrans;            /* bytes resent this episode, not D-SACKed yet */
	uint32_t undo_marker;             /* SND.UNA when the episode began */
	uint32_t retrans_tsval;           /* TSval of the episode's first resend, 0 none */
	uint64_t last_send_ms;            /* idle restart (RFC 5681 §4.1) */
	uint64_t pace_next_us;            /* no data segment before this (cc.pacing_rate) */

	/* ACK policy */
	uint8_t segs_unacked;             /* full segments received since our last ACK */
	uint8_t quickacks;                /* ACKs still to send at once (quick-ACK mode) */
	uint64_t rcv_data_ms;             /* when data last arrived */
	uint64_t oow_ack_ms;              /* TIME-WAIT's last rate-limited ACK */

	/* Keepalive, persist, timers */
	uint64_t last_rx_ms;
	uint8_t probes;                   /* keepalive or zero-window probes unanswered */
	struct tcp_timer timers[TCP_T_COUNT];
	uint32_t ts_offset;               /* RFC 7323 §7.1: a per-connection TSval offset */

	/* Statistics */
	uint64_t segs_in, segs_out, bytes_acked, bytes_received, retransmits;
};

/* Per-stack TCP state (one per worker). */
struct tcp_stack {
	struct rte_hash *conns;           /* 4-tuple → tcp_conn */
	struct rte_hash *listeners;       /* (laddr, lport) → listening tcp_conn */
	uint32_t listen_max, listen_used; /* its entries; those taken */
	uint32_t conn_max, conn_used;     /* the connection table's (`tcp-connections`) */
	struct timer_wheel *timers;
	TAILQ_HEAD(, tcp_conn) all;
	TAILQ_HEAD(, tcp_conn) reap;      /* freed, memory released by tcp_reap */
	TAILQ_HEAD(, tcp_conn) notify_q;  /* connections with pending_events */
	bool delivering;                  /* tcp_deliver_events is running */
	unsigned nconns;
	unsigned curr_estab;               /* ESTABLISHED + CLOSE-WAIT (RFC 4022 tcpCurrEstab) */
	unsigned orphans;                 /* closed by their owner, still finishing (not TIME-WAIT) */
	uint16_t next_ephemeral;
	uint64_t challenge_window_ms;     /* RFC 5961 §7 challenge ACK budget */
	unsigned challenge_acks;
	struct tcp_params params;
	struct tcp_secret secret;
};

void tcp_stack_tick(struct stack *s);

/* Owners hear about events after the stack has finished with the segment or timer that caused
 * them (tcp_deliver_events), never from the middle of protocol processing: an owner that
 * sends, reads or closes from its callback then finds the connection in a consistent state. */
void tcp_notify(struct tcp_conn *c, uint32_t events);
void tcp_deliver_events(struct stack *s);

/* tcp_output.c: receive FIFO bytes never offered, which the scaled window's rounding may use. */
uint32_t tcp_rcv_slack(const struct tcp_conn *c);

/* tcp_rcvbuf.c: receive buffer autotuning */
uint8_t tcp_rcv_wscale_of(const struct tcp_sockopts *o);
/* After in-order data went into the receive FIFO. */
void tcp_rcvbuf_note(struct tcp_conn *c);
/* Before data goes in: may replace an empty receive FIFO by one twice its size. */
void tcp_rcvbuf_adjust(struct tcp_conn *c);

/* tcp_input.c */
void tcp_input(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *ip, bool bcast);
/* An ICMP error quoting one of our segments (RFC 5927 checks, RFC 1122 §4.2.3.9). */
void tcp_icmp_error(struct stack *s, const struct ip4_repr *quoted_ip, const uint8_t *l4,
		    size_t l4_len, uint8_t type, uint8_t code, uint32_t info);
/* The same for ICMPv6 (RFC 4443): Packet Too Big lowers the path MTU (RFC 8201). */
void tcp_icmp6_error(struct stack *s, const struct inet_hdr *quoted, const uint8_t *l4,
		     size_t l4_len, uint8_t type, uint8_t code, uint32_t info);

/* tcp_output.c */
/* Sends what the windows and Nagle allow; with force, at least an ACK. */
void tcp_output(struct tcp_conn *c, bool force_ack);
void tcp_send_ack(struct tcp_conn *c);
/* The payload one segment may carry now: snd_mss less the SACK blocks it will carry. */
uint32_t tcp_cur_mss(const struct tcp_conn *c);
/* Sends one segment of flags at seq with up to len bytes of queued data from seq. Returns
 * the data bytes sent, or -errno. */
int tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags);
/* tcp_send_segment for len bytes of several segments of segsz payload each, which the port
 * cuts (TSO); each goes on the sent map as its own record. */
int tcp_send_segment_tso(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags,
			 uint32_t segsz);
/* tcp_tso.c: the most new data one segment may carry now, a multiple of mss (mss itself
 * where the route's port has no TSO). */
uint32_t tcp_tso_max(const struct tcp_conn *c, uint32_t mss);
int tcp_seg_send(struct stack *s, const struct tcp_seg_out *o);
/* The TSval this connection puts in a segment sent now (RFC 7323 §7.1 offset included). */
uint32_t tcp_tsval(const struct tcp_conn *c);

/* tcp_recovery.c: loss detection and recovery with SACK (RFC 8985 RACK-TLP, RFC 6937 PRR,
 * undo by D-SACK and timestamps); without SACK, RFC 6582 NewReno in tcp_input.c. */
/* Takes one ACK's cumulative acknowledgement and SACK blocks into the sent map and RACK,
 * before SND.UNA moves; *d receives what it delivered. */
void tcp_recovery_ack_deliveries(struct tcp_conn *c, const struct tcp_repr *th,
				 struct tcp_sm_delivery *d);
/* After SND.UNA moved: undo, RACK loss marking, recovery entry, PRR, the controller's rate
 * sample. prior_una, prior_in_flight: SND.UNA and the pipe before the ACK; dsack: the ACK's
 * D-SACK, or NULL. */
void tcp_recovery_ack(struct tcp_conn *c, const struct tcp_repr *th, uint32_t prior_una,
		      const struct tcp_sm_delivery *d, uint32_t prior_in_flight,
		      const struct tcp_sack_block *dsack);
/* SND.UNA reached the recovery point: recovery or RTO recovery is over. */
void tcp_recovery_exit(struct tcp_conn *c);
/* The retransmission timer expired with data outstanding (RFC 8985 §6.3, RFC 6675 §5.1):
 * everything unSACKed is lost; the resends follow from the sent map. */
void tcp_recovery_on_rto(struct tcp_conn *c);
/* tcp_output.c: whether the pacing rate holds data back now (then the pacing timer is set). */
bool tcp_pace_wait(struct tcp_conn *c);
/* tcp_output.c: sends one segment of new data past cwnd (recovery's RFC 6675 rule 2, a tail
 * loss probe); the number of segments sent, 0 when there is no new data or no window. */
unsigned tcp_output_probe_new(struct tcp_conn *c);
/* Retransmits during loss recovery: the sent map's lost segments first, then new data, as
 * far as cwnd allows over the pipe (RFC 6675 §5, with RACK's marks); without SACK, output. */
void tcp_recovery_send(struct tcp_conn *c);
/* After output: arms the tail loss probe when it applies (RFC 8985 §7.2). */
void tcp_tlp_arm(struct tcp_conn *c);
void tcp_tlp_fire(struct tcp_conn *c);
void tcp_rack_timer_fire(struct tcp_conn *c);
/* The bytes in flight: the sent map's pipe with SACK, else SND.MAX - SND.UNA. */
uint32_t tcp_pipe(const struct tcp_conn *c);
/* A reset answering the segment th/ip that reached no connection (RFC 9293 §3.10.7.1). */
void tcp_send_rst_reply(struct stack *s, const struct inet_hdr *ip, const struct tcp_repr *th,
			uint32_t payload_len);
void tcp_send_rst(struct tcp_conn *c);
/* An ACK that does not move anything, answering a suspicious segment (RFC 5961 §3–5),
 * limited to TCP_CHALLENGE_ACK_PER_S per second per worker. */
void tcp_send_challenge_ack(struct tcp_conn *c);
uint32_t tcp_rcv_window(const struct tcp_conn *c);
/* The owner read enough that the peer should hear of the larger window. */
bool tcp_window_update_due(const struct tcp_conn *c);
/* Bytes queued for sending that have not been sent yet (FIN excluded). */
uint32_t tcp_unsent(const struct tcp_conn *c);
uint32_t tcp_now_ts(const struct stack *s);

/* tcp_timer.c */
void tcp_timer_arm(struct tcp_conn *c, enum tcp_timer_kind k, uint64_t delay_ms);
void tcp_timer_cancel(struct tcp_conn *c, enum tcp_timer_kind k);
bool tcp_timer_armed(const struct tcp_conn *c, enum tcp_timer_kind k);
void tcp_timer_rtx_arm(struct tcp_conn *c);
void tcp_timer_keepalive_arm(struct tcp_conn *c);
void tcp_timers_cancel(struct tcp_conn *c);
void tcp_rtt_sample(struct tcp_conn *c, uint32_t rtt_us);

/* tcp_conn.c */
/* An orphan stops counting against params.max_orphans (freed, or in TIME-WAIT). */
void tcp_orphan_uncount(struct tcp_conn *c);
/* Unlinks c from everything; its memory goes in tcp_reap. Idempotent. */
void tcp_conn_free(struct tcp_conn *c);
void tcp_reap(struct stack *s);
struct tcp_conn *tcp_conn_alloc(struct stack *s, const struct tcp_sockopts *opts);
int tcp_conn_buffers_alloc(struct tcp_conn *c);
void tcp_conn_buffers_free(struct tcp_conn *c);
/* Into the connection table, or the listener table for a LISTEN socket (-EADDRINUSE when
 * that address and port already have one). 0 or a negative value. */
int tcp_conn_insert(struct tcp_conn *c);
struct tcp_conn *tcp_conn_lookup(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
				 const struct inet_addr *raddr, uint16_t rport);
/* The listener a SYN to laddr:lport reaches: on laddr itself, else on its family's
 * wildcard, else (IPv4) on :: when that one is not IPv6-only. */
struct tcp_conn *tcp_listener_lookup(struct stack *s, const struct inet_addr *laddr,
				     uint16_t lport);
/* Whether two listeners with these options may share an address (SO_REUSEPORT). */
bool tcp_reuseport_shares(const struct tcp_sockopts *a, const struct tcp_sockopts *b);
/* The listener of l's SO_REUSEPORT group (l itself without one) that takes a connection
 * from raddr:rport: chosen by a hash of the peer, so a SYN and the ACK that completes a
 * SYN-cookie handshake reach the same one. */
struct tcp_conn *tcp_listener_select(struct tcp_conn *l, const struct inet_addr *raddr,
				     uint16_t rport);
/* Every change of c->state goes through here (after its zeroed start in CLOSED): it keeps
 * the count of connections in ESTABLISHED or CLOSE-WAIT (RFC 4022's tcpCurrEstab). */
void tcp_set_state(struct tcp_conn *c, enum tcp_state st);
/* The connection ends with err (0: orderly): the owner is told, an orphan is freed. */
void tcp_conn_done(struct tcp_conn *c, int err);
void tcp_conn_enter_time_wait(struct tcp_conn *c);
/* The MTU towards raddr (scope: a link-local raddr's port) and whether raddr is one of our
 * addresses; 0 without a route. */
uint32_t tcp_path_mtu(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
		      bool *local);
/* The MSS we announce to raddr: path MTU less the fixed network and TCP headers (40 bytes
 * over IPv4, 60 over IPv6), capped by the mbuf size and TCP_MAXSEG. */
uint16_t tcp_mss_ours(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
		      const struct tcp_sockopts *o);
/* Picks snd_mss from the peer's MSS, our route MTU and the options in use. */
void tcp_conn_set_mss(struct tcp_conn *c, uint16_t peer_mss);
/* SYN-RECEIVED or SYN-SENT → ESTABLISHED: FIFOs, congestion state, the accept queue or the
 * owner's SOCK_EV_OUT. -ENOMEM when the FIFOs cannot be had. */
int tcp_conn_established(struct tcp_conn *c);
uint8_t tcp_wscale_for(uint32_t rcvbuf);
uint32_t tcp_flight(const struct tcp_conn *c);

#endif
