/* The per-packet cost of the ACL (src/acl) with 10 and 10,000 rules, on real frames in
 * mbufs: the forward hook as the stack calls it, with each datagram classified alone
 * (one rte_acl_classify per datagram), and with the RX burst of 32 classified first in one
 * call (acl_rx_burst, as the worker does) so that the hook finds its verdict there.
 * Also the time to build each set (what `acl add` costs the control thread).
 *
 *   dps-acl-bench [--runs N] [--packets N]
 *
 * Prints, per rule count, the median over the runs of CPU ns per packet for each way, and
 * the ratio of one-by-one to burst. One lcore, no hugepages, no ports. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "acl/acl.h"
#include "bench_cpu.h"
#include "wire/eth.h"

#define NB_PKTS 1024          /* distinct packets, cycled through (a multiple of BURST) */
#define BURST 32

/* Rule i of a set of n: UDP and TCP, sources as /32 hosts and every tenth a /24, single
 * destination ports and every seventh a range; the first and last rules of the 10-rule set
 * match some of the packets, so both hits and misses are timed. */
static void make_rule(struct acl_rule *r, uint32_t i)
{
	*r = (struct acl_rule){.id = i + 1, .prio = ACL_PRIO_DEFAULT, .deny = i % 2 == 0,
			       .proto = i % 3 ? 17 : 6, .sport_hi = 65535, .dev = ACL_DEV_ANY,
			       .hooks = ACL_HOOK_ALL};
	r->src = 0xac100000u | (i / 250) << 8 | (i % 250);        /* 172.16.x.y */
	r->src_len = 32;
	if (i % 10 == 9) {
		r->src &= 0xffffff00u;
		r->src_len = 24;
	}
	r->dport_lo = r->dport_hi = (uint16_t)(1024 + i);
	if (i % 7 == 6)
		r->dport_hi = (uint16_t)(r->dport_lo + 50);
}

/* Frame i: Ethernet, then IPv4 from 172.16.0.x to 10.0.0.2, UDP or TCP, destination ports
 * 1024 onwards. */
static struct rte_mbuf *make_frame(struct rte_mempool *pool, uint32_t i)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return NULL;
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, ETH_HDR_LEN + 40);
	memset(f, 0, ETH_HDR_LEN + 40);
	f[ETH_OFF_TYPE] = 0x08;                         /* IPv4 */
	uint8_t *b = f + ETH_HDR_LEN;
	struct ip4_repr r = {.total_len = 40, .ttl = 64, .proto = i % 3 ? 17 : 6,
			     .src = 0xac100000u | (i % 16), .dst = 0x0a000002u};
	ip4_build(b, 20, &r);
	uint16_t sport = (uint16_t)(40000 + i), dport = (uint16_t)(1024 + i % 40);
	b[20] = (uint8_t)(sport >> 8);
	b[21] = (uint8_t)sport;
	b[22] = (uint8_t)(dport >> 8);
	b[23] = (uint8_t)dport;
	b[20 + 13] = 0x10;
	return m;
}

/* What the stack does to frames before the forward hook, with or without the burst's
 * classification first: strip the Ethernet header, parse, judge (then put the header back,
 * so that the frames serve again). Returns ns per packet; *denied counts the drops. */
static double run(const struct acl_set *set, struct rte_mbuf **frames, unsigned packets,
		  bool burst, unsigned *denied)
{
	unsigned d = 0;
	double t0 = bench_cpu_ns();
	for (unsigned i = 0; i < packets; i += BURST) {
		struct rte_mbuf **f = &frames[i % NB_PKTS];
		if (burst)
			acl_rx_burst(set, 0, 0, f, BURST);
		for (unsigned j = 0; j < BURST; j++) {
			struct rte_mbuf *m = f[j];
			struct ip4_repr ip;
			rte_pktmbuf_adj(m, ETH_HDR_LEN);
			m->port = 0;
			ip4_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_pkt_len(m), false,
				  &ip);
			d += acl_ip4_denies(set, 0, ACL_HOOK_FORWARD, m, &ip);
			rte_pktmbuf_prepend(m, ETH_HDR_LEN);
		}
	}
	double t = bench_cpu_ns() - t0;
	*denied = d;
	return t / packets;
}

