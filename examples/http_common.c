/* The HTTP/1.1 part of dps-http and dps-https (see http_common.h).
 *
 * Each connection owns two bounded buffers: `in` holds received bytes until they form a
 * complete request head, `out` holds response bytes until the transport takes them. A file
 * body is copied into `out` a buffer at a time as it drains, so a connection costs the same
 * memory whether it fetches 10 bytes or 10 GB, and a client that reads slowly only stalls its
 * own connection. Requests are answered strictly in order: the next pipelined request is
 * parsed only once the previous response's body has been queued. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "http_common.h"

#define REQ_LINE_MAX 8192      /* longer request lines get 414 */
#define IN_MAX 16384           /* a longer request head gets 431 */
#define OUT_MAX 65536
#define HEAD_ROOM 1024         /* room for any response head plus an error body */
#define CL_DIGITS_MAX 15       /* Content-Length beyond 10^15 is refused, never overflowed */
#define CONNS_MAX 4096         /* bounds the memory: ~80 KB of buffers per connection */
#define FD_RESERVE 16          /* descriptors kept for all but connections and their files */

struct conn {
	int fd;
	void *ctx;                          /* the transport's */
	TAILQ_ENTRY(conn) link;             /* in the server's list, least recent progress first */
	int64_t progress_ms;                /* when it last made progress */
	bool closing;                       /* close once `out` and the body are sent */
	bool shut;                          /* closing, and the sending side is shut */
	bool peer_eof;                      /* the client finished sending */
	uint64_t discard;                   /* request body bytes still to skip */
	/* The body being copied into `out`: from a file, or from memory when body_fd < 0. */
	int body_fd;
	off_t body_pos;
	const char *body_mem;
	uint64_t body_left;
	size_t in_off, in_len;              /* unparsed bytes: in[in_off, in_len) */
	size_t out_off, out_len;            /* unsent bytes: out[out_off, out_len) */
	char in[IN_MAX];
	char out[OUT_MAX];
};

struct server {
	const struct http_transport *tr;
	int root;                           /* the document root directory; -1: built-in page */
	int ep, lfd;
	int64_t timeout_ms;
	size_t nconns, max_conns;
	bool accept_paused;                 /* at max_conns or out of descriptors */
	TAILQ_HEAD(, conn) conns;
};

struct request {
	const char *method, *target;
	size_t method_len, target_len;
	int minor;                          /* HTTP/1.minor */
	bool keep_alive;
	bool chunked;                       /* Transfer-Encoding was sent */
	uint64_t content_length;
	/* parsing state */
	int hosts;
	bool has_length, conn_close, conn_keep_alive;
};

static const char builtin_page[] =
	"<!DOCTYPE html>\n"
	"<html><head><title>dpstack</title></head>\n"
	"<body><h1>Hello from dpstack</h1>\n"
	"<p>This page was served over a userspace TCP/IP stack on DPDK.</p></body></html>\n";

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- configuration ---- */

void http_config_init(struct http_config *cfg, int port)
{
	*cfg = (struct http_config){.addr = "0.0.0.0", .port = port, .idle_timeout_s = 30};
}

static int parse_int(const char *arg, long lo, long hi, long *v)
{
	char *end;
	errno = 0;
	*v = strtol(arg, &end, 10);
	return errno == 0 && end != arg && *end == '\0' && *v >= lo && *v <= hi ? 0 : -1;
}

int http_config_option(struct http_config *cfg, int opt, const char *arg)
{
	long v;
	switch (opt) {
	case 'a':
		cfg->addr = arg;
		return 0;
	case 'd':
		cfg->docroot = arg;
		return 0;
	case 'p':
		if (parse_int(arg, 1, 65535, &v) != 0) {
			fprintf(stderr, "%s: bad port %s\n", program_invocation_short_name, arg);
			return -1;
		}
		cfg->port = (int)v;
		return 0;
	case 't':
		if (parse_int(arg, 1, 86400, &v) != 0) {
			fprintf(stderr, "%s: bad idle timeout %s (1..86400 s)\n",
				program_invocation_short_name, arg);
			return -1;
		}
		cfg->idle_timeout_s = (int)v;
		return 0;
	default:
		return 1;
	}
}

