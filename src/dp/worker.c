#include "worker.h"
#include "inet/inet.h"

#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "acl/acl.h"
#include "worker_flow.h"
#include "worker_rest.h"
#include "gro.h"
#include "stack/exception.h"

#define WORKER_MAILBOX_SIZE 64
#define WORKER_NEIGH_RING_SIZE 1024 /* ARP news waiting for a worker; more are dropped */
#define WORKER_HANDOFF_RING_SIZE 4096 /* packets handed to a worker and not yet taken */
#define WORKER_DRAIN_US 100      /* longest a frame waits in a TX buffer under load */
#define WORKER_TICK_MS 10        /* all stack timers */
#define WORKER_FAST_TICK_MS 1    /* TCP's: delayed ACKs and RTOs want ms resolution */
#define WORKER_IDLE_POLLS 512    /* empty polls before the first sleep */
#define WORKER_PREFETCH 4        /* packets whose headers are fetched ahead */
/* After this long without work the naps grow DEEP_FACTOR times longer: the ports of the
 * virtual devices have no RX interrupt, so some polling must go on, and this is what keeps
 * an idle daemon near 1% of a core while traffic that pauses briefly keeps short naps.
 * Applications and the control thread end a nap at once through wake_fd. */
#define WORKER_DEEP_IDLE_MS 100
#define WORKER_DEEP_FACTOR 10

static void worker_tx_error(struct rte_mbuf **unsent, uint16_t count, void *arg)
{
	struct worker_txq_ctx *c = arg;
	c->stack->drops[STACK_DROP_TX_QUEUE_FULL] += count;
	c->stack->ports[c->port].tx_dropped += count;
	rte_pktmbuf_free_bulk(unsent, count);
}

/* A frame for the kernel that its interface's queue refused. */
static void worker_kernel_tx_error(struct rte_mbuf **unsent, uint16_t count, void *arg)
{
	struct worker_txq_ctx *c = arg;
	c->stack->ports[c->port].kernel_dropped += count;
	rte_pktmbuf_free_bulk(unsent, count);
}

/* A chained frame for a PMD that sends only first segments (net_af_xdp has no MULTI_SEGS):
 * gather it into one segment, in place if the first has room, else into a fresh mbuf. */
static struct rte_mbuf *worker_linearize(struct worker *w, struct rte_mbuf *m)
{
	if (rte_pktmbuf_linearize(m) == 0)
		return m;
	uint32_t len = rte_pktmbuf_pkt_len(m);
	struct rte_mbuf *c = rte_pktmbuf_alloc(w->stack->pool);
	char *dst = c != NULL && len <= rte_pktmbuf_tailroom(c)
			    ? rte_pktmbuf_append(c, (uint16_t)len) : NULL;
	if (dst == NULL) {
		rte_pktmbuf_free(c);
		rte_pktmbuf_free(m);
		w->stack->drops[STACK_DROP_TX_NO_MBUF]++;
		return NULL;
	}
	const void *src = rte_pktmbuf_read(m, 0, len, dst);
	if (src != dst)
		memcpy(dst, src, len);
	c->port = m->port;
	rte_pktmbuf_free(m);
	return c;
}

static void worker_neigh_learnt(void *ctx, uint16_t port, const struct inet_addr *addr,
				const struct eth_addr *mac, unsigned flags)
{
	struct worker *w = ctx;
	struct worker_neigh_msg msg = {.addr = *addr, .port = port, .flags = (uint8_t)flags,
				       .mac = *mac};
	for (unsigned i = 0; i < w->nb_peers; i++) {
		struct worker *peer = &w->peers[i];
		/* A full ring loses the news, not correctness: that worker resolves by itself. */
		if (peer != w && rte_ring_mp_enqueue_elem(peer->neigh_in, &msg, sizeof(msg)) != 0)
			w->neigh_news_lost++;
	}
}

static void worker_run_neigh_news(struct worker *w)
{
	struct worker_neigh_msg msg;
	while (rte_ring_sc_dequeue_elem(w->neigh_in, &msg, sizeof(msg)) == 0)
		stack_neigh_learn(w->stack, msg.port, &msg.addr, &msg.mac, msg.flags);
}

void worker_set_peers(struct worker *w, struct worker *all, unsigned n)
{
	w->peers = all;
	w->nb_peers = n;
}

