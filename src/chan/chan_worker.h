/* The channel's entry points on a worker (chan_worker.c), wired into the worker loop by
 * the daemon, and the calls the server makes on a worker through worker_call (chan_ops.c). */
#ifndef DPS_CHAN_WORKER_H
#define DPS_CHAN_WORKER_H

#include <stdbool.h>

#include "chan_shm.h"

struct chan_app;
struct stack;

/* Runs the applications' commands and the pending accepts, then wakes the processes that
 * got events. Returns the amount of work done (0: idle). */
unsigned chan_worker_poll(void *ctx);
/* Tells the applications that the worker sleeps (on) or woke. With on, returns false when
 * a command arrived meanwhile: the worker must not sleep. */
bool chan_worker_sleeping(void *ctx, bool on);

/* A request of process proc of app, run on worker w's thread (worker_call). */
struct chan_job {
	struct chan_app *app;
	unsigned proc;
	unsigned worker;
	const struct chan_req *req;
	struct chan_reply *rep;
	unsigned redirect;      /* -EXDEV: the worker that owns the flow the request names */
};

int chan_job_app_add(struct stack *s, void *arg);       /* the worker starts polling app */
int chan_job_proc_join(struct stack *s, void *arg);     /* proc inherits req->parent_proc's */
int chan_job_proc_gone(struct stack *s, void *arg);     /* closes what only proc held */
int chan_job_app_remove(struct stack *s, void *arg);    /* no process left: close the rest */
int chan_job_listen(struct stack *s, void *arg);
int chan_job_unlisten(struct stack *s, void *arg);      /* undo a partial LISTEN */
int chan_job_connect(struct stack *s, void *arg);
int chan_job_bind_check(struct stack *s, void *arg);
int chan_job_udp_open(struct stack *s, void *arg);
int chan_job_udp_connect(struct stack *s, void *arg);
int chan_job_setopt(struct stack *s, void *arg);
int chan_job_info(struct stack *s, void *arg);

#endif
