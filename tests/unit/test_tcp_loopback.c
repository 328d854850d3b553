/* TCP between two sockets of one stack (10.0.0.2 to itself): the whole life of a connection
 * without a frame leaving; segments of up to 64 KB whose payload is lent from the sender's
 * send FIFO (tcp_seg_lend) until the loopback queue delivers them, to the stack's own IPv4
 * and IPv6 addresses alike (one path for both families); the abort that takes lent
 * segments back out of the queue; the connection to itself, which copies instead. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stack/netcfg6.h"
#include "test_tcp_util.h"

#define LB_BYTES (200 * 1024)

struct lb_pair {
	struct tcp_conn *listener, *client, *server;
};

/* The stack's own IPv6 address, added to port 0 by the tests that use it. */
static const struct inet_addr own6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};

static void lb_add_own6(void)
{
	struct ip6_addr a = inet_addr_to_v6(&own6);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a, 64, 0), 0);
}

/* A listener on the wildcard of dst's family, a client connected to dst, and the server
 * end it accepted. */
static void lb_open_to(struct lb_pair *p, const struct inet_addr *dst)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct inet_addr any = inet_addr_any(!inet_addr_is_v4(dst));
	assert_int_equal(tcp_listen(ts_s, &any, TP_LPORT, 4, &o, &tp_owner, &p->listener), 0);
	assert_int_equal(tcp_connect(ts_s, &any, 0, dst, TP_LPORT, &o, &tp_owner, &p->client), 0);
	tp_advance(1);
	assert_int_equal(tcp_conn_state(p->client), TCP_ESTABLISHED);
	p->server = tcp_accept(p->listener, &tp_owner);
	assert_non_null(p->server);
}

static void lb_open(struct lb_pair *p)
{
	lb_open_to(p, INET_ADDR_V4(TS_ADDR0));
}

/* Closes all three and lets TIME-WAIT pass: nothing may be left of them. */
static void lb_close(struct lb_pair *p)
{
	tcp_close(p->client);
	tcp_close(p->server);
	tcp_close(p->listener);
	tp_advance(2 * TCP_MSL_MS + 1000);
	assert_int_equal(ts_s->tcp->nconns, 0);
}

static uint8_t *lb_pattern(size_t n)
{
	uint8_t *b = malloc(n);
	assert_non_null(b);
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 7 + i / 251);
	return b;
}

/* Receives exactly n bytes on c, advancing the clock while it waits. */
static void lb_recv_all(struct tcp_conn *c, uint8_t *into, size_t n)
{
	size_t got = 0;
	for (unsigned spins = 0; got < n && spins < 1000; spins++) {
		ssize_t r = tcp_recv(c, into + got, n - got);
		if (r == -EAGAIN) {
			tp_advance(1);
			continue;
		}
		assert_true(r > 0);
		got += (size_t)r;
	}
	assert_int_equal(got, n);
}

static unsigned lb_lent(const struct tcp_conn *c)
{
	return rte_mbuf_ext_refcnt_read(&c->lent);
}

/* The handshake, data both ways and the close go through the loopback path without a
 * frame leaving. */
static void test_connect_to_own_address_transfers_and_closes(void **state)
{
	(void)state;
	struct lb_pair p;
	lb_open(&p);
	assert_int_equal(tcp_send(p.client, "ping", 4), 4);
	tp_advance(1);
	char b[8];
	assert_int_equal(tcp_recv(p.server, b, sizeof(b)), 4);
	assert_memory_equal(b, "ping", 4);
	assert_int_equal(tcp_send(p.server, "pong", 4), 4);
	tp_advance(1);
	assert_int_equal(tcp_recv(p.client, b, sizeof(b)), 4);
	assert_memory_equal(b, "pong", 4);
	tcp_close(p.client);
	tp_advance(1);
	assert_int_equal(tcp_recv(p.server, b, sizeof(b)), 0);
	tcp_close(p.server);
	tp_advance(2 * TCP_MSL_MS + 1000);
	assert_int_equal(ts_nframes, 0);
	tcp_close(p.listener);
	tp_advance(1);
	assert_int_equal(ts_s->tcp->nconns, 0);
}

/* Sends LB_BYTES from client to server of p, open to dst, checking that each write is
 * lent and waits in the loopback queue, and that segments are 64 KB ones. */
static void lb_lent_transfer(const struct inet_addr *dst)
{
	struct lb_pair p;
	lb_open_to(&p, dst);
	uint8_t *out = lb_pattern(LB_BYTES), *in = malloc(LB_BYTES);
	uint64_t segs0 = ts_s->events[STACK_EV_TCP_OUT_SEGS];
	size_t sent = 0;
	while (sent < LB_BYTES) {
		ssize_t n = tcp_send(p.client, out + sent, LB_BYTES - sent);
		assert_true(n > 0);
		sent += (size_t)n;
		/* What was just sent waits in the loopback queue, pointing into the FIFO. */
		assert_true(lb_lent(p.client) > 0);
		assert_true(ts_s->lo_count > 0);
		tp_advance(1);
	}
	lb_recv_all(p.server, in, LB_BYTES);
	assert_memory_equal(in, out, LB_BYTES);
	tp_advance(1);
	assert_int_equal(lb_lent(p.client), 0);
	/* 64 KB segments, not 2 KB mbufs' worth: data and ACKs together stay few. */
	assert_true(ts_s->events[STACK_EV_TCP_OUT_SEGS] - segs0 < LB_BYTES / 8192);
	assert_int_equal(ts_nframes, 0);
	free(out);
	free(in);
	lb_close(&p);
}