bool worker_hand_to(struct worker *w, unsigned peer, struct rte_ring *r,
		    struct worker_handoff *h)
{
	if (rte_ring_mp_enqueue_elem(r, h, sizeof(*h)) != 0)
		return false;
	w->wake_peers |= 1ull << peer;
	return true;
}

static bool worker_steer(void *ctx, unsigned owner, struct rte_mbuf *m, unsigned how)
{
	struct worker *w = ctx;
	struct worker_handoff h = {.m = m, .arg = how};
	return worker_hand_to(w, owner, w->peers[owner].steer_in, &h);
}

static void worker_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct worker *w = ctx;
	if (m->nb_segs > 1 && !w->tx_multi_seg[port] && (m = worker_linearize(w, m)) == NULL) {
		w->stack->ports[port].tx_dropped++; /* tx.no_mbuf says why */
		return;
	}
	uint16_t queue = w->tx_via[port] < 0 ? w->txq[port] : (uint16_t)w->tx_via[port];
	/* A frame that asks the port for offloads gets what this device wants of it first
	 * (virtio: the pseudo-header of a TSO segment with its length, rte_eth_tx_prepare). */
	if (m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK &&
	    rte_eth_tx_prepare(w->eth_port[port], queue, &m, 1) != 1) {
		w->stack->drops[STACK_DROP_TX_PREPARE]++;
		w->stack->ports[port].tx_dropped++;
		rte_pktmbuf_free(m);
		return;
	}
	capture_tap(&w->taps, port, w->index, queue, &m, 1, RTE_PCAPNG_DIRECTION_OUT);
	if (w->tx_via[port] < 0) {
		rte_eth_tx_buffer(w->eth_port[port], w->txq[port], w->txbuf[port], m);
		return;
	}
	unsigned via = (unsigned)w->tx_via[port];
	struct worker_handoff h = {.m = m, .arg = port};
	if (!worker_hand_to(w, via, w->peers[via].tx_in, &h)) {
		w->handoff_full++;
		worker_tx_error(&m, 1, &w->txctx[port]);
	}
}

/* stack_ops.to_kernel: the exception path into the port's kernel interface. */
static void worker_to_kernel(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct worker *w = ctx;
	if (m->nb_segs > 1 && !w->ktx_multi_seg[port] && (m = worker_linearize(w, m)) == NULL) {
		w->stack->ports[port].kernel_dropped++;
		return;
	}
	if (w->ktx_via[port] < 0) {
		rte_eth_tx_buffer(w->keth_port[port], w->ktxq[port], w->ktxbuf[port], m);
		return;
	}
	unsigned via = (unsigned)w->ktx_via[port];
	struct worker_handoff h = {.m = m, .arg = port | WORKER_HANDOFF_KERNEL};
	if (!worker_hand_to(w, via, w->peers[via].tx_in, &h)) {
		w->handoff_full++;
		worker_kernel_tx_error(&m, 1, &w->ktxctx[port]);
	}
}

/* What the kernel wrote to the ports' kernel interfaces leaves by the ports, but its ARP
 * replies for the stack's addresses, which the stack answered already. */
static unsigned worker_poll_kernel(struct worker *w)
{
	struct rte_mbuf *burst[WORKER_BURST];
	unsigned got = 0;
	for (unsigned i = 0; i < w->nb_krxq; i++) {
		const struct worker_rxq *q = &w->krxq[i];
		uint16_t n = rte_eth_rx_burst(q->eth_port, q->queue, burst, WORKER_BURST);
		for (uint16_t k = 0; k < n; k++) {
			if (stack_kernel_frame_held(w->stack, burst[k])) {
				stack_count(w->stack, STACK_EV_KERNEL_ARP_REPLY_HELD);
				rte_pktmbuf_free(burst[k]);
				continue;
			}
			w->stack->ports[q->port].from_kernel++;
			stack_xmit(w->stack, q->port, burst[k]);
		}
		got += n;
	}
	return got;
}

