/* dps-http: an HTTP/1.1 server on dpstack.
 *
 *   dps-http [-a ADDR] [-p PORT] [-d DIR] [-t IDLE_SECONDS]
 *
 * Serves GET and HEAD for the files below DIR (index.html for a directory), or without -d a
 * built-in page at "/". Default port 8080. One thread, non-blocking sockets on an
 * edge-triggered dps_epoll; persistent connections with pipelining, Content-Length framing,
 * and a connection that makes no progress for IDLE_SECONDS (default 30) is closed.
 *
 *   DPSTACK_SOCK=/run/dpstack/app.sock dps-http -p 8080 -d /var/www
 *   curl -v http://STACK_ADDR:8080/ http://STACK_ADDR:8080/index.html
 *
 * The HTTP part lives in http_common.c, shared with dps-https; this file is the transport:
 * the bytes go straight to and from the socket. */
#include <stdio.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "http_common.h"

static int plain_open(int fd, void **ctx)
{
	*ctx = NULL;
	return 0;
}

static ssize_t plain_read(int fd, void *ctx, void *buf, size_t len)
{
	return dps_read(fd, buf, len);
}

static ssize_t plain_write(int fd, void *ctx, const void *buf, size_t len)
{
	/* A client that resets mid-response gets EPIPE here rather than killing the server. */
	return dps_send(fd, buf, len, MSG_NOSIGNAL);
}

static int plain_shutdown(int fd, void *ctx)
{
	return dps_shutdown(fd, SHUT_WR);
}

static void plain_close(int fd, void *ctx)
{
	dps_close(fd);
}

static const struct http_transport plain = {
	.name = "dps-http",
	.open = plain_open,
	.read = plain_read,
	.write = plain_write,
	.shutdown = plain_shutdown,
	.close = plain_close,
};

static int usage(int rc)
{
	fprintf(rc == 0 ? stdout : stderr, "usage: dps-http " HTTP_CONFIG_USAGE "\n");
	return rc;
}

int main(int argc, char **argv)
{
	struct http_config cfg;
	http_config_init(&cfg, 8080);
	int opt;
	while ((opt = getopt(argc, argv, HTTP_CONFIG_OPTS "h")) != -1)
		if (opt == 'h' || http_config_option(&cfg, opt, optarg) != 0)
			return usage(opt == 'h' ? 0 : 2);
	if (optind != argc)
		return usage(2);
	return http_serve(&cfg, &plain);
}
