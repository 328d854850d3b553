/* The load program of bench/app.sh: a server and its clients, written once and built twice,
 * on kernel sockets (dps-app-load-kernel) and on libdpstack (dps-app-load-dpstack, with
 * -DUSE_DPS), so that both stacks run literally the same program and the ratio compares the
 * stacks, not two programs. Every socket call goes through S(); nothing else differs.
 *
 *   serve ECHO_PORT SOURCE_PORT      one thread, epoll: echoes on one port, streams to the
 *                                    client (as fast as it takes) on the other
 *   rr ADDR PORT CONNS SECS SIZE     CONNS connections in one epoll loop, each sending SIZE
 *                                    bytes and waiting for the echo; prints
 *                                    "TRANSACTIONS_PER_S MEDIAN_LATENCY_US"
 *   stream ADDR PORT CONNS SECS      CONNS connections reading what the source sends;
 *                                    prints "MB_PER_S" (10^6 bytes) as received
 *   accept PORT                      blocks in accept, keeping what it accepts, unread
 *   hold ADDR PORT                   connects, then blocks in a read of the idle connection
 *
 * Servers print "ready" once listening, hold prints "connected"; load modes measure SECS
 * seconds after a warm-up of WARMUP_NS, in which connections open their congestion windows
 * and the latency array and buffers take their page faults. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifdef USE_DPS
#include <dpstack/dpstack.h>
#define S(x) dps_##x
#else
#define S(x) x
#endif

#define WARMUP_NS 500000000ull
#define BUF (1 << 16)
#define MAX_CONNS 1024
#define MAX_EVENTS 256

static char buf[BUF];

_Noreturn static void die(const char *what)
{
	fprintf(stderr, "app_load: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sockaddr_in addr_of(const char *ip, const char *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (ip != NULL && inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
		fprintf(stderr, "app_load: bad address %s\n", ip);
		exit(2);
	}
	return a;
}

static int listen_on(const char *port, int type)
{
	struct sockaddr_in a = addr_of(NULL, port);
	int one = 1;
	int fd = S(socket)(AF_INET, type, 0);
	if (fd < 0 || S(setsockopt)(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    S(bind)(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || S(listen)(fd, 1024) != 0)
		die("listen");
	return fd;
}

/* A connected socket, non-blocking when an epoll loop drives it. */
static int connect_to(const char *ip, const char *port, int nonblock, int nodelay)
{
	struct sockaddr_in a = addr_of(ip, port);
	int one = 1;
	int fd = S(socket)(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || S(connect)(fd, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect");
	if (nodelay && S(setsockopt)(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0)
		die("TCP_NODELAY");
	if (nonblock && S(fcntl)(fd, F_SETFL, O_NONBLOCK) != 0)
		die("fcntl");
	return fd;
}

static void watch(int ep, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = {.events = events, .data.u64 = data};
	if (S(epoll_ctl)(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		die("epoll_ctl");
}

static void ready(const char *word)
{
	printf("%s\n", word);
	fflush(stdout);
}

/* ---- serve ---- */

/* epoll data: the descriptor in the high half, its role in the low. */
enum role { ECHO_LISTEN, SOURCE_LISTEN, ECHO, SOURCE };

_Noreturn static void serve(const char *echo_port, const char *source_port)
{
	/* A client ends a stream by closing with bytes unread: the source sees EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	int ep = S(epoll_create1)(0);
	if (ep < 0)
		die("epoll_create1");
	int le = listen_on(echo_port, SOCK_STREAM | SOCK_NONBLOCK);
	int ls = listen_on(source_port, SOCK_STREAM | SOCK_NONBLOCK);
	watch(ep, le, EPOLLIN, (uint64_t)le << 32 | ECHO_LISTEN);
	watch(ep, ls, EPOLLIN, (uint64_t)ls << 32 | SOURCE_LISTEN);
	ready("ready");
	struct epoll_event evs[MAX_EVENTS];
	for (;;) {
		int n = S(epoll_wait)(ep, evs, MAX_EVENTS, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			int fd = (int)(evs[i].data.u64 >> 32);
			enum role role = (enum role)(evs[i].data.u64 & 0xffffffffu);
			if (role == ECHO_LISTEN || role == SOURCE_LISTEN) {
				int c, one = 1;
				while ((c = S(accept4)(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					S(setsockopt)(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
					if (role == ECHO_LISTEN)
						watch(ep, c, EPOLLIN, (uint64_t)c << 32 | ECHO);
					else
						watch(ep, c, EPOLLOUT, (uint64_t)c << 32 | SOURCE);
				}
				continue;
			}
			ssize_t r;
			if (role == ECHO) {
				/* A ping-pong client has one message in flight, so its echo always
				 * fits the send buffer: a short write means a client that is not
				 * one of ours, and ends the connection. */
				while ((r = S(read)(fd, buf, BUF)) > 0)
					if (S(write)(fd, buf, (size_t)r) != r) {
						r = 0;
						break;
					}
			} else {
				while ((r = S(write)(fd, buf, BUF)) > 0)
					;
			}
			if (r == 0 || errno != EAGAIN)
				S(close)(fd); /* also leaves the epoll set */
		}
	}
}

/* ---- rr ---- */

struct rr_conn {
	int fd;
	size_t got;
	uint64_t sent_at;
};

struct samples {
	uint32_t *v;
	size_t n, cap;
};

static void sample_add(struct samples *s, uint64_t ns)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 1 << 20;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (s->v == NULL)
			die("realloc");
	}
	s->v[s->n++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

static void rr_send(struct rr_conn *c, size_t size, uint64_t now)
{
	c->got = 0;
	c->sent_at = now;
	if (S(write)(c->fd, buf, size) != (ssize_t)size)
		die("write"); /* one message in flight never fills the send buffer */
}

static int rr(const char *ip, const char *port, int conns, double secs, size_t size)
{
	static struct rr_conn c[MAX_CONNS];
	struct samples lat = {0};
	int ep = S(epoll_create1)(0);
	if (ep < 0)
		die("epoll_create1");
	for (int i = 0; i < conns; i++) {
		c[i].fd = connect_to(ip, port, 1, 1);
		watch(ep, c[i].fd, EPOLLIN, (uint64_t)i);
	}
	const uint64_t begin = now_ns() + WARMUP_NS, end = begin + (uint64_t)(secs * 1e9);
	uint64_t now = now_ns(), done = 0;
	for (int i = 0; i < conns; i++)
		rr_send(&c[i], size, now);
	struct epoll_event evs[MAX_EVENTS];
	while (now < end) {
		int n = S(epoll_wait)(ep, evs, MAX_EVENTS, 100);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		for (int i = 0; i < n; i++) {
			struct rr_conn *k = &c[evs[i].data.u64];
			ssize_t r = S(read)(k->fd, buf, size - k->got);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				errno = r == 0 ? ECONNRESET : errno;
				die("read");
			}
			k->got += (size_t)r;
			if (k->got < size)
				continue;
			now = now_ns();
			if (now >= begin && now < end) {
				sample_add(&lat, now - k->sent_at);
				done++;
			}
			rr_send(k, size, now);
		}
		now = now_ns();
	}
	if (lat.n == 0) {
		fprintf(stderr, "app_load: no transaction completed\n");
		return 1;
	}
	qsort(lat.v, lat.n, sizeof(*lat.v), cmp_u32);
	printf("%.0f %.1f\n", (double)done / secs, lat.v[lat.n / 2] / 1e3);
	for (int i = 0; i < conns; i++)
		S(close)(c[i].fd);
	S(close)(ep);
	return 0;
}

/* ---- stream ---- */

static int stream(const char *ip, const char *port, int conns, double secs)
{
	int ep = S(epoll_create1)(0);
	if (ep < 0)
		die("epoll_create1");
	int fds[MAX_CONNS];
	for (int i = 0; i < conns; i++) {
		fds[i] = connect_to(ip, port, 1, 0);
		watch(ep, fds[i], EPOLLIN, (uint64_t)fds[i]);
	}
	const uint64_t begin = now_ns() + WARMUP_NS, end = begin + (uint64_t)(secs * 1e9);
	uint64_t now = now_ns(), bytes = 0;
	struct epoll_event evs[MAX_EVENTS];
	while (now < end) {
		int n = S(epoll_wait)(ep, evs, MAX_EVENTS, 100);
		if (n < 0 && errno != EINTR)
			die("epoll_wait");
		uint64_t got = 0;
		for (int i = 0; i < n; i++) {
			ssize_t r = S(read)((int)evs[i].data.u64, buf, BUF);
			if (r <= 0) {
				if (r < 0 && errno == EAGAIN)
					continue;
				errno = r == 0 ? ECONNRESET : errno;
				die("read");
			}
			got += (uint64_t)r;
		}
		now = now_ns();
		if (now >= begin && now < end)
			bytes += got;
	}
	printf("%.1f\n", (double)bytes / secs / 1e6);
	for (int i = 0; i < conns; i++)
		S(close)(fds[i]);
	S(close)(ep);
	return 0;
}

/* ---- idle ---- */

_Noreturn static void accept_forever(const char *port)
{
	int l = listen_on(port, SOCK_STREAM);
	ready("ready");
	for (;;)
		if (S(accept4)(l, NULL, NULL, 0) < 0 && errno != EINTR && errno != ECONNABORTED)
			die("accept");
}

static int hold(const char *ip, const char *port)
{
	int fd = connect_to(ip, port, 0, 0);
	ready("connected");
	ssize_t r;
	while ((r = S(read)(fd, buf, BUF)) > 0 || (r < 0 && errno == EINTR))
		;
	S(close)(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "serve") == 0 && argc == 4)
		serve(argv[2], argv[3]);
	if (strcmp(mode, "rr") == 0 && argc == 7 && atoi(argv[4]) > 0 &&
	    atoi(argv[4]) <= MAX_CONNS && atoi(argv[6]) > 0 && atoi(argv[6]) <= BUF)
		return rr(argv[2], argv[3], atoi(argv[4]), atof(argv[5]), (size_t)atoi(argv[6]));
	if (strcmp(mode, "stream") == 0 && argc == 6 && atoi(argv[4]) > 0 &&
	    atoi(argv[4]) <= MAX_CONNS)
		return stream(argv[2], argv[3], atoi(argv[4]), atof(argv[5]));
	if (strcmp(mode, "accept") == 0 && argc == 3)
		accept_forever(argv[2]);
	if (strcmp(mode, "hold") == 0 && argc == 4)
		return hold(argv[2], argv[3]);
	fprintf(stderr, "usage: %s serve ECHO_PORT SOURCE_PORT | rr ADDR PORT CONNS SECS SIZE |\n"
			"       stream ADDR PORT CONNS SECS | accept PORT | hold ADDR PORT\n",
		argv[0]);
	return 2;
}
