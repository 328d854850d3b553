/* UDP through the whole stack (src/udp/udp*.c): binding rules, delivery and demultiplexing,
 * connected sockets, the receive FIFO's records and its overflow, checksums (zero, bad,
 * all-ones), malformed headers, broadcasts, port unreachable, fragmented datagrams in and
 * out, ICMP errors reported to connected sockets, loopback and owner re-entrancy. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "udp/udp.h"
#include "../../src/wire/udp.h"

static uint8_t dgram[IP4_MAX_LEN];
static uint8_t l4[IP4_MAX_LEN];
static uint8_t buf[IP4_MAX_LEN];
static uint8_t payload[IP4_MAX_LEN];
static struct ts_blob frags[64];

#define PORT_S 5000   /* our server port */
#define PORT_P 7000   /* the peer's port */

/* --- owner --- */

static struct {
	unsigned calls;
	uint32_t events;
	struct sock *last;
} olog;

static void log_notify(struct sock *sk, uint32_t events)
{
	olog.calls++;
	olog.events |= events;
	olog.last = sk;
}

static const struct sock_owner log_owner = {.notify = log_notify};

/* --- building --- */

/* The UDP datagram sport → dport with len bytes of ts_pattern into l4, checksum computed.
 * Returns its length. */
static size_t udp_build_l4(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
			   size_t len)
{
	struct udp_repr r = {.src_port = sport, .dst_port = dport, .length = (uint16_t)(8 + len)};
	assert_int_equal(udp_build(l4, sizeof(l4), &r), UDP_HDR_LEN);
	for (size_t k = 0; k < len; k++)
		l4[UDP_HDR_LEN + k] = ts_pattern(k);
	wire_put_be16(l4 + UDP_OFF_CSUM, udp_checksum(src, dst, l4, UDP_HDR_LEN + len));
	return UDP_HDR_LEN + len;
}

/* l4[0..l4_len) in an IPv4 datagram into dgram; returns its length. */
static size_t udp_wrap(uint32_t src, uint32_t dst, size_t l4_len)
{
	struct ts_ip ip = ts_ip_of(src, dst, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = l4_len;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

static size_t udp_dgram(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, size_t len)
{
	return udp_wrap(src, dst, udp_build_l4(src, dst, sport, dport, len));
}

/* A datagram from host A (port 0) or B (port 1). */
static void send_udp(uint16_t port, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
		     size_t len)
{
	size_t n = udp_dgram(src, dst, sport, dport, len);
	ts_input_ip(port, dgram, n);
}

/* dgram[0..n) in an Ethernet broadcast frame from A on port 0. */
static void input_link_bcast(size_t n)
{
	static uint8_t frame[ETH_HDR_LEN + IP4_MAX_LEN];
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
}

static struct udp_sock *bind_ok(uint32_t laddr, uint16_t lport)
{
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, laddr, lport, 0, 0, &log_owner, &u), 0);
	assert_non_null(u);
	return u;
}

/* The next datagram of u is len pattern bytes from src:sport. */
static void expect_recv(struct udp_sock *u, size_t len, uint32_t src, uint16_t sport)
{
	uint32_t from = 0;
	uint16_t from_port = 0;
	bool trunc = true;
	memset(buf, 0xee, len + 1);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), &from, &from_port, &trunc),
			 (ssize_t)len);
	assert_false(trunc);
	assert_int_equal(from, src);
	assert_int_equal(from_port, sport);
	for (size_t k = 0; k < len; k++)
		assert_int_equal(buf[k], ts_pattern(k));
}

static void expect_nothing(struct udp_sock *u)
{
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EAGAIN);
}

/* Frame i is a UDP datagram out of port to eth_dst, src:sport → dst:dport with len pattern
 * bytes and a correct, non-zero checksum. */
static void expect_udp_frame(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			     uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
			     size_t len)
{
	struct ts_pkt p;
	ts_expect_ip(i, port, eth_dst, src, dst, IP4_PROTO_UDP, &p);
	assert_false(p.ip.df);
	assert_int_equal(p.ip.ttl, IP4_DEFAULT_TTL);
	struct udp_repr r;
	assert_int_equal(udp_parse(p.l4, p.l4_len, &r), WIRE_OK);
	assert_int_equal(r.src_port, sport);
	assert_int_equal(r.dst_port, dport);
	assert_int_equal(r.length, UDP_HDR_LEN + len);
	assert_int_equal(p.l4_len, UDP_HDR_LEN + len);
	assert_int_not_equal(r.checksum, UDP_CSUM_NONE);
	assert_true(udp_checksum_ok(src, dst, p.l4, p.l4_len));
	for (size_t k = 0; k < len; k++)
		assert_int_equal(p.l4[UDP_HDR_LEN + k], ts_pattern(k));
}

static void fill_pattern(size_t len)
{
	for (size_t k = 0; k < len; k++)
		payload[k] = ts_pattern(k);
}

/* --- bind --- */

static void test_udp_bind_wildcard_then_same_port_eaddrinuse(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S), *v = NULL;
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_null(v);
	udp_close(u);
}

static void test_udp_bind_specific_then_wildcard_eaddrinuse(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR0, PORT_S), *v = NULL;
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 0, 0, NULL, &v), -EADDRINUSE);
	udp_close(u);
}

static void test_udp_bind_two_addresses_same_port_allowed(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR0, PORT_S);
	struct udp_sock *v = bind_ok(TS_ADDR1, PORT_S);
	struct udp_sock *w = bind_ok(TS_BCAST0, PORT_S);
	udp_close(u);
	udp_close(v);
	udp_close(w);
}

static void test_udp_bind_foreign_address_eaddrnotavail(void **state)
{
	(void)state;
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, TS_HOST_A, PORT_S, 0, 0, NULL, &u), -EADDRNOTAVAIL);
	assert_int_equal(udp_bind(ts_s, IP4(192, 0, 2, 1), PORT_S, 0, 0, NULL, &u), -EADDRNOTAVAIL);
	assert_int_equal(udp_bind(ts_s, IP4(224, 0, 0, 1), PORT_S, 0, 0, NULL, &u), -EADDRNOTAVAIL);
	assert_null(u);
}

static void test_udp_bind_close_frees_port(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_close(u);
	u = bind_ok(TS_ADDR0, PORT_S);
	udp_close(u);
	u = bind_ok(0, PORT_S);
	udp_close(u);
}

static void test_udp_bind_port_zero_picks_distinct_ephemeral_ports(void **state)
{
	(void)state;
	struct udp_sock *u[64];
	for (unsigned i = 0; i < 64; i++) {
		u[i] = bind_ok(0, 0);
		struct udp_sock_info in;
		udp_sock_info(u[i], &in);
		assert_in_range(in.lport, UDP_EPHEMERAL_LO, UDP_EPHEMERAL_HI);
		for (unsigned j = 0; j < i; j++)
			assert_int_not_equal(udp_sock(u[j])->lport, in.lport);
	}
	for (unsigned i = 0; i < 64; i++)
		udp_close(u[i]);
}

/* The search for an ephemeral port goes on from the last one picked and skips a port taken
 * on any address. */
static uint16_t next_port(uint16_t p)
{
	return p == UDP_EPHEMERAL_HI ? UDP_EPHEMERAL_LO : (uint16_t)(p + 1);
}

static void test_udp_bind_ephemeral_skips_taken_ports(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, 0);
	uint16_t first = udp_sock(u)->lport;
	struct udp_sock *blocker = bind_ok(TS_ADDR1, next_port(first));
	struct udp_sock *v = bind_ok(0, 0);
	assert_int_equal(udp_sock(v)->lport, next_port(next_port(first)));
	udp_close(u);
	udp_close(v);
	udp_close(blocker);
}

