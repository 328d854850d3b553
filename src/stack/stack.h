/* One worker's TCP/IP stack instance: everything the packet path touches, owned by exactly one
 * thread (DESIGN.md: shared-nothing workers). The stack does no I/O of its own: frames leave
 * through stack_ops.xmit, time comes in through stack_input/stack_tick, so the same code runs
 * on a DPDK worker and in unit tests with a virtual clock and a capture array. */
#ifndef DPS_STACK_STACK_H
#define DPS_STACK_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "counters.h"
#include "reass.h"
#include "l2/neigh.h"
#include "netcfg.h"
#include "base/ratelimit.h"
#include "stack_proto.h"
#include "tx_offload.h"

struct acl_set;
struct ip6_state;
struct flow_set;
struct bypass_set;
struct stack;
struct steer;
struct tcp_stack;
struct udp_stack;

struct stack_ops {
	/* Send a complete Ethernet frame out of port. Always takes ownership of m; counts and
	 * frees it itself when the queue is full. */
	void (*xmit)(void *ctx, uint16_t port, struct rte_mbuf *m);
	/* Optional: the stack learnt a neighbour from an ARP packet (neigh_learn flags). With
	 * several workers, an ARP reply reaches only one of them while others may be waiting
	 * for it: the worker passes the news on, and the others apply it through
	 * stack_neigh_learn (DESIGN.md: per-worker copies fed by messages). */
	void (*neigh_learnt)(void *ctx, uint16_t port, const struct inet_addr *addr,
			     const struct eth_addr *mac, unsigned flags);
	/* With steer: hands datagram m (at its IP header, m->port its port) to worker, which
	 * passes it with how to stack_input_steered. False when it cannot take it (the stack
	 * then counts the drop and frees m). */
	bool (*steer)(void *ctx, unsigned worker, struct rte_mbuf *m, unsigned how);
	/* For the ports marked in stack.kernel_port: sends frame m (at its Ethernet header) to
	 * the port's kernel interface (the exception path, exception.h). Always takes
	 * ownership of m; counts and frees it itself when the interface's queue is full. */
	void (*to_kernel)(void *ctx, uint16_t port, struct rte_mbuf *m);
	/* For the ports marked in stack.rest_port: hands frame m (at its Ethernet header) to
	 * the cluster that takes what the stack does not own (`cluster add ... take rest`).
	 * Always takes ownership of m. */
	void (*to_rest)(void *ctx, uint16_t port, struct rte_mbuf *m);
	void *ctx;
};

struct stack_params {
	const struct stack_proto *const *protos; /* the protocols it runs, NULL-terminated */
	unsigned id;                     /* worker index: names tables, shown in stats */
	int socket_id;
	struct rte_mempool *pool;        /* for frames the stack creates */
	struct stack_ops ops;
	const struct steer *steer;       /* with several workers: who owns a flow; else NULL */
	struct neigh_params neigh;
	struct reass_params reass;
	uint32_t tcp_listen_max;         /* listener table entries, 1..TCP_LISTEN_MAX_LIMIT */
	uint32_t tcp_conn_max;           /* connection table entries (tcp.h) */
	uint32_t route_max;              /* route table entries (route_table_create) */
	uint32_t icmp_rate;              /* ICMP errors per second (RFC 1812 §4.3.2.8) */
	uint32_t icmp_burst;
};

/* One echo request of `dpstackctl ping` in flight (RFC 792 echo). The reply may reach any
 * worker's queue, so every worker is armed for it and notes when it came (TSC, which DPDK
 * requires to be invariant and shared by all cores). */
struct stack_ping {
	uint16_t id;            /* 0: no ping in progress */
	uint16_t seq;           /* the request awaiting its reply */
	uint64_t sent_tsc;      /* on the worker that sent it */
	uint64_t reply_tsc;     /* 0 until the reply arrives here */
	uint32_t reply_len;     /* ICMP bytes in the reply */
};

/* Datagrams to our own addresses delivered per stack_loopback_drain call: what they answer
 * waits for the next call, so two endpoints talking to each other cannot livelock us. */
#define STACK_LOOPBACK_BUDGET 2048

struct stack {
	unsigned id;
	const struct stack_proto *protos[STACK_PROTO_MAX];
	unsigned nb_protos;
	const struct stack_proto *by_ip_proto[256];
	uint64_t now_ms;
	uint64_t now_us;                 /* the same clock, finer: RTT samples (TCP) */
	struct rte_mempool *pool;
	struct stack_ops ops;
	const struct steer *steer;
	struct netcfg cfg;
	struct neigh_table *neigh;
	struct reass *reass;
	struct ratelimit icmp_errors;
	struct ip6_state *ip6;           /* IPv6's own (src/ip6/ip6.h) */
	uint16_t next_ip_id;
	struct stack_ping ping;
	struct tcp_stack *tcp;
	/* Datagrams to our own addresses, delivered by stack_loopback_drain. The queue has
	 * room for every mbuf of the pool, so it is never full. */
	struct rte_mbuf **loopback;
	unsigned lo_mask, lo_head, lo_count;
	struct udp_stack *udp;
	const struct acl_set *acl;       /* the ACL this worker judges with (src/acl/acl.h) */
	const struct flow_set *flow;     /* flow rules walked on receive (src/dp/worker_flow.h) */
	/* The exception path (exception.h): the ports with a kernel interface, set before
	 * the worker starts, and the bypass rules this worker applies (NULL: none). */
	bool kernel_port[NETCFG_MAX_PORTS];
	/* The ports whose rest a cluster takes instead (set by the worker as clusters come and
	 * go; never with a kernel interface, which `cluster add` refuses). */
	bool rest_port[NETCFG_MAX_PORTS];
	const struct bypass_set *bypass;
	uint64_t events[STACK_EV_COUNT];
	uint64_t drops[STACK_DROP_COUNT];
	struct stack_port_counters ports[NETCFG_MAX_PORTS];
	/* What each port computes on transmit (tx_offload.h); set by the worker before
	 * traffic, all false (software) in unit tests. */
	struct stack_tx_caps tx_caps[NETCFG_MAX_PORTS];
	bool rx_gro[NETCFG_MAX_PORTS];   /* the worker merges TCP segments (src/dp/gro.h) */
	/* Ports whose DHCP client runs (src/ctl/dhcp_run.c): a server's unicast answer to the
	 * address it offers, not yet ours, reaches the client's socket (ip4_input). */
	bool dhcp_client[NETCFG_MAX_PORTS];
};

