/* dps_apptest: small applications on libdpstack for tests/integ/test_apps.py, one per
 * subcommand. Each prints what it saw on stdout, one fact per line ("ok ...", "name value"),
 * so that the test asserts on the lines and shows them when it fails; it exits 0 when it
 * got as far as it was meant to, 1 otherwise. Every blocking call is bounded (SO_RCVTIMEO,
 * SO_SNDTIMEO, poll timeouts), so that a bug in the stack makes a line of output, not a hang.
 *
 *   sizes                                  offsets of the channel's messages (for Python)
 *   connect-echo ADDR PORT BYTES           stream BYTES to an echo server, check the echo
 *   zc-echo ADDR PORT BYTES                the same with the zero-copy calls
 *   write-close ADDR PORT BYTES            write BYTES, close and exit at once
 *   udp-echo PORT COUNT                    echo COUNT datagrams, then exit
 *   udp-ping ADDR PORT COUNT SIZE          send COUNT datagrams, check each echo
 *   fork-server PORT N per-conn|prefork    echo N connections served by forked children
 *   accept-later PORT BACKLOG N            accept N only after a line on stdin
 *   listen-close PORT                      close the listener, unaccepted, on a stdin line
 *   many-sockets ADDR PORT N               N connections at once; closes them on a stdin line
 *   restart-probe ADDR PORT FLAGFILE       I/O across a daemon restart (see restart_probe)
 *   garbage-ring random|tail               attach by hand and corrupt its command ring
 *   raw-calls                              attach by hand and post the calls stdin gives
 *   scribble ADDR PORT                     connect, then write garbage over the whole segment
 *   errno-checks dps|kernel ...            socket calls whose errno Linux defines
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

/* The channel's contract, to play a hostile application that attaches without the
 * library (garbage-ring) and to tell Python the message layout (sizes). */
#include "app_cmd.h"
#include "../../../src/chan/chan_shm.h"
#include "base/fifo.h"

#define IO_TIMEOUT_S 30
#define BUF (64 * 1024)

static void out(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void fail(const char *what)
{
	out("FAIL %s: %s", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in addr_of(const char *ip, const char *port)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		out("FAIL bad address %s", ip);
		exit(2);
	}
	return sin;
}

static void set_timeouts(int fd)
{
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	if (dps_setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    dps_setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0)
		fail("setsockopt timeouts");
}

static int tcp_connect(const struct sockaddr_in *to)
{
	int fd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0)
		fail("socket");
	set_timeouts(fd);
	if (dps_connect(fd, (const struct sockaddr *)to, sizeof(*to)) != 0)
		fail("connect");
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = dps_send(fd, (const char *)buf + off, len - off, MSG_NOSIGNAL);
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	for (size_t off = 0; off < len;) {
		ssize_t n = dps_read(fd, (char *)buf + off, len - off);
		if (n <= 0) {
			if (n == 0)
				errno = ENODATA;
			return -1;
		}
		off += (size_t)n;
	}
	return 0;
}

/* A reproducible byte stream (xorshift64*), so the reader checks the echo without keeping
 * what the writer sent. */
struct stream {
	uint64_t s;
};

static void stream_fill(struct stream *st, uint8_t *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		st->s ^= st->s >> 12;
		st->s ^= st->s << 25;
		st->s ^= st->s >> 27;
		buf[i] = (uint8_t)((st->s * 2685821657736338717ull) >> 56);
	}
}

/* ---- sizes ---- */

#define FIELD(type, f) out(#type "." #f " %zu %zu", offsetof(struct type, f), \
			   sizeof(((struct type *)0)->f))

static int cmd_sizes(char **args)
{
	(void)args;
	out("chan_req %zu", sizeof(struct chan_req));
	out("chan_reply %zu", sizeof(struct chan_reply));
	FIELD(chan_req, op);
	FIELD(chan_req, sock);
	FIELD(chan_req, laddr);
	FIELD(chan_req, raddr);
	FIELD(chan_req, lport);
	FIELD(chan_req, rport);
	FIELD(chan_req, backlog);
	FIELD(chan_req, opt);
	FIELD(chan_req, value);
	FIELD(chan_req, app_id);
	FIELD(chan_req, token);
	FIELD(chan_req, parent_proc);
	FIELD(chan_req, pid);
	FIELD(chan_req, opts);
	FIELD(chan_req, cc);
	FIELD(chan_reply, err);
	FIELD(chan_reply, count);
	FIELD(chan_reply, socks);
	FIELD(chan_reply, u);
	return 0;
}

/* ---- connect-echo, zc-echo ---- */

/* Writes len bytes through the zero-copy slices of the send buffer. */
static int zc_write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len > 0) {
		struct iovec iov[2];
		ssize_t room = dps_zc_send_reserve(fd, iov, MSG_NOSIGNAL);
		if (room <= 0)
			return -1;
		size_t n = len < (size_t)room ? len : (size_t)room, done = 0;
		for (int i = 0; i < 2 && done < n; i++) {
			size_t k = n - done < iov[i].iov_len ? n - done : iov[i].iov_len;
			memcpy(iov[i].iov_base, buf + done, k);
			done += k;
		}
		if (dps_zc_send_commit(fd, n) != 0)
			return -1;
		buf += n;
		len -= n;
	}
	return 0;
}

