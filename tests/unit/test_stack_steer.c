/* Flow steering between workers (src/stack/steer.c and its use in ip4_input.c, tcp_user.c,
 * udp.c): a stack that is worker `id` of two hands what the other owns to it, keeps what it
 * owns, and opens connections on ports it owns. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "stack/steer.h"
#include "tcp/tcp.h"
#include "tcp/tcp_priv.h"
#include "stack/netcfg6.h"
#include "udp/udp.h"
#include "../../src/wire/icmp6.h"
#include "../../src/wire/tcp.h"
#include "../../src/wire/udp.h"

static struct steer steer;

/* What the stack handed to another worker. */
#define MAX_HANDED 64
static struct {
	unsigned worker;
	unsigned how;
	struct rte_mbuf *m;
} handed[MAX_HANDED];
static unsigned nhanded;

static bool capture_steer(void *ctx, unsigned worker, struct rte_mbuf *m, unsigned how)
{
	(void)ctx;
	if (nhanded == MAX_HANDED)
		return false;
	handed[nhanded++] = (typeof(handed[0])){.worker = worker, .how = how, .m = m};
	return true;
}

/* Makes the test's stack worker id of two. */
static void become_worker(unsigned id)
{
	struct stack_params p;
	ts_params(&p);
	p.id = id;
	p.steer = &steer;
	p.ops.steer = capture_steer;
	ts_restart(&p, true);
}

static int setup(void **state)
{
	steer_init(&steer, 2);
	nhanded = 0;
	int rc = ts_setup(state);
	become_worker(0);
	return rc;
}

static int teardown(void **state)
{
	for (unsigned i = 0; i < nhanded; i++)
		rte_pktmbuf_free(handed[i].m);
	nhanded = 0;
	return ts_teardown(state);
}

static uint8_t dgram[2048];

/* A SYN from host A's port sport to our port 80, as a datagram in dgram. */
static size_t syn_from(uint16_t sport)
{
	uint8_t l4[64];
	struct tcp_repr th = {.src_port = sport, .dst_port = 80, .seq = 1000, .flags = TCP_FLAG_SYN,
			      .window = 65535};
	size_t n = tcp_build(l4, sizeof(l4), &th);
	wire_put_be16(l4 + TCP_OFF_CSUM, tcp_checksum(TS_HOST_A, TS_ADDR0, l4, n));
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_TCP);
	ip.payload = l4;
	ip.len = n;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

/* A source port whose flow to our port 80 worker `owner` owns. */
static uint16_t port_owned_by(unsigned owner)
{
	for (uint16_t p = 40000;; p++)
		if (steer_tcp_owner(&steer, TS_HOST_A, TS_ADDR0, p, 80) == owner)
			return p;
}

static void test_segment_of_another_workers_flow_is_handed_to_it(void **state)
{
	(void)state;
	size_t n = syn_from(port_owned_by(1));
	ts_input_ip(0, dgram, n);
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, 1);
	assert_int_equal(ts_nframes, 0); /* not answered here */
	assert_int_equal(ts_s->events[STACK_EV_IP_STEERED_OUT], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_IN_SEGS], 0);

	/* The owner takes it as if it had received it: no listener, so a reset. */
	struct rte_mbuf *m = handed[0].m;
	nhanded = 0;
	become_worker(1);
	stack_input_steered(ts_s, m, handed[0].how);
	assert_int_equal(ts_s->events[STACK_EV_IP_STEERED_IN], 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_NO_CONN], 1);
	assert_int_equal(ts_nframes, 1);
	assert_int_equal(nhanded, 0); /* never handed on again */
}

static void test_segment_of_own_flow_stays(void **state)
{
	(void)state;
	size_t n = syn_from(port_owned_by(0));
	ts_input_ip(0, dgram, n);
	assert_int_equal(nhanded, 0);
	assert_int_equal(ts_s->events[STACK_EV_TCP_NO_CONN], 1);
}

