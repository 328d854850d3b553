/* The packet buffer pool (src/dp/port.c port_pool_create): packed end to end, as
 * net_af_xdp's UMEM registration assumes, with usable buffer IOVAs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <rte_eal.h>

#include "test_eal.h"
#include "../../src/dp/port.h"

static void add_chunk(struct rte_mempool *mp, void *opaque, struct rte_mempool_memhdr *h,
		      unsigned idx)
{
	(void)mp;
	(void)idx;
	*(size_t *)opaque += h->len;
}

static void check_mbuf(struct rte_mempool *mp, void *opaque, void *obj, unsigned idx)
{
	(void)mp;
	(void)opaque;
	(void)idx;
	const struct rte_mbuf *m = obj;
	assert_ptr_equal(m->buf_addr, (const char *)m + sizeof(*m));
	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		assert_int_equal(m->buf_iova, (rte_iova_t)(uintptr_t)m->buf_addr);
	assert_int_equal(rte_pktmbuf_data_room_size(mp), RTE_MBUF_DEFAULT_BUF_SIZE);
}

static void test_pool_is_packed_with_usable_buffers(void **state)
{
	(void)state;
	const unsigned n = 2047;
	struct rte_mempool *mp = port_pool_create("packed", n, 0, SOCKET_ID_ANY);
	assert_non_null(mp);
	assert_int_equal(mp->populated_size, n);
	/* net_af_xdp (DPDK 22.11) registers n x object size from the first chunk as its UMEM:
	 * a pool spread one object per 4 KB page puts most mbufs outside it. */
	size_t bytes = 0;
	rte_mempool_mem_iter(mp, add_chunk, &bytes);
	size_t obj = mp->header_size + mp->elt_size + mp->trailer_size;
	if (rte_eal_iova_mode() == RTE_IOVA_VA) {
		assert_int_equal(mp->nb_mem_chunks, 1);
		assert_true(bytes <= n * obj + RTE_CACHE_LINE_SIZE);
	}
	rte_mempool_obj_iter(mp, check_mbuf, NULL);
	struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
	assert_non_null(m);
	assert_non_null(rte_pktmbuf_append(m, 1500));
	rte_pktmbuf_free(m);
	rte_mempool_free(mp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_is_packed_with_usable_buffers),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