struct echo_writer {
	int fd;
	bool zc;
	uint64_t bytes;
	int err;
};

static void *echo_write(void *arg)
{
	struct echo_writer *w = arg;
	struct stream st = {.s = 0x9e3779b97f4a7c15ull};
	uint8_t *buf = malloc(BUF);
	for (uint64_t done = 0; buf != NULL && done < w->bytes;) {
		size_t n = w->bytes - done < BUF ? (size_t)(w->bytes - done) : BUF;
		stream_fill(&st, buf, n);
		if ((w->zc ? zc_write_all(w->fd, buf, n) : write_all(w->fd, buf, n)) != 0) {
			w->err = errno;
			break;
		}
		done += n;
	}
	free(buf);
	/* The echo server ends its direction after ours: the reader then sees end of stream. */
	if (w->err == 0 && dps_shutdown(w->fd, SHUT_WR) != 0)
		w->err = errno;
	return NULL;
}

/* Streams BYTES to an echo server on a second thread and checks the echo as it comes, with
 * the copying calls or the zero-copy ones (which hand out slices of the FIFOs). */
static int echo_client(char **argv, bool zc)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	uint64_t bytes = strtoull(argv[2], NULL, 10);
	int fd = tcp_connect(&to);
	struct echo_writer w = {.fd = fd, .zc = zc, .bytes = bytes};
	pthread_t t;
	if (pthread_create(&t, NULL, echo_write, &w) != 0)
		fail("pthread_create");
	struct stream st = {.s = 0x9e3779b97f4a7c15ull};
	uint8_t *buf = malloc(BUF), *want = malloc(BUF);
	uint64_t got = 0;
	for (;;) {
		struct iovec iov[2] = {{.iov_base = buf, .iov_len = BUF}, {0}};
		ssize_t n = zc ? dps_zc_recv(fd, iov, 0) : dps_read(fd, buf, BUF);
		if (n < 0)
			fail("read");
		if (n == 0)
			break;
		for (int i = 0; i < 2; i++) {
			/* A zero-copy slice may be as long as the whole receive buffer. */
			size_t len = zc ? iov[i].iov_len : i == 0 ? (size_t)n : 0;
			for (size_t off = 0; off < len;) {
				size_t k = len - off < BUF ? len - off : BUF;
				stream_fill(&st, want, k);
				if (got + k > bytes ||
				    memcmp((uint8_t *)iov[i].iov_base + off, want, k) != 0) {
					out("FAIL echo differs within bytes %llu..%llu",
					    (unsigned long long)got, (unsigned long long)(got + k));
					free(buf);
					free(want);
					return 1;
				}
				got += k;
				off += k;
			}
		}
		if (zc && dps_zc_recv_done(fd, (size_t)n) != 0)
			fail("zc_recv_done");
	}
	free(buf);
	free(want);
	pthread_join(t, NULL);
	if (w.err != 0) {
		errno = w.err;
		fail("write");
	}
	if (got != bytes) {
		out("FAIL end of stream after %llu of %llu bytes", (unsigned long long)got,
		    (unsigned long long)bytes);
		return 1;
	}
	if (dps_close(fd) != 0)
		fail("close");
	out("ok %llu", (unsigned long long)got);
	return 0;
}

static int cmd_connect_echo(char **argv)
{
	return echo_client(argv, false);
}

static int cmd_zc_echo(char **argv)
{
	return echo_client(argv, true);
}

/* ---- write-close ---- */

/* Writes BYTES of the pattern (byte i is i % 251), closes and exits at once: as with close(2)
 * on Linux, what was written must still reach the peer, then its end of stream. */
static int cmd_write_close(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	uint64_t bytes = strtoull(argv[2], NULL, 10);
	int fd = tcp_connect(&to);
	static uint8_t buf[251 * 256];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i % 251);
	for (uint64_t done = 0; done < bytes;) {
		size_t n = bytes - done < sizeof(buf) ? (size_t)(bytes - done) : sizeof(buf);
		if (write_all(fd, buf, n) != 0)
			fail("write");
		done += n;
	}
	if (dps_close(fd) != 0)
		fail("close");
	out("closed");
	return 0;
}

/* ---- UDP ---- */

static int cmd_udp_echo(char **argv)
{
	int fd = dps_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		fail("socket");
	struct sockaddr_in any = addr_of("0.0.0.0", argv[0]);
	if (dps_bind(fd, (struct sockaddr *)&any, sizeof(any)) != 0)
		fail("bind");
	set_timeouts(fd);
	out("ready");
	long count = atol(argv[1]);
	static uint8_t buf[65536];
	for (long i = 0; i < count; i++) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		ssize_t n = dps_recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &len);
		if (n < 0)
			fail("recvfrom");
		if (dps_sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, len) != n)
			fail("sendto");
	}
	out("ok %ld", count);
	return dps_close(fd) == 0 ? 0 : 1;
}