/* ---- request parsing (RFC 9112) ---- */

static bool is_tchar(unsigned char ch)
{
	return isalnum(ch) || (ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
}

static bool is_token(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return false;
	return true;
}

static bool token_is(const char *s, size_t n, const char *word)
{
	return n == strlen(word) && strncasecmp(s, word, n) == 0;
}

/* Methods are case-sensitive (RFC 9110 §9.1). */
static bool method_is(const struct request *rq, const char *m)
{
	return rq->method_len == strlen(m) && memcmp(rq->method, m, rq->method_len) == 0;
}

/* The line starting at p[pos]: its length without CRLF (or a bare LF, which RFC 9112 §2.2
 * lets a recipient accept), and in *next where the following line starts. -1 while its end
 * has not arrived. */
static long line_at(const char *p, size_t len, size_t pos, size_t *next)
{
	const char *lf = memchr(p + pos, '\n', len - pos);
	if (lf == NULL)
		return -1;
	size_t end = (size_t)(lf - p);
	*next = end + 1;
	if (end > pos && p[end - 1] == '\r')
		end--;
	return (long)(end - pos);
}

/* method SP request-target SP HTTP-version. Returns 0 or an error status. */
static int parse_request_line(const char *l, size_t n, struct request *rq)
{
	const char *sp1 = memchr(l, ' ', n);
	if (sp1 == NULL)
		return 400;
	const char *sp2 = memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - l));
	if (sp2 == NULL)
		return 400;
	rq->method = l;
	rq->method_len = (size_t)(sp1 - l);
	rq->target = sp1 + 1;
	rq->target_len = (size_t)(sp2 - rq->target);
	const char *v = sp2 + 1;
	size_t vlen = (size_t)(l + n - v);
	if (!is_token(rq->method, rq->method_len) || rq->target_len == 0)
		return 400;
	for (size_t i = 0; i < rq->target_len; i++) {
		unsigned char ch = (unsigned char)rq->target[i];
		if (ch <= ' ' || ch >= 0x7f)
			return 400;
	}
	if (vlen != 8 || memcmp(v, "HTTP/", 5) != 0 || !isdigit((unsigned char)v[5]) ||
	    v[6] != '.' || !isdigit((unsigned char)v[7]))
		return 400;
	if (v[5] != '1')
		return 505;
	rq->minor = v[7] - '0';
	return 0;
}

/* The value of a Connection header: a comma-separated list of options. */
static void parse_connection(const char *v, size_t n, struct request *rq)
{
	size_t i = 0;
	while (i < n) {
		size_t start = i;
		while (i < n && v[i] != ',')
			i++;
		size_t end = i++;
		while (start < end && (v[start] == ' ' || v[start] == '\t'))
			start++;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (token_is(v + start, end - start, "close"))
			rq->conn_close = true;
		else if (token_is(v + start, end - start, "keep-alive"))
			rq->conn_keep_alive = true;
	}
}

/* field-name ":" OWS field-value OWS. Returns 0 or an error status. */
static int parse_header(const char *l, size_t n, struct request *rq)
{
	/* Folded lines (obs-fold) and whitespace before the colon are refused, as RFC 9112
	 * §5.1-5.2 allow: lenient parsing of either is how requests get smuggled. */
	const char *colon = memchr(l, ':', n);
	if (colon == NULL || !is_token(l, (size_t)(colon - l)))
		return 400;
	size_t name_len = (size_t)(colon - l);
	const char *v = colon + 1, *end = l + n;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	size_t vlen = (size_t)(end - v);
	for (size_t i = 0; i < vlen; i++) {
		unsigned char ch = (unsigned char)v[i];
		if ((ch < ' ' && ch != '\t') || ch == 0x7f)
			return 400;
	}
	if (token_is(l, name_len, "host")) {
		if (++rq->hosts > 1)
			return 400;
	} else if (token_is(l, name_len, "content-length")) {
		if (vlen == 0 || vlen > CL_DIGITS_MAX)
			return 400;
		uint64_t cl = 0;
		for (size_t i = 0; i < vlen; i++) {
			if (!isdigit((unsigned char)v[i]))
				return 400;
			cl = cl * 10 + (uint64_t)(v[i] - '0');
		}
		if (rq->has_length && cl != rq->content_length)
			return 400;
		rq->has_length = true;
		rq->content_length = cl;
	} else if (token_is(l, name_len, "transfer-encoding")) {
		rq->chunked = true;
	} else if (token_is(l, name_len, "connection")) {
		parse_connection(v, vlen, rq);
	}
	return 0;
}

