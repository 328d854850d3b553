#include "cluster_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_malloc.h>

static const char *const take_names[] = {
	[CLUSTER_TAKE_ALL] = "all", [CLUSTER_TAKE_FLOW] = "flow", [CLUSTER_TAKE_REST] = "rest"};

const char *cluster_take_name(enum cluster_take take)
{
	return take_names[take];
}

int cluster_take_parse(const char *name)
{
	for (unsigned i = 0; i < sizeof(take_names) / sizeof(take_names[0]); i++)
		if (strcmp(name, take_names[i]) == 0)
			return (int)i;
	return -1;
}

struct cluster_mgr *cluster_mgr_create(const struct cluster_ops *ops)
{
	if (ops->nb_workers == 0 || ops->nb_workers > DPC_MAX_RINGS)
		return NULL;
	struct cluster_mgr *m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	pthread_mutex_init(&m->lock, NULL);
	m->ops = *ops;
	m->listen_fd = -1;
	m->stop_fd = -1;
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		m->region[p].fd = -1;
	return m;
}

void cluster_mgr_port_name(struct cluster_mgr *m, uint16_t port, const char *name)
{
	snprintf(m->port_name[port], sizeof(m->port_name[port]), "%s", name);
}

int cluster_mgr_region_add(struct cluster_mgr *m, uint16_t port, unsigned n,
			   struct rte_mempool **pool)
{
	char pool_name[RTE_MEMPOOL_NAMESIZE];
	snprintf(pool_name, sizeof(pool_name), "cluster_p%u", port);
	int rc = cluster_region_create(&m->region[port], pool_name, n);
	if (rc != 0)
		return rc;
	*pool = m->region[port].pool;
	return 0;
}

bool cluster_mgr_has_region(struct cluster_mgr *m, uint16_t port)
{
	return port < NETCFG_MAX_PORTS && m->region[port].fd >= 0;
}

void cluster_mgr_destroy(struct cluster_mgr *m)
{
	if (m == NULL)
		return;
	cluster_linger_free(m);
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++)
		if (m->region[p].fd >= 0)
			cluster_region_destroy(&m->region[p]);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static struct cluster *cluster_find(struct cluster_mgr *m, const char *name)
{
	for (unsigned i = 0; i < CLUSTER_MAX; i++)
		if (m->clusters[i].used && strcmp(m->clusters[i].def.name, name) == 0)
			return &m->clusters[i];
	return NULL;
}

int cluster_spec_find(struct cluster_mgr *m, const char *spec, struct cluster **cl,
		      unsigned *c, char *err, size_t errlen)
{
	const char *at = strrchr(spec, '@');
	if (at == NULL || at == spec || (size_t)(at - spec) >= DPC_NAME_LEN) {
		snprintf(err, errlen, "'%s' is not NAME@i or NAME@g:i", spec);
		return -EINVAL;
	}
	char name[DPC_NAME_LEN];
	memcpy(name, spec, (size_t)(at - spec));
	name[at - spec] = '\0';
	struct cluster *found = cluster_find(m, name);
	if (found == NULL) {
		snprintf(err, errlen, "no cluster named '%s'", name);
		return -ENOENT;
	}
	unsigned a, b;
	char tail;
	if (sscanf(at + 1, "%u:%u%c", &a, &b, &tail) == 2 && at[1] >= '0' && at[1] <= '9') {
		if (a >= found->def.nb_groups || b >= found->def.group_size[a]) {
			snprintf(err, errlen, "cluster '%s' has no consumer %u:%u", name, a, b);
			return -ENOENT;
		}
		unsigned first = 0;
		for (unsigned g = 0; g < a; g++)
			first += found->def.group_size[g];
		*c = first + b;
	} else if (sscanf(at + 1, "%u%c", &a, &tail) == 1 && at[1] >= '0' && at[1] <= '9') {
		if (a >= found->nb_consumers) {
			snprintf(err, errlen, "cluster '%s' has consumers 0 to %u, not %u", name,
				 found->nb_consumers - 1, a);
			return -ENOENT;
		}
		*c = a;
	} else {
		snprintf(err, errlen, "'%s' is not NAME@i or NAME@g:i", spec);
		return -EINVAL;
	}
	*cl = found;
	return 0;
}

