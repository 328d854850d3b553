/* Receiving, releasing and waiting: the consumer's half of each ring (cluster_shm.h). */
#include "dpc_priv.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "base/doorbell.h"

int64_t dpc_spin_default(void)
{
	return doorbell_spin_default();
}

static bool dpc_closed(const struct dps_cluster *c)
{
	return atomic_load_explicit(&c->hdr->closed, memory_order_acquire) != 0;
}

DPC_EXPORT int dps_cluster_recv(struct dps_cluster *c, struct dps_cluster_frame *f, unsigned max)
{
	if (dpc_closed(c))
		return -EPIPE;
	const struct dpc_shm_hdr *h = c->hdr;
	const uint32_t mask = h->ring_size - 1;
	unsigned got = 0;
	for (unsigned k = 0; k < h->nb_rings && got < max; k++) {
		unsigned i = (c->next_ring + k) % h->nb_rings;
		struct dpc_ring *r = dpc_ring(c, i);
		uint32_t prod = atomic_load_explicit(&r->prod, memory_order_acquire);
		while (c->rd[i] != prod && got < max) {
			const struct dpc_desc *d = &r->desc[c->rd[i] & mask];
			/* The daemon wrote it; checked all the same, so that a bad descriptor
			 * can only ever point into our own mappings. */
			if (d->region >= h->nb_regions || d->off > c->region_size[d->region] ||
			    d->len > c->region_size[d->region] - d->off)
				return -EPROTO;
			f[got++] = (struct dps_cluster_frame){
				.data = c->region[d->region] + d->off, .len = d->len,
				.hash = d->hash, .ts_ns = d->ts_ns, .port = d->region,
				.ring = (uint16_t)i, .seq = c->rd[i]};
			c->rd[i]++;
		}
	}
	c->next_ring = (c->next_ring + 1) % h->nb_rings;
	c->received += got;
	return (int)got;
}

DPC_EXPORT int dps_cluster_release(struct dps_cluster *c, const struct dps_cluster_frame *f,
				   unsigned n)
{
	uint32_t rel[DPC_MAX_RINGS];
	uint64_t touched = 0;
	memcpy(rel, c->rel, sizeof(rel));
	for (unsigned k = 0; k < n; k++) {
		unsigned i = f[k].ring;
		if (i >= c->hdr->nb_rings || f[k].seq != rel[i] || rel[i] == c->rd[i])
			return -EINVAL;
		rel[i]++;
		touched |= 1ull << i;
	}
	while (touched != 0) {
		unsigned i = (unsigned)__builtin_ctzll(touched);
		touched &= touched - 1;
		c->rel[i] = rel[i];
		atomic_store_explicit(&dpc_ring(c, i)->cons, rel[i], memory_order_release);
	}
	return 0;
}

DPC_EXPORT int dps_cluster_forward(struct dps_cluster *c, const struct dps_cluster_frame *f,
				   unsigned port)
{
	if (port >= c->hdr->nb_regions || f->ring >= c->hdr->nb_rings)
		return -EINVAL;
	unsigned i = f->ring;
	/* Only a frame received and not yet released: its slot is still ours to mark. */
	if ((uint32_t)(f->seq - c->rel[i]) >= (uint32_t)(c->rd[i] - c->rel[i]))
		return -EINVAL;
	struct dpc_ring *r = dpc_ring(c, i);
	r->desc[f->seq & (c->hdr->ring_size - 1)].fwd = (uint16_t)(port + 1);
	atomic_store_explicit(&r->marks, atomic_load_explicit(&r->marks, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return 0;
}

struct dpc_wait {
	struct dps_cluster *c;
	int timeout_ms;
	int ended;                      /* -EPIPE when the daemon let us go */
};

static bool dpc_ready(void *arg)
{
	struct dpc_wait *w = arg;
	struct dps_cluster *c = w->c;
	if (dpc_closed(c))
		return true;
	for (unsigned i = 0; i < c->hdr->nb_rings; i++)
		if (atomic_load_explicit(&dpc_ring(c, i)->prod, memory_order_acquire) != c->rd[i])
			return true;
	return false;
}

static int dpc_sleep(void *arg)
{
	struct dpc_wait *w = arg;
	struct pollfd pfd[2] = {{.fd = w->c->efd, .events = POLLIN},
				{.fd = w->c->conn, .events = POLLIN}};
	int n = poll(pfd, 2, w->timeout_ms);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (pfd[1].revents != 0)
		return -EPIPE;
	uint64_t v;
	if (read(w->c->efd, &v, sizeof(v)) < 0) {
		/* another thread took it: we look at the rings anyway */
	}
	return 0;
}

DPC_EXPORT int dps_cluster_wait(struct dps_cluster *c, int timeout_ms)
{
	struct dpc_wait w = {.c = c, .timeout_ms = timeout_ms};
	int rc = doorbell_wait_fd(&c->hdr->bell, c->spin_ns, dpc_ready, dpc_sleep, &w);
	if (rc == 0 && dpc_closed(c))
		return -EPIPE;
	return rc;
}

DPC_EXPORT void *dps_cluster_tx_buffer(struct dps_cluster *c, uint32_t *size)
{
	if (dpc_closed(c)) {
		errno = EPIPE;
		return NULL;
	}
	struct dpc_txring *r = c->tx;
	uint32_t prod = atomic_load_explicit(&r->prod, memory_order_relaxed);
	if (prod - atomic_load_explicit(&r->cons, memory_order_acquire) >= DPC_TX_SIZE) {
		errno = EAGAIN;
		return NULL;
	}
	if (size != NULL)
		*size = DPC_TX_SLOT;
	return r->slot[prod % DPC_TX_SIZE];
}

DPC_EXPORT int dps_cluster_tx_post(struct dps_cluster *c, unsigned port, uint32_t len)
{
	if (dpc_closed(c))
		return -EPIPE;
	if (port >= c->hdr->nb_regions || len < 14 || len > DPC_TX_SLOT)
		return -EINVAL;
	struct dpc_txring *r = c->tx;
	uint32_t prod = atomic_load_explicit(&r->prod, memory_order_relaxed);
	if (prod - atomic_load_explicit(&r->cons, memory_order_acquire) >= DPC_TX_SIZE)
		return -EAGAIN;
	r->desc[prod % DPC_TX_SIZE] = (struct dpc_tx_desc){.len = len, .region = (uint16_t)port};
	atomic_store_explicit(&r->prod, prod + 1, memory_order_release);
	return 0;
}

DPC_EXPORT int dps_cluster_send(struct dps_cluster *c, unsigned port, const void *frame,
				uint32_t len)
{
	if (dpc_closed(c))
		return -EPIPE;
	if (port >= c->hdr->nb_regions || len < 14 || len > DPC_TX_SLOT)
		return -EINVAL;
	void *buf = dps_cluster_tx_buffer(c, NULL);
	if (buf == NULL)
		return -errno;
	memcpy(buf, frame, len);
	return dps_cluster_tx_post(c, port, len);
}

DPC_EXPORT int dps_cluster_stats(const struct dps_cluster *c, struct dps_cluster_stats *st)
{
	st->received = c->received;
	st->dropped = 0;
	st->sent = atomic_load_explicit(&c->tx->sent, memory_order_relaxed);
	st->send_dropped = atomic_load_explicit(&c->tx->dropped, memory_order_relaxed);
	for (unsigned i = 0; i < c->hdr->nb_rings; i++)
		st->dropped += atomic_load_explicit(&dpc_ring(c, i)->dropped, memory_order_relaxed);
	return 0;
}
