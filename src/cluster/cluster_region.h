/* A cluster port's packet memory: a memfd that holds the port's RX mempool, so that the
 * cluster's consumers can map it (read-only: the memfd is sealed against writable mappings
 * and resizing) and read frames where the NIC put them. The port receives into it from its
 * start (docs/CLUSTERS.md: why a port's buffers cannot move while it runs). */
#ifndef DPS_CLUSTER_REGION_H
#define DPS_CLUSTER_REGION_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mempool.h>

struct cluster_region {
	int fd;                         /* the memfd, -1 when none */
	uint8_t *base;                  /* the daemon's read-write mapping */
	size_t size;
	struct rte_mempool *pool;       /* n mbufs of RTE_MBUF_DEFAULT_BUF_SIZE, all in it */
};

/* Creates the memfd, maps it and builds a pool of n mbufs in it named name. Returns 0 or
 * -errno. */
int cluster_region_create(struct cluster_region *r, const char *name, unsigned n);
/* Once nothing uses the pool any more (the port has stopped). */
void cluster_region_destroy(struct cluster_region *r);

#endif
