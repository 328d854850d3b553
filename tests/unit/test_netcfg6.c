/* The IPv6 half of a stack's configuration (src/stack/netcfg6.c): the link-local address
 * every port gets, which addresses may be assigned, the routes global addresses make and
 * hand on, link-local scoping, multicast groups, source selection and user routes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_eal.h"
#include "test_wire_hex.h"
#include "stack/netcfg6.h"

static struct netcfg c;
static const struct eth_addr mac0 = {{0x02, 0, 0, 0, 0, 0x10}};
static const struct eth_addr mac1 = {{0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc}};

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

static int add(uint16_t port, const char *addr, uint8_t plen)
{
	struct ip6_addr a = ip6_addr_of(addr);
	return netcfg6_addr_add(&c, port, &a, plen, 0);
}

static int del(uint16_t port, const char *addr, uint8_t plen)
{
	struct ip6_addr a = ip6_addr_of(addr);
	return netcfg6_addr_del(&c, port, &a, plen);
}

static struct inet_addr A6(const char *text)
{
	struct ip6_addr a = ip6_addr_of(text);
	return inet_addr_v6(&a);
}

static const struct route *find(const char *prefix, uint8_t plen)
{
	return route_find(c.routes, (struct inet_addr[]){A6(prefix)}, plen);
}

static bool is_local(uint16_t port, const char *addr)
{
	struct ip6_addr a = ip6_addr_of(addr);
	return netcfg6_local(&c, port, &a) != NULL;
}

static void test_ports_get_eui64_link_local(void **state)
{
	(void)state;
	/* RFC 4291 appendix A: the U/L bit inverted, ff:fe in the middle. */
	assert_true(is_local(0, "fe80::ff:fe00:10"));
	assert_true(is_local(1, "fe80::21b:21ff:feaa:bbcc"));
	/* Scoped: port 1 does not answer for port 0's link-local address. */
	assert_false(is_local(1, "fe80::ff:fe00:10"));
	/* And no route: link-local destinations are resolved on their port. */
	assert_null(find("fe80::", 64));
	assert_null(find("fe80::ff:fe00:10", 128));
}

static void test_global_address_routes(void **state)
{
	(void)state;
	assert_int_equal(add(0, "2001:db8::2", 64), 0);
	const struct route *local = find("2001:db8::2", 128);
	assert_non_null(local);
	assert_int_equal(local->type, ROUTE_LOCAL);
	const struct route *conn = find("2001:db8::", 64);
	assert_non_null(conn);
	assert_int_equal(conn->type, ROUTE_CONNECTED);
	assert_int_equal(conn->port, 0);
	/* Weak host: a global address is ours whichever port asks. */
	assert_true(is_local(1, "2001:db8::2"));
	assert_int_equal(add(1, "2001:db8::2", 64), -EEXIST);
	/* A second address of the prefix on port 1 inherits the route when the first goes. */
	assert_int_equal(add(1, "2001:db8::3", 64), 0);
	assert_int_equal(find("2001:db8::", 64)->port, 0);
	assert_int_equal(del(0, "2001:db8::2", 64), 0);
	assert_null(find("2001:db8::2", 128));
	conn = find("2001:db8::", 64);
	assert_non_null(conn);
	assert_int_equal(conn->port, 1);
	struct inet_addr three = A6("2001:db8::3");
	assert_true(inet_addr_equal(&conn->src, &three));
	assert_int_equal(del(1, "2001:db8::3", 64), 0);
	assert_null(find("2001:db8::", 64));
	assert_int_equal(del(1, "2001:db8::3", 64), -EADDRNOTAVAIL);
}

static void test_unassignable_addresses_refused(void **state)
{
	(void)state;
	assert_int_equal(add(0, "ff02::1", 64), -EINVAL);
	assert_int_equal(add(0, "::", 64), -EINVAL);
	assert_int_equal(add(0, "::1", 128), -EINVAL);
	assert_int_equal(add(0, "::ffff:10.0.0.1", 96), -EINVAL);
	assert_int_equal(add(0, "2001:db8::1", 0), -EINVAL);
	assert_int_equal(add(0, "2001:db8::1", 129), -EINVAL);
	assert_int_equal(add(5, "2001:db8::1", 64), -ENODEV);
	assert_int_equal(add(0, "fe80::ff:fe00:10", 64), -EEXIST);
}

