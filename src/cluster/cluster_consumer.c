/* A consumer's attachment: its segment (header and one ring per worker), its eventfd, and
 * its rings on the workers; and all of it taken back when it goes. */
#include "cluster_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_log.h>

struct ring_arg {
	struct cluster_wstate *ws;
	unsigned c;
	struct cluster_wring *r;
	struct cluster_wtx *tx;         /* worker 0 sends for every consumer */
};

static int cluster_ring_add_on(struct cluster_wtab *t, void *arg)
{
	struct ring_arg *a = arg;
	int rc = cluster_wtab_ring_add(t, a->ws, a->c, a->r);
	if (rc == 0 && a->tx != NULL && (rc = cluster_wtab_tx_add(t, a->tx)) != 0)
		cluster_wtab_ring_remove(t, a->ws, a->c);
	return rc;
}

static int cluster_ring_remove_on(struct cluster_wtab *t, void *arg)
{
	struct ring_arg *a = arg;
	cluster_wtab_ring_remove(t, a->ws, a->c);
	if (a->tx != NULL)
		cluster_wtab_tx_remove(t, a->tx);
	return 0;
}

/* Whether the ports freed every frame sent from the consumer's slots, waiting a little
 * for the workers to flush their transmit buffers. */
static bool cluster_tx_settled(const struct cluster_txslots *sl)
{
	for (unsigned ms = 0; ms < CLUSTER_TX_SETTLE_MS; ms++) {
		if (atomic_load_explicit(&sl->inflight, memory_order_acquire) == 0)
			return true;
		usleep(1000);
	}
	return false;
}

void cluster_linger_free(struct cluster_mgr *m)
{
	for (unsigned i = 0; i < m->nb_linger; i++) {
		munmap(m->linger[i].seg, m->linger[i].size);
		free(m->linger[i].slots);
	}
	m->nb_linger = 0;
}

/* The segment and its slots, unmapped and freed, or kept while a port still sends from
 * them (a segment unmapped under a port would fault its worker). */
static void cluster_segment_release(struct cluster_mgr *m, struct cluster_consumer *k)
{
	if (k->hdr == NULL || k->tx.slots == NULL || cluster_tx_settled(k->tx.slots)) {
		if (k->hdr != NULL)
			munmap(k->hdr, k->seg_size);
		free(k->tx.slots);
	} else if (m->nb_linger < CLUSTER_MAX_LINGER) {
		m->linger[m->nb_linger++] = (struct cluster_linger){
			.seg = k->hdr, .size = k->seg_size, .slots = k->tx.slots};
	} else {
		/* Too many: left mapped for good (a bounded leak, far better than a fault). */
		RTE_LOG(WARNING, USER1, "cluster: a consumer's segment stays mapped: %u frames "
			"of it still in a transmit queue\n",
			atomic_load(&k->tx.slots->inflight));
	}
	k->hdr = NULL;
	k->tx.slots = NULL;
}

static void cluster_consumer_free(struct cluster_mgr *m, struct cluster_consumer *k)
{
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		if (k->wr[w] != NULL)
			free(k->wr[w]->shadow);
		free(k->wr[w]);
		k->wr[w] = NULL;
	}
	cluster_segment_release(m, k);
	if (k->seg_fd >= 0)
		close(k->seg_fd);
	if (k->efd >= 0)
		close(k->efd);
	k->seg_fd = k->efd = -1;
}

