/* service add/del/show: the built-in services (src/svc). Every worker has its own table and
 * serves its RSS share of the port, so a service is added on every worker or on none, and
 * `service show` sums the workers' counters. */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "svc/svc.h"

#define SERVICE_ROWS (2 * SVC_MAX)   /* workers agree on the list; room if they did not */

struct service_op {
	struct daemon *d;
	enum svc_kind kind;
	int proto;
	uint16_t port;
	struct svc_opts opts;
	bool added[WORKER_MAX];
	unsigned deleted;       /* workers that had the service */
};

static struct svc_table *service_table(struct daemon *d, const struct stack *s)
{
	return s->id < WORKER_MAX ? d->svc[s->id] : NULL;
}

static const char *service_proto_name(int proto)
{
	return proto == IPPROTO_TCP ? "tcp" : "udp";
}

static int service_parse_proto(const char *w, int *proto, struct ctl_out *o)
{
	if (strcmp(w, "tcp") == 0)
		*proto = IPPROTO_TCP;
	else if (strcmp(w, "udp") == 0)
		*proto = IPPROTO_UDP;
	else
		return ctl_error(o, "protocol must be tcp or udp, not '%s'", w);
	return 0;
}

static int service_parse_port(const char *w, uint16_t *port, struct ctl_out *o)
{
	uint32_t v;
	if (cmd_parse_u32(w, 1, 65535, &v, "port", o) != 0)
		return -1;
	*port = (uint16_t)v;
	return 0;
}

static const char *service_strerror(int err)
{
	switch (err) {
	case EADDRINUSE: return "port already in use";
	case ENOSPC: return "too many services";
	case ENOENT: return "no such service";
	default: return cmd_strerror(err);
	}
}

/* The tables are allocated here, on the control thread, before any worker uses them. */
static int service_tables_make(struct daemon *d, struct ctl_out *o)
{
	for (unsigned i = 0; i < d->nb_workers && !d->dry_run; i++) {
		if (d->svc[i] != NULL)
			continue;
		d->svc[i] = svc_table_create(d->workers[i].stack);
		if (d->svc[i] == NULL)
			return ctl_error(o, "out of memory");
	}
	return 0;
}

static int service_add_stack(struct stack *s, void *arg)
{
	struct service_op *op = arg;
	struct svc_table *t = service_table(op->d, s);
	if (t == NULL)
		return -ENOMEM;
	int rc = svc_add(t, op->kind, op->proto, op->port, &op->opts);
	if (rc == 0)
		op->added[s->id] = true;
	/* Every datagram to a UDP port goes to the one worker that owns the port
	 * (steer_udp_owner), whichever queue it came in on: the others have nothing to serve,
	 * and their udp_bind says so with -EXDEV. */
	if (rc == -EXDEV && op->proto == IPPROTO_UDP)
		return 0;
	return rc;
}

static int service_rollback_stack(struct stack *s, void *arg)
{
	struct service_op *op = arg;
	struct svc_table *t = service_table(op->d, s);
	if (t != NULL && s->id < WORKER_MAX && op->added[s->id])
		svc_del(t, op->proto, op->port);
	return 0;
}

static int service_del_stack(struct stack *s, void *arg)
{
	struct service_op *op = arg;
	struct svc_table *t = service_table(op->d, s);
	if (t != NULL && svc_del(t, op->proto, op->port) == 0)
		op->deleted++;
	return 0;
}

/* size N: what it means depends on the kind (svc.h), and so does its range. */
static int service_parse_size(const char *w, struct service_op *op, struct ctl_out *o)
{
	uint32_t min = 0, max;
	if (op->kind == SVC_HTTP) {
		max = SVC_HTTP_BODY_MAX;
	} else if (op->kind == SVC_CHARGEN && op->proto == IPPROTO_UDP) {
		max = SVC_UDP_PAYLOAD_MAX;
	} else if (op->kind == SVC_CHARGEN) {
		min = 1;
		max = UINT32_MAX;
	} else {
		return ctl_error(o, "size applies to http and chargen only");
	}
	uint32_t v;
	if (cmd_parse_u32(w, min, max, &v, "size", o) != 0)
		return -1;
	op->opts.has_size = true;
	op->opts.size = v;
	return 0;
}