static void test_udp_bind_default_rcvbuf_holds_max_datagram(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_true(in.rcvbuf >= UDP_RCVBUF_DEFAULT);
	assert_true(in.rcvbuf >= sizeof(struct udp_rx_hdr) + UDP_MAX_PAYLOAD);
	assert_int_equal(in.rx_queued, 0);
	assert_null(udp_sock(u)->tx);
	udp_close(u);
}

static struct udp_sock *bind_reuse(uint32_t laddr, uint16_t lport, int expect)
{
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, laddr, lport, 0, UDP_BIND_REUSEADDR, &log_owner, &u),
			 expect);
	return u;
}

/* iperf3's server: a socket connected to its client beside a new listening socket on the
 * same port. The client's datagrams go to the first, everyone else's to the second. */
static void test_udp_reuseaddr_connected_socket_leaves_its_port_to_the_next(void **state)
{
	(void)state;
	struct udp_sock *u = bind_reuse(0, PORT_S, 0);
	bind_reuse(0, PORT_S, -EADDRINUSE);               /* both unconnected: one place */
	struct udp_sock *plain = NULL;
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 0, 0, NULL, &plain), -EADDRINUSE);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	struct udp_sock *v = bind_reuse(0, PORT_S, 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 10);
	send_udp(1, TS_HOST_B, TS_ADDR0, PORT_P, PORT_S, 20);
	expect_recv(u, 10, TS_HOST_A, PORT_P);
	expect_nothing(u);
	expect_recv(v, 20, TS_HOST_B, PORT_P);
	expect_nothing(v);
	/* Disconnecting finds the place taken: u hears only what is left for it (nothing). */
	assert_int_equal(udp_connect(u, 0, 0), 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 30);
	expect_recv(v, 30, TS_HOST_A, PORT_P);
	expect_nothing(u);
	/* Closing u must not take v's place with it. */
	udp_close(u);
	send_udp(1, TS_HOST_B, TS_ADDR0, PORT_P, PORT_S, 40);
	expect_recv(v, 40, TS_HOST_B, PORT_P);
	udp_close(v);
	struct udp_sock *w = bind_ok(0, PORT_S);
	udp_close(w);
}

/* A disconnecting socket takes its place back when it is free. */
static void test_udp_reuseaddr_disconnect_takes_the_place_back(void **state)
{
	(void)state;
	struct udp_sock *u = bind_reuse(TS_ADDR0, PORT_S, 0);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	assert_int_equal(udp_connect(u, 0, 0), 0);
	bind_reuse(TS_ADDR0, PORT_S, -EADDRINUSE);
	send_udp(1, TS_HOST_B, TS_ADDR0, PORT_P, PORT_S, 5);
	expect_recv(u, 5, TS_HOST_B, PORT_P);
	udp_close(u);
}

/* --- receive --- */

static void test_udp_datagram_delivered_with_source(void **state)
{
	(void)state;
	memset(&olog, 0, sizeof(olog));
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 100);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(olog.calls, 1);
	assert_int_equal(olog.events, SOCK_EV_IN);
	assert_ptr_equal(olog.last, udp_sock(u));
	expect_recv(u, 100, TS_HOST_A, PORT_P);
	expect_nothing(u);
	assert_int_equal(ts_s->events[STACK_EV_UDP_IN_DATAGRAMS], 1);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_int_equal(in.datagrams_in, 1);
	assert_int_equal(in.bytes_in, 100);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_recv_empty_returns_eagain(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	expect_nothing(u);
	udp_close(u);
}

static void test_udp_empty_datagram_delivered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 0);
	bool trunc = true;
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, &trunc), 0);
	assert_false(trunc);
	expect_nothing(u);
	udp_close(u);
}

/* recvfrom semantics: one datagram per call, however large the buffer. */
static void test_udp_recv_keeps_datagram_boundaries(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 10);
	send_udp(1, TS_HOST_B, TS_ADDR0, PORT_P + 1, PORT_S, 20);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 30);
	expect_recv(u, 10, TS_HOST_A, PORT_P);
	expect_recv(u, 20, TS_HOST_B, PORT_P + 1);
	expect_recv(u, 30, TS_HOST_A, PORT_P);
	expect_nothing(u);
	udp_close(u);
}

static void test_udp_recv_truncates_and_discards_rest(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 100);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 5);
	bool trunc = false;
	assert_int_equal(udp_recvfrom(u, buf, 40, NULL, NULL, &trunc), 40);
	assert_true(trunc);
	for (size_t k = 0; k < 40; k++)
		assert_int_equal(buf[k], ts_pattern(k));
	expect_recv(u, 5, TS_HOST_A, PORT_P);
	udp_close(u);
}

static void test_udp_source_port_zero_delivered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, 0, PORT_S, 8);
	expect_recv(u, 8, TS_HOST_A, 0);
	udp_close(u);
}

/* The record in the FIFO carries the address the datagram was sent to (IP_PKTINFO). */
static void test_udp_fifo_record_carries_header(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR1, PORT_P, PORT_S, 12);
	struct udp_rx_hdr h;
	assert_int_equal(fifo_used(udp_sock(u)->rx), sizeof(h) + 12);
	assert_int_equal(fifo_peek(udp_sock(u)->rx, 0, &h, sizeof(h)), sizeof(h));
	assert_int_equal(h.len, 12);
	assert_int_equal(h.saddr, TS_HOST_A);
	assert_int_equal(h.daddr, TS_ADDR1);
	assert_int_equal(h.sport, PORT_P);
	assert_int_equal(h.flags, 0);
	/* IP_PKTINFO: port 0 is interface 1; a unicast's reply comes from its destination. */
	assert_int_equal(h.ifindex, 1);
	assert_int_equal(h.spec_dst, TS_ADDR1);
	assert_int_equal(h.ttl, 64); /* IP_RECVTTL, IP_RECVTOS: the header's */
	assert_int_equal(h.tos, 0);
	udp_close(u);
}

static void test_udp_specific_bind_ignores_other_local_address(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR1, PORT_P, PORT_S, 8);
	ts_input_ip(0, dgram, n);
	expect_nothing(u);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PORT, 0, dgram, n);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 8);
	expect_recv(u, 8, TS_HOST_A, PORT_P);
	udp_close(u);
}

static void test_udp_specific_binds_on_one_port_each_get_their_own(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR0, PORT_S);
	struct udp_sock *v = bind_ok(TS_ADDR1, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR1, PORT_P, PORT_S, 11);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 22);
	expect_recv(u, 22, TS_HOST_A, PORT_P);
	expect_recv(v, 11, TS_HOST_A, PORT_P);
	expect_nothing(u);
	expect_nothing(v);
	udp_close(u);
	udp_close(v);
}

/* --- connected sockets --- */

static void test_udp_connect_takes_route_source_address(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_B, PORT_P), 0);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_int_equal(in.laddr, TS_ADDR1);
	assert_int_equal(in.raddr, TS_HOST_B);
	assert_int_equal(in.rport, PORT_P);
	assert_int_equal(udp_connect(u, 0, 0), 0);
	udp_sock_info(u, &in);
	assert_int_equal(in.laddr, 0);
	assert_int_equal(in.raddr, 0);
	assert_int_equal(in.rport, 0);
	udp_close(u);
}

