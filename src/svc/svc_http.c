/* A minimal HTTP/1.1 origin server (RFC 9110, RFC 9112) for tests and benchmarks: GET and
 * HEAD of any target get 200 with a fixed body (or `size` bytes of the chargen pattern),
 * other methods 405, malformed requests 400, heads over HTTP_HEAD_MAX 431.
 *
 * One request is handled at a time: the next (pipelined) request is parsed only once the
 * answer to the previous one is entirely in the send FIFO, so answers leave in order, and a
 * client that does not read its answers stops being read (backpressure). Persistence follows
 * RFC 9112 §9.3: 1.1 keeps the connection unless "Connection: close", 1.0 closes unless
 * "Connection: keep-alive". Request bodies (Content-Length) are read and dropped. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "http_parse.h"
#include "svc_priv.h"

#define HTTP_BODY_DEFAULT "Hello from dpstack\n"
#define HTTP_OUT_MAX 1024   /* head and the start of the body, written in one call */

struct http_conn {
	struct svc_conn sc;
	size_t in_off;              /* unparsed input is in[in_off, in_off + in_len) */
	size_t in_len;
	uint64_t skip;              /* request body bytes still to drop */
	bool eof;                   /* the client has finished sending */
	bool close_after;           /* close once the answer being sent is queued */
	uint16_t out_off;           /* the answer: out[out_off, out_len), then body_left */
	uint16_t out_len;           /* bytes of the pattern from body_off */
	uint32_t body_off;
	uint64_t body_left;
	char out[HTTP_OUT_MAX];
	char in[HTTP_HEAD_MAX];
};

/* Prepares the answer. The head and as much of the body as fits go into out[], so that a
 * small answer leaves in one segment. */
static void http_answer(struct http_conn *h, unsigned status, bool with_body, bool keep_alive)
{
	const struct svc *sv = h->sc.sv;
	char text[64];
	const char *body = text;
	uint64_t len;
	if (status != 200) {
		snprintf(text, sizeof(text), "%u %s\n", status, http_reason(status));
		len = strlen(text);
	} else if (sv->opts.has_size) {
		body = NULL;
		len = sv->opts.size;
	} else {
		body = HTTP_BODY_DEFAULT;
		len = strlen(body);
	}
	/* Date is left out on purpose (RFC 9110 §6.6.1 allows it for servers without a
	 * reliable clock): answers stay byte-for-byte reproducible. */
	int n = snprintf(h->out, sizeof(h->out),
			 "HTTP/1.1 %u %s\r\n"
			 "Server: dpstack\r\n"
			 "Content-Type: text/plain\r\n"
			 "Content-Length: %" PRIu64 "\r\n"
			 "%s"
			 "Connection: %s\r\n"
			 "\r\n",
			 status, http_reason(status), len,
			 status == 405 ? "Allow: GET, HEAD\r\n" : "", /* RFC 9110 §15.5.6 */
			 keep_alive ? "keep-alive" : "close");
	size_t used = (size_t)n;
	h->body_off = 0;
	h->body_left = 0;
	if (with_body && len > 0) {
		size_t room = sizeof(h->out) - used;
		size_t k = len < room ? (size_t)len : room;
		if (body != NULL)
			memcpy(h->out + used, body, k); /* short texts: always fits */
		else
			svc_pattern_fill((uint8_t *)h->out + used, k, 0);
		used += k;
		h->body_off = (uint32_t)(k % SVC_PATTERN_PERIOD);
		h->body_left = len - k;
	}
	h->out_off = 0;
	h->out_len = (uint16_t)used;
	h->close_after = !keep_alive;
}

/* Queues what is left of the answer: SVC_RUN_DONE once all of it is in the send FIFO. */
static enum svc_run http_flush(struct http_conn *h)
{
	struct svc *sv = h->sc.sv;
	while (h->out_off < h->out_len) {
		ssize_t m = tcp_send(h->sc.c, h->out + h->out_off, h->out_len - h->out_off);
		if (m == -EAGAIN)
			return SVC_RUN_WAIT;
		if (m < 0)
			return SVC_RUN_ERROR;
		h->out_off = (uint16_t)(h->out_off + m);
		sv->cnt.bytes_out += (uint64_t)m;
	}
	return svc_conn_send_pattern(&h->sc, &h->body_off, &h->body_left);
}

static void http_consume(struct http_conn *h, size_t n)
{
	h->in_off += n;
	h->in_len -= n;
	if (h->in_len == 0)
		h->in_off = 0;
}

/* Parses and answers the next request in the buffer. Returns false when more input is
 * needed for it. */
static bool http_next_request(struct http_conn *h)
{
	struct svc *sv = h->sc.sv;
	if (h->skip > 0) {
		size_t k = h->in_len < h->skip ? h->in_len : (size_t)h->skip;
		http_consume(h, k);
		h->skip -= k;
		if (h->skip > 0)
			return false;
	}
	if (h->in_len == 0)
		return false;
	struct http_request req;
	switch (http_parse_request(h->in + h->in_off, h->in_len, HTTP_HEAD_MAX, &req)) {
	case HTTP_PARSE_INCOMPLETE:
		return false;
	case HTTP_PARSE_ERROR:
		/* The framing is lost: answer and close (RFC 9112 §9.6 allows closing at any
		 * time; after a bad request nothing that follows can be trusted). */
		sv->cnt.requests++;
		sv->cnt.errors++;
		http_answer(h, req.error_status, true, false);
		return true;
	case HTTP_PARSE_COMPLETE:
		break;
	}
	sv->cnt.requests++;
	http_consume(h, req.head_len);
	h->skip = req.content_length;
	if (req.method == HTTP_METHOD_OTHER) {
		sv->cnt.errors++;
		http_answer(h, 405, true, req.keep_alive);
	} else {
		http_answer(h, 200, req.method == HTTP_METHOD_GET, req.keep_alive);
	}
	return true;
}

static enum svc_run http_run(struct svc_conn *sc)
{
	struct http_conn *h = (struct http_conn *)sc;
	for (;;) {
		enum svc_run r = http_flush(h);
		if (r != SVC_RUN_DONE)
			return r;
		if (h->close_after)
			return SVC_RUN_DONE;
		if (http_next_request(h))
			continue;
		if (h->eof)
			return SVC_RUN_DONE; /* a partial request at the end is dropped */
		if (h->in_off > 0) {
			memmove(h->in, h->in + h->in_off, h->in_len);
			h->in_off = 0;
		}
		/* The parser answers 431 once HTTP_HEAD_MAX bytes hold no whole head, and body
		 * bytes are dropped as they come, so there is always room here. */
		size_t room = sizeof(h->in) - h->in_len;
		if (room == 0)
			return SVC_RUN_ERROR;
		ssize_t n = tcp_recv(sc->c, h->in + h->in_len, room);
		if (n == -EAGAIN)
			return SVC_RUN_WAIT;
		if (n < 0)
			return SVC_RUN_ERROR;
		if (n == 0) {
			h->eof = true;
			continue;
		}
		sc->sv->cnt.bytes_in += (uint64_t)n;
		h->in_len += (size_t)n;
	}
}

const struct svc_kind_ops svc_http_ops = {
	.tcp = true,
	.udp = false,
	.conn_size = sizeof(struct http_conn),
	.nodelay = true,
	.run = http_run,
};