bool cluster_mgr_find(struct cluster_mgr *m, const char *name, struct cluster_def *def,
		      unsigned *slot)
{
	pthread_mutex_lock(&m->lock);
	const struct cluster *cl = cluster_find(m, name);
	if (cl != NULL) {
		*def = cl->def;
		*slot = (unsigned)(cl - m->clusters);
	}
	pthread_mutex_unlock(&m->lock);
	return cl != NULL;
}

bool cluster_mgr_rest_of(struct cluster_mgr *m, uint16_t port, char name[DPC_NAME_LEN])
{
	bool found = false;
	pthread_mutex_lock(&m->lock);
	for (unsigned k = 0; k < CLUSTER_MAX && !found; k++) {
		const struct cluster *cl = &m->clusters[k];
		for (unsigned i = 0; cl->used && cl->def.take == CLUSTER_TAKE_REST &&
				     i < cl->def.nb_ports && !found; i++) {
			if (cl->def.ports[i] == port) {
				strcpy(name, cl->def.name);
				found = true;
			}
		}
	}
	pthread_mutex_unlock(&m->lock);
	return found;
}

struct ws_arg {
	struct cluster_wstate *ws;
	unsigned slot;
	const struct cluster_def *def;
};

static int cluster_install_on(struct cluster_wtab *t, void *arg)
{
	struct ws_arg *a = arg;
	cluster_wtab_install(t, a->ws, a->slot, a->def->ports, a->def->nb_ports, a->def->take);
	return 0;
}

static int cluster_remove_on(struct cluster_wtab *t, void *arg)
{
	struct ws_arg *a = arg;
	cluster_wtab_remove(t, a->ws);
	return 0;
}

/* The checks a definition must pass before anything changes. */
static int cluster_check(struct cluster_mgr *m, const struct cluster_def *def, char *err,
			 size_t errlen)
{
	if (cluster_find(m, def->name) != NULL) {
		snprintf(err, errlen, "cluster '%s' already exists", def->name);
		return -EEXIST;
	}
	uint64_t consumers = 0;
	for (unsigned g = 0; g < def->nb_groups; g++)
		consumers += def->group_size[g];
	if (consumers > CLUSTER_MAX_CONSUMERS) {
		snprintf(err, errlen, "%" PRIu64 " consumers: at most %u in one cluster", consumers,
			 CLUSTER_MAX_CONSUMERS);
		return -EINVAL;
	}
	/* Every consumer ring full at once must leave each port's RX queues their mbufs:
	 * a slow consumer may then hold only its own frames, never the port's traffic. */
	uint64_t held = consumers * def->ring_size * m->ops.nb_workers;
	uint64_t reserve = (uint64_t)CLUSTER_RX_RESERVE * m->ops.nb_workers;
	for (unsigned i = 0; i < def->nb_ports; i++) {
		uint16_t p = def->ports[i];
		if (consumers == 0) {
			/* bounce only: no consumer maps the port's memory */
		} else if (!cluster_mgr_has_region(m, p)) {
			snprintf(err, errlen, "port %s receives into the stack's memory, which "
				 "consumers cannot map: name it in a 'cluster add' line of the "
				 "config file so that it starts with shared buffers",
				 m->port_name[p]);
			return -EINVAL;
		} else if (held + reserve > m->region[p].pool->size) {
			snprintf(err, errlen, "%" PRIu64 " consumers x ring %u x %u workers = %" PRIu64
				 " frames could be held, and port %s has %u mbufs of which "
				 "%" PRIu64 " stay with its RX queues: use a smaller ring or more "
				 "mbufs", consumers, def->ring_size, m->ops.nb_workers, held,
				 m->port_name[p], m->region[p].pool->size, reserve);
			return -ENOSPC;
		}
		/* Clusters that take flow share their ports with the stack and with each
		 * other (each gets what its rules send), and with the one cluster that takes
		 * the rest; one that takes all shares nothing. */
		for (unsigned k = 0; k < CLUSTER_MAX; k++) {
			const struct cluster *o = &m->clusters[k];
			bool shared = (def->take == CLUSTER_TAKE_FLOW &&
				       o->def.take != CLUSTER_TAKE_ALL) ||
				      (def->take == CLUSTER_TAKE_REST &&
				       o->def.take == CLUSTER_TAKE_FLOW);
			for (unsigned j = 0; o->used && !shared && j < o->def.nb_ports; j++) {
				if (o->def.ports[j] == p) {
					snprintf(err, errlen, "port %s belongs to cluster '%s'",
						 m->port_name[p], o->def.name);
					return -EBUSY;
				}
			}
		}
	}
	return 0;
}

