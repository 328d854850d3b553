/* libFuzzer target: one long-lived stack (src/stack/stack.h) driven by sequences of frames,
 * clock steps, pings and configuration changes, the way lwIP's test/fuzz drives its stack.
 *
 * Topology (built once, in LLVMFuzzerInitialize, on an EAL without hugepages):
 *   port 0  02:00:00:00:00:00  10.0.0.2/24   peer A 10.0.0.1 02:aa:00:00:00:01 (static)
 *   port 1  02:00:00:00:00:01  10.0.1.2/24   peer B 10.0.1.1 (learnt by ARP)
 *   0.0.0.0/0 via 10.0.0.1; 172.16.0.0/12 via 10.0.1.1; 203.0.113.0/24 via 10.0.1.1 MTU 576;
 *   192.0.2.0/24 blackhole; 198.51.100.0/24 unreachable. Forwarding on. A UDP echo socket
 *   on [::]:7 (both families).
 * The neighbour table (16 entries), reassembly (4 datagrams of at most 8 fragments, 32 KiB),
 * the ICMP error burst (20) and the mbuf pool (255) are small, so that table-full, eviction,
 * rate-limit and pool-empty paths are reachable.
 *
 * Input: a series of records  op:u8  arg:be16  [arg bytes of data, for the frame ops; fewer
 * when the input ends first]. The low nibble of op is the kind, the high nibble its flags:
 *   0 IP     data is an IPv4 datagram, sent in an Ethernet frame to the port's MAC from the
 *            port's peer. Flags: F_PORT1, F_BCAST (to ff:ff:ff:ff:ff:ff), F_OTHER (from a
 *            third station's MAC), F_NOFIX (else the header checksum, a total length past
 *            the data and the ICMP checksum of an unfragmented ICMP message are fixed up,
 *            so mutations reach the layers behind the checksums).
 *   1 ARP    data is an ARP body, framed as for IP (F_NOFIX unused).
 *   2 RAW    data is the whole Ethernet frame; F_BCAST here splits it into 64-byte segments,
 *            F_OTHER marks it with the NIC's "IP checksum bad" flag, F_NOFIX with "good"
 *            (then the stack trusts it, and so does the output check).
 *   3 CLOCK  advance the clock by arg ms, ticking every 100 ms as a worker does.
 *   4 PING   stack_ping_send of arg bytes to ping_dst[flags].
 *   5 NEIGH  flags 0-6: set a neighbour timer or probe count to arg (neigh_set_params);
 *            7: static entry 10.0.p.h (p = bit 8 of arg, h = its low byte), 8: delete that
 *            entry, 9: flush port p.
 *   6 PEER   what the simulated peers answer (PEER_* bits of arg).
 *   7 MTU    set the MTU of port F_PORT1 to arg.
 *   8 LINK   port F_PORT1 down, or up with F_BCAST.
 *   9 FWD    forwarding of both families off, or on with F_PORT1.
 *  10 ADDR   add 10.0.p.h/(16 + arg>>8 & 15) to port F_PORT1 (p = the port, h = arg's low
 *            byte); with F_BCAST delete it instead; with F_OTHER announce it.
 *  11 IP6    data is an IPv6 datagram, framed as IP but with F_BCAST to the all-nodes MAC
 *            33:33:00:00:00:01; unless F_NOFIX the payload length is set from the data and
 *            an ICMPv6 message right after the fixed header gets its checksum.
 *  12 IP6C   as IP6, but the frame fed as a chain: its first 78 bytes in one segment (as
 *            many as stack_input wants of a chain's first segment to keep it as it is), the
 *            rest in 8-byte segments, so that IPv6 input meets extension headers and
 *            transport headers split across segments (GRO's and loopback chains).
 *  13-15     as IP.
 *
 * Port 1 has a kernel interface (the exception path): what the stack does not own there goes
 * to fuzz_to_kernel, which checks it is a received frame made whole again.
 *
 * The peers: every frame the stack sends goes to fuzz_xmit, which checks it (a sound mbuf, at
 * least 60 bytes, our source MAC, no zero destination; ARP that parses; IPv4 that parses with
 * a valid header checksum unless the input lied with the "good" flag, and exactly fills the
 * frame; unfragmented ICMP that parses with a valid checksum unless the input itself fed a
 * truncated or bad one, which the stack forwards as is; IPv6 that parses, fills the frame
 * and carries only ICMPv6 with a valid checksum), frees it, and may queue an answer: an ARP
 * reply to a request, a neighbor advertisement to a solicitation, an echo reply to an echo
 * request (on by default). Answers
 * are fed back after the current record, not from inside the callback.
 *
 * After each input the harness restores the configuration, advances the clock by 10 minutes
 * (in 100 ms ticks while a neighbour entry or a reassembly is pending, so their timers run
 * and expire), flushes the neighbour table and aborts unless every mbuf is back in the pool:
 * every leaked mbuf is a bug. The clock, the counters and the route table's history carry
 * over between inputs; everything a packet can change is back to the start. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_eal.h"
#include "ip6/ip6.h"
#include "stack/stack.h"
#include "../../src/wire/arp.h"
#include "../../src/wire/bytes.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/eth.h"
#include "../../src/wire/icmp4.h"
#include "../../src/wire/icmp6.h"
#include "../../src/wire/ipv4.h"
#include "../../src/wire/ipv6.h"
#include "../../src/wire/tcp.h"
#include "../../src/wire/udp.h"
#include "stack/netcfg6.h"
#include "inet/inet.h"
#include "udp/udp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

#define ADDR0 IP4(10, 0, 0, 2)
#define ADDR1 IP4(10, 0, 1, 2)
#define HOST_A IP4(10, 0, 0, 1)
#define HOST_B IP4(10, 0, 1, 1)
#define PORT_MTU 1500
#define NPORTS 2

#define POOL_MBUFS 255u     /* a 64 KB ping takes ~80; no per-lcore cache: exact in-use counts */
#define POOL_DATA_ROOM RTE_MBUF_DEFAULT_BUF_SIZE
#define NEIGH_ENTRIES 16
#define TICK_MS 100
#define SETTLE_MS (10u * 60u * 1000u)

