/* HTTP/1.x request heads (RFC 9112), parsed for the built-in http service: a pure function
 * over bytes, no DPDK, no allocation, so it is unit-tested and fuzzable alone.
 *
 * The parser is strict where leniency lets two parties disagree on where a request ends
 * (request smuggling: whitespace before a colon, folded lines, conflicting Content-Length,
 * bare CR), and lenient where RFC 9112 allows it (bare LF line ends, empty lines before the
 * request line). It reads only what the service needs: the method, the version, whether the
 * connection persists, and how long a body follows. */
#ifndef DPS_SVC_HTTP_PARSE_H
#define DPS_SVC_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 8192   /* request line + headers; more is answered with 431 */

enum http_method {
	HTTP_METHOD_GET,
	HTTP_METHOD_HEAD,
	HTTP_METHOD_OTHER,   /* a valid token we do not serve: 405 */
};

enum http_parse {
	HTTP_PARSE_COMPLETE,    /* a whole head is in the buffer: req describes it */
	HTTP_PARSE_INCOMPLETE,  /* no error so far; more bytes are needed */
	HTTP_PARSE_ERROR,       /* req->error_status says which answer to give, then close */
};

struct http_request {
	enum http_method method;
	const char *method_str;     /* points into the buffer, method_len bytes */
	size_t method_len;
	const char *target;         /* the request-target, target_len bytes */
	size_t target_len;
	uint8_t minor;              /* HTTP/1.minor */
	bool keep_alive;            /* the version's default, changed by Connection */
	bool has_te;                /* Transfer-Encoding: the body cannot be delimited here */
	uint64_t content_length;    /* body bytes after the head (0 without the header) */
	size_t head_len;            /* bytes up to and including the empty line */
	uint16_t error_status;      /* with HTTP_PARSE_ERROR: 400, 431 or 505 */
};

/* Parses the request head at the start of buf[0..len). Looks at no more than max bytes (a
 * head that does not end within max bytes is an error with status 431). Errors are reported
 * as soon as a complete line shows them, so a client sending garbage is answered at once. */
enum http_parse http_parse_request(const char *buf, size_t len, size_t max,
				   struct http_request *req);

/* The reason phrase of the statuses the service sends ("OK", "Bad Request", ...). */
const char *http_reason(unsigned status);

#endif
