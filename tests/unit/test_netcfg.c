/* Interfaces, addresses and routes of one stack's configuration (src/stack/netcfg.c): the
 * LOCAL, BROADCAST and CONNECTED routes an address brings and takes away, which addresses may
 * be assigned, source selection, user routes and their checks, and route MTUs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_eal.h"
#include "stack/netcfg.h"
#include "../../src/wire/ipv4.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct netcfg c;
static const struct eth_addr mac0 = {{0x02, 0, 0, 0, 0, 0x10}};
static const struct eth_addr mac1 = {{0x02, 0, 0, 0, 0, 0x11}};

/* Two ports, no addresses. */
static int setup(void **state)
{
	(void)state;
	assert_int_equal(netcfg_init(&c, ROUTE_MAX_DEFAULT), 0);
	assert_int_equal(netcfg_iface_add(&c, 0, "port0", &mac0, 1500), 0);
	assert_int_equal(netcfg_iface_add(&c, 1, "port1", &mac1, 1500), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	netcfg_fini(&c);
	return 0;
}

static int count_fn(const struct route *r, void *arg)
{
	(void)r;
	(*(unsigned *)arg)++;
	return 0;
}

static unsigned routes_walked(void)
{
	unsigned n = 0;
	assert_int_equal(route_walk(c.routes, count_fn, &n), 0);
	return n;
}

static const struct route *find4(uint32_t prefix, uint8_t plen)
{
	return route_find(c.routes, INET_ADDR_V4(prefix), plen);
}

/* The exact route prefix/plen, which must exist with this type and port. */
static const struct route *expect_route(uint32_t prefix, uint8_t plen, enum route_type type,
					uint16_t port)
{
	const struct route *r = find4(prefix, plen);
	assert_non_null(r);
	assert_int_equal(r->type, type);
	assert_int_equal(r->port, port);
	return r;
}

/* 10.0.0.0/24 is port's: its connected route and its broadcast route, both from src. */
static void expect_subnet_on(uint16_t port, uint32_t src)
{
	assert_int_equal(route_src4(expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, port)), src);
	assert_int_equal(route_src4(expect_route(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST, port)), src);
}

static struct route gw_route(uint32_t prefix, uint8_t plen, uint32_t gw, uint16_t port)
{
	struct route r = {.prefix = inet_addr_v4(prefix), .plen = plen, .type = ROUTE_GATEWAY, .port = port,
			  .gateway = inet_addr_v4(gw)};
	return r;
}

/* --- interfaces --- */

static void test_iface_add_stores_fields_and_is_up(void **state)
{
	(void)state;
	const struct netcfg_iface *i = &c.ifaces[0];
	assert_true(i->present);
	assert_true(i->up);
	assert_string_equal(i->name, "port0");
	assert_memory_equal(i->mac.b, mac0.b, ETH_ADDR_LEN);
	assert_int_equal(i->mtu, 1500);
	assert_false(c.ifaces[2].present);
	assert_true(c.forwarding);
}

static void test_iface_add_port_out_of_range_einval(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_add(&c, NETCFG_MAX_PORTS, "p", &mac0, 1500), -EINVAL);
	assert_int_equal(netcfg_iface_add(&c, UINT16_MAX, "p", &mac0, 1500), -EINVAL);
}

static void test_iface_add_bad_name_einval(void **state)
{
	(void)state;
	char name[NETCFG_NAME_LEN + 1];
	assert_int_equal(netcfg_iface_add(&c, 2, "", &mac0, 1500), -EINVAL);
	memset(name, 'x', NETCFG_NAME_LEN);
	name[NETCFG_NAME_LEN] = '\0';
	assert_int_equal(netcfg_iface_add(&c, 2, name, &mac0, 1500), -EINVAL);
	name[NETCFG_NAME_LEN - 1] = '\0';  /* 31 characters fit */
	assert_int_equal(netcfg_iface_add(&c, 2, name, &mac0, 1500), 0);
	assert_int_equal(netcfg_iface_by_name(&c, name), 2);
}

