/* Forwarding between the two ports (src/ip4/ip4_forward.c, ip4_output.c, link.c): TTL and
 * its incremental checksum update, the ICMP errors of a router (time exceeded, net and host
 * unreachable, fragmentation needed) with their sources and quotes, fragmentation to the
 * route MTU, next hops resolved by ARP (queued, released, or failed on the virtual clock),
 * and the datagrams that must not cause an error or must not be forwarded at all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"

#define FAR_NET IP4(192, 168, 0, 0)     /* a /16 behind B */
#define FAR_HOST IP4(192, 168, 5, 5)
#define UNKNOWN_HOST IP4(10, 0, 1, 77)  /* on port 1's subnet, not in the neighbour table */

static uint8_t dgram[IP4_MAX_LEN];
static uint8_t want[IP4_MAX_LEN];
static uint8_t buf[IP4_MAX_LEN];
static uint8_t payload[IP4_MAX_LEN];

/* A UDP-protocol datagram of payload_len pattern bytes; returns its length. */
static size_t build(uint32_t src, uint32_t dst, uint8_t ttl, bool df, size_t payload_len)
{
	for (size_t k = 0; k < payload_len; k++)
		payload[k] = ts_pattern(k);
	struct ts_ip ip = ts_ip_of(src, dst, IP4_PROTO_UDP);
	ip.ttl = ttl;
	ip.df = df;
	ip.tos = 0x28;
	ip.id = 0x4321;
	ip.payload = payload;
	ip.len = payload_len;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

/* dgram as a router passes it on: TTL one less, checksum recomputed in full. */
static void expected_forwarded(size_t n)
{
	memcpy(want, dgram, n);
	want[IP4_OFF_TTL]--;
	ts_ip_fix_csum(want);
}

static void add_gateway_route(uint32_t prefix, uint8_t plen, uint32_t gw, uint16_t mtu)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = ROUTE_GATEWAY,
			  .port = NETCFG_PORT_ANY, .gateway = inet_addr_v4(gw), .mtu = mtu};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
}

/* Frame i is dgram forwarded out of port 1 to B, byte for byte as expected_forwarded. */
static void expect_forwarded_to_b(unsigned i, size_t n)
{
	struct ts_pkt p;
	expected_forwarded(n);
	ts_parse(i, &p);
	assert_true(p.is_ip);
	assert_int_equal(p.f->port, 1);
	assert_memory_equal(p.eth.dst.b, ts_mac_b.b, ETH_ADDR_LEN);
	assert_int_equal(p.ip.total_len, n);
	assert_memory_equal(p.l3, want, n);
}

/* --- TTL and checksum --- */

static void test_forward_ttl_decremented_checksum_still_verifies(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 64, true, 100);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(p.ip.ttl, 63);
	assert_int_equal(wire_csum(p.l3, p.ip.hdr_len), 0);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_TX], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_DELIVERED], 0);
	assert_int_equal(ts_s->ports[1].tx_packets, 1);
	assert_int_equal(ts_s->ports[1].tx_bytes, ETH_HDR_LEN + n);
	ts_expect_no_drops();
}

/* RFC 1624: the incrementally updated checksum equals wire_csum over the new header, over
 * every TTL and many other field values (so every carry and wrap is exercised). */
static void test_forward_incremental_checksum_matches_full_recompute(void **state)
{
	(void)state;
	for (unsigned k = 0; k < 4000; k++) {
		ts_clear();
		uint8_t proto = (uint8_t)(k * 37u);
		if (proto == IP4_PROTO_ICMP)
			proto = 0xfe;   /* the capture parser would check it as ICMP */
		struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_HOST_B, proto);
		ip.ttl = (uint8_t)(2 + k % 254);
		ip.id = (uint16_t)(k * 7919u);
		ip.tos = (uint8_t)(k * 13u);
		ip.df = k & 1;
		ip.payload = payload;
		ip.len = k % 61;
		memset(payload, (int)(k & 0xff), ip.len);
		size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
		ts_input_ip(0, dgram, n);
		assert_int_equal(ts_nframes, 1);
		struct ts_pkt p;
		ts_parse(0, &p);
		memcpy(buf, p.l3, IP4_HDR_MIN_LEN);
		uint16_t got = wire_get_be16(buf + IP4_OFF_CSUM);
		wire_put_be16(buf + IP4_OFF_CSUM, 0);
		assert_int_equal(got, wire_csum(buf, IP4_HDR_MIN_LEN));
		assert_int_equal(p.ip.ttl, ip.ttl - 1);
	}
	ts_expect_no_drops();
}