static void test_udp_connected_socket_hears_only_its_peer(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P + 1, PORT_S, 8);      /* other port */
	send_udp(1, TS_HOST_B, TS_ADDR0, PORT_P, PORT_S, 8);          /* other host */
	send_udp(0, TS_HOST_A, TS_ADDR1, PORT_P, PORT_S, 8);          /* other local address */
	expect_nothing(u);
	/* Nobody else has the port: each is answered, as Linux does. */
	assert_int_equal(ts_nframes, 3);
	assert_int_equal(ts_s->drops[STACK_DROP_UDP_NO_PORT], 3);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 9);
	expect_recv(u, 9, TS_HOST_A, PORT_P);
	expect_nothing(u);
	udp_close(u);
}

static void test_udp_disconnect_hears_everyone_again(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	assert_int_equal(udp_connect(u, 0, 0), 0);
	send_udp(1, TS_HOST_B, TS_ADDR0, 1234, PORT_S, 8);
	expect_recv(u, 8, TS_HOST_B, 1234);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_reconnect_moves_filter_to_new_peer(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	assert_int_equal(udp_connect(u, TS_HOST_B, PORT_P), 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 8);
	expect_nothing(u);
	send_udp(1, TS_HOST_B, TS_ADDR1, PORT_P, PORT_S, 8);
	expect_recv(u, 8, TS_HOST_B, PORT_P);
	udp_close(u);
}

static void test_udp_connect_errors(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_A, 0), -EINVAL);
	assert_int_equal(udp_connect(u, IP4(192, 0, 2, 1), PORT_P), -ENETUNREACH);
	assert_int_equal(udp_connect(u, TS_BCAST0, PORT_P), -EACCES);
	assert_int_equal(udp_connect(u, 0xffffffffu, PORT_P), -EACCES);
	udp_set_broadcast(u, true);
	assert_int_equal(udp_connect(u, TS_BCAST0, PORT_P), 0);
	udp_close(u);
}

/* --- send --- */

static void test_udp_sendto_builds_datagram(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(64);
	assert_int_equal(udp_sendto(u, payload, 64, TS_HOST_A, PORT_P), 64);
	assert_int_equal(ts_nframes, 1);
	expect_udp_frame(0, 0, &ts_mac_a, TS_ADDR0, PORT_S, TS_HOST_A, PORT_P, 64);
	assert_int_equal(ts_s->events[STACK_EV_UDP_OUT_DATAGRAMS], 1);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_int_equal(in.datagrams_out, 1);
	assert_int_equal(in.bytes_out, 64);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_sendto_carries_the_sockets_ttl_and_tos(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_set_ip_opts(u, &(struct sock_ip_opts){.ttl = 7, .tos = 0x2b});
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), 8);
	udp_set_broadcast(u, true);
	assert_int_equal(udp_sendto(u, payload, 8, TS_BCAST0, PORT_P), 8);
	assert_int_equal(ts_nframes, 2);
	for (unsigned i = 0; i < 2; i++) {
		struct ts_pkt p;
		ts_expect_ip(i, 0, i == 0 ? &ts_mac_a : &eth_addr_broadcast, TS_ADDR0,
			     i == 0 ? TS_HOST_A : TS_BCAST0, IP4_PROTO_UDP, &p);
		assert_int_equal(p.ip.ttl, 7);
		assert_int_equal(p.ip.tos, 0x2b); /* UDP's ECN bits are the application's */
	}
	udp_close(u);
}

/* sendmsg's IP_PKTINFO and IP_TTL/IP_TOS: this datagram only, from any of our addresses. */
static void test_udp_sendmsg_source_ttl_tos_for_one_datagram(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(8);
	struct sock_ip_opts ip = {.ttl = 3, .tos = 4};
	struct udp_send_opts o = {.src = TS_ADDR1, .ip = &ip};
	assert_int_equal(udp_sendmsg(u, payload, 8, TS_HOST_A, PORT_P, &o), 8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), 8);
	o.src = TS_HOST_B; /* not ours */
	assert_int_equal(udp_sendmsg(u, payload, 8, TS_HOST_A, PORT_P, &o), -EADDRNOTAVAIL);
	assert_int_equal(ts_nframes, 2);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR1, TS_HOST_A, IP4_PROTO_UDP, &p);
	assert_int_equal(p.ip.ttl, 3);
	assert_int_equal(p.ip.tos, 4);
	expect_udp_frame(1, 0, &ts_mac_a, TS_ADDR0, PORT_S, TS_HOST_A, PORT_P, 8);
	udp_close(u);
}

static void test_udp_sendto_empty_and_odd_lengths_checksum_ok(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(64);
	for (size_t len = 0; len < 40; len++) {
		ts_clear();
		assert_int_equal(udp_sendto(u, payload, len, TS_HOST_B, PORT_P), (ssize_t)len);
		assert_int_equal(ts_nframes, 1);
		expect_udp_frame(0, 1, &ts_mac_b, TS_ADDR1, PORT_S, TS_HOST_B, PORT_P, len);
	}
	udp_close(u);
}

static void test_udp_sendto_from_specific_address(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR1, PORT_S);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), 8);
	expect_udp_frame(0, 0, &ts_mac_a, TS_ADDR1, PORT_S, TS_HOST_A, PORT_P, 8);
	udp_close(u);
}

/* RFC 768: a computed checksum of zero is sent as 0xffff; and such a datagram is accepted. */
static void test_udp_sendto_computed_zero_checksum_sent_as_ffff(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	uint8_t d[UDP_HDR_LEN + 2] = {0};
	struct udp_repr r = {.src_port = PORT_S, .dst_port = PORT_P, .length = sizeof(d)};
	udp_build(d, sizeof(d), &r);
	uint16_t c0 = udp_checksum(TS_ADDR0, TS_HOST_A, d, sizeof(d));
	assert_int_not_equal(c0, 0xffff);
	/* With c0 as the data word, the sum becomes all ones: the checksum computes to 0. */
	wire_put_be16(d + UDP_HDR_LEN, c0);
	assert_int_equal(udp_checksum(TS_ADDR0, TS_HOST_A, d, sizeof(d)), 0xffff);
	assert_int_equal(udp_sendto(u, d + UDP_HDR_LEN, 2, TS_HOST_A, PORT_P), 2);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_UDP, &p);
	assert_int_equal(wire_get_be16(p.l4 + UDP_OFF_CSUM), 0xffff);
	/* The same bytes coming in from A to us verify. */
	memcpy(l4, d, sizeof(d));
	wire_put_be16(l4 + UDP_OFF_SRC_PORT, PORT_P);
	wire_put_be16(l4 + UDP_OFF_DST_PORT, PORT_S);
	wire_put_be16(l4 + UDP_OFF_CSUM, 0xffff);
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, sizeof(d));
	ts_input_ip(0, dgram, n);
	bool trunc;
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, &trunc), 2);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_sendto_connected_peer_when_no_address(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, 0, 0), -EDESTADDRREQ);
	assert_int_equal(udp_connect(u, TS_HOST_B, PORT_P), 0);
	assert_int_equal(udp_sendto(u, payload, 8, 0, 0), 8);
	expect_udp_frame(0, 1, &ts_mac_b, TS_ADDR1, PORT_S, TS_HOST_B, PORT_P, 8);
	/* An explicit address still wins on a connected socket, as on Linux. */
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P + 1), 8);
	expect_udp_frame(1, 0, &ts_mac_a, TS_ADDR1, PORT_S, TS_HOST_A, PORT_P + 1, 8);
	udp_close(u);
}

