/* Frames a worker loses between the stack and the port are counted (src/dp/worker.c, issue
 * 13): a TX queue that takes only part of what is flushed to it (net_ring, whose ring
 * holds 1023 frames and has no reader here), a peer's full tx_in ring for a worker without
 * a TX queue of its own on the port, ARP news a peer's full ring cannot take, and a chained
 * frame for a PMD that sends one segment when no mbuf is left to gather it into. Real
 * workers on the test EAL, driven without launching them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>

#include "test_eal.h"
#include "../../src/dp/worker.h"
#include "../../src/wire/eth.h"

#define RING_FRAMES 1023 /* net_ring's rings: 1024 slots */

static struct port ports[1];
static struct worker workers[2];
static unsigned nb_workers;

/* A net_ring port (its TX ring is its RX ring) with one queue pair, started. */
static int ring_port_setup(void **state)
{
	(void)state;
	static unsigned n;
	memset(ports, 0, sizeof(ports));
	snprintf(ports[0].devargs, sizeof(ports[0].devargs), "net_ring%u", n++);
	if (rte_eal_hotplug_add("vdev", ports[0].devargs, "") != 0)
		return -1;
	char err[128];
	if (port_start(&ports[0], 1, test_pool(), NULL, err, sizeof(err)) != 0) {
		print_error("%s\n", err);
		return -1;
	}
	nb_workers = 0;
	return 0;
}

static int ring_port_teardown(void **state)
{
	(void)state;
	for (unsigned i = 0; i < nb_workers; i++)
		worker_fini(&workers[i]);
	/* What the ring holds was sent: take it back. */
	struct rte_mbuf *m[64];
	uint16_t n;
	while ((n = rte_eth_rx_burst(ports[0].eth_port, 0, m, RTE_DIM(m))) != 0)
		rte_pktmbuf_free_bulk(m, n);
	port_stop(&ports[0]);
	rte_eal_hotplug_remove("vdev", ports[0].devargs);
	return test_pool_in_use() == 0 ? 0 : -1;
}

static void start_workers(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(worker_init(&workers[i], i, rte_lcore_id(), ports, 1, test_pool(),
					     0, NULL, 16, ROUTE_MAX_DEFAULT), 0);
	for (unsigned i = 0; i < n; i++)
		worker_set_peers(&workers[i], workers, n);
	nb_workers = n;
}

static struct rte_mbuf *frame(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	memset(rte_pktmbuf_append(m, ETH_MIN_FRAME_LEN), 0, ETH_MIN_FRAME_LEN);
	return m;
}

/* One turn of the loop's end: a stopped worker only drains its TX buffers and returns. */
static void drain(struct worker *w)
{
	atomic_store(&w->stop, true);
	worker_main(w);
	atomic_store(&w->stop, false);
}

static void test_tx_queue_taking_part_of_a_flush_counts_the_rest(void **state)
{
	(void)state;
	start_workers(1);
	struct worker *w = &workers[0];
	const unsigned n = RING_FRAMES + 77;
	for (unsigned i = 0; i < n; i++)
		stack_xmit(w->stack, 0, frame());
	drain(w);
	struct rte_eth_stats st;
	assert_int_equal(rte_eth_stats_get(ports[0].eth_port, &st), 0);
	assert_int_equal(st.opackets, RING_FRAMES);
	/* Every refused frame is named, and freed (the teardown checks the pool). */
	assert_int_equal(w->stack->ports[0].tx_packets, n);
	assert_int_equal(w->stack->ports[0].tx_dropped, n - RING_FRAMES);
	assert_int_equal(w->stack->drops[STACK_DROP_TX_QUEUE_FULL], n - RING_FRAMES);
	assert_int_equal(test_pool_in_use(), RING_FRAMES);
}

/* Worker 1 has no queue on the one-queue port: worker 0 sends its frames. While worker 0
 * does not run, its tx_in ring fills; what does not fit is counted by worker 1 (and freed). */
