/* An iperf3 server for the TCP tests of the iperf3 program (protocol of iperf 3.12, the
 * version in Debian 12; written from its iperf_server_api.c, iperf_api.c and iperf_tcp.c).
 *
 * The protocol. Every connection to the port starts with the client's 37-byte cookie (36
 * printable characters and a NUL). The first connection of a test is its control
 * connection; the server drives it by writing one signed byte per state:
 *   PARAM_EXCHANGE (9)   the client sends its parameters: a 4-byte big-endian length, then
 *                        a JSON object ("tcp", "parallel", "len", "reverse", "time", ...)
 *   CREATE_STREAMS (10)  the client opens `parallel` more connections to the same port,
 *                        one after the other, each sending the same cookie first; they are
 *                        the streams, numbered 1, 3, 4, 5, ... in the order they arrive
 *                        (iperf_add_stream's numbering, which the client repeats)
 *   TEST_START (1), TEST_RUNNING (2): data flows: client to server, or with "reverse"
 *                        server to client in blocks of `len` bytes
 *   ... the client writes TEST_END (4) when its time (or byte count) is up; the server
 *                        closes the streams and writes
 *   EXCHANGE_RESULTS (13) the client sends its results (length + JSON), the server answers
 *                        with its own (cpu_util_*, sender_has_retransmits, and for every
 *                        stream its id, bytes, retransmits, jitter, errors, packets,
 *                        start_time, end_time: the client refuses results without them, or
 *                        with an id it does not know)
 *   DISPLAY_RESULTS (14) the client prints, writes IPERF_DONE (16) and closes.
 * CLIENT_TERMINATE (12) from the client ends a test at any time; SERVER_TERMINATE (11) tells
 * the client that the service is going away. A connection arriving while a test runs gets
 * ACCESS_DENIED (-1) and is closed (so does a stream with another cookie); parameters we do
 * not serve get SERVER_ERROR (-2) followed by two 4-byte big-endian numbers, iperf3's error
 * code and an errno, which the client prints.
 *
 * Served: TCP, -R, -P 1..128, -t/-n/-k (the client decides when the test ends), -O (bytes
 * of the omitted seconds are not counted, as iperf3 does), -l up to 1 MiB. Refused with
 * SERVER_ERROR: -u and --sctp ("protocol does not exist"), --bidir and -b with -R
 * ("not implemented"; we cannot pace). Ignored: -w, -M, -C, -N, -S, --fq-rate, -Z, title,
 * extra data, and the authentication token (no users are configured).
 *
 * One test at a time per service, like the iperf3 server. Every connection of a test must
 * reach the worker that holds its control connection, and the NIC's RSS spreads a client's
 * connections over the workers: `service add iperf3` is refused unless the daemon runs with
 * `workers 1` (src/ctl/cmd_service.c).
 *
 * Timeouts: services have no timers of their own (the socket layer's timers belong to TCP),
 * so time limits are checked when something happens: a connection that has not sent its
 * cookie within IPERF_HANDSHAKE_MS, or beyond IPERF_PENDING_MAX such connections, is closed
 * when the next one arrives; a test that is stuck (a handshake step over IPERF_HANDSHAKE_MS,
 * no progress for IPERF_IDLE_MS, or running past its time plus IPERF_GRACE_MS) is ended when
 * another client asks for the service, instead of refusing it. A stuck test with nobody
 * waiting holds one connection and the block buffer until then. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_min.h"
#include "svc_priv.h"
#include "stack/stack.h"

/* Control states and error codes of iperf 3.12 (iperf_api.h): the wire values. */
#define IPERF_TEST_START 1
#define IPERF_TEST_RUNNING 2
#define IPERF_TEST_END 4
#define IPERF_PARAM_EXCHANGE 9
#define IPERF_CREATE_STREAMS 10
#define IPERF_SERVER_TERMINATE 11
#define IPERF_CLIENT_TERMINATE 12
#define IPERF_EXCHANGE_RESULTS 13
#define IPERF_DISPLAY_RESULTS 14
#define IPERF_DONE 16
#define IPERF_ACCESS_DENIED (-1)
#define IPERF_SERVER_ERROR (-2)

#define IPERF_IE_DURATION 5       /* "test duration too long" */
#define IPERF_IE_NUMSTREAMS 6     /* "number of parallel streams too large" */
#define IPERF_IE_BLOCKSIZE 7      /* "block size too large" */
#define IPERF_IE_UNIMP 13         /* "an option you are trying to set is not implemented" */
#define IPERF_IE_INITTEST 101     /* "test initialization failed" + errno */
#define IPERF_IE_RECVPARAMS 114   /* "unable to receive parameters from client" + errno */
#define IPERF_IE_PROTOCOL 131     /* "protocol does not exist" */

