/* Capture filters and the workers' copy path (src/capture): tcpdump expressions compiled by
 * libpcap and run on mbufs agree with libpcap's answer on a flat buffer, also on chained
 * mbufs;
 * bad expressions are refused with libpcap's reason; a burst copies what matches and counts
 * what the ring has no room for, leaving the original frames alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "test_eal.h"
#include "capture/capture.h"
#include "capture/capture_filter.h"

#define PROTO_ICMP 1
#define PROTO_TCP 6
#define PROTO_UDP 17

/* An Ethernet + IPv4 frame from 10.0.0.1 to 10.0.0.2 with 8 bytes of ports (or ICMP type
 * and code) and some payload. Checksums do not matter to filters. */
static size_t frame_build(uint8_t *f, uint8_t proto, uint16_t sport, uint16_t dport)
{
	static const uint8_t eth[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00};
	memset(f, 0, 128);
	memcpy(f, eth, sizeof(eth));
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[3] = 20 + 8 + 40;      /* total length */
	ip[8] = 64;
	ip[9] = proto;
	ip[12] = 10, ip[15] = 1;  /* 10.0.0.1 */
	ip[16] = 10, ip[19] = 2;  /* 10.0.0.2 */
	uint8_t *l4 = ip + 20;
	l4[0] = (uint8_t)(sport >> 8), l4[1] = (uint8_t)sport;
	l4[2] = (uint8_t)(dport >> 8), l4[3] = (uint8_t)dport;
	if (proto == PROTO_TCP)
		l4[12] = 0x50, l4[13] = 0x02; /* data offset 5, SYN */
	return 14 + 20 + 8 + 40;
}

/* The frame in one mbuf, or split after split bytes into two. */
static struct rte_mbuf *mbuf_of(const uint8_t *f, size_t len, size_t split)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	size_t first = split != 0 && split < len ? split : len;
	memcpy(rte_pktmbuf_append(m, (uint16_t)first), f, first);
	if (first < len) {
		struct rte_mbuf *t = rte_pktmbuf_alloc(test_pool());
		assert_non_null(t);
		memcpy(rte_pktmbuf_append(t, (uint16_t)(len - first)), f + first, len - first);
		assert_int_equal(rte_pktmbuf_chain(m, t), 0);
	}
	return m;
}

static bool pcap_matches(const char *expr, const uint8_t *f, size_t len)
{
	pcap_t *p = pcap_open_dead(DLT_EN10MB, 65535);
	struct bpf_program prog;
	assert_int_equal(pcap_compile(p, &prog, expr, 1, PCAP_NETMASK_UNKNOWN), 0);
	struct pcap_pkthdr h = {.caplen = (bpf_u_int32)len, .len = (bpf_u_int32)len};
	bool r = pcap_offline_filter(&prog, &h, f) != 0;
	pcap_freecode(&prog);
	pcap_close(p);
	return r;
}

static void test_filter_agrees_with_libpcap_whole_and_chained(void **state)
{
	(void)state;
	static const char *const exprs[] = {
		"icmp", "tcp", "udp", "tcp port 80", "udp dst port 53", "host 10.0.0.1",
		"src host 10.0.0.2", "tcp[tcpflags] & tcp-syn != 0", "ip[9] == 17",
		"ether src 02:00:00:00:00:01", "arp", "not icmp and (tcp or udp)", "len > 100",
		"portrange 1000-2000", ""};
	static const struct { uint8_t proto; uint16_t sport, dport; } frames[] = {
		{PROTO_ICMP, 0x0800, 0}, {PROTO_TCP, 40000, 80}, {PROTO_TCP, 80, 1500},
		{PROTO_UDP, 5353, 53}, {PROTO_UDP, 53, 40000}};
	unsigned in = test_pool_in_use();
	for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
		char err[256];
		struct bpf_program prog;
		assert_int_equal(capture_filter_compile(exprs[e], 65535, &prog, err, sizeof(err)),
				 0);
		for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
			uint8_t f[128];
			size_t len = frame_build(f, frames[i].proto, frames[i].sport, frames[i].dport);
			bool want = pcap_matches(exprs[e], f, len);
			/* Split inside the IP header and inside the ports: loads that cross
			 * segments. */
			for (size_t split = 0; split <= 36; split += 18) {
				struct rte_mbuf *m = mbuf_of(f, len, split);
				if (capture_filter_match(&prog, m) != want)
					fail_msg("'%s' on frame %zu split at %zu: want %d", exprs[e],
						 i, split, want);
				rte_pktmbuf_free(m);
			}
		}
		pcap_freecode(&prog);
	}
	assert_int_equal(test_pool_in_use(), in);
}