static void cluster_free_states(struct cluster_mgr *m, struct cluster *cl)
{
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		rte_free(cl->ws[w]);
		cl->ws[w] = NULL;
	}
}

/* The programs def names, loaded; 0 or -1 with err (nothing loaded). */
static int cluster_progs_load(const struct cluster_def *def, struct cluster_prog **hash,
			      struct cluster_prog **filter, char *err, size_t errlen)
{
	char why[256];
	*hash = *filter = NULL;
	if (def->hash_prog[0] != '\0' &&
	    (*hash = cluster_prog_load(def->hash_prog, "dps_cluster_hash", why, sizeof(why))) ==
	    NULL) {
		snprintf(err, errlen, "hash custom: %s", why);
		return -1;
	}
	if (def->filter[0] != '\0' &&
	    (*filter = cluster_prog_load(def->filter, "dps_cluster_filter", why, sizeof(why))) ==
	    NULL) {
		cluster_prog_free(*hash);
		*hash = NULL;
		snprintf(err, errlen, "filter: %s", why);
		return -1;
	}
	return 0;
}

int cluster_add(struct cluster_mgr *m, const struct cluster_def *def, char *err, size_t errlen)
{
	struct cluster_prog *hash_prog, *filter;
	if (cluster_progs_load(def, &hash_prog, &filter, err, errlen) != 0)
		return -1;
	pthread_mutex_lock(&m->lock);
	int rc = cluster_check(m, def, err, errlen);
	struct cluster *cl = NULL;
	for (unsigned i = 0; rc == 0 && i < CLUSTER_MAX && cl == NULL; i++)
		if (!m->clusters[i].used)
			cl = &m->clusters[i];
	if (rc == 0 && cl == NULL) {
		snprintf(err, errlen, "%u clusters exist already, the most there can be",
			 CLUSTER_MAX);
		rc = -ENOSPC;
	}
	if (rc != 0) {
		pthread_mutex_unlock(&m->lock);
		cluster_prog_free(hash_prog);
		cluster_prog_free(filter);
		return -1;
	}
	memset(cl, 0, sizeof(*cl));
	cl->def = *def;
	cl->hash_prog = hash_prog;
	cl->filter = filter;
	for (unsigned c = 0; c < CLUSTER_MAX_CONSUMERS; c++)
		cl->cons[c].conn_fd = -1;
	uint16_t first = 0;
	for (unsigned w = 0; w < m->ops.nb_workers && rc == 0; w++) {
		struct cluster_wstate *ws = rte_zmalloc("cluster_ws", sizeof(*ws), 0);
		if (ws == NULL) {
			rc = -ENOMEM;
			break;
		}
		ws->hash = def->hash;
		ws->hash_prog = hash_prog;
		ws->bounce_port = def->bounce_port;
		ws->filter = filter;
		ws->nb_groups = def->nb_groups;
		first = 0;
		for (unsigned g = 0; g < def->nb_groups; g++) {
			ws->group_first[g] = first;
			ws->group_size[g] = def->group_size[g];
			first = (uint16_t)(first + def->group_size[g]);
		}
		memset(ws->port_region, CLUSTER_NO_REGION, sizeof(ws->port_region));
		for (unsigned i = 0; i < def->nb_ports; i++) {
			ws->region_base[i] = (uintptr_t)m->region[def->ports[i]].base;
			ws->region_pool[i] = m->region[def->ports[i]].pool;
			ws->port_region[def->ports[i]] = (uint8_t)i;
		}
		cl->ws[w] = ws;
	}
	if (rc != 0) {
		cluster_free_states(m, cl);
		cluster_prog_free(hash_prog);
		cluster_prog_free(filter);
		snprintf(err, errlen, "out of memory");
		pthread_mutex_unlock(&m->lock);
		return -1;
	}
	cl->nb_consumers = first;
	cl->used = true;
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		struct ws_arg a = {.ws = cl->ws[w], .slot = (unsigned)(cl - m->clusters),
				   .def = &cl->def};
		m->ops.run(m->ops.ctx, w, cluster_install_on, &a);
	}
	pthread_mutex_unlock(&m->lock);
	return 0;
}

