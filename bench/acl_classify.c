/* The per-packet cost of the ACL (src/acl) with 10 and 10,000 rules, on real frames in
 * mbufs: the forward hook as the stack calls it, with each datagram classified alone
 * (one rte_acl_classify per datagram), and with the RX burst of 32 classified first in one
 * call (acl_rx_burst, as the worker does) so that the hook finds its verdict there.
 * Also the time to build each set (what `acl add` costs the control thread), and the same
 * rules and traffic over IPv6 (each datagram classified alone at its hook, its extension
 * headers walked for the key, as ip6_forward's hook does).
 *
 *   dps-acl-bench [--runs N] [--packets N]
 *
 * Prints, per rule count, the median over the runs of CPU ns per packet for each way, the
 * ratio of one-by-one to burst, and IPv6's one-by-one. One lcore, no hugepages, no ports. */
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
#include "wire/ipv6.h"

#define NB_PKTS 1024          /* distinct packets, cycled through (a multiple of BURST) */
#define BURST 32

/* Rule i of a set of n: UDP and TCP, sources as /32 hosts and every tenth a /24, single
 * destination ports and every seventh a range; the first and last rules of the 10-rule set
 * match some of the packets, so both hits and misses are timed. */
static void make_rule(struct acl_rule *r, uint32_t i)
{
	*r = (struct acl_rule){.id = i + 1, .prio = ACL_PRIO_DEFAULT, .deny = i % 2 == 0,
			       .proto = i % 3 ? 17 : 6, .family = ACL_FAMILY_IP4, .sport_hi = 65535,
			       .dev = ACL_DEV_ANY, .hooks = ACL_HOOK_ALL};
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

/* The same rule over IPv6: 2001:db8::x:y hosts (/128) and every tenth a /120. */
static void make_rule6(struct acl_rule *r, uint32_t i)
{
	make_rule(r, i);
	r->family = ACL_FAMILY_IP6;
	r->src = 0;
	r->src6 = (struct ip6_addr){{0x20, 0x01, 0x0d, 0xb8, [13] = (uint8_t)(i / 250),
				     [15] = (uint8_t)(i % 250)}};
	r->src_len = i % 10 == 9 ? 120 : 128;
	if (r->src_len == 120)
		r->src6.b[15] = 0;
}

/* Frame i over IPv6, as make_frame: from 2001:db8::x to 2001:db8:1::2. */
static struct rte_mbuf *make_frame6(struct rte_mempool *pool, uint32_t i)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return NULL;
	uint8_t *f = (uint8_t *)rte_pktmbuf_append(m, ETH_HDR_LEN + IP6_HDR_LEN + 20);
	memset(f, 0, ETH_HDR_LEN + IP6_HDR_LEN + 20);
	f[ETH_OFF_TYPE] = 0x86;
	f[ETH_OFF_TYPE + 1] = 0xdd;
	uint8_t *b = f + ETH_HDR_LEN;
	struct ip6_repr r = {.payload_len = 20, .next_header = i % 3 ? 17 : 6, .hop_limit = 64,
			     .src = {{0x20, 0x01, 0x0d, 0xb8, [15] = (uint8_t)(i % 16)}},
			     .dst = {{0x20, 0x01, 0x0d, 0xb8, [5] = 1, [15] = 2}}};
	ip6_build(b, IP6_HDR_LEN, &r);
	uint8_t *l4 = b + IP6_HDR_LEN;
	uint16_t sport = (uint16_t)(40000 + i), dport = (uint16_t)(1024 + i % 40);
	l4[0] = (uint8_t)(sport >> 8);
	l4[1] = (uint8_t)sport;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
	l4[13] = 0x10;
	return m;
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

/* run's IPv6 twin: the forward hook walks each datagram's chain and classifies it alone. */
static double run6(const struct acl_set *set, struct rte_mbuf **frames, unsigned packets,
		   unsigned *denied)
{
	unsigned d = 0;
	double t0 = bench_cpu_ns();
	for (unsigned i = 0; i < packets; i++) {
		struct rte_mbuf *m = frames[i % NB_PKTS];
		struct ip6_repr ip;
		rte_pktmbuf_adj(m, ETH_HDR_LEN);
		m->port = 0;
		ip6_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_pkt_len(m), &ip);
		d += acl_ip6_denies(set, 0, ACL_HOOK_FORWARD, m, &ip, NULL);
		rte_pktmbuf_prepend(m, ETH_HDR_LEN);
	}
	double t = bench_cpu_ns() - t0;
	*denied = d;
	return t / packets;
}

