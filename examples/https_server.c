/* dps-https: an HTTPS (HTTP/1.1 over TLS 1.2/1.3, OpenSSL) server on dpstack.
 *
 *   dps-https -c CERT.pem [-k KEY.pem] [-a ADDR] [-p PORT] [-d DIR] [-t IDLE_SECONDS]
 *
 * The same server as dps-http (http_common.c: GET and HEAD for the files below DIR or a
 * built-in page, keep-alive, pipelining, idle timeout), default port 8443. CERT.pem holds
 * the certificate chain; KEY.pem the private key (default: CERT.pem holds both). For a test:
 *
 *   openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=test -days 1 \
 *           -keyout key.pem -out cert.pem
 *   DPSTACK_SOCK=/run/dpstack/app.sock dps-https -c cert.pem -k key.pem
 *   curl -k https://STACK_ADDR:8443/
 *
 * OpenSSL must not do I/O on the descriptor itself: a dps socket is not a kernel socket (its
 * kernel descriptor only reserves the number). Each connection's SSL object therefore talks
 * through a BIO whose callbacks call dps_read/dps_send. The socket is non-blocking; when it
 * would block, the BIO asks to be retried, SSL_read/SSL_write report WANT_READ/WANT_WRITE,
 * and the shared event loop waits for the socket's next edge in either direction. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <dpstack/dpstack.h>

#include "http_common.h"

static SSL_CTX *tls_ctx;
static BIO_METHOD *dps_bio_method;

/* ---- the BIO over a dps socket ---- */

static int dps_bio_fd(BIO *b)
{
	return (int)(intptr_t)BIO_get_data(b);
}

static int dps_bio_read(BIO *b, char *buf, int len)
{
	BIO_clear_retry_flags(b);
	ssize_t n = dps_read(dps_bio_fd(b), buf, (size_t)len);
	if (n < 0 && errno == EAGAIN)
		BIO_set_retry_read(b);
	return (int)n;
}

static int dps_bio_write(BIO *b, const char *buf, int len)
{
	BIO_clear_retry_flags(b);
	ssize_t n = dps_send(dps_bio_fd(b), buf, (size_t)len, MSG_NOSIGNAL);
	if (n < 0 && errno == EAGAIN)
		BIO_set_retry_write(b);
	return (int)n;
}

static long dps_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	/* libssl flushes after each flight of handshake messages: dps_send has already queued
	 * the bytes. No other control (kTLS, descriptor queries) applies to a dps socket. */
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

/* ---- the transport ---- */

static int tls_open(int fd, void **ctx)
{
	SSL *ssl = SSL_new(tls_ctx);
	BIO *bio = BIO_new(dps_bio_method);
	if (ssl == NULL || bio == NULL) {
		SSL_free(ssl);
		BIO_free(bio);
		return -1;
	}
	BIO_set_data(bio, (void *)(intptr_t)fd);
	BIO_set_init(bio, 1);
	SSL_set_bio(ssl, bio, bio); /* the SSL owns the BIO from here on */
	SSL_set_accept_state(ssl);  /* the first SSL_read runs the handshake */
	*ctx = ssl;
	return 0;
}

/* Turns a non-positive SSL_read/SSL_write result into the transport's convention. */
static ssize_t tls_failed(SSL *ssl, int n)
{
	int err = SSL_get_error(ssl, n);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
		errno = EAGAIN;
		return -1;
	}
	if (err == SSL_ERROR_ZERO_RETURN)
		return 0; /* close_notify, or a bare EOF (SSL_OP_IGNORE_UNEXPECTED_EOF) */
	/* After a fatal error no close_notify may be sent; in quiet mode SSL_shutdown only
	 * marks the session closed. */
	SSL_set_quiet_shutdown(ssl, 1);
	ERR_clear_error();
	errno = EPROTO;
	return -1;
}

