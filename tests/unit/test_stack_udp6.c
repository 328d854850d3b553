/* UDP over IPv6 through the whole stack (src/udp with src/ip6): delivery with the source and
 * Traffic Class, the checksum that IPv6 makes mandatory (RFC 8200 §8.1), ICMPv6 port
 * unreachable for a closed port (RFC 4443 §3.1), datagrams built and fragmented at the
 * source (§4.5), ICMPv6 errors on connected sockets (ECONNREFUSED; Packet Too Big's EMSGSIZE
 * and path MTU, RFC 8201), and the dual-stack socket table: :: hears IPv4 unless IPv6-only,
 * and the bind conflicts across families are Linux's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "l2/neigh.h"
#include "stack/netcfg6.h"
#include "test_stack_util.h"
#include "udp/udp.h"
#include "../../src/wire/icmp6.h"
#include "../../src/wire/ipv6.h"
#include "../../src/wire/udp.h"

#define PORT_S 5000   /* our server port */
#define PORT_P 7000   /* the peer's port */

/* The stack's 2001:db8::2/64 on port 0 and the peer 2001:db8::1 (neighbour A). */
static const struct inet_addr local6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
static const struct inet_addr peer6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
static const struct inet_addr any6;

static uint8_t dgram[70000];
static uint8_t frame[ETH_HDR_LEN + 2000];
static uint8_t payload[70000];
static uint8_t buf[70000];

static int setup6(void **state)
{
	int rc = ts_setup(state);
	struct ip6_addr a = inet_addr_to_v6(&local6);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a, 64, 0), 0);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &peer6, &ts_mac_a), 0);
	return rc;
}

static void fill_pattern(size_t len)
{
	for (size_t k = 0; k < len; k++)
		payload[k] = ts_pattern(k);
}

static struct udp_sock *bind6(const struct inet_addr *a, uint16_t port, unsigned flags)
{
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind_inet(ts_s, a, port, 0, flags, NULL, &u), 0);
	return u;
}

/* An IPv6 datagram from the peer to us carrying l4[0..len) (next header nh) into dgram. */
static size_t ip6_wrap(uint8_t nh, size_t len)
{
	struct ip6_repr ip = {.tclass = 0x28, .payload_len = (uint16_t)len, .next_header = nh,
			      .hop_limit = 61, .src = inet_addr_to_v6(&peer6),
			      .dst = inet_addr_to_v6(&local6)};
	assert_int_equal(ip6_build(dgram, sizeof(dgram), &ip), IP6_HDR_LEN);
	return IP6_HDR_LEN + len;
}

/* A UDP datagram sport → dport with len pattern bytes from the peer, its checksum right
 * (or csum when non-zero... or zero when zero_csum). Returns the IPv6 datagram's length. */
static size_t udp6_dgram(uint16_t sport, uint16_t dport, size_t len, bool zero_csum)
{
	uint8_t *l4 = dgram + IP6_HDR_LEN;
	struct udp_repr r = {.src_port = sport, .dst_port = dport, .length = (uint16_t)(8 + len)};
	assert_int_equal(udp_build(l4, UDP_HDR_LEN, &r), UDP_HDR_LEN);
	for (size_t k = 0; k < len; k++)
		l4[UDP_HDR_LEN + k] = ts_pattern(k);
	if (!zero_csum) {
		uint32_t sum = inet_addr_csum_pseudo(&peer6, &local6, IP6_NH_UDP,
						     (uint32_t)(UDP_HDR_LEN + len));
		uint16_t c = wire_csum_finish(wire_csum_add(sum, l4, UDP_HDR_LEN + len));
		wire_put_be16(l4 + UDP_OFF_CSUM, c == 0 ? 0xffff : c);
	}
	return ip6_wrap(IP6_NH_UDP, UDP_HDR_LEN + len);
}

static void input6(size_t n)
{
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV6, dgram, n);
	ts_input_frame(0, frame, fl);
}

/* Frame i: an IPv6 packet out of port 0 to A, from local6 to peer6. Its header into *ip;
 * returns its payload. */