/* Takes what the other workers handed over: datagrams of flows we own, frames to send. */
static unsigned worker_run_handoffs(struct worker *w)
{
	struct worker_handoff h[WORKER_BURST];
	unsigned n = rte_ring_sc_dequeue_burst_elem(w->steer_in, h, sizeof(h[0]), WORKER_BURST,
						    NULL);
	for (unsigned i = 0; i < n; i++) {
		if (h[i].arg & WORKER_HANDOFF_FRAME) {
			stack_count(w->stack, STACK_EV_FLOW_STEERED_IN);
			stack_input(w->stack, (uint16_t)h[i].arg, h[i].m);
		} else {
			stack_input_steered(w->stack, h[i].m, h[i].arg);
		}
	}
	unsigned t = rte_ring_sc_dequeue_burst_elem(w->tx_in, h, sizeof(h[0]), WORKER_BURST, NULL);
	for (unsigned i = 0; i < t; i++) {
		uint16_t p = (uint16_t)h[i].arg;
		if (h[i].arg & WORKER_HANDOFF_KERNEL)
			rte_eth_tx_buffer(w->keth_port[p], w->ktxq[p], w->ktxbuf[p], h[i].m);
		else
			rte_eth_tx_buffer(w->eth_port[p], w->txq[p], w->txbuf[p], h[i].m);
	}
	return n + t;
}

/* A napping peer sees its rings only when the nap ends: end it (see worker_idle). */
static void worker_wake_peers(struct worker *w)
{
	atomic_thread_fence(memory_order_seq_cst);
	uint64_t bits = w->wake_peers;
	w->wake_peers = 0;
	while (bits != 0) {
		struct worker *peer = &w->peers[__builtin_ctzll(bits)];
		bits &= bits - 1;
		uint64_t one = 1;
		if (atomic_load(&peer->sleeping) && write(peer->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the peer is being woken anyway */
		}
	}
}

static struct rte_ring *worker_ring(const char *what, unsigned index, unsigned size,
				    unsigned elem, int socket)
{
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "%s_w%u", what, index);
	return rte_ring_create_elem(name, elem, size, socket, RING_F_SC_DEQ);
}

/* Our queue pair on port p's kernel interface k, or the peer that sends there for us. */
static int worker_kernel_init(struct worker *w, uint16_t p, const struct exception_if *k,
			      int socket)
{
	w->stack->kernel_port[p] = true;
	w->keth_port[p] = k->eth_port;
	w->ktx_multi_seg[p] = k->tx_multi_seg;
	w->ktxctx[p] = (struct worker_txq_ctx){.stack = w->stack, .port = p};
	if (w->index >= k->nb_queues) {
		w->ktx_via[p] = (int16_t)(w->index % k->nb_queues);
		return 0;
	}
	w->ktxq[p] = (uint16_t)w->index;
	w->krxq[w->nb_krxq++] = (struct worker_rxq){
		.port = p, .eth_port = k->eth_port, .queue = (uint16_t)w->index};
	w->ktxbuf[p] = rte_zmalloc_socket("ktxbuf", RTE_ETH_TX_BUFFER_SIZE(WORKER_BURST), 0,
					  socket);
	if (w->ktxbuf[p] == NULL)
		return -ENOMEM;
	rte_eth_tx_buffer_init(w->ktxbuf[p], WORKER_BURST);
	rte_eth_tx_buffer_set_err_callback(w->ktxbuf[p], worker_kernel_tx_error, &w->ktxctx[p]);
	return 0;
}

int worker_kernel_attach(struct worker *w, uint16_t p, const struct exception_if *k)
{
	return worker_kernel_init(w, p, k, (int)rte_lcore_to_socket_id(w->lcore));
}

