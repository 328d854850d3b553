/* Fixture of the TCP state-machine tests (test_tcp_*.c), on top of test_stack_util: the stack
 * under test on port 0 (10.0.0.2) talks to a scripted peer, host A (10.0.0.1), whose segments
 * are built here and fed frame by frame; what the stack sends is captured and parsed back
 * into segments. The clock is virtual (tp_advance ticks every millisecond, as a worker does).
 * A recording owner (tp_owner) collects the SOCK_EV_* events of each socket.
 *
 * Built with TP_IPV6 defined, the same tests run over IPv6 (issue 17: every IPv4 feature over
 * IPv6): the stack has 2001:db8::2/64 on port 0, the peer is 2001:db8::1 (RFC 3849's
 * documentation prefix), and every segment travels in an IPv6 datagram. */
#ifndef DPS_TEST_TCP_UTIL_H
#define DPS_TEST_TCP_UTIL_H

#include "test_stack_util.h"
#include "tcp/tcp.h"
#include "tcp/tcp_priv.h"
#include "../../src/wire/tcp.h"

#define TP_LPORT 80          /* the stack's listening port */
#define TP_PPORT 40000       /* the peer's port */
#define TP_PEER_ISN 1000000u

/* The two ends' addresses in the family under test. */
const struct inet_addr *tp_local_addr(void);
const struct inet_addr *tp_peer_addr(void);
/* That family's wildcard (0.0.0.0 or ::), for listeners. */
const struct inet_addr *tp_any_addr(void);
/* The MSS a 1500-byte MTU gives in that family: 1460, or 1440 over IPv6 (RFC 8200 §8.3). */
#ifdef TP_IPV6
#define TP_MSS_1500 1440
#else
#define TP_MSS_1500 1460
#endif

/* A segment the stack sent. */
struct tp_seg {
	struct tcp_repr th;
	struct ip4_repr ip;      /* over IPv6: tos and ttl from Traffic Class and Hop Limit */
	uint32_t len;
	uint8_t data[TS_FRAME_MAX];
};

/* The scripted peer's view of the connection. */
struct tp_peer {
	uint16_t port;
	uint32_t snd_nxt;        /* next sequence number the peer sends */
	uint32_t rcv_nxt;        /* what the peer acknowledges */
	uint16_t window;         /* as on the wire */
	uint8_t wscale;          /* the peer's announced shift (when it sent one) */
	bool ts;                 /* the peer uses timestamps */
	uint32_t tsval;
	uint32_t tsecr;
	uint8_t tos;             /* IP TOS of the peer's segments (ECN bits) */
};

/* What a socket's owner was told. */
struct tp_owner {
	uint32_t events;         /* OR of everything */
	unsigned calls;
	struct sock *last;
};

extern struct tp_owner tp_owner_rec;
extern const struct sock_owner tp_owner;   /* records into tp_owner_rec */

int tp_setup(void **state);
int tp_teardown(void **state);
/* Advances the virtual clock by ms, one tick per millisecond. */
void tp_advance(uint64_t ms);

void tp_peer_init(struct tp_peer *p);
/* Sends a segment from the peer: flags, payload, and options (NULL: timestamps only when
 * p->ts). seq = p->snd_nxt, ack = p->rcv_nxt; snd_nxt advances by the sequence length. */
void tp_send(struct tp_peer *p, uint8_t flags, const void *data, size_t len,
	     const struct tcp_options *opts);
/* Same, at an explicit seq/ack, without touching p->snd_nxt. */
void tp_send_at(struct tp_peer *p, uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
		size_t len, const struct tcp_options *opts);

/* Parses the captured frames (all must be TCP from 10.0.0.2 to 10.0.0.1) into out, clears
 * the capture, and returns the count. */
unsigned tp_collect(struct tp_seg *out, unsigned max);
/* Exactly one segment was sent: returns it in *seg. */
void tp_expect_one(struct tp_seg *seg);
/* Nothing was sent. */
void tp_expect_none(void);

/* A listener on TP_LPORT with default options (backlog given). */
struct tcp_conn *tp_listen(unsigned backlog);
/* A full passive open with a peer offering MSS 1460, SACK, wscale 7 and timestamps (as
 * Linux does): returns the accepted connection; the peer is ready to send data. */
struct tcp_conn *tp_open_passive(struct tp_peer *p);
/* The same with chosen SYN options (NULL: none at all). */
struct tcp_conn *tp_open_passive_opts(struct tp_peer *p, const struct tcp_options *syn_opts);
/* An active open from the stack to the peer's port pport with options o (NULL: the
 * defaults): the connection once its SYN has gone out, which *syn gets. */
struct tcp_conn *tp_connect(const struct tcp_sockopts *o, uint16_t pport, struct tp_seg *syn);
/* An active open from the stack to the peer, answered by the peer's SYN-ACK with
 * syn_opts (NULL: none). Returns the connection in ESTABLISHED. */
struct tcp_conn *tp_open_active(struct tp_peer *p, const struct tcp_options *syn_opts);

/* Ends c's quick-ACK start (as if its first data had been ACKed through the whole run), for
 * tests of the delayed-ACK policy that follows it. */
void tp_quickack_spent(struct tcp_conn *c);

/* Linux's SYN options: MSS 1460, SACK-permitted, timestamps, wscale 7. */
struct tcp_options tp_linux_syn_opts(const struct tp_peer *p);

#endif