static void test_forward_options_kept_checksum_verifies(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_RA, 4, 0, 0, IP4_OPT_NOP, IP4_OPT_NOP,
				       IP4_OPT_NOP, IP4_OPT_EOL};
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_HOST_B, IP4_PROTO_UDP);
	ip.opts = opts;
	ip.opt_len = sizeof(opts);
	ip.payload = payload;
	ip.len = 20;
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
}

static void test_forward_ttl_1_to_our_address_delivered(void **state)
{
	(void)state;
	uint8_t icmp[32];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR1, IP4_PROTO_ICMP);
	ip.ttl = 1;
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 1, 1, 8);
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR1, TS_HOST_A, IP4_PROTO_ICMP, &p);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REPLY);
	ts_expect_no_drops();
}

static void test_forward_gateway_route_sends_to_gateway_mac(void **state)
{
	(void)state;
	add_gateway_route(FAR_NET, 16, TS_HOST_B, 0);
	size_t n = build(TS_HOST_A, FAR_HOST, 64, false, 40);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
}

static void test_forward_default_route_used_when_nothing_else_matches(void **state)
{
	(void)state;
	add_gateway_route(0, 0, TS_HOST_B, 0);
	size_t n = build(TS_HOST_A, IP4(8, 8, 8, 8), 64, false, 40);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
}

static void test_forward_back_out_of_ingress_port(void **state)
{
	(void)state;
	ts_static_neigh(0, IP4(10, 0, 0, 5), &ts_mac_other);
	size_t n = build(TS_HOST_A, IP4(10, 0, 0, 5), 64, false, 40);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_other, TS_HOST_A, IP4(10, 0, 0, 5), IP4_PROTO_UDP, &p);
	assert_int_equal(p.ip.ttl, 63);
}

/* --- time exceeded --- */

static void test_forward_ttl_1_time_exceeded_from_ingress_address(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 1, false, 64);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	/* The quote is the datagram as received (TTL 1, not decremented). */
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
	ts_expect_drop(STACK_DROP_IP_TTL_EXPIRED, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_TIME_EXCEEDED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 0);
	assert_int_equal(ts_s->ports[1].tx_packets, 0);
}

static void test_forward_ttl_0_time_exceeded(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 0, false, 64);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
}

static void test_forward_ttl_1_from_port1_time_exceeded_from_port1_address(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_B, TS_HOST_A, 1, false, 64);
	ts_input_ip(1, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 1, &ts_mac_b, TS_ADDR1, TS_HOST_B, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
}

/* RFC 1812 §4.3.2.4: the source is the address of the interface the datagram came in on,
 * even when the error leaves by another one. */
static void test_forward_time_exceeded_source_is_ingress_when_route_back_differs(void **state)
{
	(void)state;
	add_gateway_route(FAR_NET, 16, TS_HOST_A, 0);
	size_t n = build(FAR_HOST, TS_HOST_A, 1, false, 64);
	ts_input_ip(1, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR1, FAR_HOST, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
}

static void test_forward_time_exceeded_quote_capped_at_576_bytes(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 1, false, 1400);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(p.ip.total_len, 576);
}

/* --- unreachable --- */

static void test_forward_no_route_net_unreachable(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, IP4(192, 0, 2, 1), 64, false, 32);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_NET, 0, dgram, n);
	ts_expect_drop(STACK_DROP_IP_NO_ROUTE, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_UNREACH], 1);
}

