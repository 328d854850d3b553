/* Packets the stack loses for want of resources are named counters (issue 13), never silent:
 * an empty mbuf pool when answering (ARP reply, ICMP error, echo reply's fragments) or
 * fragmenting a forwarded datagram, and a steering ring with no room for the datagram of
 * another worker's flow. Each loss is counted once, its packet freed (ts_teardown checks the
 * pool), and nothing half-built leaves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "stack/steer.h"
#include "../../src/wire/udp.h"

static uint8_t dgram[4096];
static uint8_t frame[4200];

/* Every free mbuf of the pool, taken until give_back. */
static struct rte_mbuf *hoard[TEST_POOL_MBUFS];
static unsigned nhoard;

static void exhaust_pool(void)
{
	struct rte_mbuf *m;
	while ((m = rte_pktmbuf_alloc(test_pool())) != NULL)
		hoard[nhoard++] = m;
	assert_true(nhoard > 0);
}

static void give_back(void)
{
	rte_pktmbuf_free_bulk(hoard, nhoard);
	nhoard = 0;
}

/* The frame of datagram dgram[0..n) from port's neighbour, as an mbuf made before the pool
 * runs dry. */
static struct rte_mbuf *frame_of(uint16_t port, size_t n)
{
	size_t len = ts_eth_build(frame, &ts_mac_port[port], port == 0 ? &ts_mac_a : &ts_mac_b,
				  ETH_TYPE_IPV4, dgram, n);
	return ts_mbuf(frame, len, 0);
}

static size_t udp_dgram(uint32_t src, uint32_t dst, uint16_t dport, size_t len)
{
	uint8_t l4[2048];
	struct udp_repr u = {.src_port = 5000, .dst_port = dport, .length = (uint16_t)(8 + len)};
	udp_build(l4, sizeof(l4), &u);
	for (size_t i = 0; i < len; i++)
		l4[8 + i] = ts_pattern(i);
	wire_put_be16(l4 + UDP_OFF_CSUM, udp_checksum(src, dst, l4, 8 + len));
	struct ts_ip ip = ts_ip_of(src, dst, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = 8 + len;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

static void test_pool_empty_port_unreachable_not_sent_counted(void **state)
{
	(void)state;
	struct rte_mbuf *m = frame_of(0, udp_dgram(TS_HOST_A, TS_ADDR0, 9, 10));
	exhaust_pool();
	stack_input(ts_s, 0, m);
	give_back();
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_UDP_NO_PORT], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_TX_NO_MBUF], 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_UNREACH], 0);
}

static void test_pool_empty_arp_reply_not_sent_counted(void **state)
{
	(void)state;
	struct arp_repr a = {.op = ARP_OP_REQUEST, .sha = ts_mac_a, .spa = TS_HOST_A,
			     .tha = ts_mac_zero, .tpa = TS_ADDR0};
	uint8_t body[ARP_LEN + 18] = {0};
	arp_build(body, ARP_LEN, &a);
	size_t len = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_ARP, body,
				  sizeof(body));
	struct rte_mbuf *m = ts_mbuf(frame, len, 0);
	exhaust_pool();
	stack_input(ts_s, 0, m);
	give_back();
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_TX_NO_MBUF, 1);
}

/* A forwarded datagram larger than the next hop's MTU, DF clear, with no mbuf for its
 * fragments: the datagram is counted (ip.frag_failed), no fragment leaves. */
static void test_pool_empty_forwarded_datagram_not_fragmented_counted(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&ts_s->cfg, 1, 1000), 0);
	struct rte_mbuf *m = frame_of(0, udp_dgram(TS_HOST_A, TS_HOST_B, 9, 1400));
	exhaust_pool();
	stack_input(ts_s, 0, m);
	give_back();
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 1);
	ts_expect_drop(STACK_DROP_IP_FRAG_FAILED, 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGS_CREATED], 0);
	/* With mbufs again, the same datagram goes in two fragments. */
	stack_input(ts_s, 0, frame_of(0, udp_dgram(TS_HOST_A, TS_HOST_B, 9, 1400)));
	assert_int_equal(ts_nframes, 2);
}

/* The stack's own ping of 3000 bytes without mbufs: refused with ENOBUFS and counted. */
static void test_pool_empty_own_echo_request_refused_counted(void **state)
{
	(void)state;
	exhaust_pool();
	int rc = stack_ping_send(ts_s, TS_HOST_A, 1, 1, 3000);
	give_back();
	assert_int_equal(rc, -ENOBUFS);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_TX_NO_MBUF, 1);
}

/* ---- a full steering ring ---- */

static struct steer steer;
static unsigned refused;

static bool refuse_steer(void *ctx, unsigned worker, struct rte_mbuf *m, unsigned how)
{
	(void)ctx;
	(void)worker;
	(void)m;
	(void)how;
	refused++;
	return false; /* the owner's ring is full: the stack keeps m */
}

static int steer_setup(void **state)
{
	int rc = ts_setup(state);
	steer_init(&steer, 2);
	struct stack_params p;
	ts_params(&p);
	p.id = 0;
	p.steer = &steer;
	p.ops.steer = refuse_steer;
	ts_restart(&p, true);
	refused = 0;
	return rc;
}

static void test_steering_ring_full_datagram_counted_and_freed(void **state)
{
	(void)state;
	uint16_t theirs = 7000;
	while (steer_udp_owner(&steer, theirs) != 1)
		theirs++;
	for (unsigned i = 0; i < 3; i++)
		ts_input_ip(0, dgram, udp_dgram(TS_HOST_A, TS_ADDR0, theirs, 100));
	assert_int_equal(refused, 3);
	ts_expect_drop(STACK_DROP_IP_STEER_FULL, 3);
	assert_int_equal(ts_s->events[STACK_EV_IP_STEERED_OUT], 0);
	assert_int_equal(ts_nframes, 0); /* no port unreachable: the flow is not ours */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pool_empty_port_unreachable_not_sent_counted,
						ts_setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_pool_empty_arp_reply_not_sent_counted,
						ts_setup, ts_teardown),
		cmocka_unit_test_setup_teardown(
			test_pool_empty_forwarded_datagram_not_fragmented_counted, ts_setup,
			ts_teardown),
		cmocka_unit_test_setup_teardown(test_pool_empty_own_echo_request_refused_counted,
						ts_setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_steering_ring_full_datagram_counted_and_freed,
						steer_setup, ts_teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
