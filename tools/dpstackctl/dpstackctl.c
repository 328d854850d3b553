/* dpstackctl: configure and observe a running dpstackd over its control socket. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dpstack/ctl.h>

#include "capture_client.h"
#include "ctl_client.h"
#include "monitor.h"

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
		"  dpstackctl capture PORT ... -w FILE\n"
		"             pcapng to FILE; -w - (or no -w) to stdout, which must not be a\n"
		"             terminal: dpstackctl capture port0 -w - | tshark -r -\n"
		"  dpstackctl monitor [-j] [interval SEC] [count N]\n"
		"             live rates per port and worker, refreshed like top (q quits);\n"
		"             -j: one JSON object per interval and line\n"
		"\n"
		"Exit status: 0 success, 1 the daemon refused the command, 2 usage or connection "
		"error.\n");
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

	if (strcmp(argv[optind], "monitor") == 0)
		return monitor_main(path, json, argc - optind - 1, argv + optind + 1);

	/* capture: the pcapng stream follows "ok" (capture_client.c). */
	int capture_out = -1;
	if (strcmp(argv[optind], "capture") == 0) {
		int words = argc - optind;
		capture_out = capture_client_output(&words, argv + optind);
		if (capture_out < 0)
			return 2;
		argc = optind + words;
	}

	char err[CTL_CLIENT_ERR_MAX];
	int fd = ctl_client_send(path, json, argc - optind, argv + optind, CTL_TIMEOUT_S, err);
	if (fd < 0) {
		fprintf(stderr, "dpstackctl: %s\n", err);
		return 2;
	}
	int status = ctl_client_status(fd, path, err);
	if (status < 0) {
		fprintf(stderr, "dpstackctl: %s\n", err);
		close(fd);
		return 2;
	}
	bool ok = status == 1;
	if (ok && capture_out >= 0)
		return capture_client_relay(fd, capture_out);
	FILE *out = ok ? stdout : stderr;
	if (!ok)
		fputs("dpstackctl: ", stderr);
	char buf[65536];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "dpstackctl: receive: %s\n", strerror(errno));
			close(fd);
			return 2;
		}
		if (n == 0)
			break;
		fwrite(buf, 1, (size_t)n, out);
	}
	close(fd);
	return ok ? 0 : 1;
}