static void test_iface_add_mtu_bounds_checked(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_add(&c, 2, "a", &mac0, NETCFG_MIN_MTU - 1), -EINVAL);
	assert_int_equal(netcfg_iface_add(&c, 2, "a", &mac0, NETCFG_MAX_MTU + 1), -EINVAL);
	assert_int_equal(netcfg_iface_add(&c, 2, "a", &mac0, 0), -EINVAL);
	assert_false(c.ifaces[2].present);
	assert_int_equal(netcfg_iface_add(&c, 2, "a", &mac0, NETCFG_MIN_MTU), 0);
	assert_int_equal(netcfg_iface_add(&c, 3, "b", &mac0, NETCFG_MAX_MTU), 0);
}

static void test_iface_add_same_port_twice_eexist(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_add(&c, 0, "other", &mac1, 9000), -EEXIST);
	assert_string_equal(c.ifaces[0].name, "port0");
	assert_int_equal(c.ifaces[0].mtu, 1500);
}

static void test_iface_add_same_name_other_port_eexist(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_add(&c, 2, "port1", &mac1, 1500), -EEXIST);
	assert_false(c.ifaces[2].present);
}

static void test_iface_by_name_finds_port_or_enodev(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_by_name(&c, "port0"), 0);
	assert_int_equal(netcfg_iface_by_name(&c, "port1"), 1);
	assert_int_equal(netcfg_iface_by_name(&c, "port2"), -ENODEV);
	assert_int_equal(netcfg_iface_by_name(&c, ""), -ENODEV);
}

static void test_iface_set_mtu_checks_port_and_bounds(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&c, 2, 1500), -ENODEV);
	assert_int_equal(netcfg_iface_set_mtu(&c, NETCFG_MAX_PORTS, 1500), -ENODEV);
	assert_int_equal(netcfg_iface_set_mtu(&c, 0, 67), -EINVAL);
	assert_int_equal(netcfg_iface_set_mtu(&c, 0, 9601), -EINVAL);
	assert_int_equal(c.ifaces[0].mtu, 1500);
	assert_int_equal(netcfg_iface_set_mtu(&c, 0, 9000), 0);
	assert_int_equal(c.ifaces[0].mtu, 9000);
}

static void test_iface_set_up_checks_port(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_up(&c, 5, true), -ENODEV);
	assert_int_equal(netcfg_iface_set_up(&c, 1, false), 0);
	assert_false(c.ifaces[1].up);
	assert_int_equal(netcfg_iface_set_up(&c, 1, true), 0);
	assert_true(c.ifaces[1].up);
}

/* --- addresses --- */

static void test_addr_add_slash24_adds_local_broadcast_connected(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(routes_walked(), 3);
	const struct route *r = expect_route(IP(10, 0, 0, 2), 32, ROUTE_LOCAL, 0);
	assert_int_equal(route_src4(r), IP(10, 0, 0, 2));
	r = expect_route(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST, 0);
	assert_int_equal(route_src4(r), IP(10, 0, 0, 2));
	r = expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 0);
	assert_int_equal(route_src4(r), IP(10, 0, 0, 2));
	assert_int_equal(r->mtu, 0);
	assert_true(netcfg_addr_is_local(&c, IP(10, 0, 0, 2)));
	assert_false(netcfg_addr_is_local(&c, IP(10, 0, 0, 3)));
	assert_int_equal(route_lookup4(c.routes, IP(10, 0, 0, 77))->type, ROUTE_CONNECTED);
}

static void test_addr_del_removes_its_three_routes(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_int_equal(routes_walked(), 0);
	assert_null(route_lookup4(c.routes, IP(10, 0, 1, 2)));
	assert_false(netcfg_addr_is_local(&c, IP(10, 0, 1, 2)));
	/* And it can come back. */
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_int_equal(routes_walked(), 3);
}

static void test_addr_add_slash31_has_no_broadcast_route(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 9, 0, 0), 31), 0);
	assert_int_equal(routes_walked(), 2);
	expect_route(IP(10, 9, 0, 0), 32, ROUTE_LOCAL, 0);
	expect_route(IP(10, 9, 0, 0), 31, ROUTE_CONNECTED, 0);
	assert_null(find4(IP(10, 9, 0, 1), 32));
	assert_int_equal(route_lookup4(c.routes, IP(10, 9, 0, 1))->type, ROUTE_CONNECTED);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 9, 0, 0), 31), 0);
	assert_int_equal(routes_walked(), 0);
}