/* service add KIND PROTO PORT [size BYTES] [backlog N] */
int cmd_service_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc < 3 || (argc - 3) % 2 != 0)
		return -1;
	struct service_op op = {.d = d};
	int kind = svc_kind_parse(argv[0]);
	if (kind < 0)
		return ctl_error(o, "unknown service '%s' (echo, discard, chargen, http or iperf3)",
				 argv[0]);
	op.kind = (enum svc_kind)kind;
	if (service_parse_proto(argv[1], &op.proto, o) != 0)
		return -1;
	if (!svc_kind_supports(op.kind, op.proto))
		return ctl_error(o, "%s runs over tcp only", argv[0]);
	/* An iperf3 test is a control connection and its streams, which must meet on one
	 * worker's table; RSS spreads a client's connections over the workers. */
	if (op.kind == SVC_IPERF3 && d->nb_workers > 1)
		return ctl_error(o, "iperf3 needs 'workers 1' (a test's connections must all reach "
				 "one worker; RSS spreads them)");
	if (service_parse_port(argv[2], &op.port, o) != 0)
		return -1;
	bool seen_size = false, seen_backlog = false;
	for (int i = 3; i < argc; i += 2) {
		if (strcmp(argv[i], "size") == 0 && !seen_size) {
			seen_size = true;
			if (service_parse_size(argv[i + 1], &op, o) != 0)
				return -1;
		} else if (strcmp(argv[i], "backlog") == 0 && !seen_backlog) {
			seen_backlog = true;
			if (op.proto != IPPROTO_TCP)
				return ctl_error(o, "backlog applies to tcp only");
			if (cmd_parse_u32(argv[i + 1], 1, 4096, &op.opts.backlog, "backlog", o) != 0)
				return -1;
		} else if (strcmp(argv[i], "size") == 0 || strcmp(argv[i], "backlog") == 0) {
			return ctl_error(o, "'%s' given twice", argv[i]);
		} else {
			return ctl_error(o, "unknown service option '%s'", argv[i]);
		}
	}
	if (service_tables_make(d, o) != 0)
		return -1;
	int rc = daemon_each_worker(d, service_add_stack, &op);
	if (rc != 0) {
		/* All or nothing: the workers that took it let it go again. */
		daemon_each_worker(d, service_rollback_stack, &op);
		return ctl_error(o, "service add %s %s %u: %s", argv[0], argv[1], op.port,
				 service_strerror(-rc));
	}
	return 0;
}

/* service del PROTO PORT */
int cmd_service_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 2)
		return -1;
	struct service_op op = {.d = d};
	if (service_parse_proto(argv[0], &op.proto, o) != 0 ||
	    service_parse_port(argv[1], &op.port, o) != 0)
		return -1;
	daemon_each_worker(d, service_del_stack, &op);
	if (op.deleted == 0)
		return ctl_error(o, "service del %s %u: %s", argv[0], op.port,
				 service_strerror(ENOENT));
	return 0;
}

struct service_snapshot {
	struct daemon *d;
	size_t n;
	struct svc_info rows[SERVICE_ROWS];
};

static int service_collect_one(const struct svc_info *si, void *arg)
{
	struct service_snapshot *snap = arg;
	struct svc_info *row = NULL;
	for (size_t i = 0; i < snap->n && row == NULL; i++)
		if (snap->rows[i].proto == si->proto && snap->rows[i].port == si->port)
			row = &snap->rows[i];
	if (row == NULL) {
		if (snap->n == SERVICE_ROWS)
			return 1;
		snap->rows[snap->n++] = *si;
		return 0;
	}
#define SERVICE_SUM(name) row->cnt.name += si->cnt.name;
	SVC_COUNTER_LIST(SERVICE_SUM)
#undef SERVICE_SUM
	return 0;
}

static int service_collect(struct stack *s, void *arg)
{
	struct service_snapshot *snap = arg;
	struct svc_table *t = service_table(snap->d, s);
	if (t != NULL)
		svc_walk(t, service_collect_one, snap);
	return 0;
}

int cmd_service_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	struct service_snapshot *snap = calloc(1, sizeof(*snap));
	if (snap == NULL)
		return ctl_error(o, "out of memory");
	snap->d = d;
	daemon_each_worker(d, service_collect, snap);
	if (o->json)
		json_arr_begin(o, NULL);
	else
		ctl_printf(o, "%-5s %-5s %-7s %10s %8s %14s %14s %10s %10s %8s\n", "proto",
			   "port", "kind", "accepted", "active", "bytes_in", "bytes_out",
			   "requests", "datagrams", "errors");
	for (size_t i = 0; i < snap->n; i++) {
		const struct svc_info *si = &snap->rows[i];
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "proto", service_proto_name(si->proto));
			json_u64(o, "port", si->port);
			json_str(o, "kind", svc_kind_name(si->kind));
			if (si->opts.has_size)
				json_u64(o, "size", si->opts.size);
			if (si->proto == IPPROTO_TCP)
				json_u64(o, "backlog", si->opts.backlog);
#define SERVICE_JSON(name) json_u64(o, #name, si->cnt.name);
			SVC_COUNTER_LIST(SERVICE_JSON)
#undef SERVICE_JSON
			json_obj_end(o);
		} else {
			const struct svc_counters *c = &si->cnt;
			ctl_printf(o, "%-5s %-5u %-7s %10" PRIu64 " %8" PRIu64 " %14" PRIu64 " %14" PRIu64
				   " %10" PRIu64 " %10" PRIu64 " %8" PRIu64 "\n",
				   service_proto_name(si->proto), si->port,
				   svc_kind_name(si->kind), c->accepted, c->active, c->bytes_in,
				   c->bytes_out, c->requests, c->datagrams, c->errors);
		}
	}
	if (o->json)
		json_arr_end(o);
	free(snap);
	return 0;
}

static int service_fini_stack(struct stack *s, void *arg)
{
	struct daemon *d = arg;
	if (s->id < WORKER_MAX) {
		svc_table_destroy(d->svc[s->id]);
		d->svc[s->id] = NULL;
	}
	return 0;
}

void cmd_service_fini(struct daemon *d)
{
	/* Tables exist only once `service add` ran, i.e. with every worker's stack made; a
	 * daemon that failed to start has none (and maybe no stacks). */
	bool any = false;
	for (unsigned i = 0; i < d->nb_workers; i++)
		any |= d->svc[i] != NULL;
	if (any)
		daemon_each_worker(d, service_fini_stack, d);
}
