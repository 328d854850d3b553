/* The workers' side of clusters beyond placement (src/cluster/cluster_worker.c), with real
 * mbufs and no port: bounce hands every frame (or those its filter passes) to the worker's
 * transmit, counted; frames a consumer marked for forwarding go out when released, the
 * others are freed; a consumer's posted frames go out as mbufs whose data is its slot (no
 * copy), and the slot comes back only once that mbuf is freed; programs that cannot load
 * say why. Every mbuf comes back to the pool. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/cluster_prog.h"
#include "cluster/cluster_worker.h"
#include "test_eal.h"

#define SENT_MAX 64

/* The transmit the worker would use: keeps what it was given. */
struct sent {
	unsigned n;
	uint16_t port[SENT_MAX];
	struct rte_mbuf *m[SENT_MAX];
};

static void keep_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	struct sent *s = ctx;
	assert_true(s->n < SENT_MAX);
	s->port[s->n] = port;
	s->m[s->n++] = m;
}

static void sent_free(struct sent *s)
{
	for (unsigned i = 0; i < s->n; i++)
		rte_pktmbuf_free(s->m[i]);
	s->n = 0;
}

/* A UDP/IPv4 frame from 10.0.0.<src> (or 192.168.0.<src> when src > 255). */
static struct rte_mbuf *frame(unsigned src)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, 60);
	memset(p, 0, 60);
	p[12] = 0x08;
	p[14] = 0x45;
	p[23] = 17;
	p[26] = src > 255 ? 192 : 10;
	p[27] = src > 255 ? 168 : 0;
	p[29] = (uint8_t)src;
	return m;
}

static struct cluster_prog *example_filter(void)
{
	char err[256];
	struct cluster_prog *p = cluster_prog_load(HASH_SOURCE_SO, "dps_cluster_filter", err,
						   sizeof(err));
	if (p == NULL)
		fail_msg("%s", err);
	return p;
}

static void test_bounce_sends_what_the_filter_passes_and_counts_the_rest(void **state)
{
	(void)state;
	unsigned base = test_pool_in_use();
	struct sent s = {0};
	struct cluster_wstate ws = {.bounce_port = 3, .xmit = keep_xmit, .xmit_ctx = &s};
	struct rte_mbuf *pkts[4] = {frame(1), frame(300), frame(2), frame(301)};
	cluster_place(&ws, 0, pkts, 4);
	assert_int_equal(s.n, 4);
	assert_int_equal(ws.bounced, 4);
	assert_true(s.m[0] == pkts[0] && s.port[0] == 3);
	sent_free(&s);

	ws.filter = example_filter();  /* passes 10.0.0.0/8 */
	struct rte_mbuf *more[4] = {frame(1), frame(300), frame(2), frame(301)};
	cluster_place(&ws, 0, more, 4);
	assert_int_equal(s.n, 2);
	assert_true(s.m[0] == more[0] && s.m[1] == more[2]);
	assert_int_equal(ws.bounced, 6);
	assert_int_equal(ws.filtered, 2);
	sent_free(&s);
	cluster_prog_free((struct cluster_prog *)ws.filter);
	assert_int_equal(test_pool_in_use(), base);
}

/* One consumer ring of 8 on this "worker", in plain memory. */
struct one_ring {
	struct cluster_wtab t;
	struct cluster_wstate ws;
	struct cluster_wring r;
	struct dpc_ring *sh;
	struct rte_mbuf *shadow[8];
	struct sent s;
};

static void one_ring_init(struct one_ring *o, enum cluster_take take)
{
	memset(o, 0, sizeof(*o));
	o->sh = aligned_alloc(DPC_CACHE_LINE, dpc_ring_bytes(8));
	memset(o->sh, 0, dpc_ring_bytes(8));
	o->t.xmit = keep_xmit;
	o->t.xmit_ctx = &o->s;
	o->ws.bounce_port = -1;
	o->ws.nb_groups = 1;
	o->ws.group_size[0] = 1;
	o->ws.region_pool[0] = test_pool();
	o->ws.region_base[0] = 0;
	const uint16_t ports[2] = {5, 7};
	cluster_wtab_install(&o->t, &o->ws, 0, ports, 2, take);
	o->r = (struct cluster_wring){.sh = o->sh, .shadow = o->shadow, .mask = 7, .efd = -1};
	static struct dpc_shm_hdr hdr;
	doorbell_init(&hdr.bell);
	o->r.hdr = &hdr;
	assert_int_equal(cluster_wtab_ring_add(&o->t, &o->ws, 0, &o->r), 0);
}

