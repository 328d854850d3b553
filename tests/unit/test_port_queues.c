/* Which queues of a kernel interface a net_af_xdp port serves (src/ctl/port_queues.c), for
 * made-up interfaces, and the vdev string helpers (src/dp/port_devargs.c): no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/ctl/port_queues.h"
#include "../../src/dp/port_devargs.h"

static char devargs[PORT_DEVARGS_LEN];
static char err[640];

static int plan(const char *given, struct port_queues_if k)
{
	snprintf(devargs, sizeof(devargs), "%s", given);
	err[0] = '\0';
	return port_queues_plan(devargs, sizeof(devargs), "eth1", &k, err, sizeof(err));
}

static void test_one_queue_interface_left_alone(void **state)
{
	(void)state;
	assert_int_equal(plan("net_af_xdp0,iface=eth1", (struct port_queues_if){.rx_queues = 1}),
			 0);
	assert_string_equal(devargs, "net_af_xdp0,iface=eth1");
}

static void test_combined_channels_all_queues_served(void **state)
{
	(void)state;
	struct port_queues_if k = {.rx_queues = 4, .combined = 4};
	assert_int_equal(plan("net_af_xdp0,iface=eth1", k), 0);
	assert_string_equal(devargs, "net_af_xdp0,iface=eth1,queue_count=4");
}

static void test_veth_with_two_rx_queues_refused_naming_both_ends(void **state)
{
	(void)state;
	struct port_queues_if k = {.rx_queues = 2, .veth = true};
	strcpy(k.veth_peer, "vethB");
	assert_int_equal(plan("net_af_xdp0,iface=eth1", k), -1);
	assert_string_equal(devargs, "net_af_xdp0,iface=eth1");
	assert_non_null(strstr(err, "receives on 2 RX queues but this port serves queue 0"));
	assert_non_null(strstr(err, "'ethtool -L vethB tx 1'"));
	assert_non_null(strstr(err, "'ethtool -L eth1 rx 1'"));
}

static void test_veth_peer_elsewhere_named_as_peer(void **state)
{
	(void)state;
	struct port_queues_if k = {.rx_queues = 2, .veth = true};
	assert_int_equal(plan("net_af_xdp0,iface=eth1", k), -1);
	assert_non_null(strstr(err, "'ethtool -L PEER tx 1' (PEER: the veth's other end"));
}

static void test_users_queue_range_leaving_one_out_refused(void **state)
{
	(void)state;
	struct port_queues_if k = {.rx_queues = 4, .combined = 4};
	assert_int_equal(plan("net_af_xdp0,iface=eth1,start_queue=1,queue_count=3", k), -1);
	assert_non_null(strstr(err, "serves queues 1-3"));
	assert_non_null(strstr(err, "leave out queue_count and start_queue"));
	assert_int_equal(plan("net_af_xdp0,iface=eth1,queue_count=4", k), 0);
	assert_string_equal(devargs, "net_af_xdp0,iface=eth1,queue_count=4");
}

static void test_nic_without_combined_channels_told_to_use_one(void **state)
{
	(void)state;
	assert_int_equal(plan("net_af_xdp0,iface=eth1", (struct port_queues_if){.rx_queues = 2}),
			 -1);
	assert_non_null(strstr(err, "'ethtool -L eth1 combined 1'"));
}

static void test_more_queues_than_a_port_serves_refused(void **state)
{
	(void)state;
	struct port_queues_if k = {.rx_queues = PORT_MAX_QUEUES + 1,
				   .combined = PORT_MAX_QUEUES + 1};
	assert_int_equal(plan("net_af_xdp0,iface=eth1", k), -1);
	assert_non_null(strstr(err, "ethtool -L eth1 combined N"));
}

static void test_devargs_driver_value_and_append(void **state)
{
	(void)state;
	assert_true(port_devargs_driver_is("net_af_xdp12,iface=a", "net_af_xdp"));
	assert_true(port_devargs_driver_is("net_tap", "net_tap"));
	assert_false(port_devargs_driver_is("net_af_xdpx,iface=a", "net_af_xdp"));
	assert_false(port_devargs_driver_is("net_af_packet0", "net_af_xdp"));
	char v[8];
	assert_true(port_devargs_value("net_x0,a=1,iface=veth0,b=2", "iface", v, sizeof(v)));
	assert_string_equal(v, "veth0");
	assert_false(port_devargs_value("net_x0,iface=averyverylongname", "iface", v, sizeof(v)));
	assert_false(port_devargs_value("net_x0,xiface=a", "iface", v, sizeof(v)));
	unsigned n;
	assert_true(port_devargs_uint("net_x0,queue_count=3", "queue_count", &n));
	assert_int_equal(n, 3);
	assert_false(port_devargs_uint("net_x0,queue_count=3x", "queue_count", &n));
	assert_false(port_devargs_uint("net_x0,queue_count=", "queue_count", &n));
	char s[16] = "net_x0";
	assert_int_equal(port_devargs_append(s, sizeof(s), "a", "1"), 0);
	assert_string_equal(s, "net_x0,a=1");
	assert_int_equal(port_devargs_append(s, sizeof(s), "long", "12345"), -1);
	assert_string_equal(s, "net_x0,a=1");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_queue_interface_left_alone),
		cmocka_unit_test(test_combined_channels_all_queues_served),
		cmocka_unit_test(test_veth_with_two_rx_queues_refused_naming_both_ends),
		cmocka_unit_test(test_veth_peer_elsewhere_named_as_peer),
		cmocka_unit_test(test_users_queue_range_leaving_one_out_refused),
		cmocka_unit_test(test_nic_without_combined_channels_told_to_use_one),
		cmocka_unit_test(test_more_queues_than_a_port_serves_refused),
		cmocka_unit_test(test_devargs_driver_value_and_append),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