static void test_udp_sendto_errors(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, 0), -EINVAL);
	assert_int_equal(udp_sendto(u, payload, UDP_MAX_PAYLOAD + 1, TS_HOST_A, PORT_P),
			 -EMSGSIZE);
	assert_int_equal(udp_sendto(u, payload, 8, IP4(192, 0, 2, 1), PORT_P), -ENETUNREACH);
	assert_int_equal(udp_sendto(u, payload, 8, IP4(224, 0, 0, 1), PORT_P), -ENETUNREACH);
	assert_int_equal(udp_sendto(u, payload, 8, TS_BCAST0, PORT_P), -EACCES);
	assert_int_equal(udp_sendto(u, payload, 8, 0xffffffffu, PORT_P), -EACCES);
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &(struct route){.prefix = inet_addr_v4(IP4(198, 51, 100, 0)),
			 .plen = 24, .type = ROUTE_UNREACHABLE}), 0);
	assert_int_equal(udp_sendto(u, payload, 8, IP4(198, 51, 100, 7), PORT_P), -EHOSTUNREACH);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_UDP_OUT_DATAGRAMS], 0);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_sendto_after_address_removed_eaddrnotavail(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR1, PORT_S);
	assert_int_equal(stack_addr_del(ts_s, 1, TS_ADDR1, 24), 0);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), -EADDRNOTAVAIL);
	udp_close(u);
}

static void test_udp_sendto_subnet_broadcast_with_so_broadcast(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_set_broadcast(u, true);
	fill_pattern(16);
	assert_int_equal(udp_sendto(u, payload, 16, TS_BCAST1, PORT_P), 16);
	assert_int_equal(ts_nframes, 1);
	expect_udp_frame(0, 1, &eth_addr_broadcast, TS_ADDR1, PORT_S, TS_BCAST1, PORT_P, 16);
	udp_close(u);
}

static void test_udp_sendto_limited_broadcast_from_bound_address_port(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(TS_ADDR1, PORT_S);
	udp_set_broadcast(u, true);
	fill_pattern(16);
	assert_int_equal(udp_sendto(u, payload, 16, 0xffffffffu, PORT_P), 16);
	assert_int_equal(ts_nframes, 1);
	expect_udp_frame(0, 1, &eth_addr_broadcast, TS_ADDR1, PORT_S, 0xffffffffu, PORT_P, 16);
	udp_close(u);
}

static void test_udp_sendto_limited_broadcast_by_default_route(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_set_broadcast(u, true);
	fill_pattern(16);
	assert_int_equal(udp_sendto(u, payload, 16, 0xffffffffu, PORT_P), -ENETUNREACH);
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &(struct route){.prefix = inet_addr_v4(0), .plen = 0,
			 .type = ROUTE_GATEWAY, .port = NETCFG_PORT_ANY, .gateway = inet_addr_v4(TS_HOST_B)}), 0);
	assert_int_equal(udp_sendto(u, payload, 16, 0xffffffffu, PORT_P), 16);
	assert_int_equal(ts_nframes, 1);
	expect_udp_frame(0, 1, &eth_addr_broadcast, TS_ADDR1, PORT_S, 0xffffffffu, PORT_P, 16);
	udp_close(u);
}

/* A DHCP client without an address: the limited broadcast from 0.0.0.0 out of the port it
 * names, with no route and no address needed (RFC 2131 §4.1). */
static void test_udp_sendmsg_bcast_on_port_from_unspecified_source(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, 68);
	udp_set_broadcast(u, true);
	fill_pattern(16);
	struct udp_send_opts o = {.bcast_on_port = true, .port = 1};
	assert_int_equal(udp_sendmsg(u, payload, 16, 0xffffffffu, 67, &o), 16);
	assert_int_equal(ts_nframes, 1);
	expect_udp_frame(0, 1, &eth_addr_broadcast, 0, 68, 0xffffffffu, 67, 16);
	/* Without SO_BROADCAST still refused. */
	udp_set_broadcast(u, false);
	assert_int_equal(udp_sendmsg(u, payload, 16, 0xffffffffu, 67, &o), -EACCES);
	udp_close(u);
}

/* A server's unicast answer to the address it offers (not ours) reaches port 68 only while
 * the port's DHCP client runs, and only from port 67; otherwise it is not ours. */
static void test_udp_dhcp_reply_to_offered_address_delivered_while_client_runs(void **state)
{
	(void)state;
	const uint32_t offered = IP4(10, 0, 0, 77);
	struct udp_sock *u = bind_ok(0, 68);
	ts_s->cfg.forwarding = false;
	send_udp(0, TS_HOST_A, offered, 67, 68, 8);
	expect_nothing(u);
	ts_s->dhcp_client[0] = true;
	send_udp(0, TS_HOST_A, offered, 9, 68, 8);
	expect_nothing(u);
	send_udp(0, TS_HOST_A, offered, 67, 68, 8);
	expect_recv(u, 8, TS_HOST_A, 67);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_NOT_OURS], 2);
	udp_close(u);
}

/* Linux loops a broadcast it sends back to its own sockets (ip_mc_output): a socket bound to
 * 0.0.0.0 hears its own limited and directed broadcasts, once each, beside the frames. */
static void test_udp_own_broadcasts_reach_our_sockets_too(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_set_broadcast(u, true);
	fill_pattern(16);
	assert_int_equal(udp_sendto(u, payload, 16, TS_BCAST0, PORT_S), 16);
	assert_int_equal(udp_sendto(u, payload, 8, 0xffffffffu, PORT_S), -ENETUNREACH);
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &(struct route){.prefix = inet_addr_v4(0), .plen = 0,
			 .type = ROUTE_GATEWAY, .port = NETCFG_PORT_ANY, .gateway = inet_addr_v4(TS_HOST_A)}), 0);
	assert_int_equal(udp_sendto(u, payload, 8, 0xffffffffu, PORT_S), 8);
	stack_loopback_drain(ts_s);
	assert_int_equal(ts_nframes, 2);
	expect_recv(u, 16, TS_ADDR0, PORT_S);
	expect_recv(u, 8, TS_ADDR0, PORT_S);
	expect_nothing(u);
	ts_expect_no_drops();
	udp_close(u);
}

/* Larger than the MTU: fragmented by IP (no DF), reassembling to the whole datagram. */
static void test_udp_sendto_8000_bytes_sent_as_fragments(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(8000);
	assert_int_equal(udp_sendto(u, payload, 8000, TS_HOST_A, PORT_P), 8000);
	unsigned n = (UDP_HDR_LEN + 8000 + 1479) / 1480;
	assert_int_equal(ts_nframes, n);
	struct ip4_repr h;
	assert_int_equal(ts_reassemble(0, n, TS_MTU, buf, sizeof(buf), &h), UDP_HDR_LEN + 8000);
	assert_int_equal(h.src, TS_ADDR0);
	assert_int_equal(h.dst, TS_HOST_A);
	assert_false(h.df);
	struct udp_repr r;
	assert_int_equal(udp_parse(buf, UDP_HDR_LEN + 8000, &r), WIRE_OK);
	assert_int_equal(r.length, UDP_HDR_LEN + 8000);
	assert_int_not_equal(r.checksum, UDP_CSUM_NONE);
	assert_true(udp_checksum_ok(TS_ADDR0, TS_HOST_A, buf, UDP_HDR_LEN + 8000));
	for (size_t k = 0; k < 8000; k++)
		assert_int_equal(buf[UDP_HDR_LEN + k], ts_pattern(k));
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGMENTED], 1);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_sendto_max_payload_sent_as_45_fragments(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(UDP_MAX_PAYLOAD);
	assert_int_equal(udp_sendto(u, payload, UDP_MAX_PAYLOAD, TS_HOST_A, PORT_P),
			 UDP_MAX_PAYLOAD);
	assert_int_equal(ts_nframes, 45);
	assert_int_equal(ts_reassemble(0, 45, TS_MTU, buf, sizeof(buf), NULL),
			 UDP_HDR_LEN + UDP_MAX_PAYLOAD);
	assert_true(udp_checksum_ok(TS_ADDR0, TS_HOST_A, buf, UDP_HDR_LEN + UDP_MAX_PAYLOAD));
	udp_close(u);
}