static void test_addr_add_slash31_both_ends_assignable(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 9, 0, 1), 31), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 8, 0, 0), 31), 0);
	assert_true(netcfg_addr_is_local(&c, IP(10, 9, 0, 1)));
	assert_true(netcfg_addr_is_local(&c, IP(10, 8, 0, 0)));
}

static void test_addr_add_slash32_adds_local_only(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(192, 0, 2, 1), 32), 0);
	assert_int_equal(routes_walked(), 1);
	expect_route(IP(192, 0, 2, 1), 32, ROUTE_LOCAL, 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(192, 0, 2, 1), 32), 0);
	assert_int_equal(routes_walked(), 0);
}

static void test_addr_add_second_in_subnet_shares_connected_route(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(routes_walked(), 4); /* two LOCAL, one BROADCAST, one CONNECTED */
	expect_route(IP(10, 0, 0, 3), 32, ROUTE_LOCAL, 0);
}

static void test_addr_del_first_of_two_keeps_connected_and_broadcast(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(routes_walked(), 3);
	assert_null(find4(IP(10, 0, 0, 2), 32));
	expect_route(IP(10, 0, 0, 3), 32, ROUTE_LOCAL, 0);
	expect_route(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST, 0);
	expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(routes_walked(), 0);
}

/* The routes that outlive the address they were made for must not keep it as their
 * preferred source: ip4_output would send from an address that is no longer ours. */
static void test_addr_del_first_of_two_remaining_routes_drop_its_source(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(route_src4(find4(IP(10, 0, 0, 0), 24)), IP(10, 0, 0, 3));
	assert_int_equal(route_src4(find4(IP(10, 0, 0, 255), 32)), IP(10, 0, 0, 3));
}

static void test_addr_del_second_of_two_keeps_connected(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(routes_walked(), 3);
	assert_int_equal(route_src4(find4(IP(10, 0, 0, 0), 24)), IP(10, 0, 0, 2));
}

/* 10.0.0.2/24 and 10.0.0.130/25 share the broadcast address 10.0.0.255: removing the /25
 * address must leave the /24's broadcast route in place. */
static void test_addr_del_keeps_broadcast_still_used_by_other_prefix(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 130), 25), 0);
	expect_route(IP(10, 0, 0, 128), 25, ROUTE_CONNECTED, 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 130), 25), 0);
	assert_null(find4(IP(10, 0, 0, 128), 25));
	expect_route(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST, 0);
	expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 0);
}

/* The suspect of issue 12: 10.0.0.0/24 on two ports. Deleting port1's address must not take
 * the connected route, which port0's address still makes. */
static void test_addr_del_same_subnet_on_other_port_keeps_connected(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 0, 3), 24), 0);
	expect_subnet_on(0, IP(10, 0, 0, 2));
	assert_int_equal(routes_walked(), 3);
}

/* Deleting the address the routes were made for, on port0, while port1 has one in the same
 * subnet: the routes pass to port1 and its address (Linux keeps port1's own prefix route). */
static void test_addr_del_same_subnet_routes_pass_to_other_port(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	expect_subnet_on(1, IP(10, 0, 0, 3));
	assert_int_equal(route_lookup4(c.routes, IP(10, 0, 0, 1))->port, 1);
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(routes_walked(), 0);
}

/* The heir is an address on the route's own port when there is one, so the subnet stays
 * where it was. */
static void test_addr_del_routes_prefer_remaining_address_on_same_port(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 4), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	expect_subnet_on(0, IP(10, 0, 0, 4));
}

/* A /32 address makes no connected route: it neither keeps nor takes over one. */
static void test_addr_del_slash32_in_subnet_does_not_hold_connected(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 9), 32), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 9), 32), 0);
	expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 9), 32), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_null(find4(IP(10, 0, 0, 0), 24));
	assert_null(find4(IP(10, 0, 0, 255), 32));
	expect_route(IP(10, 0, 0, 9), 32, ROUTE_LOCAL, 0);
	assert_int_equal(routes_walked(), 1);
}

