/* For tests/integ/test_preload.py: an unmodified program (no libdpstack) that opens N TCP
 * sockets, so that under the preload shim they are stack sockets numbered above 1024, and
 * hands select(2) a heap fd_set that large. Prints "select -1 EINVAL" (the shim refuses
 * stack sockets beyond FD_SETSIZE), or what select returned instead; "ok" at the end means
 * nothing crashed and every socket closed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1100;
	struct rlimit rl = {.rlim_cur = 4096, .rlim_max = 4096};
	setrlimit(RLIMIT_NOFILE, &rl);
	int *fds = calloc((size_t)n, sizeof(*fds));
	int maxfd = -1;
	for (int i = 0; i < n; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM, 0);
		if (fds[i] < 0) {
			printf("socket %d: %s\n", i, strerror(errno));
			return 1;
		}
		if (fds[i] > maxfd)
			maxfd = fds[i];
	}
	size_t words = (size_t)maxfd / (8 * sizeof(long)) + 1;
	fd_set *rd = calloc(words, sizeof(long));
	((unsigned long *)rd)[maxfd / (8 * sizeof(long))] |= 1ul << (maxfd % (8 * sizeof(long)));
	struct timeval tv = {0, 1000};
	int rc = select(maxfd + 1, rd, NULL, NULL, &tv);
	printf("maxfd %d\n", maxfd);
	if (rc < 0)
		printf("select -1 %s\n", errno == EINVAL ? "EINVAL" : strerror(errno));
	else
		printf("select %d\n", rc);
	for (int i = 0; i < n; i++)
		if (close(fds[i]) != 0) {
			printf("close %d: %s\n", fds[i], strerror(errno));
			return 1;
		}
	free(rd);
	free(fds);
	printf("ok\n");
	return 0;
}
