/* ARP through the whole stack (src/l2/link.c): requests answered or not, gratuitous
 * announcements, learning, packets queued while resolving and released in order, static
 * entries against spoofing, address conflicts, malformed packets, resolution failure. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"

static struct arp_repr arp_of(uint16_t op, const struct eth_addr *sha, uint32_t spa,
			      const struct eth_addr *tha, uint32_t tpa)
{
	struct arp_repr a = {.op = op, .sha = *sha, .spa = spa, .tha = *tha, .tpa = tpa};
	return a;
}

static void request_from_a(uint32_t tpa)
{
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, tpa);
	ts_input_arp(0, &eth_addr_broadcast, &a);
}

static void expect_neigh(uint16_t port, uint32_t ip, enum neigh_state st,
			 const struct eth_addr *mac)
{
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, port, ip, &ni), 0);
	assert_int_equal(ni.state, st);
	assert_memory_equal(ni.mac.b, mac->b, ETH_ADDR_LEN);
}

static void expect_no_neigh(uint16_t port, uint32_t ip)
{
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, port, ip, &ni), -ENOENT);
}

/* An echo request captured at frame i, to A, with this sequence number. */
static void expect_echo_to_a(unsigned i, uint16_t seq)
{
	struct ts_pkt p;
	ts_expect_ip(i, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_ICMP, &p);
	assert_true(p.is_icmp);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REQUEST);
	assert_int_equal(p.icmp.rest, (uint32_t)0x4242 << 16 | seq);
}

/* --- requests --- */

static void test_arp_request_for_us_answered_with_reply(void **state)
{
	(void)state;
	request_from_a(TS_ADDR0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_a, TS_ADDR0, &ts_mac_a, TS_HOST_A);
	assert_int_equal(ts_s->events[STACK_EV_ARP_RX_REQUEST], 1);
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_REPLY], 1);
	assert_int_equal(ts_s->ports[0].tx_packets, 1);
	assert_int_equal(ts_s->ports[0].tx_bytes, ETH_MIN_FRAME_LEN);
	assert_int_equal(ts_s->ports[0].rx_packets, 1);
	ts_expect_no_drops();
}

static void test_arp_request_for_us_creates_stale_entry(void **state)
{
	(void)state;
	request_from_a(TS_ADDR0);
	expect_neigh(0, TS_HOST_A, NEIGH_STALE, &ts_mac_a);
}

/* The reply goes to the sender hardware address of the ARP body, not to the Ethernet
 * source (RFC 826). */
static void test_arp_request_reply_goes_to_sender_hardware_address(void **state)
{
	(void)state;
	uint8_t body[ETH_MIN_FRAME_LEN - ETH_HDR_LEN] = {0}, frame[ETH_MIN_FRAME_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	size_t n = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_other, ETH_TYPE_ARP, body,
				sizeof(body));
	ts_input_frame(0, frame, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_a, TS_ADDR0, &ts_mac_a, TS_HOST_A);
}

static void test_arp_unpadded_request_answered(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN], frame[ETH_HDR_LEN + ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	size_t n = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_ARP, body,
				sizeof(body));
	ts_input_frame(0, frame, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_a, TS_ADDR0, &ts_mac_a, TS_HOST_A);
}

static void test_arp_unicast_request_for_us_answered(void **state)
{
	(void)state;
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_a, TS_ADDR0, &ts_mac_a, TS_HOST_A);
}

static void test_arp_request_on_port1_answered_from_port1(void **state)
{
	(void)state;
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_b, TS_HOST_B, &ts_mac_zero, TS_ADDR1);
	ts_input_arp(1, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 1, ARP_OP_REPLY, &ts_mac_b, TS_ADDR1, &ts_mac_b, TS_HOST_B);
}

static void test_arp_request_for_other_host_not_answered(void **state)
{
	(void)state;
	request_from_a(IP4(10, 0, 0, 77));
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ARP_NOT_FOR_US, 1);
	assert_int_equal(ts_s->events[STACK_EV_ARP_RX_REQUEST], 1);
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_REPLY], 0);
	expect_no_neigh(0, TS_HOST_A);
}

static void test_arp_request_for_subnet_broadcast_not_answered(void **state)
{
	(void)state;
	request_from_a(TS_BCAST0);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ARP_NOT_FOR_US, 1);
}

