/* Transmit offloads (src/stack/tx_offload.c) on real mbufs: a partial checksum finished in
 * software equals the whole software checksum, a capable port is left the sums, a TSO
 * segment never reaches a port without TSO; and software GRO (src/dp/gro.c) on bursts fed to
 * a stack: in-order ACK segments of one flow for our address merged (PSH ends the merge),
 * everything else passed on untouched and in order, in both families (IPv6: no extension
 * headers, and Traffic Class, Flow Label and Hop Limit alike); and IPv6 input of chains
 * (src/ip6/ip6_input.c): headers split across segments read whole, a truncated chain a
 * counted drop. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "dp/gro.h"
#include "ip6/ip6.h"
#include "../../src/wire/tcp.h"

#define HDRS (ETH_HDR_LEN + IP4_HDR_MIN_LEN + TCP_HDR_MIN_LEN)
#define SEG 1000
#define ISN 5000u

static uint8_t pat[16 * SEG];

/* The stack's 2001:db8::2/64 on port 0 (offload_setup) and the peer 2001:db8::1. */
static const struct inet_addr local6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
static const struct inet_addr peer6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};

static int offload_setup(void **state)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = ts_pattern(i);
	int rc = ts_setup(state);
	struct ip6_addr a = inet_addr_to_v6(&local6);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a, 64, 0), 0);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &peer6, &ts_mac_a), 0);
	return rc;
}

struct seg_spec {
	uint32_t src, dst;    /* IPv4; or, with v6, peer6 to local6 */
	bool v6;
	uint8_t hop_limit;    /* IPv6: 0 for 64 */
	bool hop_by_hop;      /* IPv6: an empty Hop-by-Hop Options header in front of TCP */
	uint16_t sport;
	uint32_t seq;
	uint8_t flags;
	uint32_t off, len;    /* payload: pat[off, off + len) */
};

/* The IPv6 datagram of spec g carrying tcp[0..len) into dgram; returns its length. */
static size_t seg_dgram6(const struct seg_spec *g, const uint8_t *tcp, size_t len,
			 uint8_t *dgram)
{
	size_t ext = g->hop_by_hop ? 8 : 0;
	struct ip6_repr ip = {.payload_len = (uint16_t)(ext + len),
			      .next_header = g->hop_by_hop ? IP6_NH_HOPOPTS : IP6_NH_TCP,
			      .hop_limit = g->hop_limit != 0 ? g->hop_limit : 64,
			      .src = inet_addr_to_v6(&peer6), .dst = inet_addr_to_v6(&local6)};
	ip6_build(dgram, IP6_HDR_LEN, &ip);
	/* RFC 8200 §4.3: Next Header, length 0 (8 bytes), a PadN option of 4 bytes. */
	const uint8_t hbh[8] = {IP6_NH_TCP, 0, 1, 4, 0, 0, 0, 0};
	memcpy(dgram + IP6_HDR_LEN, hbh, ext);
	memcpy(dgram + IP6_HDR_LEN + ext, tcp, len);
	return IP6_HDR_LEN + ext + len;
}

/* A frame from A to us (or dst) with the spec's TCP segment, checksums right. */
static struct rte_mbuf *seg_frame(const struct seg_spec *g)
{
	uint8_t tcp[TCP_HDR_MIN_LEN + SEG];
	struct tcp_repr th = {.src_port = g->sport, .dst_port = 80, .seq = g->seq, .ack = 77,
			      .flags = g->flags, .window = 512};
	size_t hl = tcp_build(tcp, sizeof(tcp), &th);
	memcpy(tcp + hl, pat + g->off, g->len);
	uint16_t cs = g->v6 ? wire_csum_finish(wire_csum_add(
				      inet_addr_csum_pseudo(&peer6, &local6, 6, (uint32_t)(hl + g->len)),
				      tcp, hl + g->len))
			    : tcp_checksum(g->src, g->dst, tcp, hl + g->len);
	wire_put_be16(tcp + 16, cs);
	uint8_t dgram[IP6_HDR_LEN + 8 + sizeof(tcp)];
	size_t dl;
	if (g->v6) {
		dl = seg_dgram6(g, tcp, hl + g->len, dgram);
	} else {
		struct ts_ip ip = ts_ip_of(g->src, g->dst, 6);
		ip.df = true;
		ip.payload = tcp;
		ip.len = hl + g->len;
		dl = ts_ip_build(dgram, sizeof(dgram), &ip);
	}
	uint8_t frame[ETH_HDR_LEN + sizeof(dgram)];
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a,
				 g->v6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4, dgram, dl);
	return ts_mbuf(frame, fl, 0);
}

