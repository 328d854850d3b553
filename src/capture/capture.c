/* A capture's resources (filter, ring, pool of copies) and the packet path into them. */
#include "capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "capture_filter.h"

/* Copies waiting for the writer. Enough for a burst from every worker while the writer
 * sleeps or writes; beyond it frames are counted as capture drops, as a kernel's capture
 * buffer does (tcpdump's "dropped by kernel"). */
#define CAPTURE_RING_SIZE 4096
/* The pool also holds a batch the writer is writing and bursts being copied. */
#define CAPTURE_POOL_SIZE (CAPTURE_RING_SIZE + 2048 - 1)
/* A copy of a larger frame (jumbo MTU) chains segments from the same pool, which
 * rte_pcapng_write_packets writes as one block: an ordinary frame takes one ~1.7 KB
 * buffer rather than a jumbo-sized one (the pool is ~11 MB, not ~60). */
#define CAPTURE_SEG_FRAME RTE_ETHER_MAX_LEN
#define CAPTURE_BURST 32         /* copies queued at once */

static _Atomic unsigned capture_seq; /* unique names of rings and pools */

struct capture *capture_create(uint16_t port, const char *port_name, uint16_t eth_port,
			       uint32_t snaplen, const char *filter, uint64_t count,
			       unsigned nb_workers, char *err, size_t errlen)
{
	if (nb_workers > CAPTURE_MAX_WORKERS || snaplen == 0 || snaplen > CAPTURE_SNAPLEN_MAX) {
		snprintf(err, errlen, "capture: bad parameters");
		return NULL;
	}
	if (filter != NULL && strlen(filter) >= CAPTURE_FILTER_MAX) {
		snprintf(err, errlen, "filter longer than %d bytes", CAPTURE_FILTER_MAX - 1);
		return NULL;
	}
	struct capture *c = rte_zmalloc("capture", sizeof(*c), RTE_CACHE_LINE_SIZE);
	if (c == NULL) {
		snprintf(err, errlen, "capture: out of memory");
		return NULL;
	}
	c->port = port;
	c->eth_port = eth_port;
	c->snaplen = snaplen;
	c->count = count;
	c->client_fd = -1;
	snprintf(c->port_name, sizeof(c->port_name), "%s", port_name);
	snprintf(c->filter, sizeof(c->filter), "%s", filter != NULL ? filter : "");
	doorbell_init(&c->bell);
	c->bell_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->bell_fd < 0) {
		snprintf(err, errlen, "capture: eventfd: %s", strerror(errno));
		capture_destroy(c);
		return NULL;
	}
	if (c->filter[0] != '\0') {
		if (capture_filter_compile(c->filter, snaplen, &c->filter_prog, err, errlen) != 0) {
			capture_destroy(c);
			return NULL;
		}
		c->filtered = true;
	}
	unsigned seq = atomic_fetch_add(&capture_seq, 1);
	char name[RTE_MEMPOOL_NAMESIZE];
	snprintf(name, sizeof(name), "capring%u", seq);
	c->ring = rte_ring_create(name, CAPTURE_RING_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "cappool%u", seq);
	uint32_t seg = snaplen < CAPTURE_SEG_FRAME ? snaplen : CAPTURE_SEG_FRAME;
	/* No per-lcore cache: copies are freed by the writer, which is no EAL lcore, and a
	 * finished capture must find all of them back in the pool. */
	c->pool = rte_pktmbuf_pool_create(name, CAPTURE_POOL_SIZE, 0, 0,
					  (uint16_t)rte_pcapng_mbuf_size(seg), SOCKET_ID_ANY);
	if (c->ring == NULL || c->pool == NULL) {
		snprintf(err, errlen, "capture: no memory for its ring and pool: %s",
			 rte_strerror(rte_errno));
		capture_destroy(c);
		return NULL;
	}
	return c;
}

void capture_release(struct capture *c)
{
	if (c->ring != NULL) {
		struct rte_mbuf *m;
		while (rte_ring_sc_dequeue(c->ring, (void **)&m) == 0)
			rte_pktmbuf_free(m);
		rte_ring_free(c->ring);
		c->ring = NULL;
	}
	rte_mempool_free(c->pool);
	c->pool = NULL;
	if (c->filtered)
		pcap_freecode(&c->filter_prog);
	c->filtered = false;
}

void capture_destroy(struct capture *c)
{
	if (c == NULL)
		return;
	if (c->thread_started)
		pthread_join(c->thread, NULL);
	capture_release(c);
	if (c->bell_fd >= 0)
		close(c->bell_fd);
	if (c->client_fd >= 0)
		close(c->client_fd);
	rte_free(c);
}

uint64_t capture_copied(const struct capture *c)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < CAPTURE_MAX_WORKERS; i++)
		n += atomic_load_explicit(&c->counts[i].copied, memory_order_relaxed);
	return n;
}

uint64_t capture_dropped(const struct capture *c)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < CAPTURE_MAX_WORKERS; i++)
		n += atomic_load_explicit(&c->counts[i].dropped, memory_order_relaxed);
	return n;
}

void capture_taps_set(struct capture_taps *t, uint16_t port, struct capture *c)
{
	if (port >= NETCFG_MAX_PORTS)
		return;
	t->nb_on = t->nb_on + (c != NULL) - (t->on[port] != NULL);
	t->on[port] = c;
}

/* Only the owning worker writes its counters: a plain add, no locked instruction. */
static inline void capture_count(_Atomic uint64_t *v, uint64_t n)
{
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
			      memory_order_relaxed);
}

/* Queues k copies for the writer, freeing those the ring has no room for; returns how many
 * it queued. */
static unsigned capture_queue(struct capture *c, struct rte_mbuf **copies, unsigned k)
{
	unsigned q = rte_ring_mp_enqueue_burst(c->ring, (void **)copies, k, NULL);
	rte_pktmbuf_free_bulk(copies + q, k - q);
	return q;
}

void capture_burst(struct capture *c, unsigned worker, uint16_t queue,
		   struct rte_mbuf *const *pkts, uint16_t n, enum rte_pcapng_direction dir)
{
	struct rte_mbuf *copies[CAPTURE_BURST];
	unsigned k = 0, wanted = 0, queued = 0;
	const uint64_t now = rte_get_tsc_cycles();
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		if (c->filtered && !capture_filter_match(&c->filter_prog, m))
			continue;
		wanted++;
		struct rte_mbuf *copy = rte_pcapng_copy(c->eth_port, queue, m, c->pool,
							c->snaplen, now, dir);
		if (copy != NULL)
			copies[k++] = copy;
		if (k == CAPTURE_BURST) {
			queued += capture_queue(c, copies, k);
			k = 0;
		}
	}
	if (k != 0)
		queued += capture_queue(c, copies, k);
	struct capture_worker_counts *cnt = &c->counts[worker];
	if (queued != 0) {
		capture_count(&cnt->copied, queued);
		doorbell_ring_fd(&c->bell, c->bell_fd);
	}
	/* The pool or the ring was full: the writer is behind. */
	if (wanted != queued)
		capture_count(&cnt->dropped, wanted - queued);
}