static void test_marked_frames_are_sent_on_release_the_rest_freed(void **state)
{
	(void)state;
	unsigned base = test_pool_in_use();
	struct one_ring o;
	one_ring_init(&o, CLUSTER_TAKE_ALL);
	struct rte_mbuf *pkts[4] = {frame(1), frame(2), frame(3), frame(4)};
	cluster_place(&o.ws, 0, pkts, 4);
	assert_int_equal(atomic_load(&o.sh->prod), 4);
	/* The consumer forwards frames 1 (to cluster port 1) and 3 (to a port the cluster
	 * lacks: freed), then releases 0-2. */
	o.sh->desc[1].fwd = 2;
	o.sh->desc[3].fwd = 9;
	atomic_store(&o.sh->marks, 2);
	atomic_store(&o.sh->cons, 3);
	assert_int_equal(cluster_reclaim(&o.t), 3);
	assert_int_equal(o.s.n, 1);
	assert_true(o.s.m[0] == pkts[1] && o.s.port[0] == 7);
	assert_int_equal(o.ws.forwarded, 1);
	/* Frame 3, marked before, released later: still scanned, the bad port frees it. */
	atomic_store(&o.sh->cons, 4);
	assert_int_equal(cluster_reclaim(&o.t), 1);
	assert_int_equal(o.s.n, 1);
	/* A consumer that never marks again: frames placed later are freed in bulk. */
	struct rte_mbuf *later[2] = {frame(5), frame(6)};
	cluster_place(&o.ws, 0, later, 2);
	o.sh->desc[4].fwd = 1;  /* written without counting a mark: not looked at */
	atomic_store(&o.sh->cons, 6);
	assert_int_equal(cluster_reclaim(&o.t), 2);
	assert_int_equal(o.s.n, 1);
	sent_free(&o.s);
	cluster_wtab_ring_remove(&o.t, &o.ws, 0);
	free(o.sh);
	assert_int_equal(test_pool_in_use(), base);
}

static void test_posted_frames_go_out_uncopied_and_slots_return_when_freed(void **state)
{
	(void)state;
	unsigned base = test_pool_in_use();
	struct dpc_txring *r = aligned_alloc(DPC_CACHE_LINE, sizeof(*r));
	memset(r, 0, sizeof(*r));
	struct cluster_txslots *sl = calloc(1, sizeof(*sl));
	sl->base = &r->slot[0][0];
	struct cluster_wtx tx = {.sh = r, .slots = sl, .nb_regions = 1, .port = {4}};
	struct sent s = {0};
	struct cluster_wtab t = {.pool = test_pool(), .xmit = keep_xmit, .xmit_ctx = &s};
	assert_int_equal(cluster_wtab_tx_add(&t, &tx), 0);
	for (unsigned i = 0; i < 3; i++) {
		memset(r->slot[i], 0xa0 + i, 60);
		r->desc[i] = (struct dpc_tx_desc){.len = 60, .region = 0};
	}
	r->desc[2].region = 1;  /* no such cluster port: refused, its slot free at once */
	atomic_store(&r->prod, 3);
	assert_int_equal(cluster_tx_poll(&t), 3);
	assert_int_equal(s.n, 2);
	assert_ptr_equal(rte_pktmbuf_mtod(s.m[0], uint8_t *), r->slot[0]);
	assert_ptr_equal(rte_pktmbuf_mtod(s.m[1], uint8_t *), r->slot[1]);
	assert_int_equal(s.m[1]->pkt_len, 60);
	assert_int_equal(s.port[0], 4);
	assert_int_equal(atomic_load(&r->sent), 2);
	assert_int_equal(atomic_load(&r->dropped), 1);
	assert_int_equal(atomic_load(&r->cons), 0);  /* the port holds slots 0 and 1 */
	assert_int_equal(atomic_load(&sl->inflight), 2);
	/* The port frees slot 1 first: nothing given back until slot 0 is free too. */
	rte_pktmbuf_free(s.m[1]);
	cluster_tx_poll(&t);
	assert_int_equal(atomic_load(&r->cons), 0);
	rte_pktmbuf_free(s.m[0]);
	cluster_tx_poll(&t);
	assert_int_equal(atomic_load(&r->cons), 3);
	assert_int_equal(atomic_load(&sl->inflight), 0);
	/* Nonsense from the consumer (prod far ahead): nothing sent. */
	atomic_store(&r->prod, 3 + 2 * DPC_TX_SIZE);
	s.n = 0;
	assert_int_equal(cluster_tx_poll(&t), 0);
	assert_int_equal(s.n, 0);
	cluster_wtab_tx_remove(&t, &tx);
	free(sl);
	free(r);
	assert_int_equal(test_pool_in_use(), base);
}

