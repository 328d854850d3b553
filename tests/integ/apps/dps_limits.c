/* dps_limits: applications on libdpstack that run into the daemon's limits, for
 * tests/integ/test_limits.py. Each prints one fact per line and bounds every wait.
 *
 *   open tcp-listen|udp PORT N   opens up to N sockets on ports PORT.. (stops at the first
 *                                refusal: "refused ERRNO"), prints "opened K" and "ready",
 *                                then on a stdin line closes them ("closed K"); exits at EOF
 *   udp-blast ADDR PORT SNDBUF   sends 512-byte datagrams through a SNDBUF-byte send FIFO
 *                                (blocking: as fast as the worker takes them) until stdin
 *                                ends; prints "blasting" once the first went
 *   udp-fill-close ADDR PORT     sends datagram 0 to ADDR:PORT ("ready"), then on a stdin
 *                                line queues datagrams 1, 2, ... (each 64 bytes, its number
 *                                in the first 4, network order) without waiting until the
 *                                send FIFO is full, prints "queued K" (K in all, datagram 0
 *                                included), closes the socket and exits
 *   ping-pong ADDR PORT N        N one-byte round trips to a TCP echo server ("done N")
 *   hold ADDR PORT N             connects up to N TCP connections to an echo server (stops
 *                                at the first refusal: "refused ERRNO"), prints "opened K",
 *                                then sends 4 bytes on each and reads them back ("echoed K"
 *                                where K is those that came back whole) and "ready"; a stdin
 *                                line closes them ("closed K"); exits at EOF. The library
 *                                raises RLIMIT_NOFILE to its hard limit (every socket holds a
 *                                descriptor)
 *   late-call PORT               attaches ("attached"), then for each stdin line "bind" binds
 *                                a new TCP socket to the next port from PORT ("bind ERRNO",
 *                                0 when it worked), for "listen" listens on it ("listen
 *                                ERRNO")
 *   flood PORT N                 binds a UDP socket to PORT ("ready"), then for each stdin
 *                                line sets SO_BROADCAST on it N times, each a command on
 *                                the ring to its worker, without an answer to wait for:
 *                                "flood 0", or "flood ERRNO after K" at the first failure
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "app_cmd.h"

#define IO_TIMEOUT_S 30

static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static const char *errname(int e)
{
	const char *n = e == 0 ? "0" : strerrorname_np(e);
	return n != NULL ? n : "unknown";
}

static struct sockaddr_in addr_of(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (ip != NULL)
		inet_pton(AF_INET, ip, &a.sin_addr);
	return a;
}

static bool stdin_line(void)
{
	char line[64];
	return fgets(line, sizeof(line), stdin) != NULL;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	dps_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	dps_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* One socket of kind on port: its descriptor, or -errno. */
static int open_one(bool udp, int port)
{
	int fd = dps_socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in a = addr_of(NULL, port);
	if (dps_bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    (!udp && dps_listen(fd, 16) != 0)) {
		int e = errno;
		dps_close(fd);
		return -e;
	}
	return fd;
}

/* Up to n sockets from open_nth(ctx, i) (a descriptor, or -errno, which ends it with
 * "refused ERRNO"); prints "opened K" and returns them, K in *k. */
static int *open_many(long n, int (*open_nth)(void *ctx, long i), void *ctx, long *k)
{
	int *fds = calloc((size_t)n, sizeof(int));
	for (*k = 0; *k < n; (*k)++) {
		int fd = open_nth(ctx, *k);
		if (fd < 0) {
			out("refused %s", errname(-fd));
			break;
		}
		fds[*k] = fd;
	}
	out("opened %ld", *k);
	return fds;
}

/* Prints "ready"; a stdin line closes the k sockets ("closed K"); returns at EOF. */
static int hold_until_eof(int *fds, long k)
{
	out("ready");
	if (stdin_line()) {
		for (long i = 0; i < k; i++)
			dps_close(fds[i]);
		out("closed %ld", k);
		while (stdin_line())
			;
	}
	free(fds);
	return 0;
}

struct open_args {
	bool udp;
	int port;
};

static int open_nth_port(void *ctx, long i)
{
	const struct open_args *o = ctx;
	return open_one(o->udp, o->port + (int)i);
}

static int cmd_open(char **argv)
{
	struct open_args o = {.udp = strcmp(argv[0], "udp") == 0, .port = atoi(argv[1])};
	long k;
	int *fds = open_many(atol(argv[2]), open_nth_port, &o, &k);
	return hold_until_eof(fds, k);
}

static int cmd_udp_blast(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], atoi(argv[1]));
	int sndbuf = atoi(argv[2]);
	int fd = dps_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || dps_setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)) != 0) {
		out("FAIL socket %s", errname(errno));
		return 1;
	}
	/* stdin's end stops the blast: watch it without blocking. */
	int flags = fcntl(0, F_GETFL);
	fcntl(0, F_SETFL, flags | O_NONBLOCK);
	static char buf[512];
	unsigned long sent = 0;
	for (;;) {
		ssize_t r = dps_sendto(fd, buf, sizeof(buf), 0, (struct sockaddr *)&to, sizeof(to));
		if (r == (ssize_t)sizeof(buf) && sent++ == 0)
			out("blasting");
		if (r < 0) {
			out("FAIL sendto %s", errname(errno));
			return 1;
		}
		if (sent % 256 == 0) {
			char c;
			if (read(0, &c, 1) == 0)
				break;
		}
	}
	out("sent %lu", sent);
	return dps_close(fd) == 0 ? 0 : 1;
}

