#include "fuzz_eal.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

#include "fuzz_check.h"

static char runtime_dir[256];

/* CPU 0 may be outside a container's cpuset: use the first CPU we may run on. */
static int first_allowed_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
			if (CPU_ISSET(cpu, &set))
				return cpu;
	return 0;
}

void fuzz_eal_init(const char *name)
{
	char prefix[64], lcores[32], prog[64];
	char *eal_argv[] = {
		prog, "--no-huge", "-m", "256", "--no-pci", "--no-shconf",
		"--no-telemetry", "--log-level=error", lcores, prefix, NULL,
	};

	snprintf(prog, sizeof(prog), "%s", name);
	snprintf(prefix, sizeof(prefix), "--file-prefix=dps%s%ld", name, (long)getpid());
	snprintf(lcores, sizeof(lcores), "--lcores=0@%d", first_allowed_cpu());
	if (rte_eal_init((int)(sizeof(eal_argv) / sizeof(eal_argv[0])) - 1, eal_argv) < 0) {
		fprintf(stderr, "rte_eal_init: %s\n", rte_strerror(rte_errno));
		abort();
	}
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", rte_eal_get_runtime_dir());
}

void fuzz_eal_cleanup(void)
{
	rte_eal_cleanup();
	/* With --no-shconf the EAL leaves only its empty runtime directory behind. */
	if (runtime_dir[0] != '\0')
		(void)rmdir(runtime_dir);
}
