/* Transmit offloads (src/stack/tx_offload.c) on real mbufs: a partial checksum finished in
 * software equals the whole software checksum, a capable port is left the sums, a TSO
 * segment never reaches a port without TSO; and software GRO (src/dp/gro.c) on bursts fed to
 * a stack: in-order ACK segments of one flow for our address merged (PSH ends the merge),
 * everything else passed on untouched and in order. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "dp/gro.h"
#include "../../src/wire/tcp.h"

#define HDRS (ETH_HDR_LEN + IP4_HDR_MIN_LEN + TCP_HDR_MIN_LEN)
#define SEG 1000
#define ISN 5000u

static uint8_t pat[16 * SEG];

static int offload_setup(void **state)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = ts_pattern(i);
	return ts_setup(state);
}

struct seg_spec {
	uint32_t src, dst;
	uint16_t sport;
	uint32_t seq;
	uint8_t flags;
	uint32_t off, len;    /* payload: pat[off, off + len) */
};

/* A frame from A to us (or dst) with the spec's TCP segment, checksums right. */
static struct rte_mbuf *seg_frame(const struct seg_spec *g)
{
	uint8_t tcp[TCP_HDR_MIN_LEN + SEG];
	struct tcp_repr th = {.src_port = g->sport, .dst_port = 80, .seq = g->seq, .ack = 77,
			      .flags = g->flags, .window = 512};
	size_t hl = tcp_build(tcp, sizeof(tcp), &th);
	memcpy(tcp + hl, pat + g->off, g->len);
	uint16_t cs = tcp_checksum(g->src, g->dst, tcp, hl + g->len);
	wire_put_be16(tcp + 16, cs);
	struct ts_ip ip = ts_ip_of(g->src, g->dst, 6);
	ip.df = true;
	ip.payload = tcp;
	ip.len = hl + g->len;
	uint8_t dgram[IP4_HDR_MIN_LEN + sizeof(tcp)];
	size_t dl = ts_ip_build(dgram, sizeof(dgram), &ip);
	uint8_t frame[ETH_HDR_LEN + sizeof(dgram)];
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, dl);
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
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
