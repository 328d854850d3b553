/* The DHCP client's state machine (RFC 2131 §4.4) on a virtual clock: what it sends (read
 * back with dhcp_parse), the leases it applies and removes, retransmission, T1, T2, expiry,
 * NAK, release, and the replies it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dhcp/dhcp_client.h"
#include "wire/bytes.h"

#define SERVER 0xc0000201u      /* 192.0.2.1 */
#define SERVER2 0xc0000202u     /* 192.0.2.2 */
#define ADDR 0xc0000248u        /* 192.0.2.72 */
#define ADDR2 0xc0000249u
#define BCAST 0xffffffffu
#define S 1000ull               /* ms in a second */

static const struct eth_addr mac = { { 0x02, 0, 0, 0, 0, 0x0a } };

struct sent {
	struct dhcp_repr m;
	uint32_t src, dst;
};

/* The host around the client: what it sent, the lease applied, what was removed. */
struct host {
	struct sent out[64];
	unsigned nb_out;
	struct dhcp_lease applied, removed;
	bool had_old;
	unsigned nb_applied, nb_removed;
	int apply_rc;
	uint32_t rnd;
};

static void host_send(void *ctx, const uint8_t *msg, size_t len, uint32_t src, uint32_t dst)
{
	struct host *h = ctx;
	assert_true(h->nb_out < 64);
	struct sent *s = &h->out[h->nb_out++];
	assert_true(len >= DHCP_BOOTP_MIN_LEN);
	assert_int_equal(dhcp_parse(msg, len, &s->m), WIRE_OK);
	s->src = src;
	s->dst = dst;
}

static int host_apply(void *ctx, const struct dhcp_lease *old, const struct dhcp_lease *l)
{
	struct host *h = ctx;
	if (h->apply_rc != 0)
		return h->apply_rc;
	h->had_old = old != NULL;
	h->applied = *l;
	h->nb_applied++;
	return 0;
}

static void host_remove(void *ctx, const struct dhcp_lease *l)
{
	struct host *h = ctx;
	h->removed = *l;
	h->nb_removed++;
}

/* Numbers whose remainder by 2001 is 1000: every jitter is 0, every xid different. */
static uint32_t host_random(void *ctx)
{
	struct host *h = ctx;
	h->rnd++;
	return 1000 + 2001 * h->rnd;
}

static struct host host;
static struct dhcp_client cl;

static int setup(void **state)
{
	(void)state;
	memset(&host, 0, sizeof(host));
	struct dhcp_client_ops ops = {.send = host_send, .apply = host_apply,
				      .remove = host_remove, .random = host_random, .ctx = &host};
	dhcp_client_init(&cl, &mac, 1472, &ops);
	return 0;
}

static const struct sent *last(void)
{
	assert_true(host.nb_out > 0);
	return &host.out[host.nb_out - 1];
}

/* Options of a server's reply, appended to b at *at. */
static void opt(uint8_t *b, size_t *at, uint8_t code, const void *v, uint8_t len)
{
	b[(*at)++] = code;
	b[(*at)++] = len;
	memcpy(b + *at, v, len);
	*at += len;
}

static void opt32(uint8_t *b, size_t *at, uint8_t code, uint32_t v)
{
	uint8_t x[4];
	wire_put_be32(x, v);
	opt(b, at, code, x, 4);
}

struct reply {
	uint8_t type;
	uint32_t xid, yiaddr, server;
	uint32_t lease, t1, t2;          /* 0: option absent */
	const struct eth_addr *chaddr;   /* NULL: the client's */
};