/* A user's connected route to an address's subnet comes first and is the user's: deleting
 * the address leaves it as it was. */
static void test_addr_del_leaves_users_connected_route_of_same_prefix(void **state)
{
	(void)state;
	struct route u = {.prefix = inet_addr_v4(IP(10, 0, 0, 0)), .plen = 24, .type = ROUTE_CONNECTED,
			  .port = 1};
	assert_int_equal(netcfg_route_add(&c, &u), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(route_src4(expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 1)), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(route_src4(expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 1)), 0);
	assert_int_equal(routes_walked(), 1);
}

/* Linux fib_sync_down_addr: a user route whose preferred source was the deleted address
 * goes with it; one without a source stays. */
static void test_addr_del_takes_user_routes_with_its_source(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	r.src = inet_addr_v4(IP(10, 0, 0, 3));
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	r = gw_route(IP(172, 16, 0, 0), 16, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_null(find4(IP(192, 168, 0, 0), 16));
	expect_route(IP(172, 16, 0, 0), 16, ROUTE_GATEWAY, 0);
	expect_route(IP(10, 0, 0, 0), 24, ROUTE_CONNECTED, 0);
}

static void test_port_has_addr_until_its_last_goes(void **state)
{
	(void)state;
	assert_false(netcfg_port_has_addr(&c, 0));
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(192, 0, 2, 1), 32), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_true(netcfg_port_has_addr(&c, 0));
	assert_int_equal(netcfg_addr_del(&c, 0, IP(192, 0, 2, 1), 32), 0);
	assert_false(netcfg_port_has_addr(&c, 0));
	assert_true(netcfg_port_has_addr(&c, 1));
}

static void expect_unassignable(uint32_t addr, uint8_t plen)
{
	assert_int_equal(netcfg_addr_add(&c, 0, addr, plen), -EINVAL);
	assert_false(netcfg_addr_is_local(&c, addr));
	assert_int_equal(routes_walked(), 0);
}

static void test_addr_add_network_address_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(10, 0, 0, 0), 24);
	expect_unassignable(IP(10, 0, 0, 0), 8);
	expect_unassignable(IP(10, 0, 0, 128), 25);
}

static void test_addr_add_subnet_broadcast_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(10, 0, 0, 255), 24);
	expect_unassignable(IP(10, 255, 255, 255), 8);
	expect_unassignable(IP(10, 0, 0, 3), 30);
}

static void test_addr_add_multicast_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(224, 0, 0, 1), 24);
	expect_unassignable(IP(239, 1, 2, 3), 32);
}

static void test_addr_add_loopback_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(127, 0, 0, 1), 8);
	expect_unassignable(IP(127, 1, 2, 3), 32);
}

static void test_addr_add_zero_net_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(0, 0, 0, 1), 8);
	expect_unassignable(0, 32);
	expect_unassignable(IP(0, 1, 2, 3), 24);
}

static void test_addr_add_class_e_and_limited_broadcast_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(240, 0, 0, 1), 24);
	expect_unassignable(IP(250, 1, 2, 3), 32);
	expect_unassignable(0xffffffffu, 32);
}

static void test_addr_add_plen_0_and_33_einval(void **state)
{
	(void)state;
	expect_unassignable(IP(10, 0, 0, 2), 0);
	expect_unassignable(IP(10, 0, 0, 2), 33);
}

static void test_addr_add_absent_port_enodev(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 2, IP(10, 0, 0, 2), 24), -ENODEV);
	assert_int_equal(netcfg_addr_add(&c, NETCFG_MAX_PORTS, IP(10, 0, 0, 2), 24), -ENODEV);
	assert_int_equal(routes_walked(), 0);
}

static void test_addr_add_existing_address_eexist_any_port(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), -EEXIST);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 16), -EEXIST);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 0, 2), 24), -EEXIST);
	assert_int_equal(routes_walked(), 3);
}

