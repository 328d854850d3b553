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

/* Released frames [r->freed, upto), each sent out of the port its consumer marked it for,
 * or freed. A mark naming no port of the cluster frees the frame (counted nowhere: the
 * consumer's own mistake). */
static void cluster_wring_forward_to(struct cluster_wring *r, uint32_t upto)
{
	struct cluster_wstate *ws = r->ws;
	for (; r->freed != upto; r->freed++) {
		uint32_t at = r->freed & r->mask;
		uint16_t fwd = *(volatile uint16_t *)&r->sh->desc[at].fwd;
		if (fwd == 0 || fwd > ws->nb_ports) {
			rte_pktmbuf_free(r->shadow[at]);
			continue;
		}
		ws->xmit(ws->xmit_ctx, ws->port[fwd - 1], r->shadow[at]);
		ws->forwarded++;
	}
}

/* What the consumer released: cons if it lies in [freed, prod], else nothing (a consumer
 * that writes nonsense loses only its own frames, which stay until it goes). */
static unsigned cluster_wring_reclaim(struct cluster_wring *r)
{
	uint32_t cons = atomic_load_explicit(&r->sh->cons, memory_order_acquire);
	if (cons == r->freed || (uint32_t)(cons - r->freed) > (uint32_t)(r->prod - r->freed))
		return 0;
	/* Marks made before that release are visible now (cons was stored after them); the
	 * consumer can have marked only frames it was given, before r->prod. */
	uint32_t marks = atomic_load_explicit(&r->sh->marks, memory_order_relaxed);
	if (marks != r->marks) {
		r->marks = marks;
		r->scan_to = r->prod;
	}
	uint32_t n = cons - r->freed;
	if ((uint32_t)(r->scan_to - r->freed) <= (uint32_t)(r->prod - r->freed)) {
		uint32_t scan = r->scan_to - r->freed < n ? r->scan_to - r->freed : n;
		cluster_wring_forward_to(r, r->freed + scan);
	}
	if (r->freed != cons)
		cluster_wring_free_to(r, cons);
	return n;
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

/* The frame's hash: the cluster's formula or its program. */
static uint32_t cluster_frame_hash(const struct cluster_wstate *ws, const struct rte_mbuf *m)
{
	if (ws->hash_prog != NULL)
		return cluster_prog_run(ws->hash_prog, m);
	return cluster_hash_frame(ws->hash, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
}

/* Puts d (frame m) on one consumer of each group; returns how many rings took it. */
static uint16_t cluster_deliver(struct cluster_wstate *ws, const struct dpc_desc *d,
				struct rte_mbuf *m, uint64_t *touched)
{
	uint16_t refs = 0;
	for (unsigned g = 0; g < ws->nb_groups; g++) {
		unsigned c = ws->group_first[g] + d->hash % ws->group_size[g];
		struct cluster_wring *r = ws->ring[c];
		if (r == NULL) {
			ws->ctr[c].absent++;
			continue;
		}
		if (r->prod - r->freed > r->mask)
			cluster_wring_reclaim(r);
		if (r->prod - r->freed > r->mask) {
			ws->ctr[c].dropped++;
			uint64_t was = atomic_load_explicit(&r->sh->dropped, memory_order_relaxed);
			atomic_store_explicit(&r->sh->dropped, was + 1, memory_order_relaxed);
			continue;
		}
		r->sh->desc[r->prod & r->mask] = *d;
		r->shadow[r->prod & r->mask] = m;
		r->prod++;
		ws->ctr[c].delivered++;
		*touched |= 1ull << c;
		refs++;
	}
	return refs;
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
	struct rte_mbuf *bounce[n];
	uint16_t nb_bounce = 0;
	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		uint16_t refs = 0;
		if (ws->nb_groups == 0) {
			/* bounce only: no consumer to read it */
		} else if (m->nb_segs != 1 || m->pool != ws->region_pool[region]) {
			ws->unsupported++;
		} else {
			const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
			struct dpc_desc d = {
				.off = (uintptr_t)data - ws->region_base[region], .ts_ns = ts,
				.len = m->data_len, .hash = cluster_frame_hash(ws, m),
				.region = region};
			refs = cluster_deliver(ws, &d, m, &touched);
		}
		if (ws->bounce_port >= 0) {
			if (ws->filter == NULL || cluster_prog_run(ws->filter, m) != 0) {
				bounce[nb_bounce++] = m;
				refs++;
			} else {
				ws->filtered++;
			}
		}
		/* Each ring and the bounce free the frame once; consumers see it only when the
		 * burst is published below, and the port sends it only then, after the count
		 * is right. */
		if (refs == 0)
			rte_pktmbuf_free(m);
		else if (refs > 1)
			rte_mbuf_refcnt_update(m, (int16_t)(refs - 1));
	}
	cluster_publish(ws, touched);
	for (uint16_t k = 0; k < nb_bounce; k++)
		ws->xmit(ws->xmit_ctx, (uint16_t)ws->bounce_port, bounce[k]);
	ws->bounced += nb_bounce;
}

void cluster_wtab_install(struct cluster_wtab *t, struct cluster_wstate *ws, unsigned slot,
			  const uint16_t *ports, unsigned nb_ports, enum cluster_take take)
{
	ws->xmit = t->xmit;
	ws->xmit_ctx = t->xmit_ctx;
	ws->nb_ports = nb_ports;
	memcpy(ws->port, ports, nb_ports * sizeof(ports[0]));
	t->slot[slot] = ws;
	for (unsigned i = 0; i < nb_ports; i++) {
		if (take == CLUSTER_TAKE_ALL)
			t->port[ports[i]] = (struct cluster_wport){.ws = ws, .region = (uint16_t)i};
		else if (take == CLUSTER_TAKE_REST)
			t->rest_slot[ports[i]] = (uint8_t)(slot + 1);
	}
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
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		if (t->port[p].ws == ws)
			t->port[p] = (struct cluster_wport){0};
		if (t->rest_slot[p] != 0 && t->slot[t->rest_slot[p] - 1] == ws)
			t->rest_slot[p] = 0;
	}
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
	r->ws = ws;
	r->marks = atomic_load_explicit(&r->sh->marks, memory_order_relaxed);
	r->scan_to = r->prod;
	t->rings[t->nb_rings++] = r;
	ws->ring[c] = r;
	return 0;
}