/* Feeds the client a server's reply, built as bytes and parsed as the daemon does. */
static void deliver(uint64_t now, const struct reply *r)
{
	uint8_t b[600] = {0};
	b[DHCP_OFF_OP] = DHCP_OP_REPLY;
	b[DHCP_OFF_HTYPE] = DHCP_HTYPE_ETHER;
	b[DHCP_OFF_HLEN] = 6;
	wire_put_be32(b + DHCP_OFF_XID, r->xid ? r->xid : cl.xid);
	wire_put_be32(b + DHCP_OFF_YIADDR, r->yiaddr);
	memcpy(b + DHCP_OFF_CHADDR, (r->chaddr ? r->chaddr : &mac)->b, 6);
	wire_put_be32(b + DHCP_OFF_COOKIE, DHCP_MAGIC);
	size_t at = DHCP_OFF_OPTIONS;
	opt(b, &at, DHCP_OPT_MSG_TYPE, &r->type, 1);
	if (r->server)
		opt32(b, &at, DHCP_OPT_SERVER_ID, r->server);
	if (r->lease)
		opt32(b, &at, DHCP_OPT_LEASE_TIME, r->lease);
	if (r->t1)
		opt32(b, &at, DHCP_OPT_T1, r->t1);
	if (r->t2)
		opt32(b, &at, DHCP_OPT_T2, r->t2);
	if (r->type != DHCP_NAK) {
		opt32(b, &at, DHCP_OPT_SUBNET_MASK, 0xffffff00u);
		opt32(b, &at, DHCP_OPT_ROUTER, SERVER);
		uint8_t mtu[2] = {0x05, 0x78};
		opt(b, &at, DHCP_OPT_MTU, mtu, 2);
	}
	b[at++] = DHCP_OPT_END;
	struct dhcp_repr m;
	assert_int_equal(dhcp_parse(b, at, &m), WIRE_OK);
	dhcp_client_input(&cl, now, &m);
}

static void offer(uint64_t now)
{
	deliver(now, &(struct reply){.type = DHCP_OFFER, .yiaddr = ADDR, .server = SERVER,
				     .lease = 120});
}

static void ack(uint64_t now, uint32_t server)
{
	deliver(now, &(struct reply){.type = DHCP_ACK, .yiaddr = ADDR, .server = server,
				     .lease = 120, .t1 = 20, .t2 = 35});
}

/* Started at 0, offered at 1 s, acknowledged at 2 s: bound with T1 21 s, T2 36 s, expiry
 * 121 s (the lease counts from the REQUEST, sent at 1 s). */
static void bind_lease(void)
{
	dhcp_client_start(&cl, 0);
	offer(1 * S);
	ack(2 * S, SERVER);
	assert_int_equal(cl.state, DHCP_ST_BOUND);
}

static void test_start_sends_broadcast_discover(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	assert_int_equal(host.nb_out, 1);
	assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
	assert_int_equal(last()->src, 0);
	assert_int_equal(last()->dst, BCAST);
	assert_int_equal(last()->m.flags, DHCP_FLAG_BROADCAST);
	assert_int_equal(last()->m.max_msg_size, 1472);
	assert_true(eth_addr_equal(&last()->m.chaddr, &mac));
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
}

static void test_selecting_retransmits_discover_4_8_16_32_64_64(void **state)
{
	(void)state;
	static const uint64_t at_s[] = {4, 12, 28, 60, 124, 188};
	dhcp_client_start(&cl, 0);
	uint32_t xid = cl.xid;
	for (unsigned k = 0; k < 6; k++) {
		uint64_t t = at_s[k] * S;
		assert_int_equal(dhcp_client_tick(&cl, t - 1), t);
		assert_int_equal(host.nb_out, k + 1);
		dhcp_client_tick(&cl, t);
		assert_int_equal(host.nb_out, k + 2);
		assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
		assert_int_equal(last()->m.xid, xid);
		assert_int_equal(last()->m.secs, at_s[k]);
	}
	assert_int_equal(cl.counters[DHCP_C_TX_DISCOVER], 7);
}