static void test_payload_lent_until_delivered_and_received_exactly(void **state)
{
	(void)state;
	lb_lent_transfer(INET_ADDR_V4(TS_ADDR0));
}

static void test_payload_to_own_ipv6_address_lent_in_64k_segments_as_over_ipv4(void **state)
{
	(void)state;
	lb_add_own6();
	lb_lent_transfer(&own6);
}

static void test_abort_takes_its_lent_segments_out_of_the_queue(void **state)
{
	(void)state;
	struct lb_pair p;
	lb_open(&p);
	uint8_t *out = lb_pattern(LB_BYTES);
	assert_true(tcp_send(p.client, out, LB_BYTES) > 0);
	unsigned lent = lb_lent(p.client);
	assert_true(lent > 0);
	/* SO_LINGER 0: the close aborts, freeing the send FIFO the queued segments point
	 * into. They go with it, counted, and the peer gets the reset alone. */
	p.client->opts.linger = true;
	tcp_close(p.client);
	assert_int_equal(lb_lent(p.client), 0); /* freed at the next tick, readable now */
	assert_true(ts_s->drops[STACK_DROP_IP_LOOPBACK_ORPHAN] > 0);
	tp_advance(1);
	uint8_t b[16];
	assert_int_equal(tcp_recv(p.server, b, sizeof(b)), -ECONNRESET);
	free(out);
	tcp_close(p.server);
	tcp_close(p.listener);
	tp_advance(1);
	assert_int_equal(ts_s->tcp->nconns, 0);
}

static void test_connection_to_itself_copies_what_it_sends(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *c;
	/* Simultaneous open with itself (RFC 9293 §3.5, figure 7, with one end). */
	assert_int_equal(tcp_connect(ts_s, INET_ADDR_V4(TS_ADDR0), 5000, INET_ADDR_V4(TS_ADDR0),
		5000, &o, &tp_owner, &c), 0);
	tp_advance(1);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	uint8_t *out = lb_pattern(LB_BYTES / 4), *in = malloc(LB_BYTES / 4);
	assert_int_equal(tcp_send(c, out, LB_BYTES / 4), LB_BYTES / 4);
	assert_int_equal(lb_lent(c), 0);
	lb_recv_all(c, in, LB_BYTES / 4);
	assert_memory_equal(in, out, LB_BYTES / 4);
	free(out);
	free(in);
	c->opts.linger = true;
	tcp_close(c);
	tp_advance(1);
	assert_int_equal(ts_s->tcp->nconns, 0);
}


/* To the stack's own IPv6 address, both ways, through the loopback queue; a listener on
 * :: takes it. */
static void test_connect_to_own_ipv6_address_transfers_both_ways(void **state)
{
	(void)state;
	lb_add_own6();
	struct lb_pair p;
	lb_open_to(&p, &own6);
	assert_memory_equal(tcp_sock(p.server)->raddr.b, own6.b, 16);
	uint8_t *out = lb_pattern(LB_BYTES), *in = malloc(LB_BYTES);
	assert_non_null(in);
	for (int dir = 0; dir < 2; dir++) {
		struct tcp_conn *from = dir == 0 ? p.client : p.server;
		struct tcp_conn *to = dir == 0 ? p.server : p.client;
		size_t sent = 0, got = 0;
		for (unsigned spins = 0; got < LB_BYTES && spins < 5000; spins++) {
			ssize_t n = sent < LB_BYTES ? tcp_send(from, out + sent, LB_BYTES - sent) : 0;
			if (n > 0)
				sent += (size_t)n;
			tp_advance(1);
			ssize_t r = tcp_recv(to, in + got, LB_BYTES - got);
			if (r > 0)
				got += (size_t)r;
		}
		assert_int_equal(got, LB_BYTES);
		assert_memory_equal(in, out, LB_BYTES);
		assert_int_equal(lb_lent(from), 0);
	}
	assert_int_equal(ts_nframes, 0);
	free(out);
	free(in);
	lb_close(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_connect_to_own_address_transfers_and_closes, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_connect_to_own_ipv6_address_transfers_both_ways, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_payload_lent_until_delivered_and_received_exactly, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_payload_to_own_ipv6_address_lent_in_64k_segments_as_over_ipv4, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_abort_takes_its_lent_segments_out_of_the_queue, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_connection_to_itself_copies_what_it_sends, tp_setup, tp_teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
