/* dps-pktgen: the traffic source and sink of the forwarding benchmark. Sends UDP frames of a
 * family as fast as it can on port 0 and counts what comes back on port 1, so whatever sits
 * between the two ports (dpstackd, testpmd, DPDK's l3fwd) is measured in frames forwarded per
 * second, for each frame size of --sizes in turn (one warm-up and one measurement each, so the
 * forwarder is started once for all of them). Sizes count the FCS, as RFC 2544 §9.1 does: the
 * smallest is 64 bytes with IPv4 (60 + FCS), 66 with IPv6 (its 40-byte header and UDP's 8 make
 * 62 bytes before the FCS, the smallest valid IPv6/UDP frame); the largest 1518, a 1500-byte
 * MTU's. Runs on one lcore. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "../src/wire/bytes.h"
#include "../src/wire/checksum.h"
#include "../src/wire/eth.h"
#include "../src/wire/ipv4.h"
#include "../src/wire/ipv6.h"

#define BURST 32
#define FCS_LEN 4
#define FRAME_MAX 1518 /* with the FCS: a 1500-byte MTU's largest untagged frame */
#define SIZES_MAX 16
#define UDP_HDR_LEN 8

struct gen_opts {
	struct eth_addr dst_mac;
	uint32_t src_ip, dst_ip;
	struct ip6_addr src_ip6, dst_ip6;
	bool v6;                  /* the addresses given are IPv6 ones */
	unsigned sizes[SIZES_MAX]; /* frame sizes with the FCS, measured in this order */
	unsigned nsizes;
	unsigned seconds, warmup, flows;
};

static void usage(void)
{
	fprintf(stderr, "usage: dps-pktgen [EAL args] -- --dst-mac MAC --src-ip A --dst-ip B "
			"[--seconds N] [--warmup N] [--flows N] [--sizes N[,N...]]\n"
			"Sends on port 0, receives on port 1; prints tx/rx Mpps for each frame size\n"
			"(bytes with the FCS, default the family's smallest: 64, or 66 for IPv6;\n"
			"at most %d sizes of up to %d bytes). IPv6 addresses send IPv6 frames.\n",
		SIZES_MAX, FRAME_MAX);
	exit(2);
}

/* "64,128,1518": each within [smallest, FRAME_MAX], else a clear error, never a silent clamp. */
static void sizes_parse(const char *list, unsigned smallest, struct gen_opts *o)
{
	const char *p = list;
	while (*p != '\0') {
		char *end;
		errno = 0;
		unsigned long n = strtoul(p, &end, 10);
		if (end == p || errno != 0 || (*end != ',' && *end != '\0') || n < smallest ||
		    n > FRAME_MAX || o->nsizes == SIZES_MAX) {
			fprintf(stderr,
				"dps-pktgen: --sizes %s: want up to %d sizes from %u to %d bytes "
				"(with the FCS; %u is this family's smallest UDP frame)\n",
				list, SIZES_MAX, smallest, FRAME_MAX, smallest);
			exit(2);
		}
		o->sizes[o->nsizes++] = (unsigned)n;
		p = *end == ',' ? end + 1 : end;
	}
	if (o->nsizes == 0)
		usage();
}