static void test_addr_add_past_max_addrs_enospc(void **state)
{
	(void)state;
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 1, 0, 1) + i, 32), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 2, 0, 1), 32), -ENOSPC);
	assert_false(netcfg_addr_is_local(&c, IP(10, 2, 0, 1)));
	assert_int_equal(routes_walked(), NETCFG_MAX_ADDRS);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 1, 0, 1), 32), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 2, 0, 1), 32), 0);
}

static void test_addr_del_wrong_plen_port_or_address_eaddrnotavail(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 16), -EADDRNOTAVAIL);
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 0, 2), 24), -EADDRNOTAVAIL);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 3), 24), -EADDRNOTAVAIL);
	assert_int_equal(netcfg_addr_del(&c, 7, IP(10, 0, 0, 2), 24), -EADDRNOTAVAIL);
	assert_int_equal(routes_walked(), 3);
	assert_true(netcfg_addr_is_local(&c, IP(10, 0, 0, 2)));
}

/* --- source selection --- */

static void test_source_for_prefers_address_in_destination_subnet(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(192, 168, 1, 1), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(172, 16, 0, 1), 16), 0);
	assert_int_equal(netcfg_source_for(&c, 0, IP(192, 168, 1, 77)), IP(192, 168, 1, 1));
	assert_int_equal(netcfg_source_for(&c, 0, IP(10, 0, 0, 77)), IP(10, 0, 0, 2));
	/* Off-subnet: the port's first address, never another port's. */
	assert_int_equal(netcfg_source_for(&c, 0, IP(8, 8, 8, 8)), IP(10, 0, 0, 2));
	assert_int_equal(netcfg_source_for(&c, 0, IP(172, 16, 5, 5)), IP(10, 0, 0, 2));
	assert_int_equal(netcfg_source_for(&c, 1, IP(8, 8, 8, 8)), IP(172, 16, 0, 1));
}

static void test_source_for_port_without_address_returns_zero(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_source_for(&c, 1, IP(10, 0, 0, 9)), 0);
	assert_int_equal(netcfg_source_for(&c, 5, IP(10, 0, 0, 9)), 0);
}

static void test_source_for_deleted_address_not_used(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 3), 24), 0);
	assert_int_equal(netcfg_addr_del(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_source_for(&c, 0, IP(10, 0, 0, 9)), IP(10, 0, 0, 3));
	assert_int_equal(netcfg_source_for(&c, 0, IP(8, 8, 8, 8)), IP(10, 0, 0, 3));
}

/* --- user routes --- */

static void add_two_subnets(void)
{
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
}

static void test_route_add_default_via_connected_gateway_takes_its_port(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(0, 0, IP(10, 0, 1, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	const struct route *got = route_lookup4(c.routes, IP(8, 8, 8, 8));
	assert_non_null(got);
	assert_int_equal(got->type, ROUTE_GATEWAY);
	assert_int_equal(route_gateway4(got), IP(10, 0, 1, 1));
	assert_int_equal(got->port, 1);
	/* Connected subnets still win. */
	assert_int_equal(route_lookup4(c.routes, IP(10, 0, 0, 9))->type, ROUTE_CONNECTED);
}

static void test_route_add_gateway_explicit_right_port_ok(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 1), 0);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(route_lookup4(c.routes, IP(192, 168, 3, 3))->port, 0);
}

static void test_route_add_gateway_explicit_wrong_port_enetunreach(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 1), 1);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
	assert_null(route_lookup4(c.routes, IP(192, 168, 3, 3)));
}

