/* Start-up checks made before the EAL starts, on what the config asks of this machine, so
 * that a config that cannot run says why and what would work instead of failing deep in
 * DPDK ("HASH: memory allocation failed", "queue 0 setup: Invalid argument"). Shared by the
 * daemon and `dpstackd --check-config`. */
#ifndef DPS_CTL_STARTUP_CHECK_H
#define DPS_CTL_STARTUP_CHECK_H

#include <rte_mbuf.h>

#include "config.h"
#include "eal_args.h"

/* Measured with `eal --no-huge -m M` (DPDK 22.11, this build, one net_ring port): the
 * smallest M that starts is 18 MB with one worker and 'mbufs 4096' (a 10 MB pool), 46 MB
 * with the default pool (38 MB), 24 and 52-54 MB with two workers: about 2 MB for the
 * daemon and 6 MB for each worker's connection and listener tables (rte_hash) and rings,
 * besides the pool. Route tables are in the heap, not the EAL's memory (route.h). The
 * figures below keep a margin over those. */
#define STARTUP_BASE_MB 4
#define STARTUP_WORKER_MB 8

/* DPDK 22.11's net_af_xdp fills each queue's AF_XDP fill ring (XSK_RING_CONS__DEFAULT_NUM_DESCS
 * = 2048 buffers) from the pool when the queue is set up. */
#define STARTUP_AF_XDP_FILL 2048

/* One pool element: the mbuf header, its data room and the mempool's own header and
 * trailer (a cache line each at most). */
#define STARTUP_MBUF_BYTES \
	(sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE + 2 * RTE_CACHE_LINE_SIZE)

/* The EAL memory the config needs, in MB (an estimate from the figures above). */
unsigned startup_memory_mb(const struct daemon *d);

/* The fewest mbufs the config's ports take from the pool before any packet arrives. */
unsigned startup_min_mbufs(const struct daemon *d, unsigned *port_index);

/* Reports every problem found (config_error, with the line of the directive to change) and
 * returns how many there were. Completes the devargs of net_af_xdp ports with the queues
 * of their interfaces first (port_queues.h). */
unsigned startup_check(struct daemon *d, const struct eal_host *h, struct config *cfg);


/* After an allocation failed at start (ENOMEM): says how much memory the config needs. */
void startup_memory_hint(const struct daemon *d);

/* After rte_eal_init() failed: prints rte_errno's meaning (the EAL's own message precedes it)
 * and the fix of the failures known by their cause: another primary process holding the
 * shared config of the same --file-prefix, hugepages that cannot be used. */
void startup_eal_failed(const struct daemon *d, int argc, char **argv);

#endif