enum fuzz_kind {
	OP_IP, OP_ARP, OP_RAW, OP_CLOCK, OP_PING, OP_NEIGH, OP_PEER, OP_MTU, OP_LINK, OP_FWD,
	OP_ADDR, OP_IP6, OP_IP6_CHAIN,
};
/* OP_IP6_CHAIN's segments: stack_input's STACK_RX_HDR_ROOM (Ethernet, a VLAN tag, the
 * longest IPv4 header), then small ones. */
#define CHAIN_FIRST_SEG (ETH_HDR_LEN + 4 + 60)
#define CHAIN_SEG 8
#define F_PORT1 0x1
#define F_BCAST 0x2
#define F_OTHER 0x4
#define F_NOFIX 0x8

#define PEER_ARP 0x1       /* answer ARP requests and neighbor solicitations */
#define PEER_ECHO 0x2      /* answer echo requests */
#define PEER_ALT_MAC 0x4   /* answer ARP with a second MAC per address (cached MACs change) */
#define PEER_DEFAULT (PEER_ARP | PEER_ECHO)

static const struct eth_addr mac_port[NPORTS] = {
	{{0x02, 0x00, 0x00, 0x00, 0x00, 0x00}},
	{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}},
};
static const struct eth_addr mac_peer[NPORTS] = {
	{{0x02, 0xaa, 0x00, 0x00, 0x00, 0x01}},
	{{0x02, 0xbb, 0x00, 0x00, 0x00, 0x01}},
};
static const struct eth_addr mac_other = {{0x02, 0xcc, 0x00, 0x00, 0x00, 0x01}};

/* PING destinations, by the op's flags: resolved, to resolve, unanswered, routed, filtered,
 * our own, broadcast and martian. */
static const uint32_t ping_dst[16] = {
	HOST_A, HOST_B, IP4(10, 0, 0, 77), IP4(10, 0, 1, 77),
	IP4(8, 8, 8, 8), IP4(172, 16, 5, 5), IP4(203, 0, 113, 9), IP4(192, 0, 2, 1),
	IP4(198, 51, 100, 1), ADDR0, ADDR1, IP4(10, 0, 0, 255),
	IP4(255, 255, 255, 255), IP4(0, 0, 0, 0), IP4(127, 0, 0, 1), IP4(224, 0, 0, 1),
};

static struct rte_mempool *pool;
static struct stack *stk;
static unsigned pool_baseline;
static struct neigh_params neigh_defaults;

/* FUZZ_STACK_VERBOSE=1 in the environment: print each input's records and the counters that
 * moved, to see what a seed reaches (run the binary on single files). */
static bool verbose;
static uint64_t events_before[STACK_EV_COUNT], drops_before[STACK_DROP_COUNT];

/* Per input. */
static unsigned peer_mode;
static bool icmp_tainted;      /* an ICMP message with a bad checksum was fed */
static bool ip_tainted;        /* a frame flagged "IP checksum good" was fed */
static uint16_t ping_seq;

/* Answers of the peers, fed back after the current record (a FIFO). */
#define PEER_QUEUE 64
#define PEER_FRAME_MAX 2048
struct peer_frame {
	uint16_t port;
	uint16_t len;
	uint8_t data[PEER_FRAME_MAX];
};
static struct peer_frame peer_q[PEER_QUEUE];
static unsigned peer_head, peer_count;

static uint8_t frame_buf[ETH_HDR_LEN + IP4_MAX_LEN];

/* --- mbufs --- */

/* An mbuf chain holding buf[0..len) in segments of at most seg bytes (0: as large as fit),
 * the first of at most first bytes (0: seg); NULL when the pool runs dry (then the frame is
 * simply not sent). */
static struct rte_mbuf *make_mbuf(const uint8_t *buf, size_t len, size_t first, size_t seg)
{
	struct rte_mbuf *head = NULL;
	size_t pos = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		size_t n = len - pos;

		if (m == NULL) {
			rte_pktmbuf_free(head);
			return NULL;
		}
		size_t most = head == NULL && first != 0 ? first : seg;
		if (most != 0 && n > most)
			n = most;
		if (n > rte_pktmbuf_tailroom(m))
			n = rte_pktmbuf_tailroom(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), buf + pos, n);
		if (head == NULL) {
			head = m;
		} else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return NULL;
		}
		pos += n;
	} while (pos < len);
	return head;
}

static void feed_frame(uint16_t port, const uint8_t *frame, size_t len, size_t first,
		       size_t seg, uint64_t ol_flags)
{
	struct rte_mbuf *m = make_mbuf(frame, len, first, seg);

	if (m == NULL)
		return;
	m->ol_flags |= ol_flags;
	stack_input(stk, port, m);
}

/* --- the peers --- */

static void peer_push(uint16_t port, const uint8_t *frame, size_t len)
{
	struct peer_frame *f;

	if (peer_count == PEER_QUEUE || len > PEER_FRAME_MAX)
		return;
	f = &peer_q[(peer_head + peer_count++) % PEER_QUEUE];
	f->port = port;
	f->len = (uint16_t)len;
	memcpy(f->data, frame, len);
}

static struct eth_addr peer_mac_of(uint32_t ip, bool alt)
{
	struct eth_addr mac = {{0x02, alt ? 0xef : 0xee, 0, 0, 0, 0}};