static void test_route_add_gateway_off_link_enetunreach(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(172, 16, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
	assert_null(route_lookup4(c.routes, IP(192, 168, 3, 3)));
}

static void test_route_add_gateway_via_other_gateway_enetunreach(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(172, 16, 0, 0), 16, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	r = gw_route(IP(192, 168, 0, 0), 16, IP(172, 16, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
}

static void test_route_add_gateway_is_our_address_enetunreach(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 2), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
	r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 255), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
}

static void test_route_add_gateway_without_addresses_enetunreach(void **state)
{
	(void)state;
	struct route r = gw_route(0, 0, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
}

static void test_route_add_connected_needs_present_port(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v4(IP(10, 5, 0, 0)), .plen = 16, .type = ROUTE_CONNECTED,
			  .port = 4};
	assert_int_equal(netcfg_route_add(&c, &r), -ENODEV);
	r.port = 1;
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	expect_route(IP(10, 5, 0, 0), 16, ROUTE_CONNECTED, 1);
}

static void test_route_add_blackhole_and_unreachable_need_no_port(void **state)
{
	(void)state;
	struct route b = {.prefix = inet_addr_v4(IP(192, 0, 2, 0)), .plen = 24, .type = ROUTE_BLACKHOLE,
			  .port = 12};
	struct route u = {.prefix = inet_addr_v4(IP(198, 51, 100, 0)), .plen = 24, .type = ROUTE_UNREACHABLE,
			  .port = NETCFG_PORT_ANY};
	assert_int_equal(netcfg_route_add(&c, &b), 0);
	assert_int_equal(netcfg_route_add(&c, &u), 0);
	assert_int_equal(route_lookup4(c.routes, IP(192, 0, 2, 9))->type, ROUTE_BLACKHOLE);
	assert_int_equal(route_lookup4(c.routes, IP(198, 51, 100, 9))->type, ROUTE_UNREACHABLE);
	assert_int_equal(route_lookup4(c.routes, IP(192, 0, 2, 9))->port, 0);
	assert_int_equal(route_lookup4(c.routes, IP(198, 51, 100, 9))->port, 0);
}

static void test_route_add_local_or_broadcast_type_einval(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v4(IP(10, 7, 7, 7)), .plen = 32, .type = ROUTE_LOCAL, .port = 0};
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	r.type = ROUTE_BROADCAST;
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	r.type = ROUTE_TYPE_COUNT;
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	assert_int_equal(routes_walked(), 0);
}

static void test_route_add_host_bits_or_plen_33_einval(void **state)
{
	(void)state;
	struct route r = {.prefix = inet_addr_v4(IP(192, 0, 2, 1)), .plen = 24, .type = ROUTE_BLACKHOLE};
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	r.plen = 33;
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	assert_int_equal(routes_walked(), 0);
}

static void test_route_add_mtu_bounds_checked(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	r.mtu = NETCFG_MIN_MTU - 1;
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	r.mtu = NETCFG_MAX_MTU + 1;
	assert_int_equal(netcfg_route_add(&c, &r), -EINVAL);
	r.mtu = 1400;
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(route_lookup4(c.routes, IP(192, 168, 1, 1))->mtu, 1400);
}

static void test_route_add_existing_prefix_eexist(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(IP(10, 0, 1, 0), 24, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -EEXIST);  /* the connected /24 */
	r = gw_route(0, 0, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	r = gw_route(0, 0, IP(10, 0, 1, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), -EEXIST);
	assert_int_equal(route_gateway4(route_lookup4(c.routes, IP(8, 8, 8, 8))), IP(10, 0, 0, 1));
}

static void test_route_del_gateway_and_default_ok(void **state)
{
	(void)state;
	add_two_subnets();
	struct route r = gw_route(0, 0, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	r = gw_route(IP(192, 168, 0, 0), 16, IP(10, 0, 1, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(192, 168, 0, 0)), 16), 0);
	assert_int_equal(route_gateway4(route_lookup4(c.routes, IP(192, 168, 1, 1))), IP(10, 0, 0, 1));
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(0), 0), 0);
	assert_null(route_lookup4(c.routes, IP(192, 168, 1, 1)));
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(0), 0), -ESRCH);
}

static void test_route_del_never_removes_local_or_broadcast(void **state)
{
	(void)state;
	add_two_subnets();
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 0, 2)), 32), -ESRCH);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 0, 255)), 32), -ESRCH);
	expect_route(IP(10, 0, 0, 2), 32, ROUTE_LOCAL, 0);
	expect_route(IP(10, 0, 0, 255), 32, ROUTE_BROADCAST, 0);
	assert_int_equal(routes_walked(), 6);
}