static void test_offer_sends_request_naming_offer_and_server(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(1 * S);
	assert_int_equal(cl.state, DHCP_ST_REQUESTING);
	assert_int_equal(last()->m.msg_type, DHCP_REQUEST);
	assert_int_equal(last()->m.requested_ip, ADDR);
	assert_int_equal(last()->m.server_id, SERVER);
	assert_int_equal(last()->m.ciaddr, 0);
	assert_int_equal(last()->m.xid, cl.xid);
	assert_int_equal(last()->dst, BCAST);
	assert_int_equal(last()->src, 0);
	assert_int_equal(cl.counters[DHCP_C_RX_OFFER], 1);
}

static void test_ack_applies_lease_with_router_mtu_and_times(void **state)
{
	(void)state;
	bind_lease();
	assert_int_equal(host.nb_applied, 1);
	assert_false(host.had_old);
	assert_int_equal(host.applied.addr, ADDR);
	assert_int_equal(host.applied.plen, 24);
	assert_int_equal(host.applied.router, SERVER);
	assert_int_equal(host.applied.mtu, 1400);
	assert_int_equal(host.applied.server, SERVER);
	assert_int_equal(host.applied.t1_ms, 21 * S);
	assert_int_equal(host.applied.t2_ms, 36 * S);
	assert_int_equal(host.applied.expiry_ms, 121 * S);
	assert_int_equal(dhcp_client_tick(&cl, 3 * S), 21 * S);
	assert_int_equal(host.nb_out, 2);
}

static void test_t1_renews_by_unicast_and_ack_extends_from_renewal(void **state)
{
	(void)state;
	bind_lease();
	dhcp_client_tick(&cl, 21 * S);
	assert_int_equal(cl.state, DHCP_ST_RENEWING);
	assert_int_equal(last()->m.msg_type, DHCP_REQUEST);
	assert_int_equal(last()->m.ciaddr, ADDR);
	assert_int_equal(last()->m.requested_ip, 0);
	assert_int_equal(last()->m.server_id, 0);
	assert_int_equal(last()->m.flags, 0);
	assert_int_equal(last()->src, ADDR);
	assert_int_equal(last()->dst, SERVER);
	/* Half the time to T2 is under a minute: the next step is T2 itself. */
	assert_int_equal(cl.next_ms, 36 * S);
	ack(22 * S, SERVER);
	assert_int_equal(cl.state, DHCP_ST_BOUND);
	assert_int_equal(host.nb_applied, 2);
	assert_true(host.had_old);
	assert_int_equal(host.applied.t1_ms, 41 * S);
	assert_int_equal(host.applied.expiry_ms, 141 * S);
	assert_int_equal(host.nb_removed, 0);
}

static void test_renewing_retransmits_at_half_the_time_to_t2(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(0);
	deliver(0, &(struct reply){.type = DHCP_ACK, .yiaddr = ADDR, .server = SERVER,
				   .lease = 1000});
	assert_int_equal(host.applied.t1_ms, 500 * S);
	assert_int_equal(host.applied.t2_ms, 875 * S);
	dhcp_client_tick(&cl, 500 * S);
	assert_int_equal(cl.next_ms, 500 * S + 375 * S / 2);
	dhcp_client_tick(&cl, cl.next_ms);
	assert_int_equal(last()->dst, SERVER);
	assert_int_equal(cl.counters[DHCP_C_TX_REQUEST], 3);
}

static void test_t2_rebinds_by_broadcast_and_any_server_may_ack(void **state)
{
	(void)state;
	bind_lease();
	dhcp_client_tick(&cl, 21 * S);
	dhcp_client_tick(&cl, 36 * S);
	assert_int_equal(cl.state, DHCP_ST_REBINDING);
	assert_int_equal(last()->dst, BCAST);
	assert_int_equal(last()->src, ADDR);
	assert_int_equal(last()->m.ciaddr, ADDR);
	ack(37 * S, SERVER2);
	assert_int_equal(cl.state, DHCP_ST_BOUND);
	assert_int_equal(host.applied.server, SERVER2);
}

