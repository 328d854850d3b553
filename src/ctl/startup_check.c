#include "startup_check.h"

#include "port_caps.h"
#include "port_queues.h"
#include "dp/port_devargs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

static unsigned pool_mb(const struct daemon *d)
{
	return (unsigned)(((uint64_t)d->nb_mbufs * STARTUP_MBUF_BYTES + (1u << 20) - 1) >> 20);
}

unsigned startup_memory_mb(const struct daemon *d)
{
	return STARTUP_BASE_MB + pool_mb(d) + STARTUP_WORKER_MB * d->nb_workers;
}

unsigned startup_min_mbufs(const struct daemon *d, unsigned *port_index)
{
	unsigned total = 0;
	*port_index = 0;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		const char *dev = d->ports[i].devargs;
		if (!port_devargs_driver_is(dev, "net_af_xdp"))
			continue;
		/* Every queue the device has is set up (queue_count, default 1), whatever the
		 * number of workers: port_start(). */
		unsigned q = 1;
		port_devargs_uint(dev, "queue_count", &q);
		if (total == 0)
			*port_index = i;
		total += STARTUP_AF_XDP_FILL * q;
	}
	return total;
}

static unsigned check_memory(const struct daemon *d, const struct eal_host *h,
			     struct config *cfg)
{
	unsigned need = startup_memory_mb(d);
	unsigned line = cfg->eal_line != 0 ? cfg->eal_line : cfg->workers_line;
	char why[256];
	snprintf(why, sizeof(why),
		 "%u worker(s) need about %u MB: %u MB for the daemon, %u MB for each worker's "
		 "tables and %u MB for 'mbufs %u'", d->nb_workers, need, STARTUP_BASE_MB,
		 STARTUP_WORKER_MB, pool_mb(d), d->nb_mbufs);
	if (eal_args_no_huge(d, h)) {
		unsigned have = eal_args_memory_mb(d);
		if (have == 0 && EAL_NO_HUGE_MB >= need)
			return 0;
		if (have == 0)
			config_error(cfg, line, "-m %u, dpstackd's EAL memory without hugepages, is "
						"too little: %s; add 'eal -m %u' (or use fewer "
						"workers or mbufs)", EAL_NO_HUGE_MB, why, need);
		else if (have < need)
			config_error(cfg, line, "eal -m %u is too little memory: %s; use -m %u or "
						"more (or fewer workers or mbufs)", have, why, need);
		return have < need;
	}
	unsigned have = h->free_hugepages * 2;
	unsigned asked = eal_args_memory_mb(d);
	if (h->free_hugepages == 0) {
		config_error(cfg, line, "the eal line asks for hugepages but none are free: reserve "
					"them (echo %u > /proc/sys/vm/nr_hugepages) or add --no-huge",
			     (need + 1) / 2);
		return 1;
	}
	if (asked != 0 && asked < need) {
		config_error(cfg, line, "eal memory %u MB is too little: %s; ask for %u MB or "
					"more", asked, why, need);
		return 1;
	}
	if (have >= need)
		return 0;
	config_error(cfg, line, "%u free hugepages (%u MB) are too few: %s; reserve more "
				"(echo %u > /proc/sys/vm/nr_hugepages) or add --no-huge",
		     h->free_hugepages, have, why, (need + 1) / 2);
	return 1;
}

static unsigned check_mbufs(const struct daemon *d, struct config *cfg)
{
	unsigned port;
	unsigned min = startup_min_mbufs(d, &port);
	if (d->nb_mbufs >= min)
		return 0;
	config_error(cfg, cfg->mbufs_line != 0 ? cfg->mbufs_line : cfg->port_lines[port],
		     "mbufs %u is too few: each net_af_xdp queue takes %u mbufs for its AF_XDP "
		     "fill ring when it is set up (%u here, with port %s); use mbufs %u or more, "
		     "or give the interfaces fewer RX queues (ethtool -L)",
		     d->nb_mbufs, STARTUP_AF_XDP_FILL, min, d->ports[port].name, min);
	return 1;
}