int worker_init(struct worker *w, unsigned index, unsigned lcore, struct port *ports,
		unsigned nb_ports, struct rte_mempool *pool, uint32_t idle_sleep_max_us,
		const struct steer *steer, const struct stack_params *sizes)
{
	memset(w, 0, sizeof(*w));
	w->wake_fd = -1;
	w->index = index;
	w->lcore = lcore;
	w->idle_sleep_max_us = idle_sleep_max_us;
	int socket = (int)rte_lcore_to_socket_id(lcore);

	struct stack_params sp = *sizes;
	sp.id = index;
	sp.socket_id = socket;
	sp.pool = pool;
	sp.steer = steer;
	sp.ops = (struct stack_ops){.xmit = worker_xmit, .neigh_learnt = worker_neigh_learnt,
				    .steer = worker_steer, .to_kernel = worker_to_kernel,
				    .to_rest = worker_to_rest, .ctx = w};
	w->stack = stack_create(&sp);
	if (w->stack == NULL)
		return -rte_errno;

	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "mbox_w%u", index);
	/* Several threads call workers: the control thread and the application channel's. */
	w->mailbox = rte_ring_create(name, WORKER_MAILBOX_SIZE, socket, RING_F_SC_DEQ);
	w->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->wake_fd < 0) {
		rte_ring_free(w->mailbox);
		stack_destroy(w->stack);
		return -errno;
	}
	w->neigh_in = worker_ring("neigh", index, WORKER_NEIGH_RING_SIZE,
				  sizeof(struct worker_neigh_msg), socket);
	w->steer_in = worker_ring("steer", index, WORKER_HANDOFF_RING_SIZE,
				  sizeof(struct worker_handoff), socket);
	w->tx_in = worker_ring("txin", index, WORKER_HANDOFF_RING_SIZE,
			       sizeof(struct worker_handoff), socket);
	if (w->mailbox == NULL || w->neigh_in == NULL || w->steer_in == NULL || w->tx_in == NULL) {
		worker_fini(w);
		return -rte_errno;
	}
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		w->tx_via[p] = w->ktx_via[p] = -1;
	w->clusters.pool = pool;
	w->clusters.xmit = worker_xmit;
	w->clusters.xmit_ctx = w;
	for (unsigned p = 0; p < nb_ports; p++) {
		if (!ports[p].used)
			continue;
		w->eth_port[p] = ports[p].eth_port;
		w->tx_multi_seg[p] = ports[p].tx_multi_seg;
		w->stack->tx_caps[p] = ports[p].tx_caps;
		w->stack->rx_gro[p] = ports[p].gro;
		w->txctx[p] = (struct worker_txq_ctx){.stack = w->stack, .port = (uint16_t)p};
		if (index >= ports[p].nb_queues) {
			w->tx_via[p] = (int16_t)(index % ports[p].nb_queues);
			continue;
		}
		w->txq[p] = (uint16_t)index;
		w->txp[w->nb_txp++] = (uint16_t)p;
		for (unsigned q = index; q < ports[p].nb_queues; q += ports[p].nb_workers)
			w->rxq[w->nb_rxq++] = (struct worker_rxq){
				.port = (uint16_t)p, .eth_port = ports[p].eth_port,
				.queue = (uint16_t)q};
		w->txbuf[p] = rte_zmalloc_socket("txbuf", RTE_ETH_TX_BUFFER_SIZE(WORKER_BURST), 0,
						 socket);
		if (w->txbuf[p] == NULL) {
			worker_fini(w);
			return -ENOMEM;
		}
		rte_eth_tx_buffer_init(w->txbuf[p], ports[p].tx_burst);
		rte_eth_tx_buffer_set_err_callback(w->txbuf[p], worker_tx_error, &w->txctx[p]);
	}
	for (unsigned p = 0; p < nb_ports; p++) {
		if (ports[p].used && ports[p].kernel.used &&
		    worker_kernel_init(w, (uint16_t)p, &ports[p].kernel, socket) != 0) {
			worker_fini(w);
			return -ENOMEM;
		}
	}
	return 0;
}

static void worker_txbuf_free(struct rte_eth_dev_tx_buffer **b)
{
	if (*b == NULL)
		return;
	/* Frames still buffered are freed, not sent: the ports are stopping. */
	rte_pktmbuf_free_bulk((*b)->pkts, (*b)->length);
	rte_free(*b);
	*b = NULL;
}

void worker_fini(struct worker *w)
{
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		worker_txbuf_free(&w->txbuf[p]);
		worker_txbuf_free(&w->ktxbuf[p]);
	}
	stack_destroy(w->stack);
	w->stack = NULL;
	rte_ring_free(w->mailbox);
	w->mailbox = NULL;
	rte_ring_free(w->neigh_in);
	w->neigh_in = NULL;
	/* Peers have stopped: what they handed over and we did not take is freed here. */
	struct worker_handoff h;
	while (w->steer_in != NULL && rte_ring_sc_dequeue_elem(w->steer_in, &h, sizeof(h)) == 0)
		rte_pktmbuf_free(h.m);
	while (w->tx_in != NULL && rte_ring_sc_dequeue_elem(w->tx_in, &h, sizeof(h)) == 0)
		rte_pktmbuf_free(h.m);
	rte_ring_free(w->steer_in);
	w->steer_in = NULL;
	rte_ring_free(w->tx_in);
	w->tx_in = NULL;
	if (w->wake_fd >= 0)
		close(w->wake_fd);
	w->wake_fd = -1;
}

