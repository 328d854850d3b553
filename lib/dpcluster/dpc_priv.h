/* libdpstack_cluster's insides: a handle's mappings and its place in each ring. */
#ifndef DPS_DPC_PRIV_H
#define DPS_DPC_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include <dpstack/cluster.h>

#include "cluster/cluster_shm.h"

#define DPC_EXPORT __attribute__((visibility("default")))
#define DPC_SOCK_ENV "DPSTACK_CLUSTER_SOCK"
#define DPC_SOCK_DEFAULT "/run/dpstack/cluster.sock"
#define DPC_ATTACH_FDS (2 + DPC_MAX_REGIONS)   /* segment, eventfd, regions */

struct dps_cluster {
	int conn;                       /* the attachment: its end detaches */
	int efd;                        /* written by the workers when we sleep */
	struct dpc_shm_hdr *hdr;
	size_t seg_size;
	const uint8_t *region[DPC_MAX_REGIONS];
	size_t region_size[DPC_MAX_REGIONS];
	uint32_t rd[DPC_MAX_RINGS];     /* frames received from each ring */
	uint32_t rel[DPC_MAX_RINGS];    /* frames released to each ring */
	unsigned next_ring;             /* where the next recv starts (fairness) */
	uint64_t received;
	struct dpc_txring *tx;
	int64_t spin_ns;
};

static inline struct dpc_ring *dpc_ring(const struct dps_cluster *c, unsigned i)
{
	return (struct dpc_ring *)((char *)c->hdr + c->hdr->rings_off + c->hdr->ring_bytes * i);
}

int64_t dpc_spin_default(void);

#endif
