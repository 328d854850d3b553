/* Built-in services of dpstackd: echo (RFC 862), discard (RFC 863), chargen (RFC 864), a
 * minimal HTTP/1.1 server and an iperf3 server (TCP tests of the iperf3 program), run by the
 * workers on the stack's own socket layer, so that TCP and UDP can be tested and benchmarked
 * with ordinary clients (nc, curl, wrk, iperf3) before any application attaches.
 *
 * Every worker has its own service table (DESIGN.md: shared-nothing workers): the control
 * thread adds the same service to every worker, each worker listens on 0.0.0.0:PORT and
 * serves the connections and datagrams its RSS share brings, and its counters are summed by
 * the control thread. All calls except svc_table_create run on the worker that owns the
 * table's stack (worker_call), or on the control thread before the workers start. */
#ifndef DPS_SVC_SVC_H
#define DPS_SVC_SVC_H

#include <stdbool.h>
#include <stdint.h>

struct stack;
struct svc_table;

/* The kinds, with the names the CLI uses: one list, so the parser and `service show` agree. */
#define SVC_KIND_LIST(X) \
	X(ECHO, "echo") \
	X(DISCARD, "discard") \
	X(CHARGEN, "chargen") \
	X(HTTP, "http") \
	X(IPERF3, "iperf3")

enum svc_kind {
#define SVC_KIND_ENUM(id, name) SVC_##id,
	SVC_KIND_LIST(SVC_KIND_ENUM)
#undef SVC_KIND_ENUM
	SVC_KIND_COUNT
};

/* Per service and worker; `active` is a gauge, the rest only grow. */
#define SVC_COUNTER_LIST(X) \
	X(accepted)     /* TCP connections accepted */ \
	X(active)       /* TCP connections open now */ \
	X(bytes_in)     /* payload bytes read from clients */ \
	X(bytes_out)    /* payload bytes queued to clients */ \
	X(requests)     /* HTTP requests answered, iperf3 tests started */ \
	X(datagrams)    /* UDP datagrams received */ \
	X(errors)       /* resets, failed accepts/sends, HTTP error answers, iperf3 refusals */

struct svc_counters {
#define SVC_COUNTER_FIELD(name) uint64_t name;
	SVC_COUNTER_LIST(SVC_COUNTER_FIELD)
#undef SVC_COUNTER_FIELD
};

#define SVC_BACKLOG_DEFAULT 1024
#define SVC_MAX 64                      /* services per worker */
#define SVC_HTTP_BODY_MAX (1u << 30)    /* `size` of an http service */
#define SVC_UDP_PAYLOAD_MAX 65507       /* largest IPv4 UDP payload */
#define SVC_CHARGEN_UDP_MAX 512         /* RFC 864: 0..512 characters per datagram */

struct svc_opts {
	uint32_t backlog;       /* TCP: accept queue; 0 = SVC_BACKLOG_DEFAULT */
	bool has_size;
	/* http: body bytes of the pattern instead of the default text; chargen over TCP:
	 * bytes sent before the connection is closed; chargen over UDP: the length of every
	 * answer instead of a random 0..512. */
	uint64_t size;
};

/* What svc_walk reports about one service of one worker. */
struct svc_info {
	enum svc_kind kind;
	uint8_t proto;          /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t port;
	struct svc_opts opts;
	struct svc_counters cnt;
};

const char *svc_kind_name(enum svc_kind k);
/* The kind called name, or -1. */
int svc_kind_parse(const char *name);
/* Whether kind runs over proto (http and iperf3 are TCP only). */
bool svc_kind_supports(enum svc_kind k, int proto);

/* An empty table for the stack of one worker; NULL when out of memory. Allocation only:
 * this one may run on any thread before the worker uses the table. */
struct svc_table *svc_table_create(struct stack *s);
/* Stops every service (listeners closed, connections closed, UDP sockets closed) and frees
 * the table. NULL: no-op. */
void svc_table_destroy(struct svc_table *t);

/* Starts a service on 0.0.0.0:port. Returns 0, -EINVAL (kind/proto/options), -EADDRINUSE
 * (this table or another socket has the port), -ENOSPC (SVC_MAX), -ENOMEM, -ENOTSUP
 * (protocol not available), or what the socket layer returned. */
int svc_add(struct svc_table *t, enum svc_kind kind, int proto, uint16_t port,
	    const struct svc_opts *opts);
/* Stops a service: its listener or socket is closed, its connections are closed (a FIN
 * after what is queued), its counters are gone. -ENOENT when there is none. */
int svc_del(struct svc_table *t, int proto, uint16_t port);
/* Calls fn for every service in the order they were added; stops when fn returns non-zero
 * and returns that. */
int svc_walk(struct svc_table *t, int (*fn)(const struct svc_info *si, void *arg), void *arg);

#endif
