/* A worker: one lcore running a run-to-completion loop over its RX queues, with its own stack
 * instance, TX buffers drained on a timer, and a mailbox through which the control thread runs
 * functions on it (configuration changes, snapshots) so nothing is ever locked. */
#ifndef DPS_DP_WORKER_H
#define DPS_DP_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_ring.h>

#include "base/doorbell.h"
#include "capture/capture.h"
#include "cluster/cluster_worker.h"
#include "stack/stack.h"
#include "stack/steer.h"
#include "port.h"

#define WORKER_MAX 64
#define WORKER_BURST 32

struct worker_rxq {
	uint16_t port;      /* our port index (= netcfg port) */
	uint16_t eth_port;
	uint16_t queue;
};

/* What a TX buffer's error callback needs to count a frame the queue refused. */
struct worker_txq_ctx {
	struct stack *stack;
	uint16_t port;
};

/* A packet one worker passes to another: a datagram for the flow's owner (arg: how, for
 * stack_input_steered), or a frame to send on a port where the sender has no TX queue of
 * its own (arg: our port index, with WORKER_HANDOFF_KERNEL for the port's kernel
 * interface). */
#define WORKER_HANDOFF_KERNEL 0x10000u
struct worker_handoff {
	struct rte_mbuf *m;
	uint32_t arg;
} __attribute__((aligned(16)));

/* In worker_handoff.arg on the steering ring: m is a whole frame received on port
 * (arg & 0xffff) that a flow rule sent here (worker_flow.h), for stack_input. */
#define WORKER_HANDOFF_FRAME 0x80000000u

/* What one worker tells the others it learnt from ARP. */
struct worker_neigh_msg {
	struct inet_addr addr;
	uint16_t port;
	uint8_t flags;
	struct eth_addr mac;
} __attribute__((aligned(8)));

/* Work a worker does between bursts for someone other than the ports (the application
 * channel), wired in before the workers start. */
struct worker_hooks {
	/* Returns the amount of work done; 0 when there was none. */
	unsigned (*poll)(void *ctx);
	/* Announces a sleep (on) or its end. With on, false means work arrived meanwhile and
	 * the worker must not sleep. */
	bool (*sleeping)(void *ctx, bool on);
	void *ctx;
};

/* Where a worker's time goes, in TSC cycles: the stack's own profile (`stats`). Every cycle
 * of the loop lands in exactly one of these, so their sum is the time the loop ran. */
struct worker_cycles {
	uint64_t ports;         /* receiving and processing frames (rx bursts that got some),
				 * frames other workers handed over */
	uint64_t apps;          /* applications' commands and calls (hook polls that did work) */
	uint64_t timers;        /* stack timers, control-thread calls, neighbour news */
	uint64_t tx;            /* draining TX buffers to the ports, waking peers */
	uint64_t polling;       /* looking at queues that were empty */
	uint64_t asleep;        /* idle naps */
};

