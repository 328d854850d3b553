/* Packet capture to pcapng (`dpstackctl capture`): the workers copy the frames of a port that
 * pass a BPF filter (rte_pcapng_copy) into a ring, never blocking; a writer thread per
 * capture takes them from the ring and writes pcapng into the dpstackctl connection. What
 * the ring or its pool has no room for is counted, never waited for.
 *
 * Publishing: each worker has its own table of the captures on its ports
 * (struct capture_taps), changed only on the worker's own thread through worker_call().
 * Once every worker has run the change that takes a capture out, none can touch it again,
 * so the writer may free its ring, pool and filter: no lock and no RCU on the packet path,
 * and with no capture running the packet path pays one predictable branch
 * (capture_taps.nb_on == 0). */
#ifndef DPS_CAPTURE_CAPTURE_H
#define DPS_CAPTURE_CAPTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <pcap/pcap.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_pcapng.h>

#include "base/doorbell.h"
#include "stack/netcfg.h"

#define CAPTURE_MAX_WORKERS 64          /* = WORKER_MAX, which this header cannot see */
#define CAPTURE_SNAPLEN_MAX 262144      /* tcpdump's default: whole frames */
#define CAPTURE_FILTER_MAX 1024         /* bytes of a filter expression */

struct rte_ring;
struct rte_mempool;

/* What one worker did for one capture; written by that worker alone. */
struct capture_worker_counts {
	_Atomic uint64_t copied;        /* into the ring */
	_Atomic uint64_t dropped;       /* passed the filter, but the ring or the pool was full */
} __rte_cache_aligned;

struct capture {
	/* Read by the workers while the capture is published. */
	uint16_t eth_port;              /* the DPDK port: the pcapng interface of each packet */
	uint32_t snaplen;
	bool filtered;                  /* else every frame is taken */
	struct bpf_program filter_prog; /* classic BPF (capture_filter.c) */
	struct rte_mempool *pool;       /* the copies */
	struct rte_ring *ring;          /* copies on their way to the writer */
	struct doorbell bell;           /* rung after copies were queued */
	int bell_fd;                    /* eventfd the writer sleeps on */
	struct capture_worker_counts counts[CAPTURE_MAX_WORKERS];

	/* The writer's. */
	uint16_t port;                  /* ours (netcfg) */
	char port_name[NETCFG_NAME_LEN];
	char filter[CAPTURE_FILTER_MAX];
	int client_fd;                  /* the dpstackctl connection the pcapng goes to */
	uint64_t count;                 /* stop after this many packets; 0: no limit */
	_Atomic uint64_t written;
	/* Takes the capture out of every worker (worker_call on each); set by the caller. */
	void (*unpublish)(struct capture *c, void *ctx);
	void *unpublish_ctx;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;               /* the daemon is stopping: end now */
	atomic_bool finished;           /* the writer has unpublished, written and freed all */
};

/* Makes a capture of port (ours) / eth_port with snaplen and an optional filter expression
 * (tcpdump syntax; NULL or "" for none), for nb_workers workers. NULL with the reason in
 * err (a bad expression: libpcap's own message). */
struct capture *capture_create(uint16_t port, const char *port_name, uint16_t eth_port,
			       uint32_t snaplen, const char *filter, uint64_t count,
			       unsigned nb_workers, char *err, size_t errlen);

/* Starts the writer thread, which owns client_fd from then on: it writes the pcapng there
 * until count packets are written, the client shuts down its side or goes away, or
 * capture_stop(). Then it unpublishes, writes the statistics, shuts the connection down,
 * releases the ring and pool and sets finished; client_fd is closed by capture_destroy.
 * Returns 0 or -errno (client_fd is still the caller's then). */
int capture_start(struct capture *c, int client_fd);

/* Asks the writer to end at once (daemon shutdown) and waits for it. */
void capture_stop(struct capture *c);

/* Frees the ring (and the copies in it), the pool and the filter of a capture that no
 * worker can see any more. */
void capture_release(struct capture *c);

/* Frees a capture whose writer has finished (joins it), or one never started. */
void capture_destroy(struct capture *c);

/* Sums of the workers' counters. */
uint64_t capture_copied(const struct capture *c);
uint64_t capture_dropped(const struct capture *c);

/* The captures of one daemon: at most one per port, several ports at once (a second
 * capture of a port would see the same frames; refused, see cmd_capture.c). Control
 * thread only. */
struct capture_registry {
	struct capture *on[NETCFG_MAX_PORTS];
	uint64_t started;
	uint64_t packets;               /* written by the captures that ended */
	uint64_t dropped;               /* their capture drops */
};

/* ---- the packet path ---- */

/* One worker's view of the captures running on its ports. */
struct capture_taps {
	unsigned nb_on;                             /* ports with a capture */
	struct capture *on[NETCFG_MAX_PORTS];
};

/* On the worker's own thread: c becomes the capture of port, or none when c is NULL. */
void capture_taps_set(struct capture_taps *t, uint16_t port, struct capture *c);

/* Copies the frames of pkts that pass c's filter into its ring (worker: the caller's index). */
void capture_burst(struct capture *c, unsigned worker, uint16_t queue,
		   struct rte_mbuf *const *pkts, uint16_t n, enum rte_pcapng_direction dir);

/* The hook the workers call on every RX burst and every frame sent: a single branch when
 * no capture runs anywhere. */
static inline void capture_tap(const struct capture_taps *t, uint16_t port, unsigned worker,
			       uint16_t queue, struct rte_mbuf *const *pkts, uint16_t n,
			       enum rte_pcapng_direction dir)
{
	if (likely(t->nb_on == 0) || t->on[port] == NULL)
		return;
	capture_burst(t->on[port], worker, queue, pkts, n, dir);
}

#endif