/* The segment: the header filled in, the rings empty. */
static int cluster_segment_create(struct cluster_mgr *m, struct cluster *cl, unsigned c,
				  struct cluster_consumer *k)
{
	const struct cluster_def *def = &cl->def;
	uint64_t ring_bytes = dpc_ring_bytes(def->ring_size);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t tx_off = dpc_tx_off(def->ring_size, m->ops.nb_workers);
	k->seg_size = (tx_off + sizeof(struct dpc_txring) + pg - 1) & ~(pg - 1);
	k->seg_fd = memfd_create("dpstack-cluster", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (k->seg_fd < 0 || ftruncate(k->seg_fd, (off_t)k->seg_size) != 0 ||
	    fcntl(k->seg_fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		return -errno;
	void *p = mmap(NULL, k->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, k->seg_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	k->hdr = p;
	struct dpc_shm_hdr *h = k->hdr;
	h->magic = DPC_SHM_MAGIC;
	h->version = DPC_SHM_VERSION;
	h->nb_rings = m->ops.nb_workers;
	h->ring_size = def->ring_size;
	h->ring_bytes = ring_bytes;
	h->rings_off = dpc_rings_off();
	h->tx_off = tx_off;
	h->consumer = c;
	unsigned first = 0;
	for (unsigned g = 0; g < def->nb_groups; g++) {
		if (c < first + def->group_size[g]) {
			h->group = g;
			h->index_in_group = c - first;
			break;
		}
		first += def->group_size[g];
	}
	snprintf(h->cluster, sizeof(h->cluster), "%s", def->name);
	h->nb_regions = def->nb_ports;
	for (unsigned i = 0; i < def->nb_ports; i++) {
		const struct cluster_region *r = &m->region[def->ports[i]];
		snprintf(h->regions[i].port, sizeof(h->regions[i].port), "%s",
			 m->port_name[def->ports[i]]);
		h->regions[i].size = r->size;
	}
	doorbell_init(&h->bell);
	k->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->efd < 0)
		return -errno;
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		struct cluster_wring *r = calloc(1, sizeof(*r));
		if (r == NULL)
			return -ENOMEM;
		k->wr[w] = r;
		r->shadow = calloc(def->ring_size, sizeof(*r->shadow));
		if (r->shadow == NULL)
			return -ENOMEM;
		r->sh = (struct dpc_ring *)((char *)h + h->rings_off + ring_bytes * w);
		r->hdr = h;
		r->efd = k->efd;
		r->mask = def->ring_size - 1;
	}
	k->tx.sh = (struct dpc_txring *)((char *)h + tx_off);
	k->tx.taken = 0;
	k->tx.slots = calloc(1, sizeof(*k->tx.slots));
	if (k->tx.slots == NULL)
		return -ENOMEM;
	k->tx.slots->base = &k->tx.sh->slot[0][0];
	k->tx.nb_regions = def->nb_ports;
	for (unsigned i = 0; i < def->nb_ports; i++)
		k->tx.port[i] = def->ports[i];
	return 0;
}

int cluster_consumer_attach(struct cluster_mgr *m, struct cluster *cl, unsigned c, int conn,
			    pid_t pid, int *fds, unsigned *nb_fds, char *err, size_t errlen)
{
	struct cluster_consumer *k = &cl->cons[c];
	if (k->conn_fd >= 0) {
		snprintf(err, errlen, "consumer %u of cluster '%s' is attached already (pid %d)",
			 c, cl->def.name, (int)k->pid);
		return -EBUSY;
	}
	k->seg_fd = k->efd = -1;
	int rc = cluster_segment_create(m, cl, c, k);
	unsigned w = 0;
	for (; rc == 0 && w < m->ops.nb_workers; w++) {
		struct ring_arg a = {.ws = cl->ws[w], .c = c, .r = k->wr[w],
				     .tx = w == 0 ? &k->tx : NULL};
		rc = m->ops.run(m->ops.ctx, w, cluster_ring_add_on, &a);
	}
	if (rc != 0) {
		while (w-- > 0) {
			struct ring_arg a = {.ws = cl->ws[w], .c = c, .tx = w == 0 ? &k->tx : NULL};
			m->ops.run(m->ops.ctx, w, cluster_ring_remove_on, &a);
		}
		cluster_consumer_free(m, k);
		snprintf(err, errlen, "cannot attach: %s", strerror(-rc));
		return rc;
	}
	k->conn_fd = conn;
	k->pid = pid;
	fds[0] = k->seg_fd;
	fds[1] = k->efd;
	for (unsigned i = 0; i < cl->def.nb_ports; i++)
		fds[2 + i] = m->region[cl->def.ports[i]].fd;
	*nb_fds = 2 + cl->def.nb_ports;
	return 0;
}

int cluster_consumer_detach(struct cluster_mgr *m, struct cluster *cl, unsigned c)
{
	struct cluster_consumer *k = &cl->cons[c];
	if (k->conn_fd < 0)
		return -1;
	/* Tell it first: its views of frames are about to be reused. */
	atomic_store(&k->hdr->closed, 1);
	doorbell_ring_fd(&k->hdr->bell, k->efd);
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		struct ring_arg a = {.ws = cl->ws[w], .c = c, .tx = w == 0 ? &k->tx : NULL};
		m->ops.run(m->ops.ctx, w, cluster_ring_remove_on, &a);
	}
	cluster_consumer_free(m, k);
	int conn = k->conn_fd;
	k->conn_fd = -1;
	k->pid = 0;
	return conn;
}
