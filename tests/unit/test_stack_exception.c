/* The exception path on the stack's side (src/stack/exception.c and the drop points that ask
 * it): on a port with a kernel interface, what the stack does not own reaches the kernel
 * whole, as it came (Ethernet header included), instead of a drop, a RST or an ICMP error;
 * the same frames on a port without one are dropped as before; datagrams of the stack's own
 * loopback never go; ARP is answered and copied; the kernel's ARP replies for the stack's
 * addresses are held back; bypass rules take what they name and count it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "acl/bypass_set.h"
#include "stack/exception.h"
#include "stack/stack_internal.h"
#include "test_stack_util.h"
#include "../../src/wire/tcp.h"
#include "../../src/wire/udp.h"

#define ETH_TYPE_IPV6 0x86dd

/* What the stack handed to the kernel interface. */
static struct ts_frame kframes[8];
static unsigned nkframes;

static void kernel_capture(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	(void)ctx;
	assert_true(nkframes < 8);
	struct ts_frame *f = &kframes[nkframes++];
	f->port = port;
	f->len = rte_pktmbuf_pkt_len(m);
	assert_true(f->len <= sizeof(f->data));
	const void *p = rte_pktmbuf_read(m, 0, f->len, f->data);
	if (p != f->data)
		memcpy(f->data, p, f->len);
	rte_pktmbuf_free(m);
}

/* The standard topology, port 0 with a kernel interface, port 1 without. */
static int setup(void **state)
{
	ts_setup(state);
	struct stack_params p;
	ts_params(&p);
	p.ops.to_kernel = kernel_capture;
	ts_restart(&p, true);
	ts_s->kernel_port[0] = true;
	nkframes = 0;
	return 0;
}

static uint8_t frame[ETH_HDR_LEN + 2048];
static uint8_t dgram[2048];

/* The frame that carries datagram ip from neighbour A to port 0; its length. */
static size_t frame_of(const struct ts_ip *ip)
{
	size_t n = ts_ip_build(dgram, sizeof(dgram), ip);
	return ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
}

static void expect_whole_to_kernel(const uint8_t *sent, size_t len, enum stack_event why)
{
	assert_int_equal(nkframes, 1);
	assert_int_equal(kframes[0].port, 0);
	assert_int_equal(kframes[0].len, len);
	assert_memory_equal(kframes[0].data, sent, len);
	assert_int_equal(ts_s->events[why], 1);
	assert_int_equal(ts_s->ports[0].to_kernel, 1);
	assert_int_equal(ts_nframes, 0);     /* nothing answered on the wire */
	ts_expect_no_drops();
}

/* An LLDP frame (IEEE 802.1AB): an EtherType no stack protocol runs. */
static size_t lldp_frame(uint16_t port)
{
	uint8_t body[48] = {0x02, 0x07};
	return ts_eth_build(frame, &ts_mac_port[port], port == 1 ? &ts_mac_b : &ts_mac_a,
			    0x88cc, body, sizeof(body));
}

static void test_unknown_ethertype_goes_to_kernel_whole(void **state)
{
	(void)state;
	size_t n = lldp_frame(0);
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_ETHERTYPE);
}

static void test_unknown_ethertype_on_port_without_kernel_is_dropped(void **state)
{
	(void)state;
	size_t n = lldp_frame(1);
	ts_input_frame(1, frame, n);
	assert_int_equal(nkframes, 0);
	ts_expect_drop(STACK_DROP_ETH_UNKNOWN_TYPE, 1);
}

/* IPv6 is the stack's, but a datagram for an address that is not (the kernel's own, on the
 * interface beside the port) goes to the kernel whole. */
static void test_ipv6_for_another_address_goes_to_kernel_whole(void **state)
{
	(void)state;
	uint8_t body[48] = {0x60, 0, 0, 0, 0, 8, 59, 64,
			    0x20, 0x01, 0x0d, 0xb8, [23] = 1,         /* 2001:db8::1 */
			    0x20, 0x01, 0x0d, 0xb8, [39] = 0x99};     /* 2001:db8::99 */
	size_t n = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV6, body,
				sizeof(body));
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_IP6);
}