static int cmd_udp_ping(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	long count = atol(argv[2]);
	size_t size = (size_t)atol(argv[3]);
	int fd = dps_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		fail("socket");
	set_timeouts(fd);
	if (dps_connect(fd, (struct sockaddr *)&to, sizeof(to)) != 0)
		fail("connect");
	static uint8_t msg[65536], echo[65536];
	struct stream st = {.s = 42};
	for (long i = 0; i < count; i++) {
		stream_fill(&st, msg, size);
		if (dps_send(fd, msg, size, 0) != (ssize_t)size)
			fail("send");
		ssize_t n = dps_recv(fd, echo, sizeof(echo), 0);
		if (n < 0) {
			out("FAIL datagram %ld: recv: %s", i, strerror(errno));
			return 1;
		}
		if ((size_t)n != size || memcmp(msg, echo, size) != 0) {
			out("FAIL datagram %ld: %zd bytes back of %zu, or different", i, n, size);
			return 1;
		}
	}
	out("ok %ld", count);
	return dps_close(fd) == 0 ? 0 : 1;
}

/* ---- fork-server ---- */

static int echo_conn(int fd)
{
	set_timeouts(fd);
	static uint8_t buf[BUF];
	ssize_t n;
	while ((n = dps_read(fd, buf, sizeof(buf))) > 0)
		if (write_all(fd, buf, (size_t)n) != 0)
			return -1;
	return n == 0 && dps_close(fd) == 0 ? 0 : -1;
}

static int listen_on(const char *port)
{
	int lfd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		fail("socket");
	int one = 1;
	dps_setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	struct sockaddr_in any = addr_of("0.0.0.0", port);
	if (dps_bind(lfd, (struct sockaddr *)&any, sizeof(any)) != 0)
		fail("bind");
	if (dps_listen(lfd, 64) != 0)
		fail("listen");
	set_timeouts(lfd); /* accept waits at most IO_TIMEOUT_S */
	return lfd;
}

