/* dpstackctl: configure and observe a running dpstackd over its control socket. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <dpstack/ctl.h>

#include "capture_client.h"

/* Long enough for the slowest command, a long `ping`; a dead daemon closes the socket. */
#define CTL_TIMEOUT_S 3600

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: dpstackctl [-s SOCKET] [-j] COMMAND...\n"
		"\n"
		"  -s SOCKET  the daemon's control socket (default $" DPSTACK_CTL_ENV " or "
		DPSTACK_CTL_DEFAULT ")\n"
		"  -j         JSON output\n"
		"  -h         this help; 'dpstackctl help' lists the commands\n"
		"\n"
		"capture PORT ... -w FILE writes pcapng to FILE; -w - (or no -w) to stdout, which\n"
		"must not be a terminal: dpstackctl capture port0 -w - | tshark -r -\n"
		"\n"
		"Exit status: 0 success, 1 the daemon refused the command, 2 usage or connection "
		"error.\n");
}

static int send_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = getenv(DPSTACK_CTL_ENV);
	if (path == NULL || path[0] == '\0')
		path = DPSTACK_CTL_DEFAULT;
	bool json = false;
	int opt;
	while ((opt = getopt(argc, argv, "+s:jh")) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		usage(stderr);
		return 2;
	}

	/* capture: the pcapng stream follows "ok" (capture_client.c). */
	int capture_out = -1;
	if (strcmp(argv[optind], "capture") == 0) {
		int words = argc - optind;
		capture_out = capture_client_output(&words, argv + optind);
		if (capture_out < 0)
			return 2;
		argc = optind + words;
	}

	char req[DPSTACK_CTL_MAX_REQUEST];
	size_t len = (size_t)snprintf(req, sizeof(req), "%s %s\n", DPSTACK_CTL_GREETING,
				      json ? "json" : "text");
	if (argc - optind > DPSTACK_CTL_MAX_WORDS) {
		fprintf(stderr, "dpstackctl: more than %d words\n", DPSTACK_CTL_MAX_WORDS);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		size_t n = strlen(argv[i]);
		if (n == 0 || strchr(argv[i], '\n') != NULL) {
			fprintf(stderr, "dpstackctl: empty word or newline in argument %d\n",
				i - optind + 1);
			return 2;
		}
		if (len + n + 2 >= sizeof(req)) {
			fprintf(stderr, "dpstackctl: command too long\n");
			return 2;
		}
		memcpy(req + len, argv[i], n);
		len += n;
		req[len++] = '\n';
	}
	req[len++] = '\n';

	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "dpstackctl: socket path too long: %s\n", path);
		return 2;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "dpstackctl: cannot reach dpstackd at %s: %s (is it running?)\n",
			path, strerror(errno));
		return 2;
	}
	struct timeval tv = {.tv_sec = CTL_TIMEOUT_S};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send_all(fd, req, len) != 0) {
		fprintf(stderr, "dpstackctl: send: %s\n", strerror(errno));
		return 2;
	}

	/* The answer: "ok\n" or "error\n", then the body until the daemon closes. */
	char status[8];
	size_t got = 0;
	while (got < sizeof(status)) {
		ssize_t n = recv(fd, status + got, 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (status[got++] == '\n')
			break;
	}
	bool ok = got == 3 && memcmp(status, "ok\n", 3) == 0;
	bool failed = got == 6 && memcmp(status, "error\n", 6) == 0;
	if (!ok && !failed) {
		fprintf(stderr, "dpstackctl: no answer from dpstackd at %s\n", path);
		return 2;
	}
	if (ok && capture_out >= 0)
		return capture_client_relay(fd, capture_out);
	FILE *out = ok ? stdout : stderr;
	if (failed)
		fputs("dpstackctl: ", stderr);
	char buf[65536];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "dpstackctl: receive: %s\n", strerror(errno));
			return 2;
		}
		if (n == 0)
			break;
		fwrite(buf, 1, (size_t)n, out);
	}
	close(fd);
	return ok ? 0 : 1;
}
