/* The rtnetlink helpers of the kernel sync (src/ctl/rtnl.c) on messages built here:
 * attributes appended and read back, a message without room refused, truncated and unknown
 * attributes ignored, u32 defaults, iproute2's protocol names; and a link setting for an
 * interface that does not exist, refused as such. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "rtnl.h"

struct msg {
	struct nlmsghdr nlh;
	struct rtmsg rtm;
	char attrs[64];
};

static void msg_init(struct msg *m)
{
	memset(m, 0, sizeof(*m));
	m->nlh.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtmsg));
}

static void test_rtnl_attrs_put_then_parse_round_trip(void **state)
{
	(void)state;
	struct msg m;
	msg_init(&m);
	uint32_t oif = 7, prio = 100;
	uint8_t dst[4] = {10, 9, 0, 0};
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_OIF, &oif, 4), 0);
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_DST, dst, 4), 0);
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_PRIORITY, &prio, 4), 0);
	struct rtattr *tb[RTA_MAX + 1];
	rtnl_attrs_parse(tb, RTA_MAX, RTM_RTA(&m.rtm), (int)RTM_PAYLOAD(&m.nlh));
	assert_int_equal(rtnl_attr_u32(tb[RTA_OIF], 0), 7);
	assert_int_equal(rtnl_attr_u32(tb[RTA_PRIORITY], 0), 100);
	assert_memory_equal(RTA_DATA(tb[RTA_DST]), dst, 4);
	assert_null(tb[RTA_GATEWAY]);
	assert_int_equal(rtnl_attr_u32(tb[RTA_GATEWAY], 42), 42);
}

static void test_rtnl_attr_put_without_room_is_refused_and_changes_nothing(void **state)
{
	(void)state;
	struct msg m;
	msg_init(&m);
	char big[80] = {0};
	uint32_t len = m.nlh.nlmsg_len;
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_DST, big, sizeof(big)), -ENOSPC);
	assert_int_equal(m.nlh.nlmsg_len, len);
}

static void test_rtnl_attrs_truncated_or_unknown_are_ignored(void **state)
{
	(void)state;
	struct msg m;
	msg_init(&m);
	uint32_t v = 5;
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_MAX + 3, &v, 4), 0);
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_OIF, &v, 4), 0);
	struct rtattr *tb[RTA_MAX + 1];
	/* The second attribute cut short: RTA_OK stops before it. */
	rtnl_attrs_parse(tb, RTA_MAX, RTM_RTA(&m.rtm), (int)RTM_PAYLOAD(&m.nlh) - 2);
	assert_null(tb[RTA_OIF]);
	/* A u32 attribute shorter than 4 bytes reads as absent. */
	msg_init(&m);
	uint16_t two = 9;
	assert_int_equal(rtnl_attr_put(&m.nlh, sizeof(m), RTA_OIF, &two, 2), 0);
	rtnl_attrs_parse(tb, RTA_MAX, RTM_RTA(&m.rtm), (int)RTM_PAYLOAD(&m.nlh));
	assert_non_null(tb[RTA_OIF]);
	assert_int_equal(rtnl_attr_u32(tb[RTA_OIF], 1), 1);
}

static void test_rtnl_proto_names_are_iproute2s(void **state)
{
	(void)state;
	assert_string_equal(rtnl_proto_name(RTPROT_BIRD), "bird");
	assert_string_equal(rtnl_proto_name(RTPROT_STATIC), "static");
	assert_string_equal(rtnl_proto_name(RTPROT_KERNEL), "kernel");
	assert_string_equal(rtnl_proto_name(RTPROT_BOOT), "boot");
	assert_string_equal(rtnl_proto_name(RTPROT_DHCP), "dhcp");
	assert_string_equal(rtnl_proto_name(RTPROT_RA), "ra");
	assert_string_equal(rtnl_proto_name(186), "bgp");
	assert_string_equal(rtnl_proto_name(188), "ospf");
	assert_null(rtnl_proto_name(250));
}

static void test_rtnl_link_set_on_a_missing_interface_is_enodev(void **state)
{
	(void)state;
	assert_int_equal(rtnl_link_set("dpsnosuchif0", 1400, true, false), -ENODEV);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rtnl_attrs_put_then_parse_round_trip),
		cmocka_unit_test(test_rtnl_attr_put_without_room_is_refused_and_changes_nothing),
		cmocka_unit_test(test_rtnl_attrs_truncated_or_unknown_are_ignored),
		cmocka_unit_test(test_rtnl_proto_names_are_iproute2s),
		cmocka_unit_test(test_rtnl_link_set_on_a_missing_interface_is_enodev),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