static int reap(pid_t pid)
{
	int status;
	if (waitpid(pid, &status, 0) != pid)
		fail("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* per-conn: the parent accepts, forks, and closes its copy; each child serves its
 * connection. prefork: the parent forks one child and closes its listener; the child
 * accepts all N. Either way the sockets must live on in the child alone. */
static int cmd_fork_server(char **argv)
{
	int lfd = listen_on(argv[0]);
	long n = atol(argv[1]);
	bool prefork = strcmp(argv[2], "prefork") == 0;
	out("listening");
	int bad = 0;
	if (prefork) {
		pid_t pid = fork();
		if (pid < 0)
			fail("fork");
		if (pid == 0) {
			for (long i = 0; i < n; i++) {
				int fd = dps_accept(lfd, NULL, NULL);
				if (fd < 0)
					fail("child accept");
				if (echo_conn(fd) != 0)
					fail("child echo");
			}
			out("child %d served %ld", (int)getpid(), n);
			_exit(0);
		}
		if (dps_close(lfd) != 0)
			fail("parent close listener");
		out("parent closed listener");
		bad = reap(pid) != 0;
	} else {
		pid_t kids[256];
		if (n > 256)
			n = 256;
		for (long i = 0; i < n; i++) {
			int fd = dps_accept(lfd, NULL, NULL);
			if (fd < 0)
				fail("accept");
			pid_t pid = fork();
			if (pid < 0)
				fail("fork");
			if (pid == 0) {
				dps_close(lfd);
				out("child %d serves connection %ld", (int)getpid(), i);
				_exit(echo_conn(fd) == 0 ? 0 : 1);
			}
			kids[i] = pid;
			if (dps_close(fd) != 0)
				fail("parent close connection");
		}
		for (long i = 0; i < n; i++)
			bad += reap(kids[i]) != 0;
		dps_close(lfd);
	}
	if (bad != 0) {
		out("FAIL %d children failed", bad);
		return 1;
	}
	out("ok %ld", n);
	return 0;
}

/* ---- accept-later, listen-close ---- */

static int listen_backlog(const char *port, int backlog)
{
	int lfd = dps_socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		fail("socket");
	struct sockaddr_in any = addr_of("0.0.0.0", port);
	if (dps_bind(lfd, (struct sockaddr *)&any, sizeof(any)) != 0)
		fail("bind");
	if (dps_listen(lfd, backlog) != 0)
		fail("listen");
	set_timeouts(lfd);
	return lfd;
}

static char *read_line(char *buf, size_t len)
{
	return fgets(buf, (int)len, stdin);
}

/* Listens with BACKLOG, lets connections pile up until a line on stdin, then accepts N and
 * echoes one byte on each: connections beyond the accept ring wait in the stack and must
 * come through once the application takes the first ones. */
static int cmd_accept_later(char **argv)
{
	int lfd = listen_backlog(argv[0], atoi(argv[1]));
	long n = atol(argv[2]);
	out("listening");
	char line[64];
	if (read_line(line, sizeof(line)) == NULL)
		return 1;
	for (long i = 0; i < n; i++) {
		int fd = dps_accept(lfd, NULL, NULL);
		if (fd < 0) {
			out("FAIL accept %ld: %s", i, strerror(errno));
			return 1;
		}
		set_timeouts(fd);
		char b;
		if (read_all(fd, &b, 1) != 0 || write_all(fd, &b, 1) != 0)
			fail("echo");
		dps_close(fd);
	}
	out("ok %ld", n);
	return dps_close(lfd) == 0 ? 0 : 1;
}

/* Listens, and on a line on stdin closes the listener without accepting: the connections
 * waiting in it are reset, as Linux does. Stays attached until stdin ends. */
static int cmd_listen_close(char **argv)
{
	int lfd = listen_backlog(argv[0], 16);
	out("listening");
	char line[64];
	if (read_line(line, sizeof(line)) == NULL)
		return 1;
	if (dps_close(lfd) != 0)
		fail("close");
	out("closed");
	while (read_line(line, sizeof(line)) != NULL)
		;
	return 0;
}

/* ---- many-sockets ---- */

/* Connection i's 16 bytes: "conn " and i in ten digits, NUL-terminated. */
static void conn_msg(char msg[16], long i)
{
	snprintf(msg, 16, "conn %010u", (unsigned)i);
}

static int cmd_many_sockets(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	long n = atol(argv[2]);
	int *fds = calloc((size_t)n, sizeof(int));
	for (long i = 0; i < n; i++)
		fds[i] = tcp_connect(&to);
	/* Each one carries its own bytes both ways, so crossed FIFOs would show. */
	for (long i = 0; i < n; i++) {
		char msg[16];
		conn_msg(msg, i);
		if (write_all(fds[i], msg, sizeof(msg)) != 0)
			fail("write");
	}
	for (long i = 0; i < n; i++) {
		char msg[16], echo[16];
		conn_msg(msg, i);
		if (read_all(fds[i], echo, sizeof(echo)) != 0)
			fail("read");
		if (memcmp(msg, echo, sizeof(msg)) != 0) {
			out("FAIL connection %ld got another's bytes: %.16s", i, echo);
			return 1;
		}
	}
	out("open %ld", n);
	char line[64];
	if (read_line(line, sizeof(line)) == NULL)
		return 1;
	for (long i = 0; i < n; i++)
		if (dps_close(fds[i]) != 0)
			fail("close");
	out("closed %ld", n);
	/* Stays attached until stdin ends, so the test sees the sockets gone, not the app. */
	while (read_line(line, sizeof(line)) != NULL)
		;
	free(fds);
	return 0;
}

/* ---- restart-probe ---- */

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case EAGAIN: return "EAGAIN";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case EPIPE: return "EPIPE";
	case ENOTCONN: return "ENOTCONN";
	case EISCONN: return "EISCONN";
	case ECONNRESET: return "ECONNRESET";
	case ECONNREFUSED: return "ECONNREFUSED";
	case EADDRINUSE: return "EADDRINUSE";
	case EINPROGRESS: return "EINPROGRESS";
	case EALREADY: return "EALREADY";
	case EDESTADDRREQ: return "EDESTADDRREQ";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOTSOCK: return "ENOTSOCK";
	case EAFNOSUPPORT: return "EAFNOSUPPORT";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ECONNABORTED: return "ECONNABORTED";
	case ENETDOWN: return "ENETDOWN";
	case EPROTO: return "EPROTO";
	default: {
		static char buf[32];
		snprintf(buf, sizeof(buf), "errno%d", e);
		return buf;
	}
	}
}

/* Connects to a kernel echo server, blocks in a read that the test ends by stopping the
 * daemon, tries a write and another read on the dead connection, then waits for FLAGFILE
 * (the test makes it once a new daemon serves the same DPSTACK_SOCK) and echoes over a new
 * socket. */
static int cmd_restart_probe(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	int fd = tcp_connect(&to);
	if (write_all(fd, "ping", 4) != 0)
		fail("write");
	char buf[8];
	if (read_all(fd, buf, 4) != 0)
		fail("read");
	out("connected");
	ssize_t n = dps_read(fd, buf, sizeof(buf));
	out("read %zd %s", n, errname(n < 0 ? errno : 0));
	n = dps_send(fd, "x", 1, MSG_NOSIGNAL);
	out("write %zd %s", n, errname(n < 0 ? errno : 0));
	n = dps_read(fd, buf, sizeof(buf));
	out("read again %zd %s", n, errname(n < 0 ? errno : 0));
	struct pollfd p = {.fd = fd, .events = POLLIN | POLLOUT};
	int r = dps_poll(&p, 1, 1000);
	out("poll %d%s%s", r, (p.revents & POLLHUP) ? " HUP" : "", (p.revents & POLLERR) ? " ERR" : "");
	out("close %d", dps_close(fd));
	for (int i = 0; access(argv[2], F_OK) != 0; i++) {
		if (i == IO_TIMEOUT_S * 10) {
			out("FAIL no %s", argv[2]);
			return 1;
		}
		usleep(100 * 1000);
	}
	fd = tcp_connect(&to);
	if (write_all(fd, "again", 5) != 0 || read_all(fd, buf, 5) != 0)
		fail("echo after restart");
	out("reattached %s", memcmp(buf, "again", 5) == 0 ? "ok" : "garbled");
	return dps_close(fd) == 0 ? 0 : 1;
}