static void parse_opts(int argc, char **argv, struct gen_opts *o)
{
	static const struct option lo[] = {
		{"dst-mac", required_argument, NULL, 'm'}, {"src-ip", required_argument, NULL, 's'},
		{"dst-ip", required_argument, NULL, 'd'}, {"seconds", required_argument, NULL, 't'},
		{"warmup", required_argument, NULL, 'w'}, {"flows", required_argument, NULL, 'f'},
		{"sizes", required_argument, NULL, 'z'}, {NULL, 0, NULL, 0}};
	const char *sizes = NULL;
	*o = (struct gen_opts){.seconds = 5, .warmup = 1, .flows = 1024};
	int c, have = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'm': have |= eth_addr_parse(optarg, &o->dst_mac) == 0; break;
		case 's':
			o->v6 = strchr(optarg, ':') != NULL;
			have |= ((o->v6 ? ip6_addr_parse(optarg, &o->src_ip6)
					: ip4_addr_parse(optarg, &o->src_ip)) == 0) << 1;
			break;
		case 'd':
			have |= ((strchr(optarg, ':') != NULL ? ip6_addr_parse(optarg, &o->dst_ip6)
							       : ip4_addr_parse(optarg, &o->dst_ip)) == 0)
				<< 2;
			break;
		case 't': o->seconds = (unsigned)atoi(optarg); break;
		case 'w': o->warmup = (unsigned)atoi(optarg); break;
		case 'f': o->flows = (unsigned)atoi(optarg); break;
		case 'z': sizes = optarg; break;
		default: usage();
		}
	}
	if (have != 7 || o->seconds == 0 || o->flows == 0 || o->flows > 65535)
		usage();
	unsigned smallest = (o->v6 ? ETH_HDR_LEN + IP6_HDR_LEN + UDP_HDR_LEN : 60) + FCS_LEN;
	if (sizes == NULL) {
		o->sizes[o->nsizes++] = smallest;
		return;
	}
	sizes_parse(sizes, smallest, o);
}

