/* preload_forks N: forks N times while two other threads keep creating stack sockets and
 * setting options on them before they are bound (the shim's pending table changes all the
 * time). Each child creates and closes a stack socket, then exits. Prints "forks N", or
 * "hung child" when one did not exit within 5 s (it is killed): a lock the fork copied as
 * held would leave it waiting for ever. Run under the preload shim. */
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_TIMEOUT_MS 5000

static atomic_bool stop;

static void *churn(void *arg)
{
	(void)arg;
	int one = 1;
	while (!atomic_load(&stop)) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		for (int i = 0; fd >= 0 && i < 32; i++)
			setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		if (fd >= 0)
			close(fd);
	}
	return NULL;
}

/* The child's exit status, or -1 when it did not exit in time. */
static int reap(pid_t pid)
{
	for (int ms = 0; ms < CHILD_TIMEOUT_MS; ms++) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;
	if (n <= 0) {
		fprintf(stderr, "usage: preload_forks N\n");
		return 2;
	}
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, churn, NULL);
	int rc = 0;
	for (long i = 0; i < n && rc == 0; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			int fd = socket(AF_INET, SOCK_STREAM, 0);
			_exit(fd >= 0 && close(fd) == 0 ? 0 : 1);
		}
		int status = pid > 0 ? reap(pid) : -1;
		if (status == -1) {
			printf("hung child after %ld forks\n", i);
			rc = 1;
		} else if (status != 0) {
			printf("child failed: status %d\n", status);
			rc = 1;
		}
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (rc == 0)
		printf("forks %ld\n", n);
	return rc;
}