static void test_tcp_syn_to_closed_port_goes_to_kernel_not_rst(void **state)
{
	(void)state;
	uint8_t seg[TCP_HDR_MIN_LEN];
	struct tcp_repr t = {.src_port = 40000, .dst_port = 22, .seq = 1, .flags = TCP_FLAG_SYN,
			     .window = 65535};
	assert_int_equal(tcp_build(seg, sizeof(seg), &t), TCP_HDR_MIN_LEN);
	wire_put_be16(seg + TCP_OFF_CSUM, tcp_checksum(TS_HOST_A, TS_ADDR0, seg, sizeof(seg)));
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_TCP);
	ip.payload = seg;
	ip.len = sizeof(seg);
	size_t n = frame_of(&ip);
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_TCP);
	assert_int_equal(ts_s->events[STACK_EV_TCP_NO_CONN], 0);
}

static void test_udp_to_closed_port_goes_to_kernel_not_port_unreachable(void **state)
{
	(void)state;
	uint8_t l4[UDP_HDR_LEN + 4] = {0};
	struct udp_repr u = {.src_port = 5353, .dst_port = 5353, .length = sizeof(l4)};
	assert_int_equal(udp_build(l4, sizeof(l4), &u), UDP_HDR_LEN);
	wire_put_be16(l4 + UDP_OFF_CSUM, udp_checksum(TS_HOST_A, TS_ADDR0, l4, sizeof(l4)));
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = sizeof(l4);
	size_t n = frame_of(&ip);
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_UDP);
}

static void test_gre_goes_to_kernel_not_protocol_unreachable(void **state)
{
	(void)state;
	static const uint8_t gre[4] = {0, 0, 0x08, 0x00};
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, 47);
	ip.payload = gre;
	ip.len = sizeof(gre);
	size_t n = frame_of(&ip);
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_IP_PROTO);
}

static void test_ospf_multicast_goes_to_kernel(void **state)
{
	(void)state;
	static const uint8_t hello[8] = {2, 1};
	struct ts_ip ip = ts_ip_of(TS_HOST_A, IP4(224, 0, 0, 5), 89);
	ip.payload = hello;
	ip.len = sizeof(hello);
	ip.ttl = 1;
	size_t len = ts_ip_build(dgram, sizeof(dgram), &ip);
	static const struct eth_addr allspf = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x05}};
	size_t n = ts_eth_build(frame, &allspf, &ts_mac_a, ETH_TYPE_IPV4, dgram, len);
	ts_input_frame(0, frame, n);
	expect_whole_to_kernel(frame, n, STACK_EV_KERNEL_IP_MULTICAST);
}

static void test_echo_request_is_still_the_stacks(void **state)
{
	(void)state;
	size_t len = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 7, 1, 16);
	ts_input_ip(0, dgram, len);
	assert_int_equal(nkframes, 0);
	assert_int_equal(ts_nframes, 1);
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_ICMP, NULL);
}

static void test_arp_request_answered_and_copied_to_kernel(void **state)
{
	(void)state;
	struct arp_repr req = {.op = ARP_OP_REQUEST, .sha = ts_mac_other, .spa = IP4(10, 0, 0, 9),
			       .tpa = TS_ADDR0};
	static const struct eth_addr bcast = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
	ts_input_arp(0, &bcast, &req);
	assert_int_equal(ts_nframes, 1);      /* the stack's reply */
	ts_expect_arp(0, 0, ARP_OP_REPLY, &ts_mac_other, TS_ADDR0, &ts_mac_other,
		      IP4(10, 0, 0, 9));
	assert_int_equal(nkframes, 1);        /* the kernel's copy, Ethernet header included */
	assert_memory_equal(kframes[0].data, bcast.b, ETH_ADDR_LEN);
	assert_int_equal(wire_get_be16(kframes[0].data + ETH_OFF_TYPE), ETH_TYPE_ARP);
	assert_int_equal(ts_s->events[STACK_EV_KERNEL_ARP], 1);
}

static struct rte_mbuf *kernel_arp(uint16_t op, uint32_t spa)
{
	uint8_t body[ETH_MIN_FRAME_LEN - ETH_HDR_LEN] = {0};
	struct arp_repr a = {.op = op, .sha = ts_mac_port[0], .spa = spa, .tha = ts_mac_a,
			     .tpa = TS_HOST_A};
	assert_int_equal(arp_build(body, sizeof(body), &a), ARP_LEN);
	size_t n = ts_eth_build(frame, &ts_mac_a, &ts_mac_port[0], ETH_TYPE_ARP, body,
				sizeof(body));
	return ts_mbuf(frame, n, 0);
}

