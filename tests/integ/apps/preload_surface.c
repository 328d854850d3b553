/* For tests/integ/test_preload.py: an unmodified program (no libdpstack) that exercises the
 * socket surface a real program relies on beyond data: IP-level options and ancillary data,
 * broadcasts, fstat, close_range/closefrom, sendmmsg/recvmmsg, interface ioctls, bad pointers
 * (EFAULT) on every call and a program's own SIGSEGV handler. It runs
 * under the preload shim (stack sockets) and, unchanged, on the kernel in the peer's
 * namespace, and prints one "key value" line per observation (errors as their errno names)
 * so that the test can compare both runs line by line. Usage: preload_surface COMMAND ARGS. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <stdbool.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app_cmd.h"

static const char *errname(int e)
{
	const char *n = strerrorname_np(e);
	return n != NULL ? n : "E?";
}

/* Prints "key value" for rc >= 0 (value v), else "key ERRNO". */
static void report(const char *key, int rc, long v)
{
	if (rc < 0)
		printf("%s %s\n", key, errname(errno));
	else
		printf("%s %ld\n", key, v);
}

static int get_int(int fd, int level, int name, socklen_t want_len, long *out, socklen_t *len)
{
	unsigned char buf[8] = {0};
	*len = want_len;
	int rc = getsockopt(fd, level, name, buf, len);
	int v = 0;
	if (*len >= sizeof(int))
		memcpy(&v, buf, sizeof(int));
	else if (*len == 1)
		v = buf[0];
	*out = v;
	return rc;
}

static void show_opt(const char *key, int fd, int level, int name)
{
	long v;
	socklen_t len;
	int rc = get_int(fd, level, name, sizeof(int), &v, &len);
	report(key, rc, v);
}

static void set_opt(const char *key, int fd, int level, int name, int v, socklen_t len)
{
	int rc = setsockopt(fd, level, name, &v, len);
	report(key, rc, 0);
}

static struct sockaddr_in addr_of(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", ip);
		exit(2);
	}
	return a;
}

static void set_timeout(int fd, int ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* A socket of type bound to 0.0.0.0:port, listening if a stream; exits when it cannot. */
static int bound(int type, int port)
{
	int fd = socket(AF_INET, type, 0);
	struct sockaddr_in a = addr_of("0.0.0.0", port);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || (type == SOCK_STREAM && listen(fd, 4) != 0)) {
		printf("bind %d %s\n", port, errname(errno));
		exit(1);
	}
	return fd;
}

/* "kind.what" into the loop's key[] (kinds[k] is the kind of socket under test). */
#define KEY(what) (snprintf(key, sizeof(key), "%s.%s", kinds[k].name, what), key)

/* IP-level options of fresh TCP and UDP sockets: defaults, checks, truncation. */
static int cmd_ipopts(char **a)
{
	(void)a;
	const struct { const char *name; int type; } kinds[] = {
		{"tcp", SOCK_STREAM}, {"udp", SOCK_DGRAM}};
	for (unsigned k = 0; k < 2; k++) {
		int fd = socket(AF_INET, kinds[k].type, 0);
		char key[64];
		show_opt(KEY("ttl.default"), fd, IPPROTO_IP, IP_TTL);
		show_opt(KEY("tos.default"), fd, IPPROTO_IP, IP_TOS);
		show_opt(KEY("pktinfo.default"), fd, IPPROTO_IP, IP_PKTINFO);
		show_opt(KEY("recvttl.default"), fd, IPPROTO_IP, IP_RECVTTL);
		show_opt(KEY("recvtos.default"), fd, IPPROTO_IP, IP_RECVTOS);
		show_opt(KEY("recverr.default"), fd, IPPROTO_IP, IP_RECVERR);
		set_opt(KEY("ttl.set0"), fd, IPPROTO_IP, IP_TTL, 0, sizeof(int));
		set_opt(KEY("ttl.set256"), fd, IPPROTO_IP, IP_TTL, 256, sizeof(int));
		set_opt(KEY("ttl.setlen0"), fd, IPPROTO_IP, IP_TTL, 5, 0);
		set_opt(KEY("ttl.set200"), fd, IPPROTO_IP, IP_TTL, 200, sizeof(int));
		show_opt(KEY("ttl.after200"), fd, IPPROTO_IP, IP_TTL);
		unsigned char seven = 7;
		report(KEY("ttl.set1byte"), setsockopt(fd, IPPROTO_IP, IP_TTL, &seven, 1), 0);
		show_opt(KEY("ttl.after1byte"), fd, IPPROTO_IP, IP_TTL);
		set_opt(KEY("ttl.setminus1"), fd, IPPROTO_IP, IP_TTL, -1, sizeof(int));
		show_opt(KEY("ttl.afterminus1"), fd, IPPROTO_IP, IP_TTL);
		report(KEY("ttl.setnull"), setsockopt(fd, IPPROTO_IP, IP_TTL, NULL, 4), 0);
		set_opt(KEY("tos.set"), fd, IPPROTO_IP, IP_TOS, 0x1c3, sizeof(int));
		show_opt(KEY("tos.after"), fd, IPPROTO_IP, IP_TOS);
		long v;
		socklen_t len;
		int rc = get_int(fd, IPPROTO_IP, IP_TTL, 1, &v, &len);
		report(KEY("ttl.get1"), rc, v);
		report(KEY("ttl.get1.len"), rc, len);
		rc = get_int(fd, IPPROTO_IP, IP_TOS, 2, &v, &len);
		report(KEY("tos.get2"), rc, v);
		report(KEY("tos.get2.len"), rc, len);
		rc = get_int(fd, IPPROTO_IP, IP_TTL, 0, &v, &len);
		report(KEY("ttl.get0.len"), rc, len);
		rc = get_int(fd, IPPROTO_IP, IP_TTL, (socklen_t)-1, &v, &len);
		report(KEY("ttl.getneg"), rc, v);
		set_opt(KEY("pktinfo.set"), fd, IPPROTO_IP, IP_PKTINFO, 5, sizeof(int));
		show_opt(KEY("pktinfo.after"), fd, IPPROTO_IP, IP_PKTINFO);
		set_opt(KEY("recverr.set"), fd, IPPROTO_IP, IP_RECVERR, 1, sizeof(int));
		show_opt(KEY("recverr.after"), fd, IPPROTO_IP, IP_RECVERR);
		set_opt(KEY("recvtos.set"), fd, IPPROTO_IP, IP_RECVTOS, 1, sizeof(int));
		set_opt(KEY("recvtos.setlen0"), fd, IPPROTO_IP, IP_RECVTOS, 1, 0);
		show_opt(KEY("recvtos.afterlen0"), fd, IPPROTO_IP, IP_RECVTOS);
		show_opt(KEY("mtu_discover.default"), fd, IPPROTO_IP, IP_MTU_DISCOVER);
		set_opt(KEY("mtu_discover.set6"), fd, IPPROTO_IP, IP_MTU_DISCOVER, 6, sizeof(int));
		set_opt(KEY("mtu_discover.set_do"), fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO,
			sizeof(int));
		show_opt(KEY("mtu_discover.after"), fd, IPPROTO_IP, IP_MTU_DISCOVER);
		show_opt(KEY("bind_no_port.default"), fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT);
		set_opt(KEY("bind_no_port.set"), fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1, sizeof(int));
		show_opt(KEY("bind_no_port.after"), fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT);
		show_opt(KEY("unknown.get"), fd, IPPROTO_IP, 4242);
		set_opt(KEY("unknown.set"), fd, IPPROTO_IP, 4242, 1, sizeof(int));
		char buf[16];
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
		report(KEY("errqueue"), (int)recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT), 0);
		report(KEY("errqueue.blocking"), (int)recvmsg(fd, &m, MSG_ERRQUEUE), 0);
		close(fd);
	}
	return 0;
}

