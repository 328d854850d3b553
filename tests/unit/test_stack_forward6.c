/* IPv6 forwarding between the two ports (src/ip6/ip6_forward.c): the hop limit (the only
 * byte a router changes), routes of every type, the ICMPv6 errors of a router (time
 * exceeded, no route, beyond scope, Packet Too Big with the next-hop MTU, address
 * unreachable after Neighbor Discovery failed) with their sources and quotes, the
 * packets no router passes on, and Redirects to a neighbour whose packet goes back out the
 * port it came in on (RFC 4861 §8.2). The fixture's IPv4 topology with IPv6 beside it:
 *   port 0  2001:db8:a::2/64 fe80::2   neighbour A 2001:db8:a::1
 *   port 1  2001:db8:b::2/64           neighbour B 2001:db8:b::1 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "stack/netcfg6.h"
#include "../../src/l2/neigh.h"
#include "../../src/wire/icmp6.h"
#include "../../src/wire/ipv6.h"

#define A6 {{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 1}}
#define A6_STACK {{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 2}}
#define B6 {{0x20, 0x01, 0x0d, 0xb8, 0, 0xb, [15] = 1}}
#define B6_STACK {{0x20, 0x01, 0x0d, 0xb8, 0, 0xb, [15] = 2}}
#define B6_UNKNOWN {{0x20, 0x01, 0x0d, 0xb8, 0, 0xb, [15] = 0x77}}
#define FAR6 {{0x20, 0x01, 0x0d, 0xb8, 0, 0x99, [15] = 1}}
#define LL_A {{0xfe, 0x80, [15] = 1}}
#define LL_STACK {{0xfe, 0x80, [15] = 2}}

static const struct ip6_addr a6 = A6, a6_stack = A6_STACK, b6 = B6, b6_stack = B6_STACK;
static const struct ip6_addr ll_a = LL_A, ll_stack = LL_STACK, far = FAR6;

static uint8_t dgram[IP6_HDR_LEN + 2000];
static uint8_t frame[ETH_HDR_LEN + sizeof(dgram)];

static int setup6(void **state)
{
	int rc = ts_setup(state);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a6_stack, 64, 0), 0);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &ll_stack, 64, 0), 0);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 1, &b6_stack, 64, 0), 0);
	struct inet_addr a = inet_addr_v6(&a6), b = inet_addr_v6(&b6);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &a, &ts_mac_a), 0);
	assert_int_equal(neigh_add_static(ts_s->neigh, 1, &b, &ts_mac_b), 0);
	ts_s->cfg.forwarding6 = true;
	return rc;
}

/* A datagram of payload_len pattern bytes under next header nh from src to dst. */
static size_t build6(const struct ip6_addr *src, const struct ip6_addr *dst, uint8_t hop_limit,
		     uint8_t nh, size_t payload_len)
{
	struct ip6_repr ip = {.tclass = 0x28, .flow = 0x12345, .payload_len = (uint16_t)payload_len,
			      .next_header = nh, .hop_limit = hop_limit, .src = *src, .dst = *dst};
	assert_int_equal(ip6_build(dgram, sizeof(dgram), &ip), IP6_HDR_LEN);
	for (size_t k = 0; k < payload_len; k++)
		dgram[IP6_HDR_LEN + k] = ts_pattern(k);
	return IP6_HDR_LEN + payload_len;
}

static void input6(uint16_t port, const struct eth_addr *eth_dst, size_t n)
{
	const struct eth_addr *src = port == 1 ? &ts_mac_b : &ts_mac_a;
	size_t len = ts_eth_build(frame, eth_dst, src, ETH_TYPE_IPV6, dgram, n);
	ts_input_frame(port, frame, len);
}

/* Frame i, an IPv6 datagram out of port to eth_dst: its header parsed into ip. */
static const uint8_t *expect_ip6(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
				 struct ip6_repr *ip)
{
	assert_true(i < ts_nframes);
	const struct ts_frame *f = &ts_frames[i];
	assert_int_equal(f->port, port);
	assert_memory_equal(f->data, eth_dst->b, ETH_ADDR_LEN);
	assert_int_equal(wire_get_be16(f->data + 12), ETH_TYPE_IPV6);
	const uint8_t *l3 = f->data + ETH_HDR_LEN;
	assert_int_equal(ip6_parse(l3, f->len - ETH_HDR_LEN, ip), WIRE_OK);
	return l3;
}