struct worker {
	unsigned index;
	unsigned lcore;
	struct stack *stack;
	struct rte_ring *mailbox;
	struct rte_ring *neigh_in;               /* worker_neigh_msg from the other workers */
	struct rte_ring *steer_in;               /* worker_handoff: datagrams we own */
	struct rte_ring *tx_in;                  /* worker_handoff: frames to send for others */
	struct worker *peers;                    /* all workers (this one included) */
	unsigned nb_peers;
	uint64_t wake_peers;                     /* bit i: worker i was handed work */
	atomic_bool sleeping;                    /* in a nap: hand-overs must wake it */
	unsigned nb_rxq;
	struct worker_rxq rxq[NETCFG_MAX_PORTS * PORT_MAX_QUEUES];
	unsigned nb_txp;
	uint16_t txp[NETCFG_MAX_PORTS];          /* the ports where we have a TX queue */
	uint16_t txq[NETCFG_MAX_PORTS];          /* this worker's TX queue on each port */
	int16_t tx_via[NETCFG_MAX_PORTS];        /* -1, or the worker that sends for us there */
	uint16_t eth_port[NETCFG_MAX_PORTS];
	bool tx_multi_seg[NETCFG_MAX_PORTS];      /* else chained frames are made contiguous */
	struct rte_eth_dev_tx_buffer *txbuf[NETCFG_MAX_PORTS];
	struct worker_txq_ctx txctx[NETCFG_MAX_PORTS];
	/* The ports' kernel interfaces (exception.h): the RX queues we poll (.port: the port
	 * their frames leave by), and per port our TX queue there (or the worker that sends
	 * for us, as tx_via). */
	unsigned nb_krxq;
	struct worker_rxq krxq[NETCFG_MAX_PORTS];
	uint16_t keth_port[NETCFG_MAX_PORTS];
	uint16_t ktxq[NETCFG_MAX_PORTS];
	int16_t ktx_via[NETCFG_MAX_PORTS];
	bool ktx_multi_seg[NETCFG_MAX_PORTS];
	struct rte_eth_dev_tx_buffer *ktxbuf[NETCFG_MAX_PORTS];
	struct worker_txq_ctx ktxctx[NETCFG_MAX_PORTS];
	uint32_t idle_sleep_max_us;              /* 0: busy poll */
	int wake_fd;                             /* eventfd: a write ends the worker's sleep */
	struct doorbell call_bell;               /* rung when calls are done or the mailbox
						  * has room (worker_call waits on it) */
	struct worker_hooks hooks;
	struct capture_taps taps;                /* captures of our ports (src/capture) */
	struct cluster_wtab clusters;            /* ports a cluster owns (src/cluster) */
	struct worker_rest {                     /* frames for clusters that take the rest,
						  * until worker_rest_flush (worker_rest.h) */
		uint16_t n;
		uint16_t port[WORKER_BURST];
		struct rte_mbuf *m[WORKER_BURST];
	} rest;
	atomic_bool stop;
	/* Loop statistics, read by the control thread. */
	struct worker_cycles cycles;
	uint64_t polls;
	uint64_t busy_polls;
	/* Cycles of the busy polls, whole loop iterations that received frames or served an
	 * application: over the sum of worker_cycles, the share of the loop that did work
	 * (what DPDK's lcore "busy" telemetry and VPP's vectors/call tell apart from polling,
	 * since a busy-polling worker is always at 100 % of its CPU). */
	uint64_t busy_cycles;
	uint64_t idle_sleeps;
	uint64_t handoff_full;                   /* frames lost: a peer's tx_in was full */
	uint64_t neigh_news_lost;                /* ARP news a peer's neigh_in had no room for */
};

/* A function run on the worker's own thread, between bursts. The worker's last touch of it
 * is the store of done: the caller may free it as soon as it sees that (the bell the caller
 * sleeps on is the worker's, which lives on). */
struct worker_call {
	int (*fn)(struct stack *s, void *arg);
	void *arg;
	int result;
	atomic_bool done;
};

/* Creates the worker's stack, rings and TX buffers. Worker i polls RX queues i, i + n,
 * i + 2n... (n workers) and sends on TX queue i of every port that has that many; on a
 * port with fewer queue pairs than workers it receives nothing (the others steer its flows
 * to it, steer.h) and worker i % nb_queues sends its frames (TX queues are not
 * thread-safe). steer: who owns a flow,
 * shared read-only by every worker (NULL with one worker). sizes: the stack's table sizes
 * and limits (the config's `tcp-listeners`, `routes`, `neighbours`...); its id, socket, pool,
 * steer and ops are the worker's own. Returns 0 or -errno. */
int worker_init(struct worker *w, unsigned index, unsigned lcore, struct port *ports,
		unsigned nb_ports, struct rte_mempool *pool, uint32_t idle_sleep_max_us,
		const struct steer *steer, const struct stack_params *sizes);
/* Introduces the workers to each other (before they are launched), for ARP sharing. */
void worker_set_peers(struct worker *w, struct worker *all, unsigned n);
/* Starts using port p's kernel interface k, made after the worker started (`link set PORT
 * kernel IFNAME`): its queue pair, or the peer that sends there for it. On the worker's
 * own thread (worker_call), lowest worker index first, so a peer that will take frames for
 * a higher one is ready before they come. Returns 0 or -ENOMEM. */
int worker_kernel_attach(struct worker *w, uint16_t p, const struct exception_if *k);
void worker_fini(struct worker *w);

/* The lcore entry point (rte_eal_remote_launch); arg is the struct worker. */
int worker_main(void *arg);

/* Hands h to peer's ring r (its steer_in or tx_in) and notes that the peer may need waking.
 * False when the ring is full (the caller still owns h->m). */
bool worker_hand_to(struct worker *w, unsigned peer, struct rte_ring *r,
		    struct worker_handoff *h);

/* Runs fn(stack, arg) on the worker and waits for it. The worker must be running. Safe from
 * several threads at once. */
int worker_call(struct worker *w, int (*fn)(struct stack *s, void *arg), void *arg);

#endif
