#include "eal_args.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Options that choose lcores; with any of them the user places the workers. */
static const char *const lcore_opts[] = {"-l", "--lcores", "-c", "--main-lcore", NULL};
/* Options that ask for hugepages, or for none. */
static const char *const huge_opts[] = {"--no-huge", "--in-memory", "--huge-dir",
					"--socket-mem", NULL};

void eal_host_read(struct eal_host *h)
{
	memset(h, 0, sizeof(*h));
	FILE *f = fopen("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", "r");
	if (f != NULL) {
		if (fscanf(f, "%u", &h->free_hugepages) != 1)
			h->free_hugepages = 0;
		fclose(f);
	}
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return;
	for (unsigned c = 0; c < CPU_SETSIZE && h->nb_cpus < EAL_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			h->cpus[h->nb_cpus++] = c;
}

bool eal_args_has(const struct daemon *d, const char *const *opts)
{
	for (int i = 0; i < d->eal_argc; i++)
		for (const char *const *o = opts; *o != NULL; o++)
			if (strncmp(d->eal_argv[i], *o, strlen(*o)) == 0)
				return true;
	return false;
}

/* The value of option opt at word i: "-m 128", "-m128", "--socket-mem=1,2" or
 * "--socket-mem 1,2"; NULL when word i is not opt. */
static const char *opt_value(const struct daemon *d, int i, const char *opt)
{
	const char *w = d->eal_argv[i];
	size_t n = strlen(opt);
	if (strncmp(w, opt, n) != 0)
		return NULL;
	if (w[n] == '\0')
		return i + 1 < d->eal_argc ? d->eal_argv[i + 1] : NULL;
	if (opt[1] == '-')
		return w[n] == '=' ? w + n + 1 : NULL;
	return w + n;
}

unsigned eal_args_memory_mb(const struct daemon *d)
{
	unsigned mb = 0;
	for (int i = 0; i < d->eal_argc; i++) {
		const char *v = opt_value(d, i, "-m");
		if (v != NULL)
			return (unsigned)strtoul(v, NULL, 10);
		v = opt_value(d, i, "--socket-mem");
		for (char *end; v != NULL && *v != '\0'; v = *end == ',' ? end + 1 : NULL)
			mb += (unsigned)strtoul(v, &end, 10);
	}
	return mb;
}

bool eal_args_no_huge(const struct daemon *d, const struct eal_host *h)
{
	static const char *const no_huge[] = {"--no-huge", NULL};
	if (eal_args_has(d, no_huge))
		return true;
	return !eal_args_has(d, huge_opts) && h->free_hugepages < EAL_MIN_FREE_HUGEPAGES;
}

struct argv_builder {
	char **argv;
	int argc;
	char *store;
	size_t len, used;
	bool full;
};

__attribute__((format(printf, 2, 3)))
static void add(struct argv_builder *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = b->full ? -1 : vsnprintf(b->store + b->used, b->len - b->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->len - b->used || b->argc >= DAEMON_MAX_EAL_ARGS) {
		b->full = true;
		return;
	}
	b->argv[b->argc++] = b->store + b->used;
	b->used += (size_t)n + 1;
}

/* Appends ",lcore@cpu" to an --lcores list. */
static void lcore_at(char *list, size_t len, unsigned lcore, unsigned cpu)
{
	size_t n = strlen(list);
	snprintf(list + n, len - n, "%s%u@%u", n == 0 ? "" : ",", lcore, cpu);
}

static bool host_has_cpu(const struct eal_host *h, unsigned cpu)
{
	for (unsigned i = 0; i < h->nb_cpus; i++)
		if (h->cpus[i] == cpu)
			return true;
	return false;
}

static bool is_worker_lcore(const struct daemon *d, unsigned l)
{
	for (unsigned i = 0; i < d->nb_workers; i++)
		if (d->worker_lcores[i] == l)
			return true;
	return false;
}

/* The lcores: each worker alone on a CPU; the control thread (the EAL's main lcore) on a
 * CPU of its own when one is left, otherwise beside the first worker, which costs little:
 * it sleeps in poll() but for control commands. So `workers N` runs on any N CPUs, and a
 * lcore list may name every CPU. */
static int add_lcores(const struct daemon *d, const struct eal_host *h, struct argv_builder *b,
		      char *err, size_t errlen)
{
	char list[2048] = "";
	if (!d->worker_lcores_given) {
		if (d->nb_workers > h->nb_cpus) {
			snprintf(err, errlen, "workers %u: this process may use %u CPU(s), one "
					      "for each worker: use 'workers %u' or fewer",
				 d->nb_workers, h->nb_cpus, h->nb_cpus);
			return -1;
		}
		bool own_cpu = d->nb_workers < h->nb_cpus;
		lcore_at(list, sizeof(list), 0, h->cpus[0]);
		for (unsigned i = 1; i <= d->nb_workers; i++)
			lcore_at(list, sizeof(list), i, h->cpus[own_cpu ? i : i - 1]);
		add(b, "--lcores=%s", list);
		return 0;
	}
	for (unsigned i = 0; i < d->nb_workers; i++) {
		if (!host_has_cpu(h, d->worker_lcores[i])) {
			snprintf(err, errlen, "workers: CPU %u is not one this process may use "
					      "(%u available, from %u to %u)",
				 d->worker_lcores[i], h->nb_cpus, h->cpus[0],
				 h->cpus[h->nb_cpus - 1]);
			return -1;
		}
	}
	unsigned main_lcore = 0;
	while (is_worker_lcore(d, main_lcore))
		main_lcore++;
	unsigned main_cpu = d->worker_lcores[0];
	for (unsigned i = 0; i < h->nb_cpus; i++)
		if (!is_worker_lcore(d, h->cpus[i])) {
			main_cpu = h->cpus[i];
			break;
		}
	lcore_at(list, sizeof(list), main_lcore, main_cpu);
	for (unsigned i = 0; i < d->nb_workers; i++)
		lcore_at(list, sizeof(list), d->worker_lcores[i], d->worker_lcores[i]);
	add(b, "--lcores=%s", list);
	add(b, "--main-lcore=%u", main_lcore);
	return 0;
}

/* Memory: hugepages in memory only (no files left behind) when enough are free, otherwise
 * none, and without hugepages no shared config either, so that daemons side by side do not
 * collide on its lock; each flag only when the eal line has not decided it. */
static void add_memory(const struct daemon *d, const struct eal_host *h, struct argv_builder *b)
{
	static const char *const prefix[] = {"--file-prefix", NULL};
	static const char *const shconf[] = {"--no-shconf", "--in-memory", NULL};
	static const char *const size[] = {"-m", "--socket-mem", NULL};
	bool no_huge = eal_args_no_huge(d, h);
	bool named = eal_args_has(d, prefix);
	if (!eal_args_has(d, huge_opts)) {
		if (no_huge)
			add(b, "--no-huge");
		else if (!named)
			add(b, "--in-memory");
	}
	if (no_huge && !eal_args_has(d, size)) {
		add(b, "-m");
		add(b, "%u", EAL_NO_HUGE_MB);
	}
	if (no_huge && !named && !eal_args_has(d, shconf))
		add(b, "--no-shconf");
}

int eal_args_build(const struct daemon *d, const struct eal_host *h, char **argv, char *store,
		   size_t store_len, char *err, size_t errlen)
{
	struct argv_builder b = {.argv = argv, .store = store, .len = store_len};
	add(&b, "dpstackd");
	for (int i = 0; i < d->eal_argc; i++)
		add(&b, "%s", d->eal_argv[i]);
	if (!eal_args_has(d, lcore_opts) && add_lcores(d, h, &b, err, errlen) != 0)
		return -1;
	bool any_pci = false;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		if (port_devargs_is_pci(d->ports[i].devargs)) {
			any_pci = true;
			add(&b, "-a");
			add(&b, "%s", d->ports[i].devargs);
		} else if (!d->ports[i].ring_paired) {
			add(&b, "--vdev=%s", d->ports[i].devargs);
		}
	}
	static const char *const pci_opts[] = {"--no-pci", "-a", "--allow", "-b", "--block",
					       NULL};
	if (!any_pci && !eal_args_has(d, pci_opts))
		add(&b, "--no-pci");
	add_memory(d, h, &b);
	if (b.full) {
		snprintf(err, errlen, "EAL arguments too long");
		return -1;
	}
	argv[b.argc] = NULL;
	return b.argc;
}