static void test_expiry_removes_lease_and_discovers_again(void **state)
{
	(void)state;
	bind_lease();
	uint64_t t = 21 * S;
	while (cl.state != DHCP_ST_SELECTING) {
		assert_true(t <= 121 * S);
		t = dhcp_client_tick(&cl, t);
	}
	assert_int_equal(host.nb_removed, 1);
	assert_int_equal(host.removed.addr, ADDR);
	assert_int_equal(cl.counters[DHCP_C_EXPIRED], 1);
	assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
	assert_int_equal(last()->src, 0);
}

static void test_nak_while_requesting_restarts_without_lease(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(1 * S);
	uint32_t xid = cl.xid;
	deliver(2 * S, &(struct reply){.type = DHCP_NAK, .server = SERVER});
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
	assert_int_equal(host.nb_applied, 0);
	assert_int_equal(cl.counters[DHCP_C_RX_NAK], 1);
	assert_int_not_equal(cl.xid, xid);
	unsigned n = host.nb_out;
	dhcp_client_tick(&cl, 2 * S + 1999);
	assert_int_equal(host.nb_out, n);
	dhcp_client_tick(&cl, 4 * S);
	assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
}

static void test_nak_while_renewing_removes_lease(void **state)
{
	(void)state;
	bind_lease();
	dhcp_client_tick(&cl, 21 * S);
	deliver(22 * S, &(struct reply){.type = DHCP_NAK, .server = SERVER});
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
	assert_int_equal(host.nb_removed, 1);
	assert_int_equal(host.removed.addr, ADDR);
	dhcp_client_tick(&cl, dhcp_client_tick(&cl, 22 * S));
	assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
	assert_int_equal(last()->src, 0);
}

static void test_wrong_xid_chaddr_server_are_counted_drops(void **state)
{
	(void)state;
	static const struct eth_addr other = { { 0x02, 0, 0, 0, 0, 0x0b } };
	dhcp_client_start(&cl, 0);
	deliver(1, &(struct reply){.type = DHCP_OFFER, .xid = cl.xid + 1, .yiaddr = ADDR,
				   .server = SERVER, .lease = 120});
	deliver(1, &(struct reply){.type = DHCP_OFFER, .chaddr = &other, .yiaddr = ADDR,
				   .server = SERVER, .lease = 120});
	deliver(1, &(struct reply){.type = DHCP_ACK, .yiaddr = ADDR, .server = SERVER,
				   .lease = 120});
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
	offer(2);
	ack(3, SERVER2);
	deliver(3, &(struct reply){.type = DHCP_NAK, .server = SERVER2});
	assert_int_equal(cl.state, DHCP_ST_REQUESTING);
	assert_int_equal(cl.counters[DHCP_C_DROP_XID], 1);
	assert_int_equal(cl.counters[DHCP_C_DROP_CHADDR], 1);
	assert_int_equal(cl.counters[DHCP_C_DROP_UNEXPECTED], 1);
	assert_int_equal(cl.counters[DHCP_C_DROP_SERVER], 2);
	assert_int_equal(host.nb_applied, 0);
}

static void test_offer_without_lease_time_or_bad_address_refused(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	deliver(1, &(struct reply){.type = DHCP_OFFER, .yiaddr = ADDR, .server = SERVER});
	deliver(1, &(struct reply){.type = DHCP_OFFER, .yiaddr = 0xe0000001u, .server = SERVER,
				   .lease = 60});
	deliver(1, &(struct reply){.type = DHCP_OFFER, .yiaddr = 0xc00002ffu, .server = SERVER,
				   .lease = 60});
	deliver(1, &(struct reply){.type = DHCP_OFFER, .yiaddr = ADDR, .lease = 60});
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
	assert_int_equal(cl.counters[DHCP_C_DROP_BAD_LEASE], 4);
}

static void test_requesting_gives_up_after_retransmissions(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(0);
	uint64_t t = 0;
	unsigned requests = 1;
	while (cl.state == DHCP_ST_REQUESTING) {
		t = cl.next_ms;
		dhcp_client_tick(&cl, t);
		requests += last()->m.msg_type == DHCP_REQUEST;
	}
	assert_int_equal(requests, 5);
	assert_int_equal(t, (4 + 8 + 16 + 32 + 64) * S);
	assert_int_equal(last()->m.msg_type, DHCP_DISCOVER);
}

