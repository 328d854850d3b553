/* Redirects received by a host (src/ip6/ip6_redirect.c, RFC 4861 §8.1): a valid one from the
 * first-hop router of its destination is accepted and teaches the target's link-layer
 * address; each invalid kind is dropped with its counter (hop limit, source not link-local,
 * not the first-hop router, target neither link-local nor the destination, multicast
 * destination, truncated, a bad option length, a router's own). The fixture's port 0 holds
 * 2001:db8:a::2/64 and fe80::2, the default route goes via the router fe80::1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"
#include "stack/netcfg6.h"
#include "../../src/l2/neigh.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/icmp6.h"
#include "../../src/wire/ipv6.h"

static const struct ip6_addr stack_global = {{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 2}};
static const struct ip6_addr stack_ll = {{0xfe, 0x80, [15] = 2}};
static const struct ip6_addr router = {{0xfe, 0x80, [15] = 1}};
static const struct ip6_addr other_router = {{0xfe, 0x80, [15] = 9}};
static const struct ip6_addr better = {{0xfe, 0x80, [15] = 5}};
static const struct ip6_addr far = {{0x20, 0x01, 0x0d, 0xb8, 0, 0x99, [15] = 1}};
static const struct eth_addr better_mac = {{0x02, 0, 0, 0, 0, 0x55}};

static uint8_t dgram[IP6_HDR_LEN + 200];
static uint8_t frame[ETH_HDR_LEN + sizeof(dgram)];

static int setup(void **state)
{
	int rc = ts_setup(state);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &stack_global, 64, 0), 0);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &stack_ll, 64, 0), 0);
	struct route r = {.prefix = inet_addr_any(true), .plen = 0, .type = ROUTE_GATEWAY,
			  .port = 0, .gateway = inet_addr_v6(&router)};
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &r), 0);
	return rc;
}

struct redirect {
	struct ip6_addr src, target, dst;
	uint8_t hop_limit;
	bool tlla;
	uint8_t opt_len;   /* the option's length field, in 8-byte units */
	size_t cut;        /* bytes cut off the end */
};

static struct redirect valid(void)
{
	return (struct redirect){.src = router, .target = better, .dst = far, .hop_limit = 255,
				 .tlla = true, .opt_len = 1};
}

/* Sends the Redirect r to the stack's link-local address on port 0. */
static void input_redirect(const struct redirect *r)
{
	uint8_t *msg = dgram + IP6_HDR_LEN;
	memset(msg, 0, 48);
	msg[ICMP6_OFF_TYPE] = ICMP6_REDIRECT;
	memcpy(msg + 8, r->target.b, 16);
	memcpy(msg + 24, r->dst.b, 16);
	size_t len = 40;
	if (r->tlla) {
		nd_build_lladdr_opt(msg + 40, 8, ND_OPT_TARGET_LLADDR, &better_mac);
		msg[41] = r->opt_len;
		len += 8;
	}
	len -= r->cut;
	struct ip6_repr ip = {.payload_len = (uint16_t)len, .next_header = IP6_NH_ICMPV6,
			      .hop_limit = r->hop_limit, .src = r->src, .dst = stack_ll};
	assert_int_equal(ip6_build(dgram, sizeof(dgram), &ip), IP6_HDR_LEN);
	uint32_t sum = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, (uint32_t)len);
	uint16_t csum = wire_csum_finish(wire_csum_add(sum, msg, len));
	msg[ICMP6_OFF_CSUM] = (uint8_t)(csum >> 8);
	msg[ICMP6_OFF_CSUM + 1] = (uint8_t)csum;
	size_t n = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV6, dgram,
				IP6_HDR_LEN + len);
	ts_input_frame(0, frame, n);
}

static bool target_learnt(void)
{
	struct inet_addr t = inet_addr_v6(&better);
	struct neigh_info info;
	return neigh_lookup(ts_s->neigh, 0, &t, &info) == 0 &&
	       memcmp(info.mac.b, better_mac.b, 6) == 0 && info.state == NEIGH_STALE;
}

static void test_redirect_valid_learns_target_stale(void **state)
{
	struct redirect r = valid();
	input_redirect(&r);
	assert_true(target_learnt());
	assert_int_equal(ts_s->events[STACK_EV_ND_RX_ROUTER], 1);
	ts_expect_no_drops();
	/* To the destination itself, on the link, is valid too. */
	r.target = far;
	input_redirect(&r);
	ts_expect_no_drops();
}

/* r is dropped as d and teaches nothing. */
static void expect_rejected(const struct redirect *r, enum stack_drop d)
{
	input_redirect(r);
	ts_expect_drop(d, 1);
	assert_false(target_learnt());
	assert_int_equal(ts_nframes, 0);
}

static void test_redirect_hop_limit_254_invalid(void **state)
{
	struct redirect r = valid();
	r.hop_limit = 254;
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_INVALID);
}

static void test_redirect_global_source_invalid(void **state)
{
	struct redirect r = valid();
	r.src = (struct ip6_addr){{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 1}};
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_INVALID);
}

static void test_redirect_from_another_router_not_router(void **state)
{
	struct redirect r = valid();
	r.src = other_router;
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_NOT_ROUTER);
}

static void test_redirect_for_on_link_destination_not_router(void **state)
{
	/* 2001:db8:a::7 is on the link (connected route): no router to speak for it. */
	struct redirect r = valid();
	r.dst = (struct ip6_addr){{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 7}};
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_NOT_ROUTER);
}

static void test_redirect_global_target_not_destination_invalid(void **state)
{
	struct redirect r = valid();
	r.target = (struct ip6_addr){{0x20, 0x01, 0x0d, 0xb8, 0, 0xa, [15] = 5}};
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_INVALID);
}

static void test_redirect_multicast_destination_invalid(void **state)
{
	struct redirect r = valid();
	r.dst = (struct ip6_addr){{0xff, 0x0e, [15] = 1}};
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_INVALID);
}

static void test_redirect_truncated_and_bad_option_invalid(void **state)
{
	struct redirect r = valid();
	r.tlla = false;
	r.cut = 1; /* 39 bytes: shorter than the fixed part */
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_INVALID);
	r = valid();
	r.opt_len = 0; /* §4.6: an option of length 0 */
	input_redirect(&r);
	ts_expect_drop(STACK_DROP_ND_REDIRECT_INVALID, 2);
	r.opt_len = 2; /* past the end */
	input_redirect(&r);
	ts_expect_drop(STACK_DROP_ND_REDIRECT_INVALID, 3);
	assert_false(target_learnt());
}

static void test_redirect_ignored_by_a_router(void **state)
{
	ts_s->cfg.forwarding6 = true;
	struct redirect r = valid();
	expect_rejected(&r, STACK_DROP_ND_REDIRECT_FORWARDING);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_redirect_valid_learns_target_stale, setup,
						ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_hop_limit_254_invalid, setup,
						ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_global_source_invalid, setup,
						ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_from_another_router_not_router, setup,
						ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_for_on_link_destination_not_router,
						setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_global_target_not_destination_invalid,
						setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_multicast_destination_invalid, setup,
						ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_truncated_and_bad_option_invalid,
						setup, ts_teardown),
		cmocka_unit_test_setup_teardown(test_redirect_ignored_by_a_router, setup,
						ts_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
