/* lib/dpstack/dps_cmsg.c: the ancillary data of a received datagram as Linux writes it
 * (net/core/scm.c put_cmsg): order, sizes, and MSG_CTRUNC when the buffer is short. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../lib/dpstack/dps_cmsg.h"

static const struct dps_cmsg_ip_info info = {
	.ifindex = 3, .spec_dst = 0x0200000a, .daddr = 0xff00000a, .ttl = 9, .tos = 0x48};

static struct msghdr msg_with(void *buf, size_t len)
{
	return (struct msghdr){.msg_control = buf, .msg_controllen = len};
}

static void nothing_asked_writes_nothing_and_clears_controllen(void **state)
{
	(void)state;
	unsigned char buf[64];
	struct msghdr m = msg_with(buf, sizeof(buf));
	dps_cmsg_ip(&m, 0, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_int_equal(m.msg_flags, 0);
}

static void all_three_in_linux_order_pktinfo_ttl_tos(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct msghdr m = msg_with(buf, sizeof(buf));
	dps_cmsg_ip(&m, DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &info);
	assert_int_equal(m.msg_flags, 0);
	assert_int_equal(m.msg_controllen, CMSG_SPACE(sizeof(struct in_pktinfo)) +
					   CMSG_SPACE(sizeof(int)) + CMSG_SPACE(1));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	assert_int_equal(c->cmsg_level, IPPROTO_IP);
	assert_int_equal(c->cmsg_type, IP_PKTINFO);
	assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(struct in_pktinfo)));
	struct in_pktinfo pi;
	memcpy(&pi, CMSG_DATA(c), sizeof(pi));
	assert_int_equal(pi.ipi_ifindex, 3);
	assert_int_equal(pi.ipi_spec_dst.s_addr, info.spec_dst);
	assert_int_equal(pi.ipi_addr.s_addr, info.daddr);
	c = CMSG_NXTHDR(&m, c);
	assert_int_equal(c->cmsg_type, IP_TTL);
	assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(int)));
	int ttl;
	memcpy(&ttl, CMSG_DATA(c), sizeof(ttl));
	assert_int_equal(ttl, 9);
	c = CMSG_NXTHDR(&m, c);
	assert_int_equal(c->cmsg_type, IP_TOS);
	assert_int_equal(c->cmsg_len, CMSG_LEN(1));
	assert_int_equal(*CMSG_DATA(c), 0x48);
	assert_null(CMSG_NXTHDR(&m, c));
}

static void no_room_for_a_header_is_ctrunc_and_nothing_written(void **state)
{
	(void)state;
	unsigned char buf[64];
	memset(buf, 0xee, sizeof(buf));
	struct msghdr m = msg_with(buf, sizeof(struct cmsghdr) - 1);
	dps_cmsg_ip(&m, DPS_CMSG_TTL, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_true(m.msg_flags & MSG_CTRUNC);
	assert_int_equal(buf[0], 0xee);
	m = msg_with(NULL, 64);
	dps_cmsg_ip(&m, DPS_CMSG_TTL, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_true(m.msg_flags & MSG_CTRUNC);
}

static void second_message_cut_to_the_room_left(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[128];
	size_t len = CMSG_SPACE(sizeof(struct in_pktinfo)) + CMSG_LEN(0) + 2;
	struct msghdr m = msg_with(buf, len);
	dps_cmsg_ip(&m, DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &info);
	assert_true(m.msg_flags & MSG_CTRUNC);
	assert_int_equal(m.msg_controllen, len);
	struct cmsghdr *c = (struct cmsghdr *)(buf + CMSG_SPACE(sizeof(struct in_pktinfo)));
	assert_int_equal(c->cmsg_type, IP_TTL);
	assert_int_equal(c->cmsg_len, CMSG_LEN(0) + 2); /* cut, and says so */
}

/* One message of level/type with len bytes of data into buf; its CMSG_SPACE. */
static size_t put(unsigned char *buf, int level, int type, const void *data, size_t len)
{
	struct cmsghdr h = {.cmsg_len = CMSG_LEN(len), .cmsg_level = level, .cmsg_type = type};
	memset(buf, 0, CMSG_SPACE(len));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + CMSG_LEN(0), data, len);
	return CMSG_SPACE(len);
}

static int parse(unsigned char *buf, size_t len, struct dps_cmsg_send *out)
{
	struct msghdr m = msg_with(buf, len);
	return dps_cmsg_parse_send(&m, out);
}

static void send_ttl_tos_pktinfo_read_and_other_levels_skipped(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	int ttl = 200, one = 1;
	unsigned char tos = 0xb8;
	struct in_pktinfo pi = {.ipi_ifindex = 2, .ipi_spec_dst.s_addr = 0x0200000a};
	size_t n = put(buf, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	n += put(buf + n, IPPROTO_TCP, 1, &one, sizeof(one));
	n += put(buf + n, IPPROTO_IP, IP_TOS, &tos, 1);
	n += put(buf + n, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	struct dps_cmsg_send c;
	assert_int_equal(parse(buf, n, &c), 0);
	assert_true(c.ttl && c.tos && c.pktinfo);
	assert_int_equal(c.ttl_v, 200);
	assert_int_equal(c.tos_v, 0xb8);
	assert_int_equal(c.ifindex, 2);
	assert_int_equal(c.spec_dst, 0x0200000a);
	assert_int_equal(parse(buf, sizeof(struct cmsghdr) - 1, &c), 0); /* no room: none */
	assert_false(c.ttl);
}

static void send_bad_messages_are_einval(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct dps_cmsg_send c;
	int zero = 0, big = 256, one = 1;
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_TTL, &zero, sizeof(zero)), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_TTL, &one, 1), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_TOS, &big, sizeof(big)), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_TOS, &one, 2), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_PKTINFO, &one, 4), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, IPPROTO_IP, IP_RETOPTS, &one, 4), &c), -EINVAL);
	assert_int_equal(parse(buf, put(buf, SOL_SOCKET, SO_MARK, &one, 4), &c), -EINVAL);
	size_t n = put(buf, IPPROTO_IP, IP_TTL, &one, sizeof(one));
	((struct cmsghdr *)buf)->cmsg_len = n + 1; /* past the buffer */
	assert_int_equal(parse(buf, n, &c), -EINVAL);
	((struct cmsghdr *)buf)->cmsg_len = sizeof(struct cmsghdr) - 1;
	assert_int_equal(parse(buf, n, &c), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nothing_asked_writes_nothing_and_clears_controllen),
		cmocka_unit_test(all_three_in_linux_order_pktinfo_ttl_tos),
		cmocka_unit_test(no_room_for_a_header_is_ctrunc_and_nothing_written),
		cmocka_unit_test(second_message_cut_to_the_room_left),
		cmocka_unit_test(send_ttl_tos_pktinfo_read_and_other_levels_skipped),
		cmocka_unit_test(send_bad_messages_are_einval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
