/* HTTP/1.x request heads: RFC 9112 §2–§3 and §5–§6, RFC 9110 §5 (fields) and §7.6.1
 * (Connection). See http_parse.h for what is strict and what is lenient, and why. */
#include "http_parse.h"

#include <string.h>

/* One line of the head, its line end (CRLF or a bare LF, RFC 9112 §2.2) removed. */
struct http_line {
	const char *p;
	size_t len;
};

/* RFC 9110 §5.6.2: tchar. */
static bool http_is_tchar(unsigned char ch)
{
	if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))
		return true;
	return ch != '\0' && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* RFC 9110 §5.5: field-vchar, SP or HTAB. Every other control character (a bare CR, NUL)
 * makes the request invalid rather than being passed on. */
static bool http_is_field_char(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || (ch >= 0x21 && ch != 0x7f);
}

static bool http_is_ows(char ch)
{
	return ch == ' ' || ch == '\t';
}

static char http_lower(char ch)
{
	return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* Field names and connection options compare without regard to case (RFC 9110 §5.1). */
static bool http_token_eq(const char *p, size_t n, const char *lit)
{
	size_t m = strlen(lit);
	if (n != m)
		return false;
	for (size_t i = 0; i < n; i++)
		if (http_lower(p[i]) != lit[i])
			return false;
	return true;
}

/* The next line starting at *pos within buf[0..lim): true with *pos moved past its LF, false
 * when no LF is there yet. */
static bool http_next_line(const char *buf, size_t lim, size_t *pos, struct http_line *l)
{
	const char *start = buf + *pos;
	const char *nl = memchr(start, '\n', lim - *pos);
	if (nl == NULL)
		return false;
	size_t n = (size_t)(nl - start);
	if (n > 0 && start[n - 1] == '\r')
		n--;
	l->p = start;
	l->len = n;
	*pos = (size_t)(nl - buf) + 1;
	return true;
}

/* RFC 9112 §3: method SP request-target SP HTTP-version, single spaces. Returns 0 or the
 * error status. */
static unsigned http_parse_request_line(const struct http_line *l, struct http_request *req)
{
	const char *p = l->p;
	size_t n = l->len, i = 0;
	while (i < n && http_is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i >= n || p[i] != ' ')
		return 400;
	req->method_str = p;
	req->method_len = i;
	/* Methods are case-sensitive (RFC 9110 §9.1): "get" is not GET. */
	if (i == 3 && memcmp(p, "GET", 3) == 0)
		req->method = HTTP_METHOD_GET;
	else if (i == 4 && memcmp(p, "HEAD", 4) == 0)
		req->method = HTTP_METHOD_HEAD;
	else
		req->method = HTTP_METHOD_OTHER;
	size_t t = ++i;
	/* The request-target is visible ASCII (RFC 3986 characters, RFC 9112 §3.2). */
	while (i < n && p[i] > 0x20 && p[i] < 0x7f)
		i++;
	if (i == t || i >= n || p[i] != ' ')
		return 400;
	req->target = p + t;
	req->target_len = i - t;
	i++;
	/* RFC 9112 §2.3: HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive. */
	const char *v = p + i;
	if (n - i != 8 || memcmp(v, "HTTP/", 5) != 0 || v[5] < '0' || v[5] > '9' ||
	    v[6] != '.' || v[7] < '0' || v[7] > '9')
		return 400;
	if (v[5] != '1')
		return 505;
	req->minor = (uint8_t)(v[7] - '0');
	/* RFC 9112 §9.3: 1.1 (and any later 1.x) persists by default, 1.0 does not. */
	req->keep_alive = req->minor >= 1;
	return 0;
}

/* RFC 9110 §7.6.1: a comma-separated list of options, any case. */
static void http_parse_connection(const char *v, size_t n, bool *close, bool *keep_alive)
{
	size_t i = 0;
	while (i < n) {
		while (i < n && (http_is_ows(v[i]) || v[i] == ','))
			i++;
		size_t start = i;
		while (i < n && v[i] != ',' && !http_is_ows(v[i]))
			i++;
		if (http_token_eq(v + start, i - start, "close"))
			*close = true;
		else if (http_token_eq(v + start, i - start, "keep-alive"))
			*keep_alive = true;
		while (i < n && v[i] != ',')
			i++;
	}
}

/* RFC 9112 §6.3 and RFC 9110 §8.6: 1*DIGIT. A list ("5, 5") is refused too: a server may
 * accept identical values, but it has no need to. */
static bool http_parse_length(const char *v, size_t n, uint64_t *out)
{
	uint64_t x = 0;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return false;
		unsigned d = (unsigned)(v[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*out = x;
	return true;
}

/* What the headers say, before the checks that need all of them. */
struct http_fields {
	unsigned hosts;
	bool has_length;
	bool conn_close;
	bool conn_keep_alive;
};

/* RFC 9112 §5: field-name ":" OWS field-value OWS. Returns 0 or the error status. */
static unsigned http_parse_field(const struct http_line *l, struct http_request *req,
				 struct http_fields *f)
{
	const char *p = l->p;
	size_t n = l->len, i = 0;
	/* RFC 9112 §5.2: obsolete line folding may be rejected with 400; §5.1: whitespace
	 * between name and colon MUST be. Both are classic smuggling vectors. */
	while (i < n && http_is_tchar((unsigned char)p[i]))
		i++;
	if (i == 0 || i >= n || p[i] != ':')
		return 400;
	size_t name_len = i++;
	while (i < n && http_is_ows(p[i]))
		i++;
	size_t end = n;
	while (end > i && http_is_ows(p[end - 1]))
		end--;
	for (size_t k = i; k < end; k++)
		if (!http_is_field_char((unsigned char)p[k]))
			return 400;
	const char *v = p + i;
	size_t vlen = end - i;
	if (http_token_eq(p, name_len, "host")) {
		f->hosts++;
	} else if (http_token_eq(p, name_len, "connection")) {
		http_parse_connection(v, vlen, &f->conn_close, &f->conn_keep_alive);
	} else if (http_token_eq(p, name_len, "content-length")) {
		uint64_t len;
		if (!http_parse_length(v, vlen, &len))
			return 400;
		/* RFC 9112 §6.3 item 5: differing lengths make the framing unknowable. */
		if (f->has_length && len != req->content_length)
			return 400;
		f->has_length = true;
		req->content_length = len;
	} else if (http_token_eq(p, name_len, "transfer-encoding")) {
		req->has_te = true;
	}
	return 0;
}

/* Checks that need the whole head. Returns 0 or the error status. */
static unsigned http_finish(struct http_request *req, const struct http_fields *f)
{
	/* RFC 9112 §3.2: 400 for an HTTP/1.1 request without Host, and for any request with
	 * more than one. */
	if (f->hosts > 1 || (req->minor >= 1 && f->hosts == 0))
		return 400;
	if (req->has_te) {
		/* RFC 9112 §6.1: in HTTP/1.0 Transfer-Encoding means faulty framing; §6.3
		 * item 3: with Content-Length as well, it "ought to be handled as an error". */
		if (req->minor == 0 || f->has_length)
			return 400;
		req->keep_alive = false;
	}
	if (f->conn_close)
		req->keep_alive = false;
	else if (f->conn_keep_alive)
		req->keep_alive = true;
	return 0;
}

static enum http_parse http_error(struct http_request *req, unsigned status)
{
	req->error_status = (uint16_t)status;
	return HTTP_PARSE_ERROR;
}

enum http_parse http_parse_request(const char *buf, size_t len, size_t max,
				   struct http_request *req)
{
	*req = (struct http_request){0};
	const size_t lim = len < max ? len : max;
	/* A head that has not ended within max bytes never will, as far as we care. */
	const unsigned too_long = 431;
	size_t pos = 0;
	struct http_line l;
	/* RFC 9112 §2.2: empty lines before the request line are ignored (clients used to
	 * send a CRLF after a POST body). */
	do {
		if (!http_next_line(buf, lim, &pos, &l))
			return len >= max ? http_error(req, too_long) : HTTP_PARSE_INCOMPLETE;
	} while (l.len == 0);
	unsigned st = http_parse_request_line(&l, req);
	if (st != 0)
		return http_error(req, st);
	struct http_fields f = {0};
	for (;;) {
		if (!http_next_line(buf, lim, &pos, &l))
			return len >= max ? http_error(req, too_long) : HTTP_PARSE_INCOMPLETE;
		if (l.len == 0)
			break;
		st = http_parse_field(&l, req, &f);
		if (st != 0)
			return http_error(req, st);
	}
	st = http_finish(req, &f);
	if (st != 0)
		return http_error(req, st);
	req->head_len = pos;
	return HTTP_PARSE_COMPLETE;
}

const char *http_reason(unsigned status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 405: return "Method Not Allowed";
	case 431: return "Request Header Fields Too Large";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}
