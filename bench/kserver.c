/* The kernel reference server of bench/tcp.sh: the same services as dpstack's built-ins
 * (echo on one port, discard on another) on kernel sockets, one thread, epoll, non-blocking,
 * so that the ratio compares the stacks and not a Python server with dpstack.
 * Usage: dps-kserver ECHO_PORT DISCARD_PORT */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

enum { KIND_ECHO = 1, KIND_DISCARD = 2, LISTEN_TAG = 4 };

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	int one = 1;
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 4096) != 0) {
		perror("listen");
		exit(1);
	}
	return fd;
}

/* epoll data: fd in the high half, kind bits in the low. */
static uint64_t tag(int fd, unsigned kind)
{
	return (uint64_t)fd << 8 | kind;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ECHO_PORT DISCARD_PORT\n", argv[0]);
		return 2;
	}
	int ep = epoll_create1(0);
	int ports[2] = {atoi(argv[1]), atoi(argv[2])};
	for (int i = 0; i < 2; i++) {
		int fd = listen_on(ports[i]);
		struct epoll_event ev = {.events = EPOLLIN,
					 .data.u64 = tag(fd, (i == 0 ? KIND_ECHO : KIND_DISCARD) |
							     LISTEN_TAG)};
		epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	}
	printf("ready\n");
	fflush(stdout);
	static char buf[1 << 18];
	struct epoll_event evs[256];
	for (;;) {
		int n = epoll_wait(ep, evs, 256, -1);
		for (int i = 0; i < n; i++) {
			int fd = (int)(evs[i].data.u64 >> 8);
			unsigned kind = evs[i].data.u64 & 0xff;
			if (kind & LISTEN_TAG) {
				int c;
				while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
					struct epoll_event ev = {.events = EPOLLIN,
								 .data.u64 = tag(c, kind & ~LISTEN_TAG)};
					epoll_ctl(ep, EPOLL_CTL_ADD, c, &ev);
				}
				continue;
			}
			ssize_t r;
			while ((r = read(fd, buf, sizeof(buf))) > 0)
				if (kind == KIND_ECHO && write(fd, buf, (size_t)r) != r)
					break; /* a 1-byte echo never fills the socket buffer */
			if (r == 0 || (r < 0 && errno != EAGAIN))
				close(fd); /* also leaves the epoll set */
		}
	}
}
