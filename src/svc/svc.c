/* The service table of one worker and the life cycle every kind shares: listening, accepting,
 * running a connection on readiness, closing; UDP sockets and their datagrams. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "svc_priv.h"
#include "udp/udp.h"

static const struct svc_kind_ops *const svc_kinds[SVC_KIND_COUNT] = {
	[SVC_ECHO] = &svc_echo_ops,
	[SVC_DISCARD] = &svc_discard_ops,
	[SVC_CHARGEN] = &svc_chargen_ops,
	[SVC_HTTP] = &svc_http_ops,
	[SVC_IPERF3] = &svc_iperf3_ops,
};

static const char *const svc_kind_names[SVC_KIND_COUNT] = {
#define SVC_KIND_NAME(id, name) [SVC_##id] = name,
	SVC_KIND_LIST(SVC_KIND_NAME)
#undef SVC_KIND_NAME
};

const char *svc_kind_name(enum svc_kind k)
{
	return (unsigned)k < SVC_KIND_COUNT ? svc_kind_names[k] : "?";
}

int svc_kind_parse(const char *name)
{
	for (int k = 0; k < SVC_KIND_COUNT; k++)
		if (strcmp(name, svc_kind_names[k]) == 0)
			return k;
	return -1;
}

bool svc_kind_supports(enum svc_kind k, int proto)
{
	if ((unsigned)k >= SVC_KIND_COUNT)
		return false;
	return proto == IPPROTO_TCP ? svc_kinds[k]->tcp : proto == IPPROTO_UDP && svc_kinds[k]->udp;
}

void svc_pattern_fill(uint8_t *dst, size_t len, uint64_t offset)
{
	uint32_t p = (uint32_t)(offset % SVC_PATTERN_PERIOD);
	for (size_t i = 0; i < len; i++) {
		uint32_t line = p / (SVC_PATTERN_LINE + 2), col = p % (SVC_PATTERN_LINE + 2);
		if (col < SVC_PATTERN_LINE)
			dst[i] = (uint8_t)(' ' + (line + col) % 95);
		else
			dst[i] = col == SVC_PATTERN_LINE ? '\r' : '\n';
		if (++p == SVC_PATTERN_PERIOD)
			p = 0;
	}
}

uint32_t svc_rand(struct svc_table *t)
{
	/* xorshift64: chargen's lengths need no quality, only no two workers in step. */
	uint64_t x = t->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	t->rng = x;
	return (uint32_t)(x >> 32);
}

struct svc_table *svc_table_create(struct stack *s)
{
	struct svc_table *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return NULL;
	t->s = s;
	TAILQ_INIT(&t->list);
	t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(uintptr_t)t << 16);
	svc_pattern_fill(t->pattern, sizeof(t->pattern), 0);
	return t;
}

static struct svc *svc_find(struct svc_table *t, int proto, uint16_t port)
{
	struct svc *sv;
	TAILQ_FOREACH(sv, &t->list, link)
		if (sv->proto == proto && sv->port == port)
			return sv;
	return NULL;
}

/* --- TCP connections --- */

/* Forgets the connection and lets the stack finish it: what is queued goes out, then a FIN.
 * Unread input is read first, because closing with unread data is an abort (RST) that would
 * throw away the answer still queued (RFC 2525 §2.17); input still on its way is dropped
 * (SHUT_RD) for the same reason, so a client that sent more than we answered (a pipelined
 * request after "Connection: close", the rest of a too long head) still reads our answer.
 *
 * The socket calls below deliver other sockets' readiness synchronously: sc stays marked as
 * running (so a nested end of it is a no-op), its owner is cleared before it is freed, and
 * it is freed last. */
static void svc_conn_close(struct svc_conn *sc)
{
	struct svc *sv = sc->sv;
	struct tcp_conn *c = sc->c;
	sc->running = true;
	if (sv->ops->close != NULL)
		sv->ops->close(sc);
	svc_conn_drain(sc);
	tcp_sock(c)->owner = (struct sock_owner){0};
	TAILQ_REMOVE(&sv->conns, sc, link);
	sv->cnt.active--;
	tcp_shutdown(c, SHUT_RD);   /* -ENOTCONN once reset: nothing to keep out then */
	tcp_close(c);
	free(sc);
}

/* Closes sc now, or once the run() or close in progress on it returns. */
static void svc_conn_finish(struct svc_conn *sc, enum svc_run r)
{
	if (sc->running) {
		if (r > sc->doom)
			sc->doom = (uint8_t)r;   /* ERROR outranks DONE */
		return;
	}
	if (r == SVC_RUN_ERROR)
		sc->sv->cnt.errors++;
	svc_conn_close(sc);
}

void svc_conn_end(struct svc_conn *sc, bool error)
{
	svc_conn_finish(sc, error ? SVC_RUN_ERROR : SVC_RUN_DONE);
}

static void svc_conn_run(struct svc_conn *sc)
{
	if (sc->running) {
		sc->rerun = true;
		return;
	}
	sc->running = true;
	enum svc_run r;
	do {
		sc->rerun = false;
		r = sc->sv->ops->run(sc);
	} while (r == SVC_RUN_WAIT && sc->rerun && sc->doom == SVC_RUN_WAIT);
	sc->running = false;
	if (sc->doom > r)
		r = (enum svc_run)sc->doom;
	if (r != SVC_RUN_WAIT)
		svc_conn_finish(sc, r);
}

