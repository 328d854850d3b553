/* The clusters of one daemon (docs/CLUSTERS.md): their definitions, the packet memory of
 * the ports they may own, their consumers' segments and connections, and the thread that
 * serves consumers on the cluster socket. The control thread (`cluster add|del|show`) and
 * that thread share it under one mutex, never held on the packet path: workers see only
 * their struct cluster_wtab, changed by functions run on them. */
#ifndef DPS_CLUSTER_MGR_H
#define DPS_CLUSTER_MGR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cluster_hash.h"
#include "cluster_region.h"
#include "cluster_worker.h"

#define CLUSTER_RING_DEFAULT 1024
#define CLUSTER_RING_MIN 16
#define CLUSTER_RING_MAX 65536
/* Mbufs of a cluster port's pool kept for each worker's RX queue (its descriptors, and
 * net_af_xdp's fill ring), which consumer rings may never hold. */
#define CLUSTER_RX_RESERVE 2048
#define CLUSTER_SOCK_ENV "DPSTACK_CLUSTER_SOCK"
#define CLUSTER_SOCK_DEFAULT "/run/dpstack/cluster.sock"

/* How the manager reaches the workers: runs fn(worker w's table, arg) on worker w's own
 * thread and returns its result. */
struct cluster_ops {
	unsigned nb_workers;
	int (*run)(void *ctx, unsigned w, int (*fn)(struct cluster_wtab *t, void *arg),
		   void *arg);
	void *ctx;
};

const char *cluster_take_name(enum cluster_take take);
/* The take that name names, or -1. */
int cluster_take_parse(const char *name);

/* What `cluster add` asks for. */
struct cluster_def {
	char name[DPC_NAME_LEN];
	unsigned nb_ports;
	uint16_t ports[DPC_MAX_REGIONS];
	enum cluster_hash_kind hash;
	bool fanout;
	unsigned nb_groups;
	uint16_t group_size[CLUSTER_MAX_GROUPS];
	uint32_t ring_size;
	char hash_prog[CLUSTER_PROG_SPEC_LEN];      /* hash custom's program */
	int32_t bounce_port;                        /* -1: no bounce */
	char filter[CLUSTER_PROG_SPEC_LEN];         /* the bounce's program; "": none */
	enum cluster_take take;
};

/* One consumer, as `cluster show` reports it. */
struct cluster_consumer_view {
	unsigned group, index;
	bool attached;
	pid_t pid;
	struct cluster_counters ctr;    /* summed over the workers */
	uint64_t outstanding;           /* frames given and not yet released */
};

struct cluster_mgr;

struct cluster_mgr *cluster_mgr_create(const struct cluster_ops *ops);
/* Names a port (for messages and consumers). */
void cluster_mgr_port_name(struct cluster_mgr *m, uint16_t port, const char *name);
/* Gives port a region of n mbufs; its pool is then the port's RX pool. */
int cluster_mgr_region_add(struct cluster_mgr *m, uint16_t port, unsigned n,
			   struct rte_mempool **pool);
/* Starts serving consumers on path. Returns 0 or -1 with err. */
int cluster_mgr_listen(struct cluster_mgr *m, const char *path, char *err, size_t errlen);
/* Stops the thread and deletes every cluster (while the workers still run). */
void cluster_mgr_stop(struct cluster_mgr *m);
/* Frees the regions, once the ports are stopped. */
void cluster_mgr_destroy(struct cluster_mgr *m);

/* Returns 0, or -1 with the reason in err. */
int cluster_add(struct cluster_mgr *m, const struct cluster_def *def, char *err, size_t errlen);
int cluster_del(struct cluster_mgr *m, const char *name, char *err, size_t errlen);

/* A cluster's counters, summed over the workers. */
struct cluster_totals {
	uint64_t unsupported;           /* frames no consumer can read (chained, foreign) */
	uint64_t pool_in_use;           /* mbufs of its ports in use (RX queues, consumers) */
	uint64_t bounced;               /* frames forwarded out of the bounce port */
	uint64_t filtered;              /* frames its filter kept from the bounce */
	uint64_t forwarded;             /* frames consumers sent on uncopied */
};

/* Calls fn for every cluster in order, then for its consumers. */
struct cluster_show_cb {
	void (*cluster)(void *ctx, const struct cluster_def *def, const struct cluster_totals *t);
	void (*consumer)(void *ctx, const struct cluster_consumer_view *v);
	void (*cluster_end)(void *ctx);
	void *ctx;
};
void cluster_show(struct cluster_mgr *m, const struct cluster_show_cb *cb);

/* The definition and slot of the cluster named name. Returns false when there is none. */
bool cluster_mgr_find(struct cluster_mgr *m, const char *name, struct cluster_def *def,
		      unsigned *slot);
/* Whether a cluster takes port's rest (CLUSTER_TAKE_REST); its name into name. */
bool cluster_mgr_rest_of(struct cluster_mgr *m, uint16_t port, char name[DPC_NAME_LEN]);

/* The port's region exists (a cluster may own it). */
bool cluster_mgr_has_region(struct cluster_mgr *m, uint16_t port);

#endif
