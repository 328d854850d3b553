/* lib/dpstack/dps_cmsg.c: the ancillary data of a received datagram as Linux writes it
 * (net/core/scm.c put_cmsg): order, sizes, and MSG_CTRUNC when the buffer is short; and
 * sendmsg's, read per path as ip_cmsg_send and ip6_datagram_send_ctl read them. The IPv6
 * expectations were taken from Linux 6.x (a Python recvmsg/sendmsg on kernel sockets). */
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
	dps_cmsg_recv(&m, 0, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_int_equal(m.msg_flags, 0);
}

static void all_three_in_linux_order_pktinfo_ttl_tos(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct msghdr m = msg_with(buf, sizeof(buf));
	dps_cmsg_recv(&m, DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &info);
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
	dps_cmsg_recv(&m, DPS_CMSG_TTL, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_true(m.msg_flags & MSG_CTRUNC);
	assert_int_equal(buf[0], 0xee);
	m = msg_with(NULL, 64);
	dps_cmsg_recv(&m, DPS_CMSG_TTL, &info);
	assert_int_equal(m.msg_controllen, 0);
	assert_true(m.msg_flags & MSG_CTRUNC);
}

static void second_message_cut_to_the_room_left(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[128];
	size_t len = CMSG_SPACE(sizeof(struct in_pktinfo)) + CMSG_LEN(0) + 2;
	struct msghdr m = msg_with(buf, len);
	dps_cmsg_recv(&m, DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &info);
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
	return dps_cmsg_parse_send(&m, DPS_CMSG_PATH_IP, out);
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

/* ---- IPv6 ---- */

static const uint8_t dst6[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 0x02};

static struct dps_cmsg_ip_info info6(void)
{
	struct dps_cmsg_ip_info in = {.v6 = true, .ifindex = 4, .ttl = 63, .tos = 0x28};
	memcpy(in.dst6.s6_addr, dst6, 16);
	return in;
}

static const unsigned all6 = DPS_CMSG6_PKTINFO | DPS_CMSG6_HOPLIMIT | DPS_CMSG6_TCLASS |
			     DPS_CMSG6_2292PKTINFO | DPS_CMSG6_2292HOPLIMIT;

static void expect_pktinfo6(struct cmsghdr *c, int type, const uint8_t *addr, unsigned ifindex)
{
	assert_non_null(c);
	assert_int_equal(c->cmsg_level, IPPROTO_IPV6);
	assert_int_equal(c->cmsg_type, type);
	assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(struct in6_pktinfo)));
	struct in6_pktinfo pi;
	memcpy(&pi, CMSG_DATA(c), sizeof(pi));
	assert_memory_equal(pi.ipi6_addr.s6_addr, addr, 16);
	assert_int_equal(pi.ipi6_ifindex, ifindex);
}

static void expect_int6(struct cmsghdr *c, int type, int v)
{
	assert_non_null(c);
	assert_int_equal(c->cmsg_level, IPPROTO_IPV6);
	assert_int_equal(c->cmsg_type, type);
	assert_int_equal(c->cmsg_len, CMSG_LEN(sizeof(int)));
	int got;
	memcpy(&got, CMSG_DATA(c), sizeof(got));
	assert_int_equal(got, v);
}

static void ipv6_datagram_all_five_in_linux_order_and_ip_level_ignored(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[512];
	struct msghdr m = msg_with(buf, sizeof(buf));
	struct dps_cmsg_ip_info in = info6();
	dps_cmsg_recv(&m, all6 | DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &in);
	assert_int_equal(m.msg_flags, 0);
	assert_int_equal(m.msg_controllen, 2 * CMSG_SPACE(sizeof(struct in6_pktinfo)) +
					   3 * CMSG_SPACE(sizeof(int)));
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	expect_pktinfo6(c, IPV6_PKTINFO, dst6, 4);
	expect_int6(c = CMSG_NXTHDR(&m, c), IPV6_HOPLIMIT, 63);
	expect_int6(c = CMSG_NXTHDR(&m, c), IPV6_TCLASS, 0x28);
	expect_pktinfo6(c = CMSG_NXTHDR(&m, c), IPV6_2292PKTINFO, dst6, 4);
	expect_int6(c = CMSG_NXTHDR(&m, c), IPV6_2292HOPLIMIT, 63);
	assert_null(CMSG_NXTHDR(&m, c));
}