void svc_conn_kick(struct svc_conn *sc)
{
	svc_conn_run(sc);
}

static void svc_conn_notify(struct sock *sk, uint32_t events)
{
	struct svc_conn *sc = sk->owner.ctx;
	if (events & (SOCK_EV_ERR | SOCK_EV_HUP)) {
		/* Reset, timed out, or finished both ways: nothing more can be sent. */
		svc_conn_finish(sc, events & SOCK_EV_ERR ? SVC_RUN_ERROR : SVC_RUN_DONE);
		return;
	}
	svc_conn_run(sc);
}

static void svc_accept_all(struct svc *sv)
{
	for (;;) {
		struct svc_conn *sc = calloc(1, sv->ops->conn_size);
		struct sock_owner owner = {.notify = svc_conn_notify, .ctx = sc};
		struct tcp_conn *c = tcp_accept(sv->listener, sc != NULL ? &owner
						: &(struct sock_owner){0});
		if (c == NULL) {
			free(sc);
			return;
		}
		if (sc == NULL) {
			/* Out of memory: the client sees an orderly close rather than silence. */
			sv->cnt.errors++;
			tcp_close(c);
			continue;
		}
		sc->sv = sv;
		sc->c = c;
		TAILQ_INSERT_TAIL(&sv->conns, sc, link);
		sv->cnt.accepted++;
		sv->cnt.active++;
		if (sv->ops->open != NULL)
			sv->ops->open(sc);
		/* Data (and chargen's window) may be there already: the connection was
		 * established before it was accepted, and its readiness went to the listener. */
		svc_conn_run(sc);
	}
}

static void svc_listener_notify(struct sock *sk, uint32_t events)
{
	struct svc *sv = sk->owner.ctx;
	/* Connections not accepted yet carry the listener's owner: their events are for the
	 * listener's owner to ignore; the first run after accept catches up. */
	if (sk != tcp_sock(sv->listener))
		return;
	if (events & SOCK_EV_IN)
		svc_accept_all(sv);
}

enum svc_run svc_conn_drain(struct svc_conn *sc)
{
	struct svc_table *t = sc->sv->t;
	for (;;) {
		ssize_t n = tcp_recv(sc->c, t->scratch, sizeof(t->scratch));
		if (n > 0) {
			sc->sv->cnt.bytes_in += (uint64_t)n;
			continue;
		}
		if (n == 0)
			return SVC_RUN_DONE;
		return n == -EAGAIN ? SVC_RUN_WAIT : SVC_RUN_ERROR;
	}
}

enum svc_run svc_conn_send_pattern(struct svc_conn *sc, uint32_t *offset, uint64_t *left)
{
	const uint8_t *pattern = sc->sv->t->pattern;
	for (;;) {
		if (*left == 0)
			return SVC_RUN_DONE;
		size_t n = *left < SVC_PATTERN_PERIOD ? (size_t)*left : SVC_PATTERN_PERIOD;
		ssize_t m = tcp_send(sc->c, pattern + *offset, n);
		if (m == -EAGAIN)
			return SVC_RUN_WAIT;
		if (m < 0)
			return SVC_RUN_ERROR;
		*offset = (uint32_t)((*offset + (uint64_t)m) % SVC_PATTERN_PERIOD);
		if (*left != UINT64_MAX)
			*left -= (uint64_t)m;
		sc->sv->cnt.bytes_out += (uint64_t)m;
	}
}

/* --- UDP --- */

/* Ports whose services answer every datagram: answering them could start an endless
 * exchange (echo and chargen bouncing off each other, the RFC 864 "ping-pong" loop), and
 * a spoofed source makes that an attack. Source port 0 means no answer is wanted
 * (RFC 768). */
static bool svc_udp_port_unanswerable(uint16_t port)
{
	switch (port) {
	case 0:
	case 7:         /* echo */
	case 13:        /* daytime */
	case 17:        /* qotd */
	case 19:        /* chargen */
	case 37:        /* time */
		return true;
	default:
		return false;
	}
}

void svc_udp_reply(struct svc *sv, const void *buf, size_t len, const struct svc_peer *to)
{
	if (svc_udp_port_unanswerable(to->port)) {
		sv->cnt.errors++;
		return;
	}
	struct udp_send_opts o = {.scoped = true, .port = to->scope};
	ssize_t n = udp_sendmsg_inet(sv->udp, buf, len, &to->addr, to->port, &o);
	if (n < 0)
		sv->cnt.errors++;
	else
		sv->cnt.bytes_out += (uint64_t)n;
}

