/* The library's socket options, fcntl and ioctl (lib/dpstack/dps_opt.c) on sockets that are
 * not connected yet: what they keep for connect/listen, and the checks Linux makes
 * (net/core/sock.c, net/ipv4/tcp.c). No daemon: these calls must not need one. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <cmocka.h>

#include <dpstack/dpstack.h>

#include "../../lib/dpstack/dps_priv.h"
#include "udp/udp.h"

static int setup(void **state)
{
	struct dps_file *f = dps_file_new(DPS_TCP, -1);
	assert_non_null(f);
	assert_int_equal(dps_file_install(f), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct dps_file *f = *state;
	dps_file_put(dps_file_remove(f->fd));
	return 0;
}

static int fd_of(void **state)
{
	return ((struct dps_file *)*state)->fd;
}

static int set_int(int fd, int level, int name, int v)
{
	return dps_setsockopt(fd, level, name, &v, sizeof(v));
}

static int get_int(int fd, int level, int name)
{
	int v = -12345;
	socklen_t len = sizeof(v);
	assert_int_equal(dps_getsockopt(fd, level, name, &v, &len), 0);
	assert_int_equal(len, sizeof(v));
	return v;
}

/* The call fails with errno e. */
#define assert_fails(call, e) \
	do { \
		errno = 0; \
		assert_int_equal((call), -1); \
		assert_int_equal(errno, (e)); \
	} while (0)

static void test_dps_opt_buffers_are_doubled_floored_and_capped(void **state)
{
	int fd = fd_of(state);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_RCVBUF), 262144); /* the stack's default */
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_RCVBUF, 10000), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_RCVBUF), 20000);
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_SNDBUF, 100), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_SNDBUF), 4096);
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_RCVBUF, -1), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_RCVBUF), 4096);
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_SNDBUF, INT32_MAX), 0);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_SNDBUF), (int)UDP_RCVBUF_MAX);
	struct dps_file *f = *state;
	assert_int_equal(f->opts.rcvbuf, 4096); /* what connect/listen will carry */
	assert_int_equal(f->opts.sndbuf, UDP_RCVBUF_MAX);
}

static void test_dps_opt_keepalive_values_are_range_checked(void **state)
{
	int fd = fd_of(state);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7200);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 75);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 9);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, 0), EINVAL);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, 32768), EINVAL);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, 128), EINVAL);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 7200); /* refusals keep */
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_KEEPIDLE, 32767), 0);
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_KEEPINTVL, 1), 0);
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_KEEPCNT, 127), 0);
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_KEEPALIVE, 5), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPIDLE), 32767);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPINTVL), 1);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_KEEPCNT), 127);
	assert_int_equal(get_int(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
}

static void test_dps_opt_maxseg_zero_or_88_to_32767(void **state)
{
	int fd = fd_of(state);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_MAXSEG), 536);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_MAXSEG, 87), EINVAL);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_MAXSEG, 32768), EINVAL);
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_MAXSEG, 88), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_MAXSEG), 88);
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_MAXSEG, 0), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_MAXSEG), 536);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, -1), EINVAL);
	assert_int_equal(set_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, 70000), 0);
	assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_USER_TIMEOUT), 70000);
}

static void test_dps_opt_timeouts_round_up_to_milliseconds(void **state)
{
	int fd = fd_of(state);
	struct timeval tv = {.tv_sec = 2, .tv_usec = 1};
	assert_int_equal(dps_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	socklen_t len = sizeof(tv);
	assert_int_equal(dps_getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len), 0);
	assert_int_equal(tv.tv_sec, 2);
	assert_int_equal(tv.tv_usec, 1000);
	tv = (struct timeval){.tv_sec = 1, .tv_usec = 1000000};
	assert_fails(dps_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), EDOM);
	tv = (struct timeval){.tv_sec = -5};
	assert_int_equal(dps_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(((struct dps_file *)*state)->rcvtimeo_ms, 0); /* negative: forever */
	tv = (struct timeval){.tv_sec = INT64_MAX / 1000};
	assert_int_equal(dps_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(((struct dps_file *)*state)->sndtimeo_ms, INT32_MAX);
	assert_fails(dps_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv) - 1), EINVAL);
}

