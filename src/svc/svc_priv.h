/* Internals of the built-in services: the table, one service, one TCP connection, and the
 * operations each kind (svc_echo.c, svc_discard.c, svc_chargen.c, svc_http.c, svc_iperf3.c)
 * provides.
 *
 * svc.c owns the life cycle: it accepts connections, calls the kind's run() whenever the
 * socket layer reports readiness, and frees the connection when run() says it is finished
 * or the socket reports HUP/ERR. A kind's run() is written level-triggered: it makes all the
 * progress it can (read, write) and returns when the socket would block, since the socket
 * layer reports each change once. Not for use outside src/svc. */
#ifndef DPS_SVC_SVC_PRIV_H
#define DPS_SVC_SVC_PRIV_H

#include <stddef.h>
#include <sys/queue.h>

#include "svc.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

struct udp_sock;

/* The RFC 864 pattern: lines of 72 characters of printable ASCII (32..126), each line
 * starting one character further, CR LF after each; it repeats after 95 lines. */
#define SVC_PATTERN_LINE 72
#define SVC_PATTERN_PERIOD (95 * (SVC_PATTERN_LINE + 2))

/* A per-worker read buffer: the largest UDP payload of either family (IPv6's, 65535 - 8;
 * one more byte tells a truncated datagram), and large TCP reads. */
#define SVC_SCRATCH (UDP6_MAX_PAYLOAD + 1)

struct svc;

/* One accepted TCP connection. Kinds with state of their own embed this first and set
 * conn_size in their ops.
 *
 * Re-entrancy: the socket calls (tcp_send, tcp_recv, tcp_shutdown) deliver the stack's
 * pending readiness synchronously, so a connection's notify may come while its own run(),
 * or a close, is further up the call stack. svc.c notes such a notify (rerun, doom) instead
 * of acting on it, and acts once the outer call returns: a connection is never freed while
 * any call on it is in progress. */
struct svc_conn {
	struct svc *sv;
	struct tcp_conn *c;
	TAILQ_ENTRY(svc_conn) link;
	bool running;       /* inside run() or being closed */
	bool rerun;         /* readiness came during run(): run again */
	uint8_t doom;       /* enum svc_run: WAIT = none; DONE/ERROR: close after run() */
};

/* What run() tells svc.c. */
enum svc_run {
	SVC_RUN_WAIT,      /* blocked on input or output: readiness will call again */
	SVC_RUN_DONE,      /* finished: close the connection (FIN after the queued data) */
	SVC_RUN_ERROR,     /* failed: count an error and close */
};

/* Where a datagram came from and its answer goes: either family (IPv4 mapped), and the
 * port it arrived on, which a link-local IPv6 peer's answer must leave by (RFC 4007 §6). */
struct svc_peer {
	struct inet_addr addr;
	uint16_t port;
	uint16_t scope;
};

struct svc_kind_ops {
	bool tcp, udp;
	size_t conn_size;                  /* >= sizeof(struct svc_conn) */
	/* Keeps TCP_NODELAY on: request/response kinds answer in one write and must not
	 * wait for an ACK of the previous answer (Nagle with delayed ACKs). */
	bool nodelay;
	/* After accept, before the first run (state beyond the zeroed conn_size bytes). */
	void (*open)(struct svc_conn *sc);
	enum svc_run (*run)(struct svc_conn *sc);
	/* The connection is about to be closed, whatever the reason (run's answer, HUP/ERR, a
	 * kind's svc_conn_end, svc_del): forget references to it. It may end other
	 * connections of the service, never this one. */
	void (*close)(struct svc_conn *sc);
	/* State of a whole service (sv->priv): made by svc_add (0 or -errno), freed after its
	 * connections are closed. stop() runs first in svc_del, while they are still open. */
	int (*init)(struct svc *sv);
	void (*stop)(struct svc *sv);
	void (*fini)(struct svc *sv);
	/* One received datagram (in the table's scratch buffer) from a peer. */
	void (*datagram)(struct svc *sv, uint8_t *buf, size_t len, size_t cap,
			 const struct svc_peer *from);
};

struct svc_table {
	struct stack *s;
	TAILQ_HEAD(, svc) list;
	unsigned n;
	uint64_t rng;                        /* xorshift state: chargen's random lengths */
	/* Two periods of the pattern, so that any offset has a whole period after it. */
	uint8_t pattern[2 * SVC_PATTERN_PERIOD];
	uint8_t scratch[SVC_SCRATCH];
};

struct svc {
	struct svc_table *t;
	enum svc_kind kind;
	const struct svc_kind_ops *ops;
	uint8_t proto;
	uint16_t port;
	struct svc_opts opts;
	struct tcp_conn *listener;
	struct udp_sock *udp;
	TAILQ_HEAD(, svc_conn) conns;
	struct svc_counters cnt;
	void *priv;                       /* the kind's own (ops->init) */
	TAILQ_ENTRY(svc) link;
};

extern const struct svc_kind_ops svc_echo_ops;
extern const struct svc_kind_ops svc_discard_ops;
extern const struct svc_kind_ops svc_chargen_ops;
extern const struct svc_kind_ops svc_http_ops;
extern const struct svc_kind_ops svc_iperf3_ops;

/* Fills dst with len bytes of the pattern from offset (any offset: it wraps). */
void svc_pattern_fill(uint8_t *dst, size_t len, uint64_t offset);

/* Closes sc as if its run() had returned DONE (error: ERROR, counted): for a kind that ends
 * a connection other than the one it runs on. When a run() or close of sc is in progress
 * further up the call stack, the close happens once that returns. */
void svc_conn_end(struct svc_conn *sc, bool error);

/* Runs sc's run() now, as readiness would: for a kind whose other connection can make
 * progress that no readiness will report (its window was open all along). Deferred like a
 * notify when a run() of sc is in progress; closes sc when run() says so. */
void svc_conn_kick(struct svc_conn *sc);

/* Reads and drops everything readable. Returns SVC_RUN_DONE at end of stream,
 * SVC_RUN_ERROR after a reset, SVC_RUN_WAIT otherwise. */
enum svc_run svc_conn_drain(struct svc_conn *sc);

/* Queues bytes from the pattern at *offset, at most *left (UINT64_MAX: no limit) and as much
 * as the send FIFO takes; advances both. Returns SVC_RUN_WAIT when the FIFO is full,
 * SVC_RUN_DONE when *left reached 0, SVC_RUN_ERROR when the connection refuses data. */
enum svc_run svc_conn_send_pattern(struct svc_conn *sc, uint32_t *offset, uint64_t *left);

/* Sends one datagram back from the service's socket; counts bytes or an error. */
void svc_udp_reply(struct svc *sv, const void *buf, size_t len, const struct svc_peer *to);

uint32_t svc_rand(struct svc_table *t);

#endif