int main(int argc, char **argv)
{
	int eal_n = rte_eal_init(argc, argv);
	if (eal_n < 0) {
		fprintf(stderr, "dps-acl-bench: EAL init failed\n");
		return 1;
	}
	argc -= eal_n;
	argv += eal_n;
	unsigned runs = 7, packets = 2000000;
	static const struct option opts[] = {{"runs", required_argument, NULL, 'r'},
					     {"packets", required_argument, NULL, 'p'},
					     {NULL, 0, NULL, 0}};
	int c;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'r')
			runs = (unsigned)atoi(optarg);
		else if (c == 'p')
			packets = (unsigned)atoi(optarg);
		else
			return 2;
	}
	if (runs == 0 || runs > 101 || packets < BURST) {
		fprintf(stderr, "dps-acl-bench: --runs 1..101, --packets >= %d\n", BURST);
		return 2;
	}
	packets -= packets % BURST;
	struct rte_mempool *pool = rte_pktmbuf_pool_create("acl_bench", 2 * NB_PKTS, 0, 0,
							    RTE_MBUF_DEFAULT_BUF_SIZE,
							    (int)rte_socket_id());
	static struct rte_mbuf *frames[NB_PKTS];
	for (uint32_t i = 0; pool != NULL && i < NB_PKTS; i++)
		if ((frames[i] = make_frame(pool, i)) == NULL)
			pool = NULL;
	if (pool == NULL) {
		fprintf(stderr, "dps-acl-bench: no mbufs\n");
		return 1;
	}
	static const uint32_t sizes[] = {10, 10000};
	printf("%-7s %-10s %-18s %-18s %s\n", "rules", "build ms", "one-by-one ns/pkt",
	       "burst-32 ns/pkt", "one-by-one/burst");
	/* Both columns include stripping the Ethernet header and parsing the IPv4 header, as
	 * the stack does before its hooks: the no-rules row is that cost alone. */
	double none[101];
	for (unsigned r = 0; r < runs; r++) {
		unsigned d;
		none[r] = run(NULL, frames, packets, false, &d);
	}
	printf("%-7u %-10s %-18.1f %-18s %s\n", 0, "-", bench_median(none, runs), "-",
	       "(no rules: header strip and parse, the hook's NULL check)");
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		struct acl_rule *rules = calloc(sizes[s], sizeof(*rules));
		for (uint32_t i = 0; rules != NULL && i < sizes[s]; i++)
			make_rule(&rules[i], i);
		char err[160] = "out of memory";
		double t0 = bench_cpu_ns();
		struct acl_set *set = rules ? acl_set_build(rules, sizes[s], 1, err, sizeof(err))
					    : NULL;
		double build_ms = (bench_cpu_ns() - t0) / 1e6;
		free(rules);
		if (set == NULL) {
			fprintf(stderr, "dps-acl-bench: %s\n", err);
			return 1;
		}
		double one[101], burst[101];
		unsigned d1 = 0, d2 = 0;
		for (unsigned r = 0; r < runs; r++) {
			one[r] = run(set, frames, packets, false, &d1);
			burst[r] = run(set, frames, packets, true, &d2);
		}
		if (d1 != d2) {
			fprintf(stderr, "dps-acl-bench: verdicts differ: %u denied one by one, "
				"%u in bursts\n", d1, d2);
			return 1;
		}
		double m1 = bench_median(one, runs), m2 = bench_median(burst, runs);
		printf("%-7u %-10.1f %-18.1f %-18.1f %.2f   (%u of %u packets denied)\n", sizes[s],
		       build_ms, m1, m2, m1 / m2, d1, packets);
		acl_set_free(set);
	}
	for (unsigned i = 0; i < NB_PKTS; i++)
		rte_pktmbuf_free(frames[i]);
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
