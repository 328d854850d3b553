/* TCP (RFC 9293) on one worker's stack: the calls a socket owner (built-in service, and later
 * the application channel) makes. All of them run on the worker thread that owns the stack.
 * Return values are 0 / a count, or -errno with the errno Linux gives for the same call. */
#ifndef DPS_TCP_TCP_H
#define DPS_TCP_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack/sock.h"

/* TCP as a registered protocol of a stack (src/stack/stack_proto.h). */
extern const struct stack_proto tcp_proto;

struct stack;
struct tcp_conn;
struct tcp_cc_ops;

/* The states of RFC 9293 §3.3.2, as one X-macro list so the CLI prints the same names. */
#define TCP_STATE_LIST(X) \
	X(CLOSED, "CLOSED") \
	X(LISTEN, "LISTEN") \
	X(SYN_SENT, "SYN-SENT") \
	X(SYN_RECEIVED, "SYN-RECEIVED") \
	X(ESTABLISHED, "ESTABLISHED") \
	X(FIN_WAIT_1, "FIN-WAIT-1") \
	X(FIN_WAIT_2, "FIN-WAIT-2") \
	X(CLOSE_WAIT, "CLOSE-WAIT") \
	X(CLOSING, "CLOSING") \
	X(LAST_ACK, "LAST-ACK") \
	X(TIME_WAIT, "TIME-WAIT")

enum tcp_state {
#define TCP_STATE_ENUM(id, name) TCP_##id,
	TCP_STATE_LIST(TCP_STATE_ENUM)
#undef TCP_STATE_ENUM
	TCP_STATE_COUNT
};

const char *tcp_state_name(enum tcp_state st);

/* Per-socket options (SO_* and TCP_* of the socket API). Defaults: tcp_sockopts_default. */
struct tcp_sockopts {
	uint32_t rcvbuf;            /* receive FIFO bytes (rounded up to a power of two) */
	bool rcvbuf_locked;         /* SO_RCVBUF set: no autotuning (tcp_rcvbuf.c) */
	uint32_t sndbuf;            /* send FIFO bytes (idem) */
	bool nodelay;               /* TCP_NODELAY: no Nagle (RFC 9293 §3.7.4) */
	bool cork;                  /* TCP_CORK: only full segments, until uncorked (Linux) */
	bool keepalive;             /* SO_KEEPALIVE (RFC 1122 §4.2.3.6) */
	uint32_t keep_idle_ms;      /* TCP_KEEPIDLE */
	uint32_t keep_intvl_ms;     /* TCP_KEEPINTVL */
	uint32_t keep_cnt;          /* TCP_KEEPCNT */
	uint32_t user_timeout_ms;   /* TCP_USER_TIMEOUT (RFC 5482); 0 = the retry limit decides */
	uint16_t mss;               /* TCP_MAXSEG: cap on our MSS; 0 = from the route */
	bool ecn;                   /* ask for ECN on active opens (RFC 3168 §6.1.1) */
	bool linger;                /* SO_LINGER with linger_ms 0: close aborts with RST */
	/* IP_TTL, IP_TOS; inherited by accepted connections, as Linux's inet_sk_clone. The
	 * ECN field of tos is the stack's own (RFC 3168 §6.1): only the DSCP part is used. */
	struct sock_ip_opts ip;
	const struct tcp_cc_ops *cc; /* TCP_CONGESTION; NULL = the stack's default */
	/* SO_REUSEPORT: listeners of one user (Linux: one effective uid) share an address,
	 * each taking the connections whose peer hashes to it. */
	bool reuseport;
	uint32_t reuseport_uid;
	/* IPV6_V6ONLY: a listener on :: takes no IPv4 (RFC 3493 §5.3; Linux's default off). */
	bool v6only;
	/* The port a link-local address of the socket (bound, or the peer's) belongs to
	 * (sin6_scope_id, RFC 4007 §6); NETCFG_PORT_ANY when there is none. */
	uint16_t scope;
};

void tcp_sockopts_default(struct tcp_sockopts *o);