static int port_up(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf = {0};
	if (rte_eth_dev_configure(port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(port, 0, 1024, rte_eth_dev_socket_id(port), NULL) != 0 ||
	    rte_eth_dev_start(port) != 0)
		return -1;
	/* memif links come up when the peer connects: wait for it (bounded). */
	for (int i = 0; i < 200; i++) {
		struct rte_eth_link l;
		if (rte_eth_link_get_nowait(port, &l) == 0 && l.link_status == RTE_ETH_LINK_UP)
			return 0;
		rte_delay_ms(50);
	}
	fprintf(stderr, "dps-pktgen: port %u link did not come up\n", port);
	return -1;
}

/* An Ethernet/IP/UDP frame of the family, frame_len bytes before the FCS, its UDP payload
 * zeros; the UDP source port varies per flow. */
static void frame_build(uint8_t *f, unsigned frame_len, const struct gen_opts *o,
			const struct eth_addr *src_mac, uint16_t flow)
{
	memset(f, 0, FRAME_MAX);
	struct eth_repr eth = {.dst = o->dst_mac, .src = *src_mac,
			       .ethertype = o->v6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4};
	eth_build(f, ETH_HDR_LEN, &eth);
	uint16_t ip_len = (uint16_t)(frame_len - ETH_HDR_LEN);
	size_t ip_hdr_len = o->v6 ? IP6_HDR_LEN : IP4_HDR_MIN_LEN;
	uint16_t udp_len = (uint16_t)(ip_len - ip_hdr_len);
	if (o->v6) {
		struct ip6_repr ip = {.payload_len = udp_len, .next_header = IP6_NH_UDP,
				      .hop_limit = 64, .src = o->src_ip6, .dst = o->dst_ip6};
		ip6_build(f + ETH_HDR_LEN, IP6_HDR_LEN, &ip);
	} else {
		struct ip4_repr ip = {.total_len = ip_len, .ttl = 64, .proto = IP4_PROTO_UDP,
				      .src = o->src_ip, .dst = o->dst_ip};
		ip4_build(f + ETH_HDR_LEN, IP4_HDR_MIN_LEN, &ip);
	}
	uint8_t *udp = f + ETH_HDR_LEN + ip_hdr_len;
	wire_put_be16(udp, (uint16_t)(1024 + flow));
	wire_put_be16(udp + 2, 9);
	wire_put_be16(udp + 4, udp_len);
	/* Over IPv4, checksum 0 means none (RFC 768); IPv6 has no such escape (RFC 8200 §8.1). */
	if (o->v6) {
		uint32_t sum = wire_csum_pseudo6(o->src_ip6.b, o->dst_ip6.b, IP6_NH_UDP, udp_len);
		uint16_t c = wire_csum_finish(wire_csum_add(sum, udp, udp_len));
		wire_put_be16(udp + 6, c == 0 ? 0xffff : c);
	}
}

/* Sends the frames round robin for the warm-up and then the measurement, receiving all the
 * while; prints the rates of the measurement. */
static void measure(struct rte_mempool *pool, uint8_t (*frames)[FRAME_MAX], unsigned frame_len,
		    const struct gen_opts *o)
{
	const uint64_t hz = rte_get_tsc_hz();
	uint64_t start = rte_rdtsc(), measure_from = start + o->warmup * hz;
	uint64_t end = measure_from + o->seconds * hz;
	uint64_t tx = 0, rx = 0, tx_at_start = 0, rx_at_start = 0;
	bool measuring = false;
	unsigned flow = 0;
	struct rte_mbuf *burst[BURST];
	for (uint64_t now = start; now < end; now = rte_rdtsc()) {
		if (!measuring && now >= measure_from) {
			measuring = true;
			tx_at_start = tx;
			rx_at_start = rx;
		}
		if (rte_pktmbuf_alloc_bulk(pool, burst, BURST) == 0) {
			for (int i = 0; i < BURST; i++) {
				uint8_t *p = (uint8_t *)rte_pktmbuf_append(burst[i],
									   (uint16_t)frame_len);
				memcpy(p, frames[flow], frame_len);
				flow = flow + 1 == o->flows ? 0 : flow + 1;
			}
			uint16_t sent = rte_eth_tx_burst(0, 0, burst, BURST);
			tx += sent;
			if (sent < BURST)
				rte_pktmbuf_free_bulk(burst + sent, BURST - sent);
		}
		uint16_t got;
		do {
			got = rte_eth_rx_burst(1, 0, burst, BURST);
			rx += got;
			rte_pktmbuf_free_bulk(burst, got);
		} while (got == BURST);
	}
	double secs = (double)o->seconds;
	printf("size=%u tx_mpps=%.3f rx_mpps=%.3f\n", frame_len + FCS_LEN,
	       (double)(tx - tx_at_start) / secs / 1e6, (double)(rx - rx_at_start) / secs / 1e6);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int n = rte_eal_init(argc, argv);
	if (n < 0) {
		fprintf(stderr, "dps-pktgen: EAL init failed\n");
		return 1;
	}
	struct gen_opts o;
	parse_opts(argc - n, argv + n, &o);
	if (rte_eth_dev_count_avail() < 2) {
		fprintf(stderr, "dps-pktgen: needs two ports (tx, rx)\n");
		return 1;
	}
	struct rte_mempool *pool = rte_pktmbuf_pool_create("gen", 16383, 256, 0,
							   RTE_MBUF_DEFAULT_BUF_SIZE,
							   (int)rte_socket_id());
	if (pool == NULL || port_up(0, pool) != 0 || port_up(1, pool) != 0)
		return 1;
	struct rte_ether_addr m;
	rte_eth_macaddr_get(0, &m);
	struct eth_addr src_mac;
	memcpy(src_mac.b, m.addr_bytes, ETH_ADDR_LEN);
	uint8_t (*frames)[FRAME_MAX] = calloc(o.flows, FRAME_MAX);
	if (frames == NULL)
		return 1;
	for (unsigned i = 0; i < o.nsizes; i++) {
		unsigned frame_len = o.sizes[i] - FCS_LEN;
		for (unsigned f = 0; f < o.flows; f++)
			frame_build(frames[f], frame_len, &o, &src_mac, (uint16_t)f);
		measure(pool, frames, frame_len, &o);
	}
	free(frames);
	/* DPDK 22.11's memif receiver crashes when its peer disconnects while it polls: stop
	 * polling, let the caller stop the forwarder, and close our ports only after SIGTERM. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	int sig;
	sigwait(&sigs, &sig);
	rte_eth_dev_stop(0);
	rte_eth_dev_stop(1);
	rte_eth_dev_close(0);
	rte_eth_dev_close(1);
	rte_eal_cleanup();
	return 0;
}
