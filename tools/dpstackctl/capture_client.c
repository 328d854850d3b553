#include "capture_client.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* pcapng block types and the option the summary comes in
 * (draft-ietf-opsawg-pcapng, sections 3.1, 4.6 and 3.5). */
#define PCAPNG_ISB 5u
#define PCAPNG_OPT_COMMENT 1u
#define PCAPNG_ISB_FIXED 20u    /* type, length, interface, timestamp high and low */
#define PCAPNG_BLOCK_MIN 12u

int capture_client_output(int *argc, char **argv)
{
	const char *path = NULL;
	int n = 0;
	for (int i = 0; i < *argc; i++) {
		if (strcmp(argv[i], "-w") != 0) {
			argv[n++] = argv[i];
			continue;
		}
		if (i + 1 == *argc || path != NULL) {
			fprintf(stderr, "dpstackctl: capture: %s\n", path != NULL ? "-w given twice"
						       : "-w needs a file name or -");
			return -1;
		}
		path = argv[++i];
	}
	*argc = n;
	if (path != NULL && strcmp(path, "-") != 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			fprintf(stderr, "dpstackctl: capture: cannot write %s: %s\n", path,
				strerror(errno));
		return fd;
	}
	if (isatty(STDOUT_FILENO)) {
		fprintf(stderr, "dpstackctl: capture writes pcapng, not text: give -w FILE, or "
				"pipe it (-w - | tshark -r -)\n");
		return -1;
	}
	return STDOUT_FILENO;
}

static volatile sig_atomic_t capture_stop_asked;

static void capture_on_signal(int sig)
{
	if (capture_stop_asked)
		_exit(128 + sig);
	capture_stop_asked = 1;
}

/* Follows the block structure of the stream as it passes, to find the daemon's summary:
 * the comment of the interface statistics block written at the end. */
struct pcapng_scan {
	uint8_t block[512];     /* the start of the current block */
	size_t got;             /* its bytes seen so far */
	uint32_t type;
	uint32_t len;           /* 0 until the header is in */
	bool lost;              /* not a block structure we follow: stop looking */
	char summary[256];
};

static uint32_t load_u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v)); /* the daemon's byte order, which is ours */
	return v;
}

static uint16_t load_u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static void pcapng_scan_isb(struct pcapng_scan *s)
{
	size_t end = s->len - 4; /* the trailing length */
	size_t at = PCAPNG_ISB_FIXED;
	while (at + 4 <= end) {
		uint16_t code = load_u16(s->block + at), olen = load_u16(s->block + at + 2);
		at += 4;
		if (code == 0 || olen > end - at)
			return;
		if (code == PCAPNG_OPT_COMMENT) {
			size_t n = olen < sizeof(s->summary) - 1 ? olen : sizeof(s->summary) - 1;
			memcpy(s->summary, s->block + at, n);
			s->summary[n] = '\0';
			return;
		}
		at += (olen + 3u) & ~3u;
	}
}

static void pcapng_scan(struct pcapng_scan *s, const uint8_t *buf, size_t n)
{
	while (n > 0 && !s->lost) {
		size_t want = s->len == 0 ? 8 : s->len;
		size_t take = want - s->got < n ? want - s->got : n;
		if (s->got < sizeof(s->block)) {
			size_t keep = sizeof(s->block) - s->got < take ? sizeof(s->block) - s->got
								       : take;
			memcpy(s->block + s->got, buf, keep);
		}
		s->got += take;
		buf += take;
		n -= take;
		if (s->len == 0 && s->got == 8) {
			s->type = load_u32(s->block);
			s->len = load_u32(s->block + 4);
			s->lost = s->len < PCAPNG_BLOCK_MIN || s->len % 4 != 0;
		} else if (s->len != 0 && s->got == s->len) {
			if (s->type == PCAPNG_ISB && s->len <= sizeof(s->block))
				pcapng_scan_isb(s);
			s->got = 0;
			s->len = 0;
		}
	}
}

static int write_all(int fd, const uint8_t *buf, size_t len, int sock)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR) {
			/* Ctrl-C while the output is slow: the daemon ends the stream. */
			if (capture_stop_asked)
				shutdown(sock, SHUT_WR);
			continue;
		}
		if (n < 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int capture_client_relay(int fd, int out)
{
	struct sigaction sa = {.sa_handler = capture_on_signal};
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a blocked recv or write returns, and the loop asks for the end. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct timeval none = {0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof(none));
	static struct pcapng_scan scan;
	static uint8_t buf[65536];
	bool shut = false;
	for (;;) {
		if (capture_stop_asked && !shut) {
			shutdown(fd, SHUT_WR);
			shut = true;
		}
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "dpstackctl: capture: receive: %s\n", strerror(errno));
			return 2;
		}
		if (n == 0)
			break;
		pcapng_scan(&scan, buf, (size_t)n);
		if (write_all(out, buf, (size_t)n, fd) != 0) {
			fprintf(stderr, "dpstackctl: capture: write: %s\n", strerror(errno));
			return 1;
		}
	}
	if (scan.summary[0] == '\0') {
		fprintf(stderr, "dpstackctl: capture ended without its summary (dpstackd "
				"stopped?)\n");
		return 1;
	}
	fprintf(stderr, "%s\n", scan.summary);
	return 0;
}