/* A UDP datagram "ttl TTL tos TOS" to ip:port with those IP_TTL and IP_TOS. */
static int cmd_udpsend(char **a)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	int ttl = atoi(a[2]), tos = (int)strtol(a[3], NULL, 0);
	set_opt("ttl", fd, IPPROTO_IP, IP_TTL, ttl, sizeof(int));
	set_opt("tos", fd, IPPROTO_IP, IP_TOS, tos, sizeof(int));
	struct sockaddr_in to = addr_of(a[0], atoi(a[1]));
	char msg[64];
	int n = snprintf(msg, sizeof(msg), "ttl %d tos %d", ttl, tos);
	report("sendto", (int)sendto(fd, msg, (size_t)n, 0, (struct sockaddr *)&to, sizeof(to)), n);
	close(fd);
	return 0;
}

/* BIRD's way: IP_TTL and IP_TOS on a TCP socket before connect, then a line sent. */
static int cmd_tcpconnect(char **a)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	set_opt("ttl", fd, IPPROTO_IP, IP_TTL, atoi(a[2]), sizeof(int));
	set_opt("tos", fd, IPPROTO_IP, IP_TOS, (int)strtol(a[3], NULL, 0), sizeof(int));
	struct sockaddr_in to = addr_of(a[0], atoi(a[1]));
	report("connect", connect(fd, (struct sockaddr *)&to, sizeof(to)), 0);
	show_opt("ttl.connected", fd, IPPROTO_IP, IP_TTL);
	show_opt("tos.connected", fd, IPPROTO_IP, IP_TOS);
	report("send", (int)send(fd, "hello\n", 6, 0), 6);
	char c;
	report("recv", (int)recv(fd, &c, 1, 0), 0); /* the peer closes */
	close(fd);
	return 0;
}

/* Receives one datagram on 0.0.0.0:port with IP_PKTINFO, IP_RECVTTL and IP_RECVTOS, and
 * prints what the ancillary data says; then once more with a control buffer too small. */
static int cmd_udprecv(char **a)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in any = addr_of("0.0.0.0", atoi(a[0]));
	report("bind", bind(fd, (struct sockaddr *)&any, sizeof(any)), 0);
	int on = 1;
	setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_RECVTTL, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	set_timeout(fd, 10000);
	printf("ready\n");
	fflush(stdout);
	for (int round = 0; round < 2; round++) {
		char buf[256], ctl[256];
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				   .msg_controllen = round == 0 ? sizeof(ctl) : CMSG_SPACE(sizeof(struct in_pktinfo)) + 4};
		ssize_t n = recvmsg(fd, &m, 0);
		const char *r = round == 0 ? "full" : "short";
		if (n < 0) {
			printf("%s.recvmsg %s\n", r, errname(errno));
			return 1;
		}
		buf[n] = '\0';
		printf("%s.data %s\n%s.ctrunc %d\n%s.controllen %zu\n", r, buf, r,
		       !!(m.msg_flags & MSG_CTRUNC), r, (size_t)m.msg_controllen);
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c != NULL; c = CMSG_NXTHDR(&m, c)) {
			if (c->cmsg_level != IPPROTO_IP) {
				printf("%s.cmsg level %d\n", r, c->cmsg_level);
				continue;
			}
			if (c->cmsg_type == IP_PKTINFO && c->cmsg_len == CMSG_LEN(sizeof(struct in_pktinfo))) {
				struct in_pktinfo pi;
				memcpy(&pi, CMSG_DATA(c), sizeof(pi));
				char sd[16], ad[16];
				inet_ntop(AF_INET, &pi.ipi_spec_dst, sd, sizeof(sd));
				inet_ntop(AF_INET, &pi.ipi_addr, ad, sizeof(ad));
				printf("%s.pktinfo ifindex %d spec_dst %s addr %s\n", r, pi.ipi_ifindex, sd, ad);
			} else if (c->cmsg_type == IP_TTL && c->cmsg_len == CMSG_LEN(sizeof(int))) {
				int t;
				memcpy(&t, CMSG_DATA(c), sizeof(t));
				printf("%s.ttl %d\n", r, t);
			} else if (c->cmsg_type == IP_TOS && c->cmsg_len == CMSG_LEN(1)) {
				printf("%s.tos %d\n", r, *CMSG_DATA(c));
			} else {
				printf("%s.cmsg type %d len %zu\n", r, c->cmsg_type, (size_t)c->cmsg_len);
			}
		}
		fflush(stdout);
	}
	close(fd);
	return 0;
}