	wire_put_be32(mac.b + 2, ip);
	return mac;
}

/* The stack asked who has arp->tpa: that host answers. */
static void peer_answer_arp(uint16_t port, const struct arp_repr *req)
{
	uint8_t frame[ETH_MIN_FRAME_LEN] = {0};
	struct arp_repr rep = {
		.op = ARP_OP_REPLY,
		.sha = peer_mac_of(req->tpa, (peer_mode & PEER_ALT_MAC) != 0),
		.spa = req->tpa,
		.tha = req->sha,
		.tpa = req->spa,
	};
	struct eth_repr eth = {.dst = req->sha, .src = rep.sha, .ethertype = ETH_TYPE_ARP};

	eth_build(frame, ETH_HDR_LEN, &eth);
	arp_build(frame + ETH_HDR_LEN, ARP_LEN, &rep);
	peer_push(port, frame, sizeof(frame));
}

/* The stack sent an (unfragmented, checked) echo request in frame: its target answers from
 * the MAC the stack sent it to. */
static void peer_answer_echo(uint16_t port, const uint8_t *frame, const struct eth_repr *eth,
			     const struct ip4_repr *ip)
{
	uint8_t out[PEER_FRAME_MAX];
	size_t len = ETH_HDR_LEN + IP4_HDR_MIN_LEN + (ip->total_len - ip->hdr_len);
	struct ip4_repr r = *ip;
	struct eth_repr e = {.dst = eth->src, .src = eth->dst, .ethertype = ETH_TYPE_IPV4};
	uint8_t *icmp = out + ETH_HDR_LEN + IP4_HDR_MIN_LEN;
	size_t icmp_len = ip->total_len - ip->hdr_len;

	if (eth_addr_is_multicast(&eth->dst) || len > sizeof(out))
		return;
	r.src = ip->dst;
	r.dst = ip->src;
	r.ttl = IP4_DEFAULT_TTL;
	r.hdr_len = IP4_HDR_MIN_LEN;
	r.total_len = (uint16_t)(IP4_HDR_MIN_LEN + icmp_len);
	eth_build(out, ETH_HDR_LEN, &e);
	ip4_build(out + ETH_HDR_LEN, IP4_HDR_MIN_LEN, &r);
	memcpy(icmp, frame + ETH_HDR_LEN + ip->hdr_len, icmp_len);
	icmp[ICMP4_OFF_TYPE] = ICMP4_ECHO_REPLY;
	wire_put_be16(icmp + ICMP4_OFF_CSUM, 0);
	wire_put_be16(icmp + ICMP4_OFF_CSUM, wire_csum(icmp, icmp_len));
	if (len < ETH_MIN_FRAME_LEN) {
		memset(out + len, 0, ETH_MIN_FRAME_LEN - len);
		len = ETH_MIN_FRAME_LEN;
	}
	peer_push(port, out, len);
}

/* Feeds the queued answers (which may cause more), at most budget of them. */
static void peer_drain(void)
{
	unsigned budget = 4 * PEER_QUEUE;

	while (peer_count > 0 && budget-- > 0) {
		static struct peer_frame f;

		f = peer_q[peer_head];
		peer_head = (peer_head + 1) % PEER_QUEUE;
		peer_count--;
		feed_frame(f.port, f.data, f.len, 0, 0, 0);
	}
	peer_head = peer_count = 0;
}

/* --- the output oracle --- */

static void check_ipv4(uint16_t port, const uint8_t *frame, size_t len,
		       const struct eth_repr *eth)
{
	struct ip4_repr ip;
	const uint8_t *dgram = frame + ETH_HDR_LEN;
	struct icmp4_repr ic;

	FUZZ_CHECK(ip4_parse(dgram, len - ETH_HDR_LEN, !ip_tainted, &ip) == WIRE_OK);
	/* Exactly the datagram, or the datagram padded with zeros to the Ethernet minimum. */
	FUZZ_CHECK(len == ETH_HDR_LEN + ip.total_len ||
		   (len == ETH_MIN_FRAME_LEN && ETH_HDR_LEN + ip.total_len < len));
	FUZZ_CHECK(ip.total_len <= NETCFG_MAX_MTU);
	if (ip.proto != IP4_PROTO_ICMP || ip.mf || ip.frag_off != 0)
		return;
	if (!icmp_tainted && !ip_tainted)
		FUZZ_CHECK(icmp4_parse(dgram + ip.hdr_len, ip.total_len - ip.hdr_len, true, &ic) ==
			   WIRE_OK);
	if ((peer_mode & PEER_ECHO) &&
	    icmp4_parse(dgram + ip.hdr_len, ip.total_len - ip.hdr_len, true, &ic) == WIRE_OK &&
	    ic.type == ICMP4_ECHO_REQUEST && !netcfg_addr_is_local(&stk->cfg, ip.dst))
		peer_answer_echo(port, frame, eth, &ip);
}

/* The stack asked who has the target of its solicitation (ICMPv6 at msg, len bytes): that
 * host answers with a solicited advertisement from the MAC peer_mac_of its last 32 bits. */
