/* Shared EAL fixture for unit tests that need real mbufs: a minimal EAL without hugepages,
 * PCI, shared files or telemetry, under a per-process file prefix (dpstest<pid>) so parallel
 * test binaries never clash, and one pktmbuf pool. Call test_eal_init() (or test_pool()) from
 * a cmocka group setup; check leaks by comparing test_pool_in_use() with a baseline taken in
 * the test's setup. */
#ifndef DPS_TEST_EAL_H
#define DPS_TEST_EAL_H

#include <rte_mbuf.h>
#include <rte_mempool.h>

#define TEST_POOL_MBUFS 4095u                       /* elements of test_pool() */
#define TEST_POOL_DATA_ROOM RTE_MBUF_DEFAULT_BUF_SIZE /* 2048 + headroom */

/* Starts the EAL once per process; later calls return 0 at once. On failure the running
 * cmocka test (or group setup) fails; outside cmocka the process exits. Returns 0. */
int test_eal_init(void);

/* The shared pool (starting the EAL if needed), created on first use: TEST_POOL_MBUFS mbufs
 * of TEST_POOL_DATA_ROOM bytes, no per-lcore cache so that in-use counts are exact. */
struct rte_mempool *test_pool(void);

/* A cmocka group setup that starts the EAL and creates test_pool(): -1 if either fails. */
int test_eal_group_setup(void **state);

/* Mbufs of test_pool() currently allocated. */
unsigned test_pool_in_use(void);

#endif