static ssize_t tls_read(int fd, void *ctx, void *buf, size_t len)
{
	SSL *ssl = ctx;
	/* SSL_get_error reads this thread's error queue, which must start empty. */
	ERR_clear_error();
	int n = SSL_read(ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
	return n > 0 ? n : tls_failed(ssl, n);
}

static ssize_t tls_write(int fd, void *ctx, const void *buf, size_t len)
{
	SSL *ssl = ctx;
	ERR_clear_error();
	int n = SSL_write(ssl, buf, len > INT32_MAX ? INT32_MAX : (int)len);
	if (n > 0)
		return n;
	ssize_t r = tls_failed(ssl, n);
	if (r == 0) { /* the client closed the TLS session: nothing more can be written */
		errno = EPIPE;
		r = -1;
	}
	return r;
}

/* close_notify tells the client that nothing was cut off (RFC 8446 §6.1). */
static int tls_shutdown(int fd, void *ctx)
{
	SSL *ssl = ctx;
	if (SSL_is_init_finished(ssl)) {
		ERR_clear_error();
		int n = SSL_shutdown(ssl);
		/* The alert waits for room in the socket: the next call sends it. */
		if (n < 0 && tls_failed(ssl, n) < 0 && errno == EAGAIN)
			return -1;
	}
	return dps_shutdown(fd, SHUT_WR);
}

static void tls_close(int fd, void *ctx)
{
	SSL *ssl = ctx;
	/* Best effort: a full socket or a client that already left does not get it. */
	if (SSL_is_init_finished(ssl) && !(SSL_get_shutdown(ssl) & SSL_SENT_SHUTDOWN)) {
		ERR_clear_error();
		SSL_shutdown(ssl);
	}
	SSL_free(ssl);
	dps_close(fd);
}

static const struct http_transport tls = {
	.name = "dps-https",
	.open = tls_open,
	.read = tls_read,
	.write = tls_write,
	.shutdown = tls_shutdown,
	.close = tls_close,
};

/* ---- set-up ---- */

/* ALPN (RFC 7301): a client offering h2 and http/1.1 learns that this server speaks 1.1. */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
		       const unsigned char *in, unsigned int inlen, void *arg)
{
	static const unsigned char http11[] = "\x08http/1.1";
	unsigned char *sel;
	if (SSL_select_next_proto(&sel, outlen, http11, sizeof(http11) - 1, in, inlen) !=
	    OPENSSL_NPN_NEGOTIATED)
		return SSL_TLSEXT_ERR_NOACK;
	*out = sel;
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *tls_setup(const char *cert, const char *key)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* A client that leaves without close_notify has merely finished: responses are framed
	 * by Content-Length, so a missing close_notify cannot hide a truncation from us. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_RENEGOTIATION);
	/* Partial writes make SSL_write return after each record, like a short socket write,
	 * which the shared loop handles; released buffers keep idle keep-alive connections
	 * from holding record buffers. */
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	return ctx;
}

static int usage(int rc)
{
	fprintf(rc == 0 ? stdout : stderr,
		"usage: dps-https -c CERT.pem [-k KEY.pem] " HTTP_CONFIG_USAGE "\n");
	return rc;
}

int main(int argc, char **argv)
{
	struct http_config cfg;
	http_config_init(&cfg, 8443);
	const char *cert = NULL, *key = NULL;
	int opt;
	while ((opt = getopt(argc, argv, HTTP_CONFIG_OPTS "c:k:h")) != -1) {
		if (opt == 'c')
			cert = optarg;
		else if (opt == 'k')
			key = optarg;
		else if (opt == 'h' || http_config_option(&cfg, opt, optarg) != 0)
			return usage(opt == 'h' ? 0 : 2);
	}
	if (cert == NULL || optind != argc)
		return usage(2);
	if ((tls_ctx = tls_setup(cert, key != NULL ? key : cert)) == NULL) {
		fprintf(stderr, "dps-https: cannot use %s / %s:\n", cert, key != NULL ? key : cert);
		ERR_print_errors_fp(stderr);
		return 1;
	}
	dps_bio_method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "dps socket");
	if (dps_bio_method == NULL || BIO_meth_set_read(dps_bio_method, dps_bio_read) != 1 ||
	    BIO_meth_set_write(dps_bio_method, dps_bio_write) != 1 ||
	    BIO_meth_set_ctrl(dps_bio_method, dps_bio_ctrl) != 1) {
		ERR_print_errors_fp(stderr);
		return 1;
	}
	return http_serve(&cfg, &tls);
}