static int cmd_udp_fill_close(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], atoi(argv[1]));
	int fd = dps_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || dps_connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		out("FAIL socket %s", errname(errno));
		return 1;
	}
	unsigned char buf[64] = {0};
	uint32_t n = 0;
	for (bool first = true;; first = false) {
		uint32_t be = htonl(n);
		memcpy(buf, &be, sizeof(be));
		if (dps_send(fd, buf, sizeof(buf), first ? 0 : MSG_DONTWAIT) != (ssize_t)sizeof(buf))
			break;
		n++;
		if (first) {
			out("ready");
			if (!stdin_line())
				return 1;
		}
	}
	if (errno != EAGAIN) {
		out("FAIL send %s", errname(errno));
		return 1;
	}
	out("queued %u", n);
	return dps_close(fd) == 0 ? 0 : 1;
}

static int cmd_ping_pong(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], atoi(argv[1]));
	long n = atol(argv[2]);
	int fd = dps_socket(AF_INET, SOCK_STREAM, 0);
	set_timeouts(fd);
	if (fd < 0 || dps_connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0) {
		out("FAIL connect %s", errname(errno));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		char c = (char)i, echo;
		if (dps_write(fd, &c, 1) != 1 || dps_read(fd, &echo, 1) != 1 || echo != c) {
			out("FAIL round trip %ld: %s", i, errname(errno));
			return 1;
		}
	}
	out("done %ld", n);
	return dps_close(fd) == 0 ? 0 : 1;
}

/* Many connections at once, each passing a few bytes both ways. */
/* A TCP connection to *ctx (a struct sockaddr_in): its descriptor, or -errno. */
static int connect_nth(void *ctx, long i)
{
	(void)i;
	const struct sockaddr_in *to = ctx;
	int fd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	set_timeouts(fd);
	if (dps_connect(fd, (const struct sockaddr *)to, sizeof(*to)) != 0) {
		int e = errno;
		dps_close(fd);
		return -e;
	}
	return fd;
}

static int cmd_hold(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], atoi(argv[1]));
	long k, echoed = 0;
	int *fds = open_many(atol(argv[2]), connect_nth, &to, &k);
	/* All the requests first, then all the answers: the echo server works meanwhile. */
	for (long i = 0; i < k; i++) {
		uint32_t v = (uint32_t)i;
		if (dps_write(fds[i], &v, sizeof(v)) != (ssize_t)sizeof(v))
			out("FAIL write %ld: %s", i, errname(errno));
	}
	for (long i = 0; i < k; i++) {
		uint32_t v = 0;
		size_t got = 0;
		ssize_t r = 1;
		while (got < sizeof(v) && (r = dps_read(fds[i], (char *)&v + got, sizeof(v) - got)) > 0)
			got += (size_t)r;
		if (got == sizeof(v) && v == (uint32_t)i)
			echoed++;
	}
	out("echoed %ld", echoed);
	return hold_until_eof(fds, k);
}

/* Each stdin line is "bind" (a new TCP socket bound to the next port from PORT) or
 * "listen" (on the last one). */
static int cmd_late_call(char **argv)
{
	int port = atoi(argv[0]), fd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0) {
		out("FAIL socket %s", errname(errno));
		return 1;
	}
	out("attached");
	char line[64];
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "bind", 4) == 0) {
			fd = dps_socket(AF_INET, SOCK_STREAM, 0);
			struct sockaddr_in a = addr_of(NULL, port++);
			int rc = dps_bind(fd, (struct sockaddr *)&a, sizeof(a));
			out("bind %s", errname(rc == 0 ? 0 : errno));
		} else {
			int rc = dps_listen(fd, 16);
			out("listen %s", errname(rc == 0 ? 0 : errno));
		}
	}
	return 0;
}

static int cmd_flood(char **argv)
{
	int port = atoi(argv[0]);
	long n = atol(argv[1]);
	int fd = open_one(true, port);
	if (fd < 0) {
		out("FAIL socket %s", errname(-fd));
		return 1;
	}
	out("ready");
	while (stdin_line()) {
		long k = 0;
		int one = 1, rc = 0;
		while (k < n && (rc = dps_setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one,
						     sizeof(one))) == 0)
			k++;
		if (rc == 0)
			out("flood 0");
		else
			out("flood %s after %ld", errname(errno), k);
	}
	return dps_close(fd) == 0 ? 0 : 1;
}

static const struct app_cmd cmds[] = {
	{"open", 3, cmd_open},
	{"udp-blast", 3, cmd_udp_blast},
	{"udp-fill-close", 2, cmd_udp_fill_close},
	{"ping-pong", 3, cmd_ping_pong},
	{"late-call", 1, cmd_late_call},
	{"flood", 2, cmd_flood},
	{"hold", 3, cmd_hold},
};

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	return app_cmd_run(cmds, sizeof(cmds) / sizeof(cmds[0]), argc, argv,
			   "dps_limits open tcp-listen|udp PORT N | udp-blast ADDR PORT SNDBUF"
			   " | udp-fill-close ADDR PORT | ping-pong ADDR PORT N | late-call PORT | flood PORT N"
			   " | hold ADDR PORT N");
}