static void test_forward_unreachable_route_net_unreachable(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v4(IP4(192, 0, 2, 0)), .plen = 24, .type = ROUTE_UNREACHABLE};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
	add_gateway_route(0, 0, TS_HOST_B, 0);
	size_t n = build(TS_HOST_A, IP4(192, 0, 2, 1), 64, false, 32);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_NET, 0, dgram, n);
	ts_expect_drop(STACK_DROP_IP_NO_ROUTE, 1);
}

static void test_forward_blackhole_route_dropped_silently(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v4(IP4(192, 0, 2, 0)), .plen = 24, .type = ROUTE_BLACKHOLE};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
	size_t n = build(TS_HOST_A, IP4(192, 0, 2, 1), 64, false, 32);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_NO_ROUTE, 1);
}

static void test_forward_egress_port_down_dropped_link_down(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_up(&ts_s->cfg, 1, false), 0);
	size_t n = build(TS_HOST_A, TS_HOST_B, 64, false, 32);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_TX_LINK_DOWN, 1);
}

/* --- MTU --- */

static void test_forward_df_over_route_mtu_frag_needed_with_mtu(void **state)
{
	(void)state;
	add_gateway_route(FAR_NET, 16, TS_HOST_B, 1000);
	size_t n = build(TS_HOST_A, FAR_HOST, 64, true, 1380);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	/* The TTL was decremented before the MTU check (RFC 1812 §4.3.2.3 allows it). */
	expected_forwarded(n);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_FRAG_NEEDED, 1000, want, n);
	ts_expect_drop(STACK_DROP_IP_FRAG_NEEDED, 1);
	assert_int_equal(ts_s->ports[1].tx_packets, 0);
}

static void test_forward_df_over_port_mtu_frag_needed_with_port_mtu(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&ts_s->cfg, 1, 1280), 0);
	size_t n = build(TS_HOST_A, TS_HOST_B, 64, true, 1380);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expected_forwarded(n);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_FRAG_NEEDED, 1280, want, n);
}

static void test_forward_route_mtu_above_port_mtu_uses_port_mtu(void **state)
{
	(void)state;
	/* A jumbo link in, a 1500-byte link out, a route that claims 9000. */
	assert_int_equal(netcfg_iface_set_mtu(&ts_s->cfg, 0, 9000), 0);
	add_gateway_route(FAR_NET, 16, TS_HOST_B, 9000);
	size_t n = build(TS_HOST_A, FAR_HOST, 64, true, 1600);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expected_forwarded(n);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_FRAG_NEEDED, TS_MTU, want, n);
}

static void test_forward_exactly_mtu_sent_whole(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 64, true, TS_MTU - IP4_HDR_MIN_LEN);
	assert_int_equal(n, TS_MTU);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expect_forwarded_to_b(0, n);
}

static void test_forward_no_df_fragmented_to_route_mtu_and_reassembles(void **state)
{
	(void)state;
	add_gateway_route(FAR_NET, 16, TS_HOST_B, 1000);
	size_t plen = 1460;           /* a full 1480-byte datagram arriving on port 0 */
	size_t n = build(TS_HOST_A, FAR_HOST, 64, false, plen);
	ts_input_ip(0, dgram, n);
	unsigned frames = (unsigned)((plen + 975) / 976);
	assert_int_equal(ts_nframes, frames);
	struct ip4_repr h;
	assert_int_equal(ts_reassemble(0, frames, 1000, buf, sizeof(buf), &h), plen);
	assert_memory_equal(buf, payload, plen);
	assert_int_equal(h.ttl, 63);
	assert_int_equal(h.id, 0x4321);
	assert_int_equal(h.tos, 0x28);
	assert_int_equal(h.src, TS_HOST_A);
	assert_int_equal(h.dst, FAR_HOST);
	assert_int_equal(h.proto, IP4_PROTO_UDP);
	assert_false(h.df);
	for (unsigned i = 0; i < frames; i++) {
		struct ts_pkt p;
		ts_parse(i, &p);
		assert_int_equal(p.f->port, 1);
		assert_memory_equal(p.eth.dst.b, ts_mac_b.b, ETH_ADDR_LEN);
	}
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGMENTED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGS_CREATED], frames);
	assert_int_equal(ts_s->events[STACK_EV_IP_TX], frames);
	ts_expect_no_drops();
}