/* RFC 826 merge: an entry we have is refreshed by any ARP from its owner. */
static void test_arp_request_for_other_host_updates_known_entry(void **state)
{
	(void)state;
	request_from_a(TS_ADDR0);
	ts_clear();
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_other, TS_HOST_A, &ts_mac_zero,
				   IP4(10, 0, 0, 77));
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 0);
	expect_neigh(0, TS_HOST_A, NEIGH_STALE, &ts_mac_other);
}

/* RFC 5227 probe: sender 0.0.0.0 is answered (to the prober's MAC), and nothing is learnt. */
static void test_arp_probe_for_our_address_answered_nothing_learnt(void **state)
{
	(void)state;
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_other, 0, &ts_mac_zero, TS_ADDR0);
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_other, TS_ADDR0, &ts_mac_other, 0);
	expect_no_neigh(0, 0);
	ts_expect_no_drops();
}

/* --- announcements --- */

static void test_arp_addr_add_with_announce_sends_gratuitous_request(void **state)
{
	(void)state;
	assert_int_equal(stack_addr_add(ts_s, 0, IP4(10, 0, 0, 9), 24, true), 0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REQUEST, &eth_addr_broadcast, IP4(10, 0, 0, 9), &ts_mac_zero,
		      IP4(10, 0, 0, 9));
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_GRATUITOUS], 1);
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_REQUEST], 0);
}

static void test_arp_addr_add_on_port1_announces_on_port1(void **state)
{
	(void)state;
	assert_int_equal(stack_addr_add(ts_s, 1, IP4(192, 168, 7, 1), 24, true), 0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 1, ARP_OP_REQUEST, &eth_addr_broadcast, IP4(192, 168, 7, 1),
		      &ts_mac_zero, IP4(192, 168, 7, 1));
}

static void test_arp_addr_add_without_announce_sends_nothing(void **state)
{
	(void)state;
	assert_int_equal(stack_addr_add(ts_s, 0, IP4(10, 0, 0, 9), 24, false), 0);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_GRATUITOUS], 0);
}

static void test_arp_addr_add_failing_announces_nothing(void **state)
{
	(void)state;
	assert_int_equal(stack_addr_add(ts_s, 0, TS_ADDR0, 24, true), -EEXIST);
	assert_int_equal(stack_addr_add(ts_s, 0, IP4(10, 0, 0, 0), 24, true), -EINVAL);
	assert_int_equal(ts_nframes, 0);
}

/* Someone else's gratuitous ARP updates an entry we have, and is not answered. */
static void test_arp_gratuitous_from_neighbour_updates_entry_silently(void **state)
{
	(void)state;
	request_from_a(TS_ADDR0);
	ts_clear();
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_other, TS_HOST_A, &ts_mac_zero,
				   TS_HOST_A);
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 0);
	expect_neigh(0, TS_HOST_A, NEIGH_STALE, &ts_mac_other);
}

/* --- resolution --- */

static void test_arp_ping_unresolved_sends_one_broadcast_request(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REQUEST, &eth_addr_broadcast, TS_ADDR0, &ts_mac_zero,
		      TS_HOST_A);
	assert_int_equal(ts_s->events[STACK_EV_ARP_TX_REQUEST], 1);
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, 0, TS_HOST_A, &ni), 0);
	assert_int_equal(ni.state, NEIGH_INCOMPLETE);
	assert_int_equal(ni.queued, 1);
}

static void test_arp_reply_releases_queued_packets_in_order(void **state)
{
	(void)state;
	for (uint16_t seq = 1; seq <= 5; seq++)
		assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, seq, 32), 0);
	assert_int_equal(ts_nframes, 1); /* one request, paced by the timer, not per packet */
	ts_clear();
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(ts_nframes, 5);
	for (unsigned i = 0; i < 5; i++)
		expect_echo_to_a(i, (uint16_t)(i + 1));
	expect_neigh(0, TS_HOST_A, NEIGH_REACHABLE, &ts_mac_a);
	assert_int_equal(ts_s->events[STACK_EV_ARP_RX_REPLY], 1);
	ts_expect_no_drops();
}

/* What the stack reports to the other workers (stack_ops.neigh_learnt). */
static struct {
	unsigned calls;
	uint16_t port;
	uint32_t ip;
	struct eth_addr mac;
	unsigned flags;
} news;

