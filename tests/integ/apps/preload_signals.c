/* For tests/integ/test_preload.py: how blocking calls meet a signal handler, printed one line
 * per case so that a run on the kernel and a run under the preload shim can be compared
 * line by line. Linux's rules: a blocking socket call without a timeout is resumed after a
 * handler installed with SA_RESTART and fails with EINTR after one without (but returns
 * what it already did); with SO_RCVTIMEO/SO_SNDTIMEO it fails with EINTR either way; poll,
 * select and epoll always fail with EINTR; ppoll, pselect and epoll_pwait install their
 * mask atomically with the sleep, so a signal pending at the call and unblocked by the mask
 * ends it at once; threads blocked on one socket each take their own signals.
 *
 * Usage: preload_signals PEER_IP PEER_PORT LOCAL_IP LOCAL_PORT
 * The peer answers each connection's first byte: 'r' → one byte back after a second; 's' →
 * after a second, reads everything until the end (its receive buffer is small). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static struct sockaddr_in peer, local;

static void on_alarm(int sig)
{
	(void)sig;
	handled++;
}

static void handler(int flags)
{
	struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	handled = 0;
}

/* SIGALRM in 100 ms, while the call below is asleep. */
static void alarm_soon(void)
{
	struct itimerval it = {.it_value = {.tv_usec = 100000}};
	setitimer(ITIMER_REAL, &it, NULL);
}

static void report(const char *name, long ret)
{
	int e = errno;
	if (ret < 0)
		printf("%s: -1 %s handled=%d\n", name, e == EINTR ? "EINTR" : strerror(e),
		       (int)handled);
	else
		printf("%s: %s handled=%d\n", name, ret > 0 ? "positive" : "0", (int)handled);
	fflush(stdout);
}

static int peer_conn(char what)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&peer, sizeof(peer)) != 0 ||
	    write(fd, &what, 1) != 1) {
		perror("peer connection");
		exit(1);
	}
	return fd;
}

static void case_recv(const char *name, int flags, int timeout_ms)
{
	int fd = peer_conn('r');
	if (timeout_ms > 0) {
		struct timeval tv = {.tv_sec = timeout_ms / 1000,
				     .tv_usec = (timeout_ms % 1000) * 1000};
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	handler(flags);
	alarm_soon();
	char c;
	report(name, recv(fd, &c, 1, 0));
	close(fd);
}

/* Fills the send path until a blocking send has to wait for the peer's reading: the peer's
 * small receive window is full and nothing moves until it reads. */
static void case_send(const char *name, int flags)
{
	int fd = peer_conn('s');
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	static char buf[65536];
	for (int round = 0; round < 2; round++) {
		while (send(fd, buf, sizeof(buf), 0) > 0) {
		}
		usleep(100000); /* what was in flight settles; then top up again */
	}
	fcntl(fd, F_SETFL, fl);
	handler(flags);
	alarm_soon();
	report(name, send(fd, buf, sizeof(buf), 0));
	close(fd);
}

/* A second thread, which the timer's signal never picks: it is for the main thread. */
static pthread_t start_helper(void *(*fn)(void *), void *arg)
{
	sigset_t alrm, old;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &old);
	pthread_t t;
	pthread_create(&t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t;
}

static int shared_fd;

static void *first_reader(void *arg)
{
	char c;
	*(long *)arg = recv(shared_fd, &c, 1, 0);
	return NULL;
}

/* Two threads in recv on one socket: the signal ends the second one's call only. */
static void case_two_readers(void)
{
	shared_fd = peer_conn('r');
	long first = -2;
	pthread_t t = start_helper(first_reader, &first);
	usleep(50000); /* the first reader is asleep before the second comes */
	handler(0);
	alarm_soon();
	char c;
	report("recv second reader norestart", recv(shared_fd, &c, 1, 0));
	pthread_join(t, NULL);
	printf("recv first reader: %s\n", first > 0 ? "positive" : "failed");
	close(shared_fd);
}

static void *connect_later(void *arg)
{
	(void)arg;
	usleep(500000);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	if (connect(fd, (struct sockaddr *)&local, sizeof(local)) != 0)
		perror("connect to own listener");
	usleep(200000);
	close(fd);
	return NULL;
}

static void case_accept(const char *name, int flags)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	int one = 1;
	setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l, (struct sockaddr *)&local, sizeof(local)) != 0 || listen(l, 8) != 0) {
		perror("listener");
		exit(1);
	}
	pthread_t t = start_helper(connect_later, NULL);
	handler(flags);
	alarm_soon();
	int c = accept(l, NULL, NULL);
	report(name, c);
	pthread_join(t, NULL);
	if (c >= 0)
		close(c);
	close(l);
}

/* The waits that always end with EINTR, SA_RESTART or not. */
static void case_waits(void)
{
	int fd = peer_conn('r');
	handler(SA_RESTART);
	alarm_soon();
	struct pollfd p = {.fd = fd, .events = POLLIN};
	report("poll restart", poll(&p, 1, 2000));
	handler(SA_RESTART);
	alarm_soon();
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	struct timeval tv = {.tv_sec = 2};
	report("select restart", select(fd + 1, &rd, NULL, NULL, &tv));
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	handler(SA_RESTART);
	alarm_soon();
	report("epoll_wait restart", epoll_wait(ep, &out, 1, 2000));
	close(ep);
	close(fd);
}

/* SIGALRM blocked and pending when the call starts; its mask unblocks it. */
static void pend_alarm(sigset_t *unblocked)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_BLOCK, &block, unblocked);
	sigdelset(unblocked, SIGALRM);
	handler(0);
	raise(SIGALRM);
}

static void unblock_alarm(void)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
}

static void case_masks(void)
{
	int fd = peer_conn('r');
	sigset_t m;
	struct timespec ts = {.tv_sec = 2};
	pend_alarm(&m);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	report("ppoll mask", ppoll(&p, 1, &ts, &m));
	unblock_alarm();
	pend_alarm(&m);
	fd_set rd;
	FD_ZERO(&rd);
	FD_SET(fd, &rd);
	report("pselect mask", pselect(fd + 1, &rd, NULL, NULL, &ts, &m));
	unblock_alarm();
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd}, out;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	pend_alarm(&m);
	report("epoll_pwait mask", epoll_pwait(ep, &out, 1, 2000, &m));
	unblock_alarm();
	close(ep);
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s PEER_IP PEER_PORT LOCAL_IP LOCAL_PORT\n", argv[0]);
		return 2;
	}
	peer = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
	local = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(atoi(argv[4]))};
	if (inet_pton(AF_INET, argv[1], &peer.sin_addr) != 1 ||
	    inet_pton(AF_INET, argv[3], &local.sin_addr) != 1) {
		fprintf(stderr, "bad address\n");
		return 2;
	}
	case_recv("recv restart", SA_RESTART, 0);
	case_recv("recv norestart", 0, 0);
	case_recv("recv timeo restart", SA_RESTART, 2000);
	case_two_readers();
	case_send("send restart", SA_RESTART);
	case_send("send norestart", 0);
	case_accept("accept restart", SA_RESTART);
	case_accept("accept norestart", 0);
	case_waits();
	case_masks();
	printf("done\n");
	return 0;
}