/* take rest: the ports stay the stack's (no whole-port owner) and name the cluster's slot
 * for the worker's exception path, which places through cluster_flow_place; removing the
 * cluster forgets both. */
static void test_take_rest_names_the_slot_and_leaves_the_ports_to_the_stack(void **state)
{
	(void)state;
	unsigned base = test_pool_in_use();
	struct one_ring o;
	one_ring_init(&o, CLUSTER_TAKE_REST);
	assert_false(cluster_owns(&o.t, 5) || cluster_owns(&o.t, 7));
	assert_int_equal(o.t.rest_slot[5], 1);
	assert_int_equal(o.t.rest_slot[7], 1);
	assert_int_equal(o.t.rest_slot[6], 0);
	struct rte_mbuf *pkts[2] = {frame(1), frame(2)};
	assert_true(cluster_flow_place(&o.t, o.t.rest_slot[7] - 1u, 7, pkts, 2));
	assert_int_equal(atomic_load(&o.sh->prod), 2);
	cluster_wtab_remove(&o.t, &o.ws);
	assert_int_equal(o.t.rest_slot[5], 0);
	assert_int_equal(o.t.rest_slot[7], 0);
	struct rte_mbuf *late = frame(3);
	assert_false(cluster_flow_place(&o.t, 0, 7, &late, 1));
	rte_pktmbuf_free(late);
	free(o.sh);
	assert_int_equal(test_pool_in_use(), base);
}

static void test_programs_that_cannot_load_say_why(void **state)
{
	(void)state;
	char err[256];
	assert_null(cluster_prog_load("/nonexistent/p.o", "f", err, sizeof(err)));
	assert_string_equal(err, "cannot open /nonexistent/p.o: No such file or directory");
	assert_null(cluster_prog_load("/", "f", err, sizeof(err)));
	assert_string_equal(err, "/ is not a program: not a regular file");
	assert_null(cluster_prog_load("/proc/self/status", "f", err, sizeof(err)));
	assert_non_null(strstr(err, "is neither an eBPF object nor a shared object"));
	assert_null(cluster_prog_load(HASH_SOURCE_SO ":nosuch", "f", err, sizeof(err)));
	assert_non_null(strstr(err, "has no function 'nosuch'"));
	struct cluster_prog *p = cluster_prog_load(HASH_SOURCE_SO ":dps_cluster_hash", "f", err,
						   sizeof(err));
	assert_non_null(p);
	struct rte_mbuf *m = frame(300);
	assert_int_equal(cluster_prog_run(p, m), 0xc0a8002c);  /* 192.168.0.44 */
	rte_pktmbuf_free(m);
	cluster_prog_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounce_sends_what_the_filter_passes_and_counts_the_rest),
		cmocka_unit_test(test_marked_frames_are_sent_on_release_the_rest_freed),
		cmocka_unit_test(test_posted_frames_go_out_uncopied_and_slots_return_when_freed),
		cmocka_unit_test(test_take_rest_names_the_slot_and_leaves_the_ports_to_the_stack),
		cmocka_unit_test(test_programs_that_cannot_load_say_why),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