static void test_echo_request_answered_by_whichever_worker_gets_it(void **state)
{
	(void)state;
	for (uint16_t seq = 0; seq < 8; seq++) {
		size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 7, seq, 32);
		ts_input_ip(0, dgram, n);
	}
	assert_int_equal(nhanded, 0);
	assert_int_equal(ts_nframes, 8);
}

/* A datagram from host A's port 5000 to our port dport, of len payload bytes. */
static size_t udp_to(uint16_t dport, size_t len)
{
	uint8_t l4[1600];
	struct udp_repr u = {.src_port = 5000, .dst_port = dport, .length = (uint16_t)(8 + len)};
	udp_build(l4, sizeof(l4), &u);
	for (size_t i = 0; i < len; i++)
		l4[8 + i] = ts_pattern(i);
	wire_put_be16(l4 + UDP_OFF_CSUM, udp_checksum(TS_HOST_A, TS_ADDR0, l4, 8 + len));
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_UDP);
	ip.payload = l4;
	ip.len = 8 + len;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

static void test_udp_goes_to_the_owner_of_its_port(void **state)
{
	(void)state;
	uint16_t theirs = 7001, ours = 7000;
	assert_int_equal(steer_udp_owner(&steer, theirs), 1);
	assert_int_equal(steer_udp_owner(&steer, ours), 0);
	ts_input_ip(0, dgram, udp_to(theirs, 10));
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, 1);
	ts_input_ip(0, dgram, udp_to(ours, 10));
	assert_int_equal(nhanded, 1); /* ours: port unreachable from here */
	assert_int_equal(ts_nframes, 1);
}

/* IPv6 (ip6_input.c's ip6_owner, icmp6_owner): 2001:db8::2, which these tests give port 0,
 * and the peer 2001:db8::1. */
static const struct inet_addr steer_local6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
static const struct inet_addr steer_peer6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};

/* The IPv6 datagram src → dst with next header nh and l4[0..len) (its checksum field at
 * csum_off filled in) in a frame from A on port 0. */
static void input6(const struct inet_addr *src, const struct inet_addr *dst, uint8_t nh,
		   uint8_t *l4, size_t len, size_t csum_off)
{
	static uint8_t frame[ETH_HDR_LEN + 256];
	uint32_t sum = inet_addr_csum_pseudo(src, dst, nh, (uint32_t)len);
	wire_put_be16(l4 + csum_off, wire_csum_finish(wire_csum_add(sum, l4, len)));
	struct ip6_repr ip = {.payload_len = (uint16_t)len, .next_header = nh, .hop_limit = 64,
			      .src = inet_addr_to_v6(src), .dst = inet_addr_to_v6(dst)};
	ip6_build(dgram, IP6_HDR_LEN, &ip);
	memcpy(dgram + IP6_HDR_LEN, l4, len);
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV6, dgram,
				 IP6_HDR_LEN + len);
	ts_input_frame(0, frame, fl);
}

static void add_local6(void)
{
	struct ip6_addr a = inet_addr_to_v6(&steer_local6);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a, 64, 0), 0);
}

static void test_udp6_goes_to_the_owner_of_its_port(void **state)
{
	(void)state;
	add_local6();
	for (uint16_t dport = 7000; dport <= 7001; dport++) {
		uint8_t l4[UDP_HDR_LEN];
		struct udp_repr u = {.src_port = 5000, .dst_port = dport, .length = 8};
		udp_build(l4, sizeof(l4), &u);
		input6(&steer_peer6, &steer_local6, IP6_NH_UDP, l4, sizeof(l4), UDP_OFF_CSUM);
	}
	/* 7001 is worker 1's; 7000 ours (port unreachable from here). */
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, 1);
	assert_int_equal(steer_udp_owner(&steer, 7001), 1);
}

