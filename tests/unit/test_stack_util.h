/* Shared fixture of the stack tests (test_stack_*.c): one stack instance on a virtual clock
 * whose xmit callback copies every frame into a capture array, builders for the frames fed
 * through stack_input, and parsers/expectations for the captured ones (through the wire
 * parsers, so every checksum and length is verified). Single-threaded, no NIC.
 *
 * The standard topology (ts_setup):
 *   port 0  02:00:00:00:00:00  10.0.0.2/24   neighbour A 10.0.0.1 02:aa:00:00:00:01
 *   port 1  02:00:00:00:00:01  10.0.1.2/24   neighbour B 10.0.1.1 02:bb:00:00:00:01
 * A and B are static neighbour entries (ts_setup_bare leaves them out), MTU 1500.
 * ts_teardown destroys the stack and fails the test when an mbuf leaked. */
#ifndef DPS_TEST_STACK_UTIL_H
#define DPS_TEST_STACK_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "stack/stack.h"
#include "test_eal.h"
#include "../../src/wire/arp.h"
#include "../../src/wire/bytes.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/eth.h"
#include "../../src/wire/icmp4.h"
#include "../../src/wire/ipv4.h"
#include "../../src/wire/ipv6.h"

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

#define TS_ADDR0 IP4(10, 0, 0, 2)
#define TS_ADDR1 IP4(10, 0, 1, 2)
#define TS_BCAST0 IP4(10, 0, 0, 255)
#define TS_BCAST1 IP4(10, 0, 1, 255)
#define TS_HOST_A IP4(10, 0, 0, 1)
#define TS_HOST_B IP4(10, 0, 1, 1)
#define TS_MTU 1500
#define TS_ICMP_ERR_QUOTE_MAX (576 - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN) /* RFC 1812 §4.3.2.3 */

extern const struct eth_addr ts_mac_port[2];
extern const struct eth_addr ts_mac_a;
extern const struct eth_addr ts_mac_b;
extern const struct eth_addr ts_mac_other;   /* a third station */
extern const struct eth_addr ts_mac_zero;

/* The stack under test. */
extern struct stack *ts_s;

/* --- capture --- */
#define TS_MAX_FRAMES 512
#define TS_FRAME_MAX (NETCFG_MAX_MTU + 64)

struct ts_frame {
	uint16_t port;
	uint16_t nb_segs;
	uint64_t ol_flags;       /* the TX offloads the frame asks of the port */
	uint16_t tso_segsz;
	uint32_t len;
	uint8_t data[TS_FRAME_MAX];
};

extern struct ts_frame ts_frames[TS_MAX_FRAMES];
extern unsigned ts_nframes;
void ts_clear(void);

/* --- fixtures --- */
/* Standard topology with static neighbours A and B. */
int ts_setup(void **state);
/* Standard topology, empty neighbour table. */
int ts_setup_bare(void **state);
int ts_teardown(void **state);
/* stack_params_default with the test pool and the capture callback. */
void ts_params(struct stack_params *p);
/* Replaces the stack of the running test by one made with p (standard topology). */
void ts_restart(const struct stack_params *p, bool neighbours);
/* Advances the virtual clock by ms, ticking every 100 ms as a worker does. */
void ts_advance(uint64_t ms);

/* --- building --- */
uint8_t ts_pattern(size_t i);

struct ts_ip {
	uint32_t src;
	uint32_t dst;
	uint8_t tos;
	uint16_t id;
	bool df;
	bool mf;
	uint16_t frag_off;       /* bytes */
	uint8_t ttl;
	uint8_t proto;
	const uint8_t *opts;     /* opt_len bytes, a multiple of 4 */
	size_t opt_len;
	const uint8_t *payload;
	size_t len;
};

/* TTL 64, id 0x1234, no options, no payload. */
struct ts_ip ts_ip_of(uint32_t src, uint32_t dst, uint8_t proto);
/* Header (checksum computed) and payload into buf; returns the datagram length. */
size_t ts_ip_build(uint8_t *buf, size_t cap, const struct ts_ip *ip);
/* Recomputes the header checksum of the datagram at buf. */
void ts_ip_fix_csum(uint8_t *dgram);

/* An ICMP message: the 8-byte header then payload, checksum computed. */
size_t ts_icmp_build(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
		     const uint8_t *payload, size_t len);