unsigned startup_check(struct daemon *d, const struct eal_host *h, struct config *cfg)
{
	unsigned queue_errors = port_queues_check(d, cfg);
	char err[256];
	char *argv[DAEMON_MAX_EAL_ARGS + 1];
	static char store[8192];
	unsigned errors = 0;
	if (eal_args_build(d, h, argv, store, sizeof(store), err, sizeof(err)) < 0) {
		config_error(cfg, cfg->workers_line != 0 ? cfg->workers_line : cfg->eal_line,
			     "%s", err);
		errors++;
	}
	return queue_errors + errors + check_memory(d, h, cfg) + check_mbufs(d, cfg) +
	       port_caps_check(d, cfg);
}

void startup_memory_hint(const struct daemon *d)
{
	unsigned need = startup_memory_mb(d);
	fprintf(stderr, "dpstackd: the EAL's memory ran out: %u worker(s) need about %u MB (%u "
			"MB for the daemon, %u MB for each worker's tables, %u MB for 'mbufs %u'): "
			"give the eal line -m %u or more, or reserve more hugepages\n",
		d->nb_workers, need, STARTUP_BASE_MB, STARTUP_WORKER_MB, pool_mb(d), d->nb_mbufs,
		need);
}

/* The value of "--file-prefix X" or "--file-prefix=X" in argv, or DPDK's default. */
static const char *file_prefix(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--file-prefix") == 0 && i + 1 < argc)
			return argv[i + 1];
		if (strncmp(argv[i], "--file-prefix=", strlen("--file-prefix=")) == 0)
			return argv[i] + strlen("--file-prefix=");
	}
	return "rte";
}

static bool argv_has(int argc, char **argv, const char *opt)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], opt) == 0)
			return true;
	return false;
}

/* The process holding the EAL's shared config lock of prefix (the EAL takes a write lock
 * on the config file, DPDK's eal.c rte_eal_config_create()), or 0. */
static pid_t shared_config_holder(const char *prefix)
{
	char path[PATH_MAX];
	const char *dir = geteuid() == 0 ? "/var/run" : getenv("XDG_RUNTIME_DIR");
	if (dir == NULL)
		dir = "/tmp";
	snprintf(path, sizeof(path), "%s/dpdk/%s/config", dir, prefix);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	pid_t pid = fcntl(fd, F_GETLK, &lk) == 0 && lk.l_type != F_UNLCK ? lk.l_pid : 0;
	close(fd);
	return pid;
}

void startup_eal_failed(const struct daemon *d, int argc, char **argv)
{
	int err = rte_errno;
	/* The EAL does not set rte_errno on every failure ("EAL init failed: Success"). */
	if (err != 0)
		fprintf(stderr, "dpstackd: EAL init failed: %s\n", rte_strerror(err));
	else
		fprintf(stderr, "dpstackd: EAL init failed (the EAL's message above says why)\n");
	bool shared = !argv_has(argc, argv, "--no-shconf") && !argv_has(argc, argv, "--in-memory");
	const char *prefix = file_prefix(argc, argv);
	pid_t holder = shared ? shared_config_holder(prefix) : 0;
	if (holder != 0)
		fprintf(stderr, "dpstackd: process %d, another DPDK primary process, holds the "
				"EAL's shared config of --file-prefix %s: give each daemon its own "
				"--file-prefix, or add --no-shconf (or --in-memory) to the eal line\n",
			(int)holder, prefix);
	else if (err == EACCES && !argv_has(argc, argv, "--no-huge"))
		fprintf(stderr, "dpstackd: the EAL cannot use hugepages: reserve and mount them "
				"(echo 256 > /proc/sys/vm/nr_hugepages; hugetlbfs on "
				"/dev/hugepages), run as root, or add --no-huge to the eal line\n");
	else if (err == ENOMEM)
		startup_memory_hint(d);
}