/* With m->lock held. */
static void cluster_delete(struct cluster_mgr *m, struct cluster *cl)
{
	for (unsigned c = 0; c < cl->nb_consumers; c++) {
		int conn = cluster_consumer_detach(m, cl, c);
		if (conn < 0)
			continue;
		/* The server thread polls it: wake it with a hang-up and let it close it. */
		shutdown(conn, SHUT_RDWR);
		if (m->nb_zombies < CLUSTER_MAX_ZOMBIES)
			m->zombie[m->nb_zombies++] = conn;
	}
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		struct ws_arg a = {.ws = cl->ws[w]};
		m->ops.run(m->ops.ctx, w, cluster_remove_on, &a);
	}
	cluster_free_states(m, cl);
	/* No worker runs them any more (each took the cluster out above). */
	cluster_prog_free(cl->hash_prog);
	cluster_prog_free(cl->filter);
	cl->used = false;
}

int cluster_del(struct cluster_mgr *m, const char *name, char *err, size_t errlen)
{
	pthread_mutex_lock(&m->lock);
	struct cluster *cl = cluster_find(m, name);
	if (cl != NULL)
		cluster_delete(m, cl);
	else
		snprintf(err, errlen, "no cluster named '%s'", name);
	pthread_mutex_unlock(&m->lock);
	return cl != NULL ? 0 : -1;
}

void cluster_mgr_delete_all(struct cluster_mgr *m)
{
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < CLUSTER_MAX; i++)
		if (m->clusters[i].used)
			cluster_delete(m, &m->clusters[i]);
	pthread_mutex_unlock(&m->lock);
}

static void cluster_consumer_view(struct cluster_mgr *m, const struct cluster *cl, unsigned c,
				  struct cluster_consumer_view *v)
{
	memset(v, 0, sizeof(*v));
	unsigned first = 0;
	for (unsigned g = 0; g < cl->def.nb_groups; g++) {
		if (c < first + cl->def.group_size[g]) {
			v->group = g;
			v->index = c - first;
			break;
		}
		first += cl->def.group_size[g];
	}
	const struct cluster_consumer *k = &cl->cons[c];
	v->attached = k->conn_fd >= 0;
	v->pid = k->pid;
	for (unsigned w = 0; w < m->ops.nb_workers; w++) {
		const struct cluster_counters *ctr = &cl->ws[w]->ctr[c];
		v->ctr.delivered += ctr->delivered;
		v->ctr.dropped += ctr->dropped;
		v->ctr.absent += ctr->absent;
		if (v->attached)
			v->outstanding += cluster_wring_outstanding(k->wr[w]);
	}
}

void cluster_show(struct cluster_mgr *m, const struct cluster_show_cb *cb)
{
	pthread_mutex_lock(&m->lock);
	for (unsigned i = 0; i < CLUSTER_MAX; i++) {
		const struct cluster *cl = &m->clusters[i];
		if (!cl->used)
			continue;
		struct cluster_totals t = {0};
		for (unsigned w = 0; w < m->ops.nb_workers; w++) {
			t.unsupported += cl->ws[w]->unsupported;
			t.bounced += cl->ws[w]->bounced;
			t.filtered += cl->ws[w]->filtered;
			t.forwarded += cl->ws[w]->forwarded;
		}
		for (unsigned p = 0; p < cl->def.nb_ports; p++)
			if (cluster_mgr_has_region(m, cl->def.ports[p]))
				t.pool_in_use += rte_mempool_in_use_count(
					m->region[cl->def.ports[p]].pool);
		cb->cluster(cb->ctx, &cl->def, &t);
		for (unsigned c = 0; c < cl->nb_consumers; c++) {
			struct cluster_consumer_view v;
			cluster_consumer_view(m, cl, c, &v);
			cb->consumer(cb->ctx, &v);
		}
		cb->cluster_end(cb->ctx);
	}
	pthread_mutex_unlock(&m->lock);
}
