#include "cluster_worker.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#define CLUSTER_TX_BURST 32              /* frames of one consumer per worker loop */

/* Frees the mbufs of slots [r->freed, upto), in at most two runs of the shadow array. */
static unsigned cluster_wring_free_to(struct cluster_wring *r, uint32_t upto)
{
	uint32_t n = upto - r->freed;
	uint32_t left = n;
	while (left > 0) {
		uint32_t at = r->freed & r->mask;
		uint32_t run = r->mask + 1 - at < left ? r->mask + 1 - at : left;
		rte_pktmbuf_free_bulk(&r->shadow[at], run);
		r->freed += run;
		left -= run;
	}
	return n;
}

/* What the consumer released: cons if it lies in [freed, prod], else nothing (a consumer
 * that writes nonsense loses only its own frames, which stay until it goes). */
static unsigned cluster_wring_reclaim(struct cluster_wring *r)
{
	uint32_t cons = atomic_load_explicit(&r->sh->cons, memory_order_acquire);
	if (cons == r->freed || (uint32_t)(cons - r->freed) > (uint32_t)(r->prod - r->freed))
		return 0;
	return cluster_wring_free_to(r, cons);
}

unsigned cluster_reclaim(struct cluster_wtab *t)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->nb_rings; i++)
		n += cluster_wring_reclaim(t->rings[i]);
	return n;
}

static void cluster_publish(struct cluster_wstate *ws, uint64_t touched)
{
	while (touched != 0) {
		struct cluster_wring *r = ws->ring[__builtin_ctzll(touched)];
		touched &= touched - 1;
		atomic_store_explicit(&r->sh->prod, r->prod, memory_order_release);
		doorbell_ring_fd(&r->hdr->bell, r->efd);
	}
}

void cluster_rx(struct cluster_wtab *t, uint16_t port, struct rte_mbuf **pkts, uint16_t n)
{
	cluster_place(t->port[port].ws, t->port[port].region, pkts, n);
}

bool cluster_flow_place(struct cluster_wtab *t, unsigned slot, uint16_t port,
			struct rte_mbuf **pkts, uint16_t n)
{
	struct cluster_wstate *ws = slot < CLUSTER_MAX ? t->slot[slot] : NULL;
	if (ws == NULL || ws->port_region[port] == CLUSTER_NO_REGION)
		return false;
	cluster_place(ws, ws->port_region[port], pkts, n);
	return true;
}

void cluster_place(struct cluster_wstate *ws, uint16_t region, struct rte_mbuf **pkts,
		   uint16_t n)
{
	if (n == 0)
		return; /* an empty poll: not even the clock */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	const uint64_t ts = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	uint64_t touched = 0;
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		if (m->nb_segs != 1 || m->pool != ws->region_pool[region]) {
			ws->unsupported++;
			rte_pktmbuf_free(m);
			continue;
		}
		const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
		struct dpc_desc d = {
			.off = (uintptr_t)data - ws->region_base[region], .ts_ns = ts,
			.len = m->data_len, .hash = cluster_hash_frame(ws->hash, data, m->data_len),
			.region = region};
		uint16_t refs = 0;
		for (unsigned g = 0; g < ws->nb_groups; g++) {
			unsigned c = ws->group_first[g] + d.hash % ws->group_size[g];
			struct cluster_wring *r = ws->ring[c];
			if (r == NULL) {
				ws->ctr[c].absent++;
				continue;
			}
			if (r->prod - r->freed > r->mask)
				cluster_wring_reclaim(r);
			if (r->prod - r->freed > r->mask) {
				ws->ctr[c].dropped++;
				uint64_t was = atomic_load_explicit(&r->sh->dropped,
								    memory_order_relaxed);
				atomic_store_explicit(&r->sh->dropped, was + 1,
						      memory_order_relaxed);
				continue;
			}
			r->sh->desc[r->prod & r->mask] = d;
			r->shadow[r->prod & r->mask] = m;
			r->prod++;
			ws->ctr[c].delivered++;
			touched |= 1ull << c;
			refs++;
		}
		/* Each ring that holds the frame frees it once; consumers see it only when the
		 * burst is published below, after the count is right. */
		if (refs == 0)
			rte_pktmbuf_free(m);
		else if (refs > 1)
			rte_mbuf_refcnt_update(m, (int16_t)(refs - 1));
	}
	cluster_publish(ws, touched);
}