/* A port freed the mbuf of a consumer's frame: the slot may be written again. */
static void cluster_tx_slot_done(void *addr, void *opaque)
{
	struct cluster_txslots *sl = opaque;
	size_t i = (size_t)((uint8_t *)addr - sl->base) / DPC_TX_SLOT;
	atomic_store_explicit(&sl->done[i], 1, memory_order_release);
	atomic_fetch_sub_explicit(&sl->inflight, 1, memory_order_relaxed);
}

/* Gives the consumer back the slots from cons on that the ports are done with, in order. */
static uint32_t cluster_tx_give_back(struct cluster_wtx *tx, uint32_t cons)
{
	while (cons != tx->taken &&
	       atomic_load_explicit(&tx->slots->done[cons % DPC_TX_SIZE], memory_order_acquire)) {
		atomic_store_explicit(&tx->slots->done[cons % DPC_TX_SIZE], 0, memory_order_relaxed);
		cons++;
	}
	return cons;
}

/* The frame in slot i as an mbuf of pool whose data is the slot itself, or NULL. */
static struct rte_mbuf *cluster_tx_attach(struct cluster_wtx *tx, struct rte_mempool *pool,
					  unsigned i, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return NULL;
	struct rte_mbuf_ext_shared_info *sh = &tx->slots->shinfo[i];
	sh->free_cb = cluster_tx_slot_done;
	sh->fcb_opaque = tx->slots;
	rte_mbuf_ext_refcnt_set(sh, 1);
	uint8_t *buf = tx->slots->base + (size_t)i * DPC_TX_SLOT;
	rte_iova_t iova = rte_eal_iova_mode() == RTE_IOVA_VA ? (rte_iova_t)(uintptr_t)buf
							     : RTE_BAD_IOVA;
	rte_pktmbuf_attach_extbuf(m, buf, iova, DPC_TX_SLOT, sh);
	m->data_off = 0;
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	atomic_fetch_add_explicit(&tx->slots->inflight, 1, memory_order_relaxed);
	return m;
}

/* A burst of one consumer's posted frames, each sent from its slot (the consumer may
 * rewrite the slot meanwhile: it only spoils its own frame). */
static unsigned cluster_tx_drain(struct cluster_wtab *t, struct cluster_wtx *tx)
{
	struct dpc_txring *r = tx->sh;
	uint32_t cons = cluster_tx_give_back(tx, atomic_load_explicit(&r->cons,
								       memory_order_relaxed));
	uint32_t prod = atomic_load_explicit(&r->prod, memory_order_acquire);
	if ((uint32_t)(prod - cons) > DPC_TX_SIZE || (uint32_t)(prod - tx->taken) > DPC_TX_SIZE)
		prod = tx->taken; /* nonsense from the consumer: nothing to send */
	unsigned n = 0, bad = 0;
	for (; tx->taken != prod && n < CLUSTER_TX_BURST; tx->taken++, n++) {
		unsigned i = tx->taken % DPC_TX_SIZE;
		struct dpc_tx_desc d = r->desc[i];
		struct rte_mbuf *m = NULL;
		if (d.region < tx->nb_regions && d.len >= 14 && d.len <= DPC_TX_SLOT)
			m = cluster_tx_attach(tx, t->pool, i, d.len);
		if (m == NULL) {
			atomic_store_explicit(&tx->slots->done[i], 1, memory_order_relaxed);
			bad++;
			continue;
		}
		m->port = tx->port[d.region];
		t->xmit(t->xmit_ctx, tx->port[d.region], m);
	}
	atomic_store_explicit(&r->cons, cluster_tx_give_back(tx, cons), memory_order_release);
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