static void test_forward_fragment_refragmented_keeps_offsets_and_mf(void **state)
{
	(void)state;
	add_gateway_route(FAR_NET, 16, TS_HOST_B, 576);
	/* The first fragment (MF, 1376 payload bytes) of a bigger datagram. */
	size_t n = build(TS_HOST_A, FAR_HOST, 64, false, 1376);
	wire_put_be16(dgram + IP4_OFF_FRAG, IP4_FLAG_MF | 0);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 3);
	size_t pos = 0;
	for (unsigned i = 0; i < 3; i++) {
		struct ts_pkt p;
		ts_parse(i, &p);
		assert_true(p.ip.total_len <= 576);
		assert_int_equal(p.ip.frag_off, pos);
		assert_true(p.ip.mf);   /* the last piece keeps the original's MF */
		assert_memory_equal(p.l4, payload + pos, p.l4_len);
		pos += p.l4_len;
	}
	assert_int_equal(pos, 1376);
}

/* --- next hop resolution --- */

static void test_forward_unresolved_next_hop_queued_behind_arp_request(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	for (unsigned i = 0; i < 3; i++) {
		size_t n = build(TS_HOST_A, UNKNOWN_HOST, 64, false, 40 + i);
		ts_input_ip(0, dgram, n);
	}
	assert_int_equal(ts_nframes, 1);
	ts_expect_arp(0, 1, ARP_OP_REQUEST, &eth_addr_broadcast, TS_ADDR1, &ts_mac_zero,
		      UNKNOWN_HOST);
	struct neigh_info ni;
	assert_int_equal(neigh_lookup(ts_s->neigh, 1, INET_ADDR_V4(UNKNOWN_HOST), &ni), 0);
	assert_int_equal(ni.queued, 3);
	ts_expect_no_drops();
}

static void test_forward_arp_reply_releases_queue_in_order(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	for (unsigned i = 0; i < 3; i++) {
		size_t n = build(TS_HOST_A, UNKNOWN_HOST, 64, false, 40 + i);
		ts_input_ip(0, dgram, n);
	}
	ts_clear();
	struct arp_repr a = {.op = ARP_OP_REPLY, .sha = ts_mac_other, .spa = UNKNOWN_HOST,
			     .tha = ts_mac_port[1], .tpa = TS_ADDR1};
	ts_input_arp(1, &ts_mac_port[1], &a);
	assert_int_equal(ts_nframes, 3);
	for (unsigned i = 0; i < 3; i++) {
		struct ts_pkt p;
		ts_expect_ip(i, 1, &ts_mac_other, TS_HOST_A, UNKNOWN_HOST, IP4_PROTO_UDP, &p);
		assert_int_equal(p.l4_len, 40 + i);
		assert_int_equal(p.ip.ttl, 63);
	}
	ts_expect_no_drops();
}

/* The next hop never answers: after retrans_ms x mcast_probes every queued packet is dropped
 * and its source gets a host unreachable from the address of the port it came in on. */
static void test_forward_next_hop_failure_host_unreachable_to_source(void **state)
{
	(void)state;
	struct neigh_params np;
	neigh_get_params(ts_s->neigh, &np);
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	static uint8_t sent[3][128];
	size_t len[3];
	for (unsigned i = 0; i < 3; i++) {
		len[i] = build(TS_HOST_A, UNKNOWN_HOST, 64, false, 40 + i);
		ts_input_ip(0, dgram, len[i]);
		expected_forwarded(len[i]);
		memcpy(sent[i], want, len[i]);
	}
	ts_advance((uint64_t)np.retrans_ms * np.mcast_probes - 1);
	assert_int_equal(ts_nframes, np.mcast_probes);
	for (unsigned i = 0; i < np.mcast_probes; i++)
		ts_expect_arp(i, 1, ARP_OP_REQUEST, &eth_addr_broadcast, TS_ADDR1, &ts_mac_zero,
			      UNKNOWN_HOST);
	ts_expect_no_drops();
	ts_advance(1);
	assert_int_equal(ts_nframes, np.mcast_probes + 3);
	for (unsigned i = 0; i < 3; i++)
		ts_expect_icmp_error(np.mcast_probes + i, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A,
				     ICMP4_DEST_UNREACH, ICMP4_UNREACH_HOST, 0, sent[i], len[i]);
	ts_expect_drop(STACK_DROP_NEIGH_FAILED, 3);
	/* While FAILED, a new packet is refused at once, with the same answer. */
	ts_clear();
	size_t n = build(TS_HOST_A, UNKNOWN_HOST, 64, false, 50);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	expected_forwarded(n);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_HOST, 0, want, n);
}