static void test_dps_opt_linger_zero_means_reset_on_close(void **state)
{
	int fd = fd_of(state);
	struct dps_file *f = *state;
	struct linger l = {.l_onoff = 1, .l_linger = 0};
	assert_int_equal(dps_setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
	assert_int_equal(f->opts.linger0, 1);
	l = (struct linger){.l_onoff = 1, .l_linger = 30};
	assert_int_equal(dps_setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)), 0);
	assert_int_equal(f->opts.linger0, 0);
	struct linger back;
	socklen_t len = sizeof(back);
	assert_int_equal(dps_getsockopt(fd, SOL_SOCKET, SO_LINGER, &back, &len), 0);
	assert_int_equal(back.l_onoff, 1);
	assert_int_equal(back.l_linger, 30);
	len = sizeof(back) - 1;
	assert_fails(dps_getsockopt(fd, SOL_SOCKET, SO_LINGER, &back, &len), EINVAL);
}

static void test_dps_opt_short_values_are_refused_and_short_reads_cut(void **state)
{
	int fd = fd_of(state);
	short s = 1;
	assert_fails(dps_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &s, sizeof(s)), EINVAL);
	/* Linux: the value is copied in before it is looked at. */
	assert_fails(dps_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, NULL, sizeof(int)), EFAULT);
	assert_int_equal(set_int(fd, SOL_SOCKET, SO_RCVBUF, 0x10000), 0);
	/* Linux copies as much of the int as fits and says how much. */
	uint8_t b[4] = {0xee, 0xee, 0xee, 0xee};
	socklen_t len = 1;
	assert_int_equal(dps_getsockopt(fd, SOL_SOCKET, SO_RCVBUF, b, &len), 0);
	assert_int_equal(len, 1);
	int want = 0x20000;
	assert_memory_equal(b, &want, 1);
	assert_int_equal(b[1], 0xee);
}

static void test_dps_opt_unknown_levels_and_names(void **state)
{
	int fd = fd_of(state);
	assert_fails(set_int(fd, SOL_SOCKET, SO_PRIORITY, 1), ENOPROTOOPT);
	assert_fails(set_int(fd, IPPROTO_TCP, TCP_QUICKACK, 1), ENOPROTOOPT);
	assert_fails(set_int(fd, IPPROTO_IPV6, 1, 1), ENOPROTOOPT);
	int v;
	socklen_t len = sizeof(v);
	assert_fails(dps_getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &len), ENOPROTOOPT);
	assert_fails(set_int(fd_of(state) + 100000, SOL_SOCKET, SO_REUSEADDR, 1), EBADF);
}

static void test_dps_opt_socket_kind_decides_type_and_tcp_level(void **state)
{
	(void)state;
	struct dps_file *u = dps_file_new(DPS_UDP, -1);
	assert_non_null(u);
	assert_int_equal(dps_file_install(u), 0);
	assert_int_equal(get_int(u->fd, SOL_SOCKET, SO_TYPE), SOCK_DGRAM);
	assert_int_equal(get_int(u->fd, SOL_SOCKET, SO_PROTOCOL), IPPROTO_UDP);
	assert_int_equal(get_int(u->fd, SOL_SOCKET, SO_ACCEPTCONN), 0);
	assert_fails(set_int(u->fd, IPPROTO_TCP, TCP_NODELAY, 1), ENOPROTOOPT);
	assert_int_equal(set_int(u->fd, SOL_SOCKET, SO_BROADCAST, 7), 0);
	assert_int_equal(get_int(u->fd, SOL_SOCKET, SO_BROADCAST), 1);
	dps_file_put(dps_file_remove(u->fd));
	assert_int_equal(get_int(fd_of(state), SOL_SOCKET, SO_TYPE), SOCK_STREAM);
	assert_int_equal(get_int(fd_of(state), SOL_SOCKET, SO_DOMAIN), AF_INET);
	assert_int_equal(get_int(fd_of(state), SOL_SOCKET, SO_ERROR), 0);
}

/* RFC 3542's receive options and the sticky IPV6_PKTINFO on an AF_INET6 datagram socket,
 * checked as Linux's do_ipv6_setsockopt; multicast refused as IPv4's (no multicast here). */