#define IPERF_COOKIE_SIZE 37
#define IPERF_STREAMS_MAX 128          /* MAX_STREAMS */
#define IPERF_BLKSIZE_DEFAULT (128u * 1024)
#define IPERF_BLKSIZE_MAX (1024u * 1024) /* MAX_BLOCKSIZE */
#define IPERF_TIME_MAX 86400           /* MAX_TIME, seconds */
#define IPERF_JSON_MAX (64u * 1024)    /* parameters or results; longer is refused */
#define IPERF_MEMBERS_MAX 64           /* top-level members of one JSON message */
#define IPERF_OUT_MAX (32u * 1024)     /* queued control output: the results of 128 streams */
#define IPERF_PENDING_MAX 16           /* connections that have not sent their cookie */
#define IPERF_HANDSHAKE_MS 10000u      /* cookie, parameters, streams, results */
#define IPERF_IDLE_MS 120000u          /* a running test without progress (iperf3's
					* default --rcv-timeout) */
#define IPERF_GRACE_MS 40000u          /* past -t + -O (iperf3's server timer) */

enum iperf_phase {
	IPERF_IDLE,        /* no test: the next connection with a valid cookie controls one */
	IPERF_PARAMS,      /* PARAM_EXCHANGE sent: reading the parameters */
	IPERF_STREAMS,     /* CREATE_STREAMS sent: taking connections with the cookie */
	IPERF_RUNNING,     /* TEST_RUNNING sent: data until TEST_END */
	IPERF_RESULTS,     /* EXCHANGE_RESULTS sent: reading the client's results */
	IPERF_DISPLAY,     /* DISPLAY_RESULTS sent: until IPERF_DONE or the close */
	IPERF_CLOSING,     /* the test is being torn down */
};

enum iperf_role {
	IPERF_ROLE_PENDING,   /* cookie not complete yet */
	IPERF_ROLE_CONTROL,
	IPERF_ROLE_STREAM,
	IPERF_ROLE_REFUSED,   /* ACCESS_DENIED on its way, then closed */
	IPERF_ROLE_GONE,      /* being closed */
};

struct iperf_conn;

struct iperf_stream_rec {
	struct iperf_conn *ic;    /* NULL once closed */
	uint32_t id;
	uint32_t blk_off;         /* reverse: bytes of the current block already sent */
	uint64_t bytes;           /* counted (after the omitted seconds) */
	uint64_t retransmits;
};

/* The test of one service on one worker (svc.priv). */
struct iperf_test {
	enum iperf_phase phase;
	uint32_t gen;                  /* changes with every test: stale streams notice */
	struct iperf_conn *ctl;
	uint64_t deadline_ms;          /* of the current phase; 0: none */
	uint64_t active_ms;            /* last progress of the test */
	char cookie[IPERF_COOKIE_SIZE];
	/* parameters */
	bool reverse;
	uint32_t nstreams;
	uint32_t blksize;
	uint32_t duration_s;
	uint32_t omit_s;
	/* streams */
	uint32_t nrec;
	struct iperf_stream_rec rec[IPERF_STREAMS_MAX];
	uint64_t start_us;             /* TEST_RUNNING sent */
	uint64_t count_from_us;        /* start + omit: bytes count from here */
	uint64_t end_us;               /* TEST_END received */
	char cc[24];                   /* congestion control of the streams, "" unknown */
	uint8_t *block;                /* reverse: one block of the pattern */
	unsigned pending;              /* connections in IPERF_ROLE_PENDING */
	/* control input: a 4-byte length, then the body */
	bool in_body;
	uint32_t in_have;
	uint32_t body_len;
	uint8_t hdr[4];
	/* control output, and what to do once it is out (SVC_RUN_WAIT: carry on) */
	uint32_t out_off, out_len;
	enum svc_run finish;
	struct json_min_member members[IPERF_MEMBERS_MAX];
	char in[IPERF_JSON_MAX];
	char arena[IPERF_JSON_MAX];
	uint8_t out[IPERF_OUT_MAX];
};

struct iperf_conn {
	struct svc_conn sc;
	enum iperf_role role;
	uint32_t gen;                  /* stream: the test it belongs to */
	uint32_t idx;                  /* stream: its record */
	uint64_t opened_ms;
	uint8_t cookie_len;
	char cookie[IPERF_COOKIE_SIZE];
};

/* What one step of the control connection did. */
enum iperf_step {
	IPERF_STEP_AGAIN,     /* progress: step again */
	IPERF_STEP_WAIT,      /* needs input */
	IPERF_STEP_DONE,      /* the test is over: close */
	IPERF_STEP_ERROR,     /* broken: close, count an error */
};

static struct iperf_test *iperf_test_of(const struct svc *sv)
{
	return sv->priv;
}

static uint64_t iperf_now_ms(const struct svc *sv)
{
	return sv->t->s->now_ms;
}

static uint64_t iperf_now_us(const struct svc *sv)
{
	return sv->t->s->now_us;
}

static void iperf_set_role(struct iperf_test *t, struct iperf_conn *ic, enum iperf_role role)
{
	if (ic->role == IPERF_ROLE_PENDING)
		t->pending--;
	ic->role = role;
}

/* --- lazy time limits --- */