static void test_route_del_connected_allowed_address_stays(void **state)
{
	(void)state;
	add_two_subnets();
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 1, 0)), 24), 0);
	assert_null(find4(IP(10, 0, 1, 0), 24));
	assert_true(netcfg_addr_is_local(&c, IP(10, 0, 1, 2)));
	/* Deleting the address afterwards still cleans up the rest. */
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_null(find4(IP(10, 0, 1, 2), 32));
	assert_null(find4(IP(10, 0, 1, 255), 32));
	assert_int_equal(routes_walked(), 3);
}

static void test_route_del_missing_or_blackhole(void **state)
{
	(void)state;
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(192, 0, 2, 0)), 24), -ESRCH);
	struct route b = {.prefix = inet_addr_v4(IP(192, 0, 2, 0)), .plen = 24, .type = ROUTE_BLACKHOLE};
	assert_int_equal(netcfg_route_add(&c, &b), 0);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(192, 0, 2, 0)), 24), 0);
	assert_int_equal(routes_walked(), 0);
}

/* The user's route at an address's subnet goes: the address's own connected route, which
 * it kept out, comes back. */
static void test_route_del_users_route_restores_addresses_connected_route(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	struct route r = gw_route(IP(10, 0, 1, 0), 24, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
	expect_route(IP(10, 0, 1, 0), 24, ROUTE_GATEWAY, 0);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 1, 0)), 24), 0);
	const struct route *got = expect_route(IP(10, 0, 1, 0), 24, ROUTE_CONNECTED, 1);
	assert_int_equal(route_src4(got), IP(10, 0, 1, 2));
	/* And it is the address's again: it goes with it. */
	assert_int_equal(netcfg_addr_del(&c, 1, IP(10, 0, 1, 2), 24), 0);
	assert_null(find4(IP(10, 0, 1, 0), 24));
}

/* So does a broadcast route a user's /32 kept out. */
static void test_route_del_users_host_route_restores_broadcast_route(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	struct route r = gw_route(IP(10, 0, 1, 255), 32, IP(10, 0, 0, 1), NETCFG_PORT_ANY);
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(netcfg_addr_add(&c, 1, IP(10, 0, 1, 2), 24), 0);
	expect_route(IP(10, 0, 1, 255), 32, ROUTE_GATEWAY, 0);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 1, 255)), 32), 0);
	assert_int_equal(route_src4(expect_route(IP(10, 0, 1, 255), 32, ROUTE_BROADCAST, 1)),
			 IP(10, 0, 1, 2));
}

/* Deleting the address's own connected route is final (as `ip route del` in Linux): it does
 * not come back while the address stays. */
static void test_route_del_addresses_connected_route_not_restored(void **state)
{
	(void)state;
	assert_int_equal(netcfg_addr_add(&c, 0, IP(10, 0, 0, 2), 24), 0);
	assert_int_equal(netcfg_route_del(&c, INET_ADDR_V4(IP(10, 0, 0, 0)), 24), 0);
	assert_null(find4(IP(10, 0, 0, 0), 24));
}

/* --- MTU --- */

static void test_route_mtu_below_port_mtu_wins(void **state)
{
	(void)state;
	struct route r = {.port = 0, .mtu = 1400};
	assert_int_equal(netcfg_route_mtu(&c, &r), 1400);
}

static void test_route_mtu_above_port_mtu_clamped_to_port(void **state)
{
	(void)state;
	struct route r = {.port = 0, .mtu = 9000};
	assert_int_equal(netcfg_route_mtu(&c, &r), 1500);
}

static void test_route_mtu_zero_uses_port_mtu(void **state)
{
	(void)state;
	assert_int_equal(netcfg_iface_set_mtu(&c, 1, 9000), 0);
	struct route r = {.port = 1};
	assert_int_equal(netcfg_route_mtu(&c, &r), 9000);
	r.port = 0;
	assert_int_equal(netcfg_route_mtu(&c, &r), 1500);
}

