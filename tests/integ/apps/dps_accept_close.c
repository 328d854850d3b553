/* dps_accept_close ADDR PORT SECONDS: threads accept on a listener that the main thread
 * replaces and closes again and again (SO_REUSEPORT lets the next one listen first), while
 * other threads connect to ADDR:PORT all along, for tests/integ/test_apps.py. A thread in
 * accept(2) has the listener as long as it is in there, as on Linux: closing it never
 * breaks the process. Prints "cycles N accepted M", then "alive" when the daemon still
 * serves the process (a new listener works), or "FAIL ..." and exits 1. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <dpstack/dpstack.h>

#define ACCEPTERS 3
#define CLIENTS 3

static struct sockaddr_in addr;
static _Atomic int listener = -1;
static atomic_bool stop;
static atomic_long accepted;

static void set_timeout_ms(int fd, int opt, long ms)
{
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000};
	dps_setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof(tv));
}

/* A listener on addr's port among those of the same group; -errno on failure. */
static int listen_on(void)
{
	int fd = dps_socket(AF_INET, SOCK_STREAM, 0), one = 1;
	if (fd < 0)
		return -errno;
	dps_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	dps_setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	set_timeout_ms(fd, SO_RCVTIMEO, 50); /* an accepter looks at the newest one soon */
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = addr.sin_port};
	if (dps_bind(fd, (struct sockaddr *)&any, sizeof(any)) != 0 || dps_listen(fd, 64) != 0) {
		int e = errno;
		dps_close(fd);
		return -e;
	}
	return fd;
}

/* Accepts on whichever listener is current; EBADF, EINVAL (the number was closed, or
 * reused by another socket meanwhile) and EAGAIN (the timeout) just go round again. */
static void *accepter(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int c = dps_accept(atomic_load(&listener), NULL, NULL);
		if (c >= 0) {
			atomic_fetch_add(&accepted, 1);
			dps_close(c);
		}
	}
	return NULL;
}

static void *client(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop)) {
		int fd = dps_socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			continue;
		set_timeout_ms(fd, SO_SNDTIMEO, 200);
		dps_connect(fd, (struct sockaddr *)&addr, sizeof(addr));
		dps_close(fd);
	}
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: dps_accept_close ADDR PORT SECONDS\n");
		return 2;
	}
	addr = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
	inet_pton(AF_INET, argv[1], &addr.sin_addr);
	setvbuf(stdout, NULL, _IOLBF, 0);
	double end = now_s() + atof(argv[3]);
	int fd = listen_on();
	if (fd < 0) {
		printf("FAIL listen %s\n", strerror(-fd));
		return 1;
	}
	atomic_store(&listener, fd);
	pthread_t t[ACCEPTERS + CLIENTS];
	for (int i = 0; i < ACCEPTERS + CLIENTS; i++)
		pthread_create(&t[i], NULL, i < ACCEPTERS ? accepter : client, NULL);
	long cycles = 0;
	int rc = 0;
	while (rc == 0 && now_s() < end) {
		int next = listen_on();
		if (next < 0) {
			printf("FAIL listen after %ld cycles: %s\n", cycles, strerror(-next));
			rc = 1;
			break;
		}
		dps_close(atomic_exchange(&listener, next));
		cycles++;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < ACCEPTERS + CLIENTS; i++)
		pthread_join(t[i], NULL);
	dps_close(atomic_load(&listener));
	printf("cycles %ld accepted %ld\n", cycles, atomic_load(&accepted));
	if (rc == 0) {
		fd = listen_on();
		if (fd < 0) {
			printf("FAIL the daemon no longer serves us: %s\n", strerror(-fd));
			rc = 1;
		} else {
			printf("alive\n");
			dps_close(fd);
		}
	}
	return rc;
}
