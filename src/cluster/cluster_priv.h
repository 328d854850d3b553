/* The manager's insides, shared by cluster_mgr.c (the table, add/del/show), cluster_consumer.c
 * (attach and detach) and cluster_server.c (the consumers' socket). */
#ifndef DPS_CLUSTER_PRIV_H
#define DPS_CLUSTER_PRIV_H

#include <pthread.h>

#include "cluster_mgr.h"

#define CLUSTER_MAX_ZOMBIES 64
#define CLUSTER_MAX_LINGER 64
/* How long a detach waits for the ports to free a consumer's frames in flight. */
#define CLUSTER_TX_SETTLE_MS 1000

/* A detached consumer's segment that a port still sends from (a NIC that frees sent mbufs
 * only when its ring fills): kept mapped until the daemon stops. */
struct cluster_linger {
	void *seg;
	size_t size;
	struct cluster_txslots *slots;
};

struct cluster_consumer {
	int conn_fd;                    /* -1: nobody attached */
	pid_t pid;
	int seg_fd;
	int efd;
	struct dpc_shm_hdr *hdr;
	size_t seg_size;
	struct cluster_wring *wr[DPC_MAX_RINGS];    /* one per worker */
	struct cluster_wtx tx;                      /* its transmit ring, on worker 0 */
};

struct cluster {
	bool used;
	struct cluster_def def;
	struct cluster_prog *hash_prog;             /* def.hash_prog loaded, or NULL */
	struct cluster_prog *filter;                /* def.filter loaded, or NULL */
	unsigned nb_consumers;
	struct cluster_wstate *ws[DPC_MAX_RINGS];   /* one per worker */
	struct cluster_consumer cons[CLUSTER_MAX_CONSUMERS];
};

struct cluster_mgr {
	pthread_mutex_t lock;
	struct cluster_ops ops;
	struct cluster_region region[NETCFG_MAX_PORTS];    /* fd -1: the port has none */
	char port_name[NETCFG_MAX_PORTS][DPC_NAME_LEN];
	struct cluster clusters[CLUSTER_MAX];
	/* Connections of consumers the control thread detached: the server thread, which
	 * polls them, closes them. */
	int zombie[CLUSTER_MAX_ZOMBIES];
	unsigned nb_zombies;
	struct cluster_linger linger[CLUSTER_MAX_LINGER];
	unsigned nb_linger;
	int listen_fd;
	int stop_fd;                    /* eventfd: the server thread ends */
	char path[108];
	pthread_t thread;
	bool running;
};

/* cluster_consumer.c, with m->lock held. */
int cluster_consumer_attach(struct cluster_mgr *m, struct cluster *cl, unsigned c, int conn,
			    pid_t pid, int *fds, unsigned *nb_fds, char *err, size_t errlen);
/* Takes the consumer out of the workers and frees its segment; the connection is the
 * caller's (returned, or -1). */
int cluster_consumer_detach(struct cluster_mgr *m, struct cluster *cl, unsigned c);

/* Unmaps the segments kept for frames in flight (the ports are stopped: none is). */
void cluster_linger_free(struct cluster_mgr *m);

/* Deletes every cluster (the daemon stops). */
void cluster_mgr_delete_all(struct cluster_mgr *m);

/* "NAME@i" or "NAME@g:i": the cluster and its flat consumer index, or -1 with err. */
int cluster_spec_find(struct cluster_mgr *m, const char *spec, struct cluster **cl,
		      unsigned *c, char *err, size_t errlen);

#endif