static void test_full_handoff_ring_counts_frames_of_worker_without_tx_queue(void **state)
{
	(void)state;
	start_workers(2);
	struct worker *w = &workers[1];
	assert_int_equal(w->tx_via[0], 0);
	/* Most of the ring taken already (by empty hand-offs: the pool is smaller than it). */
	struct worker_handoff filler = {.m = NULL, .arg = 0};
	unsigned room = 50;
	while (rte_ring_free_count(workers[0].tx_in) > room)
		assert_int_equal(rte_ring_mp_enqueue_elem(workers[0].tx_in, &filler,
							  sizeof(filler)), 0);
	for (unsigned i = 0; i < room + 10; i++)
		stack_xmit(w->stack, 0, frame());
	assert_int_equal(w->handoff_full, 10);
	assert_int_equal(w->stack->drops[STACK_DROP_TX_QUEUE_FULL], 10);
	assert_int_equal(w->stack->ports[0].tx_packets, room + 10);
	assert_int_equal(w->stack->ports[0].tx_dropped, 10);
	assert_int_equal(test_pool_in_use(), room); /* the refused ones freed */
}

static void test_full_neigh_ring_counts_lost_news(void **state)
{
	(void)state;
	start_workers(2);
	struct worker *w = &workers[0];
	/* ARP learnt on worker 0 is passed to worker 1, which does not run. */
	struct eth_addr mac = {{2, 0, 0, 0, 0, 9}};
	unsigned room = rte_ring_free_count(workers[1].neigh_in);
	for (unsigned i = 0; i < room + 5; i++)
		w->stack->ops.neigh_learnt(w->stack->ops.ctx, 0, INET_ADDR_V4(0x0a000001u + i),
					   &mac, 0);
	assert_int_equal(w->neigh_news_lost, 5);
	assert_int_equal(workers[1].neigh_news_lost, 0);
}

/* Two segments, the headers deep in their buffer (as after prepending), so the tail does
 * not fit behind them: gathering them needs a fresh mbuf. */
static struct rte_mbuf *chained_frame(void)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool()), *tail = frame();
	assert_non_null(m);
	m->data_off = (uint16_t)(m->buf_len - 200);
	memset(rte_pktmbuf_append(m, ETH_MIN_FRAME_LEN), 0, ETH_MIN_FRAME_LEN);
	memset(rte_pktmbuf_append(tail, 600), 0, 600);
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	return m;
}

/* A chained frame for a PMD without multi-segment TX, with no mbuf to gather it into: not
 * sent, counted as the port's tx_dropped and tx.no_mbuf. */
static void test_chained_frame_without_mbuf_to_gather_counted(void **state)
{
	(void)state;
	start_workers(1);
	struct worker *w = &workers[0];
	w->tx_multi_seg[0] = false;
	struct rte_mbuf *m = chained_frame();
	struct rte_mbuf *hoard[TEST_POOL_MBUFS];
	unsigned n = 0;
	while ((hoard[n] = rte_pktmbuf_alloc(test_pool())) != NULL)
		n++;
	stack_xmit(w->stack, 0, m);
	rte_pktmbuf_free_bulk(hoard, n);
	drain(w);
	assert_int_equal(w->stack->ports[0].tx_packets, 1);
	assert_int_equal(w->stack->ports[0].tx_dropped, 1);
	assert_int_equal(w->stack->drops[STACK_DROP_TX_NO_MBUF], 1);
	assert_int_equal(test_pool_in_use(), 0);
	/* With mbufs, the same frame is gathered and sent. */
	stack_xmit(w->stack, 0, chained_frame());
	drain(w);
	struct rte_eth_stats st;
	assert_int_equal(rte_eth_stats_get(ports[0].eth_port, &st), 0);
	assert_int_equal(st.opackets, 1);
	assert_int_equal(w->stack->ports[0].tx_dropped, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tx_queue_taking_part_of_a_flush_counts_the_rest,
						ring_port_setup, ring_port_teardown),
		cmocka_unit_test_setup_teardown(
			test_full_handoff_ring_counts_frames_of_worker_without_tx_queue,
			ring_port_setup, ring_port_teardown),
		cmocka_unit_test_setup_teardown(test_full_neigh_ring_counts_lost_news,
						ring_port_setup, ring_port_teardown),
		cmocka_unit_test_setup_teardown(test_chained_frame_without_mbuf_to_gather_counted,
						ring_port_setup, ring_port_teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