static void ipv4_datagram_on_dual_stack_gets_mapped_pktinfo6_then_ip_level_only(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[512];
	struct msghdr m = msg_with(buf, sizeof(buf));
	dps_cmsg_recv(&m, all6 | DPS_CMSG_PKTINFO | DPS_CMSG_TTL | DPS_CMSG_TOS, &info);
	const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff, [12] = 10, [15] = 0xff};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	expect_pktinfo6(c, IPV6_PKTINFO, mapped, 3);
	c = CMSG_NXTHDR(&m, c);
	assert_int_equal(c->cmsg_level, IPPROTO_IP);
	assert_int_equal(c->cmsg_type, IP_PKTINFO);
	c = CMSG_NXTHDR(&m, c);
	assert_int_equal(c->cmsg_type, IP_TTL);
	c = CMSG_NXTHDR(&m, c);
	assert_int_equal(c->cmsg_type, IP_TOS);
	assert_null(CMSG_NXTHDR(&m, c));
	/* IPv6's hop limit, traffic class and RFC 2292 messages are IPv6 datagrams' only. */
	m = msg_with(buf, sizeof(buf));
	dps_cmsg_recv(&m, all6 & ~DPS_CMSG6_PKTINFO, &info);
	assert_int_equal(m.msg_controllen, 0);
}

static void ipv6_pktinfo_cut_to_a_header_sets_ctrunc(void **state)
{
	(void)state;
	/* Linux, recvmsg with 20 bytes of control buffer: a 20-byte IPV6_PKTINFO message
	 * holding the first 4 bytes of the address, MSG_CTRUNC. */
	_Alignas(struct cmsghdr) unsigned char buf[64];
	struct msghdr m = msg_with(buf, 20);
	struct dps_cmsg_ip_info in = info6();
	dps_cmsg_recv(&m, DPS_CMSG6_PKTINFO | DPS_CMSG6_HOPLIMIT, &in);
	assert_true(m.msg_flags & MSG_CTRUNC);
	assert_int_equal(m.msg_controllen, 20);
	struct cmsghdr *c = (struct cmsghdr *)buf;
	assert_int_equal(c->cmsg_type, IPV6_PKTINFO);
	assert_int_equal(c->cmsg_len, 20);
	assert_memory_equal(buf + CMSG_LEN(0), dst6, 4);
}

static int parse6(unsigned char *buf, size_t len, enum dps_cmsg_path path,
		  struct dps_cmsg_send *out)
{
	struct msghdr m = msg_with(buf, len);
	return dps_cmsg_parse_send(&m, path, out);
}

static void send6_pktinfo_hoplimit_tclass_read_and_ip_level_skipped(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct in6_pktinfo pi = {.ipi6_ifindex = 2};
	memcpy(pi.ipi6_addr.s6_addr, dst6, 16);
	int hops = 7, tclass = 0xb8, bad = 999;
	size_t n = put(buf, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi));
	n += put(buf + n, IPPROTO_IPV6, IPV6_HOPLIMIT, &hops, sizeof(hops));
	n += put(buf + n, IPPROTO_IPV6, IPV6_TCLASS, &tclass, sizeof(tclass));
	n += put(buf + n, IPPROTO_IP, IP_TTL, &bad, sizeof(bad)); /* not IPv6's: skipped */
	struct dps_cmsg_send c;
	assert_int_equal(parse6(buf, n, DPS_CMSG_PATH_IP6, &c), 0);
	assert_true(c.pktinfo && c.ttl && c.tos);
	assert_memory_equal(c.src6.s6_addr, dst6, 16);
	assert_int_equal(c.ifindex, 2);
	assert_int_equal(c.ttl_v, 7);
	assert_int_equal(c.tos_v, 0xb8);
	/* -1: the socket's own, as if not given; RFC 2292's numbers read the same. */
	int dflt = -1;
	n = put(buf, IPPROTO_IPV6, IPV6_2292HOPLIMIT, &dflt, sizeof(dflt));
	n += put(buf + n, IPPROTO_IPV6, IPV6_TCLASS, &dflt, sizeof(dflt));
	n += put(buf + n, IPPROTO_IPV6, IPV6_2292PKTINFO, &pi, sizeof(pi));
	assert_int_equal(parse6(buf, n, DPS_CMSG_PATH_IP6, &c), 0);
	assert_false(c.ttl || c.tos);
	assert_true(c.pktinfo);
	/* An IPv4 socket reads no IPv6 message. */
	n = put(buf, IPPROTO_IPV6, IPV6_HOPLIMIT, &bad, sizeof(bad));
	assert_int_equal(parse6(buf, n, DPS_CMSG_PATH_IP, &c), 0);
}

