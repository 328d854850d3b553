/* dps-udp-echo: a UDP echo server (RFC 862) on dpstack.
 *
 *   dps-udp-echo [-a ADDR] [-p PORT] [-n COUNT]
 *
 * Sends every datagram back to its sender, unchanged, with blocking dps_recvfrom and
 * dps_sendto. Default port 7. With -n it exits after echoing COUNT datagrams.
 *
 *   DPSTACK_SOCK=/run/dpstack/app.sock dps-udp-echo -p 7000
 *   echo hello | nc -u -w1 STACK_ADDR 7000 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

/* The largest UDP payload IPv4 can carry, so that no datagram is truncated. */
#define DGRAM_MAX 65507

static int usage(int rc)
{
	fprintf(rc == 0 ? stdout : stderr, "usage: dps-udp-echo [-a ADDR] [-p PORT] [-n COUNT]\n");
	return rc;
}

static int die(const char *what)
{
	fprintf(stderr, "dps-udp-echo: %s: %s\n", what, strerror(errno));
	return 1;
}

/* A decimal in [lo, hi], or -1. */
static long parse_num(const char *s, long lo, long hi)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return errno == 0 && end != s && *end == '\0' && v >= lo && v <= hi ? v : -1;
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	long port = 7, count = 0; /* 0: forever */
	int opt;
	while ((opt = getopt(argc, argv, "a:p:n:h")) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'p': port = parse_num(optarg, 1, 65535); break;
		case 'n': count = parse_num(optarg, 1, LONG_MAX); break;
		default: return usage(opt == 'h' ? 0 : 2);
		}
		if (port < 0 || count < 0)
			return usage(2);
	}
	if (optind != argc)
		return usage(2);
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1) {
		fprintf(stderr, "dps-udp-echo: bad address %s\n", addr);
		return 2;
	}
	int fd = dps_socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		return die("socket");
	if (dps_bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0)
		return die("bind");
	printf("dps-udp-echo: on %s:%ld\n", addr, port);
	fflush(stdout);
	static char buf[DGRAM_MAX];
	for (long done = 0; count == 0 || done < count;) {
		struct sockaddr_in from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = dps_recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fromlen);
		if (n < 0) {
			/* An interrupted wait, or an ICMP error about an earlier reply: not fatal. */
			if (errno == EINTR || errno == ECONNREFUSED || errno == EHOSTUNREACH ||
			    errno == ENETUNREACH)
				continue;
			return die("recvfrom");
		}
		/* A reply that cannot go out (no route, no ARP answer) is lost, as UDP allows;
		 * the server stays up for the next sender. */
		if (dps_sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fromlen) < 0)
			fprintf(stderr, "dps-udp-echo: sendto %s:%u: %s\n", inet_ntoa(from.sin_addr),
				ntohs(from.sin_port), strerror(errno));
		done++;
	}
	dps_close(fd);
	return 0;
}