static void test_icmp6_error_goes_to_the_owner_of_the_udp_port_it_quotes(void **state)
{
	(void)state;
	add_local6();
	for (uint16_t sport = 7000; sport <= 7001; sport++) {
		/* Port unreachable quoting our datagram from sport to the peer's 5000. */
		uint8_t msg[ICMP6_HDR_LEN + IP6_HDR_LEN + UDP_HDR_LEN];
		struct icmp6_repr ic = {.type = ICMP6_DEST_UNREACH, .code = ICMP6_UNREACH_PORT};
		icmp6_build_header(msg, ICMP6_HDR_LEN, &ic);
		struct ip6_repr q = {.payload_len = UDP_HDR_LEN, .next_header = IP6_NH_UDP,
				     .hop_limit = 64, .src = inet_addr_to_v6(&steer_local6),
				     .dst = inet_addr_to_v6(&steer_peer6)};
		ip6_build(msg + ICMP6_HDR_LEN, IP6_HDR_LEN, &q);
		struct udp_repr u = {.src_port = sport, .dst_port = 5000, .length = 8};
		udp_build(msg + ICMP6_HDR_LEN + IP6_HDR_LEN, UDP_HDR_LEN, &u);
		input6(&steer_peer6, &steer_local6, IP6_NH_ICMPV6, msg, sizeof(msg),
		       ICMP6_OFF_CSUM);
	}
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, 1);
}

static void test_fragments_meet_then_the_datagram_goes_to_its_owner(void **state)
{
	(void)state;
	unsigned frag_owner = steer_frag_owner(&steer, TS_HOST_A, TS_ADDR0);
	uint16_t port = steer_udp_owner(&steer, 7000) == frag_owner ? 7001 : 7000;
	size_t n = udp_to(port, 1200);
	struct ts_blob frags[4];
	unsigned nf = ts_fragment(dgram, n, 512, frags, 4);
	assert_int_equal(nf, 3);
	become_worker(frag_owner == 0 ? 1 : 0);
	for (unsigned i = 0; i < nf; i++)
		ts_input_ip(0, frags[i].data, frags[i].len);
	assert_int_equal(nhanded, nf); /* every fragment to the reassembling worker */
	struct rte_mbuf *m[4];
	unsigned how[4];
	for (unsigned i = 0; i < nf; i++) {
		assert_int_equal(handed[i].worker, frag_owner);
		m[i] = handed[i].m;
		how[i] = handed[i].how;
	}
	nhanded = 0;
	become_worker(frag_owner);
	for (unsigned i = 0; i < nf; i++)
		stack_input_steered(ts_s, m[i], how[i]);
	assert_int_equal(ts_s->events[STACK_EV_IP_REASSEMBLED], 1);
	/* Whole, it belongs to the port's owner, the other worker. */
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, frag_owner == 0 ? 1 : 0);
	assert_int_equal(rte_pktmbuf_pkt_len(handed[0].m), n);
}

static void test_icmp_error_goes_to_the_owner_of_the_flow_it_quotes(void **state)
{
	(void)state;
	/* Our SYN from port lport to A:80 would be answered to the owner of A:80 → us:lport. */
	uint16_t lport = 0;
	for (uint16_t p = 50000; lport == 0; p++)
		if (steer_tcp_owner(&steer, TS_HOST_A, TS_ADDR0, 80, p) == 1)
			lport = p;
	uint8_t quoted[28];
	struct ts_ip in = ts_ip_of(TS_ADDR0, TS_HOST_A, IP4_PROTO_TCP);
	uint8_t l4[8] = {0};
	wire_put_be16(l4, lport);
	wire_put_be16(l4 + 2, 80);
	in.payload = l4;
	in.len = sizeof(l4);
	size_t qn = ts_ip_build(quoted, sizeof(quoted), &in);
	uint8_t icmp[64];
	size_t in_len = ts_icmp_build(icmp, sizeof(icmp), ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0,
				      quoted, qn);
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = in_len;
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	ts_input_ip(0, dgram, n);
	assert_int_equal(nhanded, 1);
	assert_int_equal(handed[0].worker, 1);
}