static const uint8_t *expect_ip6(unsigned i, struct ip6_repr *ip)
{
	const uint8_t *after = ts_expect_ip6(i, 0, &ts_mac_a, ip);
	assert_memory_equal(ip->src.b, local6.b, 16);
	assert_memory_equal(ip->dst.b, peer6.b, 16);
	return after;
}

/* Frames [0, n) are one datagram's fragments of at most mtu bytes each (RFC 8200 §4.5):
 * its reassembled UDP datagram into buf; returns its length. */
static size_t reassemble6(unsigned n, uint16_t mtu)
{
	size_t total = 0;
	uint32_t id = 0;
	for (unsigned i = 0; i < n; i++) {
		struct ip6_repr ip;
		const uint8_t *p = expect_ip6(i, &ip);
		assert_true(IP6_HDR_LEN + ip.payload_len <= mtu);
		struct ip6_ext_info ext;
		assert_int_equal(ip6_ext_walk(p - IP6_HDR_LEN, IP6_HDR_LEN + ip.payload_len, false,
					      &ext),
				 WIRE_OK);
		assert_true(ext.has_frag);
		assert_int_equal(ext.proto, IP6_NH_UDP);
		if (i == 0)
			id = ext.frag.id;
		assert_int_equal(ext.frag.id, id);
		assert_int_equal(ext.frag.offset, total);
		assert_int_equal(ext.frag.more, i + 1 < n);
		size_t len = IP6_HDR_LEN + ip.payload_len - ext.l4_off;
		memcpy(buf + total, p - IP6_HDR_LEN + ext.l4_off, len);
		total += len;
	}
	return total;
}

/* The UDP datagram l4[0..len) we sent is well formed: ports, length, a non-zero checksum
 * that verifies, len - 8 pattern bytes. */
static void expect_udp6(const uint8_t *l4, size_t len, uint16_t sport, uint16_t dport)
{
	struct udp_repr r;
	assert_int_equal(udp_parse(l4, len, &r), WIRE_OK);
	assert_int_equal(r.src_port, sport);
	assert_int_equal(r.dst_port, dport);
	assert_int_equal(r.length, len);
	assert_int_not_equal(r.checksum, UDP_CSUM_NONE);
	uint32_t sum = inet_addr_csum_pseudo(&local6, &peer6, IP6_NH_UDP, (uint32_t)len);
	assert_int_equal(wire_csum_finish(wire_csum_add(sum, l4, len)), 0);
	for (size_t k = 0; k < len - UDP_HDR_LEN; k++)
		assert_int_equal(l4[UDP_HDR_LEN + k], ts_pattern(k));
}

/* --- receiving --- */

static void test_udp6_datagram_delivered_with_source_and_traffic_class(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	input6(udp6_dgram(PORT_P, PORT_S, 100, false));
	struct udp_rx_hdr h;
	bool trunc = true;
	assert_int_equal(udp_recvmsg(u, buf, sizeof(buf), &h, &trunc), 100);
	assert_false(trunc);
	assert_true(inet_addr_equal(&h.src, &peer6));
	assert_true(inet_addr_equal(&h.dst, &local6));
	assert_int_equal(h.sport, PORT_P);
	assert_int_equal(h.flags, UDP_RXF_V6);
	assert_int_equal(h.tos, 0x28);
	assert_int_equal(h.ttl, 61);
	assert_int_equal(h.saddr, 0); /* the IPv4 fields stay empty */
	for (size_t k = 0; k < 100; k++)
		assert_int_equal(buf[k], ts_pattern(k));
	assert_int_equal(ts_s->events[STACK_EV_UDP6_IN_DATAGRAMS], 1);
	assert_int_equal(ts_s->events[STACK_EV_UDP_IN_DATAGRAMS], 0);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp6_zero_checksum_dropped_and_counted(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	input6(udp6_dgram(PORT_P, PORT_S, 20, true));
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	ts_expect_drop(STACK_DROP_UDP6_ZERO_CHECKSUM, 1);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ZERO_CHECKSUM], 0);
	assert_int_equal(ts_nframes, 0); /* no error for it (Linux is silent too) */
	udp_close(u);
}