/* A DHCP-like client bound to 0.0.0.0:cport: broadcasts to the server port without and
 * with SO_BROADCAST (limited, directed, connected), and with wait_reply set, prints the
 * broadcast answer and the address it was sent to. */
static int cmd_bcast(char **a)
{
	int sport = atoi(a[0]), cport = atoi(a[1]), wait_reply = atoi(a[3]);
	struct sockaddr_in all = addr_of("255.255.255.255", sport), net = addr_of(a[2], sport);
	struct sockaddr_in me = addr_of("0.0.0.0", cport);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	report("bind", bind(fd, (struct sockaddr *)&me, sizeof(me)), 0);
	report("limited.nobcast", (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&all, sizeof(all)), 1);
	report("directed.nobcast", (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&net, sizeof(net)), 1);
	report("connect.nobcast", connect(fd, (struct sockaddr *)&all, sizeof(all)), 0);
	show_opt("so_broadcast.default", fd, SOL_SOCKET, SO_BROADCAST);
	set_opt("so_broadcast.set", fd, SOL_SOCKET, SO_BROADCAST, 1, sizeof(int));
	show_opt("so_broadcast.after", fd, SOL_SOCKET, SO_BROADCAST);
	report("limited", (int)sendto(fd, "discover", 8, 0, (struct sockaddr *)&all, sizeof(all)), 8);
	if (wait_reply) {
		int on = 1;
		setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
		set_timeout(fd, 10000);
		char buf[64], ctl[64], to[16] = "?";
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				   .msg_controllen = sizeof(ctl)};
		ssize_t n = recvmsg(fd, &m, 0);
		if (n < 0) {
			printf("reply %s\n", errname(errno));
			return 1;
		}
		buf[n] = '\0';
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c != NULL && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			inet_ntop(AF_INET, &pi.ipi_addr, to, sizeof(to));
		}
		printf("reply %s to %s\n", buf, to);
	}
	report("directed", (int)sendto(fd, "request", 7, 0, (struct sockaddr *)&net, sizeof(net)), 7);
	report("connect", connect(fd, (struct sockaddr *)&all, sizeof(all)), 0);
	report("send.connected", (int)send(fd, "connected", 9, 0), 9);
	close(fd);
	return 0;
}

/* A socket bound to 0.0.0.0:port broadcasts to port (limited, then directed to subnet_bcast)
 * and prints what it hears of its own broadcasts. */
static int cmd_bcastself(char **a)
{
	int port = atoi(a[0]), on = 1;
	struct sockaddr_in all = addr_of("255.255.255.255", port), net = addr_of(a[1], port);
	int fd = bound(SOCK_DGRAM, port);
	setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof(on));
	set_timeout(fd, 500);
	report("limited", (int)sendto(fd, "limited", 7, 0, (struct sockaddr *)&all, sizeof(all)), 7);
	report("directed", (int)sendto(fd, "directed", 8, 0, (struct sockaddr *)&net, sizeof(net)), 8);
	for (int i = 0; i < 3; i++) {
		char buf[64], ctl[64], to[16] = "?";
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
				   .msg_controllen = sizeof(ctl)};
		ssize_t n = recvmsg(fd, &m, 0);
		if (n < 0) {
			printf("heard %s\n", errname(errno));
			continue;
		}
		buf[n] = '\0';
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		if (c != NULL && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;
			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			inet_ntop(AF_INET, &pi.ipi_addr, to, sizeof(to));
		}
		printf("heard %s to %s\n", buf, to);
	}
	close(fd);
	return 0;
}

/* What a socket says it is: fstat's file type and SO_TYPE/SO_DOMAIN/SO_PROTOCOL/SO_ACCEPTCONN,
 * for a stream, a datagram and a listening socket. */
static int cmd_fstat(char **a)
{
	(void)a;
	const struct { const char *name; int type, proto; bool listen; } kinds[] = {
		{"tcp", SOCK_STREAM, 0, false}, {"udp", SOCK_DGRAM, IPPROTO_UDP, false},
		{"listen", SOCK_STREAM | SOCK_NONBLOCK, IPPROTO_TCP, true}};
	for (unsigned k = 0; k < 3; k++) {
		int fd = socket(AF_INET, kinds[k].type, kinds[k].proto);
		char key[64];
		if (kinds[k].listen)
			report(KEY("listen"), listen(fd, 4), 0);
		struct stat sb;
		int rc = fstat(fd, &sb);
		report(KEY("fstat.issock"), rc, S_ISSOCK(sb.st_mode));
		report(KEY("fstat.isfifo"), rc, S_ISFIFO(sb.st_mode));
		show_opt(KEY("so_type"), fd, SOL_SOCKET, SO_TYPE);
		show_opt(KEY("so_domain"), fd, SOL_SOCKET, SO_DOMAIN);
		show_opt(KEY("so_protocol"), fd, SOL_SOCKET, SO_PROTOCOL);
		show_opt(KEY("so_acceptconn"), fd, SOL_SOCKET, SO_ACCEPTCONN);
		int v;
		report(KEY("so_type.nulllen"), getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, NULL), 0);
		close(fd);
	}
	return 0;
}

static int max4(int a, int b, int c, int d)
{
	int m = a > b ? a : b;
	m = m > c ? m : c;
	return m > d ? m : d;
}

/* close_range and closefrom over stack sockets (a listener and a bound UDP socket on port),
 * a pipe and a socket not bound yet: marked close-on-exec, refused with bad arguments, closed
 * (the port free again on the stack). */