static void peer_answer_ns(uint16_t port, const struct eth_repr *eth, const struct ip6_repr *ip,
			   const uint8_t *msg, size_t len)
{
	struct nd_repr ns;
	if (nd_parse(msg, len, ip, &ns) != WIRE_OK || ns.type != ICMP6_NEIGHBOR_SOLICIT ||
	    netcfg6_local(&stk->cfg, port, &ns.target) != NULL)
		return;
	uint8_t frame[ETH_HDR_LEN + IP6_HDR_LEN + 32];
	struct eth_addr mac = peer_mac_of(wire_get_be32(ns.target.b + 12),
					  (peer_mode & PEER_ALT_MAC) != 0);
	struct eth_repr e = {.dst = eth->src, .src = mac, .ethertype = ETH_TYPE_IPV6};
	struct ip6_repr na_ip = {.payload_len = 32, .next_header = IP6_NH_ICMPV6,
				 .hop_limit = 255, .src = ns.target, .dst = ip->src};
	struct icmp6_repr ic = {.type = ICMP6_NEIGHBOR_ADVERT, .rest = 0x60000000u};
	uint8_t *na = frame + ETH_HDR_LEN + IP6_HDR_LEN;
	eth_build(frame, ETH_HDR_LEN, &e);
	ip6_build(frame + ETH_HDR_LEN, IP6_HDR_LEN, &na_ip);
	icmp6_build_header(na, ICMP6_HDR_LEN, &ic);
	memcpy(na + ICMP6_HDR_LEN, ns.target.b, 16);
	nd_build_lladdr_opt(na + 24, 8, ND_OPT_TARGET_LLADDR, &mac);
	uint32_t sum = wire_csum_pseudo6(na_ip.src.b, na_ip.dst.b, IP6_NH_ICMPV6, 32);
	wire_put_be16(na + ICMP6_OFF_CSUM, wire_csum_finish(wire_csum_add(sum, na, 32)));
	peer_push(port, frame, sizeof(frame));
}

/* What the stack sends over IPv6 from its own addresses (ICMPv6, TCP, the echo socket's UDP)
 * is always summed by the stack itself: it must verify, whatever the input was. Fragments (of
 * a large echo) carry a Fragment header and a piece of a datagram. A forwarded datagram (from
 * an address not ours) goes as it came, its hop limit one less. */
static void check_ipv6(uint16_t port, const uint8_t *frame, size_t len,
		       const struct eth_repr *eth)
{
	struct ip6_repr ip;
	struct icmp6_repr ic;
	const uint8_t *dgram = frame + ETH_HDR_LEN;

	FUZZ_CHECK(ip6_parse(dgram, len - ETH_HDR_LEN, &ip) == WIRE_OK);
	size_t total = IP6_HDR_LEN + ip.payload_len;
	FUZZ_CHECK(len == ETH_HDR_LEN + total ||
		   (len == ETH_MIN_FRAME_LEN && ETH_HDR_LEN + total < len));
	FUZZ_CHECK(total <= NETCFG_MAX_MTU && ip.hop_limit != 0);
	if (netcfg6_local(&stk->cfg, port, &ip.src) == NULL) {
		FUZZ_CHECK(total <= stk->cfg.ifaces[port].mtu);
		return;
	}
	if (ip.next_header == IP6_NH_TCP) {
		/* TCP over IPv6 (a reset from a closed port, a SYN-ACK): a sound segment with
		 * its checksum over the IPv6 pseudo-header. */
		struct tcp_repr th;
		uint32_t tsum = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_TCP, ip.payload_len);
		FUZZ_CHECK(wire_csum_finish(wire_csum_add(tsum, dgram + IP6_HDR_LEN,
							  ip.payload_len)) == 0);
		FUZZ_CHECK(tcp_parse(dgram + IP6_HDR_LEN, ip.payload_len, &th) == WIRE_OK);
		return;
	}
	if (ip.next_header == IP6_NH_UDP) {
		/* RFC 8200 §8.1: never without a checksum. */
		struct udp_repr uh;
		uint32_t usum = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_UDP, ip.payload_len);
		FUZZ_CHECK(udp_parse(dgram + IP6_HDR_LEN, ip.payload_len, &uh) == WIRE_OK);
		FUZZ_CHECK(uh.checksum != UDP_CSUM_NONE);
		FUZZ_CHECK(wire_csum_finish(wire_csum_add(usum, dgram + IP6_HDR_LEN,
							  ip.payload_len)) == 0);
		return;
	}
	if (ip.next_header == IP6_NH_FRAGMENT)
		return;
	FUZZ_CHECK(ip.next_header == IP6_NH_ICMPV6);
	uint32_t sum = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, ip.payload_len);
	FUZZ_CHECK(icmp6_parse(dgram + IP6_HDR_LEN, ip.payload_len, sum, true, &ic) == WIRE_OK);
	if ((peer_mode & PEER_ARP) && ic.type == ICMP6_NEIGHBOR_SOLICIT)
		peer_answer_ns(port, eth, &ip, dgram + IP6_HDR_LEN, ip.payload_len);
}

/* Port 1's kernel interface (the exception path): what the stack passes there is a frame
 * it received on port 1, whole again (its Ethernet header back in front, as parsed when it
 * came in), in a sound mbuf. */
static void fuzz_to_kernel(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	static uint8_t copy[ETH_HDR_LEN + 64];
	const char *why = NULL;
	struct eth_repr eth;

	(void)ctx;
	if (rte_mbuf_check(m, 1, &why) != 0) {
		fprintf(stderr, "to_kernel: broken mbuf: %s\n", why);
		FUZZ_CHECK(!"broken mbuf");
	}
	FUZZ_CHECK(port == 1);
	uint32_t len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)sizeof(copy));
	const uint8_t *frame = rte_pktmbuf_read(m, 0, len, copy);
	FUZZ_CHECK(frame != NULL);
	FUZZ_CHECK(eth_parse(frame, len, &eth) == WIRE_OK);
	FUZZ_CHECK(eth_addr_is_multicast(&eth.dst) || eth_addr_equal(&eth.dst, &mac_port[1]));
	rte_pktmbuf_free(m);
}

