/* The EAL command line dpstackd builds: the config's `eal` words, then, for each choice the
 * user did not make there, the automatic one (lcores for the workers, the ports' devices,
 * --no-pci, and the memory options). Each automatic flag is judged on its own, so that a
 * memory option in the `eal` line does not drop --no-shconf (a second daemon would then
 * fight over the first one's shared config). Pure but for eal_host_read(). */
#ifndef DPS_CTL_EAL_ARGS_H
#define DPS_CTL_EAL_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon.h"

#define EAL_MIN_FREE_HUGEPAGES 128     /* 256 MB of 2 MB pages: enough to prefer them */
#define EAL_NO_HUGE_MB 512             /* -m without hugepages, unless the eal line says */
#define EAL_MAX_CPUS 256

/* What this machine offers the daemon, read once (eal_host_read) or made up by a test. */
struct eal_host {
	unsigned free_hugepages;        /* of 2 MB */
	unsigned nb_cpus;               /* CPUs this process may run on (its affinity) */
	unsigned cpus[EAL_MAX_CPUS];    /* ascending */
};

void eal_host_read(struct eal_host *h);

/* Whether an `eal` word starts with one of opts (NULL-terminated). */
bool eal_args_has(const struct daemon *d, const char *const *opts);

/* Memory the `eal` line gives (-m or the sum of --socket-mem) in MB; 0 when it says nothing. */
unsigned eal_args_memory_mb(const struct daemon *d);

/* Whether the EAL will run without hugepages: the eal line's --no-huge, or ours when too few
 * hugepages are free and the line does not ask for them. */
bool eal_args_no_huge(const struct daemon *d, const struct eal_host *h);

/* Builds argv (NULL-terminated, strings in store). Returns argc, or -1 with the reason in err
 * (the workers do not fit on the CPUs, or the line is too long). */
int eal_args_build(const struct daemon *d, const struct eal_host *h, char **argv, char *store,
		   size_t store_len, char *err, size_t errlen);

#endif