static struct rte_mbuf *data_frame(uint32_t seq_off, uint32_t len, uint8_t flags)
{
	struct seg_spec g = {.src = TS_HOST_A, .dst = TS_ADDR0, .sport = 4000,
			     .seq = ISN + seq_off, .flags = flags, .off = seq_off, .len = len};
	return seg_frame(&g);
}

static void free_all(struct rte_mbuf **m, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
}

static uint32_t seq_of(const struct rte_mbuf *m)
{
	return wire_get_be32(rte_pktmbuf_mtod(m, const uint8_t *) + ETH_HDR_LEN +
			     IP4_HDR_MIN_LEN + 4);
}

/* ---- transmit ---- */

static void test_partial_checksum_finished_in_software_equals_full_checksum(void **state)
{
	(void)state;
	struct rte_mbuf *m = data_frame(0, SEG, TCP_FLAG_ACK);
	uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN + IP4_HDR_MIN_LEN);
	uint16_t want = wire_get_be16(tcp + 16);
	m->l2_len = ETH_HDR_LEN;
	m->l3_len = IP4_HDR_MIN_LEN;
	uint32_t pseudo = wire_csum_pseudo4(TS_HOST_A, TS_ADDR0, 6, TCP_HDR_MIN_LEN + SEG);
	tx_offload_l4_partial(m, tcp + 16, pseudo, RTE_MBUF_F_TX_TCP_CKSUM, TCP_HDR_MIN_LEN, 0);
	assert_int_not_equal(wire_get_be16(tcp + 16), want);
	assert_int_equal(m->l4_len, TCP_HDR_MIN_LEN);
	struct stack_tx_caps none = {0};
	assert_true(tx_offload_apply(&none, m));
	assert_int_equal(wire_get_be16(tcp + 16), want);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK, 0);
	rte_pktmbuf_free(m);
}

static void test_capable_port_is_left_the_checksums(void **state)
{
	(void)state;
	struct rte_mbuf *m = data_frame(0, SEG, TCP_FLAG_ACK);
	uint8_t *ip = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN);
	uint8_t *tcp = ip + IP4_HDR_MIN_LEN;
	m->l2_len = ETH_HDR_LEN;
	m->l3_len = IP4_HDR_MIN_LEN;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	uint32_t pseudo = wire_csum_pseudo4(TS_HOST_A, TS_ADDR0, 6, TCP_HDR_MIN_LEN + SEG);
	tx_offload_l4_partial(m, tcp + 16, pseudo, RTE_MBUF_F_TX_TCP_CKSUM, TCP_HDR_MIN_LEN, 0);
	struct stack_tx_caps all = {.ip4_cksum = true, .tcp_cksum = true, .udp_cksum = true};
	assert_true(tx_offload_apply(&all, m));
	assert_int_equal(wire_get_be16(tcp + 16), (uint16_t)~wire_csum_finish(pseudo));
	assert_int_equal(wire_get_be16(ip + IP4_OFF_CSUM), 0);
	assert_int_equal(m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK,
			 RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM);
	rte_pktmbuf_free(m);
}

static void test_tso_segment_refused_by_a_port_without_tso(void **state)
{
	(void)state;
	struct rte_mbuf *m = data_frame(0, SEG, TCP_FLAG_ACK);
	uint8_t *tcp = rte_pktmbuf_mtod_offset(m, uint8_t *, ETH_HDR_LEN + IP4_HDR_MIN_LEN);
	m->l2_len = ETH_HDR_LEN;
	m->l3_len = IP4_HDR_MIN_LEN;
	tx_offload_l4_partial(m, tcp + 16, wire_csum_pseudo4(TS_HOST_A, TS_ADDR0, 6, 0),
			      RTE_MBUF_F_TX_TCP_CKSUM, TCP_HDR_MIN_LEN, 500);
	struct stack_tx_caps csum_only = {.tcp_cksum = true};
	assert_false(tx_offload_apply(&csum_only, m));
	rte_pktmbuf_free(m);
}

/* ---- GRO ---- */

