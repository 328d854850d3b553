#include "monitor_rates.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A reply arrives in milliseconds; a daemon that is alive but does not answer (stopped,
 * wedged) must not freeze the monitor. */
#define MON_FETCH_TIMEOUT_S 5

/* The traffic counters of a port or worker in `stats -j`; the port's other counters are
 * its loss counters. */
static const char *const traffic_keys[] = {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes"};
/* What a worker loses outside its stack's drop reasons (`stats`, worker lines). */
static const char *const worker_loss_keys[] = {"handoff_full", "neigh_news_lost"};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

int mon_snap_take(struct mon_snap *s, const char *path, char err[CTL_CLIENT_ERR_MAX])
{
	memset(s, 0, sizeof(*s));
	char *words[] = {"stats"};
	int fd = ctl_client_send(path, true, 1, words, MON_FETCH_TIMEOUT_S, err);
	if (fd < 0)
		return -1;
	int status = ctl_client_status(fd, path, err);
	size_t len = 0;
	int rc = status < 0 ? -1 : ctl_client_body(fd, &s->body, &len, err);
	close(fd);
	if (rc != 0)
		return -1;
	if (status == 0) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "dpstackd refused 'stats': %.*s",
			 (int)strcspn(s->body, "\n"), s->body);
		mon_snap_free(s);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &s->mono);
	clock_gettime(CLOCK_REALTIME, &s->wall);
	rc = json_tree_parse(&s->tree, s->body, len);
	if (rc != 0 || s->tree.nodes[0].type != JSON_OBJECT) {
		snprintf(err, CTL_CLIENT_ERR_MAX, "dpstackd's 'stats' reply is not a JSON object%s",
			 rc == -ENOMEM ? " (out of memory)" : "");
		mon_snap_free(s);
		return -1;
	}
	return 0;
}

void mon_snap_free(struct mon_snap *s)
{
	json_tree_free(&s->tree);
	free(s->body);
	memset(s, 0, sizeof(*s));
}

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (double)(a->tv_sec - b->tv_sec) + (double)(a->tv_nsec - b->tv_nsec) / 1e9;
}

/* How much counter key of object (node) grew from old to new; 0 when it is missing from
 * either or went back (the daemon restarted behind the same socket). */
static uint64_t grown(const struct json_tree *nt, int nobj, const struct json_tree *ot, int oobj,
		      const char *key)
{
	uint64_t now = json_tree_u64(nt, nobj, key, 0);
	uint64_t was = json_tree_u64(ot, oobj, key, UINT64_MAX);
	return was <= now ? now - was : 0;
}

static bool is_one_of(const char *key, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(key, set[i]) == 0)
			return true;
	return false;
}