static void record_news(void *ctx, uint16_t port, uint32_t ip, const struct eth_addr *mac,
			unsigned flags)
{
	(void)ctx;
	news.calls++;
	news.port = port;
	news.ip = ip;
	news.mac = *mac;
	news.flags = flags;
}

static void test_arp_reply_learnt_reported_for_other_workers(void **state)
{
	(void)state;
	struct stack_params p;
	ts_params(&p);
	p.ops.neigh_learnt = record_news;
	ts_restart(&p, false);
	memset(&news, 0, sizeof(news));
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(news.calls, 1);
	assert_int_equal(news.port, 0);
	assert_int_equal(news.ip, TS_HOST_A);
	assert_memory_equal(news.mac.b, ts_mac_a.b, ETH_ADDR_LEN);
	assert_int_equal(news.flags, NEIGH_F_CREATE | NEIGH_F_SOLICITED);
}

static void test_arp_static_conflict_not_reported_for_other_workers(void **state)
{
	(void)state;
	struct stack_params p;
	ts_params(&p);
	p.ops.neigh_learnt = record_news;
	ts_restart(&p, true);
	memset(&news, 0, sizeof(news));
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_other, TS_HOST_A, &ts_mac_port[0],
				   TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(news.calls, 0);
}

/* Another worker heard the reply: its news resolves our entry and releases what waited. */
static void test_arp_news_from_other_worker_releases_queued_packets(void **state)
{
	(void)state;
	for (uint16_t seq = 1; seq <= 3; seq++)
		assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, seq, 32), 0);
	ts_clear();
	stack_neigh_learn(ts_s, 0, TS_HOST_A, &ts_mac_a, NEIGH_F_CREATE | NEIGH_F_SOLICITED);
	assert_int_equal(ts_nframes, 3);
	for (unsigned i = 0; i < 3; i++)
		expect_echo_to_a(i, (uint16_t)(i + 1));
	expect_neigh(0, TS_HOST_A, NEIGH_REACHABLE, &ts_mac_a);
	ts_expect_no_drops();
}

static void test_arp_reply_learnt_entry_used_directly_afterwards(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	ts_clear();
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 2, 32), 0);
	assert_int_equal(ts_nframes, 1);
	expect_echo_to_a(0, 2);
}

static void test_arp_request_retransmitted_then_resolution_fails(void **state)
{
	(void)state;
	struct neigh_params np;
	neigh_get_params(ts_s->neigh, &np);
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	ts_advance((uint64_t)np.retrans_ms * np.mcast_probes - 1);
	assert_int_equal(ts_nframes, np.mcast_probes);
	for (unsigned i = 0; i < ts_nframes; i++)
		ts_expect_arp(i, 0, ARP_OP_REQUEST, &eth_addr_broadcast, TS_ADDR0, &ts_mac_zero,
			      TS_HOST_A);
	assert_int_equal(ts_s->drops[STACK_DROP_NEIGH_FAILED], 0);
	ts_advance(1);
	/* Our own packet: dropped and counted, no ICMP to ourselves. */
	assert_int_equal(ts_nframes, np.mcast_probes);
	ts_expect_drop(STACK_DROP_NEIGH_FAILED, 1);
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, 0, TS_HOST_A, &ni), 0);
	assert_int_equal(ni.state, NEIGH_FAILED);
}

static void test_arp_queue_full_drops_newest(void **state)
{
	(void)state;
	struct stack_params p;
	ts_params(&p);
	p.neigh.queue_len = 2;
	ts_restart(&p, false);
	for (uint16_t seq = 1; seq <= 3; seq++)
		assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, seq, 32), 0);
	ts_expect_drop(STACK_DROP_NEIGH_QUEUE_FULL, 1);
	ts_clear();
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(ts_nframes, 2);
	expect_echo_to_a(0, 1);
	expect_echo_to_a(1, 2);
}

static void test_arp_last_addr_del_flushes_queued_packets(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 2, 32), 0);
	assert_int_equal(stack_addr_del(ts_s, 0, TS_ADDR0, 24), 0);
	ts_expect_drop(STACK_DROP_NEIGH_FLUSHED, 2);
	expect_no_neigh(0, TS_HOST_A);
}

/* Linux flushes a device's neighbours only with its last address: deleting another address
 * of the port keeps them, and the packets waiting for one are sent once it answers. */
