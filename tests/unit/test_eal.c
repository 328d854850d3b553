/* See test_eal.h. */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "test_eal.h"

static int eal_state;  /* 0: not started, 1: running, -1: failed */
static struct rte_mempool *pool;
static char runtime_dir[256];

/* Runs before LeakSanitizer's own exit check (registered earlier, so run later). */
static void test_eal_cleanup(void)
{
	rte_mempool_free(pool);
	pool = NULL;
	rte_eal_cleanup();
	/* With --no-shconf the EAL leaves only its empty runtime directory behind. */
	if (runtime_dir[0] != '\0')
		(void)rmdir(runtime_dir);
}

/* The first CPU this process may run on: lcore 0 is pinned there, since CPU 0 itself may be
 * outside a container's cpuset. */
static int first_allowed_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set))
				return cpu;
	return 0;
}

int test_eal_init(void)
{
	char prefix[64], lcores[32];
	char *argv[] = {
		"dpstest", "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level=error", lcores, prefix, NULL,
	};

	if (eal_state == 0) {
		snprintf(prefix, sizeof(prefix), "--file-prefix=dpstest%ld", (long)getpid());
		snprintf(lcores, sizeof(lcores), "--lcores=0@%d", first_allowed_cpu());
		if (rte_eal_init((int)RTE_DIM(argv) - 1, argv) < 0) {
			eal_state = -1;
			fail_msg("rte_eal_init: %s", rte_strerror(rte_errno));
			return -1;
		}
		eal_state = 1;
		snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
		atexit(test_eal_cleanup);
	}
	if (eal_state < 0) {
		fail_msg("EAL failed to start earlier");
		return -1;
	}
	return 0;
}

struct rte_mempool *test_pool(void)
{
	test_eal_init();
	if (pool == NULL) {
		pool = rte_pktmbuf_pool_create("dpstest_pool", TEST_POOL_MBUFS, 0, 0,
					       TEST_POOL_DATA_ROOM, SOCKET_ID_ANY);
		if (pool == NULL)
			fail_msg("rte_pktmbuf_pool_create: %s", rte_strerror(rte_errno));
	}
	return pool;
}

unsigned test_pool_in_use(void)
{
	return rte_mempool_in_use_count(test_pool());
}

int test_eal_group_setup(void **state)
{
	(void)state;
	return test_pool() == NULL ? -1 : 0;
}