/* Frame i is dgram (n bytes) passed on out of port 1 to B: the hop limit one less, every
 * other byte as it came. */
static void expect_forwarded_to_b(unsigned i, size_t n)
{
	struct ip6_repr ip;
	const uint8_t *l3 = expect_ip6(i, 1, &ts_mac_b, &ip);
	assert_int_equal(ts_frames[i].len, ETH_HDR_LEN + n);
	assert_int_equal(ip.hop_limit, dgram[IP6_OFF_HOP_LIMIT] - 1);
	assert_memory_equal(l3, dgram, IP6_OFF_HOP_LIMIT);
	assert_memory_equal(l3 + IP6_OFF_SRC, dgram + IP6_OFF_SRC, n - IP6_OFF_SRC);
}

/* Frame i is an ICMPv6 error of type/code/rest out of port to eth_dst, from src to the
 * quoted datagram's source, quoting its start, with a valid checksum. */
static void expect_icmp6_error(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			       const struct ip6_addr *src, uint8_t type, uint8_t code,
			       uint32_t rest)
{
	struct ip6_repr ip;
	const uint8_t *l3 = expect_ip6(i, port, eth_dst, &ip);
	assert_int_equal(ip.next_header, IP6_NH_ICMPV6);
	assert_memory_equal(ip.src.b, src->b, 16);
	assert_memory_equal(ip.dst.b, dgram + IP6_OFF_SRC, 16);
	struct icmp6_repr ic;
	uint32_t pseudo = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, ip.payload_len);
	assert_int_equal(icmp6_parse(l3 + IP6_HDR_LEN, ip.payload_len, pseudo, true, &ic), WIRE_OK);
	assert_int_equal(ic.type, type);
	assert_int_equal(ic.code, code);
	assert_int_equal(ic.rest, rest);
	assert_true(ic.payload_len >= IP6_HDR_LEN);
	/* Quoted as dgram says (as received, unless the caller changed it). */
	assert_memory_equal(l3 + IP6_HDR_LEN + ICMP6_HDR_LEN, dgram, IP6_HDR_LEN);
}

/* A UDP datagram of payload_len bytes from A to dst, received on port 0; its length. */
static size_t from_a(const struct ip6_addr *dst, uint8_t hop_limit, size_t payload_len)
{
	size_t n = build6(&a6, dst, hop_limit, IP6_NH_UDP, payload_len);
	input6(0, &ts_mac_port[0], n);
	return n;
}

/* The only frame sent is the datagram of n bytes forwarded to B, and nothing was dropped. */
static void expect_only_forwarded(size_t n)
{
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
	ts_expect_no_drops();
}

/* The only frame sent is an ICMPv6 error to A from port 0's global address, and the
 * datagram was dropped as d. */
static void expect_only_error_to_a(uint8_t type, uint8_t code, uint32_t rest, enum stack_drop d)
{
	assert_int_equal(ts_nframes, 1);
	expect_icmp6_error(0, 0, &ts_mac_a, &a6_stack, type, code, rest);
	ts_expect_drop(d, 1);
}

/* A route of type to 2001:db8:99::/48 (FAR6's), via B for a GATEWAY one. */
static void add_far_route(enum route_type type)
{
	static const struct ip6_addr far_net = {{0x20, 0x01, 0x0d, 0xb8, 0, 0x99}};
	struct route r = {.prefix = inet_addr_v6(&far_net), .plen = 48, .type = type,
			  .port = NETCFG_PORT_ANY};
	if (type == ROUTE_GATEWAY)
		r.gateway = inet_addr_v6(&b6);
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
}

static void test_forward6_hop_limit_decremented_rest_untouched(void **state)
{
	(void)state;
	expect_only_forwarded(from_a(&b6, 64, 100));
	assert_int_equal(ts_s->events[STACK_EV_IP6_FORWARDED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP6_DELIVERED], 0);
	assert_int_equal(ts_s->ports[1].tx_packets, 1);
}

static void test_forward6_gateway_route_sends_to_gateway_mac(void **state)
{
	(void)state;
	add_far_route(ROUTE_GATEWAY);
	expect_only_forwarded(from_a(&far, 2, 10));
}

