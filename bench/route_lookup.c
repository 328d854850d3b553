/* dps-route-bench: what a route lookup costs the forwarding path, dpstack's table
 * (src/stack/route.c, a hash probed once per prefix length in use) beside DPDK's rte_lpm
 * (DIR-24-8, the table it replaced), on the same routes and destinations, alternating.
 *
 *   dps-route-bench [--runs N] [--lookups N]
 *
 * Tables of a host or edge router (the LOCAL /32, BROADCAST /32 and CONNECTED /24 of two
 * addresses, a default route: 3 prefix lengths) and of a router with 1,000 and 10,000
 * gateway routes of /16 to /28 (up to 14 lengths). Destinations are random: most match only
 * the default route, so the hash probes every length, its worst case. Prints per table the
 * median over the runs of CPU ns per lookup (CLOCK_THREAD_CPUTIME_ID, so that other
 * processes on the machine do not count) for both. Needs the EAL for rte_lpm (no
 * hugepages). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_lpm.h>

#include "bench_cpu.h"
#include "stack/route.h"
#include "wire/ipv4.h"

#define MAX_RUNS 64

struct tables {
	struct route_table *ours;
	struct rte_lpm *lpm;
	uint32_t lpm_default;   /* rte_lpm has no /0: a miss takes the default, as route.c did */
};

static void add(struct tables *t, uint32_t prefix, uint8_t plen, enum route_type type)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = type,
			  .gateway = inet_addr_v4(0x0a000001u)};
	if (route_add(t->ours, &r) != 0)
		return; /* a duplicate random prefix: in neither table */
	if (plen != 0)
		rte_lpm_add(t->lpm, prefix, plen, route_count(t->ours) - 1);
}

static uint32_t xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void fill(struct tables *t, unsigned nb_gateways)
{
	const uint32_t addrs[] = {0x0a000002u, 0x0a000102u};
	for (unsigned i = 0; i < 2; i++) {
		add(t, addrs[i], 32, ROUTE_LOCAL);
		add(t, addrs[i] | 0xffu, 32, ROUTE_BROADCAST);
		add(t, addrs[i] & ip4_mask(24), 24, ROUTE_CONNECTED);
	}
	add(t, 0, 0, ROUTE_GATEWAY);
	uint32_t seed = 7;
	for (unsigned i = 0; i < nb_gateways; i++) {
		uint8_t plen = (uint8_t)(16 + xorshift(&seed) % 13);
		add(t, xorshift(&seed) & ip4_mask(plen), plen, ROUTE_GATEWAY);
	}
}

/* CPU ns per lookup of n destinations; sum keeps the lookups from being optimised away. */
static double time_ours(const struct tables *t, const uint32_t *dst, unsigned n, uint64_t *sum)
{
	double t0 = bench_cpu_ns();
	for (unsigned i = 0; i < n; i++) {
		const struct route *r = route_lookup4(t->ours, dst[i]);
		*sum += r != NULL ? r->port + r->plen : 0;
	}
	return (bench_cpu_ns() - t0) / n;
}

static double time_lpm(const struct tables *t, const uint32_t *dst, unsigned n, uint64_t *sum)
{
	double t0 = bench_cpu_ns();
	for (unsigned i = 0; i < n; i++) {
		uint32_t idx;
		if (rte_lpm_lookup(t->lpm, dst[i], &idx) != 0)
			idx = t->lpm_default;
		*sum += idx;
	}
	return (bench_cpu_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	char *eal[] = {argv[0], "--no-huge", "-m", "300", "--no-pci", "--no-shconf",
		       "--no-telemetry", "--log-level=*:error", "-l", "0", NULL};
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "dps-route-bench: EAL init failed\n");
		return 1;
	}
	unsigned runs = 9, lookups = 1u << 20;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--runs") == 0)
			runs = (unsigned)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--lookups") == 0)
			lookups = (unsigned)atoi(argv[i + 1]);
	}
	if (runs == 0 || runs > MAX_RUNS || lookups == 0) {
		fprintf(stderr, "usage: dps-route-bench [--runs 1..%d] [--lookups N]\n", MAX_RUNS);
		return 2;
	}
	uint32_t *dst = malloc(lookups * sizeof(*dst));
	uint32_t seed = 11;
	for (unsigned i = 0; i < lookups; i++)
		dst[i] = xorshift(&seed);
	printf("%-26s %12s %12s\n", "routes (lengths in use)", "dpstack ns", "rte_lpm ns");
	const unsigned sizes[] = {0, 1000, 10000};
	uint64_t sum = 0;
	for (unsigned k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct rte_lpm_config cfg = {.max_rules = 16384, .number_tbl8s = 16384};
		char name[32];
		snprintf(name, sizeof(name), "bench%u", k);
		struct tables t = {.ours = route_table_create(16384),
				   .lpm = rte_lpm_create(name, SOCKET_ID_ANY, &cfg)};
		if (t.ours == NULL || t.lpm == NULL) {
			fprintf(stderr, "dps-route-bench: out of memory\n");
			return 1;
		}
		fill(&t, sizes[k]);
		double ours[MAX_RUNS], lpm[MAX_RUNS];
		for (unsigned r = 0; r < runs; r++) {
			ours[r] = time_ours(&t, dst, lookups, &sum);
			lpm[r] = time_lpm(&t, dst, lookups, &sum);
		}
		char label[40];
		snprintf(label, sizeof(label), "%u", route_count(t.ours));
		printf("%-26s %12.1f %12.1f\n", label, bench_median(ours, runs),
		       bench_median(lpm, runs));
		route_table_destroy(t.ours);
		rte_lpm_free(t.lpm);
	}
	fprintf(stderr, "(checksum %llu)\n", (unsigned long long)sum);
	rte_eal_cleanup();
	return 0;
}