static int cmd_closerange(char **a)
{
	int port = atoi(a[0]);
	int l = bound(SOCK_STREAM, port), u = bound(SOCK_DGRAM, port), t = socket(AF_INET, SOCK_STREAM, 0);
	int p[2];
	if (pipe(p) != 0)
		return 1;
	int lo = l, hi = max4(l, u, t, p[1]);
	lo = u < lo ? u : lo;
	lo = t < lo ? t : lo;
	lo = p[0] < lo ? p[0] : lo;
	report("cloexec", close_range((unsigned)lo, (unsigned)hi, CLOSE_RANGE_CLOEXEC), 0);
	report("cloexec.listener", fcntl(l, F_GETFD), fcntl(l, F_GETFD));
	report("cloexec.udp", fcntl(u, F_GETFD), fcntl(u, F_GETFD));
	report("cloexec.pipe", fcntl(p[0], F_GETFD), fcntl(p[0], F_GETFD));
	report("reversed", close_range((unsigned)hi, (unsigned)lo, 0), 0);
	report("badflags", close_range((unsigned)lo, (unsigned)hi, 0x40), 0);
	report("after_refused.listener", fcntl(l, F_GETFD), fcntl(l, F_GETFD));
	report("close", close_range((unsigned)lo, (unsigned)hi, 0), 0);
	report("closed.listener", fcntl(l, F_GETFD), 0);
	report("closed.udp", fcntl(u, F_GETFD), 0);
	report("closed.unbound", fcntl(t, F_GETFD), 0);
	report("closed.pipe", fcntl(p[1], F_GETFD), 0);
	l = bound(SOCK_STREAM, port);
	u = bound(SOCK_DGRAM, port);
	printf("port free again\n");
	closefrom(l < u ? l : u);
	report("closefrom.listener", fcntl(l, F_GETFD), 0);
	report("closefrom.udp", fcntl(u, F_GETFD), 0);
	l = bound(SOCK_STREAM, port);
	u = bound(SOCK_DGRAM, port);
	printf("port free again\n");
	close(l);
	close(u);
	return 0;
}

static void set_iov(struct mmsghdr *m, struct iovec *iov, void *buf, size_t len,
		    struct sockaddr_in *to)
{
	memset(m, 0, sizeof(*m));
	iov->iov_base = buf;
	iov->iov_len = len;
	m->msg_hdr.msg_iov = iov;
	m->msg_hdr.msg_iovlen = 1;
	if (to != NULL) {
		m->msg_hdr.msg_name = to;
		m->msg_hdr.msg_namelen = sizeof(*to);
	}
}

/* sendmmsg/recvmmsg between two UDP sockets of this process at self_ip: counts, lengths,
 * partial batches, MSG_WAITFORONE, timeouts, errors. */
static int cmd_mmsg(char **a)
{
	int port = atoi(a[1]);
	int s = bound(SOCK_DGRAM, port), r = bound(SOCK_DGRAM, port + 1);
	struct sockaddr_in to = addr_of(a[0], port + 1), bad = addr_of(a[0], 0);
	char out[3][8] = {"a", "bb", "ccc"}, in[8][16];
	struct mmsghdr m[8];
	struct iovec iov[8];
	for (int i = 0; i < 3; i++)
		set_iov(&m[i], &iov[i], out[i], strlen(out[i]), &to);
	int n = sendmmsg(s, m, 3, 0);
	report("send3", n, n);
	report("send3.len2", n, m[2].msg_len);
	for (int i = 0; i < 8; i++)
		set_iov(&m[i], &iov[i], in[i], sizeof(in[i]), NULL);
	n = recvmmsg(r, m, 3, 0, NULL);
	report("recv3", n, n);
	for (int i = 0; i < n; i++)
		printf("recv3.%d %u %.*s\n", i, m[i].msg_len, (int)m[i].msg_len, in[i]);
	report("recv.empty", recvmmsg(r, m, 8, MSG_DONTWAIT, NULL), 0);
	report("recv.vlen0", recvmmsg(r, m, 0, MSG_DONTWAIT, NULL), 0);
	struct timespec badts = {0, 2000000000};
	report("recv.badtimeout", recvmmsg(r, m, 8, MSG_DONTWAIT, &badts), 0);
	/* The second message has port 0: one sent, then the error is not reported. */
	set_iov(&m[0], &iov[0], out[0], 1, &to);
	set_iov(&m[1], &iov[1], out[1], 2, &bad);
	set_iov(&m[2], &iov[2], out[2], 3, &to);
	n = sendmmsg(s, m, 3, 0);
	report("send.second_bad", n, n);
	n = sendmmsg(s, &m[1], 2, 0);
	report("send.first_bad", n, n);
	set_iov(&m[0], &iov[0], out[1], 2, &to);
	report("send.one", sendmmsg(s, m, 1, 0), 1);
	struct timespec nap = {0, 100 * 1000000};
	nanosleep(&nap, NULL);
	for (int i = 0; i < 8; i++)
		set_iov(&m[i], &iov[i], in[i], sizeof(in[i]), NULL);
	n = recvmmsg(r, m, 8, MSG_WAITFORONE, NULL);
	report("recv.waitforone", n, n);
	for (int i = 0; i < n; i++)
		printf("recv.waitforone.%d %u %.*s\n", i, m[i].msg_len, (int)m[i].msg_len, in[i]);
	report("send.again", sendmmsg(s, m + 7, 0, 0), 0);
	set_iov(&m[0], &iov[0], out[2], 3, &to);
	sendmmsg(s, m, 1, 0);
	nanosleep(&nap, NULL);
	struct timespec ts = {2, 0};
	set_iov(&m[0], &iov[0], in[0], sizeof(in[0]), NULL);
	set_iov(&m[1], &iov[1], in[1], sizeof(in[1]), NULL);
	n = recvmmsg(r, m, 2, MSG_DONTWAIT, &ts);
	report("recv.timeout", n, n);
	printf("recv.timeout.left_ok %d\n", ts.tv_sec == 1 || (ts.tv_sec == 2 && ts.tv_nsec == 0) ? 1 : ts.tv_sec < 2);
	close(s);
	close(r);
	return 0;
}

static void print_sin(const char *key, int rc, const struct sockaddr *sa)
{
	if (rc < 0) {
		report(key, rc, 0);
		return;
	}
	struct sockaddr_in sin;
	memcpy(&sin, sa, sizeof(sin));
	char b[16];
	inet_ntop(AF_INET, &sin.sin_addr, b, sizeof(b));
	printf("%s %d %s\n", key, sin.sin_family, b);
}

/* The interface ioctls on a UDP socket: the address list, then everything about interface
 * name, and what an unknown name or index gets. */