/* ---- garbage-ring: a hostile process that speaks the protocol itself ---- */

static int daemon_connect(void)
{
	const char *path = getenv("DPSTACK_SOCK");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (path == NULL || strlen(path) >= sizeof(sa.sun_path)) {
		out("FAIL DPSTACK_SOCK unset or too long");
		exit(2);
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		fail("connect DPSTACK_SOCK");
	return fd;
}

static uint64_t rnd64(void)
{
	static uint64_t s;
	if (s == 0)
		s = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
	s ^= s >> 12;
	s ^= s << 25;
	s ^= s >> 27;
	return s * 2685821657736338717ull;
}

/* An application attached without the library: its unix connection, segment and eventfds. */
struct raw_app {
	int fd;
	void *base;
	struct chan_layout lay;
	unsigned proc;
	int fds[CHAN_MAX_WORKERS + 2];  /* memfd, own eventfd, workers' eventfds */
};

static void raw_attach(struct raw_app *ra)
{
	ra->fd = daemon_connect();
	struct chan_req rq = {.op = CHAN_OP_ATTACH, .pid = getpid()};
	if (send(ra->fd, &rq, sizeof(rq), 0) != (ssize_t)sizeof(rq))
		fail("send ATTACH");
	struct chan_reply rep;
	union {
		char buf[CMSG_SPACE(sizeof(int) * (CHAN_MAX_WORKERS + 2))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = &rep, .iov_len = sizeof(rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	if (recvmsg(ra->fd, &mh, 0) != (ssize_t)sizeof(rep) || rep.err != 0)
		fail("ATTACH reply");
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	const struct chan_attach_reply *ar = &rep.u.attach;
	if (c == NULL || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(int) * (2 + ar->nb_workers))) {
		out("FAIL ATTACH reply without its descriptors");
		exit(1);
	}
	memcpy(ra->fds, CMSG_DATA(c), sizeof(int) * (2 + ar->nb_workers));
	chan_layout(&ra->lay, ar->nb_workers, ar->max_socks, ar->arena_size);
	ra->base = mmap(NULL, ra->lay.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			ra->fds[0], 0);
	if (ra->base == MAP_FAILED)
		fail("mmap segment");
	ra->proc = ar->proc;
	out("attached proc %u workers %u", ar->proc, ar->nb_workers);
}

static void raw_wake(const struct raw_app *ra, unsigned w)
{
	uint64_t one = 1;
	if (write(ra->fds[2 + w], &one, sizeof(one)) != sizeof(one))
		fail("wake worker");
}

/* True once the daemon hung up on us (what it does to a hostile process), within ms. */
static bool raw_hung_up(const struct raw_app *ra, int ms)
{
	struct pollfd p = {.fd = ra->fd, .events = POLLIN};
	char b;
	return poll(&p, 1, ms) == 1 && recv(ra->fd, &b, 1, MSG_DONTWAIT) <= 0;
}

static int cmd_garbage_ring(char **argv)
{
	struct raw_app ra;
	raw_attach(&ra);
	for (unsigned w = 0; w < ra.lay.nb_workers; w++) {
		struct chan_ring *r = chan_cmd_ring(ra.base, &ra.lay, ra.proc, w);
		if (strcmp(argv[0], "tail") == 0) {
			/* A producer position far past the consumer's: more entries than fit. */
			atomic_store(&r->tail, atomic_load(&r->head) + ra.lay.cmd_mask + 100);
		} else {
			for (unsigned i = 0; i < 64; i++)
				chan_ring_put(r, ra.lay.cmd_mask, rnd64());
		}
		raw_wake(&ra, w);
	}
	if (raw_hung_up(&ra, IO_TIMEOUT_S * 1000)) {
		out("disconnected");
		return 0;
	}
	out("FAIL still attached after %d s", IO_TIMEOUT_S);
	return 1;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Hex digits into buf (at most len bytes); the count, or -1 for a bad digit. */
static int unhex(const char *hex, uint8_t *buf, size_t len)
{
	size_t n = 0;
	for (; hex[0] != '\0' && hex[0] != '\n' && n < len; hex += 2, n++) {
		int hi = hexval(hex[0]), lo = hex[1] != '\0' ? hexval(hex[1]) : -1;
		if (hi < 0 || lo < 0)
			return -1;
		buf[n] = (uint8_t)(hi << 4 | lo);
	}
	return (int)n;
}

/* Posts the call in slot to worker w and waits for its answer: "rep ERR SOCK0 COUNT", or
 * "gone" when the daemon hung up instead. */
static void raw_call(struct raw_app *ra, unsigned w, unsigned slot)
{
	struct chan_call *c = slot < CHAN_CALL_SLOTS
				      ? chan_call_at(ra->base, &ra->lay, ra->proc, slot) : NULL;
	chan_ring_put(chan_cmd_ring(ra->base, &ra->lay, ra->proc, w), ra->lay.cmd_mask,
		      chan_cmd(CHAN_CMD_CALL, slot, 0));
	raw_wake(ra, w);
	for (int i = 0; i < IO_TIMEOUT_S * 1000; i++) {
		if (c != NULL && atomic_load(&c->state) == CHAN_CALL_DONE) {
			out("rep %d %u %u", c->rep.err, c->rep.socks[0], c->rep.count);
			atomic_store(&c->state, CHAN_CALL_IDLE);
			return;
		}
		if (raw_hung_up(ra, 1)) {
			out("gone");
			return;
		}
	}
	out("FAIL no answer within %d s", IO_TIMEOUT_S);
	exit(1);
}

/* A hostile application speaking the channel by hand, one line of stdin at a time:
 *   call W HEX        the chan_req HEX (as Python builds it) as a call on worker W
 *   slot W N STATE    a CALL command for slot N whose state is STATE (no request written)
 *   msg HEX           HEX as a message on the unix connection
 * Each answers "rep ERR SOCK0 COUNT" or "gone" (the daemon hung up); at end of input the
 * program exits. */
static int cmd_raw_calls(char **argv)
{
	(void)argv;
	struct raw_app ra;
	raw_attach(&ra);
	char line[8192];
	uint8_t buf[4096];
	while (fgets(line, sizeof(line), stdin) != NULL) {
		unsigned w = 0, slot = 0, state = 0;
		char hex[sizeof(line)];
		if (sscanf(line, "call %u %8191s", &w, hex) == 2) {
			struct chan_call *c = chan_call_at(ra.base, &ra.lay, ra.proc, 0);
			memset(&c->req, 0, sizeof(c->req));
			if (w >= ra.lay.nb_workers || unhex(hex, (uint8_t *)&c->req, sizeof(c->req)) < 0) {
				out("FAIL bad line %s", line);
				return 2;
			}
			atomic_store(&c->state, CHAN_CALL_POSTED);
			raw_call(&ra, w, 0);
		} else if (sscanf(line, "slot %u %u %u", &w, &slot, &state) == 3) {
			if (slot < CHAN_CALL_SLOTS)
				atomic_store(&chan_call_at(ra.base, &ra.lay, ra.proc, slot)->state, state);
			raw_call(&ra, w % ra.lay.nb_workers, slot);
		} else if (sscanf(line, "msg %8191s", hex) == 1) {
			int n = unhex(hex, buf, sizeof(buf));
			if (n < 0 || send(ra.fd, buf, (size_t)n, 0) != n)
				fail("send message");
			out(raw_hung_up(&ra, IO_TIMEOUT_S * 1000) ? "gone" : "FAIL kept");
		} else {
			out("FAIL bad line %s", line);
			return 2;
		}
	}
	return 0;
}

/* ---- scribble: garbage over everything the application can write ---- */

/* The library keeps the segment to itself; /proc/self/maps names the memfd. */
static void *find_segment(size_t *len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		if (strstr(line, "/memfd:dpstack-app") != NULL &&
		    sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			fclose(f);
			*len = hi - lo;
			return (void *)lo;
		}
	}
	if (f != NULL)
		fclose(f);
	return NULL;
}

/* Connects to an echo server, then overwrites the positions and bytes of the socket's
 * FIFOs, the socket records, the rings and the header with random words, and pokes the
 * daemon (a write makes the library queue a kick). The daemon must stay up; what happens to
 * this process does not matter. */
static int cmd_scribble(char **argv)
{
	struct sockaddr_in to = addr_of(argv[0], argv[1]);
	int fd = tcp_connect(&to);
	char buf[4];
	if (write_all(fd, "ping", 4) != 0 || read_all(fd, buf, 4) != 0)
		fail("echo");
	size_t len;
	uint64_t *seg = find_segment(&len);
	if (seg == NULL) {
		out("FAIL segment not found in /proc/self/maps");
		return 1;
	}
	const struct chan_seg_hdr *hdr = (const void *)seg;
	struct chan_layout lay;
	chan_layout(&lay, hdr->nb_workers, hdr->max_socks, hdr->arena_size);
	if (lay.seg_size != len) {
		out("FAIL segment of %zu bytes, layout says %llu", len,
		    (unsigned long long)lay.seg_size);
		return 1;
	}
	/* The FIFOs first (positions and data), while the records still say where they are. */
	for (uint32_t s = 0; s < lay.max_socks; s++) {
		struct chan_sock *ss = chan_sock_at(seg, &lay, s);
		const uint64_t offs[4] = {ss->rx_off, ss->tx_off, ss->rx_pos_off, ss->tx_pos_off};
		const uint64_t sizes[4] = {ss->rx_size, ss->tx_size, sizeof(struct fifo_pos),
					   sizeof(struct fifo_pos)};
		for (int k = 0; k < 4; k++) {
			if (offs[k] < lay.arenas_off || offs[k] + sizes[k] > lay.seg_size)
				continue;
			uint64_t *f = seg + offs[k] / sizeof(uint64_t);
			for (size_t i = 0; i < sizes[k] / sizeof(uint64_t); i++)
				f[i] = rnd64();
		}
	}
	/* Then everything before the arenas: header, socket records, command and event rings. */
	for (size_t i = 0; i < lay.arenas_off / sizeof(uint64_t); i++)
		seg[i] = rnd64();
	out("scribbled");
	for (int i = 0; i < 100; i++) {
		dps_send(fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
		dps_recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		usleep(10 * 1000);
	}
	out("done");
	return 0;
}

/* ---- errno-checks ---- */

/* The same checks run on the stack (dps_*) and on the kernel (libc, in the peer's
 * namespace), so the test compares the stack with Linux itself. */
struct api {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*close)(int);
	int (*shutdown)(int, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*send)(int, const void *, size_t, int);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*poll)(struct pollfd *, nfds_t, int);
};

/* glibc declares some of these with transparent unions: wrappers give them one type. */
static int k_bind(int fd, const struct sockaddr *a, socklen_t l) { return bind(fd, a, l); }
static int k_accept4(int fd, struct sockaddr *a, socklen_t *l, int fl)
{
	return accept4(fd, a, l, fl);
}
static int k_connect(int fd, const struct sockaddr *a, socklen_t l) { return connect(fd, a, l); }
static int k_getpeername(int fd, struct sockaddr *a, socklen_t *l)
{
	return getpeername(fd, a, l);
}

static const struct api api_kernel = {
	socket, k_bind, listen, k_accept4, k_connect, close, shutdown, read, send, getsockopt,
	setsockopt, k_getpeername, poll,
};
static const struct api api_dps = {
	dps_socket, dps_bind, dps_listen, dps_accept4, dps_connect, dps_close, dps_shutdown,
	dps_read, dps_send, dps_getsockopt, dps_setsockopt, dps_getpeername, dps_poll,
};

static const struct api *A;

/* What a call returned: "ok" (>= 0 except a read's 0), "eof", or the errno's name. */
static const char *res(long rc)
{
	return rc >= 0 ? "ok" : errname(errno);
}

static const char *res_read(ssize_t rc)
{
	return rc == 0 ? "eof" : res(rc);
}

static int sock_tcp(int flags)
{
	int fd = A->socket(AF_INET, SOCK_STREAM | flags, 0);
	if (fd < 0)
		fail("socket");
	return fd;
}

static void check(const char *name, const char *result)
{
	out("%s %s", name, result);
}

/* Waits for what until the timeout; the revents. */
static short wait_for(int fd, short what)
{
	struct pollfd p = {.fd = fd, .events = what};
	return A->poll(&p, 1, 10000) == 1 ? p.revents : 0;
}

static int cmd_errno_checks(char **argv)
{
	A = strcmp(argv[0], "kernel") == 0 ? &api_kernel : &api_dps;
	struct sockaddr_in refused = addr_of(argv[1], argv[2]);
	struct sockaddr_in listener = addr_of(argv[3], argv[4]);
	struct sockaddr_in resetter = addr_of(argv[5], argv[6]);
	struct sockaddr_in local = addr_of(argv[7], argv[8]);
	int fd, fd2, v;
	socklen_t vl;
	char buf[16];

	fd = sock_tcp(0);
	check("connect_refused", res(A->connect(fd, (void *)&refused, sizeof(refused))));
	A->close(fd);

	fd = sock_tcp(SOCK_NONBLOCK);
	check("connect_nonblock", res(A->connect(fd, (void *)&listener, sizeof(listener))));
	check("connect_nonblock_writable", (wait_for(fd, POLLOUT) & POLLOUT) ? "ok" : "no");
	vl = sizeof(v);
	v = -1;
	check("connect_nonblock_so_error",
	      A->getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &vl) == 0 ? errname(v) : "getsockopt");
	check("connect_again_connected", res(A->connect(fd, (void *)&listener, sizeof(listener))));
	check("read_nonblock_nothing", res(A->read(fd, buf, sizeof(buf))));
	A->close(fd);

	fd = sock_tcp(SOCK_NONBLOCK);
	check("connect_nonblock_refused", res(A->connect(fd, (void *)&refused, sizeof(refused))));
	wait_for(fd, POLLOUT);
	vl = sizeof(v);
	v = -1;
	check("connect_nonblock_refused_so_error",
	      A->getsockopt(fd, SOL_SOCKET, SO_ERROR, &v, &vl) == 0 ? errname(v) : "getsockopt");
	check("connect_again_refused", res(A->connect(fd, (void *)&refused, sizeof(refused))));
	A->close(fd);

	fd = sock_tcp(SOCK_NONBLOCK);
	A->connect(fd, (void *)&refused, sizeof(refused));
	wait_for(fd, POLLOUT);
	check("connect_again_refused_before_so_error",
	      res(A->connect(fd, (void *)&refused, sizeof(refused))));
	A->close(fd);

	fd = sock_tcp(0);
	check("connect_to_resetter", res(A->connect(fd, (void *)&resetter, sizeof(resetter))));
	check("send_to_resetter", res(A->send(fd, "x", 1, MSG_NOSIGNAL))); /* it resets now */
	wait_for(fd, POLLIN);
	check("read_after_reset", res_read(A->read(fd, buf, sizeof(buf))));
	check("read_after_reset_again", res_read(A->read(fd, buf, sizeof(buf))));
	check("write_after_reset", res(A->send(fd, "x", 1, MSG_NOSIGNAL)));
	A->close(fd);

	fd = sock_tcp(0);
	fd2 = sock_tcp(0);
	check("bind_first", res(A->bind(fd, (void *)&local, sizeof(local))));
	check("bind_same_port_while_bound", res(A->bind(fd2, (void *)&local, sizeof(local))));
	check("bind_socket_twice", res(A->bind(fd, (void *)&local, sizeof(local))));
	A->close(fd2);
	check("listen_bound", res(A->listen(fd, 16)));
	fd2 = sock_tcp(0);
	check("bind_same_port_while_listening", res(A->bind(fd2, (void *)&local, sizeof(local))));
	A->close(fd2);
	check("accept4_bad_flags", res(A->accept4(fd, NULL, NULL, 0x40000000)));
	A->setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){.tv_usec = 1000},
		      sizeof(struct timeval));
	check("accept_nothing_with_timeout", res(A->accept4(fd, NULL, NULL, 0)));
	check("connect_on_listener", res(A->connect(fd, (void *)&listener, sizeof(listener))));
	check("close_listener", res(A->close(fd)));
	check("close_twice", res(A->close(fd)));

	fd = sock_tcp(0);
	check("read_unconnected", res(A->read(fd, buf, sizeof(buf))));
	check("write_unconnected", res(A->send(fd, "x", 1, MSG_NOSIGNAL)));
	vl = sizeof(refused);
	check("getpeername_unconnected",
	      res(A->getpeername(fd, (struct sockaddr *)&refused, &vl)));
	check("shutdown_unconnected", res(A->shutdown(fd, SHUT_WR)));
	check("accept_unlistened", res(A->accept4(fd, NULL, NULL, 0)));
	v = 1;
	check("setsockopt_unknown", res(A->setsockopt(fd, SOL_SOCKET, 9999, &v, sizeof(v))));
	A->close(fd);

	fd = A->socket(AF_INET, SOCK_DGRAM, 0);
	check("udp_send_no_destination", res(A->send(fd, "x", 1, 0)));
	check("udp_listen", res(A->listen(fd, 1)));
	check("udp_bind", res(A->bind(fd, (void *)&local, sizeof(local))));
	fd2 = A->socket(AF_INET, SOCK_DGRAM, 0);
	check("udp_bind_same_port", res(A->bind(fd2, (void *)&local, sizeof(local))));
	A->close(fd2);
	A->close(fd);
	check("done", "ok");
	return 0;
}