static void test_multicast_groups(void **state)
{
	(void)state;
	assert_int_equal(add(0, "2001:db8::abcd:1234", 64), 0);
	struct ip6_addr all = ip6_addr_of("ff02::1");
	struct ip6_addr sn = ip6_addr_of("ff02::1:ffcd:1234");
	struct ip6_addr sn_ll = ip6_addr_of("ff02::1:ff00:10");
	struct ip6_addr other = ip6_addr_of("ff02::1:ff00:99");
	assert_true(netcfg6_listens(&c, 0, &all));
	assert_true(netcfg6_listens(&c, 0, &sn));
	assert_true(netcfg6_listens(&c, 0, &sn_ll));
	assert_false(netcfg6_listens(&c, 1, &sn));
	assert_false(netcfg6_listens(&c, 0, &other));
}

static void test_source_selection(void **state)
{
	(void)state;
	assert_int_equal(add(0, "2001:db8:1::2", 64), 0);
	assert_int_equal(add(0, "2001:db8:2::2", 64), 0);
	struct ip6_addr src, dst = ip6_addr_of("2001:db8:2::99");
	assert_true(netcfg6_source_for(&c, 0, &dst, &src));
	struct ip6_addr want = ip6_addr_of("2001:db8:2::2");
	assert_true(ip6_addr_equal(&src, &want));
	dst = ip6_addr_of("fe80::1");
	assert_true(netcfg6_source_for(&c, 0, &dst, &src));
	want = ip6_addr_of("fe80::ff:fe00:10");
	assert_true(ip6_addr_equal(&src, &want));
	/* Only a link-local address on port 1: it serves global destinations too. */
	dst = ip6_addr_of("2001:db8:2::99");
	assert_true(netcfg6_source_for(&c, 1, &dst, &src));
	want = ip6_addr_of("fe80::21b:21ff:feaa:bbcc");
	assert_true(ip6_addr_equal(&src, &want));
	assert_false(netcfg6_source_for(&c, 7, &dst, &src));
}

static void test_user_routes(void **state)
{
	(void)state;
	assert_int_equal(add(0, "2001:db8::2", 64), 0);
	struct route r = {.prefix = A6("2001:db8:9::"), .plen = 48,
			   .type = ROUTE_GATEWAY, .gateway = A6("2001:db8::1"),
			   .port = NETCFG_PORT_ANY};
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	assert_int_equal(find("2001:db8:9::", 48)->port, 0);
	assert_int_equal(netcfg_route_add(&c, &r), -EEXIST);
	/* A gateway off every connected prefix, and a link-local one without its port. */
	r.prefix = A6("2001:db8:a::");
	r.gateway = A6("2001:db8:77::1");
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
	r.gateway = A6("fe80::1");
	assert_int_equal(netcfg_route_add(&c, &r), -ENETUNREACH);
	r.port = 1;
	assert_int_equal(netcfg_route_add(&c, &r), 0);
	/* A user's route at an address's prefix gives way back to the address's on delete. */
	struct route u = {.prefix = A6("2001:db8::"), .plen = 64,
			   .type = ROUTE_BLACKHOLE};
	assert_int_equal(netcfg_route_add(&c, &u), -EEXIST);
	struct inet_addr p = A6("2001:db8::");
	assert_int_equal(netcfg_route_del(&c, &p, 64), 0);
	assert_int_equal(netcfg_route_add(&c, &u), 0);
	assert_int_equal(netcfg_route_del(&c, &p, 64), 0);
	assert_int_equal(find("2001:db8::", 64)->type, ROUTE_CONNECTED);
	assert_true(find("2001:db8::", 64)->from_addr);
	/* LOCAL entries go only with their address. */
	p = A6("2001:db8::2");
	assert_int_equal(netcfg_route_del(&c, &p, 128), -ESRCH);
	u.mtu = 1000; /* below IPv6's minimum link MTU (RFC 8200 §5) */
	u.prefix = A6("2001:db8:b::");
	assert_int_equal(netcfg_route_add(&c, &u), -EINVAL);
}

int main(void)
{
	test_eal_init();
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ports_get_eui64_link_local, setup, teardown),
		cmocka_unit_test_setup_teardown(test_global_address_routes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unassignable_addresses_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_multicast_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_selection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_user_routes, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
