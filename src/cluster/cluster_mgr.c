#include "cluster_priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_malloc.h>

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

struct ws_arg {
	struct cluster_wstate *ws;
	unsigned slot;
	const struct cluster_def *def;
};

static int cluster_install_on(struct cluster_wtab *t, void *arg)
{
	struct ws_arg *a = arg;
	cluster_wtab_install(t, a->ws, a->slot, a->def->ports, a->def->nb_ports,
			     !a->def->take_flow);
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
	for (unsigned i = 0; i < def->nb_ports; i++) {
		uint16_t p = def->ports[i];
		if (!cluster_mgr_has_region(m, p)) {
			snprintf(err, errlen, "port %s receives into the stack's memory, which "
				 "consumers cannot map: name it in a 'cluster add' line of the "
				 "config file so that it starts with shared buffers",
				 m->port_name[p]);
			return -EINVAL;
		}
		uint64_t n = m->region[p].pool->size;
		uint64_t reserve = (uint64_t)CLUSTER_RX_RESERVE * m->ops.nb_workers;
		if (held + reserve > n) {
			snprintf(err, errlen, "%" PRIu64 " consumers x ring %u x %u workers = %" PRIu64
				 " frames could be held, and port %s has %" PRIu64 " mbufs of which "
				 "%" PRIu64 " stay with its RX queues: use a smaller ring or more "
				 "mbufs", consumers, def->ring_size, m->ops.nb_workers, held,
				 m->port_name[p], n, reserve);
			return -ENOSPC;
		}
		/* Clusters that take flow share their ports with the stack and with each
		 * other (each gets what its rules send); one that takes all shares nothing. */
		for (unsigned k = 0; k < CLUSTER_MAX; k++) {
			const struct cluster *o = &m->clusters[k];
			bool both_flow = def->take_flow && o->def.take_flow;
			for (unsigned j = 0; o->used && !both_flow && j < o->def.nb_ports; j++) {
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

int cluster_add(struct cluster_mgr *m, const struct cluster_def *def, char *err, size_t errlen)
{
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
		return -1;
	}
	memset(cl, 0, sizeof(*cl));
	cl->def = *def;
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
		uint64_t unsupported = 0;
		for (unsigned w = 0; w < m->ops.nb_workers; w++)
			unsupported += cl->ws[w]->unsupported;
		uint64_t in_use = 0;
		for (unsigned p = 0; p < cl->def.nb_ports; p++)
			in_use += rte_mempool_in_use_count(m->region[cl->def.ports[p]].pool);
		cb->cluster(cb->ctx, &cl->def, unsupported, in_use);
		for (unsigned c = 0; c < cl->nb_consumers; c++) {
			struct cluster_consumer_view v;
			cluster_consumer_view(m, cl, c, &v);
			cb->consumer(cb->ctx, &v);
		}
		cb->cluster_end(cb->ctx);
	}
	pthread_mutex_unlock(&m->lock);
}