static void test_gro_merges_in_order_segments_and_psh_ends_the_merge(void **state)
{
	(void)state;
	struct rte_mbuf *b[5] = {
		data_frame(0, SEG, TCP_FLAG_ACK), data_frame(SEG, SEG, TCP_FLAG_ACK),
		data_frame(2 * SEG, SEG, TCP_FLAG_ACK | TCP_FLAG_PSH),
		data_frame(3 * SEG, SEG, TCP_FLAG_ACK), data_frame(4 * SEG, 300, TCP_FLAG_ACK),
	};
	assert_int_equal(gro_burst(ts_s, b, 5), 2);
	assert_int_equal(ts_s->events[STACK_EV_GRO_MERGED], 3);
	/* The first three as one segment with PSH, then the last two. */
	uint8_t got[3 * SEG];
	assert_int_equal(rte_pktmbuf_pkt_len(b[0]), HDRS + 3 * SEG);
	const uint8_t *ip = rte_pktmbuf_mtod_offset(b[0], const uint8_t *, ETH_HDR_LEN);
	assert_int_equal(wire_get_be16(ip + IP4_OFF_TOTAL_LEN), IP4_HDR_MIN_LEN + TCP_HDR_MIN_LEN +
			 3 * SEG);
	assert_int_equal(wire_csum(ip, IP4_HDR_MIN_LEN), 0);
	assert_int_equal(ip[IP4_HDR_MIN_LEN + 13], TCP_FLAG_ACK | TCP_FLAG_PSH);
	assert_memory_equal(rte_pktmbuf_read(b[0], HDRS, 3 * SEG, got), pat, 3 * SEG);
	assert_int_equal(b[0]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(seq_of(b[1]), ISN + 3 * SEG);
	assert_int_equal(rte_pktmbuf_pkt_len(b[1]), HDRS + SEG + 300);
	free_all(b, 2);
}

static void test_gro_merged_segment_delivered_by_the_stack(void **state)
{
	(void)state;
	/* Through stack_input: the merged chain reaches TCP, which answers the unknown
	 * connection with one reset for all of it (RFC 9293 §3.10.7.1). */
	struct rte_mbuf *b[3] = {data_frame(0, SEG, TCP_FLAG_ACK),
				 data_frame(SEG, SEG, TCP_FLAG_ACK),
				 data_frame(2 * SEG, SEG, TCP_FLAG_ACK)};
	assert_int_equal(gro_burst(ts_s, b, 3), 1);
	stack_input(ts_s, 0, b[0]);
	assert_int_equal(ts_nframes, 1);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_CHECKSUM], 0);
}