static void test_stop_releases_to_server_and_removes(void **state)
{
	(void)state;
	bind_lease();
	dhcp_client_stop(&cl, 5 * S, true);
	assert_int_equal(last()->m.msg_type, DHCP_RELEASE);
	assert_int_equal(last()->m.ciaddr, ADDR);
	assert_int_equal(last()->m.server_id, SERVER);
	assert_int_equal(last()->src, ADDR);
	assert_int_equal(last()->dst, SERVER);
	assert_int_equal(host.nb_removed, 1);
	assert_int_equal(cl.state, DHCP_ST_STOPPED);
	assert_int_equal(dhcp_client_tick(&cl, 1000 * S), DHCP_NEVER);
}

static void test_stop_without_lease_sends_nothing(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	unsigned n = host.nb_out;
	dhcp_client_stop(&cl, 1 * S, true);
	assert_int_equal(host.nb_out, n);
	assert_int_equal(host.nb_removed, 0);
	assert_int_equal(cl.state, DHCP_ST_STOPPED);
}

static void test_unusable_lease_declined_and_retried_after_10s(void **state)
{
	(void)state;
	host.apply_rc = -17;
	dhcp_client_start(&cl, 0);
	offer(0);
	ack(1 * S, SERVER);
	assert_int_equal(last()->m.msg_type, DHCP_DECLINE);
	assert_int_equal(last()->m.requested_ip, ADDR);
	assert_int_equal(cl.counters[DHCP_C_TX_DECLINE], 1);
	assert_int_equal(cl.state, DHCP_ST_SELECTING);
	assert_int_equal(cl.next_ms, 11 * S);
}

static void test_t1_t2_past_the_lease_fall_back_to_defaults(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(0);
	deliver(0, &(struct reply){.type = DHCP_ACK, .yiaddr = ADDR, .server = SERVER,
				   .lease = 100, .t1 = 90, .t2 = 200});
	assert_int_equal(host.applied.t2_ms, 87500);
	assert_int_equal(host.applied.t1_ms, 50 * S);
}

static void test_infinite_lease_never_renews(void **state)
{
	(void)state;
	dhcp_client_start(&cl, 0);
	offer(0);
	deliver(0, &(struct reply){.type = DHCP_ACK, .yiaddr = ADDR2, .server = SERVER,
				   .lease = DHCP_LEASE_INFINITE});
	assert_int_equal(cl.state, DHCP_ST_BOUND);
	assert_int_equal(dhcp_client_tick(&cl, 1ull << 40), DHCP_NEVER);
	assert_int_equal(cl.state, DHCP_ST_BOUND);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup(name, setup)
		T(test_start_sends_broadcast_discover),
		T(test_selecting_retransmits_discover_4_8_16_32_64_64),
		T(test_offer_sends_request_naming_offer_and_server),
		T(test_ack_applies_lease_with_router_mtu_and_times),
		T(test_t1_renews_by_unicast_and_ack_extends_from_renewal),
		T(test_renewing_retransmits_at_half_the_time_to_t2),
		T(test_t2_rebinds_by_broadcast_and_any_server_may_ack),
		T(test_expiry_removes_lease_and_discovers_again),
		T(test_nak_while_requesting_restarts_without_lease),
		T(test_nak_while_renewing_removes_lease),
		T(test_wrong_xid_chaddr_server_are_counted_drops),
		T(test_offer_without_lease_time_or_bad_address_refused),
		T(test_requesting_gives_up_after_retransmissions),
		T(test_stop_releases_to_server_and_removes),
		T(test_stop_without_lease_sends_nothing),
		T(test_unusable_lease_declined_and_retried_after_10s),
		T(test_t1_t2_past_the_lease_fall_back_to_defaults),
		T(test_infinite_lease_never_renews),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
