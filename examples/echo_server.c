/* dps-echo: a TCP echo server on dpstack, in the four classic shapes of a socket server.
 *
 *   dps-echo [-a ADDR] [-p PORT] [-m threads|poll|epoll-lt|epoll-et] [-n MAXCONN]
 *
 * threads   blocking sockets, a thread per connection
 * poll      non-blocking sockets multiplexed by dps_poll
 * epoll-lt  non-blocking sockets, level-triggered dps_epoll
 * epoll-et  non-blocking sockets, edge-triggered dps_epoll (read and write until EAGAIN)
 *
 * It echoes every byte back, honours half-close (the peer's FIN ends its direction after the
 * echo has been sent), and exits after MAXCONN connections have ended (default: never). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#define BUF 65536
#define MAXFDS 65536

static long max_conns = -1, ended;

static void die(const char *what)
{
	fprintf(stderr, "dps-echo: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void conn_ended(void)
{
	if (max_conns > 0 && __atomic_add_fetch(&ended, 1, __ATOMIC_SEQ_CST) >= max_conns)
		exit(0);
}

/* ---- threads ---- */

static void *echo_thread(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char *buf = malloc(BUF);
	ssize_t n;
	while (buf != NULL && (n = dps_read(fd, buf, BUF)) > 0)
		for (ssize_t off = 0; off < n;) {
			ssize_t w = dps_write(fd, buf + off, (size_t)(n - off));
			if (w <= 0)
				goto out;
			off += w;
		}
out:
	free(buf);
	dps_close(fd);
	conn_ended();
	return NULL;
}

static void serve_threads(int lfd)
{
	for (;;) {
		int fd = dps_accept(lfd, NULL, NULL);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EMFILE)
				continue;
			die("accept");
		}
		pthread_t t;
		if (pthread_create(&t, NULL, echo_thread, (void *)(intptr_t)fd) != 0)
			die("pthread_create");
		pthread_detach(t);
	}
}

/* ---- event-driven shapes: a pending-output buffer per connection ---- */

struct conn {
	char *buf;
	size_t len, off;    /* bytes waiting to be echoed */
	int eof;            /* the peer's FIN was read */
};

static struct conn *conns[MAXFDS];

/* Reads and echoes until the socket would block. Returns 0 to keep going, -1 when the
 * connection is over. */
static int pump(int fd)
{
	struct conn *c = conns[fd];
	for (;;) {
		while (c->off < c->len) {
			ssize_t w = dps_write(fd, c->buf + c->off, c->len - c->off);
			if (w < 0)
				return errno == EAGAIN ? 0 : -1;
			c->off += (size_t)w;
		}
		c->off = c->len = 0;
		if (c->eof) {
			dps_shutdown(fd, SHUT_WR);
			return -1;
		}
		ssize_t n = dps_read(fd, c->buf, BUF);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0)
			c->eof = 1;
		c->len = (size_t)n;
	}
}

static int want_write(int fd)
{
	return conns[fd]->off < conns[fd]->len;
}

static void conn_new(int fd)
{
	if (fd >= MAXFDS || (conns[fd] = calloc(1, sizeof(struct conn))) == NULL ||
	    (conns[fd]->buf = malloc(BUF)) == NULL) {
		dps_close(fd);
		return;
	}
}

static void conn_close(int fd)
{
	free(conns[fd]->buf);
	free(conns[fd]);
	conns[fd] = NULL;
	dps_close(fd);
	conn_ended();
}

static int accept_nb(int lfd)
{
	int fd = dps_accept4(lfd, NULL, NULL, SOCK_NONBLOCK);
	if (fd < 0 && errno != EAGAIN && errno != ECONNABORTED && errno != EINTR)
		die("accept");
	if (fd >= 0)
		conn_new(fd);
	return fd >= 0 && fd < MAXFDS && conns[fd] != NULL ? fd : -1;
}

static void serve_poll(int lfd)
{
	static struct pollfd p[MAXFDS];
	for (;;) {
		nfds_t n = 0;
		p[n++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (int fd = 0; fd < MAXFDS; fd++)
			if (conns[fd] != NULL)
				p[n++] = (struct pollfd){
					.fd = fd, .events = (short)(want_write(fd) ? POLLOUT : POLLIN)};
		if (dps_poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		for (nfds_t i = 1; i < n; i++)
			if (p[i].revents != 0 && pump(p[i].fd) < 0)
				conn_close(p[i].fd);
		if (p[0].revents & POLLIN)
			while (accept_nb(lfd) >= 0)
				;
	}
}

static void serve_epoll(int lfd, int edge)
{
	int ep = dps_epoll_create1(0);
	if (ep < 0)
		die("epoll_create1");
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
	if (dps_epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) != 0)
		die("epoll_ctl");
	struct epoll_event evs[256];
	for (;;) {
		int n = dps_epoll_wait(ep, evs, 256, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == lfd) {
				int c;
				while ((c = accept_nb(lfd)) >= 0) {
					struct epoll_event ce = {
						.events = edge ? EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET
							       : EPOLLIN | EPOLLRDHUP,
						.data.fd = c};
					if (dps_epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce) != 0)
						die("epoll_ctl");
				}
				continue;
			}
			if (conns[fd] == NULL)
				continue;
			if (pump(fd) < 0) {
				conn_close(fd); /* closing removes it from the set */
			} else if (!edge) {
				/* Level-triggered: ask for what is needed next. */
				struct epoll_event ce = {
					.events = want_write(fd) ? EPOLLOUT : EPOLLIN | EPOLLRDHUP,
					.data.fd = fd};
				dps_epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ce);
			}
		}
	}
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0", *mode = "epoll-et";
	int port = 7, opt;
	while ((opt = getopt(argc, argv, "a:p:m:n:h")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = atoi(optarg); break;
		case 'm': mode = optarg; break;
		case 'n': max_conns = atol(optarg); break;
		default:
			fprintf(stderr, "usage: dps-echo [-a ADDR] [-p PORT] "
					"[-m threads|poll|epoll-lt|epoll-et] [-n MAXCONN]\n");
			return opt == 'h' ? 0 : 2;
		}
	}
	int lfd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		die("socket");
	int one = 1;
	dps_setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "dps-echo: bad address %s\n", addr);
		return 2;
	}
	if (dps_bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		die("bind");
	if (dps_listen(lfd, 1024) != 0)
		die("listen");
	printf("dps-echo: %s on %s:%d\n", mode, addr, port);
	fflush(stdout);
	if (strcmp(mode, "threads") == 0) {
		serve_threads(lfd);
	} else {
		if (dps_fcntl(lfd, F_SETFL, O_NONBLOCK) != 0)
			die("fcntl");
		if (strcmp(mode, "poll") == 0)
			serve_poll(lfd);
		else if (strcmp(mode, "epoll-lt") == 0)
			serve_epoll(lfd, 0);
		else if (strcmp(mode, "epoll-et") == 0)
			serve_epoll(lfd, 1);
		else {
			fprintf(stderr, "dps-echo: unknown mode %s\n", mode);
			return 2;
		}
	}
	return 0;
}
