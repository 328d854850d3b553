/* TCP opening handshakes (RFC 9293 §3.5): passive and active opens, option negotiation
 * (MSS, window scale and timestamps of RFC 7323, SACK-permitted of RFC 2018, ECN of
 * RFC 3168 §6.1.1), resets to closed ports, SYN retransmission and the retry limit. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_tcp_util.h"

static void test_closed_port_syn_answered_with_rst_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST | TCP_FLAG_ACK);
	assert_int_equal(g.th.seq, 0);
	assert_int_equal(g.th.ack, TP_PEER_ISN + 1);
	assert_int_equal(ts_s->events[STACK_EV_TCP_NO_CONN], 1);
}

static void test_closed_port_ack_answered_with_rst_at_its_ack(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	p.rcv_nxt = 777;
	tp_send(&p, TCP_FLAG_ACK, "x", 1, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_RST);
	assert_int_equal(g.th.seq, 777);
}

static void test_closed_port_rst_not_answered(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send(&p, TCP_FLAG_RST, NULL, 0, NULL);
	tp_expect_none();
}

static void test_listen_syn_answered_with_syn_ack_and_options(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g.th.ack, TP_PEER_ISN + 1);
	assert_true(g.th.options.has_mss);
	assert_int_equal(g.th.options.mss, TP_MSS_1500);
	assert_true(g.th.options.sack_permitted);
	assert_true(g.th.options.has_wscale);
	assert_true(g.th.options.has_timestamps);
	assert_int_equal(g.th.options.tsecr, p.tsval);
	assert_true(g.ip.df);
	assert_int_equal(ts_s->events[STACK_EV_TCP_PASSIVE_OPENS], 1);
}

/* IP_TTL and IP_TOS of a listener (BGP's GTSM TTL 255, DSCP CS6) are on its SYN-ACK and
 * pass to the accepted connection, as Linux's inet_sk_clone; the ECN bits of the TOS stay
 * TCP's (RFC 3168 §6.1), so the application's are not sent. */
static void test_listen_ip_ttl_tos_on_syn_ack_and_inherited_by_child(void **state)
{
	(void)state;
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.ip = (struct sock_ip_opts){.ttl = 255, .tos = 0xc3};
	struct tcp_conn *l;
	assert_int_equal(tcp_listen(ts_s, tp_any_addr(), TP_LPORT, 4, &o, &tp_owner, &l), 0);
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, NULL);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g.ip.ttl, 255);
	assert_int_equal(g.ip.tos, 0xc0);
	p.rcv_nxt = g.th.seq + 1;
	tp_send(&p, TCP_FLAG_ACK, NULL, 0, NULL);
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_get_sockopts(c)->ip.ttl, 255);
	assert_int_equal(tcp_get_sockopts(c)->ip.tos, 0xc3);
}

static void test_listen_syn_without_options_gets_none_back(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options none = {0};
	tp_send(&p, TCP_FLAG_SYN, NULL, 0, &none);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_true(g.th.options.has_mss);
	assert_false(g.th.options.sack_permitted);
	assert_false(g.th.options.has_wscale);
	assert_false(g.th.options.has_timestamps);
}

static void test_passive_open_completes_and_accepts(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_true(ci.sack);
	assert_true(ci.timestamps);
	assert_int_equal(ci.snd_wscale, 7);
	assert_int_equal(ci.snd_mss, TP_MSS_1500 - 12);
	assert_int_equal(ts_s->events[STACK_EV_TCP_ESTABLISHED], 1);
	assert_true(tp_owner_rec.events & SOCK_EV_IN); /* the listener: a connection to accept */
}

static void test_established_data_delivered_in_order(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "hello", 5, NULL);
	char buf[16];
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(tcp_recv(c, buf, sizeof(buf)), -EAGAIN);
}

static void test_established_single_segment_ack_is_delayed(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	tp_quickack_spent(tp_open_passive(&p));
	tp_send(&p, TCP_FLAG_ACK | TCP_FLAG_PSH, "hello", 5, NULL);
	tp_expect_none();
	tp_advance(TCP_DELACK_MS);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.ack, p.snd_nxt);
}