/* --- checksums and malformed datagrams --- */

static void test_udp_zero_checksum_accepted_and_counted(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	wire_put_be16(l4 + UDP_OFF_CSUM, UDP_CSUM_NONE);
	l4[UDP_HDR_LEN] ^= 0xff; /* nothing checks the data */
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
	ts_input_ip(0, dgram, n);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), 20);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ZERO_CHECKSUM], 1);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_bad_checksum_dropped_and_counted(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	l4[UDP_HDR_LEN + 3] ^= 0x10;
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
	ts_input_ip(0, dgram, n);
	expect_nothing(u);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_BAD_CHECKSUM, 1);
	udp_close(u);
}

/* A bad checksum to a closed port is no reason for port unreachable. */
static void test_udp_bad_checksum_to_closed_port_not_answered(void **state)
{
	(void)state;
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	wire_put_be16(l4 + UDP_OFF_CSUM, (uint16_t)(wire_get_be16(l4 + UDP_OFF_CSUM) + 1));
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_BAD_CHECKSUM, 1);
}

/* A checksum made for another destination (the pseudo-header counts) is bad. */
static void test_udp_checksum_covers_pseudo_header(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR1, PORT_P, PORT_S, 20);
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
	ts_input_ip(0, dgram, n);
	expect_nothing(u);
	ts_expect_drop(STACK_DROP_UDP_BAD_CHECKSUM, 1);
	udp_close(u);
}

static void test_udp_truncated_header_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 0);
	for (size_t len = 0; len < UDP_HDR_LEN; len++) {
		size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, len);
		ts_input_ip(0, dgram, n);
	}
	expect_nothing(u);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_TRUNCATED, UDP_HDR_LEN);
	udp_close(u);
}

static void test_udp_length_field_past_payload_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	wire_put_be16(l4 + UDP_OFF_LEN, (uint16_t)(l + 1));
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
	ts_input_ip(0, dgram, n);
	ts_expect_drop(STACK_DROP_UDP_BAD_LENGTH, 1);
	assert_int_equal(ts_nframes, 0);
	expect_nothing(u);
	udp_close(u);
}

static void test_udp_length_field_below_header_dropped(void **state)
{
	(void)state;
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	for (uint16_t bad = 0; bad < UDP_HDR_LEN; bad++) {
		wire_put_be16(l4 + UDP_OFF_LEN, bad);
		size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l);
		ts_input_ip(0, dgram, n);
	}
	ts_expect_drop(STACK_DROP_UDP_BAD_LENGTH, UDP_HDR_LEN);
	assert_int_equal(ts_nframes, 0);
}

/* A length field below the IP payload: the rest is padding, outside datagram and checksum. */
static void test_udp_length_field_below_payload_uses_length(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t l = udp_build_l4(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 20);
	memset(l4 + l, 0xab, 6);
	size_t n = udp_wrap(TS_HOST_A, TS_ADDR0, l + 6);
	ts_input_ip(0, dgram, n);
	expect_recv(u, 20, TS_HOST_A, PORT_P);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_destination_port_zero_dropped(void **state)
{
	(void)state;
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, 0, 8);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_BAD_PORT, 1);
}

/* --- port unreachable and broadcasts --- */

static void test_udp_closed_port_answered_port_unreachable(void **state)
{
	(void)state;
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 30);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PORT, 0, dgram, n);
	ts_expect_drop(STACK_DROP_UDP_NO_PORT, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_UNREACH], 1);
}

static void test_udp_closed_port_after_close_answered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_close(u);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 8);
	assert_int_equal(ts_nframes, 1);
	ts_expect_drop(STACK_DROP_UDP_NO_PORT, 1);
}

static void test_udp_closed_port_subnet_broadcast_not_answered(void **state)
{
	(void)state;
	send_udp(0, TS_HOST_A, TS_BCAST0, PORT_P, PORT_S, 8);
	size_t n = udp_dgram(TS_HOST_A, TS_BCAST0, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_IGNORED_BCAST, 2);
}

static void test_udp_closed_port_limited_broadcast_not_answered(void **state)
{
	(void)state;
	size_t n = udp_dgram(TS_HOST_A, 0xffffffffu, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_IGNORED_BCAST, 1);
}

static void test_udp_broadcasts_delivered_to_wildcard_socket(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_BCAST0, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	n = udp_dgram(TS_HOST_A, 0xffffffffu, PORT_P, PORT_S, 9);
	input_link_bcast(n);
	struct udp_rx_hdr h;
	assert_int_equal(fifo_peek(udp_sock(u)->rx, 0, &h, sizeof(h)), sizeof(h));
	assert_int_equal(h.flags, UDP_RXF_BCAST);
	assert_int_equal(h.daddr, TS_BCAST0);
	assert_int_equal(h.spec_dst, TS_ADDR0); /* a broadcast's: the arrival port's address */
	expect_recv(u, 8, TS_HOST_A, PORT_P);
	expect_recv(u, 9, TS_HOST_A, PORT_P);
	ts_expect_no_drops();
	udp_close(u);
}

/* A host that has no address yet (a DHCP client, RFC 2131 §4.1) sends from 0.0.0.0 to the
 * limited broadcast: the one datagram from network 0 that is taken (RFC 1122 §3.2.1.3). */
static void test_udp_from_this_host_to_limited_broadcast_delivered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t n = udp_dgram(0, 0xffffffffu, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	expect_recv(u, 8, 0, PORT_P);
	/* To a directed broadcast or to us it is a martian. */
	n = udp_dgram(0, TS_BCAST0, PORT_P, PORT_S, 9);
	input_link_bcast(n);
	send_udp(0, 0, TS_ADDR0, PORT_P, PORT_S, 7);
	expect_nothing(u);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 2);
	udp_close(u);
}

static void test_udp_broadcast_delivered_to_socket_bound_to_it(void **state)
{
	(void)state;
	struct udp_sock *b = bind_ok(TS_BCAST0, PORT_S);
	struct udp_sock *a = bind_ok(TS_ADDR0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_BCAST0, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	expect_recv(b, 8, TS_HOST_A, PORT_P);
	expect_nothing(a);
	/* Unicast goes to the unicast binding only. */
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 7);
	expect_recv(a, 7, TS_HOST_A, PORT_P);
	expect_nothing(b);
	udp_close(a);
	udp_close(b);
}

static void test_udp_broadcast_not_delivered_to_unicast_binding(void **state)
{
	(void)state;
	struct udp_sock *a = bind_ok(TS_ADDR0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_BCAST0, PORT_P, PORT_S, 8);
	input_link_bcast(n);
	expect_nothing(a);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_IGNORED_BCAST, 1);
	udp_close(a);
}

/* --- fragmented datagrams in --- */

static void feed_fragments(unsigned n, bool reverse)
{
	for (unsigned k = 0; k < n; k++) {
		unsigned i = reverse ? n - 1 - k : k;
		ts_input_ip(0, frags[i].data, frags[i].len);
	}
}

static void test_udp_fragmented_datagram_reassembled_and_delivered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t len = 8000 - IP4_HDR_MIN_LEN - UDP_HDR_LEN;
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, len);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	assert_int_equal(k, 6);
	feed_fragments(k, false);
	expect_recv(u, len, TS_HOST_A, PORT_P);
	assert_int_equal(ts_s->events[STACK_EV_IP_REASSEMBLED], 1);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_fragments_in_reverse_order_delivered(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 3001);
	unsigned k = ts_fragment(dgram, n, 1000, frags, 64);
	feed_fragments(k, true);
	expect_recv(u, 3001, TS_HOST_A, PORT_P);
	ts_expect_no_drops();
	udp_close(u);
}