static int cmd_ifioctl(char **a)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifconf ic = {.ifc_len = 0, .ifc_buf = NULL};
	int rc = ioctl(fd, SIOCGIFCONF, &ic);
	report("conf.count", rc, ic.ifc_len / (long)sizeof(struct ifreq));
	struct ifreq list[32];
	ic = (struct ifconf){.ifc_len = 10, .ifc_req = list};
	rc = ioctl(fd, SIOCGIFCONF, &ic);
	report("conf.short", rc, ic.ifc_len);
	ic = (struct ifconf){.ifc_len = sizeof(list), .ifc_req = list};
	rc = ioctl(fd, SIOCGIFCONF, &ic);
	for (int i = 0; rc == 0 && i < ic.ifc_len / (int)sizeof(struct ifreq); i++) {
		char key[64];
		snprintf(key, sizeof(key), "conf %.16s", list[i].ifr_name);
		print_sin(key, 0, &list[i].ifr_addr);
	}
	for (int unknown = 0; unknown < 2; unknown++) {
		const char *p = unknown ? "unknown." : "";
		char key[64];
#define K(s) (snprintf(key, sizeof(key), "%s%s", p, s), key)
		struct ifreq r;
		memset(&r, 0, sizeof(r));
		snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", unknown ? "nosuch0" : a[0]);
		rc = ioctl(fd, SIOCGIFINDEX, &r);
		int index = r.ifr_ifindex;
		report(K("index.ok"), rc, rc == 0 && index > 0);
		memset(&r, 0, sizeof(r));
		r.ifr_ifindex = unknown ? 99999 : index;
		rc = ioctl(fd, SIOCGIFNAME, &r);
		report(K("name.roundtrip"), rc, rc == 0 && strcmp(r.ifr_name, a[0]) == 0);
		snprintf(r.ifr_name, sizeof(r.ifr_name), "%s", unknown ? "nosuch0" : a[0]);
		rc = ioctl(fd, SIOCGIFHWADDR, &r);
		if (rc == 0) {
			unsigned char *m = (unsigned char *)r.ifr_hwaddr.sa_data;
			printf("%s %d %02x:%02x:%02x:%02x:%02x:%02x\n", K("hwaddr"),
			       r.ifr_hwaddr.sa_family, m[0], m[1], m[2], m[3], m[4], m[5]);
		} else {
			report(K("hwaddr"), rc, 0);
		}
		rc = ioctl(fd, SIOCGIFADDR, &r);
		print_sin(K("addr"), rc, &r.ifr_addr);
		rc = ioctl(fd, SIOCGIFNETMASK, &r);
		print_sin(K("netmask"), rc, &r.ifr_netmask);
		rc = ioctl(fd, SIOCGIFBRDADDR, &r);
		print_sin(K("brdaddr"), rc, &r.ifr_broadaddr);
		rc = ioctl(fd, SIOCGIFFLAGS, &r);
		report(K("flags.up_broadcast_running"), rc,
		       (r.ifr_flags & (IFF_UP | IFF_BROADCAST | IFF_RUNNING)) ==
		       (IFF_UP | IFF_BROADCAST | IFF_RUNNING));
		rc = ioctl(fd, SIOCGIFMTU, &r);
		report(K("mtu"), rc, r.ifr_mtu);
#undef K
	}
	report("conf.null", ioctl(fd, SIOCGIFCONF, NULL), 0);
	close(fd);
	return 0;
}

/* How many addresses SIOCGIFCONF lists, asked once, then again after each line on stdin: a
 * long-lived process must see the stack's changes. */
static int cmd_ifwatch(char **a)
{
	(void)a;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char line[64];
	do {
		struct ifconf ic = {.ifc_len = 0, .ifc_buf = NULL};
		int rc = ioctl(fd, SIOCGIFCONF, &ic);
		report("conf.count", rc, ic.ifc_len / (long)sizeof(struct ifreq));
	} while (fgets(line, sizeof(line), stdin) != NULL);
	close(fd);
	return 0;
}

/* One datagram "key" to `to` with the control messages in ctl[0..len): prints the result. */
static void send_ctl(int fd, const char *key, const struct sockaddr_in *to, const void *ctl,
		     size_t len)
{
	_Alignas(struct cmsghdr) unsigned char buf[256];
	memcpy(buf, ctl, len);
	struct iovec iov = {(void *)key, strlen(key)};
	struct msghdr m = {.msg_name = (void *)to, .msg_namelen = sizeof(*to), .msg_iov = &iov,
			   .msg_iovlen = 1, .msg_control = len ? buf : NULL, .msg_controllen = len};
	report(key, (int)sendmsg(fd, &m, 0), (long)strlen(key));
}

/* A control buffer with one message of level/type and data. */
static size_t one_cmsg(unsigned char *buf, int level, int type, const void *data, size_t len)
{
	struct cmsghdr h = {.cmsg_len = CMSG_LEN(len), .cmsg_level = level, .cmsg_type = type};
	memset(buf, 0, CMSG_SPACE(len));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + CMSG_LEN(0), data, len);
	return CMSG_SPACE(len);
}

/* sendmsg's IP-level control messages to ip:port: per-datagram IP_TTL and IP_TOS, IP_PKTINFO
 * choosing the source src, then what Linux refuses. */
