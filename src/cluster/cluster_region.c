#include "cluster_region.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010      /* Linux 5.1 */
#endif

/* As port_pool_create's: rte_pktmbuf_init, and the buffer's IOVA, which is its address in
 * IOVA-as-VA mode (the region is not DPDK memory, so DPDK cannot look it up). */
static void cluster_mbuf_init(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	rte_pktmbuf_init(mp, arg, obj, idx);
	struct rte_mbuf *m = obj;
	m->buf_iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)m->buf_addr
							  : RTE_BAD_IOVA;
}

static void cluster_region_unmap(struct cluster_region *r)
{
	if (r->base != NULL)
		munmap(r->base, r->size);
	if (r->fd >= 0)
		close(r->fd);
	r->base = NULL;
	r->fd = -1;
}

int cluster_region_create(struct cluster_region *r, const char *name, unsigned n)
{
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	/* The objects packed end to end (no IOVA contiguity asked), as net_af_xdp needs of the
	 * pool it registers as its UMEM (port.c). */
	struct rte_mempool *mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, 256,
		sizeof(struct rte_pktmbuf_pool_private), SOCKET_ID_ANY, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (mp == NULL)
		return -rte_errno;
	int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc != 0)
		goto fail;
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE};
	rte_pktmbuf_pool_init(mp, &priv);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t need = (size_t)n * (mp->header_size + mp->elt_size + mp->trailer_size) + pg;
	r->size = (need + pg - 1) & ~(pg - 1);
	r->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->size) != 0) {
		rc = -errno;
		goto fail;
	}
	void *base = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			  r->fd, 0);
	if (base == MAP_FAILED) {
		rc = -errno;
		goto fail;
	}
	r->base = base;
	/* Consumers get the fd: they may map it, but not writably, nor change its size under
	 * the daemon (a shrunk memfd would fault the workers). The daemon's own mapping stays
	 * writable (F_SEAL_FUTURE_WRITE spares existing mappings). */
	if (fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE |
				       F_SEAL_SEAL) != 0) {
		rc = -errno;
		goto fail;
	}
	rte_iova_t iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)base
							     : RTE_BAD_IOVA;
	rc = rte_mempool_populate_iova(mp, (char *)base, iova, r->size, NULL, NULL);
	if (rc < 0)
		goto fail;
	if ((unsigned)rc < n) {
		rc = -ENOMEM;
		goto fail;
	}
	rte_mempool_obj_iter(mp, cluster_mbuf_init, NULL);
	r->pool = mp;
	return 0;
fail:
	rte_mempool_free(mp);
	cluster_region_unmap(r);
	return rc < 0 ? rc : -EINVAL;
}

void cluster_region_destroy(struct cluster_region *r)
{
	rte_mempool_free(r->pool);
	r->pool = NULL;
	cluster_region_unmap(r);
}