/* Odd fragment sizes are impossible (multiples of 8), but odd segment boundaries are not:
 * fragments of 8 bytes after a 20-byte header still sum in the right byte lanes. */
static void test_udp_small_fragments_checksum_over_chain(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 333);
	unsigned k = ts_fragment(dgram, n, 64, frags, 64);
	assert_true(k > 4);
	feed_fragments(k, false);
	expect_recv(u, 333, TS_HOST_A, PORT_P);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_fragmented_datagram_bad_checksum_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 5000);
	dgram[n - 100] ^= 0x01; /* in the last fragment */
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	feed_fragments(k, false);
	expect_nothing(u);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_UDP_BAD_CHECKSUM, 1);
	udp_close(u);
}

/* The port unreachable for a reassembled datagram quotes its start. */
static void test_udp_fragmented_datagram_to_closed_port_answered(void **state)
{
	(void)state;
	size_t n = udp_dgram(TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 3000);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	feed_fragments(k, false);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PORT, 0, dgram, TS_ICMP_ERR_QUOTE_MAX);
}

/* --- receive buffer --- */

static void test_udp_rcvbuf_overflow_dropped_and_counted(void **state)
{
	(void)state;
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 4096, 0, NULL, &u), 0);
	/* Records of 16 + 1000 bytes: four fit in 4096. */
	for (unsigned i = 0; i < 5; i++)
		send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 1000);
	ts_expect_drop(STACK_DROP_UDP_RCVBUF_ERRORS, 1);
	assert_int_equal(ts_nframes, 0);
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	assert_int_equal(in.rcvbuf, 4096);
	assert_int_equal(in.rx_queued, 4 * (sizeof(struct udp_rx_hdr) + 1000));
	assert_int_equal(in.datagrams_in, 4);
	assert_int_equal(in.rcvbuf_drops, 1);
	expect_recv(u, 1000, TS_HOST_A, PORT_P);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 1000);
	for (unsigned i = 0; i < 4; i++)
		expect_recv(u, 1000, TS_HOST_A, PORT_P);
	expect_nothing(u);
	ts_expect_drop(STACK_DROP_UDP_RCVBUF_ERRORS, 1);
	udp_close(u);
}

static void test_udp_datagram_larger_than_rcvbuf_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 1024, 0, NULL, &u), 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 1024 - sizeof(struct udp_rx_hdr) + 1);
	expect_nothing(u);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 1024 - sizeof(struct udp_rx_hdr));
	expect_recv(u, 1024 - sizeof(struct udp_rx_hdr), TS_HOST_A, PORT_P);
	ts_expect_drop(STACK_DROP_UDP_RCVBUF_ERRORS, 1);
	udp_close(u);
}

/* The FIFO wraps around: records that straddle its end come out whole. */
static void test_udp_records_wrap_around_fifo(void **state)
{
	(void)state;
	struct udp_sock *u = NULL;
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 1024, 0, NULL, &u), 0);
	for (unsigned i = 0; i < 50; i++) {
		send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 100 + i * 7 % 300);
		expect_recv(u, 100 + i * 7 % 300, TS_HOST_A, PORT_P);
	}
	ts_expect_no_drops();
	udp_close(u);
}

/* A corrupt record (the FIFO is shared with the application later) is not trusted. */
static void test_udp_corrupt_record_returns_eio_and_empties(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	struct udp_rx_hdr h = {.len = 1000};
	assert_int_equal(fifo_enqueue(udp_sock(u)->rx, &h, sizeof(h)), sizeof(h));
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -EIO);
	assert_int_equal(fifo_used(udp_sock(u)->rx), 0);
	expect_nothing(u);
	udp_close(u);
}

/* --- ICMP errors to sockets --- */

/* An ICMP error from A about frame i (a datagram we sent): it quotes its IPv4 header and
 * qlen - 20 bytes after. */
static void send_icmp_error_about(unsigned i, uint8_t type, uint8_t code, uint32_t rest,
				  size_t qlen)
{
	uint8_t icmp[600];
	struct ts_pkt p;
	ts_parse(i, &p);
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_icmp_build(icmp, sizeof(icmp), type, code, rest, p.l3, qlen);
	ts_send(0, &ip);
}

static struct udp_sock *connected_sent_one(void)
{
	struct udp_sock *u = bind_ok(0, PORT_S);
	assert_int_equal(udp_connect(u, TS_HOST_A, PORT_P), 0);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, 0, 0), 8);
	assert_int_equal(ts_nframes, 1);
	memset(&olog, 0, sizeof(olog));
	return u;
}

static void test_udp_icmp_port_unreachable_econnrefused_once(void **state)
{
	(void)state;
	struct udp_sock *u = connected_sent_one();
	send_icmp_error_about(0, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0, 28);
	assert_int_equal(olog.calls, 1);
	assert_int_equal(olog.events, SOCK_EV_ERR);
	assert_int_equal(udp_sock(u)->error, ECONNREFUSED);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	assert_int_equal(udp_sock(u)->error, 0);
	expect_nothing(u);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_ERRORS], 1);
	assert_int_equal(ts_nframes, 1); /* errors are not answered */
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_icmp_error_reported_before_queued_data(void **state)
{
	(void)state;
	struct udp_sock *u = connected_sent_one();
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 8);
	send_icmp_error_about(0, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0, 28);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	expect_recv(u, 8, TS_HOST_A, PORT_P);
	udp_close(u);
}

static void expect_icmp_errno(uint8_t type, uint8_t code, int err)
{
	struct udp_sock *u = connected_sent_one();
	send_icmp_error_about(0, type, code, type == ICMP4_DEST_UNREACH &&
			      code == ICMP4_UNREACH_FRAG_NEEDED ? 576 : 0, 28);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -err);
	udp_close(u);
	ts_clear();
}

static void test_udp_icmp_errors_map_to_errno(void **state)
{
	(void)state;
	expect_icmp_errno(ICMP4_DEST_UNREACH, ICMP4_UNREACH_NET, ENETUNREACH);
	expect_icmp_errno(ICMP4_DEST_UNREACH, ICMP4_UNREACH_HOST, EHOSTUNREACH);
	expect_icmp_errno(ICMP4_DEST_UNREACH, ICMP4_UNREACH_PROTO, ECONNREFUSED);
	expect_icmp_errno(ICMP4_DEST_UNREACH, ICMP4_UNREACH_FRAG_NEEDED, EMSGSIZE);
	expect_icmp_errno(ICMP4_DEST_UNREACH, ICMP4_UNREACH_ADMIN, EHOSTUNREACH);
	expect_icmp_errno(ICMP4_TIME_EXCEEDED, ICMP4_TIMEX_TTL, EHOSTUNREACH);
	expect_icmp_errno(ICMP4_PARAM_PROBLEM, 0, EPROTO);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_ERRORS], 7);
}

/* RFC 792 lets a router quote more than 8 bytes (RFC 1812 §4.3.2.3: as much as fits). */
static void test_udp_icmp_error_with_long_quote_accepted(void **state)
{
	(void)state;
	struct udp_sock *u = connected_sent_one();
	send_icmp_error_about(0, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0, 36);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	udp_close(u);
}