/* Hop-by-Hop options pass unexamined (RFC 8200 §4.3), an unknown option type among them. */
static void test_forward6_hop_by_hop_options_passed(void **state)
{
	(void)state;
	size_t n = build6(&a6, &b6, 64, IP6_NH_HOPOPTS, 16);
	static const uint8_t hbh[8] = {IP6_NH_NONE, 0, 0x3e, 4, 1, 2, 3, 4};
	memcpy(dgram + IP6_HDR_LEN, hbh, sizeof(hbh));
	input6(0, &ts_mac_port[0], n);
	expect_only_forwarded(n);
}

static void test_forward6_hop_limit_1_time_exceeded_from_ingress_address(void **state)
{
	(void)state;
	from_a(&b6, 1, 100);
	expect_only_error_to_a(ICMP6_TIME_EXCEEDED, ICMP6_TIMEX_HOP_LIMIT, 0,
			       STACK_DROP_IP6_HOP_LIMIT_EXPIRED);
	assert_int_equal(ts_s->events[STACK_EV_IP6_FORWARDED], 0);
}

static void test_forward6_hop_limit_1_to_our_address_delivered(void **state)
{
	(void)state;
	size_t n = build6(&a6, &b6_stack, 1, IP6_NH_NONE, 8);
	input6(0, &ts_mac_port[0], n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_IP6_DELIVERED], 1);
	ts_expect_no_drops();
}

static void test_forward6_no_route_unreachable_no_route(void **state)
{
	(void)state;
	from_a(&far, 64, 40);
	expect_only_error_to_a(ICMP6_DEST_UNREACH, ICMP6_UNREACH_NO_ROUTE, 0, STACK_DROP_IP6_NO_ROUTE);
}

static void test_forward6_unreachable_route_unreachable_no_route(void **state)
{
	(void)state;
	add_far_route(ROUTE_UNREACHABLE);
	from_a(&far, 64, 40);
	expect_only_error_to_a(ICMP6_DEST_UNREACH, ICMP6_UNREACH_NO_ROUTE, 0, STACK_DROP_IP6_NO_ROUTE);
}

static void test_forward6_blackhole_route_dropped_silently(void **state)
{
	(void)state;
	add_far_route(ROUTE_BLACKHOLE);
	from_a(&far, 64, 40);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP6_NO_ROUTE, 1);
}

/* RFC 8200 §5: never fragmented on the way; Packet Too Big names the route's MTU. */
static void test_forward6_over_route_mtu_packet_too_big_with_mtu(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v6(&b6), .plen = 128, .type = ROUTE_CONNECTED,
			  .port = 1, .mtu = 1280};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
	from_a(&b6, 64, 1281 - IP6_HDR_LEN);
	expect_only_error_to_a(ICMP6_PACKET_TOO_BIG, 0, 1280, STACK_DROP_IP6_TOO_BIG);
	/* Exactly the MTU passes. */
	ts_clear();
	size_t n = from_a(&b6, 64, 1280 - IP6_HDR_LEN);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
}

static void test_forward6_over_port_mtu_packet_too_big_with_port_mtu(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&ts_s->cfg, 1, 1400), 0);
	from_a(&b6, 64, 1401 - IP6_HDR_LEN);
	expect_only_error_to_a(ICMP6_PACKET_TOO_BIG, 0, 1400, STACK_DROP_IP6_TOO_BIG);
}

/* RFC 4291 §2.5.6, RFC 4443 §3.1 code 2, from our link-local address on A's link. */
static void test_forward6_link_local_source_beyond_scope(void **state)
{
	(void)state;
	struct inet_addr a = inet_addr_v6(&ll_a);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &a, &ts_mac_a), 0);
	size_t n = build6(&ll_a, &b6, 64, IP6_NH_UDP, 40);
	input6(0, &ts_mac_port[0], n);
	assert_int_equal(ts_nframes, 1);
	expect_icmp6_error(0, 0, &ts_mac_a, &ll_stack, ICMP6_DEST_UNREACH,
			   ICMP6_UNREACH_BEYOND_SCOPE, 0);
	ts_expect_drop(STACK_DROP_IP6_BEYOND_SCOPE, 1);
}

static void test_forward6_link_local_destination_not_forwarded(void **state)
{
	(void)state;
	static const struct ip6_addr ll_other = {{0xfe, 0x80, [15] = 9}};
	from_a(&ll_other, 64, 40);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP6_NOT_OURS, 1);
}