static int cmd_sendcmsg(char **a)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = addr_of(a[0], atoi(a[1])), src = addr_of(a[2], 0);
	_Alignas(struct cmsghdr) unsigned char buf[256];
	int ttl = 9;
	unsigned char tos = 0x10;
	size_t n = one_cmsg(buf, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	n += one_cmsg(buf + n, IPPROTO_IP, IP_TOS, &tos, 1);
	struct in_pktinfo pi = {.ipi_spec_dst = src.sin_addr};
	n += one_cmsg(buf + n, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	send_ctl(fd, "ttl9.tos16.from_src", &to, buf, n);
	send_ctl(fd, "plain", &to, NULL, 0);
	ttl = 0;
	send_ctl(fd, "bad.ttl0", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)));
	send_ctl(fd, "bad.ttl_short", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_TTL, &ttl, 2));
	int big = 256;
	send_ctl(fd, "bad.tos256", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_TOS, &big, sizeof(big)));
	send_ctl(fd, "bad.pktinfo_len", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_PKTINFO, &pi, 8));
	send_ctl(fd, "bad.ip_type", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_RECVERR, &ttl, sizeof(ttl)));
	struct in_pktinfo nodev = {.ipi_ifindex = 99999};
	send_ctl(fd, "bad.ifindex", &to, buf, one_cmsg(buf, IPPROTO_IP, IP_PKTINFO, &nodev, sizeof(nodev)));
	struct in_pktinfo foreign = {.ipi_spec_dst = addr_of("192.0.2.7", 0).sin_addr};
	send_ctl(fd, "bad.foreign_src", &to, buf,
		 one_cmsg(buf, IPPROTO_IP, IP_PKTINFO, &foreign, sizeof(foreign)));
	n = one_cmsg(buf, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	((struct cmsghdr *)buf)->cmsg_len = n + 1;
	send_ctl(fd, "bad.cmsg_len", &to, buf, n);
	send_ctl(fd, "other_level_skipped", &to, buf, one_cmsg(buf, IPPROTO_TCP, 1, &ttl, sizeof(ttl)));
	close(fd);
	return 0;
}

/* ---- bad pointers (EFAULT) ---- */

static unsigned char *mapped(size_t len, int prot)
{
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	mprotect(p, len, prot);
	return p;
}

/* Reads what is left on fd now: its count, the bytes into buf. */
static ssize_t drain(int fd, char *buf, size_t len)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	ssize_t n = poll(&p, 1, 500) == 1 ? recv(fd, buf, len, MSG_DONTWAIT) : 0;
	return n < 0 ? 0 : n;
}

/* A stream's bad buffers: EFAULT when nothing could be copied; a partial fault moves no byte
 * twice and loses none (Linux counts whole skbs, the stack whole pages). */
static void efault_stream(int c, int s, void *bad, unsigned char *ro, unsigned char *two, long ps)
{
	char buf[64];
	report("send.null", (int)send(c, NULL, 10, 0), 0);
	report("send.unmapped", (int)send(c, bad, 10, 0), 0);
	report("send.null0", (int)send(c, NULL, 0, 0), 0);
	report("write.unmapped", (int)write(c, bad, 10), 0);
	report("writev.badiov", (int)writev(c, bad, 2), 0);
	struct sockaddr_in any = addr_of("0.0.0.0", 0);
	report("sendto.badaddr", (int)sendto(c, "x", 1, 0, bad, sizeof(any)), 0);
	report("sendmsg.badmsg", (int)sendmsg(c, bad, 0), 0);
	struct iovec iov[2] = {{.iov_base = "ab", .iov_len = 2}, {.iov_base = bad, .iov_len = 10}};
	struct msghdr m = {.msg_iov = bad, .msg_iovlen = 1};
	report("sendmsg.badiov", (int)sendmsg(c, &m, 0), 0);
	m = (struct msghdr){.msg_iov = iov, .msg_iovlen = 1, .msg_control = bad, .msg_controllen = 32};
	report("sendmsg.badcontrol", (int)sendmsg(c, &m, 0), 0);
	ssize_t w = writev(c, iov, 2);
	ssize_t got = drain(s, buf, sizeof(buf));
	printf("writev.partial.consistent %d\n",
	       (w < 0 && errno == EFAULT && got == 0) || (w > 0 && w <= 2 && got == w && memcmp(buf, "ab", (size_t)w) == 0));
	send(c, "0123456789", 10, 0);
	struct pollfd p = {.fd = s, .events = POLLIN};
	poll(&p, 1, 2000);
	report("recv.null", (int)recv(s, NULL, 10, 0), 0);
	report("recv.null0", (int)recv(s, NULL, 0, 0), 0);
	report("recv.readonly", (int)recv(s, ro, 10, 0), 0);
	report("read.unmapped", (int)read(s, bad, 10), 0);
	report("readv.badiov", (int)readv(s, bad, 1), 0);
	report("recvmsg.badmsg", (int)recvmsg(s, bad, 0), 0);
	m = (struct msghdr){.msg_iov = bad, .msg_iovlen = 1};
	report("recvmsg.badiov", (int)recvmsg(s, &m, 0), 0);
	socklen_t alen = sizeof(any);
	ssize_t n = recvfrom(s, buf, 10, MSG_PEEK, bad, &alen);
	report("recvfrom.badaddr.stream", (int)n, n);
	report("recvfrom.badlen", (int)recvfrom(s, buf, 10, MSG_PEEK, (struct sockaddr *)&any, bad), 0);
	n = recv(s, two + ps - 4, 10, 0);
	got = drain(s, buf, sizeof(buf));
	size_t before = n > 0 ? (size_t)n : 0;
	printf("recv.partial.consistent %d\n",
	       (n > 0 || errno == EFAULT) && before + (size_t)got == 10 &&
	       memcmp(two + ps - 4, "0123", before) == 0 && memcmp(buf, "0123456789" + before, (size_t)got) == 0);
}