static void send6_bad_messages_are_einval(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct dps_cmsg_send c;
	int big = 256, low = -2, one = 1;
	const enum dps_cmsg_path p6 = DPS_CMSG_PATH_IP6;
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_HOPLIMIT, &big, 4), p6, &c),
			 -EINVAL);
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_HOPLIMIT, &one, 1), p6, &c),
			 -EINVAL);
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_TCLASS, &low, 4), p6, &c),
			 -EINVAL);
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_PKTINFO, dst6, 16), p6, &c),
			 -EINVAL); /* shorter than a struct in6_pktinfo */
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, 99, &one, 4), p6, &c), -EINVAL);
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_HOPOPTS, &one, 4), p6, &c),
			 -EINVAL);
	assert_int_equal(parse6(buf, put(buf, SOL_SOCKET, SO_MARK, &one, 4), p6, &c), -EINVAL);
}

static void send_mapped_takes_ip_level_and_a_mapped_ipv6_pktinfo_only(void **state)
{
	(void)state;
	_Alignas(struct cmsghdr) unsigned char buf[256];
	struct dps_cmsg_send c;
	const enum dps_cmsg_path pm = DPS_CMSG_PATH_MAPPED;
	struct in6_pktinfo pi = {.ipi6_ifindex = 5};
	const uint8_t mapped[16] = {[10] = 0xff, [11] = 0xff, [12] = 10, [15] = 2};
	memcpy(pi.ipi6_addr.s6_addr, mapped, 16);
	int big = 300, ttl = 9;
	size_t n = put(buf, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi));
	n += put(buf + n, IPPROTO_IPV6, IPV6_HOPLIMIT, &big, sizeof(big)); /* ignored */
	n += put(buf + n, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	assert_int_equal(parse6(buf, n, pm, &c), 0);
	assert_true(c.pktinfo && c.ttl);
	assert_int_equal(c.spec_dst, 0x0200000a);
	assert_int_equal(c.ifindex, 5);
	assert_int_equal(c.ttl_v, 9);
	/* Linux: an IPv6 source (:: included) for an IPv4 peer is EINVAL. */
	memset(&pi, 0, sizeof(pi));
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi)), pm,
				&c), -EINVAL);
	memcpy(pi.ipi6_addr.s6_addr, dst6, 16);
	assert_int_equal(parse6(buf, put(buf, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi)), pm,
				&c), -EINVAL);
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
		cmocka_unit_test(ipv6_datagram_all_five_in_linux_order_and_ip_level_ignored),
		cmocka_unit_test(ipv4_datagram_on_dual_stack_gets_mapped_pktinfo6_then_ip_level_only),
		cmocka_unit_test(ipv6_pktinfo_cut_to_a_header_sets_ctrunc),
		cmocka_unit_test(send6_pktinfo_hoplimit_tclass_read_and_ip_level_skipped),
		cmocka_unit_test(send6_bad_messages_are_einval),
		cmocka_unit_test(send_mapped_takes_ip_level_and_a_mapped_ipv6_pktinfo_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