static bool iperf_test_stale(const struct iperf_test *t, uint64_t now)
{
	if (t->phase == IPERF_IDLE || t->phase == IPERF_CLOSING)
		return false;
	if (t->deadline_ms != 0 && now >= t->deadline_ms)
		return true;
	return now - t->active_ms >= IPERF_IDLE_MS;
}

/* Ends a stuck test so that a new client can have the service. Returns whether the service
 * is idle now (the end is deferred while the control connection is busy further up). */
static bool iperf_evict_stale(struct svc *sv, struct iperf_test *t)
{
	if (t->ctl != NULL && iperf_test_stale(t, iperf_now_ms(sv)))
		svc_conn_end(&t->ctl->sc, true);
	return t->phase == IPERF_IDLE;
}

static void iperf_set_phase(struct svc *sv, struct iperf_test *t, enum iperf_phase p,
			    uint64_t limit_ms)
{
	uint64_t now = iperf_now_ms(sv);
	t->phase = p;
	t->active_ms = now;
	t->deadline_ms = limit_ms != 0 ? now + limit_ms : 0;
}

/* Closes connections that never sent their cookie: those older than IPERF_HANDSHAKE_MS, and
 * the oldest ones beyond IPERF_PENDING_MAX. `keep` is the one just accepted. */
static void iperf_evict_pending(struct svc *sv, struct iperf_test *t, struct iperf_conn *keep)
{
	uint64_t now = iperf_now_ms(sv);
	for (;;) {
		struct iperf_conn *victim = NULL;
		struct svc_conn *sc;
		TAILQ_FOREACH(sc, &sv->conns, link) {
			struct iperf_conn *ic = (struct iperf_conn *)sc;
			if (ic == keep || ic->role != IPERF_ROLE_PENDING || sc->running)
				continue;
			if (now - ic->opened_ms >= IPERF_HANDSHAKE_MS ||
			    t->pending > IPERF_PENDING_MAX) {
				victim = ic;   /* the list is in accept order: the oldest first */
				break;
			}
		}
		if (victim == NULL)
			return;
		svc_conn_end(&victim->sc, true);
	}
}

/* --- control output --- */

static int iperf_out_put(struct iperf_test *t, const void *p, size_t n)
{
	if (t->out_off == t->out_len)
		t->out_off = t->out_len = 0;
	if (n > sizeof(t->out) - t->out_len) {
		memmove(t->out, t->out + t->out_off, t->out_len - t->out_off);
		t->out_len -= t->out_off;
		t->out_off = 0;
		if (n > sizeof(t->out) - t->out_len)
			return -ENOBUFS;
	}
	memcpy(t->out + t->out_len, p, n);
	t->out_len += (uint32_t)n;
	return 0;
}

static int iperf_out_state(struct iperf_test *t, signed char state)
{
	return iperf_out_put(t, &state, 1);
}

/* Sends what is queued on the control connection: DONE once all of it is in the FIFO. */
static enum svc_run iperf_ctl_flush(struct iperf_test *t)
{
	struct svc_conn *sc = &t->ctl->sc;
	while (t->out_off < t->out_len) {
		ssize_t m = tcp_send(sc->c, t->out + t->out_off, t->out_len - t->out_off);
		if (m == -EAGAIN)
			return SVC_RUN_WAIT;
		if (m < 0)
			return SVC_RUN_ERROR;
		t->out_off += (uint32_t)m;
		sc->sv->cnt.bytes_out += (uint64_t)m;
	}
	return SVC_RUN_DONE;
}

/* Output queued from another connection's run (a stream completing the set): the control
 * connection's run sends it, guarded by svc.c against a close on the way. */
static void iperf_ctl_kick(struct iperf_test *t)
{
	if (t->ctl != NULL)
		svc_conn_kick(&t->ctl->sc);
}

/* SERVER_ERROR with iperf3's error code and an errno, then the control connection closes. */
static enum iperf_step iperf_server_error(struct iperf_test *t, int32_t ie, int32_t err)
{
	uint32_t words[2] = {htonl((uint32_t)ie), htonl((uint32_t)err)};
	if (iperf_out_state(t, IPERF_SERVER_ERROR) != 0 ||
	    iperf_out_put(t, words, sizeof(words)) != 0)
		return IPERF_STEP_ERROR;
	t->finish = SVC_RUN_ERROR;
	return IPERF_STEP_AGAIN;
}

/* --- reading --- */

/* Reads until buf holds need bytes (*have so far). */
static enum iperf_step iperf_read_exact(struct svc_conn *sc, void *buf, uint32_t need,
					uint32_t *have, bool *eof)
{
	while (*have < need) {
		ssize_t n = tcp_recv(sc->c, (uint8_t *)buf + *have, need - *have);
		if (n == -EAGAIN)
			return IPERF_STEP_WAIT;
		if (n == 0) {
			*eof = true;
			return IPERF_STEP_DONE;
		}
		if (n < 0)
			return IPERF_STEP_ERROR;
		*have += (uint32_t)n;
		sc->sv->cnt.bytes_in += (uint64_t)n;
	}
	return IPERF_STEP_AGAIN;
}