/* The stack's only way out: checks the frame, lets a peer answer, frees it. */
static void fuzz_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	static uint8_t copy[ETH_HDR_LEN + IP4_MAX_LEN];
	const char *why = NULL;
	struct eth_repr eth;
	const uint8_t *frame;
	uint32_t len;

	(void)ctx;
	if (rte_mbuf_check(m, 1, &why) != 0) {
		fprintf(stderr, "xmit: broken mbuf: %s\n", why);
		FUZZ_CHECK(!"broken mbuf");
	}
	FUZZ_CHECK(port < NPORTS);
	len = rte_pktmbuf_pkt_len(m);
	FUZZ_CHECK(len >= ETH_MIN_FRAME_LEN && len <= sizeof(copy));
	frame = rte_pktmbuf_read(m, 0, len, copy);
	FUZZ_CHECK(frame != NULL);
	FUZZ_CHECK(eth_parse(frame, len, &eth) == WIRE_OK);
	FUZZ_CHECK(!eth.vlan_tagged);
	FUZZ_CHECK(eth_addr_equal(&eth.src, &mac_port[port]));
	FUZZ_CHECK(!eth_addr_is_zero(&eth.dst));
	if (eth.ethertype == ETH_TYPE_ARP) {
		struct arp_repr arp;

		FUZZ_CHECK(arp_parse(frame + ETH_HDR_LEN, len - ETH_HDR_LEN, &arp) == WIRE_OK);
		FUZZ_CHECK(eth_addr_equal(&arp.sha, &mac_port[port]));
		if ((peer_mode & PEER_ARP) && arp.op == ARP_OP_REQUEST && arp.spa != arp.tpa)
			peer_answer_arp(port, &arp);
	} else if (eth.ethertype == ETH_TYPE_IPV6) {
		check_ipv6(port, frame, len, &eth);
	} else {
		FUZZ_CHECK(eth.ethertype == ETH_TYPE_IPV4);
		check_ipv4(port, frame, len, &eth);
	}
	rte_pktmbuf_free(m);
}

/* --- the input records --- */

/* Notes whether an IPv4 datagram we feed is an unfragmented ICMP message that is truncated or
 * has a bad checksum: the stack forwards such messages as they are, so the output check
 * cannot demand good ones. */
static void note_icmp(const uint8_t *dgram, size_t len)
{
	struct ip4_repr ip;
	struct icmp4_repr ic;

	if (ip4_parse(dgram, len, false, &ip) != WIRE_OK || ip.proto != IP4_PROTO_ICMP ||
	    ip.mf || ip.frag_off != 0)
		return;
	if (icmp4_parse(dgram + ip.hdr_len, ip.total_len - ip.hdr_len, true, &ic) != WIRE_OK)
		icmp_tainted = true;
}

/* Header checksum, a total length past the data, and the checksum of an unfragmented ICMP
 * message. Anything that does not look like IPv4 enough for that stays as it is. */
static void fix_ipv4(uint8_t *dgram, size_t len)
{
	size_t hl, total;

	if (len < IP4_HDR_MIN_LEN)
		return;
	hl = (size_t)(dgram[IP4_OFF_VER_IHL] & 0xf) * 4;
	if (hl < IP4_HDR_MIN_LEN || hl > len)
		return;
	total = wire_get_be16(dgram + IP4_OFF_TOTAL_LEN);
	if (total > len) {
		total = len;
		wire_put_be16(dgram + IP4_OFF_TOTAL_LEN, (uint16_t)total);
	}
	wire_put_be16(dgram + IP4_OFF_CSUM, 0);
	wire_put_be16(dgram + IP4_OFF_CSUM, wire_csum(dgram, hl));
	if (dgram[IP4_OFF_PROTO] == IP4_PROTO_ICMP && total >= hl + ICMP4_HDR_LEN &&
	    (wire_get_be16(dgram + IP4_OFF_FRAG) & (IP4_FLAG_MF | IP4_FRAG_OFF_MASK)) == 0) {
		uint8_t *icmp = dgram + hl;

		wire_put_be16(icmp + ICMP4_OFF_CSUM, 0);
		wire_put_be16(icmp + ICMP4_OFF_CSUM, wire_csum(icmp, total - hl));
	}
}

/* The payload length from the data, and the checksum of an ICMPv6 message or a TCP or UDP
 * segment right after the fixed header, so that mutations reach the layers behind them. */
static void fix_ipv6(uint8_t *dgram, size_t len)
{
	if (len < IP6_HDR_LEN || len - IP6_HDR_LEN > UINT16_MAX)
		return;
	uint16_t plen = (uint16_t)(len - IP6_HDR_LEN);
	wire_put_be16(dgram + IP6_OFF_PAYLOAD_LEN, plen);
	uint8_t nh = dgram[IP6_OFF_NEXT_HEADER];
	size_t off = nh == IP6_NH_ICMPV6 ? ICMP6_OFF_CSUM
		     : nh == IP6_NH_TCP  ? TCP_OFF_CSUM
		     : nh == IP6_NH_UDP  ? UDP_OFF_CSUM : SIZE_MAX;
	if (off == SIZE_MAX || plen < off + 2)
		return;
	uint8_t *msg = dgram + IP6_HDR_LEN;
	wire_put_be16(msg + off, 0);
	uint32_t sum = wire_csum_pseudo6(dgram + IP6_OFF_SRC, dgram + IP6_OFF_DST, nh, plen);
	wire_put_be16(msg + off, wire_csum_finish(wire_csum_add(sum, msg, plen)));
}