static void test_udp6_bad_checksum_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	size_t n = udp6_dgram(PORT_P, PORT_S, 20, false);
	dgram[n - 1] ^= 0x01;
	input6(n);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	ts_expect_drop(STACK_DROP_UDP_BAD_CHECKSUM, 1);
	udp_close(u);
}

static void test_udp6_closed_port_answered_by_icmp6_port_unreachable(void **state)
{
	(void)state;
	size_t n = udp6_dgram(PORT_P, PORT_S, 30, false);
	uint8_t orig[IP6_HDR_LEN + UDP_HDR_LEN + 30];
	memcpy(orig, dgram, n);
	input6(n);
	assert_int_equal(ts_nframes, 1);
	struct ip6_repr ip;
	const uint8_t *msg = expect_ip6(0, &ip);
	assert_int_equal(ip.next_header, IP6_NH_ICMPV6);
	uint32_t pseudo = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, ip.payload_len);
	struct icmp6_repr ic;
	assert_int_equal(icmp6_parse(msg, ip.payload_len, pseudo, true, &ic), WIRE_OK);
	assert_int_equal(ic.type, ICMP6_DEST_UNREACH);
	assert_int_equal(ic.code, ICMP6_UNREACH_PORT);
	assert_int_equal(ip.payload_len, ICMP6_HDR_LEN + n); /* the whole datagram quoted */
	assert_memory_equal(msg + ICMP6_HDR_LEN, orig, n);
	assert_int_equal(ts_s->events[STACK_EV_ICMP6_TX_ERROR], 1);
	ts_expect_drop(STACK_DROP_UDP6_NO_PORT, 1);
}

static void test_udp6_port_unreachable_rate_limited(void **state)
{
	(void)state;
	for (unsigned i = 0; i < 1000; i++)
		input6(udp6_dgram(PORT_P, PORT_S, 8, false));
	assert_true(ts_nframes > 0 && ts_nframes < 1000);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP6_RATE_LIMITED], 1000 - ts_nframes);
}

/* --- the dual-stack table --- */

/* An IPv4 datagram from A to our 10.0.0.2:dport with len pattern bytes. */
static void input4(uint16_t dport, size_t len)
{
	uint8_t l4[UDP_HDR_LEN + 64];
	struct udp_repr r = {.src_port = PORT_P, .dst_port = dport, .length = (uint16_t)(8 + len)};
	assert_int_equal(udp_build(l4, sizeof(l4), &r), UDP_HDR_LEN);
	for (size_t k = 0; k < len; k++)
		l4[UDP_HDR_LEN + k] = ts_pattern(k);
	wire_put_be16(l4 + UDP_OFF_CSUM, udp_checksum(TS_HOST_A, TS_ADDR0, l4, UDP_HDR_LEN + len));
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = UDP_HDR_LEN + len;
	ts_send(0, &ip);
}

static void test_udp_any6_hears_ipv4_as_mapped_source(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	input4(PORT_S, 10);
	struct inet_addr from;
	uint16_t from_port;
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), &from, &from_port, NULL), 10);
	assert_true(inet_addr_equal(&from, INET_ADDR_V4(TS_HOST_A)));
	assert_int_equal(from_port, PORT_P);
	/* The answer goes back over IPv4, from the address the datagram went to. */
	fill_pattern(10);
	assert_int_equal(udp_sendmsg_inet(u, payload, 10, &from, from_port, NULL), 10);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_UDP, &p);
	assert_int_equal(ts_s->events[STACK_EV_UDP_OUT_DATAGRAMS], 1);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_v6only_any_does_not_hear_ipv4(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, UDP_BIND_V6ONLY);
	input4(PORT_S, 10);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	ts_expect_drop(STACK_DROP_UDP_NO_PORT, 1); /* answered by ICMPv4 port unreachable */
	assert_int_equal(ts_nframes, 1);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), -ENETUNREACH);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), -ENETUNREACH);
	udp_close(u);
}