/* Stack-wide TCP tunables (`dpstackctl tcp params`), the counterparts of Linux's sysctls. */
struct tcp_params {
	uint32_t syn_retries;       /* SYN retransmissions before ETIMEDOUT (tcp_syn_retries) */
	uint32_t synack_retries;    /* SYN-ACK retransmissions before giving up */
	uint32_t retries;           /* data retransmissions before ETIMEDOUT (tcp_retries2) */
	uint32_t rto_min_ms;        /* floor of the RTO (RFC 6298 §2.4 asks 1 s; LANs want less) */
	uint32_t delack_ms;         /* delayed-ACK time (RFC 9293 §3.8.6.3: < 500 ms) */
	uint32_t fin_timeout_ms;    /* orphaned FIN-WAIT-2 lifetime (tcp_fin_timeout) */
	uint32_t time_wait_ms;      /* TIME-WAIT, 2*MSL (RFC 9293 §3.4.2) */
	uint32_t syncookies;        /* 1: SYN cookies when the SYN queue is full (RFC 4987) */
	/* Connections closed by their owner but still finishing (FIN-WAIT, CLOSING, LAST-ACK)
	 * a worker keeps; a close beyond it resets at once (Linux tcp_max_orphans). */
	uint32_t max_orphans;
};

void tcp_params_default(struct tcp_params *p);
void tcp_get_params(const struct stack *s, struct tcp_params *p);
/* -EINVAL when a value is out of range (nothing changed). */
int tcp_set_params(struct stack *s, const struct tcp_params *p);

/* Connections (listeners included) that the stack holds now. Another thread may read it,
 * as it reads counters: an aligned load that may be a moment old. */
unsigned tcp_conn_count(const struct stack *s);
/* Connections in ESTABLISHED or CLOSE-WAIT (RFC 4022 tcpCurrEstab); read as tcp_conn_count. */
unsigned tcp_estab_count(const struct stack *s);

/* Entries of a worker's listener table (stack_params.tcp_listen_max): one per address
 * listened on (SO_REUSEPORT listeners sharing one take one). The default leaves one user's
 * listeners-per-user a small share of it (chan_limit.h). */
#define TCP_LISTEN_MAX_DEFAULT 16384
#define TCP_LISTEN_MAX_LIMIT (1u << 20)
uint32_t tcp_listen_capacity(const struct stack *s);

/* Entries of a worker's connection table (stack_params.tcp_conn_max, `tcp-connections`):
 * one per connection that is not a listener, TIME-WAIT included. A SYN or a connect beyond:
 * tcp.conn_table_full (the SYN dropped, connect ENOBUFS). */
#define TCP_CONN_MAX_DEFAULT 65536
#define TCP_CONN_MAX_MIN 16
#define TCP_CONN_MAX_LIMIT (1u << 22)
uint32_t tcp_conn_capacity(const struct stack *s);
/* Entries taken; read by other threads as tcp_conn_count. */
uint32_t tcp_conn_used(const struct stack *s);
/* Addresses listened on now; read by other threads as tcp_conn_count. */
uint32_t tcp_listen_used(const struct stack *s);

/* A listening socket on laddr:lport (either family, IPv4 as a mapped address; a family's
 * wildcard, inet_addr_any, is every address of it, and :: IPv4's too unless opts->v6only:
 * such peers appear as mapped addresses, RFC 3493 §3.7). backlog bounds the accept
 * queue and, doubled, the SYN queue; beyond that SYN cookies answer (RFC 4987 §3.6). New
 * connections inherit opts and owner; the listener's owner gets SOCK_EV_IN when one is ready
 * to accept. -EADDRINUSE when another listener holds the address, -ENOBUFS when the listener
 * table is full (counted tcp.listen_table_full). */
int tcp_listen(struct stack *s, const struct inet_addr *laddr, uint16_t lport, unsigned backlog,
	       const struct tcp_sockopts *opts, const struct sock_owner *owner,
	       struct tcp_conn **out);
/* bind(2)'s checks for laddr:lport by a socket with opts: -EADDRNOTAVAIL when laddr is not
 * ours, -EADDRINUSE when a listener holds the port on that address or on every address and
 * the two may not share it (SO_REUSEPORT by one user). */
int tcp_bind_check(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
		   const struct tcp_sockopts *opts);

/* The next established connection of a listener, or NULL (-EAGAIN in *err). The owner of the
 * returned connection is owner (the listener's when NULL). */