static void test_established_send_goes_out_at_once(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_conn *c = tp_open_passive(&p);
	assert_int_equal(tcp_send(c, "world", 5), 5);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.len, 5);
	assert_memory_equal(g.data, "world", 5);
	assert_true(g.th.flags & TCP_FLAG_PSH);
}

static void test_active_open_syn_then_established(void **state)
{
	(void)state;
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	struct tcp_conn *c = tp_open_active(&p, &o);
	assert_true(tp_owner_rec.events & SOCK_EV_OUT);
	struct tcp_conn_info ci;
	tcp_conn_info(c, &ci);
	assert_true(ci.timestamps);
	assert_true(ci.sack);
}

static void test_active_open_rst_refuses(void **state)
{
	(void)state;
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(NULL, TP_PPORT, &g);
	struct tp_peer p;
	tp_peer_init(&p);
	tp_send_at(&p, 0, g.th.seq + 1, TCP_FLAG_RST | TCP_FLAG_ACK, NULL, 0, NULL);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ECONNREFUSED);
	assert_true(tp_owner_rec.events & SOCK_EV_ERR);
	tcp_close(c);
}

static void test_active_open_syn_retransmitted_with_backoff_then_times_out(void **state)
{
	(void)state;
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(NULL, TP_PPORT, &g);
	uint32_t iss = g.th.seq;
	uint64_t wait = TCP_RTO_INIT_MS;
	for (unsigned i = 0; i < TCP_SYN_RETRIES; i++) {
		tp_advance(wait - 1);
		tp_expect_none();
		tp_advance(1);
		tp_expect_one(&g);
		assert_int_equal(g.th.flags & TCP_FLAG_SYN, TCP_FLAG_SYN);
		assert_int_equal(g.th.seq, iss);
		wait *= 2;
	}
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], TCP_SYN_RETRIES);
	tp_advance(wait);
	assert_int_equal(tcp_conn_state(c), TCP_CLOSED);
	assert_int_equal(tcp_sock(c)->error, ETIMEDOUT);
	tcp_close(c);
}

/* A SYN resent by the peer in SYN-RECEIVED means our SYN-ACK was lost: it goes again,
 * counted as a retransmission like the timer's. */
static void test_syn_received_resent_syn_gets_syn_ack_again_counted(void **state)
{
	(void)state;
	tp_listen(8);
	struct tp_peer p;
	tp_peer_init(&p);
	struct tcp_options o = tp_linux_syn_opts(&p);
	tp_send_at(&p, TP_PEER_ISN, 0, TCP_FLAG_SYN, NULL, 0, &o);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	uint32_t iss = g.th.seq;
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 0);
	tp_send_at(&p, TP_PEER_ISN, 0, TCP_FLAG_SYN, NULL, 0, &o);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(g.th.seq, iss);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 1);
	/* And the timer's resend. */
	tp_advance(TCP_RTO_INIT_MS);
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	assert_int_equal(ts_s->events[STACK_EV_TCP_RETRANS_SEGS], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_closed_port_syn_answered_with_rst_ack, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_closed_port_ack_answered_with_rst_at_its_ack, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_closed_port_rst_not_answered, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_listen_syn_answered_with_syn_ack_and_options, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_listen_ip_ttl_tos_on_syn_ack_and_inherited_by_child, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_listen_syn_without_options_gets_none_back, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_passive_open_completes_and_accepts, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_established_data_delivered_in_order, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_established_single_segment_ack_is_delayed, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_established_send_goes_out_at_once, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_active_open_syn_then_established, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_active_open_rst_refuses, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_active_open_syn_retransmitted_with_backoff_then_times_out, tp_setup, tp_teardown),
		cmocka_unit_test_setup_teardown(test_syn_received_resent_syn_gets_syn_ack_again_counted, tp_setup, tp_teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