/* Packets waiting for ARP on several next hops are freed by stack_destroy (the teardown
 * counts). */
static void test_forward_packets_queued_at_destroy_are_freed(void **state)
{
	(void)state;
	ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
	for (unsigned h = 0; h < 4; h++)
		for (unsigned i = 0; i < 5; i++) {
			size_t n = build(TS_HOST_A, UNKNOWN_HOST + h, 64, false, 1000);
			ts_input_ip(0, dgram, n);
		}
	assert_int_equal(ts_nframes, 4);
	ts_expect_no_drops();
}

/* --- no errors about errors, fragments, broadcasts --- */

static void test_forward_ttl_expired_icmp_error_gets_no_error(void **state)
{
	(void)state;
	uint8_t quoted[28], icmp[64];
	size_t qn = build(TS_HOST_B, TS_HOST_A, 64, false, 8);
	memcpy(quoted, dgram, qn);
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_HOST_B, IP4_PROTO_ICMP);
	ip.ttl = 1;
	ip.payload = icmp;
	ip.len = ts_icmp_build(icmp, sizeof(icmp), ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0,
			       quoted, qn);
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_TTL_EXPIRED], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED], 1);
}

static void test_forward_ttl_expired_echo_request_gets_time_exceeded(void **state)
{
	(void)state;
	uint8_t icmp[64];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_HOST_B, IP4_PROTO_ICMP);
	ip.ttl = 1;
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 7, 7, 16);
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
}

static void test_forward_ttl_expired_non_first_fragment_gets_no_error(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 1, false, 64);
	wire_put_be16(dgram + IP4_OFF_FRAG, IP4_FLAG_MF | 185);  /* offset 1480 */
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_TTL_EXPIRED], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED], 1);
}

static void test_forward_ttl_expired_first_fragment_gets_time_exceeded(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_HOST_B, 1, false, 64);
	wire_put_be16(dgram + IP4_OFF_FRAG, IP4_FLAG_MF);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_TTL, 0, dgram, n);
}

static void test_forward_no_route_non_first_fragment_gets_no_error(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, IP4(192, 0, 2, 1), 64, false, 64);
	wire_put_be16(dgram + IP4_OFF_FRAG, 185);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_NO_ROUTE], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED], 1);
}

static void test_forward_other_subnet_broadcast_delivered_not_forwarded(void **state)
{
	(void)state;
	size_t n = build(TS_HOST_A, TS_BCAST1, 64, false, 16);
	dgram[IP4_OFF_PROTO] = 253; /* RFC 3692 experimental: delivered to no transport */
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 0);
	ts_expect_drop(STACK_DROP_IP_UNKNOWN_PROTO, 1);
}

static void test_forward_time_exceeded_rate_limited_past_burst(void **state)
{
	(void)state;
	struct stack_params p;
	ts_params(&p);
	p.icmp_rate = 10;
	p.icmp_burst = 3;
	ts_restart(&p, true);
	size_t n = build(TS_HOST_A, TS_HOST_B, 1, false, 16);
	for (unsigned i = 0; i < 5; i++)
		ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 3);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_RATE_LIMITED], 2);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_TTL_EXPIRED], 5);
	ts_advance(200);
	ts_input_ip(0, dgram, n);
	ts_input_ip(0, dgram, n);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 5);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_RATE_LIMITED], 3);
}

/* --- martians --- */

static void expect_martian_dst(uint32_t dst)
{
	add_gateway_route(0, 0, TS_HOST_B, 0);
	size_t n = build(TS_HOST_A, dst, 64, false, 16);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_DST, 1);
}