struct tcp_conn *tcp_accept(struct tcp_conn *listener, const struct sock_owner *owner);

/* The source address of a connection to raddr (scope: a link-local raddr's port) from *laddr
 * (its family's wildcard: chosen by the route, IPv6's by RFC 6724, and stored in *laddr).
 * 0, -EINVAL, -EAFNOSUPPORT (the two of different families), -ENETUNREACH, -EHOSTUNREACH
 * or -EADDRNOTAVAIL. */
int tcp_connect_source(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
		       struct inet_addr *laddr);
/* An active open to raddr:rport (RFC 9293 §3.10.1). laddr 0 and lport 0 are chosen by the
 * stack; with several workers lport 0 is a port whose flow this worker owns, and a given
 * lport whose flow another worker owns is -EXDEV (steer.h: open it there). Completion is
 * reported with SOCK_EV_OUT, failure with SOCK_EV_ERR and sk.error (ECONNREFUSED,
 * ETIMEDOUT, EHOSTUNREACH). */
int tcp_connect(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
		const struct inet_addr *raddr, uint16_t rport, const struct tcp_sockopts *opts,
		const struct sock_owner *owner, struct tcp_conn **out);

/* Copies up to len bytes into the send FIFO and sends what the windows allow. Returns the
 * count, -EAGAIN when the FIFO is full, -EPIPE after shutdown or on a reset connection,
 * -ENOTCONN before the connection is established. */
ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len);
/* Copies up to len received bytes out. Returns the count, 0 at end of stream (the peer's FIN,
 * all data read), -EAGAIN when nothing is there yet, -ECONNRESET after a reset. */
ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len);
/* The owner wrote into the send FIFO or read from the receive FIFO directly (zero-copy and
 * the application channel): send what can go, and open the window if it grew enough. */
void tcp_kick(struct tcp_conn *c);

/* MSG_MORE (Linux): the owner's latest send said more follows, so short segments wait like
 * TCP_CORK's until a send without it (which pushes them) or the persist timer. */
void tcp_set_more(struct tcp_conn *c, bool more);

/* setsockopt(2) on a live socket: keepalive timers follow at once, TCP_NODELAY and removing
 * TCP_CORK push what Nagle or the cork held, a new congestion controller takes over. The FIFO
 * sizes do not change (the new ones apply to connections a listener accepts later). -EINVAL
 * for keepalive without times. */
int tcp_set_sockopts(struct tcp_conn *c, const struct tcp_sockopts *o);
const struct tcp_sockopts *tcp_get_sockopts(const struct tcp_conn *c);

/* shutdown(2): SHUT_RD, SHUT_WR or SHUT_RDWR. Writing side: a FIN follows the queued data. */
int tcp_shutdown(struct tcp_conn *c, int how);
/* close(2): the owner lets go. Unread data or SO_LINGER 0 aborts with RST (RFC 9293
 * §3.10.4, RFC 2525 §2.17); otherwise a FIN follows the queued data and the stack finishes the
 * connection alone (FIN-WAIT, TIME-WAIT) and frees it. c must not be used afterwards. */
void tcp_close(struct tcp_conn *c);

struct sock *tcp_sock(struct tcp_conn *c);
enum tcp_state tcp_conn_state(const struct tcp_conn *c);

/* What TCP_INFO and `sock show` report about one connection. */
struct tcp_conn_info {
	enum tcp_state state;
	struct inet_addr laddr, raddr;
	uint16_t lport, rport;
	uint32_t rx_queued, tx_queued;      /* bytes in the FIFOs */
	uint32_t snd_mss, rcv_mss;
	uint32_t cwnd, ssthresh;            /* bytes */
	uint32_t srtt_us, rttvar_us, rto_ms;
	uint32_t snd_wnd, rcv_wnd;
	uint8_t snd_wscale, rcv_wscale;
	bool sack, timestamps, ecn;
	uint64_t segs_in, segs_out, bytes_acked, bytes_received, retransmits;
	const char *cc;
};

void tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *out);
/* Calls fn for every connection of the stack (listeners included); stops when fn returns
 * non-zero and returns that. */
int tcp_walk(struct stack *s, int (*fn)(const struct tcp_conn *c, void *arg), void *arg);

#endif
