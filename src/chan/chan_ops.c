/* The server's requests, run on each worker (worker_call): the changes of an application's
 * processes (attach, join after fork, exit). The socket calls travel on the command rings
 * (chan_call.c). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "chan_priv.h"
#include "chan_worker.h"

static struct chan_worker *chan_job_worker(const struct chan_job *j)
{
	return &j->app->chan->cw[j->worker];
}

int chan_job_app_add(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_worker *cw = chan_job_worker(j);
	if (cw->napps >= CHAN_MAX_APPS)
		return -ENOSPC;
	cw->apps[cw->napps++] = j->app;
	j->app->w[j->worker].procs |= 1ull << j->proc;
	return 0;
}

/* A process slot starts clean: its rings empty, its call slots idle, no stale `queued`
 * bits. */
static void chan_proc_reset(struct chan_app *a, unsigned w, unsigned p)
{
	if (w == 0)
		for (unsigned c = 0; c < CHAN_CALL_SLOTS; c++)
			atomic_store(&chan_call_at(a->base, &a->lay, p, c)->state, CHAN_CALL_IDLE);
	struct chan_ring *r = chan_cmd_ring(a->base, &a->lay, p, w);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	r = chan_ev_ring(a->base, &a->lay, p, w);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	uint64_t bit = 1ull << p;
	for (uint32_t s = w; s < a->lay.max_socks; s += a->lay.nb_workers)
		atomic_fetch_and(&chan_sock_at(a->base, &a->lay, s)->queued, ~bit);
}

int chan_job_proc_join(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	uint64_t parent = 1ull << j->req->parent_proc, child = 1ull << j->proc;
	/* The child inherits what the parent holds when it forks, so what the parent queued
	 * before comes first: the CLAIM of a connection it has just accepted, the CLOSE of a
	 * socket it has let go of. Its ring holds no more than CHAN_CMD_RING commands. */
	if (a->w[j->worker].procs & parent)
		chan_worker_run_proc(chan_job_worker(j), a, j->req->parent_proc, CHAN_CMD_RING);
	chan_proc_reset(a, j->worker, j->proc);
	for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers)
		if (a->socks[i].kind != CHAN_SOCK_FREE && (a->socks[i].holders & parent))
			a->socks[i].holders |= child;
	a->w[j->worker].procs |= child;
	return 0;
}

int chan_job_proc_gone(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	struct chan_worker *cw = chan_job_worker(j);
	uint64_t bit = 1ull << j->proc;
	/* Its last calls first: a process that accepted, wrote and closed, then exited at once
	 * left the CLAIM, KICK and CLOSE in its ring, and the exit must not undo them (an
	 * unclaimed connection would be reset, its reply lost). A process disconnected for a
	 * bad command has nothing more run. */
	if (a->w[j->worker].procs & bit)
		chan_worker_run_proc(cw, a, j->proc, CHAN_CMD_RING);
	a->w[j->worker].procs &= ~bit;
	a->w[j->worker].wake &= ~bit;
	chan_bind_drop_proc(cw, a, j->proc);
	for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers) {
		struct chan_dsock *ds = &a->socks[i];
		if (ds->kind == CHAN_SOCK_FREE || !(ds->holders & bit))
			continue;
		ds->holders &= ~bit;
		if (ds->holders == 0)
			chan_dsock_close(cw, ds);
	}
	return 0;
}

int chan_job_app_remove(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	struct chan_worker *cw = chan_job_worker(j);
	/* Listeners first: closing one closes its unclaimed children too. */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers) {
			struct chan_dsock *ds = &a->socks[i];
			if (ds->kind != CHAN_SOCK_FREE &&
			    (pass == 1 || ds->kind == CHAN_SOCK_TCP_LISTEN))
				chan_dsock_close(cw, ds);
		}
	for (unsigned i = 0; i < cw->napps; i++)
		if (cw->apps[i] == a) {
			cw->apps[i] = cw->apps[--cw->napps];
			break;
		}
	return 0;
}