static void test_forward_zero_net_destination_dropped_bad_dst(void **state)
{
	(void)state;
	expect_martian_dst(IP4(0, 1, 2, 3));
}

static void test_forward_class_e_destination_dropped_bad_dst(void **state)
{
	(void)state;
	expect_martian_dst(IP4(240, 0, 0, 1));
}

/* RFC 1812 §5.3.7: no forwarding from a source that is not one host. 127/8, multicast and
 * 255.255.255.255 already fail input (ip.bad_field); network 0, class E and the broadcast
 * address of a connected subnet must not pass either. */
static void expect_martian_src_not_forwarded(uint32_t src)
{
	size_t n = build(src, TS_HOST_B, 64, false, 16);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 0);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 1);
}

static void test_forward_zero_net_source_not_forwarded(void **state)
{
	(void)state;
	expect_martian_src_not_forwarded(0);
}

static void test_forward_class_e_source_not_forwarded(void **state)
{
	(void)state;
	expect_martian_src_not_forwarded(IP4(250, 1, 2, 3));
}

static void test_forward_subnet_broadcast_source_not_forwarded(void **state)
{
	(void)state;
	expect_martian_src_not_forwarded(TS_BCAST0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, ts_setup, ts_teardown)
#define TB(f) cmocka_unit_test_setup_teardown(f, ts_setup_bare, ts_teardown)
		T(test_forward_ttl_decremented_checksum_still_verifies),
		T(test_forward_incremental_checksum_matches_full_recompute),
		T(test_forward_options_kept_checksum_verifies),
		T(test_forward_ttl_1_to_our_address_delivered),
		T(test_forward_gateway_route_sends_to_gateway_mac),
		T(test_forward_default_route_used_when_nothing_else_matches),
		T(test_forward_back_out_of_ingress_port),
		T(test_forward_ttl_1_time_exceeded_from_ingress_address),
		T(test_forward_ttl_0_time_exceeded),
		T(test_forward_ttl_1_from_port1_time_exceeded_from_port1_address),
		T(test_forward_time_exceeded_source_is_ingress_when_route_back_differs),
		T(test_forward_time_exceeded_quote_capped_at_576_bytes),
		T(test_forward_no_route_net_unreachable),
		T(test_forward_unreachable_route_net_unreachable),
		T(test_forward_blackhole_route_dropped_silently),
		T(test_forward_egress_port_down_dropped_link_down),
		T(test_forward_df_over_route_mtu_frag_needed_with_mtu),
		T(test_forward_df_over_port_mtu_frag_needed_with_port_mtu),
		T(test_forward_route_mtu_above_port_mtu_uses_port_mtu),
		T(test_forward_exactly_mtu_sent_whole),
		T(test_forward_no_df_fragmented_to_route_mtu_and_reassembles),
		T(test_forward_fragment_refragmented_keeps_offsets_and_mf),
		TB(test_forward_unresolved_next_hop_queued_behind_arp_request),
		TB(test_forward_arp_reply_releases_queue_in_order),
		TB(test_forward_next_hop_failure_host_unreachable_to_source),
		TB(test_forward_packets_queued_at_destroy_are_freed),
		T(test_forward_ttl_expired_icmp_error_gets_no_error),
		T(test_forward_ttl_expired_echo_request_gets_time_exceeded),
		T(test_forward_ttl_expired_non_first_fragment_gets_no_error),
		T(test_forward_ttl_expired_first_fragment_gets_time_exceeded),
		T(test_forward_no_route_non_first_fragment_gets_no_error),
		T(test_forward_other_subnet_broadcast_delivered_not_forwarded),
		T(test_forward_time_exceeded_rate_limited_past_burst),
		T(test_forward_zero_net_destination_dropped_bad_dst),
		T(test_forward_class_e_destination_dropped_bad_dst),
		T(test_forward_zero_net_source_not_forwarded),
		T(test_forward_class_e_source_not_forwarded),
		T(test_forward_subnet_broadcast_source_not_forwarded),
#undef TB
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