static void test_forward6_martians_dropped_silently(void **state)
{
	(void)state;
	static const struct ip6_addr loopback = {{[15] = 1}};
	static const struct ip6_addr mapped = {{[10] = 0xff, [11] = 0xff, 10, 0, 1, 1}};
	static const struct ip6_addr unspecified = {{0}};
	size_t n = build6(&a6, &loopback, 64, IP6_NH_UDP, 8);
	input6(0, &ts_mac_port[0], n);
	n = build6(&a6, &mapped, 64, IP6_NH_UDP, 8);
	input6(0, &ts_mac_port[0], n);
	/* A unicast destination in a link-layer multicast frame. */
	static const struct eth_addr mcast = {{0x33, 0x33, 0, 0, 0, 1}};
	n = build6(&a6, &b6, 64, IP6_NH_UDP, 8);
	input6(0, &mcast, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP6_BAD_DST, 3);
	n = build6(&unspecified, &b6, 64, IP6_NH_UDP, 8);
	input6(0, &ts_mac_port[0], n);
	/* Port 1's own address as the source, from port 0's wire: a spoof or a loop (found by
	 * fuzz_stack, which took it for our own datagram). */
	n = build6(&b6_stack, &b6, 64, IP6_NH_UDP, 8);
	input6(0, &ts_mac_port[0], n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP6_BAD_FIELD], 2);
	assert_int_equal(ts_s->events[STACK_EV_IP6_FORWARDED], 0);
}

static void test_forward6_off_drops_not_ours(void **state)
{
	(void)state;
	ts_s->cfg.forwarding6 = false;
	from_a(&b6, 64, 40);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP6_NOT_OURS, 1);
}

/* No error about an error (RFC 4443 §2.4(e.1)): a Time Exceeded in transit that expires. */
static void test_forward6_expiring_icmp6_error_gets_no_error(void **state)
{
	(void)state;
	size_t n = build6(&a6, &b6, 1, IP6_NH_ICMPV6, 48);
	dgram[IP6_HDR_LEN] = ICMP6_TIME_EXCEEDED;
	input6(0, &ts_mac_port[0], n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP6_HOP_LIMIT_EXPIRED], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP6_ERROR_SUPPRESSED], 1);
}

/* The next hop resolved by Neighbor Discovery: the packet waits behind a solicitation, and
 * when none is answered the source hears address unreachable (RFC 4443 §3.1 code 3). */
static void test_forward6_unresolved_next_hop_fails_address_unreachable(void **state)
{
	(void)state;
	static const struct ip6_addr unknown = B6_UNKNOWN;
	from_a(&unknown, 64, 40);
	assert_int_equal(ts_nframes, 1);
	struct ip6_repr ip;
	const uint8_t *l3 = expect_ip6(0, 1, &(struct eth_addr){{0x33, 0x33, 0xff, 0, 0, 0x77}},
				       &ip);
	assert_int_equal(ip.next_header, IP6_NH_ICMPV6);
	assert_int_equal(l3[IP6_HDR_LEN], ICMP6_NEIGHBOR_SOLICIT);
	assert_int_equal(ts_s->events[STACK_EV_IP6_FORWARDED], 1);
	ts_clear();
	ts_advance(10000);
	dgram[IP6_OFF_HOP_LIMIT]--; /* the error quotes the packet as it was queued to leave */
	unsigned unreach = 0;
	for (unsigned i = 0; i < ts_nframes; i++) {
		if (ts_frames[i].port != 0)
			continue;
		expect_icmp6_error(i, 0, &ts_mac_a, &a6_stack, ICMP6_DEST_UNREACH, ICMP6_UNREACH_ADDR,
				   0);
		unreach++;
	}
	assert_int_equal(unreach, 1);
	assert_int_equal(ts_s->drops[STACK_DROP_NEIGH_FAILED], 1);
}

/* A route to 2001:db8:99::/48 back out port 0, via gw with MAC mac there. */
static void add_far_route_on_port0(const struct ip6_addr *gw, const struct eth_addr *mac)
{
	static const struct ip6_addr far_net = {{0x20, 0x01, 0x0d, 0xb8, 0, 0x99}};
	struct inet_addr g = inet_addr_v6(gw);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &g, mac), 0);
	struct route r = {.prefix = inet_addr_v6(&far_net), .plen = 48, .type = ROUTE_GATEWAY,
			  .port = 0, .gateway = g};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
}