static void svc_udp_notify(struct sock *sk, uint32_t events)
{
	struct svc *sv = sk->owner.ctx;
	struct svc_table *t = sv->t;
	/* Every queued datagram now: readiness is reported once per change. The loop ends
	 * because each call takes a datagram or an error out of a bounded queue. */
	for (;;) {
		struct udp_rx_hdr h;
		bool trunc = false;
		ssize_t n = udp_recvmsg(sv->udp, t->scratch, sizeof(t->scratch), &h, &trunc);
		if (n == -EAGAIN)
			return;
		if (n < 0) {
			sv->cnt.errors++;   /* an ICMP error reported once, or a corrupt record */
			continue;
		}
		sv->cnt.datagrams++;
		sv->cnt.bytes_in += (uint64_t)n;
		/* ifindex is the arrival port plus one (netcfg_ifindex). */
		struct svc_peer from = {.addr = h.src, .port = h.sport,
					.scope = (uint16_t)(h.ifindex - 1u)};
		if (sv->ops->datagram != NULL)
			sv->ops->datagram(sv, t->scratch, (size_t)n, sizeof(t->scratch), &from);
	}
}

/* --- the table --- */

int svc_add(struct svc_table *t, enum svc_kind kind, int proto, uint16_t port,
	    const struct svc_opts *opts)
{
	static const struct svc_opts none;
	if (opts == NULL)
		opts = &none;
	if (!svc_kind_supports(kind, proto) || port == 0)
		return -EINVAL;
	if (proto == IPPROTO_UDP && opts->backlog != 0)
		return -EINVAL;
	if (opts->has_size) {
		uint64_t max = kind == SVC_HTTP ? SVC_HTTP_BODY_MAX
			     : kind == SVC_CHARGEN && proto == IPPROTO_UDP ? SVC_UDP_PAYLOAD_MAX
			     : kind == SVC_CHARGEN ? UINT64_MAX - 1 : 0;
		if (max == 0 || opts->size > max)
			return -EINVAL;
	}
	if (svc_find(t, proto, port) != NULL)
		return -EADDRINUSE;
	if (t->n >= SVC_MAX)
		return -ENOSPC;
	struct svc *sv = calloc(1, sizeof(*sv));
	if (sv == NULL)
		return -ENOMEM;
	sv->t = t;
	sv->kind = kind;
	sv->ops = svc_kinds[kind];
	sv->proto = (uint8_t)proto;
	sv->port = port;
	sv->opts = *opts;
	TAILQ_INIT(&sv->conns);
	int rc = sv->ops->init != NULL ? sv->ops->init(sv) : 0;
	if (rc != 0) {
		free(sv);
		return rc;
	}
	if (proto == IPPROTO_TCP) {
		struct tcp_sockopts o;
		tcp_sockopts_default(&o);
		o.nodelay = sv->ops->nodelay;
		struct sock_owner owner = {.notify = svc_listener_notify, .ctx = sv};
		if (sv->opts.backlog == 0)
			sv->opts.backlog = SVC_BACKLOG_DEFAULT;
		/* On ::, so that the services answer both families (RFC 3493 §3.7). */
		struct inet_addr any = inet_addr_any(true);
		rc = tcp_listen(t->s, &any, port, sv->opts.backlog, &o, &owner, &sv->listener);
	} else {
		struct sock_owner owner = {.notify = svc_udp_notify, .ctx = sv};
		/* On :: too: the datagrams of both families (RFC 3493 §3.7). */
		struct inet_addr any = inet_addr_any(true);
		rc = udp_bind_inet(t->s, &any, port, 0, 0, &owner, &sv->udp);
	}
	if (rc != 0) {
		if (sv->ops->fini != NULL)
			sv->ops->fini(sv);
		free(sv);
		return rc;
	}
	TAILQ_INSERT_TAIL(&t->list, sv, link);
	t->n++;
	return 0;
}

static void svc_stop(struct svc_table *t, struct svc *sv)
{
	struct svc_conn *sc;
	if (sv->ops->stop != NULL)
		sv->ops->stop(sv);
	/* Runs on the worker between polls: no run() or close is in progress. */
	while ((sc = TAILQ_FIRST(&sv->conns)) != NULL)
		svc_conn_close(sc);
	if (sv->listener != NULL)
		tcp_close(sv->listener);     /* resets what is still in its queues */
	if (sv->udp != NULL)
		udp_close(sv->udp);
	if (sv->ops->fini != NULL)
		sv->ops->fini(sv);
	TAILQ_REMOVE(&t->list, sv, link);
	t->n--;
	free(sv);
}

int svc_del(struct svc_table *t, int proto, uint16_t port)
{
	struct svc *sv = svc_find(t, proto, port);
	if (sv == NULL)
		return -ENOENT;
	svc_stop(t, sv);
	return 0;
}

void svc_table_destroy(struct svc_table *t)
{
	if (t == NULL)
		return;
	struct svc *sv;
	while ((sv = TAILQ_FIRST(&t->list)) != NULL)
		svc_stop(t, sv);
	free(t);
}

int svc_walk(struct svc_table *t, int (*fn)(const struct svc_info *si, void *arg), void *arg)
{
	const struct svc *sv;
	TAILQ_FOREACH(sv, &t->list, link) {
		struct svc_info si = {
			.kind = sv->kind,
			.proto = sv->proto,
			.port = sv->port,
			.opts = sv->opts,
			.cnt = sv->cnt,
		};
		int rc = fn(&si, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}