/* An echo request/reply with len bytes of ts_pattern. */
size_t ts_echo_build(uint8_t *buf, size_t cap, uint8_t type, uint16_t id, uint16_t seq,
		     size_t len);

/* A complete echo request datagram from src to dst: returns its length. */
size_t ts_echo_dgram(uint8_t *buf, size_t cap, uint32_t src, uint32_t dst, uint16_t id,
		     uint16_t seq, size_t len);

size_t ts_eth_build(uint8_t *buf, const struct eth_addr *dst, const struct eth_addr *src,
		    uint16_t type, const uint8_t *payload, size_t len);

/* An mbuf holding buf, in segments of seg bytes (0: one segment). */
struct rte_mbuf *ts_mbuf(const uint8_t *buf, size_t len, size_t seg);

/* Feeds a raw Ethernet frame. */
void ts_input_frame(uint16_t port, const uint8_t *frame, size_t len);
/* Feeds an IPv4 datagram in a frame from the port's neighbour (A on 0, B on 1) to the port's
 * MAC. */
void ts_input_ip(uint16_t port, const uint8_t *dgram, size_t len);
/* Builds ip and feeds it with ts_input_ip. */
void ts_send(uint16_t port, const struct ts_ip *ip);
/* Feeds an ARP packet (padded to 60 bytes) with Ethernet source arp->sha. */
void ts_input_arp(uint16_t port, const struct eth_addr *eth_dst, const struct arp_repr *arp);

/* Splits datagram dgram into fragments of frag_payload bytes (a multiple of 8) of payload:
 * the first keeps the full header, later ones a 20-byte header (options dropped). */
struct ts_blob {
	size_t len;
	uint8_t data[TS_FRAME_MAX];
};
unsigned ts_fragment(const uint8_t *dgram, size_t len, size_t frag_payload,
		     struct ts_blob *out, unsigned max);

/* --- parsing captured frames --- */
struct ts_pkt {
	const struct ts_frame *f;
	struct eth_repr eth;
	bool is_arp;
	struct arp_repr arp;
	bool is_ip;
	struct ip4_repr ip;
	const uint8_t *l3;       /* the IPv4 header */
	const uint8_t *l4;       /* the IPv4 payload */
	size_t l4_len;
	bool is_icmp;            /* an unfragmented ICMP message */
	struct icmp4_repr icmp;
	const uint8_t *icmp_data; /* after the 8-byte header */
};

/* Parses frame i, asserting: Ethernet source is the port's MAC, frame >= 60 bytes and exactly
 * as long as its content (padding zeros), ARP parses, IPv4 parses with a correct checksum,
 * an unfragmented ICMP message has a correct checksum. */
void ts_parse(unsigned i, struct ts_pkt *p);
void ts_expect_arp(unsigned i, uint16_t port, uint16_t op, const struct eth_addr *eth_dst,
		   uint32_t spa, const struct eth_addr *tha, uint32_t tpa);
/* Frame i is an IPv4 packet out of port to eth_dst from src to dst with proto. */
void ts_expect_ip(unsigned i, uint16_t port, const struct eth_addr *eth_dst, uint32_t src,
		  uint32_t dst, uint8_t proto, struct ts_pkt *out);
/* Frame i is an IPv6 packet out of port to eth_dst that parses (header into *ip): returns
 * where its payload starts. */
const uint8_t *ts_expect_ip6(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			     struct ip6_repr *ip);
/* Frame i is an ICMP error (TOS 0xc0, TTL 64) quoting orig[0..min(orig_len, 548)). */
void ts_expect_icmp_error(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			  uint32_t src, uint32_t dst, uint8_t type, uint8_t code, uint32_t rest,
			  const uint8_t *orig, size_t orig_len);
/* Frames [first, first + n) are the fragments, in order, of one datagram of at most mtu bytes
 * each: copies the reassembled payload to out and returns its length; *first_hdr gets the
 * first fragment's header. */
size_t ts_reassemble(unsigned first, unsigned n, uint16_t mtu, uint8_t *out, size_t cap,
		     struct ip4_repr *first_hdr);

/* --- counters --- */
/* drops[d] == n and every other drop counter is 0. */
void ts_expect_drop(enum stack_drop d, uint64_t n);
void ts_expect_no_drops(void);

void ts_static_neigh(uint16_t port, uint32_t ip, const struct eth_addr *mac);

#endif
