/* The shared-memory contract between dpstackd and the consumers of a cluster (docs/CLUSTERS.md),
 * built by both the daemon (src/cluster) and the consumer library (lib/dpcluster). Pure C.
 *
 * A consumer gets, over its unix socket (SCM_RIGHTS): its own segment (this header and one
 * ring per worker, read-write for it and nobody else), an eventfd the workers write when it
 * sleeps, and one region per port of the cluster: the memfd that holds that port's mbufs,
 * sealed so that the consumer can map it only read-only. A frame is a descriptor in a ring
 * whose `off` locates the frame's bytes in its region: zero copies from the NIC to the
 * consumer.
 *
 * Each ring has one producer (its worker) and one consumer. The worker publishes frames by
 * moving `prod`; the consumer releases them, oldest first, by moving `cons`; the worker frees
 * the mbufs between its last reclaim and `cons` (so a consumer can neither free a frame twice
 * nor free one it was not given: a `cons` outside [reclaimed, prod] is ignored). A full ring
 * drops the frame for that consumer only and counts it in `dropped`.
 *
 * Forwarding without a copy: before releasing a frame, the consumer may set its
 * descriptor's `fwd` (a port of the cluster) and count the mark in `marks`; the worker then
 * sends that frame's mbuf out of the port when it reclaims it, instead of freeing it. The
 * worker reads `fwd` only of frames released (past `cons`), and only while it has seen
 * `marks` move since they were placed, so that a consumer that never forwards costs nothing.
 *
 * Transmit goes the other way through one more ring (struct dpc_txring, after the receive
 * rings): the consumer copies a frame into the slot of its own that `prod` names, fills the
 * descriptor and moves `prod`; worker 0 copies the frame into an mbuf, sends it out of the
 * port the descriptor names and moves `cons`. A descriptor it cannot use (bad port or
 * length) or a frame it has no mbuf for is counted in `dropped`, never sent. */
#ifndef DPS_CLUSTER_SHM_H
#define DPS_CLUSTER_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/doorbell.h"

#define DPC_SHM_MAGIC 0x31435044u      /* "DPC1" */
#define DPC_SHM_VERSION 2
#define DPC_MAX_REGIONS 8              /* ports in one cluster */
#define DPC_MAX_RINGS 64               /* workers */
#define DPC_NAME_LEN 32
#define DPC_SPEC_LEN 64                /* "NAME@g:i" */
#define DPC_CACHE_LINE 64

/* One frame: where its bytes are and what the daemon knew of it. */
struct dpc_desc {
	uint64_t off;                   /* of the first byte in its region */
	uint64_t ts_ns;                 /* receive time, CLOCK_REALTIME */
	uint32_t len;
	uint32_t hash;                  /* the cluster's hash of the frame */
	uint16_t region;                /* the cluster's port index (dpc_shm_hdr.regions) */
	uint16_t fwd;                   /* the consumer's: 0, or 1 + the cluster port index
					 * to send the frame out of when it is released */
	uint16_t pad[2];
};

struct dpc_ring {
	_Alignas(DPC_CACHE_LINE) _Atomic uint32_t prod;     /* the worker's: frames published */
	_Alignas(DPC_CACHE_LINE) _Atomic uint32_t cons;     /* the consumer's: frames released */
	_Atomic uint32_t marks;                             /* the consumer's: fwd marks made */
	_Alignas(DPC_CACHE_LINE) _Atomic uint64_t dropped;  /* the worker's: no room for them */
	_Alignas(DPC_CACHE_LINE) struct dpc_desc desc[];    /* ring_size of them */
};

#define DPC_TX_SLOT 2048                /* bytes of one transmit slot: the largest frame */
#define DPC_TX_SIZE 256                 /* transmit slots of a consumer */

struct dpc_tx_desc {
	uint32_t len;
	uint16_t region;                /* the port to send from (cluster port index) */
	uint16_t pad;
};

struct dpc_txring {
	_Alignas(DPC_CACHE_LINE) _Atomic uint32_t prod;     /* the consumer's: frames posted */
	_Alignas(DPC_CACHE_LINE) _Atomic uint32_t cons;     /* the worker's: frames taken */
	_Alignas(DPC_CACHE_LINE) _Atomic uint64_t sent;     /* the worker's */
	_Atomic uint64_t dropped;                           /* the worker's: refused */
	_Alignas(DPC_CACHE_LINE) struct dpc_tx_desc desc[DPC_TX_SIZE];
	_Alignas(DPC_CACHE_LINE) uint8_t slot[DPC_TX_SIZE][DPC_TX_SLOT];
};

struct dpc_region_info {
	char port[DPC_NAME_LEN];        /* the port's name */
	uint64_t size;                  /* bytes to map */
};

struct dpc_shm_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t nb_rings;
	uint32_t ring_size;             /* a power of two */
	uint64_t ring_bytes;            /* each ring's stride in the segment */
	uint64_t rings_off;             /* of ring 0 */
	uint64_t tx_off;                /* of the struct dpc_txring */
	uint32_t consumer;              /* flat index in the cluster */
	uint32_t group;
	uint32_t index_in_group;
	uint32_t nb_regions;
	char cluster[DPC_NAME_LEN];
	struct dpc_region_info regions[DPC_MAX_REGIONS];
	/* The daemon stopped serving this consumer (cluster deleted, daemon stopping): what
	 * the rings still hold is being reclaimed. */
	_Atomic uint32_t closed;
	_Alignas(DPC_CACHE_LINE) struct doorbell bell;       /* rung when frames arrive */
};

/* The attach request (the socket is SOCK_SEQPACKET: one message each way). */
struct dpc_attach_req {
	uint32_t version;
	char spec[DPC_SPEC_LEN];        /* "NAME@i" or "NAME@g:i", NUL-terminated */
};

/* The answer; on success with fds: segment, eventfd, then nb_regions regions. */
struct dpc_attach_rep {
	int32_t err;                    /* 0 or -errno */
	uint32_t nb_fds;
	char msg[160];                  /* why, when err != 0 */
};

static inline uint64_t dpc_ring_bytes(uint32_t ring_size)
{
	uint64_t b = sizeof(struct dpc_ring) + (uint64_t)ring_size * sizeof(struct dpc_desc);
	return (b + DPC_CACHE_LINE - 1) & ~(uint64_t)(DPC_CACHE_LINE - 1);
}

static inline uint64_t dpc_rings_off(void)
{
	return (sizeof(struct dpc_shm_hdr) + DPC_CACHE_LINE - 1) & ~(uint64_t)(DPC_CACHE_LINE - 1);
}

/* The segment: header, nb_rings receive rings, then the transmit ring here. */
static inline uint64_t dpc_tx_off(uint32_t ring_size, uint32_t nb_rings)
{
	return dpc_rings_off() + dpc_ring_bytes(ring_size) * nb_rings;
}

#endif