static void test_arp_addr_del_with_another_left_keeps_neighbours(void **state)
{
	(void)state;
	assert_int_equal(stack_addr_add(ts_s, 0, IP4(10, 0, 0, 9), 24, false), 0);
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(stack_addr_del(ts_s, 0, IP4(10, 0, 0, 9), 24), 0);
	assert_int_equal(ts_s->drops[STACK_DROP_NEIGH_FLUSHED], 0);
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, 0, TS_HOST_A, &ni), 0);
	assert_int_equal(ni.queued, 1);
	ts_clear();
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_a, TS_HOST_A, &ts_mac_port[0], TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(ts_nframes, 1);
	expect_echo_to_a(0, 1);
	expect_neigh(0, TS_HOST_A, NEIGH_REACHABLE, &ts_mac_a);
}

static void test_arp_port_down_flushes_queued_packets(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(stack_iface_set_up(ts_s, 0, false), 0);
	ts_expect_drop(STACK_DROP_NEIGH_FLUSHED, 1);
	expect_no_neigh(0, TS_HOST_A);
}

/* A STALE entry is used at once, then probed by unicast after the DELAY period. */
static void test_arp_stale_entry_used_then_probed_by_unicast(void **state)
{
	(void)state;
	struct neigh_params np;
	neigh_get_params(ts_s->neigh, &np);
	request_from_a(TS_ADDR0);
	ts_clear();
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(ts_nframes, 1);
	expect_echo_to_a(0, 1);
	ts_advance(np.delay_ms);
	assert_int_equal(ts_nframes, 2);
	ts_expect_arp(1, 0, ARP_OP_REQUEST, &ts_mac_a, TS_ADDR0, &ts_mac_zero, TS_HOST_A);
}

/* --- spoofing and conflicts --- */

static void test_arp_static_entry_spoofed_request_counted_entry_unchanged(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_other, TS_HOST_A, &ts_mac_zero,
				   TS_ADDR0);
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ARP_STATIC_CONFLICT, 1);
	expect_neigh(0, TS_HOST_A, NEIGH_STATIC, &ts_mac_a);
}

static void test_arp_static_entry_spoofed_reply_counted_entry_unchanged(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_other, TS_HOST_A, &ts_mac_port[0],
				   TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	ts_expect_drop(STACK_DROP_ARP_STATIC_CONFLICT, 1);
	expect_neigh(0, TS_HOST_A, NEIGH_STATIC, &ts_mac_a);
	/* Traffic still goes to the configured MAC. */
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, 32), 0);
	assert_int_equal(ts_nframes, 1);
	expect_echo_to_a(0, 1);
}

static void test_arp_static_entry_matching_request_answered(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	request_from_a(TS_ADDR0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_a, TS_ADDR0, &ts_mac_a, TS_HOST_A);
	expect_neigh(0, TS_HOST_A, NEIGH_STATIC, &ts_mac_a);
	ts_expect_no_drops();
}

static void test_arp_claim_of_our_address_counted_as_conflict(void **state)
{
	(void)state;
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_other, TS_ADDR0, &ts_mac_zero,
				   TS_ADDR0);
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ARP_ADDR_CONFLICT, 1);
	expect_no_neigh(0, TS_ADDR0);
}

static void test_arp_reply_claiming_our_other_port_address_is_conflict(void **state)
{
	(void)state;
	struct arp_repr a = arp_of(ARP_OP_REPLY, &ts_mac_other, TS_ADDR1, &ts_mac_port[0],
				   TS_ADDR0);
	ts_input_arp(0, &ts_mac_port[0], &a);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ARP_ADDR_CONFLICT, 1);
	expect_no_neigh(0, TS_ADDR1);
}

/* --- malformed --- */

static void expect_arp_body_dropped(const uint8_t *body, size_t len, enum stack_drop d)
{
	uint8_t frame[ETH_HDR_LEN + 64];
	size_t n = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_ARP, body, len);
	ts_input_frame(0, frame, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(d, 1);
	expect_no_neigh(0, TS_HOST_A);
}

static void test_arp_truncated_body_dropped_malformed(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	for (size_t len = 0; len < ARP_LEN; len++) {
		memset(ts_s->drops, 0, sizeof(ts_s->drops));
		expect_arp_body_dropped(body, len, STACK_DROP_ARP_MALFORMED);
	}
}