/* On a received mbuf: a flow rule steered it to this worker (src/dp/worker_flow.h), whose
 * stack then keeps its TCP connection rather than handing it to the flow's RSS owner. */
#define STACK_MBUF_FLOW_STEERED RTE_MBUF_F_RX_FDIR_ID

/* Returns NULL (rte_errno set) on failure. */
struct stack *stack_create(const struct stack_params *p);
/* Frees the stack and every packet it holds (neighbour queues, reassembly). NULL: no-op. */
void stack_destroy(struct stack *s);

/* Receives one frame that arrived on port at now_ms. Always takes ownership of m. */
void stack_input(struct stack *s, uint16_t port, struct rte_mbuf *m);
/* Takes a datagram another worker received for a flow this one owns (stack_ops.steer). */
void stack_input_steered(struct stack *s, struct rte_mbuf *m, unsigned how);
/* Delivers the datagrams the stack sent to its own addresses (and what they cause in turn,
 * up to a bound per call). stack_input and the ticks call it; so does a worker with
 * nothing else to do. */
void stack_loopback_drain(struct stack *s);

/* Advances the clock and runs every timer: the neighbour state machine, reassembly timeouts
 * and the transport's. Call at least every 100 ms. */
void stack_tick(struct stack *s, uint64_t now_ms);
/* Advances the clock and runs only the transport's timers (TCP's delayed ACKs and RTOs want
 * millisecond resolution; the neighbour and reassembly walks cover whole tables and their
 * timers are hundreds of ms long). A worker calls this every millisecond and stack_tick
 * every few. */
void stack_tick_transport(struct stack *s, uint64_t now_ms);

static inline void stack_count(struct stack *s, enum stack_event e)
{
	s->events[e]++;
}

static inline void stack_count_n(struct stack *s, enum stack_event e, uint64_t n)
{
	s->events[e] += n;
}

static inline void stack_drop(struct stack *s, enum stack_drop d, struct rte_mbuf *m)
{
	s->drops[d]++;
	rte_pktmbuf_free(m);
}

/* Counts a drop whose packet the caller still owns (it frees it later). */
static inline void stack_drop_count(struct stack *s, enum stack_drop d)
{
	s->drops[d]++;
}

/* A reassembly table counts every datagram and fragment it drops, including the datagrams it
 * evicts to make room, which no caller sees: the drop counter drop_for[v] mirrors its count
 * of each verdict v but HELD and DONE. */
void stack_reass_sync_drops(struct stack *s, const struct reass *r,
			    const enum stack_drop drop_for[REASS_VERDICT_COUNT]);

/* Sends a finished frame and counts it on the port, after handing the port the checksums
 * it computes and finishing the others (tx_offload_apply). */
void stack_xmit(struct stack *s, uint16_t port, struct rte_mbuf *m);

/* Configuration changes that need more than the netcfg tables: they also announce, flush or
 * drop state. Return 0 or -errno like the netcfg calls. With announce, a new address is
 * announced by gratuitous ARP (RFC 5227 §3), so neighbours update stale caches. Deleting a
 * port's last address flushes its neighbours. */
int stack_addr_add(struct stack *s, uint16_t port, uint32_t addr, uint8_t plen, bool announce);
int stack_addr_del(struct stack *s, uint16_t port, uint32_t addr, uint8_t plen);
int stack_iface_set_up(struct stack *s, uint16_t port, bool up);

/* Applies what another worker learnt from ARP (see stack_ops.neigh_learnt). */
void stack_neigh_learn(struct stack *s, uint16_t port, const struct inet_addr *addr,
		       const struct eth_addr *mac, unsigned flags);

/* Arms s->ping for the reply to echo request id/seq sent by another worker. */
void stack_ping_arm(struct stack *s, uint16_t id, uint16_t seq);
/* An echo reply of len bytes with identifier and sequence id_seq (the 32 bits after the
 * checksum) arrived: true when it is the one s->ping awaits, then noted. */
bool stack_ping_match(struct stack *s, uint32_t id_seq, uint32_t len);
/* An echo request's total bytes (header room first, then a pattern), as a chain of the
 * stack's mbufs; NULL (counted) when the pool ran dry. */
struct rte_mbuf *stack_ping_chain(struct stack *s, uint32_t total);
/* Sends an echo request of size payload bytes (0..65507) to dst and arms s->ping for its
 * reply. Returns 0 or -errno (no route, no buffers, EMSGSIZE). */
int stack_ping_send(struct stack *s, uint32_t dst, uint16_t id, uint16_t seq, uint32_t size);

#endif