/* RFC 4861 §8.2: neighbour A's packet leaves by the port it came in on, towards a router on
 * A's own link: A is told (a Redirect from our link-local address with the target's MAC and
 * the packet quoted), and the packet still goes on. */
static void test_forward6_same_port_redirects_sender_to_better_router(void **state)
{
	(void)state;
	static const struct ip6_addr better = {{0xfe, 0x80, [15] = 5}};
	static const struct eth_addr better_mac = {{0x02, 0, 0, 0, 0, 0x55}};
	add_far_route_on_port0(&better, &better_mac);
	size_t n = from_a(&far, 64, 100);
	assert_int_equal(ts_nframes, 2);
	struct ip6_repr ip;
	const uint8_t *l3 = expect_ip6(0, 0, &ts_mac_a, &ip);
	assert_int_equal(ip.hop_limit, 255);
	assert_true(ip6_is_link_local(&ip.src)); /* the port's (§8.2) */
	assert_memory_equal(ip.dst.b, a6.b, 16);
	const uint8_t *msg = l3 + IP6_HDR_LEN;
	uint32_t pseudo = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, ip.payload_len);
	struct icmp6_repr ic;
	assert_int_equal(icmp6_parse(msg, ip.payload_len, pseudo, true, &ic), WIRE_OK);
	struct nd_repr nd;
	assert_int_equal(nd_parse(msg, ip.payload_len, &ip, &nd), WIRE_OK);
	assert_int_equal(nd.type, ICMP6_REDIRECT);
	assert_memory_equal(nd.target.b, better.b, 16);
	assert_memory_equal(nd.redirect_dst.b, far.b, 16);
	assert_true(nd.has_target_lladdr);
	assert_memory_equal(nd.target_lladdr.b, better_mac.b, 6);
	/* §4.6.3: the Redirected Header option quotes the packet in whole 8-byte units. */
	assert_int_equal(msg[48], ND_OPT_REDIRECTED);
	assert_int_equal(msg[49] * 8, 8 + (n & ~(size_t)7));
	assert_memory_equal(msg + 56, dgram, IP6_HDR_LEN);
	l3 = expect_ip6(1, 0, &better_mac, &ip);
	assert_int_equal(ip.hop_limit, 63);
	assert_int_equal(ts_s->events[STACK_EV_ND_TX_REDIRECT], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP6_FORWARDED], 1);
}

/* A better router known only by a global address cannot be a Redirect's target (§8.2). */
static void test_forward6_same_port_global_gateway_no_redirect(void **state)
{
	(void)state;
	static const struct ip6_addr gw = {{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 9}};
	static const struct eth_addr gw_mac = {{0x02, 0, 0, 0, 0, 0x59}};
	add_far_route_on_port0(&gw, &gw_mac);
	from_a(&far, 64, 100);
	assert_int_equal(ts_nframes, 1);
	struct ip6_repr ip;
	expect_ip6(0, 0, &gw_mac, &ip);
	assert_int_equal(ts_s->events[STACK_EV_ND_TX_REDIRECT], 0);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup6, ts_teardown)
	const struct CMUnitTest tests[] = {
		T(test_forward6_hop_limit_decremented_rest_untouched),
		T(test_forward6_gateway_route_sends_to_gateway_mac),
		T(test_forward6_hop_by_hop_options_passed),
		T(test_forward6_hop_limit_1_time_exceeded_from_ingress_address),
		T(test_forward6_hop_limit_1_to_our_address_delivered),
		T(test_forward6_no_route_unreachable_no_route),
		T(test_forward6_unreachable_route_unreachable_no_route),
		T(test_forward6_blackhole_route_dropped_silently),
		T(test_forward6_over_route_mtu_packet_too_big_with_mtu),
		T(test_forward6_over_port_mtu_packet_too_big_with_port_mtu),
		T(test_forward6_link_local_source_beyond_scope),
		T(test_forward6_link_local_destination_not_forwarded),
		T(test_forward6_martians_dropped_silently),
		T(test_forward6_off_drops_not_ours),
		T(test_forward6_expiring_icmp6_error_gets_no_error),
		T(test_forward6_unresolved_next_hop_fails_address_unreachable),
		T(test_forward6_same_port_redirects_sender_to_better_router),
		T(test_forward6_same_port_global_gateway_no_redirect),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