static void worker_drain(struct worker *w)
{
	for (unsigned i = 0; i < w->nb_txp; i++) {
		uint16_t p = w->txp[i];
		rte_eth_tx_buffer_flush(w->eth_port[p], w->txq[p], w->txbuf[p]);
	}
	for (unsigned i = 0; i < w->nb_krxq; i++) {
		uint16_t p = w->krxq[i].port;
		rte_eth_tx_buffer_flush(w->keth_port[p], w->ktxq[p], w->ktxbuf[p]);
	}
}

static void worker_run_mailbox(struct worker *w)
{
	void *obj;
	while (rte_ring_sc_dequeue(w->mailbox, &obj) == 0) {
		struct worker_call *c = obj;
		c->result = c->fn(w->stack, c->arg);
		atomic_store_explicit(&c->done, true, memory_order_release);
	}
	doorbell_ring(&w->call_bell);
}

/* With nothing to do, back off exponentially up to idle_sleep_max_us so an idle daemon does
 * not burn a core; the first packet resets it. The sleep waits on wake_fd, so an
 * application's command or a control call ends it at once. */
static void worker_idle(struct worker *w, unsigned *empty_polls, uint32_t *sleep_us, bool deep)
{
	if (w->idle_sleep_max_us == 0 || ++*empty_polls < WORKER_IDLE_POLLS)
		return;
	if (w->hooks.sleeping != NULL && !w->hooks.sleeping(w->hooks.ctx, true)) {
		*empty_polls = 0;
		return;
	}
	/* Announce the nap, then look at the rings once more: a peer that handed something
	 * over either sees the announcement and wakes us, or we see its packet
	 * (worker_wake_peers is the other half). */
	atomic_store(&w->sleeping, true);
	atomic_thread_fence(memory_order_seq_cst);
	if (rte_ring_count(w->steer_in) != 0 || rte_ring_count(w->tx_in) != 0) {
		atomic_store(&w->sleeping, false);
		if (w->hooks.sleeping != NULL)
			w->hooks.sleeping(w->hooks.ctx, false);
		*empty_polls = 0;
		return;
	}
	struct timespec ts = {.tv_nsec = (long)*sleep_us * 1000};
	struct pollfd pfd = {.fd = w->wake_fd, .events = POLLIN};
	if (ppoll(&pfd, 1, &ts, NULL) > 0) {
		uint64_t v;
		if (read(w->wake_fd, &v, sizeof(v)) < 0) {
			/* another reader took it: nothing to do */
		}
		*sleep_us = 1;
	}
	atomic_store(&w->sleeping, false);
	if (w->hooks.sleeping != NULL)
		w->hooks.sleeping(w->hooks.ctx, false);
	w->idle_sleeps++;
	uint32_t cap = deep ? w->idle_sleep_max_us * WORKER_DEEP_FACTOR : w->idle_sleep_max_us;
	if (*sleep_us < cap)
		*sleep_us = *sleep_us * 2 > cap ? cap : *sleep_us * 2;
}