static void op_frame(unsigned kind, unsigned flags, const uint8_t *data, size_t len)
{
	static const struct eth_addr all_nodes = {{0x33, 0x33, 0, 0, 0, 1}};
	uint16_t port = (flags & F_PORT1) ? 1 : 0;
	bool ip6 = kind == OP_IP6 || kind == OP_IP6_CHAIN;
	struct eth_repr eth = {
		.dst = !(flags & F_BCAST) ? mac_port[port]
		       : ip6              ? all_nodes : eth_addr_broadcast,
		.src = (flags & F_OTHER) ? mac_other : mac_peer[port],
		.ethertype = kind == OP_ARP ? ETH_TYPE_ARP
			     : ip6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4,
	};

	if (kind == OP_RAW) {
		uint64_t ol = (flags & F_NOFIX)   ? RTE_MBUF_F_RX_IP_CKSUM_GOOD
			      : (flags & F_OTHER) ? RTE_MBUF_F_RX_IP_CKSUM_BAD : 0;

		if (len >= ETH_HDR_LEN + IP4_HDR_MIN_LEN &&
		    wire_get_be16(data + ETH_OFF_TYPE) == ETH_TYPE_IPV4)
			note_icmp(data + ETH_HDR_LEN, len - ETH_HDR_LEN);
		if (flags & F_NOFIX)
			ip_tainted = true;
		feed_frame(port, data, len, 0, (flags & F_BCAST) ? 64 : 0, ol);
		return;
	}
	eth_build(frame_buf, ETH_HDR_LEN, &eth);
	memcpy(frame_buf + ETH_HDR_LEN, data, len);
	if (kind == OP_IP) {
		if (!(flags & F_NOFIX))
			fix_ipv4(frame_buf + ETH_HDR_LEN, len);
		note_icmp(frame_buf + ETH_HDR_LEN, len);
	}
	if (ip6 && !(flags & F_NOFIX))
		fix_ipv6(frame_buf + ETH_HDR_LEN, len);
	bool chain = kind == OP_IP6_CHAIN;
	feed_frame(port, frame_buf, ETH_HDR_LEN + len, chain ? CHAIN_FIRST_SEG : 0,
		   chain ? CHAIN_SEG : 0, 0);
}

static void advance(uint64_t ms)
{
	uint64_t t = stk->now_ms, end = t + ms;

	while (t < end) {
		t = t + TICK_MS < end ? t + TICK_MS : end;
		stack_tick(stk, t);
		peer_drain();
	}
}

static void op_neigh(unsigned which, uint16_t arg)
{
	struct neigh_params p;
	uint16_t port = (arg >> 8) & 1;
	uint32_t ip = IP4(10, 0, port, arg & 0xff);
	struct eth_addr mac = {{0x02, 0xdd, 0, 0, (uint8_t)port, (uint8_t)arg}};

	neigh_get_params(stk->neigh, &p);
	switch (which) {
	case 0: p.reachable_ms = arg; break;
	case 1: p.delay_ms = arg; break;
	case 2: p.retrans_ms = arg; break;
	case 3: p.mcast_probes = arg; break;
	case 4: p.ucast_probes = arg; break;
	case 5: p.failed_hold_ms = arg; break;
	case 6: p.gc_stale_ms = arg; break;
	case 7: (void)neigh_add_static(stk->neigh, port, INET_ADDR_V4(ip), &mac); return;
	case 8: (void)neigh_delete(stk->neigh, port, INET_ADDR_V4(ip)); return;
	case 9: neigh_flush(stk->neigh, port); return;
	default: return;
	}
	(void)neigh_set_params(stk->neigh, &p);
}

static void op_addr(unsigned flags, uint16_t arg)
{
	uint16_t port = (flags & F_PORT1) ? 1 : 0;
	uint32_t addr = IP4(10, 0, port, arg & 0xff);
	uint8_t plen = (uint8_t)(16 + ((arg >> 8) & 15));

	if (flags & F_BCAST)
		(void)stack_addr_del(stk, port, addr, plen);
	else
		(void)stack_addr_add(stk, port, addr, plen, (flags & F_OTHER) != 0);
}

static void run_record(uint8_t op, uint16_t arg, const uint8_t *data, size_t len)
{
	unsigned kind = op & 0x0f, flags = op >> 4;
	uint16_t port = (flags & F_PORT1) ? 1 : 0;

	if (kind > OP_IP6_CHAIN)
		kind = OP_IP;
	switch (kind) {
	case OP_IP:
	case OP_IP6:
	case OP_IP6_CHAIN:
	case OP_ARP:
	case OP_RAW:
		op_frame(kind, flags, data, len);
		break;
	case OP_CLOCK:
		advance(arg);
		break;
	case OP_PING:
		(void)stack_ping_send(stk, ping_dst[flags], 0x5053, ping_seq++, arg);
		break;
	case OP_NEIGH:
		op_neigh(flags, arg);
		break;
	case OP_PEER:
		peer_mode = arg;
		break;
	case OP_MTU:
		(void)netcfg_iface_set_mtu(&stk->cfg, port, arg);
		break;
	case OP_LINK:
		(void)stack_iface_set_up(stk, port, (flags & F_BCAST) != 0);
		break;
	case OP_FWD:
		stk->cfg.forwarding = stk->cfg.forwarding6 = (flags & F_PORT1) != 0;
		break;
	case OP_ADDR:
		op_addr(flags, arg);
		break;
	}
	peer_drain();
}

/* --- the topology and its restoration after every input --- */

static bool is_base_addr(const struct netcfg_addr *a)
{
	return a->plen == 24 && ((a->port == 0 && a->addr == ADDR0) ||
				 (a->port == 1 && a->addr == ADDR1));
}