static void test_udp_icmp_error_unconnected_socket_not_told(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	fill_pattern(8);
	assert_int_equal(udp_sendto(u, payload, 8, TS_HOST_A, PORT_P), 8);
	memset(&olog, 0, sizeof(olog));
	send_icmp_error_about(0, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0, 28);
	assert_int_equal(olog.calls, 0);
	assert_int_equal(udp_sock(u)->error, 0);
	expect_nothing(u);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_UNMATCHED], 1);
	assert_int_equal(ts_s->events[STACK_EV_UDP_ICMP_ERRORS], 0);
	ts_expect_no_drops();
	udp_close(u);
}

static void test_udp_icmp_error_for_other_peer_ignored(void **state)
{
	(void)state;
	struct udp_sock *u = connected_sent_one();
	struct udp_sock *v = bind_ok(0, PORT_S + 1);
	assert_int_equal(udp_connect(v, TS_HOST_A, PORT_P + 1), 0);
	send_icmp_error_about(0, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0, 28);
	expect_nothing(v);
	assert_int_equal(udp_recvfrom(u, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	udp_close(u);
	udp_close(v);
}

/* An ICMP error whose quote is not the start of a datagram we sent is dropped, counted. */
static void send_icmp_with_quote(const uint8_t *quote, size_t qlen)
{
	uint8_t icmp[600];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_icmp_build(icmp, sizeof(icmp), ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0,
			       quote, qlen);
	ts_send(0, &ip);
}

static unsigned bad_quotes;

static void send_bad_quote(const uint8_t *quote, size_t qlen)
{
	send_icmp_with_quote(quote, qlen);
	bad_quotes++;
}

static void test_udp_icmp_error_bad_quotes_dropped(void **state)
{
	(void)state;
	struct udp_sock *u = connected_sent_one();
	struct ts_pkt p;
	ts_parse(0, &p);
	uint8_t q[64];
	bad_quotes = 0;
	/* Too short: every length below header + 8 bytes. */
	for (size_t len = 0; len < 28; len++)
		send_bad_quote(p.l3, len);
	/* Version 6. */
	memcpy(q, p.l3, 28);
	q[IP4_OFF_VER_IHL] = 0x65;
	send_bad_quote(q, 28);
	/* IHL 4, and IHL 6 with only 28 bytes quoted. */
	q[IP4_OFF_VER_IHL] = 0x44;
	send_bad_quote(q, 28);
	q[IP4_OFF_VER_IHL] = 0x46;
	send_bad_quote(q, 28);
	/* A total length that could not hold the UDP header. */
	memcpy(q, p.l3, 28);
	wire_put_be16(q + IP4_OFF_TOTAL_LEN, 27);
	send_bad_quote(q, 28);
	/* Not the first fragment: no ports in it. */
	memcpy(q, p.l3, 28);
	wire_put_be16(q + IP4_OFF_FRAG, 185);
	send_bad_quote(q, 28);
	/* A source that is not ours: we did not send it. */
	memcpy(q, p.l3, 28);
	wire_put_be32(q + IP4_OFF_SRC, TS_HOST_B);
	send_bad_quote(q, 28);
	expect_nothing(u);
	assert_int_equal(udp_sock(u)->error, 0);
	ts_expect_drop(STACK_DROP_ICMP_BAD_QUOTE, bad_quotes);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_RX_ERROR], bad_quotes);
	assert_int_equal(ts_nframes, 1);
	udp_close(u);
}

/* --- loopback --- */

static void test_udp_sendto_own_address_delivered_without_frame(void **state)
{
	(void)state;
	struct udp_sock *a = bind_ok(TS_ADDR0, 1000);
	struct udp_sock *b = bind_ok(0, 2000);
	fill_pattern(3000);
	assert_int_equal(udp_sendto(a, payload, 3000, TS_ADDR1, 2000), 3000);
	stack_loopback_drain(ts_s); /* the worker delivers to ourselves after the send */
	assert_int_equal(ts_nframes, 0);
	expect_recv(b, 3000, TS_ADDR0, 1000);
	assert_int_equal(ts_s->events[STACK_EV_UDP_OUT_DATAGRAMS], 1);
	assert_int_equal(ts_s->events[STACK_EV_UDP_IN_DATAGRAMS], 1);
	ts_expect_no_drops();
	udp_close(a);
	udp_close(b);
}

static void test_udp_loopback_to_closed_port_econnrefused(void **state)
{
	(void)state;
	struct udp_sock *a = bind_ok(0, 1000);
	assert_int_equal(udp_connect(a, TS_ADDR0, 3333), 0);
	memset(&olog, 0, sizeof(olog));
	fill_pattern(8);
	assert_int_equal(udp_sendto(a, payload, 8, 0, 0), 8);
	stack_loopback_drain(ts_s); /* the worker delivers to ourselves after the send */
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(olog.events, SOCK_EV_ERR);
	assert_int_equal(udp_recvfrom(a, buf, sizeof(buf), NULL, NULL, NULL), -ECONNREFUSED);
	assert_int_equal(ts_s->drops[STACK_DROP_UDP_NO_PORT], 1);
	udp_close(a);
}

/* Two owners that answer each other from inside notify: the stack calls them one after the
 * other, never nested, however long the exchange. */
static struct udp_sock *ping_a, *ping_b;
static unsigned ping_depth, ping_max_depth, ping_rounds;

static void ping_notify(struct sock *sk, uint32_t events)
{
	uint32_t from;
	uint16_t from_port;
	uint8_t b[64];
	(void)events;
	ping_depth++;
	if (ping_depth > ping_max_depth)
		ping_max_depth = ping_depth;
	struct udp_sock *me = sk == udp_sock(ping_a) ? ping_a : ping_b;
	ssize_t n;
	while ((n = udp_recvfrom(me, b, sizeof(b), &from, &from_port, NULL)) >= 0) {
		if (me == ping_a && ++ping_rounds >= 1000)
			continue;
		assert_int_equal(udp_sendto(me, b, (size_t)n, from, from_port), n);
	}
	ping_depth--;
}

static void test_udp_loopback_ping_pong_from_notify_does_not_nest(void **state)
{
	(void)state;
	const struct sock_owner o = {.notify = ping_notify};
	ping_depth = ping_max_depth = ping_rounds = 0;
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, 1000, 0, 0, &o, &ping_a), 0);
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, 2000, 0, 0, &o, &ping_b), 0);
	assert_int_equal(udp_sendto(ping_a, "ping", 4, TS_ADDR0, 2000), 4);
	stack_loopback_drain(ts_s); /* the worker delivers to ourselves after the send */
	assert_int_equal(ping_rounds, 1000);
	assert_int_equal(ping_max_depth, 1);
	assert_int_equal(ts_nframes, 0);
	udp_close(ping_a);
	udp_close(ping_b);
}

/* An owner may close its socket from inside notify. */
static void close_self_notify(struct sock *sk, uint32_t events)
{
	(void)events;
	assert_ptr_equal(sk, udp_sock(ping_a));
	udp_close(ping_a);
}

static void test_udp_close_from_notify_safe(void **state)
{
	(void)state;
	const struct sock_owner o = {.notify = close_self_notify};
	assert_int_equal(udp_bind(ts_s, 0, PORT_S, 0, 0, &o, &ping_a), 0);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 8);
	/* Gone: the port is free again. */
	struct udp_sock *u = bind_ok(0, PORT_S);
	udp_close(u);
}

/* ... even the sender's, from the receiver of its loopback datagram. */
static void close_sender_notify(struct sock *sk, uint32_t events)
{
	(void)events;
	assert_ptr_equal(sk, udp_sock(ping_b));
	udp_close(ping_a);
}