int worker_main(void *arg)
{
	struct worker *w = arg;
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t per_ms = hz / 1000;
	const uint64_t per_us = hz / 1000000;
	const uint64_t drain_tsc = hz / 1000000 * WORKER_DRAIN_US;
	uint64_t last_drain = rte_rdtsc(), last_tick = last_drain, last_fast_tick = last_drain;
	unsigned empty_polls = 0;
	uint32_t sleep_us = 1;
	uint64_t last_work = rte_rdtsc();
	struct rte_mbuf *burst[WORKER_BURST];

	uint64_t now = rte_rdtsc();
	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		const uint64_t loop_start = now;
		w->stack->now_ms = now / per_ms;
		w->stack->now_us = now / per_us;
		unsigned got = 0;
		for (unsigned i = 0; i < w->nb_rxq; i++) {
			const struct worker_rxq *q = &w->rxq[i];
			uint16_t rx = rte_eth_rx_burst(q->eth_port, q->queue, burst, WORKER_BURST);
			capture_tap(&w->taps, q->port, w->index, q->queue, burst, rx,
				    RTE_PCAPNG_DIRECTION_IN);
			if (cluster_owns(&w->clusters, q->port)) {
				cluster_rx(&w->clusters, q->port, burst, rx);
				got += rx;
				continue;
			}
			uint16_t n = worker_flow_rx(w, q->port, burst, rx);
			if (w->stack->rx_gro[q->port])
				n = gro_burst(w->stack, burst, n);
			acl_rx_burst(w->stack->acl, w->index, q->port, burst, n);
			/* Headers are the first bytes the stack touches: fetch them a few packets
			 * ahead, so the miss overlaps the work on the packets before. */
			for (uint16_t k = 0; k < n && k < WORKER_PREFETCH; k++)
				rte_prefetch0(rte_pktmbuf_mtod(burst[k], void *));
			for (uint16_t k = 0; k < n; k++) {
				if (k + WORKER_PREFETCH < n)
					rte_prefetch0(rte_pktmbuf_mtod(burst[k + WORKER_PREFETCH], void *));
				stack_input(w->stack, q->port, burst[k]);
			}
			worker_rest_flush(w);
			got += rx;
		}
		got += worker_poll_kernel(w);
		got += worker_run_handoffs(w);
		worker_rest_flush(w);
		got += cluster_reclaim(&w->clusters);
		got += cluster_tx_poll(&w->clusters);
		uint64_t t_ports = rte_rdtsc();
		*(got != 0 ? &w->cycles.ports : &w->cycles.polling) += t_ports - now;
		w->polls++;
		if (now - last_tick >= per_ms * WORKER_TICK_MS) {
			stack_tick(w->stack, now / per_ms);
			last_tick = now;
			last_fast_tick = now;
		} else if (now - last_fast_tick >= per_ms * WORKER_FAST_TICK_MS) {
			stack_tick_transport(w->stack, now / per_ms);
			last_fast_tick = now;
		}
		if (rte_ring_count(w->mailbox) != 0)
			worker_run_mailbox(w);
		if (rte_ring_count(w->neigh_in) != 0)
			worker_run_neigh_news(w);
		uint64_t t_timers = rte_rdtsc();
		w->cycles.timers += t_timers - t_ports;
		unsigned app_work = w->hooks.poll != NULL ? w->hooks.poll(w->hooks.ctx) : 0;
		uint64_t t_apps = rte_rdtsc();
		*(app_work != 0 ? &w->cycles.apps : &w->cycles.polling) += t_apps - t_timers;
		if (w->wake_peers != 0)
			worker_wake_peers(w);
		/* Send at once when the queues are quiet (latency), batch while they are busy
		 * (throughput), and never hold a frame longer than WORKER_DRAIN_US. */
		if (got == 0 || now - last_drain >= drain_tsc) {
			worker_drain(w);
			last_drain = now;
		}
		uint64_t t_tx = rte_rdtsc();
		w->cycles.tx += t_tx - t_apps;
		uint64_t naps = w->idle_sleeps;
		if (got + app_work != 0) {
			w->busy_polls++;
			empty_polls = 0;
			sleep_us = 1;
			last_work = now;
		} else {
			worker_idle(w, &empty_polls, &sleep_us,
				    now - last_work > per_ms * WORKER_DEEP_IDLE_MS);
		}
		now = rte_rdtsc();
		*(w->idle_sleeps != naps ? &w->cycles.asleep : &w->cycles.polling) += now - t_tx;
		if (got + app_work != 0)
			w->busy_cycles += now - loop_start;
	}
	worker_drain(w);
	return 0;
}

struct worker_call_wait {
	struct worker *w;
	struct worker_call *c;
};

int worker_call(struct worker *w, int (*fn)(struct stack *s, void *arg), void *arg)
{
	struct worker_call c = {.fn = fn, .arg = arg};
	atomic_init(&c.done, false);
	const int64_t spin = doorbell_spin_default();
	for (;;) {
		uint32_t seen = doorbell_seq(&w->call_bell);
		if (rte_ring_mp_enqueue(w->mailbox, &c) == 0)
			break;
		/* Full: the worker rings when it has emptied it. */
		doorbell_wait(&w->call_bell, seen, spin, -1);
	}
	/* A napping worker would see its mailbox only at the end of the nap. */
	uint64_t one = 1;
	if (write(w->wake_fd, &one, sizeof(one)) < 0) {
		/* the counter is saturated: the worker is awake anyway */
	}
	for (;;) {
		uint32_t seen = doorbell_seq(&w->call_bell);
		if (atomic_load_explicit(&c.done, memory_order_acquire))
			return c.result;
		doorbell_wait(&w->call_bell, seen, spin, -1);
	}
}