static void efault_opts_names(int c, int s, void *bad, unsigned char *ro, int port)
{
	int one = 1;
	socklen_t len = sizeof(int), zero = 0;
	report("setsockopt.bad", setsockopt(c, SOL_SOCKET, SO_RCVBUF, bad, sizeof(int)), 0);
	report("setsockopt.null", setsockopt(c, SOL_SOCKET, SO_RCVBUF, NULL, sizeof(int)), 0);
	report("setsockopt.tcp.bad", setsockopt(c, IPPROTO_TCP, TCP_NODELAY, bad, sizeof(int)), 0);
	report("setsockopt.ip.bad", setsockopt(c, IPPROTO_IP, IP_TTL, bad, sizeof(int)), 0);
	report("setsockopt.rcvtimeo.bad", setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, bad, sizeof(struct timeval)), 0);
	report("getsockopt.badval", getsockopt(c, SOL_SOCKET, SO_TYPE, bad, &len), 0);
	report("getsockopt.badlen", getsockopt(c, SOL_SOCKET, SO_TYPE, &one, bad), 0);
	report("getsockopt.null0", getsockopt(c, SOL_SOCKET, SO_TYPE, NULL, &zero), zero);
	report("getsockopt.tcp.readonly", getsockopt(c, IPPROTO_TCP, TCP_NODELAY, ro, &len), 0);
	report("getsockopt.ip.bad", getsockopt(c, IPPROTO_IP, IP_TTL, bad, &len), 0);
	struct sockaddr_in sin;
	socklen_t slen = sizeof(sin);
	report("getsockname.badaddr", getsockname(c, bad, &slen), 0);
	report("getsockname.badlen", getsockname(c, (struct sockaddr *)&sin, bad), 0);
	report("getpeername.badaddr", getpeername(s, bad, &slen), 0);
	zero = 0;
	report("getsockname.null0", getsockname(c, NULL, &zero), zero);
	int b = socket(AF_INET, SOCK_STREAM, 0);
	report("bind.badaddr", bind(b, bad, sizeof(sin)), 0);
	report("bind.nulladdr", bind(b, NULL, sizeof(sin)), 0);
	report("bind.toolong", bind(b, bad, 200), 0);
	report("connect.badaddr", connect(b, bad, sizeof(sin)), 0);
	close(b);
	report("ioctl.fionread.bad", ioctl(s, FIONREAD, bad), 0);
	report("ioctl.fionread.readonly", ioctl(s, FIONREAD, ro), 0);
	report("ioctl.fionbio.bad", ioctl(c, FIONBIO, bad), 0);
	report("ioctl.ifflags.bad", ioctl(c, SIOCGIFFLAGS, bad), 0);
	report("ioctl.ifconf.bad", ioctl(c, SIOCGIFCONF, bad), 0);
	struct ifconf ic = {.ifc_len = 400, .ifc_buf = bad};
	report("ioctl.ifconf.badbuf", ioctl(c, SIOCGIFCONF, &ic), 0);
	(void)port;
}

static void efault_wait(int l, int s, void *bad, unsigned char *ro, long ps)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLOUT};
	report("epoll_ctl.badevent", epoll_ctl(ep, EPOLL_CTL_ADD, s, bad), 0);
	epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);
	report("epoll_wait.bad", epoll_wait(ep, bad, 4, 0), 0);
	report("epoll_wait.readonly", epoll_wait(ep, (void *)ro, 4, 0), 0);
	int idle = epoll_create1(0);
	ev.events = EPOLLIN;
	epoll_ctl(idle, EPOLL_CTL_ADD, l, &ev);
	report("epoll_wait.bad.none_ready", epoll_wait(idle, bad, 4, 0), 0);
	close(ep);
	close(idle);
	unsigned char *fds = mapped((size_t)ps, PROT_READ | PROT_WRITE);
	struct pollfd p = {.fd = s, .events = POLLOUT};
	memcpy(fds, &p, sizeof(p));
	mprotect(fds, (size_t)ps, PROT_READ);
	report("poll.readonly", poll((struct pollfd *)fds, 1, 0), 0);
	report("poll.bad", poll(bad, 1, 0), 0);
	report("poll.null0", poll(NULL, 0, 0), 0);
	struct timeval tv = {0, 0};
	report("select.bad", select(s + 1, bad, NULL, NULL, &tv), 0);
}