/* A length-prefixed JSON message into t->in; AGAIN once whole (*len set), *too_long when
 * the length is 0 or over IPERF_JSON_MAX. */
static enum iperf_step iperf_read_json(struct iperf_test *t, uint32_t *len, bool *eof,
				       bool *too_long)
{
	struct svc_conn *sc = &t->ctl->sc;
	enum iperf_step st;
	if (!t->in_body) {
		st = iperf_read_exact(sc, t->hdr, sizeof(t->hdr), &t->in_have, eof);
		if (st != IPERF_STEP_AGAIN)
			return st;
		uint32_t be;
		memcpy(&be, t->hdr, sizeof(be));
		t->body_len = ntohl(be);
		if (t->body_len == 0 || t->body_len > IPERF_JSON_MAX) {
			*too_long = true;
			return IPERF_STEP_ERROR;
		}
		t->in_body = true;
		t->in_have = 0;
	}
	st = iperf_read_exact(sc, t->in, t->body_len, &t->in_have, eof);
	if (st != IPERF_STEP_AGAIN)
		return st;
	*len = t->body_len;
	t->in_body = false;
	t->in_have = 0;
	return IPERF_STEP_AGAIN;
}

/* --- parameters --- */

/* A numeric parameter: dflt when absent; -EINVAL when present but not a number. */
static int iperf_param_num(const struct json_min_member *m, size_t n, const char *key,
			   int64_t dflt, int64_t *out)
{
	const struct json_min_member *p = json_min_find(m, n, key);
	if (p == NULL) {
		*out = dflt;
		return 0;
	}
	if (p->type != JSON_MIN_NUMBER)
		return -EINVAL;
	*out = p->i;
	return 0;
}

static bool iperf_param_has(const struct json_min_member *m, size_t n, const char *key)
{
	return json_min_find(m, n, key) != NULL;   /* iperf3 tests presence, not the value */
}

static enum iperf_step iperf_params_apply(struct svc *sv, struct iperf_test *t, uint32_t len)
{
	int n = json_min_parse_object(t->in, len, t->members, IPERF_MEMBERS_MAX, t->arena,
				      sizeof(t->arena));
	if (n < 0)
		return iperf_server_error(t, IPERF_IE_RECVPARAMS, EBADMSG);
	const struct json_min_member *m = t->members;
	size_t cnt = (size_t)n;
	if (iperf_param_has(m, cnt, "udp") || iperf_param_has(m, cnt, "sctp"))
		return iperf_server_error(t, IPERF_IE_PROTOCOL, 0);
	if (iperf_param_has(m, cnt, "bidirectional"))
		return iperf_server_error(t, IPERF_IE_UNIMP, 0);
	int64_t parallel, blksize, duration, omit, rate;
	if (iperf_param_num(m, cnt, "parallel", 1, &parallel) != 0 ||
	    iperf_param_num(m, cnt, "len", IPERF_BLKSIZE_DEFAULT, &blksize) != 0 ||
	    iperf_param_num(m, cnt, "time", 0, &duration) != 0 ||
	    iperf_param_num(m, cnt, "omit", 0, &omit) != 0 ||
	    iperf_param_num(m, cnt, "bandwidth", 0, &rate) != 0)
		return iperf_server_error(t, IPERF_IE_RECVPARAMS, EINVAL);
	if (parallel < 1 || parallel > IPERF_STREAMS_MAX)
		return iperf_server_error(t, IPERF_IE_NUMSTREAMS, 0);
	if (blksize == 0)
		blksize = IPERF_BLKSIZE_DEFAULT;
	if (blksize < 0 || blksize > IPERF_BLKSIZE_MAX)
		return iperf_server_error(t, IPERF_IE_BLOCKSIZE, 0);
	if (duration < 0 || duration > IPERF_TIME_MAX || omit < 0 || omit > IPERF_TIME_MAX)
		return iperf_server_error(t, IPERF_IE_DURATION, 0);
	t->reverse = iperf_param_has(m, cnt, "reverse");
	if (t->reverse && rate != 0)
		return iperf_server_error(t, IPERF_IE_UNIMP, 0);   /* -b -R: no pacing here */
	t->nstreams = (uint32_t)parallel;
	t->blksize = (uint32_t)blksize;
	t->duration_s = (uint32_t)duration;
	t->omit_s = (uint32_t)omit;
	if (t->reverse) {
		t->block = malloc(t->blksize);
		if (t->block == NULL)
			return iperf_server_error(t, IPERF_IE_INITTEST, ENOMEM);
		svc_pattern_fill(t->block, t->blksize, 0);
	}
	/* The streams connect to this port: the listener is already there. */
	if (iperf_out_state(t, IPERF_CREATE_STREAMS) != 0)
		return IPERF_STEP_ERROR;
	iperf_set_phase(sv, t, IPERF_STREAMS, IPERF_HANDSHAKE_MS);
	return IPERF_STEP_AGAIN;
}

/* --- streams --- */

static struct iperf_stream_rec *iperf_stream_rec(struct iperf_test *t, struct iperf_conn *ic)
{
	if (ic->role != IPERF_ROLE_STREAM || ic->gen != t->gen || ic->idx >= t->nrec ||
	    t->rec[ic->idx].ic != ic)
		return NULL;
	return &t->rec[ic->idx];
}