static void restore_config(void)
{
	for (uint16_t port = 0; port < NPORTS; port++) {
		FUZZ_CHECK(netcfg_iface_set_mtu(&stk->cfg, port, PORT_MTU) == 0);
		FUZZ_CHECK(stack_iface_set_up(stk, port, true) == 0);
	}
	stk->cfg.forwarding = true;
	stk->cfg.forwarding6 = true;
	FUZZ_CHECK(neigh_set_params(stk->neigh, &neigh_defaults) == 0);
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		struct netcfg_addr a = stk->cfg.addrs[i];

		if (a.used && !is_base_addr(&a))
			FUZZ_CHECK(stack_addr_del(stk, a.port, a.addr, a.plen) == 0);
	}
	int rc = stack_addr_add(stk, 0, ADDR0, 24, false);
	FUZZ_CHECK(rc == 0 || rc == -EEXIST);
	rc = stack_addr_add(stk, 1, ADDR1, 24, false);
	FUZZ_CHECK(rc == 0 || rc == -EEXIST);
}

struct neigh_list_arg {
	unsigned n;
	struct neigh_info e[NEIGH_ENTRIES];
};

static int collect_neigh(const struct neigh_info *info, void *arg)
{
	struct neigh_list_arg *l = arg;

	FUZZ_CHECK(l->n < RTE_DIM(l->e));
	l->e[l->n++] = *info;
	return 0;
}

/* Only the baseline's static entry stays. */
static void restore_neigh(void)
{
	static struct neigh_list_arg l;

	neigh_flush(stk->neigh, NEIGH_ALL_PORTS);
	l.n = 0;
	neigh_walk(stk->neigh, collect_neigh, &l);
	for (unsigned i = 0; i < l.n; i++)
		FUZZ_CHECK(neigh_delete(stk->neigh, l.e[i].port, &l.e[i].addr) == 0);
	FUZZ_CHECK(neigh_add_static(stk->neigh, 0, INET_ADDR_V4(HOST_A), &mac_peer[0]) == 0);
}

static int count_static(const struct neigh_info *info, void *arg)
{
	*(unsigned *)arg += info->state == NEIGH_STATIC;
	return 0;
}

/* Datagrams in reassembly, both families; with bytes, what they hold. */
static uint32_t reass_pending(uint32_t *bytes)
{
	struct reass_stats r4, r6;

	reass_stats_get(stk->reass, &r4);
	reass_stats_get(stk->ip6->reass, &r6);
	*bytes = r4.bytes + r6.bytes;
	return r4.datagrams + r6.datagrams;
}

/* No dynamic neighbour entry and no datagram in reassembly: no timer is left to run. */
static bool timers_idle(unsigned n_static)
{
	uint32_t bytes;

	return neigh_count(stk->neigh) == n_static && reass_pending(&bytes) == 0;
}

/* Ten minutes in 100 ms ticks, as a worker would, but jumping to the end once nothing is left
 * that a timer could change (most of the time of an input goes here otherwise). */
static void advance_settle(void)
{
	uint64_t end = stk->now_ms + SETTLE_MS;
	unsigned n_static = 0;

	neigh_walk(stk->neigh, count_static, &n_static);
	while (stk->now_ms < end) {
		uint64_t t = timers_idle(n_static) ? end : RTE_MIN(stk->now_ms + TICK_MS, end);

		stack_tick(stk, t);
		peer_drain();
	}
}

static void settle(void)
{
	uint32_t bytes;

	peer_mode = 0;
	peer_drain();
	restore_config();
	advance_settle();
	restore_neigh();
	FUZZ_CHECK(neigh_count(stk->neigh) == 1);
	FUZZ_CHECK(reass_pending(&bytes) == 0 && bytes == 0);
	/* Same start for the next input: */
	stk->ping = (struct stack_ping){0};
	stk->next_ip_id = 0;

	if (verbose) {
		for (unsigned i = 0; i < STACK_EV_COUNT; i++)
			if (stk->events[i] != events_before[i])
				fprintf(stderr, "  %-24s %llu\n", stack_event_info[i].name,
					(unsigned long long)(stk->events[i] - events_before[i]));
		for (unsigned i = 0; i < STACK_DROP_COUNT; i++)
			if (stk->drops[i] != drops_before[i])
				fprintf(stderr, "  drop %-19s %llu\n", stack_drop_info[i].name,
					(unsigned long long)(stk->drops[i] - drops_before[i]));
	}

	unsigned in_use = rte_mempool_in_use_count(pool);
	if (in_use != pool_baseline) {
		fprintf(stderr, "mbuf leak: %u in use after the input, %u before\n", in_use,
			pool_baseline);
		FUZZ_CHECK(in_use == pool_baseline);
	}
}

/* A dual-stack UDP echo socket on port 7 ([::]:7, hearing IPv4 too): datagrams of both
 * families reach a socket and its answers leave by IPv4 or IPv6, fragmented when large. Like
 * svc_echo, it never answers the ports that answer every datagram. */
static struct udp_sock *echo_sock;

static void echo_notify(struct sock *sk, uint32_t events)
{
	static uint8_t b[UDP6_MAX_PAYLOAD];
	struct udp_rx_hdr h;
	ssize_t n;

	(void)sk;
	(void)events;
	while ((n = udp_recvmsg(echo_sock, b, sizeof(b), &h, NULL)) != -EAGAIN) {
		if (n < 0 || h.sport == 0 || h.sport == 7 || h.sport == 19)
			continue;
		struct udp_send_opts o = {.scoped = true, .port = (uint16_t)(h.ifindex - 1u)};
		udp_sendmsg_inet(echo_sock, b, (size_t)n, &h.src, h.sport, &o);
	}
}

static void route_or_die(uint32_t prefix, uint8_t plen, enum route_type type, uint32_t gw,
			 uint16_t mtu)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = type,
			  .gateway = inet_addr_v4(gw),
			  .port = NETCFG_PORT_ANY, .mtu = mtu};

	FUZZ_CHECK(netcfg_route_add(&stk->cfg, &r) == 0);
}