static void test_udp_ipv4_socket_beside_v6only_each_hears_its_family(void **state)
{
	(void)state;
	struct udp_sock *u4 = bind6(INET_ADDR_V4(0), PORT_S, 0);
	struct udp_sock *u6 = bind6(&any6, PORT_S, UDP_BIND_V6ONLY);
	input4(PORT_S, 4);
	input6(udp6_dgram(PORT_P, PORT_S, 6, false));
	assert_int_equal(udp_recvfrom(u4, buf, sizeof(buf), NULL, NULL, NULL), 4);
	assert_int_equal(udp_recvfrom(u6, buf, sizeof(buf), NULL, NULL, NULL), 6);
	ts_expect_no_drops();
	udp_close(u4);
	udp_close(u6);
}

static void test_udp_ipv4_socket_preferred_to_dual_stack_any(void **state)
{
	(void)state;
	/* With SO_REUSEADDR both wildcards may share the port; Linux scores a socket of the
	 * datagram's own family higher. */
	struct udp_sock *u6 = bind6(&any6, PORT_S, UDP_BIND_REUSEADDR);
	struct udp_sock *u4 = bind6(INET_ADDR_V4(0), PORT_S, UDP_BIND_REUSEADDR);
	input4(PORT_S, 4);
	assert_int_equal(udp_recvfrom(u4, buf, sizeof(buf), NULL, NULL, NULL), 4);
	assert_int_equal(udp_recvfrom(u6, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	udp_close(u4);
	udp_close(u6);
}

static void test_udp_bind_conflicts_across_families_as_linux(void **state)
{
	(void)state;
	struct udp_sock *v = NULL;
	struct udp_sock *u4 = bind6(INET_ADDR_V4(0), PORT_S, 0);
	/* :: that hears IPv4 takes 0.0.0.0's datagrams: in use. */
	assert_int_equal(udp_bind_inet(ts_s, &any6, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	struct udp_sock *u6 = bind6(&any6, PORT_S, UDP_BIND_V6ONLY);
	assert_int_equal(udp_bind_inet(ts_s, &local6, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	udp_close(u4);
	udp_close(u6);

	/* :: hearing IPv4 conflicts with every IPv4 bind; a specific IPv6 address with it. */
	struct udp_sock *dual = bind6(&any6, PORT_S, 0);
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_int_equal(udp_bind_inet(ts_s, &local6, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	udp_close(dual);

	/* A specific IPv6 address and 0.0.0.0 share nothing. */
	struct udp_sock *a6 = bind6(&local6, PORT_S, 0);
	struct udp_sock *a4 = bind6(INET_ADDR_V4(0), PORT_S, 0);
	assert_int_equal(udp_bind_inet(ts_s, &any6, PORT_S, 0, UDP_BIND_V6ONLY, NULL, &v),
			 -EADDRINUSE);
	udp_close(a6);
	udp_close(a4);
}

static void test_udp_bind_inet_bad_addresses(void **state)
{
	(void)state;
	struct udp_sock *v = NULL;
	static const struct inet_addr foreign = {{0x20, 0x01, 0x0d, 0xb8, 0, 9, [15] = 9}};
	assert_int_equal(udp_bind_inet(ts_s, &foreign, PORT_S, 0, 0, NULL, &v), -EADDRNOTAVAIL);
	assert_int_equal(udp_bind_inet(ts_s, INET_ADDR_V4(TS_ADDR0), PORT_S, 0, UDP_BIND_V6ONLY,
				       NULL, &v),
			 -EINVAL);
	assert_int_equal(udp_bind_inet(ts_s, NULL, PORT_S, 0, 0, NULL, &v), -EINVAL);
}

/* --- sending --- */

static void test_udp6_sendto_builds_datagram(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	struct sock_ip_opts o = {.ttl = 9, .tos = 0xb8};
	udp_set_ip_opts(u, &o);
	fill_pattern(333);
	assert_int_equal(udp_sendmsg_inet(u, payload, 333, &peer6, PORT_P, NULL), 333);
	assert_int_equal(ts_nframes, 1);
	struct ip6_repr ip;
	const uint8_t *l4 = expect_ip6(0, &ip);
	assert_int_equal(ip.next_header, IP6_NH_UDP);
	assert_int_equal(ip.hop_limit, 9);
	assert_int_equal(ip.tclass, 0xb8);
	expect_udp6(l4, ip.payload_len, PORT_S, PORT_P);
	assert_int_equal(ts_s->events[STACK_EV_UDP6_OUT_DATAGRAMS], 1);
	assert_int_equal(ts_s->events[STACK_EV_UDP_OUT_DATAGRAMS], 0);
	udp_close(u);
}

static void test_udp6_sendto_large_datagram_fragmented_by_source(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	fill_pattern(4000);
	assert_int_equal(udp_sendmsg_inet(u, payload, 4000, &peer6, PORT_P, NULL), 4000);
	assert_int_equal(ts_nframes, 3);
	size_t n = reassemble6(3, TS_MTU);
	assert_int_equal(n, UDP_HDR_LEN + 4000);
	expect_udp6(buf, n, PORT_S, PORT_P);
	assert_int_equal(ts_s->events[STACK_EV_IP6_FRAGMENTED], 1);
	udp_close(u);
}

static void test_udp6_send_family_mismatches(void **state)
{
	(void)state;
	struct udp_sock *u4 = bind6(INET_ADDR_V4(0), PORT_S, 0);
	fill_pattern(8);
	assert_int_equal(udp_sendmsg_inet(u4, payload, 8, &peer6, PORT_P, NULL), -EAFNOSUPPORT);
	assert_int_equal(udp_connect_inet(u4, &peer6, PORT_P, NETCFG_PORT_ANY), -EAFNOSUPPORT);
	struct udp_sock *a6 = bind6(&local6, PORT_S + 1, 0);
	assert_int_equal(udp_sendto(a6, payload, 8, TS_HOST_A, PORT_P), -ENETUNREACH);
	assert_int_equal(udp_sendmsg_inet(a6, payload, UDP6_MAX_PAYLOAD + 1, &peer6, PORT_P,
					  NULL),
			 -EMSGSIZE);
	assert_int_equal(ts_nframes, 0);
	udp_close(u4);
	udp_close(a6);
}

static void test_udp6_to_own_address_large_datagram_delivered(void **state)
{
	(void)state;
	struct udp_sock *a = bind6(&any6, 1000, 0);
	struct udp_sock *b = bind6(&local6, 2000, 0);
	fill_pattern(20000);
	assert_int_equal(udp_sendmsg_inet(a, payload, 20000, &local6, 2000, NULL), 20000);
	stack_loopback_drain(ts_s);
	assert_int_equal(ts_nframes, 0);
	struct inet_addr from;
	assert_int_equal(udp_recvfrom(b, buf, sizeof(buf), &from, NULL, NULL), 20000);
	assert_true(inet_addr_equal(&from, &local6));
	for (size_t k = 0; k < 20000; k++)
		assert_int_equal(buf[k], ts_pattern(k));
	ts_expect_no_drops();
	udp_close(a);
	udp_close(b);
}

/* --- ICMPv6 errors --- */

static struct udp_sock *connected6_sent(size_t len)
{
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	assert_int_equal(udp_connect_inet(u, &peer6, PORT_P, NETCFG_PORT_ANY), 0);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_true(inet_addr_equal(&in.local, &local6));
	assert_true(inet_addr_equal(&in.remote, &peer6));
	fill_pattern(len);
	assert_int_equal(udp_sendmsg_inet(u, payload, len, NULL, 0, NULL), (ssize_t)len);
	assert_int_equal(ts_nframes, 1);
	return u;
}

/* An ICMPv6 error from the peer quoting frame 0 (what we sent). */
static void input_icmp6_about_frame0(uint8_t type, uint8_t code, uint32_t info)
{
	const struct ts_frame *f = &ts_frames[0];
	size_t quote = f->len - ETH_HDR_LEN;
	if (quote > 1232)
		quote = 1232;
	uint8_t *msg = dgram + IP6_HDR_LEN;
	struct icmp6_repr ic = {.type = type, .code = code, .rest = info};
	assert_int_equal(icmp6_build_header(msg, ICMP6_HDR_LEN, &ic), ICMP6_HDR_LEN);
	memcpy(msg + ICMP6_HDR_LEN, f->data + ETH_HDR_LEN, quote);
	size_t len = ICMP6_HDR_LEN + quote;
	uint32_t sum = inet_addr_csum_pseudo(&peer6, &local6, IP6_NH_ICMPV6, (uint32_t)len);
	wire_put_be16(msg + ICMP6_OFF_CSUM, wire_csum_finish(wire_csum_add(sum, msg, len)));
	input6(ip6_wrap(IP6_NH_ICMPV6, len));
}

static void test_udp6_port_unreachable_econnrefused_on_connected_socket(void **state)
{
	(void)state;
	struct udp_sock *u = connected6_sent(8);
	input_icmp6_about_frame0(ICMP6_DEST_UNREACH, ICMP6_UNREACH_PORT, 0);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_ERRORS], 1);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp6_icmp6_error_for_unconnected_socket_ignored(void **state)
{
	(void)state;
	struct udp_sock *u = bind6(&any6, PORT_S, 0);
	fill_pattern(8);
	assert_int_equal(udp_sendmsg_inet(u, payload, 8, &peer6, PORT_P, NULL), 8);
	input_icmp6_about_frame0(ICMP6_DEST_UNREACH, ICMP6_UNREACH_PORT, 0);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_UNMATCHED], 1);
	udp_close(u);
}

static void test_udp6_packet_too_big_emsgsize_then_smaller_fragments(void **state)
{
	(void)state;
	struct udp_sock *u = connected6_sent(1400);
	input_icmp6_about_frame0(ICMP6_PACKET_TOO_BIG, 0, 1280);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EMSGSIZE);
	ts_clear();
	assert_int_equal(udp_sendmsg_inet(u, payload, 1400, NULL, 0, NULL), 1400);
	assert_int_equal(ts_nframes, 2);
	size_t n = reassemble6(2, 1280);
	expect_udp6(buf, n, PORT_S, PORT_P);
	/* A claim below the IPv6 minimum MTU is taken as the minimum (RFC 8201 §4). */
	ts_clear();
	input_icmp6_about_frame0(ICMP6_PACKET_TOO_BIG, 0, 500);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EMSGSIZE);
	udp_close(u);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup6, ts_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_udp6_datagram_delivered_with_source_and_traffic_class),
		T(test_udp6_zero_checksum_dropped_and_counted),
		T(test_udp6_bad_checksum_dropped),
		T(test_udp6_closed_port_answered_by_icmp6_port_unreachable),
		T(test_udp6_port_unreachable_rate_limited),
		T(test_udp_any6_hears_ipv4_as_mapped_source),
		T(test_udp_v6only_any_does_not_hear_ipv4),
		T(test_udp_ipv4_socket_beside_v6only_each_hears_its_family),
		T(test_udp_ipv4_socket_preferred_to_dual_stack_any),
		T(test_udp_bind_conflicts_across_families_as_linux),
		T(test_udp_bind_inet_bad_addresses),
		T(test_udp6_sendto_builds_datagram),
		T(test_udp6_sendto_large_datagram_fragmented_by_source),
		T(test_udp6_send_family_mismatches),
		T(test_udp6_to_own_address_large_datagram_delivered),
		T(test_udp6_port_unreachable_econnrefused_on_connected_socket),
		T(test_udp6_icmp6_error_for_unconnected_socket_ignored),
		T(test_udp6_packet_too_big_emsgsize_then_smaller_fragments),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