/* Parses the request head at the start of p[0, len). Returns its length, 0 while it is
 * incomplete, or minus an error status. */
static long parse_request(const char *p, size_t len, struct request *rq)
{
	*rq = (struct request){0};
	size_t pos = 0, next;
	/* RFC 9112 §2.2: empty lines before a request line are ignored. */
	while (pos < len && (p[pos] == '\r' || p[pos] == '\n'))
		pos++;
	long n = line_at(p, len, pos, &next);
	if (n < 0)
		return len - pos > REQ_LINE_MAX ? -414 : 0;
	if (n > REQ_LINE_MAX)
		return -414;
	int st = parse_request_line(p + pos, (size_t)n, rq);
	if (st != 0)
		return -st;
	for (;;) {
		pos = next;
		n = line_at(p, len, pos, &next);
		if (n < 0)
			return 0;
		if (n == 0)
			break;
		if ((st = parse_header(p + pos, (size_t)n, rq)) != 0)
			return -st;
	}
	/* RFC 9112 §6.1: both framings at once is an attack or a broken client. §3.2: an
	 * HTTP/1.1 request must name its Host. */
	if ((rq->chunked && rq->has_length) || (rq->minor >= 1 && rq->hosts == 0))
		return -400;
	rq->keep_alive = !rq->conn_close && (rq->minor >= 1 || rq->conn_keep_alive);
	return (long)next;
}

/* ---- responses ---- */

static const char *status_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 503: return "Service Unavailable";
	case 505: return "HTTP Version Not Supported";
	default:  return "Internal Server Error";
	}
}

static const char *content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{"html", "text/html; charset=utf-8"}, {"htm", "text/html; charset=utf-8"},
		{"txt", "text/plain; charset=utf-8"}, {"css", "text/css"},
		{"js", "text/javascript"},            {"json", "application/json"},
		{"png", "image/png"},                 {"jpg", "image/jpeg"},
		{"jpeg", "image/jpeg"},               {"gif", "image/gif"},
		{"svg", "image/svg+xml"},             {"ico", "image/x-icon"},
		{"pdf", "application/pdf"},           {"wasm", "application/wasm"},
	};
	const char *dot = strrchr(name, '.');
	if (dot != NULL && strchr(dot, '/') == NULL)
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcasecmp(dot + 1, types[i].ext) == 0)
				return types[i].type;
	return "application/octet-stream";
}

static void http_date(time_t t, char *buf, size_t n)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%a, %d %b %Y %H:%M:%S GMT", &tm); /* the C locale: English names */
}