static void test_filter_bad_expression_says_why(void **state)
{
	(void)state;
	char err[256];
	struct bpf_program prog;
	assert_int_equal(capture_filter_compile("tcp prot 80", 65535, &prog, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad filter 'tcp prot 80': "));
	assert_non_null(strstr(err, "syntax error"));
	assert_int_equal(capture_filter_compile("ip and", 65535, &prog, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bad filter 'ip and'"));
}

static void test_burst_copies_matches_and_counts_what_the_ring_refuses(void **state)
{
	(void)state;
	char err[256];
	struct capture *c = capture_create(0, "port0", 0, 64, "icmp", 0, 2, err, sizeof(err));
	assert_non_null(c);
	unsigned in = test_pool_in_use();
	uint8_t icmp[128], tcp[128];
	size_t icmp_len = frame_build(icmp, PROTO_ICMP, 0x0800, 0);
	size_t tcp_len = frame_build(tcp, PROTO_TCP, 1, 2);
	struct rte_mbuf *burst[32];
	/* 16 ICMP among 32 frames, 200 bursts: 3200 copies, the ring holds 4095 (a
	 * power-of-two ring keeps one slot free), the rest are capture drops. */
	for (unsigned b = 0; b < 200; b++) {
		for (unsigned i = 0; i < 32; i++)
			burst[i] = i % 2 == 0 ? mbuf_of(icmp, icmp_len, 0) : mbuf_of(tcp, tcp_len, 0);
		capture_burst(c, b % 2, 0, burst, 32, RTE_PCAPNG_DIRECTION_IN);
		for (unsigned i = 0; i < 32; i++) {
			assert_int_equal(rte_mbuf_refcnt_read(burst[i]), 1); /* untouched */
			rte_pktmbuf_free(burst[i]);
		}
	}
	assert_int_equal(capture_copied(c) + capture_dropped(c), 3200);
	assert_int_equal(capture_dropped(c), 0);
	for (unsigned b = 0; b < 100; b++) {
		for (unsigned i = 0; i < 32; i++)
			burst[i] = mbuf_of(icmp, icmp_len, 0);
		capture_burst(c, 0, 0, burst, 32, RTE_PCAPNG_DIRECTION_OUT);
		for (unsigned i = 0; i < 32; i++)
			rte_pktmbuf_free(burst[i]);
	}
	assert_int_equal(capture_copied(c), 4095);
	assert_int_equal(capture_dropped(c), 3200 + 3200 - 4095);
	/* The copies hold snaplen bytes of the frame and say how long it was. */
	struct rte_mbuf *copy = NULL;
	assert_int_equal(rte_ring_sc_dequeue(c->ring, (void **)&copy), 0);
	assert_true(rte_pktmbuf_pkt_len(copy) < 64 + 64);
	rte_pktmbuf_free(copy);
	assert_int_equal(test_pool_in_use(), in);
	capture_destroy(c);
}

/* A jumbo frame's copy chains buffers of the capture's pool and keeps every byte. */
static void test_jumbo_frame_copied_whole(void **state)
{
	(void)state;
	char err[256];
	struct capture *c = capture_create(0, "port0", 0, CAPTURE_SNAPLEN_MAX, NULL, 0, 1, err,
					   sizeof(err));
	assert_non_null(c);
	static uint8_t jumbo[9014];
	size_t len = frame_build(jumbo, PROTO_UDP, 1, 2);
	for (size_t i = len; i < sizeof(jumbo); i++)
		jumbo[i] = (uint8_t)i;
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	for (size_t at = 0; at < sizeof(jumbo); at += 2000) {
		size_t n = sizeof(jumbo) - at < 2000 ? sizeof(jumbo) - at : 2000;
		struct rte_mbuf *seg = at == 0 ? m : rte_pktmbuf_alloc(test_pool());
		assert_non_null(seg);
		memcpy(rte_pktmbuf_append(seg, (uint16_t)n), jumbo + at, n);
		if (seg != m)
			assert_int_equal(rte_pktmbuf_chain(m, seg), 0);
	}
	capture_burst(c, 0, 0, &m, 1, RTE_PCAPNG_DIRECTION_IN);
	rte_pktmbuf_free(m);
	assert_int_equal(capture_copied(c), 1);
	assert_int_equal(capture_dropped(c), 0);
	struct rte_mbuf *copy = NULL;
	assert_int_equal(rte_ring_sc_dequeue(c->ring, (void **)&copy), 0);
	assert_true(copy->nb_segs > 1);
	assert_true(rte_pktmbuf_pkt_len(copy) > sizeof(jumbo));
	rte_pktmbuf_free(copy);
	capture_destroy(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filter_agrees_with_libpcap_whole_and_chained),
		cmocka_unit_test(test_filter_bad_expression_says_why),
		cmocka_unit_test(test_burst_copies_matches_and_counts_what_the_ring_refuses),
		cmocka_unit_test(test_jumbo_frame_copied_whole),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