static void test_route_mtu_follows_port_mtu_change(void **state)
{
	(void)state;
	add_two_subnets();
	const struct route *r = route_lookup4(c.routes, IP(10, 0, 1, 1));
	assert_int_equal(netcfg_route_mtu(&c, r), 1500);
	assert_int_equal(netcfg_iface_set_mtu(&c, 1, 1280), 0);
	assert_int_equal(netcfg_route_mtu(&c, r), 1280);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_iface_add_stores_fields_and_is_up),
		T(test_iface_add_port_out_of_range_einval),
		T(test_iface_add_bad_name_einval),
		T(test_iface_add_mtu_bounds_checked),
		T(test_iface_add_same_port_twice_eexist),
		T(test_iface_add_same_name_other_port_eexist),
		T(test_iface_by_name_finds_port_or_enodev),
		T(test_iface_set_mtu_checks_port_and_bounds),
		T(test_iface_set_up_checks_port),
		T(test_addr_add_slash24_adds_local_broadcast_connected),
		T(test_addr_del_removes_its_three_routes),
		T(test_addr_add_slash31_has_no_broadcast_route),
		T(test_addr_add_slash31_both_ends_assignable),
		T(test_addr_add_slash32_adds_local_only),
		T(test_addr_add_second_in_subnet_shares_connected_route),
		T(test_addr_del_first_of_two_keeps_connected_and_broadcast),
		T(test_addr_del_first_of_two_remaining_routes_drop_its_source),
		T(test_addr_del_second_of_two_keeps_connected),
		T(test_addr_del_keeps_broadcast_still_used_by_other_prefix),
		T(test_addr_del_same_subnet_on_other_port_keeps_connected),
		T(test_addr_del_same_subnet_routes_pass_to_other_port),
		T(test_addr_del_routes_prefer_remaining_address_on_same_port),
		T(test_addr_del_slash32_in_subnet_does_not_hold_connected),
		T(test_addr_del_leaves_users_connected_route_of_same_prefix),
		T(test_addr_del_takes_user_routes_with_its_source),
		T(test_port_has_addr_until_its_last_goes),
		T(test_addr_add_network_address_einval),
		T(test_addr_add_subnet_broadcast_einval),
		T(test_addr_add_multicast_einval),
		T(test_addr_add_loopback_einval),
		T(test_addr_add_zero_net_einval),
		T(test_addr_add_class_e_and_limited_broadcast_einval),
		T(test_addr_add_plen_0_and_33_einval),
		T(test_addr_add_absent_port_enodev),
		T(test_addr_add_existing_address_eexist_any_port),
		T(test_addr_add_past_max_addrs_enospc),
		T(test_addr_del_wrong_plen_port_or_address_eaddrnotavail),
		T(test_source_for_prefers_address_in_destination_subnet),
		T(test_source_for_port_without_address_returns_zero),
		T(test_source_for_deleted_address_not_used),
		T(test_route_add_default_via_connected_gateway_takes_its_port),
		T(test_route_add_gateway_explicit_right_port_ok),
		T(test_route_add_gateway_explicit_wrong_port_enetunreach),
		T(test_route_add_gateway_off_link_enetunreach),
		T(test_route_add_gateway_via_other_gateway_enetunreach),
		T(test_route_add_gateway_is_our_address_enetunreach),
		T(test_route_add_gateway_without_addresses_enetunreach),
		T(test_route_add_connected_needs_present_port),
		T(test_route_add_blackhole_and_unreachable_need_no_port),
		T(test_route_add_local_or_broadcast_type_einval),
		T(test_route_add_host_bits_or_plen_33_einval),
		T(test_route_add_mtu_bounds_checked),
		T(test_route_add_existing_prefix_eexist),
		T(test_route_del_gateway_and_default_ok),
		T(test_route_del_never_removes_local_or_broadcast),
		T(test_route_del_connected_allowed_address_stays),
		T(test_route_del_missing_or_blackhole),
		T(test_route_del_users_route_restores_addresses_connected_route),
		T(test_route_del_users_host_route_restores_broadcast_route),
		T(test_route_del_addresses_connected_route_not_restored),
		T(test_route_mtu_below_port_mtu_wins),
		T(test_route_mtu_above_port_mtu_clamped_to_port),
		T(test_route_mtu_zero_uses_port_mtu),
		T(test_route_mtu_follows_port_mtu_change),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
