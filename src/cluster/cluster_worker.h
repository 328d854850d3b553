/* A worker's side of the clusters: which of its ports a cluster owns, the rings of the
 * consumers it feeds, and the packet path (hash, place, publish, reclaim). Everything here
 * is touched by its worker only; the control side changes it through functions run on the
 * worker (cluster_mgr.c), between two bursts. */
#ifndef DPS_CLUSTER_WORKER_H
#define DPS_CLUSTER_WORKER_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "cluster_hash.h"
#include "cluster_prog.h"
#include "cluster_shm.h"
#include "stack/netcfg.h"

#define CLUSTER_MAX 16                  /* clusters in one daemon: their slots */
#define CLUSTER_MAX_CONSUMERS 64        /* per cluster: bits of a uint64_t */
#define CLUSTER_MAX_GROUPS 16
#define CLUSTER_MAX_WRINGS 256          /* attached consumer rings per worker */

/* The daemon's half of one consumer ring (struct dpc_ring) on one worker. */
struct cluster_wring {
	struct dpc_ring *sh;
	struct cluster_wstate *ws;              /* its cluster: ports and xmit, to forward */
	struct dpc_shm_hdr *hdr;        /* the consumer's segment: its doorbell */
	int efd;                        /* the consumer's eventfd */
	struct rte_mbuf **shadow;       /* the mbuf behind each slot */
	uint32_t mask;
	uint32_t prod;                  /* frames placed (published at the burst's end) */
	uint32_t freed;                 /* frames reclaimed */
	uint32_t marks;                 /* sh->marks when last seen */
	uint32_t scan_to;               /* frames before it may be marked for forwarding */
};

/* What the ports hold of a consumer's transmit slots: each frame goes out as an mbuf of
 * the worker's pool with the slot attached as its external buffer (no copy), and the slot is
 * the consumer's again only once the port freed that mbuf. Daemon memory: the consumer
 * can spoil the bytes of its own frames, never an mbuf's header or this. */
struct cluster_txslots {
	uint8_t *base;                                      /* slot 0 */
	struct rte_mbuf_ext_shared_info shinfo[DPC_TX_SIZE];
	_Atomic uint8_t done[DPC_TX_SIZE];                  /* its mbuf was freed */
	_Atomic uint32_t inflight;                          /* slots the ports hold */
};

/* The daemon's view of a consumer's transmit ring (worker 0 drains it). */
struct cluster_wtx {
	struct dpc_txring *sh;
	struct cluster_txslots *slots;
	uint32_t taken;                     /* descriptors read (sh->cons: slots given back) */
	unsigned nb_regions;
	uint16_t port[DPC_MAX_REGIONS];     /* our port of each cluster port index */
};

/* Per consumer, per worker; summed by `cluster show`. */
struct cluster_counters {
	uint64_t delivered;             /* frames put in its ring */
	uint64_t dropped;               /* its ring was full */
	uint64_t absent;                /* nobody attached as this consumer */
};

typedef void cluster_xmit_fn(void *ctx, uint16_t port, struct rte_mbuf *m);

/* One cluster as one worker sees it. */
struct cluster_wstate {
	enum cluster_hash_kind hash;
	const struct cluster_prog *hash_prog;   /* hash custom */
	int32_t bounce_port;                    /* frames forwarded out of it; -1: none */
	const struct cluster_prog *filter;      /* which to bounce; NULL: all */
	cluster_xmit_fn *xmit;                  /* the worker's, for bounce */
	void *xmit_ctx;
	unsigned nb_ports;
	uint16_t port[DPC_MAX_REGIONS];         /* our port of each cluster port index */
	uint64_t forwarded;                     /* frames consumers sent on, uncopied */
	uint64_t bounced;                       /* frames handed to bounce_port */
	uint64_t filtered;                      /* frames the filter kept from it */
	unsigned nb_groups;
	uint16_t group_first[CLUSTER_MAX_GROUPS];
	uint16_t group_size[CLUSTER_MAX_GROUPS];
	uintptr_t region_base[DPC_MAX_REGIONS];
	const struct rte_mempool *region_pool[DPC_MAX_REGIONS];
	uint8_t port_region[NETCFG_MAX_PORTS];  /* our port's region, CLUSTER_NO_REGION: none */
	struct cluster_wring *ring[CLUSTER_MAX_CONSUMERS];   /* NULL: nobody attached */
	struct cluster_counters ctr[CLUSTER_MAX_CONSUMERS];
	uint64_t unsupported;           /* frames no consumer can read (chained, foreign) */
};