static void fuzz_cleanup(void)
{
	stack_destroy(stk);
	stk = NULL;
	rte_mempool_free(pool);
	pool = NULL;
	fuzz_eal_cleanup();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct stack_params p;

	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_STACK_VERBOSE") != NULL;
	fuzz_eal_init("fuzz_stack");
	atexit(fuzz_cleanup);
	pool = rte_pktmbuf_pool_create("fuzz_pool", POOL_MBUFS, 0, 0, POOL_DATA_ROOM,
				       SOCKET_ID_ANY);
	FUZZ_CHECK(pool != NULL);

	inet_params_default(&p);
	p.pool = pool;
	p.ops.xmit = fuzz_xmit;
	p.ops.to_kernel = fuzz_to_kernel;
	p.neigh.max_entries = NEIGH_ENTRIES;
	p.reass.max_datagrams = 4;
	p.reass.max_frags = 8;
	p.reass.max_bytes = 32u << 10;
	p.icmp_burst = 20;
	stk = stack_create(&p);
	FUZZ_CHECK(stk != NULL);
	stk->kernel_port[1] = true;     /* port 0 answers as before (RST, unreachable) */
	neigh_defaults = p.neigh;
	FUZZ_CHECK(netcfg_iface_add(&stk->cfg, 0, "port0", &mac_port[0], PORT_MTU) == 0);
	FUZZ_CHECK(netcfg_iface_add(&stk->cfg, 1, "port1", &mac_port[1], PORT_MTU) == 0);
	FUZZ_CHECK(stack_addr_add(stk, 0, ADDR0, 24, false) == 0);
	FUZZ_CHECK(stack_addr_add(stk, 1, ADDR1, 24, false) == 0);
	/* 2001:db8::2/64 on port 0, 2001:db8:1::2/64 on port 1, beside their link-local ones. */
	struct ip6_addr a6 = {.b = {0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
	FUZZ_CHECK(netcfg6_addr_add(&stk->cfg, 0, &a6, 64, 0) == 0);
	a6.b[5] = 1;
	FUZZ_CHECK(netcfg6_addr_add(&stk->cfg, 1, &a6, 64, 0) == 0);
	route_or_die(0, 0, ROUTE_GATEWAY, HOST_A, 0);
	route_or_die(IP4(172, 16, 0, 0), 12, ROUTE_GATEWAY, HOST_B, 0);
	route_or_die(IP4(203, 0, 113, 0), 24, ROUTE_GATEWAY, HOST_B, 576);
	route_or_die(IP4(192, 0, 2, 0), 24, ROUTE_BLACKHOLE, 0, 0);
	route_or_die(IP4(198, 51, 100, 0), 24, ROUTE_UNREACHABLE, 0, 0);
	/* IPv6 routes for forwarding: 2001:db8:1000::/36 via B6 (2001:db8:1::1), its /48
	 * 2001:db8:1280::/48 with the minimum MTU, a blackhole and an unreachable one. */
	static const struct {
		uint8_t net2, net3, plen;
		enum route_type type;
		uint16_t mtu;
	} routes6[] = {{0x10, 0x00, 36, ROUTE_GATEWAY, 0}, {0x12, 0x80, 48, ROUTE_GATEWAY, 1280},
		       {0x0b, 0xad, 48, ROUTE_BLACKHOLE, 0}, {0x0d, 0xea, 48, ROUTE_UNREACHABLE, 0}};
	struct ip6_addr b6 = {.b = {0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 1}};
	for (size_t i = 0; i < sizeof(routes6) / sizeof(routes6[0]); i++) {
		struct ip6_addr net = {.b = {0x20, 0x01, 0x0d, 0xb8, routes6[i].net2, routes6[i].net3}};
		struct route r = {.prefix = inet_addr_v6(&net), .plen = routes6[i].plen,
				  .type = routes6[i].type, .port = NETCFG_PORT_ANY,
				  .mtu = routes6[i].mtu};
		if (r.type == ROUTE_GATEWAY)
			r.gateway = inet_addr_v6(&b6);
		FUZZ_CHECK(netcfg_route_add(&stk->cfg, &r) == 0);
	}
	stk->cfg.forwarding6 = true;
	FUZZ_CHECK(neigh_add_static(stk->neigh, 0, INET_ADDR_V4(HOST_A), &mac_peer[0]) == 0);
	struct sock_owner echo_owner = {.notify = echo_notify};
	FUZZ_CHECK(udp_bind_inet(stk, &(struct inet_addr){{0}}, 7, 0, 0, &echo_owner,
				 &echo_sock) == 0);
	pool_baseline = rte_mempool_in_use_count(pool);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0;

	memcpy(events_before, stk->events, sizeof(events_before));
	memcpy(drops_before, stk->drops, sizeof(drops_before));
	peer_mode = PEER_DEFAULT;
	icmp_tainted = false;
	ip_tainted = false;
	ping_seq = 0;
	while (size - pos >= 3) {
		uint8_t op = data[pos];
		uint16_t arg = wire_get_be16(data + pos + 1);
		unsigned kind = op & 0x0f;
		size_t len = 0;

		pos += 3;
		if (kind == OP_IP || kind == OP_ARP || kind == OP_RAW || kind > OP_ADDR)
			len = arg < size - pos ? arg : size - pos;
		if (verbose)
			fprintf(stderr, "record kind %u flags %#x arg %u, %zu bytes\n", kind,
				op >> 4, arg, len);
		run_record(op, arg, data + pos, len);
		pos += len;
	}
	settle();
	return 0;
}