static void test_kernel_arp_reply_held_only_for_the_stacks_addresses(void **state)
{
	(void)state;
	struct rte_mbuf *m = kernel_arp(ARP_OP_REPLY, TS_ADDR0);
	assert_true(stack_kernel_frame_held(ts_s, m));
	rte_pktmbuf_free(m);
	m = kernel_arp(ARP_OP_REQUEST, TS_ADDR0);  /* the kernel resolving its own next hop */
	assert_false(stack_kernel_frame_held(ts_s, m));
	rte_pktmbuf_free(m);
	m = kernel_arp(ARP_OP_REPLY, IP4(10, 0, 0, 77)); /* an address only the kernel has */
	assert_false(stack_kernel_frame_held(ts_s, m));
	rte_pktmbuf_free(m);
}

static void test_own_loopback_datagram_never_goes_to_kernel(void **state)
{
	(void)state;
	uint8_t l4[UDP_HDR_LEN] = {0};
	struct udp_repr u = {.src_port = 1000, .dst_port = 999, .length = sizeof(l4)};
	assert_int_equal(udp_build(l4, sizeof(l4), &u), UDP_HDR_LEN);
	struct ts_ip ip = ts_ip_of(TS_ADDR0, TS_ADDR0, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = sizeof(l4);
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	struct rte_mbuf *m = ts_mbuf(dgram, n, 0);
	m->port = 0;
	m->l2_len = ETH_HDR_LEN;              /* a reused received mbuf may carry one */
	rte_pktmbuf_prepend(m, ETH_HDR_LEN);
	rte_pktmbuf_adj(m, ETH_HDR_LEN);
	stack_loopback_queue(ts_s, m);
	stack_loopback_drain(ts_s);
	assert_int_equal(nkframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_UDP_NO_PORT], 1);
}

static void test_bypass_rule_takes_echo_requests_and_counts(void **state)
{
	(void)state;
	struct acl_rule r;
	char *words[] = {"permit", "proto", "icmp", "src", "10.0.0.0/24"};
	char err[128];
	assert_int_equal(acl_rule_parse(5, words, NULL, NULL, &r, err, sizeof(err)), 0);
	struct bypass_set *set = bypass_set_create(&r, 1, 1);
	assert_non_null(set);
	ts_s->bypass = set;
	size_t len = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 7, 1, 16);
	ts_input_ip(0, dgram, len);
	assert_int_equal(nkframes, 1);
	assert_int_equal(ts_nframes, 0);      /* the kernel answers, not the stack */
	assert_int_equal(bypass_set_hits(set, 0), 1);
	assert_int_equal(ts_s->events[STACK_EV_KERNEL_BYPASS], 1);
	/* Another source: the stack's again. */
	len = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_B, TS_ADDR1, 7, 2, 16);
	ts_input_ip(1, dgram, len);
	assert_int_equal(ts_nframes, 1);
	assert_int_equal(bypass_set_hits(set, 0), 1);
	ts_s->bypass = NULL;
	bypass_set_free(set);
}

static void test_bypass_port_rule_never_matches_later_fragment(void **state)
{
	(void)state;
	struct acl_rule r;
	char *words[] = {"permit", "proto", "udp", "dport", "53"};
	char err[128];
	assert_int_equal(acl_rule_parse(5, words, NULL, NULL, &r, err, sizeof(err)), 0);
	struct acl_key k = {.proto = IP4_PROTO_UDP, .dport = rte_cpu_to_be_16(53), .l4 = 1};
	assert_true(bypass_rule_matches(&r, &k));
	k.l4 = 0;
	assert_false(bypass_rule_matches(&r, &k));
	k.l4 = 1;
	k.dport = rte_cpu_to_be_16(54);
	assert_false(bypass_rule_matches(&r, &k));
	k.dport = rte_cpu_to_be_16(53);
	k.proto = IP4_PROTO_TCP;
	assert_false(bypass_rule_matches(&r, &k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, ts_teardown)
		T(test_unknown_ethertype_goes_to_kernel_whole),
		T(test_unknown_ethertype_on_port_without_kernel_is_dropped),
		T(test_ipv6_for_another_address_goes_to_kernel_whole),
		T(test_tcp_syn_to_closed_port_goes_to_kernel_not_rst),
		T(test_udp_to_closed_port_goes_to_kernel_not_port_unreachable),
		T(test_gre_goes_to_kernel_not_protocol_unreachable),
		T(test_ospf_multicast_goes_to_kernel),
		T(test_echo_request_is_still_the_stacks),
		T(test_arp_request_answered_and_copied_to_kernel),
		T(test_kernel_arp_reply_held_only_for_the_stacks_addresses),
		T(test_own_loopback_datagram_never_goes_to_kernel),
		T(test_bypass_rule_takes_echo_requests_and_counts),
		T(test_bypass_port_rule_never_matches_later_fragment),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