void cluster_wtab_install(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned slot,
			  const uint16_t *ports, unsigned nb_ports, bool take_all)
{
	t->slot[slot] = ws;
	for (unsigned i = 0; i < nb_ports && take_all; i++)
		t->port[ports[i]] = (struct cluster_wport){.ws = ws, .region = (uint16_t)i};
}

static void cluster_wtab_unlist(struct cluster_wtab *t, struct cluster_wring *r)
{
	for (unsigned i = 0; i < t->nb_rings; i++) {
		if (t->rings[i] == r) {
			t->rings[i] = t->rings[--t->nb_rings];
			return;
		}
	}
}

void cluster_wtab_ring_remove(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned c)
{
	struct cluster_wring *r = ws->ring[c];
	if (r == NULL)
		return;
	cluster_wring_free_to(r, r->prod);
	cluster_wtab_unlist(t, r);
	ws->ring[c] = NULL;
}

void cluster_wtab_remove(struct cluster_wtab *t, struct cluster_wstate *ws)
{
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		if (t->port[p].ws == ws)
			t->port[p] = (struct cluster_wport){0};
	for (unsigned i = 0; i < CLUSTER_MAX; i++)
		if (t->slot[i] == ws)
			t->slot[i] = NULL;
	for (unsigned c = 0; c < CLUSTER_MAX_CONSUMERS; c++)
		cluster_wtab_ring_remove(t, ws, c);
}

int cluster_wtab_ring_add(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned c,
			  struct cluster_wring *r)
{
	if (t->nb_rings == CLUSTER_MAX_WRINGS)
		return -ENOSPC;
	t->rings[t->nb_rings++] = r;
	ws->ring[c] = r;
	return 0;
}

/* A burst of one consumer's posted frames: copied out of its slot (it can rewrite the slot
 * meanwhile: it only spoils its own frame), into an mbuf, out of the port. */
static unsigned cluster_tx_drain(struct cluster_wtab *t, struct cluster_wtx *tx)
{
	struct dpc_txring *r = tx->sh;
	uint32_t cons = atomic_load_explicit(&r->cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&r->prod, memory_order_acquire);
	if ((uint32_t)(prod - cons) > DPC_TX_SIZE)
		prod = cons; /* nonsense from the consumer: nothing to send */
	unsigned n = 0, bad = 0;
	for (; cons != prod && n < CLUSTER_TX_BURST; cons++, n++) {
		struct dpc_tx_desc d = r->desc[cons % DPC_TX_SIZE];
		struct rte_mbuf *m = NULL;
		if (d.region < tx->nb_regions && d.len >= 14 && d.len <= DPC_TX_SLOT)
			m = rte_pktmbuf_alloc(t->pool);
		char *dst = m != NULL ? rte_pktmbuf_append(m, (uint16_t)d.len) : NULL;
		if (dst == NULL) {
			rte_pktmbuf_free(m);
			bad++;
			continue;
		}
		memcpy(dst, r->slot[cons % DPC_TX_SIZE], d.len);
		m->port = tx->port[d.region];
		t->xmit(t->xmit_ctx, tx->port[d.region], m);
	}
	atomic_store_explicit(&r->cons, cons, memory_order_release);
	if (n != 0) {
		atomic_store_explicit(&r->sent, atomic_load_explicit(&r->sent, memory_order_relaxed) +
				      n - bad, memory_order_relaxed);
		atomic_store_explicit(&r->dropped, atomic_load_explicit(&r->dropped,
				      memory_order_relaxed) + bad, memory_order_relaxed);
	}
	return n;
}

unsigned cluster_tx_poll(struct cluster_wtab *t)
{
	unsigned n = 0;
	for (unsigned i = 0; i < t->nb_tx; i++)
		n += cluster_tx_drain(t, t->tx[i]);
	return n;
}

int cluster_wtab_tx_add(struct cluster_wtab *t, struct cluster_wtx *tx)
{
	if (t->nb_tx == CLUSTER_MAX_WRINGS)
		return -ENOSPC;
	t->tx[t->nb_tx++] = tx;
	return 0;
}

void cluster_wtab_tx_remove(struct cluster_wtab *t, struct cluster_wtx *tx)
{
	/* A consumer that sends and exits at once: what it posted still goes out (one ring's
	 * worth at most: a live consumer posting on could hold the worker here). */
	for (unsigned k = 0; k < DPC_TX_SIZE / CLUSTER_TX_BURST && cluster_tx_drain(t, tx) != 0;
	     k++) {
	}
	for (unsigned i = 0; i < t->nb_tx; i++) {
		if (t->tx[i] == tx) {
			t->tx[i] = t->tx[--t->nb_tx];
			return;
		}
	}
}