static void test_active_opens_pick_ports_this_worker_owns(void **state)
{
	(void)state;
	become_worker(1);
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct sock_owner own = {0};
	for (int i = 0; i < 20; i++) {
		struct tcp_conn *c;
		assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(0), 0, INET_ADDR_V4(TS_HOST_A), 80,
			&o, &own, &c), 0);
		const struct sock *sk = tcp_sock(c);
		assert_int_equal(steer_tcp_owner(&steer, TS_HOST_A, inet_addr_to_v4(&sk->laddr), 80,
			sk->lport), 1);
		tcp_close(c);
	}
	/* A port the other worker owns: open it there. */
	uint16_t theirs = 0;
	for (uint16_t p = 50000; theirs == 0; p++)
		if (steer_tcp_owner(&steer, TS_HOST_A, TS_ADDR0, 80, p) == 0)
			theirs = p;
	struct tcp_conn *c = NULL;
	assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(0), theirs, INET_ADDR_V4(TS_HOST_A), 80, &o,
		&own, &c), -EXDEV);
	struct udp_sock *u;
	for (int i = 0; i < 20; i++) {
		assert_int_equal(udp_bind(ts_s, 0, 0, 0, 0, NULL, &u), 0);
		assert_int_equal(steer_udp_owner(&steer, udp_sock(u)->lport), 1);
		udp_close(u);
	}
	assert_int_equal(udp_bind(ts_s, 0, 7000, 0, 0, NULL, &u), -EXDEV);
}

/* A lent segment (payload in the sender's send FIFO, tcp_seg_lend) whose flow another
 * worker owns goes there as a copy: the FIFO lives as long as this worker says. Connections
 * to our own address stay on the worker owning their flow (the key is symmetric), so the
 * test moves the flow's table entry to worker 1 after the handshake. */
static void test_lent_loopback_payload_goes_to_another_worker_as_a_copy(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct sock_owner own = {0};
	struct tcp_conn *l, *c;
	assert_int_equal(tcp_listen(ts_s, INET_ADDR_V4(0), 80, 4, &o, &own, &l), 0);
	assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(0), 0, INET_ADDR_V4(TS_ADDR0), 80, &o, &own,
		&c), 0);
	ts_advance(1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	assert_int_equal(nhanded, 0);
	const struct sock *sk = tcp_sock(c);
	uint32_t h = toeplitz_ipv4_l4(&steer.hash, TS_ADDR0, TS_ADDR0, sk->lport, 80);
	steer.table[h & (STEER_TABLE_SIZE - 1)] = 1;
	static uint8_t data[20000];
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = ts_pattern(i);
	assert_int_equal(tcp_send(c, data, sizeof(data)), sizeof(data));
	ts_advance(1);
	assert_int_equal(nhanded, 1);
	struct rte_mbuf *m = handed[0].m;
	for (const struct rte_mbuf *seg = m; seg != NULL; seg = seg->next)
		assert_false(RTE_MBUF_HAS_EXTBUF(seg));
	assert_int_equal(rte_mbuf_ext_refcnt_read(&c->lent), 0);
	static uint8_t got[sizeof(data)];
	uint32_t off = rte_pktmbuf_pkt_len(m) - sizeof(data);
	assert_non_null(rte_pktmbuf_read(m, off, sizeof(data), got));
	assert_memory_equal(rte_pktmbuf_read(m, off, sizeof(data), got), data, sizeof(data));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_segment_of_another_workers_flow_is_handed_to_it,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_segment_of_own_flow_stays, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_echo_request_answered_by_whichever_worker_gets_it, setup, teardown),
		cmocka_unit_test_setup_teardown(test_udp_goes_to_the_owner_of_its_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_udp6_goes_to_the_owner_of_its_port, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_icmp6_error_goes_to_the_owner_of_the_udp_port_it_quotes, setup,
			teardown),
		cmocka_unit_test_setup_teardown(
			test_fragments_meet_then_the_datagram_goes_to_its_owner, setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_icmp_error_goes_to_the_owner_of_the_flow_it_quotes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_active_opens_pick_ports_this_worker_owns, setup,
						teardown),
		cmocka_unit_test_setup_teardown(
			test_lent_loopback_payload_goes_to_another_worker_as_a_copy, setup, teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