static bool iperf_counting(const struct svc *sv, const struct iperf_test *t)
{
	return t->phase == IPERF_RUNNING && iperf_now_us(sv) >= t->count_from_us;
}

/* Reads everything readable (counted while the test runs). */
static enum svc_run iperf_stream_read(struct svc *sv, struct iperf_test *t,
				      struct iperf_stream_rec *r)
{
	struct svc_conn *sc = &r->ic->sc;
	for (;;) {
		ssize_t n = tcp_recv(sc->c, sv->t->scratch, sizeof(sv->t->scratch));
		if (n == -EAGAIN)
			return SVC_RUN_WAIT;
		if (n == 0)
			return SVC_RUN_DONE;
		if (n < 0)
			return SVC_RUN_ERROR;
		sv->cnt.bytes_in += (uint64_t)n;
		t->active_ms = iperf_now_ms(sv);
		if (iperf_counting(sv, t))
			r->bytes += (uint64_t)n;
	}
}

/* Reverse: queues blocks as long as the send FIFO takes them. */
static enum svc_run iperf_stream_write(struct svc *sv, struct iperf_test *t,
				       struct iperf_stream_rec *r)
{
	if (!t->reverse || t->phase != IPERF_RUNNING)
		return SVC_RUN_WAIT;
	struct svc_conn *sc = &r->ic->sc;
	for (;;) {
		ssize_t m = tcp_send(sc->c, t->block + r->blk_off, t->blksize - r->blk_off);
		if (m == -EAGAIN)
			return SVC_RUN_WAIT;
		if (m < 0)
			return SVC_RUN_ERROR;
		r->blk_off = (uint32_t)((r->blk_off + (uint64_t)m) % t->blksize);
		sv->cnt.bytes_out += (uint64_t)m;
		t->active_ms = iperf_now_ms(sv);
		if (iperf_counting(sv, t))
			r->bytes += (uint64_t)m;
	}
}

static enum svc_run iperf_stream_run(struct svc *sv, struct iperf_test *t, struct iperf_conn *ic)
{
	struct iperf_stream_rec *r = iperf_stream_rec(t, ic);
	if (r == NULL)
		return SVC_RUN_DONE;     /* its test is over */
	enum svc_run res = iperf_stream_read(sv, t, r);
	if (res != SVC_RUN_WAIT)
		return res;
	return iperf_stream_write(sv, t, r);
}