static void test_dps_opt_ipv6_receive_options_and_sticky_pktinfo(void **state)
{
	(void)state;
	struct dps_file *u = dps_file_new(DPS_UDP, -1);
	assert_non_null(u);
	u->family = AF_INET6;
	assert_int_equal(dps_file_install(u), 0);
	const int recv[] = {IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT, IPV6_RECVTCLASS,
			    IPV6_2292PKTINFO, IPV6_2292HOPLIMIT};
	for (size_t i = 0; i < sizeof(recv) / sizeof(recv[0]); i++) {
		assert_int_equal(get_int(u->fd, IPPROTO_IPV6, recv[i]), 0);
		assert_int_equal(set_int(u->fd, IPPROTO_IPV6, recv[i], 9), 0);
		assert_int_equal(get_int(u->fd, IPPROTO_IPV6, recv[i]), 1);
		unsigned char one = 1;
		assert_fails(dps_setsockopt(u->fd, IPPROTO_IPV6, recv[i], &one, 1), EINVAL);
	}
	assert_int_equal(set_int(u->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT, 0), 0);
	assert_int_equal(get_int(u->fd, IPPROTO_IPV6, IPV6_RECVHOPLIMIT), 0);
	assert_int_equal(get_int(u->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO), 1);
	struct in6_pktinfo pi = {.ipi6_ifindex = 7};
	assert_int_equal(dps_setsockopt(u->fd, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi)), 0);
	assert_fails(dps_setsockopt(u->fd, IPPROTO_IPV6, IPV6_PKTINFO, &pi, sizeof(pi) - 1),
		     EINVAL);
	socklen_t len = sizeof(pi);
	assert_fails(dps_getsockopt(u->fd, IPPROTO_IPV6, IPV6_PKTINFO, &pi, &len), ENOPROTOOPT);
	struct ipv6_mreq mr = {.ipv6mr_interface = 1};
	assert_fails(dps_setsockopt(u->fd, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mr, sizeof(mr)),
		     ENOPROTOOPT);
	dps_file_put(dps_file_remove(u->fd));
}

static void test_dps_opt_epoll_file_is_not_a_socket(void **state)
{
	(void)state;
	struct dps_file *e = dps_file_new(DPS_EPOLL, -1);
	assert_non_null(e);
	assert_int_equal(dps_file_install(e), 0);
	assert_fails(set_int(e->fd, SOL_SOCKET, SO_REUSEADDR, 1), ENOTSOCK);
	int v, arg = 0;
	socklen_t len = sizeof(v);
	assert_fails(dps_getsockopt(e->fd, SOL_SOCKET, SO_TYPE, &v, &len), ENOTSOCK);
	assert_fails(dps_ioctl(e->fd, FIONREAD, &arg), EINVAL);
	dps_file_put(dps_file_remove(e->fd));
}

static void test_dps_opt_fcntl_keeps_only_nonblock_and_cloexec(void **state)
{
	int fd = fd_of(state);
	assert_int_equal(dps_fcntl(fd, F_GETFL), O_RDWR);
	assert_int_equal(dps_fcntl(fd, F_SETFL, (long)(O_NONBLOCK | O_APPEND)), 0);
	assert_int_equal(dps_fcntl(fd, F_GETFL), O_RDWR | O_NONBLOCK);
	assert_int_equal(dps_fcntl(fd, F_GETFD), FD_CLOEXEC);
	assert_int_equal(dps_fcntl(fd, F_SETFD, 0L), 0);
	assert_int_equal(dps_fcntl(fd, F_GETFD), 0);
	assert_fails(dps_fcntl(fd, F_GETLK, 0L), EINVAL);
}

static void test_dps_opt_ioctl_nonblocking_and_unread_bytes(void **state)
{
	int fd = fd_of(state);
	int on = 1, n = -1;
	assert_int_equal(dps_ioctl(fd, FIONBIO, &on), 0);
	assert_int_equal(dps_fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	on = 0;
	assert_int_equal(dps_ioctl(fd, FIONBIO, &on), 0);
	assert_int_equal(dps_fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(dps_ioctl(fd, FIONREAD, &n), 0);
	assert_int_equal(n, 0); /* not connected: nothing to read */
	assert_int_equal(dps_ioctl(fd, FIONCLEX, NULL), 0);
	assert_int_equal(dps_fcntl(fd, F_GETFD), 0);
	assert_fails(dps_ioctl(fd, FIONREAD, NULL), EFAULT);
	assert_fails(dps_ioctl(fd, TIOCGWINSZ, &n), ENOTTY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dps_opt_buffers_are_doubled_floored_and_capped,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_keepalive_values_are_range_checked,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_maxseg_zero_or_88_to_32767, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_timeouts_round_up_to_milliseconds,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_linger_zero_means_reset_on_close,
						setup, teardown),
		cmocka_unit_test_setup_teardown(
			test_dps_opt_short_values_are_refused_and_short_reads_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_unknown_levels_and_names, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_socket_kind_decides_type_and_tcp_level,
						setup, teardown),
		cmocka_unit_test(test_dps_opt_ipv6_receive_options_and_sticky_pktinfo),
		cmocka_unit_test_setup_teardown(test_dps_opt_epoll_file_is_not_a_socket, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_fcntl_keeps_only_nonblock_and_cloexec,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_dps_opt_ioctl_nonblocking_and_unread_bytes,
						setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