/* ---- main ---- */

static const struct app_cmd cmds[] = {
	{"sizes", 0, cmd_sizes},
	{"connect-echo", 3, cmd_connect_echo},
	{"zc-echo", 3, cmd_zc_echo},
	{"write-close", 3, cmd_write_close},
	{"udp-echo", 2, cmd_udp_echo},
	{"udp-ping", 4, cmd_udp_ping},
	{"fork-server", 3, cmd_fork_server},
	{"accept-later", 3, cmd_accept_later},
	{"listen-close", 1, cmd_listen_close},
	{"many-sockets", 3, cmd_many_sockets},
	{"restart-probe", 3, cmd_restart_probe},
	{"garbage-ring", 1, cmd_garbage_ring},
	{"raw-calls", 0, cmd_raw_calls},
	{"scribble", 2, cmd_scribble},
	{"errno-checks", 9, cmd_errno_checks},
};

int main(int argc, char **argv)
{
	/* SIGPIPE would end a check that expects EPIPE. */
	signal(SIGPIPE, SIG_IGN);
	return app_cmd_run(cmds, sizeof(cmds) / sizeof(cmds[0]), argc, argv,
			   "dps_apptest sizes | connect-echo ADDR PORT BYTES | "
			   "zc-echo ADDR PORT BYTES | write-close ADDR PORT BYTES | "
			   "udp-echo PORT COUNT | udp-ping ADDR PORT COUNT SIZE | "
			   "fork-server PORT N per-conn|prefork | accept-later PORT BACKLOG N | "
			   "listen-close PORT | many-sockets ADDR PORT N | "
			   "restart-probe ADDR PORT FLAGFILE | garbage-ring random|tail | raw-calls | "
			   "scribble ADDR PORT | errno-checks dps|kernel REFUSED_ADDR PORT "
			   "LISTEN_ADDR PORT RESET_ADDR PORT BIND_ADDR PORT");
}