static void test_arp_wrong_hardware_type_dropped_malformed(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	wire_put_be16(body + ARP_OFF_HTYPE, 6);
	expect_arp_body_dropped(body, sizeof(body), STACK_DROP_ARP_MALFORMED);
}

static void test_arp_unknown_opcode_dropped_malformed(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	wire_put_be16(body + ARP_OFF_OP, 3);
	expect_arp_body_dropped(body, sizeof(body), STACK_DROP_ARP_MALFORMED);
}

static void test_arp_multicast_sender_mac_dropped_malformed(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	body[ARP_OFF_SHA] |= 0x01;
	expect_arp_body_dropped(body, sizeof(body), STACK_DROP_ARP_MALFORMED);
}

static void test_arp_zero_sender_mac_dropped_malformed(void **state)
{
	(void)state;
	uint8_t body[ARP_LEN];
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_zero, TS_HOST_A, &ts_mac_zero, TS_ADDR0);
	arp_build(body, sizeof(body), &a);
	expect_arp_body_dropped(body, sizeof(body), STACK_DROP_ARP_MALFORMED);
}

static void expect_bad_sender(uint32_t spa)
{
	struct arp_repr a = arp_of(ARP_OP_REQUEST, &ts_mac_a, spa, &ts_mac_zero, TS_ADDR0);
	ts_input_arp(0, &eth_addr_broadcast, &a);
	assert_int_equal(ts_nframes, 0);
	expect_no_neigh(0, spa);
}

static void test_arp_martian_sender_address_dropped_bad_sender(void **state)
{
	(void)state;
	expect_bad_sender(IP4(224, 0, 0, 1));
	expect_bad_sender(0xffffffffu);
	expect_bad_sender(IP4(127, 0, 0, 1));
	expect_bad_sender(IP4(0, 1, 2, 3));
	ts_expect_drop(STACK_DROP_ARP_BAD_SENDER, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, ts_setup_bare, ts_teardown)
		T(test_arp_request_for_us_answered_with_reply),
		T(test_arp_request_for_us_creates_stale_entry),
		T(test_arp_request_reply_goes_to_sender_hardware_address),
		T(test_arp_unpadded_request_answered),
		T(test_arp_unicast_request_for_us_answered),
		T(test_arp_request_on_port1_answered_from_port1),
		T(test_arp_request_for_other_host_not_answered),
		T(test_arp_request_for_subnet_broadcast_not_answered),
		T(test_arp_request_for_other_host_updates_known_entry),
		T(test_arp_probe_for_our_address_answered_nothing_learnt),
		T(test_arp_addr_add_with_announce_sends_gratuitous_request),
		T(test_arp_addr_add_on_port1_announces_on_port1),
		T(test_arp_addr_add_without_announce_sends_nothing),
		T(test_arp_addr_add_failing_announces_nothing),
		T(test_arp_gratuitous_from_neighbour_updates_entry_silently),
		T(test_arp_ping_unresolved_sends_one_broadcast_request),
		T(test_arp_reply_releases_queued_packets_in_order),
		T(test_arp_reply_learnt_entry_used_directly_afterwards),
		T(test_arp_request_retransmitted_then_resolution_fails),
		T(test_arp_queue_full_drops_newest),
		T(test_arp_last_addr_del_flushes_queued_packets),
		T(test_arp_addr_del_with_another_left_keeps_neighbours),
		T(test_arp_port_down_flushes_queued_packets),
		T(test_arp_stale_entry_used_then_probed_by_unicast),
		T(test_arp_static_entry_spoofed_request_counted_entry_unchanged),
		T(test_arp_static_entry_spoofed_reply_counted_entry_unchanged),
		T(test_arp_static_entry_matching_request_answered),
		T(test_arp_claim_of_our_address_counted_as_conflict),
		T(test_arp_reply_claiming_our_other_port_address_is_conflict),
		T(test_arp_truncated_body_dropped_malformed),
		T(test_arp_wrong_hardware_type_dropped_malformed),
		T(test_arp_unknown_opcode_dropped_malformed),
		T(test_arp_multicast_sender_mac_dropped_malformed),
		T(test_arp_zero_sender_mac_dropped_malformed),
		T(test_arp_reply_learnt_reported_for_other_workers),
		T(test_arp_static_conflict_not_reported_for_other_workers),
		T(test_arp_news_from_other_worker_releases_queued_packets),
		T(test_arp_martian_sender_address_dropped_bad_sender),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