static void test_gro_leaves_gaps_other_hosts_and_bad_checksums_in_order(void **state)
{
	(void)state;
	struct seg_spec fwd = {.src = TS_HOST_A, .dst = TS_HOST_B, .sport = 4000, .seq = ISN,
			       .flags = TCP_FLAG_ACK, .off = 0, .len = SEG};
	struct rte_mbuf *b[6] = {
		data_frame(0, SEG, TCP_FLAG_ACK),
		data_frame(2 * SEG, SEG, TCP_FLAG_ACK),     /* a gap: not merged */
		seg_frame(&fwd),                            /* routed on: keeps its size */
		seg_frame(&fwd),
		data_frame(3 * SEG, SEG, TCP_FLAG_ACK),     /* continues the second */
		data_frame(4 * SEG, SEG, TCP_FLAG_ACK),
	};
	fwd.seq += SEG;
	rte_pktmbuf_free(b[3]);
	b[3] = seg_frame(&fwd);
	/* A flipped payload byte: the segment stays for the stack to drop, and ends the merge. */
	rte_pktmbuf_mtod(b[5], uint8_t *)[HDRS + 10] ^= 1;
	assert_int_equal(gro_burst(ts_s, b, 6), 5);
	assert_int_equal(seq_of(b[0]), ISN);
	assert_int_equal(rte_pktmbuf_pkt_len(b[0]), HDRS + SEG);
	assert_int_equal(seq_of(b[1]), ISN + 2 * SEG);
	assert_int_equal(rte_pktmbuf_pkt_len(b[1]), HDRS + 2 * SEG);
	assert_int_equal(rte_pktmbuf_pkt_len(b[2]), HDRS + SEG);
	assert_int_equal(rte_pktmbuf_pkt_len(b[3]), HDRS + SEG);
	assert_int_equal(seq_of(b[4]), ISN + 4 * SEG);
	assert_int_not_equal(b[4]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK,
			     RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	free_all(b, 5);
}

static void test_gro_never_merges_a_frame_for_another_station(void **state)
{
	(void)state;
	struct rte_mbuf *b[2] = {data_frame(0, SEG, TCP_FLAG_ACK),
				 data_frame(SEG, SEG, TCP_FLAG_ACK)};
	rte_pktmbuf_mtod(b[1], uint8_t *)[5] ^= 0x10; /* destination MAC: not ours */
	assert_int_equal(gro_burst(ts_s, b, 2), 2);
	stack_input(ts_s, 0, b[1]);
	assert_int_equal(ts_s->drops[STACK_DROP_ETH_NOT_OURS], 1);
	rte_pktmbuf_free(b[0]);
}

/* ---- GRO over IPv6 ---- */

#define HDRS6 (ETH_HDR_LEN + IP6_HDR_LEN + TCP_HDR_MIN_LEN)

static struct rte_mbuf *data_frame6(uint32_t seq_off, uint32_t len, uint8_t flags)
{
	struct seg_spec g = {.v6 = true, .sport = 4000, .seq = ISN + seq_off, .flags = flags,
			     .off = seq_off, .len = len};
	return seg_frame(&g);
}

static uint32_t seq_of6(const struct rte_mbuf *m)
{
	return wire_get_be32(rte_pktmbuf_mtod(m, const uint8_t *) + ETH_HDR_LEN + IP6_HDR_LEN + 4);
}

static void test_gro_merges_ipv6_in_order_segments_and_psh_ends_the_merge(void **state)
{
	(void)state;
	struct rte_mbuf *b[4] = {
		data_frame6(0, SEG, TCP_FLAG_ACK), data_frame6(SEG, SEG, TCP_FLAG_ACK),
		data_frame6(2 * SEG, SEG, TCP_FLAG_ACK | TCP_FLAG_PSH),
		data_frame6(3 * SEG, SEG, TCP_FLAG_ACK),
	};
	assert_int_equal(gro_burst(ts_s, b, 4), 2);
	assert_int_equal(ts_s->events[STACK_EV_GRO_MERGED], 2);
	uint8_t got[3 * SEG];
	assert_int_equal(rte_pktmbuf_pkt_len(b[0]), HDRS6 + 3 * SEG);
	const uint8_t *ip = rte_pktmbuf_mtod_offset(b[0], const uint8_t *, ETH_HDR_LEN);
	assert_int_equal(wire_get_be16(ip + IP6_OFF_PAYLOAD_LEN), TCP_HDR_MIN_LEN + 3 * SEG);
	assert_int_equal(ip[IP6_HDR_LEN + 13], TCP_FLAG_ACK | TCP_FLAG_PSH);
	assert_memory_equal(rte_pktmbuf_read(b[0], HDRS6, 3 * SEG, got), pat, 3 * SEG);
	assert_int_equal(b[0]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(seq_of6(b[1]), ISN + 3 * SEG);
	free_all(b, 2);
}

static void test_gro_ipv6_extension_headers_hop_limit_and_bad_checksums_end_merges(void **state)
{
	(void)state;
	struct seg_spec hbh = {.v6 = true, .sport = 4000, .seq = ISN + SEG, .flags = TCP_FLAG_ACK,
			       .off = SEG, .len = SEG, .hop_by_hop = true};
	struct seg_spec hops = hbh;
	hops.hop_by_hop = false;
	hops.seq = ISN + 3 * SEG;
	hops.off = 3 * SEG;
	hops.hop_limit = 63;
	struct rte_mbuf *b[6] = {
		data_frame6(0, SEG, TCP_FLAG_ACK),
		seg_frame(&hbh),                        /* an extension header: never merged */
		data_frame6(2 * SEG, SEG, TCP_FLAG_ACK), /* leads anew */
		seg_frame(&hops),                       /* another Hop Limit: leads anew */
		data_frame6(4 * SEG, SEG, TCP_FLAG_ACK), /* continues the data, not that header */
		data_frame6(5 * SEG, SEG, TCP_FLAG_ACK),
	};
	rte_pktmbuf_mtod(b[5], uint8_t *)[HDRS6 + 10] ^= 1; /* a bad checksum */
	assert_int_equal(gro_burst(ts_s, b, 6), 6);
	assert_int_equal(ts_s->events[STACK_EV_GRO_MERGED], 0);
	for (unsigned i = 0; i < 6; i++)
		assert_int_equal(rte_pktmbuf_pkt_len(b[i]),
				 HDRS6 + SEG + (i == 1 ? 8 : 0));
	free_all(b, 6);
}

static void test_gro_merged_ipv6_segment_delivered_by_the_stack(void **state)
{
	(void)state;
	struct rte_mbuf *b[3] = {data_frame6(0, SEG, TCP_FLAG_ACK),
				 data_frame6(SEG, SEG, TCP_FLAG_ACK),
				 data_frame6(2 * SEG, SEG, TCP_FLAG_ACK)};
	assert_int_equal(gro_burst(ts_s, b, 3), 1);
	assert_int_equal(b[0]->nb_segs, 3);
	stack_input(ts_s, 0, b[0]);
	/* One reset for the whole chain (no connection), nothing dropped on the way. */
	assert_int_equal(ts_nframes, 1);
	assert_int_equal(ts_s->events[STACK_EV_IP6_DELIVERED], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_TCP_BAD_CHECKSUM], 0);
}

/* ---- IPv6 input of chains ---- */

/* The datagram of spec g (its frame without the Ethernet header) as a chain of seg-byte
 * segments, as received on port 0: what ip6_input sees of a chain the port or GRO made
 * (stack_input would gather a chain whose first segment ends this early). */
static struct rte_mbuf *chain6(const struct seg_spec *g, size_t len_cut, size_t seg)
{
	struct rte_mbuf *one = seg_frame(g);
	struct rte_mbuf *m = ts_mbuf(rte_pktmbuf_mtod_offset(one, const uint8_t *, ETH_HDR_LEN),
				     rte_pktmbuf_data_len(one) - ETH_HDR_LEN - len_cut, seg);
	rte_pktmbuf_free(one);
	m->port = 0;
	return m;
}

static void test_ip6_input_reads_headers_split_across_segments(void **state)
{
	(void)state;
	struct seg_spec g = {.v6 = true, .sport = 4000, .seq = ISN, .flags = TCP_FLAG_ACK,
			     .len = SEG, .hop_by_hop = true};
	/* Splits inside the fixed header, inside the Hop-by-Hop header, inside TCP's. The
	 * segments are of even length: DPDK 22.11's rte_raw_cksum_mbuf, which TCP verifies
	 * chains with, truncates the sum of a segment that starts at an odd offset. */
	static const size_t splits[] = {8, IP6_HDR_LEN + 4, IP6_HDR_LEN + 8 + 6, 64};
	for (unsigned i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
		ts_clear();
		ip6_input(ts_s, chain6(&g, 0, splits[i]), 0);
		assert_int_equal(ts_nframes, 1);
		assert_int_equal(ts_s->events[STACK_EV_IP6_DELIVERED], i + 1);
	}
	for (unsigned d = 0; d < STACK_DROP_COUNT; d++)
		assert_int_equal(ts_s->drops[d], 0);
}

static void test_ip6_input_drops_a_chain_shorter_than_its_payload_length(void **state)
{
	(void)state;
	struct seg_spec g = {.v6 = true, .sport = 4000, .seq = ISN, .flags = TCP_FLAG_ACK,
			     .len = SEG};
	/* The last 100 bytes missing, in a chain of 30-byte segments. */
	ip6_input(ts_s, chain6(&g, 100, 30), 0);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP6_BAD_LENGTH], 1);
	/* Cut inside the fixed header. */
	ip6_input(ts_s, chain6(&g, IP6_HDR_LEN + TCP_HDR_MIN_LEN + SEG - 30, 20), 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP6_TRUNCATED], 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, offload_setup, ts_teardown)
		T(test_partial_checksum_finished_in_software_equals_full_checksum),
		T(test_capable_port_is_left_the_checksums),
		T(test_tso_segment_refused_by_a_port_without_tso),
		T(test_gro_merges_in_order_segments_and_psh_ends_the_merge),
		T(test_gro_merged_segment_delivered_by_the_stack),
		T(test_gro_leaves_gaps_other_hosts_and_bad_checksums_in_order),
		T(test_gro_never_merges_a_frame_for_another_station),
		T(test_gro_merges_ipv6_in_order_segments_and_psh_ends_the_merge),
		T(test_gro_ipv6_extension_headers_hop_limit_and_bad_checksums_end_merges),
		T(test_gro_merged_ipv6_segment_delivered_by_the_stack),
		T(test_ip6_input_reads_headers_split_across_segments),
		T(test_ip6_input_drops_a_chain_shorter_than_its_payload_length),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