/* What a cluster takes from its ports (docs/CLUSTERS.md). */
enum cluster_take {
	CLUSTER_TAKE_ALL,       /* the ports are the cluster's: the stack never sees them */
	CLUSTER_TAKE_FLOW,      /* the stack's ports: flow rules send frames to the cluster */
	CLUSTER_TAKE_REST,      /* the stack's ports: the cluster gets what the stack does not
				 * own (the exception path, stack/exception.h) */
};

#define CLUSTER_NO_REGION 0xff

struct cluster_wport {
	struct cluster_wstate *ws;      /* NULL: the stack's port */
	uint16_t region;
};

struct cluster_wtab {
	struct cluster_wport port[NETCFG_MAX_PORTS];   /* ports a cluster takes whole */
	uint8_t rest_slot[NETCFG_MAX_PORTS];   /* 1 + the slot of the cluster that takes the
						* port's rest; 0: none */
	struct cluster_wstate *slot[CLUSTER_MAX];       /* every cluster, by its slot */
	unsigned nb_rings;
	struct cluster_wring *rings[CLUSTER_MAX_WRINGS];   /* to reclaim from */
	unsigned nb_tx;
	struct cluster_wtx *tx[CLUSTER_MAX_WRINGS];         /* to send from */
	/* How the worker sends: consumers' frames attached to mbufs of pool, given to xmit. */
	struct rte_mempool *pool;
	cluster_xmit_fn *xmit;
	void *xmit_ctx;
};

static inline bool cluster_owns(const struct cluster_wtab *t, uint16_t port)
{
	return t->port[port].ws != NULL;
}

/* The packet path: places each of the n frames received on port (which a cluster owns) on
 * one consumer of every group and bounces it (if the cluster does and its filter passes it),
 * or frees it. */
void cluster_rx(struct cluster_wtab *t, uint16_t port, struct rte_mbuf **pkts, uint16_t n);

/* The same for frames that reached a cluster otherwise (a flow rule, issue 15): ws is the
 * cluster as this worker sees it, region the index of the frames' port in its port list.
 * A frame whose mbuf is not of that port's shared pool cannot be read by consumers: it is
 * freed and counted (`unsupported`). Every frame is consumed. */
void cluster_place(struct cluster_wstate *ws, uint16_t region, struct rte_mbuf **pkts,
		   uint16_t n);

/* Frames received on port that flow rules send to the cluster in slot (`flow add ...
 * cluster NAME dev PORT` on a cluster that takes flow, docs/CLUSTERS.md): all consumed and
 * true, or false and none touched when no such cluster has that port (the caller drops and
 * counts them: `cluster del` refuses while a rule names the cluster, so only a bug gets
 * there). */
bool cluster_flow_place(struct cluster_wtab *t, unsigned slot, uint16_t port,
			struct rte_mbuf **pkts, uint16_t n);

/* Frees what consumers released since the last call; returns how many frames. */
unsigned cluster_reclaim(struct cluster_wtab *t);

/* Sends what consumers posted on their transmit rings (through t->xmit). Returns how many
 * frames. */
unsigned cluster_tx_poll(struct cluster_wtab *t);

/* Changes, run on the worker. ws goes in slot; when it takes its ports whole
 * (CLUSTER_TAKE_ALL), they leave the stack, else frames reach it through flow rules
 * (cluster_flow_place) and, with CLUSTER_TAKE_REST, from the stack's exception path. */
void cluster_wtab_install(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned slot,
			  const uint16_t *ports, unsigned nb_ports, enum cluster_take take);
/* Takes ws out: its ports go back to the stack, its rings are reclaimed whole. */
void cluster_wtab_remove(struct cluster_wtab *t, struct cluster_wstate *ws);
/* Returns -ENOSPC when the worker feeds too many rings already. */
int cluster_wtab_ring_add(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned c,
			  struct cluster_wring *r);
int cluster_wtab_tx_add(struct cluster_wtab *t, struct cluster_wtx *tx);
/* Sends what tx still holds, then forgets it. */
void cluster_wtab_tx_remove(struct cluster_wtab *t, struct cluster_wtx *tx);
/* Detaches consumer c: what its ring holds is freed, released or not. */
void cluster_wtab_ring_remove(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned c);

/* Frames placed in r and not reclaimed yet (read from another thread: a snapshot). */
static inline uint32_t cluster_wring_outstanding(const struct cluster_wring *r)
{
	return r->prod - r->freed;
}

#endif