/* Appends to `out`. Callers keep within HEAD_ROOM, which conn_produce guarantees free. */
__attribute__((format(printf, 2, 3)))
static void out_printf(struct conn *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(c->out + c->out_len, OUT_MAX - c->out_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		c->out_len += (size_t)n;
}

/* Queues a response head. `extra` holds further header lines, each ending in CRLF. rq is
 * NULL when the request could not be parsed. */
static void put_head(const struct server *s, struct conn *c, int status,
		     const struct request *rq, const char *ctype, uint64_t length,
		     const char *extra)
{
	char date[40];
	http_date(time(NULL), date, sizeof(date));
	const bool keep = rq != NULL && rq->keep_alive && !c->closing;
	/* Persistence is the default in HTTP/1.1 only; a 1.0 client that asked for it is told. */
	const char *connection = !keep ? "Connection: close\r\n"
			       : rq->minor == 0 ? "Connection: keep-alive\r\n" : "";
	out_printf(c,
		   "HTTP/1.1 %d %s\r\n"
		   "Server: %s\r\n"
		   "Date: %s\r\n"
		   "Content-Type: %s\r\n"
		   "Content-Length: %" PRIu64 "\r\n"
		   "%s%s\r\n",
		   status, status_reason(status), s->tr->name, date, ctype, length, extra,
		   connection);
	if (!keep)
		c->closing = true;
}

/* An error (or 405) response with a one-line text body. */
static void respond_status(const struct server *s, struct conn *c, int status,
			   const struct request *rq)
{
	const char *reason = status_reason(status);
	const bool head = rq != NULL && method_is(rq, "HEAD");
	/* After a request that was not understood the stream may be unframed, and after a
	 * server failure the connection's resources are better given back: close. */
	if (status != 404 && status != 403 && status != 405)
		c->closing = true;
	put_head(s, c, status, rq, "text/plain; charset=utf-8", strlen(reason) + 5,
		 status == 405 ? "Allow: GET, HEAD\r\n" : "");
	if (!head)
		out_printf(c, "%03d %s\n", status, reason);
}

/* Maps a request target to a path relative to the document root, in out[outsz].
 * Returns 0 or an error status. */
static int target_to_path(const char *t, size_t n, char *out, size_t outsz)
{
	/* RFC 9112 §3.2.2: a server must accept the absolute form (http://host/path). */
	if (n > 7 && (strncasecmp(t, "http://", 7) == 0 || strncasecmp(t, "https://", 8) == 0)) {
		const size_t scheme = t[4] == ':' ? 7 : 8;
		const char *path = memchr(t + scheme, '/', n - scheme);
		if (path == NULL)
			return target_to_path("/", 1, out, outsz);
		n -= (size_t)(path - t);
		t = path;
	}
	if (t[0] != '/')
		return 400;
	size_t o = 0;
	for (size_t i = 0; i < n && t[i] != '?' && t[i] != '#'; i++) {
		char ch = t[i];
		if (ch == '%') {
			char hex[3] = {0};
			if (i + 2 >= n || !isxdigit((unsigned char)t[i + 1]) ||
			    !isxdigit((unsigned char)t[i + 2]))
				return 400;
			memcpy(hex, t + i + 1, 2);
			ch = (char)strtol(hex, NULL, 16);
			i += 2;
			if (ch == '\0')
				return 400;
		}
		if (o + 1 >= outsz)
			return 414;
		out[o++] = ch;
	}
	out[o] = '\0';
	/* No way out of the document root: any ".." segment is refused, decoded or not. */
	for (const char *seg = out; seg != NULL; seg = strchr(seg, '/')) {
		seg += *seg == '/';
		if (strncmp(seg, "..", 2) == 0 && (seg[2] == '/' || seg[2] == '\0'))
			return 403;
	}
	if (out[o - 1] == '/') {
		if (o + sizeof("index.html") > outsz)
			return 414;
		memcpy(out + o, "index.html", sizeof("index.html"));
	}
	/* The leading slashes go: the path is resolved below the root's descriptor. */
	size_t skip = strspn(out, "/");
	memmove(out, out + skip, strlen(out + skip) + 1);
	return 0;
}

/* openat, then fstat: a descriptor, or -1 with errno. */
static int open_stat(int dir, const char *path, struct stat *st)
{
	/* Non-blocking, or opening a FIFO would block until a writer comes. */
	int fd = openat(dir, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd >= 0 && fstat(fd, st) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Opens a regular file below the root; a directory means its index.html. Returns the
 * descriptor (its type from *name), or minus an HTTP status. Symbolic links are followed,
 * as most servers do by default: they are the site owner's choice. */
static int open_file(const struct server *s, const char *path, struct stat *st,
		     const char **name)
{
	*name = path;
	int fd = open_stat(s->root, path, st);
	if (fd >= 0 && S_ISDIR(st->st_mode)) {
		int dir = fd;
		fd = open_stat(dir, "index.html", st);
		int e = errno;
		close(dir);
		errno = e;
		*name = "index.html";
	}
	if (fd < 0) {
		switch (errno) {
		case EACCES: case EPERM:
			return -403;
		case ENOENT: case ENOTDIR: case ELOOP: case ENAMETOOLONG:
			return -404;
		case EMFILE: case ENFILE: case ENOMEM:
			return -503; /* out of descriptors: closing this connection frees one */
		default:
			return -500;
		}
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return -404;
	}
	return fd;
}

static void respond_get(const struct server *s, struct conn *c, const struct request *rq)
{
	const bool head = method_is(rq, "HEAD");
	char path[REQ_LINE_MAX + sizeof("index.html")];
	int st = target_to_path(rq->target, rq->target_len, path, sizeof(path));
	if (st != 0) {
		respond_status(s, c, st, rq);
		return;
	}
	if (s->root < 0) {
		if (strcmp(path, "index.html") != 0) {
			respond_status(s, c, 404, rq);
			return;
		}
		put_head(s, c, 200, rq, "text/html; charset=utf-8", sizeof(builtin_page) - 1, "");
		if (!head) {
			c->body_mem = builtin_page;
			c->body_left = sizeof(builtin_page) - 1;
		}
		return;
	}
	struct stat sb;
	const char *name;
	int fd = open_file(s, path, &sb, &name);
	if (fd < 0) {
		respond_status(s, c, -fd, rq);
		return;
	}
	char mtime[40], modified[64];
	http_date(sb.st_mtime, mtime, sizeof(mtime));
	snprintf(modified, sizeof(modified), "Last-Modified: %s\r\n", mtime);
	put_head(s, c, 200, rq, content_type(name), (uint64_t)sb.st_size, modified);
	if (head || sb.st_size == 0) {
		close(fd);
		return;
	}
	c->body_fd = fd;
	c->body_pos = 0;
	c->body_left = (uint64_t)sb.st_size;
}

static void respond(const struct server *s, struct conn *c, const struct request *rq)
{
	/* A body we do not want is skipped, so that the next request is found after it. */
	c->discard = rq->content_length;
	if (rq->chunked) /* we do not decode chunked bodies, so the stream is lost after it */
		respond_status(s, c, 501, rq);
	else if (method_is(rq, "GET") || method_is(rq, "HEAD"))
		respond_get(s, c, rq);
	else
		respond_status(s, c, 405, rq);
}

/* ---- connections ---- */

static void conn_touch(struct server *s, struct conn *c)
{
	c->progress_ms = now_ms();
	TAILQ_REMOVE(&s->conns, c, link);
	TAILQ_INSERT_TAIL(&s->conns, c, link);
}

/* Copies body bytes into the free end of `out`. Returns -1 if the file cannot deliver the
 * length already promised (it shrank or failed): the connection must end. */
static int body_fill(struct conn *c)
{
	while (c->body_left > 0 && c->out_len < OUT_MAX) {
		size_t n = OUT_MAX - c->out_len;
		if (n > c->body_left)
			n = (size_t)c->body_left;
		if (c->body_fd < 0) {
			memcpy(c->out + c->out_len, c->body_mem, n);
			c->body_mem += n;
		} else {
			ssize_t r = pread(c->body_fd, c->out + c->out_len, n, c->body_pos);
			if (r <= 0)
				return -1;
			n = (size_t)r;
			c->body_pos += r;
		}
		c->out_len += n;
		c->body_left -= n;
	}
	if (c->body_left == 0 && c->body_fd >= 0) {
		close(c->body_fd);
		c->body_fd = -1;
	}
	return 0;
}

/* Turns buffered requests into queued responses, as far as `out` has room. Returns -1 when
 * the connection must end at once. */
static int conn_produce(struct server *s, struct conn *c)
{
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	for (;;) {
		if (body_fill(c) < 0)
			return -1;
		if (c->body_left > 0 || c->closing)
			return 0;
		size_t avail = c->in_len - c->in_off;
		if (c->discard > 0) {
			size_t n = c->discard < avail ? (size_t)c->discard : avail;
			c->in_off += n;
			c->discard -= n;
			if (c->discard > 0)
				return 0;
			avail -= n;
		}
		if (OUT_MAX - c->out_len < HEAD_ROOM)
			return 0;
		struct request rq;
		long r = parse_request(c->in + c->in_off, avail, &rq);
		if (r == 0) {
			if (avail == IN_MAX) /* reads start at in[0], so the buffer is full */
				respond_status(s, c, 431, NULL);
			return 0;
		}
		if (r < 0) {
			respond_status(s, c, (int)-r, NULL);
			return 0;
		}
		c->in_off += (size_t)r;
		conn_touch(s, c);
		respond(s, c, &rq);
	}
}

/* A connection that ends while the client may still be sending (an error, Connection:
 * close with more pipelined requests) must not just close: TCP answers unread bytes with a
 * reset, which can destroy the response before the client reads it (RFC 9112 §9.6). So the
 * sending side is shut, and what the client still sends is read and dropped until it closes
 * too, or the idle timeout ends the connection. Returns as conn_pump. */
static int conn_linger(struct server *s, struct conn *c)
{
	if (!c->shut) {
		if (s->tr->shutdown(c->fd, c->ctx) < 0)
			return errno == EAGAIN ? 0 : -1;
		c->shut = true;
	}
	for (;;) {
		ssize_t n = dps_read(c->fd, c->in, IN_MAX); /* raw bytes, even under TLS */
		if (n <= 0)
			return n < 0 && errno == EAGAIN ? 0 : -1;
	}
}

/* Moves the connection on until the transport would block. Returns 0 to wait for the next
 * event, -1 when the connection is over. Edge-triggered epoll needs exactly this: it only
 * reports news, so every call goes on until a read or write says EAGAIN. */
static int conn_pump(struct server *s, struct conn *c)
{
	const struct http_transport *tr = s->tr;
	for (;;) {
		if (conn_produce(s, c) < 0)
			return -1;
		if (c->out_off < c->out_len) {
			ssize_t n = tr->write(c->fd, c->ctx, c->out + c->out_off,
					      c->out_len - c->out_off);
			if (n < 0)
				return errno == EAGAIN ? 0 : -1;
			c->out_off += (size_t)n;
			conn_touch(s, c);
			continue;
		}
		/* Everything queued is sent; conn_produce left nothing it could answer. */
		if (c->peer_eof)
			return -1;
		if (c->closing)
			return conn_linger(s, c);
		if (c->in_off > 0) {
			memmove(c->in, c->in + c->in_off, c->in_len - c->in_off);
			c->in_len -= c->in_off;
			c->in_off = 0;
		}
		/* Not full: a full buffer without a complete request was answered with 431. */
		ssize_t n = tr->read(c->fd, c->ctx, c->in + c->in_len, IN_MAX - c->in_len);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		if (n == 0)
			c->peer_eof = true; /* answer what was received, then close */
		c->in_len += (size_t)n;
	}
}

/* The listener is level-triggered: while no connection can be taken it is not watched,
 * or the event loop would spin on the waiting backlog. */
static void accept_pause(struct server *s, bool pause)
{
	struct epoll_event ev = {.events = pause ? 0 : EPOLLIN, .data.ptr = NULL};
	if (pause != s->accept_paused && dps_epoll_ctl(s->ep, EPOLL_CTL_MOD, s->lfd, &ev) == 0)
		s->accept_paused = pause;
}

static void conn_close(struct server *s, struct conn *c)
{
	s->tr->close(c->fd, c->ctx);
	if (c->body_fd >= 0)
		close(c->body_fd);
	TAILQ_REMOVE(&s->conns, c, link);
	free(c);
	s->nconns--;
	accept_pause(s, false);
}

static void conn_open(struct server *s, int fd)
{
	struct conn *c = malloc(sizeof(*c));
	if (c == NULL) {
		dps_close(fd);
		return;
	}
	c->fd = fd;
	c->closing = c->shut = c->peer_eof = false;
	c->discard = c->body_left = 0;
	c->body_fd = -1;
	c->in_off = c->in_len = c->out_off = c->out_len = 0;
	/* Responses are written whole, so Nagle's algorithm could only delay their tails. */
	int one = 1;
	dps_setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (s->tr->open(fd, &c->ctx) != 0) {
		dps_close(fd);
		free(c);
		return;
	}
	TAILQ_INSERT_TAIL(&s->conns, c, link);
	s->nconns++;
	c->progress_ms = now_ms();
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
				 .data.ptr = c};
	if (dps_epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
		conn_close(s, c);
}

static void accept_all(struct server *s)
{
	for (;;) {
		if (s->nconns >= s->max_conns) {
			accept_pause(s, true);
			return;
		}
		int fd = dps_accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK);
		if (fd >= 0) {
			conn_open(s, fd);
			continue;
		}
		if (errno == ECONNABORTED || errno == EINTR)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
			accept_pause(s, true);
			fprintf(stderr, "%s: accept: %s; waiting for connections to end\n",
				s->tr->name, strerror(errno));
		} else if (errno != EAGAIN) {
			fprintf(stderr, "%s: accept: %s\n", s->tr->name, strerror(errno));
		}
		return;
	}
}

/* Closes the connections that made no progress within the timeout. Returns the time in ms
 * until the next one is due, -1 if there are none. */
static int expire_idle(struct server *s)
{
	const int64_t now = now_ms();
	struct conn *c;
	while ((c = TAILQ_FIRST(&s->conns)) != NULL && c->progress_ms + s->timeout_ms <= now)
		conn_close(s, c);
	return c == NULL ? -1 : (int)(c->progress_ms + s->timeout_ms - now);
}

/* Each connection may hold two descriptors, its socket and the file it sends: the
 * connection limit follows from the descriptor limit, raised as far as allowed. */
static size_t conns_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return 1;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	rlim_t n = rl.rlim_cur > 2 * FD_RESERVE ? (rl.rlim_cur - FD_RESERVE) / 2 : 1;
	return n < CONNS_MAX ? (size_t)n : CONNS_MAX;
}

