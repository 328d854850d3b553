/* TSO (src/tcp/tcp_tso.c): where the route's port cuts segments, new data leaves as one
 * segment of several MSS with RTE_MBUF_F_TX_TCP_SEG and tso_segsz = MSS, the checksum field
 * holding the pseudo-header sum without the length (DPDK's rule for TSO), while the sent
 * map keeps one record per MSS, so SACK, RACK and retransmissions see the wire segments. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"

#define MSS_TS 1448                       /* the peer's MSS 1460 less timestamps */
#define HDRS (ETH_HDR_LEN + IP4_HDR_MIN_LEN + 32) /* TCP with timestamps */

static uint8_t pat[64 * 1024];

static int tso_setup(void **state)
{
	for (size_t i = 0; i < sizeof(pat); i++)
		pat[i] = ts_pattern(i);
	return tp_setup(state);
}

static struct tcp_conn *open_with_tso(struct tp_peer *p, uint32_t tso_max)
{
	struct tcp_conn *c = tp_open_passive(p);
	ts_s->tx_caps[0] = (struct stack_tx_caps){.ip4_cksum = true, .tcp_cksum = true,
						  .tso_max = tso_max};
	ts_clear();
	return c;
}

/* The TSO frame i: its flags, size, payload (bytes [off, off + len) of pat) and the
 * pseudo-header sum it leaves to the port. */
static void expect_tso_frame(unsigned i, uint32_t off, uint32_t len)
{
	const struct ts_frame *f = &ts_frames[i];
	assert_true(f->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_true(f->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_int_equal(f->tso_segsz, MSS_TS);
	assert_int_equal(f->len, HDRS + len);
	assert_memory_equal(f->data + HDRS, pat + off, len);
	uint16_t pseudo = (uint16_t)~wire_csum_finish(wire_csum_pseudo4(TS_ADDR0, TS_HOST_A, 6, 0));
	assert_int_equal(wire_get_be16(f->data + ETH_HDR_LEN + IP4_HDR_MIN_LEN + 16), pseudo);
}

static void test_tso_new_data_leaves_in_segments_of_whole_mss_recorded_per_mss(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_with_tso(&p, 4 * MSS_TS + 100);
	uint64_t tso0 = ts_s->events[STACK_EV_TCP_TSO_SEGS];
	uint64_t out0 = ts_s->events[STACK_EV_TCP_OUT_SEGS];
	assert_int_equal(tcp_send(c, pat, 6 * MSS_TS), 6 * MSS_TS);
	/* Up to the port's 4 MSS, then the rest: whole segments each. */
	assert_int_equal(ts_nframes, 2);
	expect_tso_frame(0, 0, 4 * MSS_TS);
	expect_tso_frame(1, 4 * MSS_TS, 2 * MSS_TS);
	assert_int_equal(c->sm.n, 6);
	assert_int_equal(ts_s->events[STACK_EV_TCP_TSO_SEGS] - tso0, 2);
	assert_int_equal(ts_s->events[STACK_EV_TCP_OUT_SEGS] - out0, 6);
	ts_expect_no_drops();
}

static void test_tso_last_segment_carries_the_short_tail(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_with_tso(&p, 65535);
	assert_int_equal(tcp_send(c, pat, 3 * MSS_TS + 700), 3 * MSS_TS + 700);
	assert_int_equal(ts_nframes, 1);
	expect_tso_frame(0, 0, 3 * MSS_TS + 700);
	assert_int_equal(c->sm.n, 4); /* three full segments and the tail */
}

static void test_tso_acked_prefix_takes_its_records_off_the_map(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = open_with_tso(&p, 65535);
	assert_int_equal(tcp_send(c, pat, 4 * MSS_TS), 4 * MSS_TS);
	assert_int_equal(c->sm.n, 4);
	/* The peer acknowledges the first two wire segments the port cut. */
	p.rcv_nxt = c->snd_una + 2 * MSS_TS;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(c->sm.n, 2);
	assert_int_equal(c->snd_una, c->snd_max - 2 * MSS_TS);
}

static void test_without_tso_segments_are_one_mss_with_software_checksums(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	ts_clear();
	assert_int_equal(tcp_send(c, pat, 3 * MSS_TS), 3 * MSS_TS);
	struct tp_seg segs[8];
	assert_int_equal(tp_collect(segs, 8), 3); /* parsed: their checksums verify */
	for (unsigned i = 0; i < 3; i++) {
		assert_int_equal(segs[i].len, MSS_TS);
		assert_int_equal(ts_frames[i].ol_flags, 0);
	}
	assert_int_equal(c->sm.n, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tso_setup, tp_teardown)
		T(test_tso_new_data_leaves_in_segments_of_whole_mss_recorded_per_mss),
		T(test_tso_last_segment_carries_the_short_tail),
		T(test_tso_acked_prefix_takes_its_records_off_the_map),
		T(test_without_tso_segments_are_one_mss_with_software_checksums),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