static void efault_dgram(const char *ip, int port, void *bad)
{
	int u1 = bound(SOCK_DGRAM, port + 1), u2 = bound(SOCK_DGRAM, port + 2);
	struct sockaddr_in to = addr_of(ip, port + 2);
	char buf[64];
	set_timeout(u2, 500);
	report("udp.sendto.badbuf", (int)sendto(u1, bad, 5, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	report("udp.sendto.badaddr", (int)sendto(u1, "hello", 5, 0, bad, sizeof(to)), 0);
	report("udp.sendto", (int)sendto(u1, "hello", 5, 0, (struct sockaddr *)&to, sizeof(to)), 5);
	report("udp.recv.badbuf", (int)recv(u2, bad, 5, 0), 0);
	report("udp.recv.after_fault", (int)recv(u2, buf, sizeof(buf), MSG_DONTWAIT), 0);
	sendto(u1, "again", 5, 0, (struct sockaddr *)&to, sizeof(to));
	socklen_t alen = sizeof(to);
	report("udp.recvfrom.badaddr", (int)recvfrom(u2, buf, sizeof(buf), 0, bad, &alen), 0);
	report("udp.recv.after_badaddr", (int)recv(u2, buf, sizeof(buf), MSG_DONTWAIT), 0);
	int one = 1;
	setsockopt(u2, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
	sendto(u1, "cmsg", 4, 0, (struct sockaddr *)&to, sizeof(to));
	struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = bad, .msg_controllen = 64};
	int n = (int)recvmsg(u2, &m, 0);
	printf("udp.recvmsg.badcontrol %d controllen %zu flags %d\n", n, (size_t)m.msg_controllen, m.msg_flags);
	report("udp.sendmmsg.bad", sendmmsg(u1, bad, 2, 0), 0);
	report("udp.recvmmsg.bad", recvmmsg(u2, bad, 2, MSG_DONTWAIT, NULL), 0);
	struct mmsghdr mm = {.msg_hdr = {.msg_iov = &iov, .msg_iovlen = 1}};
	report("udp.recvmmsg.badtimeout", recvmmsg(u2, &mm, 1, MSG_DONTWAIT, bad), 0);
	close(u1);
	close(u2);
}

/* Every call with bad pointers: SELF_IP PORT (PORT..PORT+2 are used). */
static int cmd_efault(char **a)
{
	int port = atoi(a[1]);
	long ps = sysconf(_SC_PAGESIZE);
	void *bad = mapped((size_t)ps, PROT_NONE);
	unsigned char *ro = mapped((size_t)ps, PROT_READ), *two = mapped(2 * (size_t)ps, PROT_READ | PROT_WRITE);
	mprotect(two + ps, (size_t)ps, PROT_NONE);
	struct sockaddr_in self = addr_of(a[0], port);
	int l = bound(SOCK_STREAM, port), c = socket(AF_INET, SOCK_STREAM, 0);
	report("connect", connect(c, (struct sockaddr *)&self, sizeof(self)), 0);
	int s = accept(l, NULL, NULL);
	efault_stream(c, s, bad, ro, two, ps);
	efault_opts_names(c, s, bad, ro, port);
	efault_wait(l, s, bad, ro, ps);
	/* An address accept cannot write costs the connection, on Linux too. */
	int c2 = socket(AF_INET, SOCK_STREAM, 0);
	connect(c2, (struct sockaddr *)&self, sizeof(self));
	socklen_t alen = sizeof(self);
	report("accept.badaddr", accept(l, bad, &alen), 0);
	set_timeout(c2, 2000);
	char buf[8];
	report("accept.badaddr.peer_reads", (int)recv(c2, buf, sizeof(buf), 0), 0);
	int c3 = socket(AF_INET, SOCK_STREAM, 0);
	connect(c3, (struct sockaddr *)&self, sizeof(self));
	report("accept.badlen", accept(l, (struct sockaddr *)&self, bad), 0);
	close(c3);
	close(c2);
	close(s);
	close(c);
	close(l);
	efault_dgram(a[0], port, bad);
	return 0;
}

/* ---- a program's own SIGSEGV handler ---- */

static volatile sig_atomic_t h_calls, h_sig, h_code, h_addr_ok;
static unsigned char *volatile h_page;

static void own_handler(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	h_calls++;
	h_sig = sig;
	h_code = si->si_code;
	h_addr_ok = (unsigned char *)si->si_addr == h_page + 3;
	mprotect(h_page, 4096, PROT_READ | PROT_WRITE);
}

static void plain_handler(int sig)
{
	h_calls++;
	h_sig = sig;
	mprotect(h_page, 4096, PROT_READ | PROT_WRITE);
}

static void fault_once(void)
{
	mprotect(h_page, 4096, PROT_READ);
	*(volatile unsigned char *)(h_page + 3) = 1;
}

static const char *argv0; /* this program, which segv runs again (exec) as sigign */

/* Its own handlers see its faults as on the kernel, a bad pointer to a socket call is not a
 * fault of its, and an unhandled fault kills with SIGSEGV: ARGV0 segv SELF_IP PORT (ARGV0
 * runs "sigign" after an exec). */
static int cmd_segv(char **a)
{
	int s = bound(SOCK_DGRAM, atoi(a[1])); /* the stack's, under the shim */
	struct sockaddr_in self = addr_of(a[0], atoi(a[1]));
	connect(s, (struct sockaddr *)&self, sizeof(self));
	send(s, "x", 1, 0);
	set_timeout(s, 2000);
	h_page = mapped(4096, PROT_READ | PROT_WRITE);
	struct sigaction act = {.sa_sigaction = own_handler, .sa_flags = SA_SIGINFO}, old;
	sigemptyset(&act.sa_mask);
	int rc = sigaction(SIGSEGV, &act, &old);
	report("sigaction", rc, old.sa_handler == SIG_DFL);
	fault_once();
	printf("fault.calls %d sig %d code %d addr_ok %d\n", (int)h_calls, (int)h_sig, (int)h_code, (int)h_addr_ok);
	report("recv.badbuf", (int)recv(s, (void *)8, 16, 0), h_calls);
	report("send.badbuf", (int)send(s, (void *)8, 16, 0), h_calls);
	printf("handler.calls_after_efault %d\n", (int)h_calls);
	sigaction(SIGSEGV, NULL, &old);
	printf("oldact.is_own %d\n", old.sa_sigaction == own_handler && (old.sa_flags & SA_SIGINFO) != 0);
	sighandler_t prev = signal(SIGSEGV, plain_handler);
	printf("signal.prev_is_own %d\n", (void *)prev == (void *)own_handler);
	fault_once();
	printf("plain.calls %d sig %d\n", (int)h_calls, (int)h_sig);
	act.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigaction(SIGSEGV, &act, NULL);
	fault_once();
	sigaction(SIGSEGV, NULL, &old);
	printf("resethand.calls %d now_default %d\n", (int)h_calls, old.sa_handler == SIG_DFL);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		fault_once(); /* SIG_DFL after SA_RESETHAND */
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	printf("child.termsig %d\n", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	signal(SIGSEGV, SIG_IGN);
	pid = fork();
	if (pid == 0) {
		execl(argv0, argv0, "sigign", (char *)NULL);
		_exit(3);
	}
	waitpid(pid, &st, 0);
	close(s);
	return 0;
}

static int cmd_sigign(char **a)
{
	(void)a;
	struct sigaction old;
	sigaction(SIGSEGV, NULL, &old);
	printf("exec.sigsegv_ignored %d\n", old.sa_handler == SIG_IGN);
	return 0;
}

static const struct app_cmd cmds[] = {
	{"ipopts", 0, cmd_ipopts},
	{"efault", 2, cmd_efault},
	{"segv", 2, cmd_segv},
	{"sigign", 0, cmd_sigign},
	{"fstat", 0, cmd_fstat},
	{"closerange", 1, cmd_closerange},
	{"mmsg", 2, cmd_mmsg},
	{"ifioctl", 1, cmd_ifioctl},
	{"bcastself", 2, cmd_bcastself},
	{"ifwatch", 0, cmd_ifwatch},
	{"sendcmsg", 3, cmd_sendcmsg},
	{"udpsend", 4, cmd_udpsend},
	{"tcpconnect", 4, cmd_tcpconnect},
	{"udprecv", 1, cmd_udprecv},
	{"bcast", 4, cmd_bcast},
};

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	argv0 = argv[0];
	return app_cmd_run(cmds, sizeof(cmds) / sizeof(cmds[0]), argc, argv,
			   "preload_surface ipopts | fstat | closerange PORT | "
			   "mmsg SELF_IP PORT | efault SELF_IP PORT | segv SELF_IP PORT | "
			   "ifioctl IFNAME | ifwatch | sendcmsg IP PORT SRC | udpsend IP PORT TTL TOS | "
			   "tcpconnect IP PORT TTL TOS | udprecv PORT | "
			   "bcast SPORT CPORT SUBNET_BCAST WAIT_REPLY | bcastself PORT SUBNET_BCAST");
}