static int rates_add(struct mon_rates *r, const char *name, double per_s)
{
	if (per_s <= 0)
		return 0;
	struct mon_rate *v = realloc(r->v, (r->n + 1) * sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	r->v = v;
	r->v[r->n++] = (struct mon_rate){.name = name, .per_s = per_s};
	r->sum += per_s;
	return 0;
}

/* The rates of the numeric members of nobj (the new object) against oobj, except those in
 * skip[0..nskip). */
static int rates_of_members(struct mon_rates *r, const struct json_tree *nt, int nobj,
			    const struct json_tree *ot, int oobj, const char *const *skip,
			    size_t nskip, double secs)
{
	if (nobj < 0 || nt->nodes[nobj].type != JSON_OBJECT)
		return 0;
	for (int c = nt->nodes[nobj].child; c >= 0; c = nt->nodes[c].next) {
		const char *key = nt->nodes[c].key;
		if (nt->nodes[c].type != JSON_NUMBER || is_one_of(key, skip, nskip))
			continue;
		if (rates_add(r, key, (double)grown(nt, nobj, ot, oobj, key) / secs) != 0)
			return -ENOMEM;
	}
	return 0;
}

static void traffic_of(struct mon_traffic *t, const struct json_tree *nt, int nobj,
		       const struct json_tree *ot, int oobj, double secs)
{
	t->rx_pps = (double)grown(nt, nobj, ot, oobj, "rx_packets") / secs;
	t->rx_bps = 8.0 * (double)grown(nt, nobj, ot, oobj, "rx_bytes") / secs;
	t->tx_pps = (double)grown(nt, nobj, ot, oobj, "tx_packets") / secs;
	t->tx_bps = 8.0 * (double)grown(nt, nobj, ot, oobj, "tx_bytes") / secs;
}

/* The worker numbered index in the workers array of tree t, or -1. */
static int worker_node(const struct json_tree *t, uint64_t index)
{
	int arr = json_tree_get(t, 0, "workers");
	if (arr < 0 || t->nodes[arr].type != JSON_ARRAY)
		return -1;
	for (int c = t->nodes[arr].child; c >= 0; c = t->nodes[c].next)
		if (json_tree_u64(t, c, "worker", UINT64_MAX) == index)
			return c;
	return -1;
}

static uint64_t cycles_total(const struct json_tree *t, int worker)
{
	int cyc = json_tree_get(t, worker, "cycles");
	uint64_t sum = 0;
	if (cyc < 0 || t->nodes[cyc].type != JSON_OBJECT)
		return 0;
	for (int c = t->nodes[cyc].child; c >= 0; c = t->nodes[c].next)
		if (t->nodes[c].type == JSON_NUMBER && t->nodes[c].is_u64)
			sum += t->nodes[c].u64;
	return sum;
}

static double busy_pct(const struct json_tree *nt, int nw, const struct json_tree *ot, int ow)
{
	uint64_t now = cycles_total(nt, nw), was = cycles_total(ot, ow);
	if (ow < 0 || now <= was)
		return 0;
	double pct = 100.0 * (double)grown(nt, nw, ot, ow, "busy_cycles") / (double)(now - was);
	return pct > 100.0 ? 100.0 : pct; /* the counters are read a moment apart */
}

static int view_ports(struct mon_view *v, const struct json_tree *nt, const struct json_tree *ot)
{
	int nports = json_tree_get(nt, 0, "ports"), oports = json_tree_get(ot, 0, "ports");
	if (nports < 0 || nt->nodes[nports].type != JSON_OBJECT)
		return 0;
	for (int c = nt->nodes[nports].child; c >= 0; c = nt->nodes[c].next) {
		if (nt->nodes[c].type != JSON_OBJECT)
			continue;
		struct mon_port_view *p = realloc(v->ports, (v->nb_ports + 1) * sizeof(*p));
		if (p == NULL)
			return -ENOMEM;
		v->ports = p;
		p = &v->ports[v->nb_ports++];
		*p = (struct mon_port_view){.name = nt->nodes[c].key};
		int old = json_tree_get(ot, oports, p->name);
		traffic_of(&p->traffic, nt, c, ot, old, v->interval_s);
		if (rates_of_members(&p->losses, nt, c, ot, old, traffic_keys,
				     ARRAY_LEN(traffic_keys), v->interval_s) != 0)
			return -ENOMEM;
	}
	return 0;
}

static int view_workers(struct mon_view *v, const struct json_tree *nt, const struct json_tree *ot)
{
	int arr = json_tree_get(nt, 0, "workers");
	if (arr < 0 || nt->nodes[arr].type != JSON_ARRAY)
		return 0;
	for (int c = nt->nodes[arr].child; c >= 0; c = nt->nodes[c].next) {
		struct mon_worker_view *w = realloc(v->workers, (v->nb_workers + 1) * sizeof(*w));
		if (w == NULL)
			return -ENOMEM;
		v->workers = w;
		w = &v->workers[v->nb_workers++];
		*w = (struct mon_worker_view){
			.worker = json_tree_u64(nt, c, "worker", 0),
			.lcore = json_tree_u64(nt, c, "lcore", 0),
			.tcp_established = json_tree_u64(nt, c, "tcp_established", 0),
			.tcp_conns = json_tree_u64(nt, c, "tcp_conns", 0),
			.udp_socks = json_tree_u64(nt, c, "udp_socks", 0),
		};
		int old = worker_node(ot, w->worker);
		traffic_of(&w->traffic, nt, c, ot, old, v->interval_s);
		w->busy_pct = busy_pct(nt, c, ot, old);
		if (rates_of_members(&w->drops, nt, json_tree_get(nt, c, "drops"), ot,
				     json_tree_get(ot, old, "drops"), NULL, 0, v->interval_s) != 0)
			return -ENOMEM;
		for (size_t k = 0; k < ARRAY_LEN(worker_loss_keys); k++)
			if (rates_add(&w->losses, worker_loss_keys[k],
				      (double)grown(nt, c, ot, old, worker_loss_keys[k]) /
					      v->interval_s) != 0)
				return -ENOMEM;
	}
	return 0;
}

int mon_view_build(struct mon_view *v, const struct mon_snap *prev, const struct mon_snap *cur)
{
	memset(v, 0, sizeof(*v));
	v->wall = cur->wall;
	v->interval_s = ts_diff(&cur->mono, &prev->mono);
	if (v->interval_s <= 0)
		v->interval_s = 1e-9; /* two replies in the same clock tick: rates of nothing */
	const struct json_tree *nt = &cur->tree, *ot = &prev->tree;
	int rc = view_ports(v, nt, ot);
	if (rc == 0)
		rc = view_workers(v, nt, ot);
	if (rc == 0)
		rc = rates_of_members(&v->drops, nt, json_tree_get(nt, 0, "drops"), ot,
				      json_tree_get(ot, 0, "drops"), NULL, 0, v->interval_s);
	if (rc != 0)
		mon_view_free(v);
	return rc;
}

void mon_view_free(struct mon_view *v)
{
	for (size_t i = 0; i < v->nb_ports; i++)
		free(v->ports[i].losses.v);
	for (size_t i = 0; i < v->nb_workers; i++) {
		free(v->workers[i].drops.v);
		free(v->workers[i].losses.v);
	}
	free(v->ports);
	free(v->workers);
	free(v->drops.v);
	memset(v, 0, sizeof(*v));
}