static void iperf_stream_note(struct iperf_test *t, struct iperf_stream_rec *r)
{
	struct tcp_conn_info info;
	tcp_conn_info(r->ic->sc.c, &info);
	r->retransmits = info.retransmits;
	if (t->cc[0] != '\0' || info.cc == NULL)
		return;
	size_t k = 0;
	for (; info.cc[k] != '\0' && k < sizeof(t->cc) - 1; k++) {
		char ch = info.cc[k];
		bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			     (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
		if (!plain) {
			k = 0;   /* not printed rather than escaped */
			break;
		}
		t->cc[k] = ch;
	}
	t->cc[k] = '\0';
}

/* Every stream is connected: the test starts. */
static void iperf_test_start(struct svc *sv, struct iperf_test *t)
{
	if (iperf_out_state(t, IPERF_TEST_START) != 0 ||
	    iperf_out_state(t, IPERF_TEST_RUNNING) != 0) {
		svc_conn_end(&t->ctl->sc, true);
		return;
	}
	uint64_t limit = 0;
	if (t->duration_s != 0)
		limit = ((uint64_t)t->duration_s + t->omit_s) * 1000 + IPERF_GRACE_MS;
	iperf_set_phase(sv, t, IPERF_RUNNING, limit);
	t->start_us = iperf_now_us(sv);
	t->count_from_us = t->start_us + (uint64_t)t->omit_s * 1000000;
	sv->cnt.requests++;
	iperf_ctl_kick(t);
}

/* Adds a connection with the test's cookie as the next stream. */
static void iperf_stream_add(struct svc *sv, struct iperf_test *t, struct iperf_conn *ic)
{
	uint32_t k = t->nrec++;
	iperf_set_role(t, ic, IPERF_ROLE_STREAM);
	ic->gen = t->gen;
	ic->idx = k;
	t->rec[k] = (struct iperf_stream_rec){.ic = ic, .id = k == 0 ? 1 : k + 2};
	t->active_ms = iperf_now_ms(sv);
	if (t->nrec < t->nstreams)
		return;
	iperf_test_start(sv, t);
	if (!t->reverse || t->phase != IPERF_RUNNING)
		return;
	/* Their windows are open and nothing will say so again: start the others now (this
	 * one continues in its own run). */
	for (uint32_t i = 0; i < t->nrec && t->phase == IPERF_RUNNING; i++) {
		struct iperf_stream_rec *r = &t->rec[i];
		if (r->ic != NULL && r->ic != ic)
			svc_conn_kick(&r->ic->sc);
	}
}

/* --- the end of a test --- */

/* Closes the streams: their counts stay in the records. */
static void iperf_streams_close(struct iperf_test *t)
{
	for (uint32_t i = 0; i < t->nrec; i++) {
		struct iperf_stream_rec *r = &t->rec[i];
		struct iperf_conn *ic = r->ic;
		if (ic == NULL)
			continue;
		iperf_stream_note(t, r);
		r->ic = NULL;
		svc_conn_end(&ic->sc, false);
	}
}

static enum iperf_step iperf_test_end(struct svc *sv, struct iperf_test *t)
{
	/* TEST_END may come before every stream connected: results are what we have. What
	 * has already arrived still counts: each stream reads it in its run. */
	t->end_us = iperf_now_us(sv);
	for (uint32_t i = 0; i < t->nrec && !t->reverse; i++)
		if (t->rec[i].ic != NULL)
			svc_conn_kick(&t->rec[i].ic->sc);
	t->phase = IPERF_CLOSING;   /* nothing counts any more */
	iperf_streams_close(t);
	if (iperf_out_state(t, IPERF_EXCHANGE_RESULTS) != 0)
		return IPERF_STEP_ERROR;
	iperf_set_phase(sv, t, IPERF_RESULTS, IPERF_HANDSHAKE_MS);
	return IPERF_STEP_AGAIN;
}

/* Our results, after the 4-byte length, then DISPLAY_RESULTS. */
static enum iperf_step iperf_results_send(struct svc *sv, struct iperf_test *t)
{
	if (t->out_off != t->out_len)
		return IPERF_STEP_ERROR;   /* run() flushes before every step */
	t->out_off = t->out_len = 0;
	char *j = (char *)t->out + 4;
	size_t room = sizeof(t->out) - 4 - 1, n = 0;
	double secs = 0;
	if (t->start_us != 0 && t->end_us > t->count_from_us)
		secs = (double)(t->end_us - t->count_from_us) / 1e6;
	int w = snprintf(j, room,
			 "{\"cpu_util_total\":0,\"cpu_util_user\":0,\"cpu_util_system\":0,"
			 "\"sender_has_retransmits\":%d,",
			 t->reverse ? 1 : -1);
	if (w < 0 || (size_t)w >= room)
		return IPERF_STEP_ERROR;
	n = (size_t)w;
	if (t->cc[0] != '\0') {
		w = snprintf(j + n, room - n, "\"congestion_used\":\"%s\",", t->cc);
		if (w < 0 || (size_t)w >= room - n)
			return IPERF_STEP_ERROR;
		n += (size_t)w;
	}
	w = snprintf(j + n, room - n, "\"streams\":[");
	if (w < 0 || (size_t)w >= room - n)
		return IPERF_STEP_ERROR;
	n += (size_t)w;
	for (uint32_t i = 0; i < t->nrec; i++) {
		const struct iperf_stream_rec *r = &t->rec[i];
		long long retrans = t->reverse ? (long long)r->retransmits : -1;
		w = snprintf(j + n, room - n,
			     "%s{\"id\":%" PRIu32 ",\"bytes\":%" PRIu64 ",\"retransmits\":%lld,"
			     "\"jitter\":0,\"errors\":0,\"packets\":0,\"start_time\":0,"
			     "\"end_time\":%.6f}",
			     i == 0 ? "" : ",", r->id, r->bytes, retrans, secs);
		if (w < 0 || (size_t)w >= room - n)
			return IPERF_STEP_ERROR;
		n += (size_t)w;
	}
	w = snprintf(j + n, room - n, "]}");
	if (w < 0 || (size_t)w >= room - n)
		return IPERF_STEP_ERROR;
	n += (size_t)w;
	uint32_t be = htonl((uint32_t)n);
	memcpy(t->out, &be, sizeof(be));
	t->out_len = (uint32_t)(4 + n);
	if (iperf_out_state(t, IPERF_DISPLAY_RESULTS) != 0)
		return IPERF_STEP_ERROR;
	iperf_set_phase(sv, t, IPERF_DISPLAY, IPERF_HANDSHAKE_MS);
	return IPERF_STEP_AGAIN;
}

/* --- the control connection --- */

static enum iperf_step iperf_ctl_message(struct svc *sv, struct iperf_test *t, signed char msg)
{
	switch (msg) {
	case IPERF_TEST_START:
		return IPERF_STEP_AGAIN;     /* iperf3 ignores it too */
	case IPERF_TEST_END:
		if (t->phase != IPERF_STREAMS && t->phase != IPERF_RUNNING)
			return IPERF_STEP_ERROR;
		return iperf_test_end(sv, t);
	case IPERF_CLIENT_TERMINATE:
	case IPERF_DONE:
		return IPERF_STEP_DONE;
	default:
		return IPERF_STEP_ERROR;     /* iperf3: "received an unknown control message" */
	}
}

static enum iperf_step iperf_ctl_step(struct svc *sv, struct iperf_test *t)
{
	bool eof = false, too_long = false;
	uint32_t len = 0;
	enum iperf_step st;
	switch (t->phase) {
	case IPERF_PARAMS:
		st = iperf_read_json(t, &len, &eof, &too_long);
		if (too_long)
			return iperf_server_error(t, IPERF_IE_RECVPARAMS, EMSGSIZE);
		if (st != IPERF_STEP_AGAIN)
			return eof ? IPERF_STEP_ERROR : st;
		t->active_ms = iperf_now_ms(sv);
		return iperf_params_apply(sv, t, len);
	case IPERF_RESULTS:
		st = iperf_read_json(t, &len, &eof, &too_long);
		if (st != IPERF_STEP_AGAIN)
			return eof || too_long ? IPERF_STEP_ERROR : st;
		/* Only checked (iperf3 refuses the exchange without these): our report does
		 * not depend on the client's. */
		int n = json_min_parse_object(t->in, len, t->members, IPERF_MEMBERS_MAX, t->arena,
					      sizeof(t->arena));
		if (n < 0 || json_min_find(t->members, (size_t)n, "streams") == NULL ||
		    json_min_find(t->members, (size_t)n, "sender_has_retransmits") == NULL)
			return IPERF_STEP_ERROR;
		return iperf_results_send(sv, t);
	case IPERF_STREAMS:
	case IPERF_RUNNING:
	case IPERF_DISPLAY: {
		uint8_t b;
		uint32_t have = 0;
		st = iperf_read_exact(&t->ctl->sc, &b, 1, &have, &eof);
		if (eof)   /* after the results, a close without IPERF_DONE is an end too */
			return t->phase == IPERF_DISPLAY ? IPERF_STEP_DONE : IPERF_STEP_ERROR;
		if (st != IPERF_STEP_AGAIN)
			return st;
		t->active_ms = iperf_now_ms(sv);
		return iperf_ctl_message(sv, t, (signed char)b);
	}
	default:
		return IPERF_STEP_ERROR;
	}
}

static enum svc_run iperf_ctl_run(struct svc *sv, struct iperf_test *t, struct iperf_conn *ic)
{
	if (t->ctl != ic)
		return SVC_RUN_DONE;
	for (;;) {
		/* One message at a time, each answered before the next is read. */
		enum svc_run r = iperf_ctl_flush(t);
		if (r != SVC_RUN_DONE)
			return r;
		if (t->finish != SVC_RUN_WAIT)
			return t->finish;
		switch (iperf_ctl_step(sv, t)) {
		case IPERF_STEP_AGAIN:
			continue;
		case IPERF_STEP_WAIT:
			return SVC_RUN_WAIT;
		case IPERF_STEP_DONE:
			return SVC_RUN_DONE;
		case IPERF_STEP_ERROR:
			return SVC_RUN_ERROR;
		}
	}
}

/* Tears the test down: its control connection is closing. */
static void iperf_test_reset(struct iperf_test *t)
{
	t->phase = IPERF_CLOSING;
	iperf_streams_close(t);
	free(t->block);
	t->block = NULL;
	t->ctl = NULL;
	t->gen++;
	t->nrec = 0;
	t->in_body = false;
	t->in_have = 0;
	t->out_off = t->out_len = 0;
	t->finish = SVC_RUN_WAIT;
	t->cc[0] = '\0';
	t->start_us = t->count_from_us = t->end_us = 0;
	t->deadline_ms = 0;
	t->phase = IPERF_IDLE;
}

/* --- new connections --- */

static bool iperf_cookie_valid(const char *c)
{
	for (int i = 0; i < IPERF_COOKIE_SIZE - 1; i++)
		if (c[i] < 0x21 || c[i] > 0x7e)
			return false;
	return c[IPERF_COOKIE_SIZE - 1] == '\0';
}

/* ACCESS_DENIED (the real server's answer to anyone while busy), then the close. */
static enum svc_run iperf_refuse(struct iperf_test *t, struct iperf_conn *ic)
{
	iperf_set_role(t, ic, IPERF_ROLE_REFUSED);
	signed char b = IPERF_ACCESS_DENIED;
	ssize_t m = tcp_send(ic->sc.c, &b, 1);
	if (m == -EAGAIN)
		return SVC_RUN_WAIT;
	if (m == 1)
		ic->sc.sv->cnt.bytes_out++;
	return SVC_RUN_ERROR;
}

static enum svc_run iperf_become_control(struct svc *sv, struct iperf_test *t,
					 struct iperf_conn *ic)
{
	iperf_set_role(t, ic, IPERF_ROLE_CONTROL);
	t->ctl = ic;
	t->gen++;
	memcpy(t->cookie, ic->cookie, sizeof(t->cookie));
	t->nrec = 0;
	t->reverse = false;
	if (iperf_out_state(t, IPERF_PARAM_EXCHANGE) != 0)
		return SVC_RUN_ERROR;
	iperf_set_phase(sv, t, IPERF_PARAMS, IPERF_HANDSHAKE_MS);
	return iperf_ctl_run(sv, t, ic);
}

static enum svc_run iperf_pending_run(struct svc *sv, struct iperf_test *t, struct iperf_conn *ic)
{
	/* Busy and not taking streams: refused at once, as iperf3 does, unless the test is
	 * stuck. */
	if (t->phase != IPERF_IDLE && t->phase != IPERF_STREAMS && !iperf_evict_stale(sv, t))
		return iperf_refuse(t, ic);
	while (ic->cookie_len < IPERF_COOKIE_SIZE) {
		ssize_t n = tcp_recv(ic->sc.c, ic->cookie + ic->cookie_len,
				     IPERF_COOKIE_SIZE - ic->cookie_len);
		if (n == -EAGAIN)
			return SVC_RUN_WAIT;
		if (n == 0)
			return SVC_RUN_DONE;    /* gone before saying anything */
		if (n < 0)
			return SVC_RUN_ERROR;
		ic->cookie_len = (uint8_t)(ic->cookie_len + n);
		sv->cnt.bytes_in += (uint64_t)n;
	}
	if (!iperf_cookie_valid(ic->cookie))
		return SVC_RUN_ERROR;           /* not an iperf3 client: no answer */
	if (t->phase == IPERF_STREAMS && t->nrec < t->nstreams &&
	    memcmp(ic->cookie, t->cookie, sizeof(t->cookie)) == 0) {
		iperf_stream_add(sv, t, ic);
		return iperf_stream_run(sv, t, ic);
	}
	if (t->phase == IPERF_IDLE || iperf_evict_stale(sv, t))
		return iperf_become_control(sv, t, ic);
	return iperf_refuse(t, ic);
}

/* --- the kind's operations --- */

static void iperf_open(struct svc_conn *sc)
{
	struct iperf_conn *ic = (struct iperf_conn *)sc;
	struct iperf_test *t = iperf_test_of(sc->sv);
	ic->role = IPERF_ROLE_PENDING;
	ic->opened_ms = iperf_now_ms(sc->sv);
	t->pending++;
	iperf_evict_pending(sc->sv, t, ic);
}

static enum svc_run iperf_run(struct svc_conn *sc)
{
	struct iperf_conn *ic = (struct iperf_conn *)sc;
	struct svc *sv = sc->sv;
	struct iperf_test *t = iperf_test_of(sv);
	switch (ic->role) {
	case IPERF_ROLE_PENDING:
		return iperf_pending_run(sv, t, ic);
	case IPERF_ROLE_CONTROL:
		return iperf_ctl_run(sv, t, ic);
	case IPERF_ROLE_STREAM:
		return iperf_stream_run(sv, t, ic);
	case IPERF_ROLE_REFUSED:
		return iperf_refuse(t, ic);
	case IPERF_ROLE_GONE:
		break;
	}
	return SVC_RUN_DONE;
}

static void iperf_close(struct svc_conn *sc)
{
	struct iperf_conn *ic = (struct iperf_conn *)sc;
	struct iperf_test *t = iperf_test_of(sc->sv);
	struct iperf_stream_rec *r;
	switch (ic->role) {
	case IPERF_ROLE_PENDING:
		t->pending--;
		break;
	case IPERF_ROLE_CONTROL:
		if (t->ctl == ic)
			iperf_test_reset(t);
		break;
	case IPERF_ROLE_STREAM:
		r = iperf_stream_rec(t, ic);
		if (r != NULL) {      /* closed by the client or reset: its count stays */
			iperf_stream_note(t, r);
			r->ic = NULL;
		}
		break;
	case IPERF_ROLE_REFUSED:
	case IPERF_ROLE_GONE:
		break;
	}
	ic->role = IPERF_ROLE_GONE;
}

static int iperf_init(struct svc *sv)
{
	struct iperf_test *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	t->phase = IPERF_IDLE;
	t->finish = SVC_RUN_WAIT;
	sv->priv = t;
	return 0;
}

/* svc del while a test runs: the client is told, as iperf3 does when it is stopped. */
static void iperf_stop(struct svc *sv)
{
	struct iperf_test *t = iperf_test_of(sv);
	if (t->ctl == NULL || t->phase == IPERF_CLOSING)
		return;
	t->out_off = t->out_len = 0;
	if (iperf_out_state(t, IPERF_SERVER_TERMINATE) != 0)
		return;
	t->finish = SVC_RUN_DONE;    /* run() sends it, then closes */
	svc_conn_kick(&t->ctl->sc);
}

static void iperf_fini(struct svc *sv)
{
	struct iperf_test *t = iperf_test_of(sv);
	if (t != NULL)
		free(t->block);
	free(t);
	sv->priv = NULL;
}

const struct svc_kind_ops svc_iperf3_ops = {
	.tcp = true,
	.udp = false,
	.conn_size = sizeof(struct iperf_conn),
	/* Control messages are single bytes answered at once (iperf3 sets TCP_NODELAY on the
	 * control connection); streams fill whole segments anyway. */
	.nodelay = true,
	.open = iperf_open,
	.run = iperf_run,
	.close = iperf_close,
	.init = iperf_init,
	.stop = iperf_stop,
	.fini = iperf_fini,
};