static int fail(const struct server *s, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", s->tr->name, what, strerror(errno));
	return 1;
}

static int listen_on(const struct http_config *cfg)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
	if (inet_pton(AF_INET, cfg->addr, &sin.sin_addr) != 1) {
		errno = EINVAL;
		return -1;
	}
	int fd = dps_socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int one = 1;
	dps_setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (dps_bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || dps_listen(fd, 1024) != 0) {
		int e = errno;
		dps_close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

int http_serve(const struct http_config *cfg, const struct http_transport *tr)
{
	struct server s = {.tr = tr, .root = -1, .timeout_ms = cfg->idle_timeout_s * 1000LL,
			   .max_conns = conns_limit()};
	TAILQ_INIT(&s.conns);
	if (dps_init() != 0) {
		const char *sock = getenv("DPSTACK_SOCK");
		fprintf(stderr, "%s: cannot attach to dpstackd at %s: %s\n", tr->name,
			sock != NULL ? sock : "/run/dpstack/app.sock", strerror(errno));
		return 1;
	}
	if (cfg->docroot != NULL &&
	    (s.root = open(cfg->docroot, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return fail(&s, cfg->docroot);
	if ((s.lfd = listen_on(cfg)) < 0)
		return fail(&s, "listen");
	if ((s.ep = dps_epoll_create1(EPOLL_CLOEXEC)) < 0)
		return fail(&s, "epoll_create1");
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	if (dps_epoll_ctl(s.ep, EPOLL_CTL_ADD, s.lfd, &ev) != 0)
		return fail(&s, "epoll_ctl");
	printf("%s: serving %s on %s:%d\n", tr->name,
	       cfg->docroot != NULL ? cfg->docroot : "the built-in page", cfg->addr, cfg->port);
	fflush(stdout);
	struct epoll_event evs[64];
	for (;;) {
		int n = dps_epoll_wait(s.ep, evs, 64, expire_idle(&s));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(&s, "epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct conn *c = evs[i].data.ptr;
			if (c == NULL)
				accept_all(&s);
			else if (conn_pump(&s, c) < 0)
				conn_close(&s, c);
		}
	}
}