static void test_udp_sender_closed_by_loopback_receiver_safe(void **state)
{
	(void)state;
	const struct sock_owner o = {.notify = close_sender_notify};
	assert_int_equal(udp_bind(ts_s, TS_ADDR0, 2000, 0, 0, &o, &ping_b), 0);
	ping_a = bind_ok(0, 1000);
	assert_int_equal(udp_sendto(ping_a, "x", 1, TS_ADDR0, 2000), 1);
	stack_loopback_drain(ts_s); /* the worker delivers to ourselves after the send */
	struct udp_sock *u = bind_ok(0, 1000); /* ping_a is gone */
	udp_close(u);
	udp_close(ping_b);
}

/* --- introspection --- */

static int count_socks(const struct udp_sock *u, void *arg)
{
	struct udp_sock_info in;
	udp_sock_info(u, &in);
	unsigned *ports = arg;
	ports[0]++;
	ports[1] += in.lport;
	return 0;
}

static int stop_at_first(const struct udp_sock *u, void *arg)
{
	(void)u;
	(*(unsigned *)arg)++;
	return 42;
}

static void test_udp_walk_visits_every_socket(void **state)
{
	(void)state;
	struct udp_sock *a = bind_ok(0, 1), *b = bind_ok(TS_ADDR0, 2), *c = bind_ok(TS_ADDR1, 3);
	unsigned acc[2] = {0, 0};
	assert_int_equal(udp_walk(ts_s, count_socks, acc), 0);
	assert_int_equal(acc[0], 3);
	assert_int_equal(acc[1], 6);
	unsigned calls = 0;
	assert_int_equal(udp_walk(ts_s, stop_at_first, &calls), 42);
	assert_int_equal(calls, 1);
	udp_close(b);
	acc[0] = acc[1] = 0;
	assert_int_equal(udp_walk(ts_s, count_socks, acc), 0);
	assert_int_equal(acc[0], 2);
	udp_close(a);
	udp_close(c);
}

/* Sockets left open are freed with the stack (the teardown checks mbufs; ASan the rest). */
static void test_udp_sockets_open_at_destroy_freed(void **state)
{
	(void)state;
	struct udp_sock *u = bind_ok(0, PORT_S);
	send_udp(0, TS_HOST_A, TS_ADDR0, PORT_P, PORT_S, 100);
	assert_int_equal(udp_connect(bind_ok(0, 0), TS_HOST_A, PORT_P), 0);
	(void)u;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, ts_setup, ts_teardown)
		T(test_udp_bind_wildcard_then_same_port_eaddrinuse),
		T(test_udp_bind_specific_then_wildcard_eaddrinuse),
		T(test_udp_bind_two_addresses_same_port_allowed),
	T(test_udp_reuseaddr_connected_socket_leaves_its_port_to_the_next),
	T(test_udp_reuseaddr_disconnect_takes_the_place_back),
		T(test_udp_bind_foreign_address_eaddrnotavail),
		T(test_udp_bind_close_frees_port),
		T(test_udp_bind_port_zero_picks_distinct_ephemeral_ports),
		T(test_udp_bind_ephemeral_skips_taken_ports),
		T(test_udp_bind_default_rcvbuf_holds_max_datagram),
		T(test_udp_datagram_delivered_with_source),
		T(test_udp_recv_empty_returns_eagain),
		T(test_udp_empty_datagram_delivered),
		T(test_udp_recv_keeps_datagram_boundaries),
		T(test_udp_recv_truncates_and_discards_rest),
		T(test_udp_source_port_zero_delivered),
		T(test_udp_fifo_record_carries_header),
		T(test_udp_specific_bind_ignores_other_local_address),
		T(test_udp_specific_binds_on_one_port_each_get_their_own),
		T(test_udp_connect_takes_route_source_address),
		T(test_udp_connected_socket_hears_only_its_peer),
		T(test_udp_disconnect_hears_everyone_again),
		T(test_udp_reconnect_moves_filter_to_new_peer),
		T(test_udp_connect_errors),
		T(test_udp_sendto_builds_datagram),
		T(test_udp_sendto_carries_the_sockets_ttl_and_tos),
		T(test_udp_sendmsg_source_ttl_tos_for_one_datagram),
		T(test_udp_own_broadcasts_reach_our_sockets_too),
		T(test_udp_sendto_empty_and_odd_lengths_checksum_ok),
		T(test_udp_sendto_from_specific_address),
		T(test_udp_sendto_computed_zero_checksum_sent_as_ffff),
		T(test_udp_sendto_connected_peer_when_no_address),
		T(test_udp_sendto_errors),
		T(test_udp_sendto_after_address_removed_eaddrnotavail),
		T(test_udp_sendto_subnet_broadcast_with_so_broadcast),
		T(test_udp_sendto_limited_broadcast_from_bound_address_port),
		T(test_udp_sendto_limited_broadcast_by_default_route),
		T(test_udp_sendmsg_bcast_on_port_from_unspecified_source),
		T(test_udp_dhcp_reply_to_offered_address_delivered_while_client_runs),
		T(test_udp_sendto_8000_bytes_sent_as_fragments),
		T(test_udp_sendto_max_payload_sent_as_45_fragments),
		T(test_udp_zero_checksum_accepted_and_counted),
		T(test_udp_bad_checksum_dropped_and_counted),
		T(test_udp_bad_checksum_to_closed_port_not_answered),
		T(test_udp_checksum_covers_pseudo_header),
		T(test_udp_truncated_header_dropped),
		T(test_udp_length_field_past_payload_dropped),
		T(test_udp_length_field_below_header_dropped),
		T(test_udp_length_field_below_payload_uses_length),
		T(test_udp_destination_port_zero_dropped),
		T(test_udp_closed_port_answered_port_unreachable),
		T(test_udp_closed_port_after_close_answered),
		T(test_udp_closed_port_subnet_broadcast_not_answered),
		T(test_udp_closed_port_limited_broadcast_not_answered),
		T(test_udp_broadcasts_delivered_to_wildcard_socket),
		T(test_udp_from_this_host_to_limited_broadcast_delivered),
		T(test_udp_broadcast_delivered_to_socket_bound_to_it),
		T(test_udp_broadcast_not_delivered_to_unicast_binding),
		T(test_udp_fragmented_datagram_reassembled_and_delivered),
		T(test_udp_fragments_in_reverse_order_delivered),
		T(test_udp_small_fragments_checksum_over_chain),
		T(test_udp_fragmented_datagram_bad_checksum_dropped),
		T(test_udp_fragmented_datagram_to_closed_port_answered),
		T(test_udp_rcvbuf_overflow_dropped_and_counted),
		T(test_udp_datagram_larger_than_rcvbuf_dropped),
		T(test_udp_records_wrap_around_fifo),
		T(test_udp_corrupt_record_returns_eio_and_empties),
		T(test_udp_icmp_port_unreachable_econnrefused_once),
		T(test_udp_icmp_error_reported_before_queued_data),
		T(test_udp_icmp_errors_map_to_errno),
		T(test_udp_icmp_error_with_long_quote_accepted),
		T(test_udp_icmp_error_unconnected_socket_not_told),
		T(test_udp_icmp_error_for_other_peer_ignored),
		T(test_udp_icmp_error_bad_quotes_dropped),
		T(test_udp_sendto_own_address_delivered_without_frame),
		T(test_udp_loopback_to_closed_port_econnrefused),
		T(test_udp_loopback_ping_pong_from_notify_does_not_nest),
		T(test_udp_close_from_notify_safe),
		T(test_udp_sender_closed_by_loopback_receiver_safe),
		T(test_udp_walk_visits_every_socket),
		T(test_udp_sockets_open_at_destroy_freed),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
