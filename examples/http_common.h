/* The HTTP/1.1 server shared by dps-http and dps-https: request parsing, responses (files
 * below a document root, or a built-in page), persistent and pipelined connections, idle
 * timeouts, and the dps_epoll event loop. The two programs differ only in the transport that
 * carries the bytes: the socket itself, or TLS over it. */
#ifndef DPS_EXAMPLES_HTTP_COMMON_H
#define DPS_EXAMPLES_HTTP_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How a connection's bytes travel. The descriptor is a non-blocking dps socket. */
struct http_transport {
	const char *name;       /* the program's name, for messages and the Server header */
	/* Prepares a newly accepted connection; *ctx is handed to the other hooks. Returns 0,
	 * or -1 to refuse it (the caller then closes fd). */
	int (*open)(int fd, void **ctx);
	/* As dps_read/dps_write: a count, 0 at the end of the stream (read only), or -1 with
	 * errno. EAGAIN means: call again after the socket signals readiness, in either
	 * direction (TLS may have to write in order to read, and the other way round). */
	ssize_t (*read)(int fd, void *ctx, void *buf, size_t len);
	ssize_t (*write)(int fd, void *ctx, const void *buf, size_t len);
	/* Ends the sending direction after the last response: at least
	 * dps_shutdown(fd, SHUT_WR). Returns 0, or -1 with errno (EAGAIN: call again). */
	int (*shutdown)(int fd, void *ctx);
	/* Ends the connection: releases ctx and closes fd with dps_close. */
	void (*close)(int fd, void *ctx);
};

struct http_config {
	const char *addr;       /* listening address, dotted quad */
	int port;
	const char *docroot;    /* serve files from here; NULL: the built-in page */
	int idle_timeout_s;     /* see http_serve */
};

/* The options both servers take, for getopt: -a ADDR -p PORT -d DIR -t SECONDS. */
#define HTTP_CONFIG_OPTS "a:p:d:t:"
#define HTTP_CONFIG_USAGE "[-a ADDR] [-p PORT] [-d DIR] [-t IDLE_SECONDS]"

/* Sets cfg's defaults (0.0.0.0, the given port, the built-in page, 30 s). */
void http_config_init(struct http_config *cfg, int port);

/* Applies one getopt option. Returns 0 if it was one of HTTP_CONFIG_OPTS with a valid value,
 * -1 for an invalid value (after printing why), 1 if opt is not one of them. */
int http_config_option(struct http_config *cfg, int opt, const char *arg);

/* Listens and serves until a fatal error, which it prints before returning 1.
 *
 * A connection must make progress within idle_timeout_s: deliver a complete request, or
 * accept some response bytes. Bytes that do not complete a request do not count, so a
 * client trickling a request (slowloris) is dropped like an idle one. */
int http_serve(const struct http_config *cfg, const struct http_transport *tr);

#endif