/* A set of n rules made by make (1 worker); exits on failure. *build_ms: its build time. */
static struct acl_set *build_set(uint32_t n, void (*make)(struct acl_rule *, uint32_t),
				 double *build_ms)
{
	struct acl_rule *rules = calloc(n, sizeof(*rules));
	for (uint32_t i = 0; rules != NULL && i < n; i++)
		make(&rules[i], i);
	char err[160] = "out of memory";
	double t0 = bench_cpu_ns();
	struct acl_set *set = rules ? acl_set_build(rules, n, 1, err, sizeof(err)) : NULL;
	*build_ms = (bench_cpu_ns() - t0) / 1e6;
	free(rules);
	if (set == NULL) {
		fprintf(stderr, "dps-acl-bench: %s\n", err);
		exit(1);
	}
	return set;
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
	struct rte_mempool *pool = rte_pktmbuf_pool_create("acl_bench", 3 * NB_PKTS, 0, 0,
							    RTE_MBUF_DEFAULT_BUF_SIZE,
							    (int)rte_socket_id());
	static struct rte_mbuf *frames[NB_PKTS], *frames6[NB_PKTS];
	for (uint32_t i = 0; pool != NULL && i < NB_PKTS; i++)
		if ((frames[i] = make_frame(pool, i)) == NULL ||
		    (frames6[i] = make_frame6(pool, i)) == NULL)
			pool = NULL;
	if (pool == NULL) {
		fprintf(stderr, "dps-acl-bench: no mbufs\n");
		return 1;
	}
	static const uint32_t sizes[] = {10, 10000};
	printf("%-7s %-10s %-18s %-18s %-17s %-10s %s\n", "rules", "build ms",
	       "one-by-one ns/pkt", "burst-32 ns/pkt", "one-by-one/burst", "v6 build",
	       "IPv6 ns/pkt");
	/* Both columns include stripping the Ethernet header and parsing the IPv4 header, as
	 * the stack does before its hooks: the no-rules row is that cost alone. */
	double none[101], none6[101];
	for (unsigned r = 0; r < runs; r++) {
		unsigned d;
		none[r] = run(NULL, frames, packets, false, &d);
		none6[r] = run6(NULL, frames6, packets, &d);
	}
	printf("%-7u %-10s %-18.1f %-18s %-17s %-10s %-11.1f %s\n", 0, "-",
	       bench_median(none, runs), "-", "-", "-", bench_median(none6, runs),
	       "(no rules: header strip and parse, the hook's NULL check)");
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		double build_ms, build6_ms;
		struct acl_set *set = build_set(sizes[s], make_rule, &build_ms);
		struct acl_set *set6 = build_set(sizes[s], make_rule6, &build6_ms);
		double one[101], burst[101], one6[101];
		unsigned d1 = 0, d2 = 0, d6 = 0;
		for (unsigned r = 0; r < runs; r++) {
			one[r] = run(set, frames, packets, false, &d1);
			burst[r] = run(set, frames, packets, true, &d2);
			one6[r] = run6(set6, frames6, packets, &d6);
		}
		if (d1 != d2 || d1 != d6) {
			fprintf(stderr, "dps-acl-bench: verdicts differ: %u denied one by one, "
				"%u in bursts, %u over IPv6\n", d1, d2, d6);
			return 1;
		}
		double m1 = bench_median(one, runs), m2 = bench_median(burst, runs);
		printf("%-7u %-10.1f %-18.1f %-18.1f %-17.2f %-10.1f %-11.1f (%u of %u packets "
		       "denied)\n", sizes[s], build_ms, m1, m2, m1 / m2, build6_ms,
		       bench_median(one6, runs), d1, packets);
		acl_set_free(set);
		acl_set_free(set6);
	}
	for (unsigned i = 0; i < NB_PKTS; i++) {
		rte_pktmbuf_free(frames[i]);
		rte_pktmbuf_free(frames6[i]);
	}
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}
