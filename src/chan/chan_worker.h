/* The channel's entry points on a worker (chan_worker.c), wired into the worker loop by
 * the daemon, and the jobs the server runs on each worker through worker_call (chan_ops.c)
 * when an application's processes come and go. */
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
/* The daemon stops (worker_call, arg: the struct chan_worker): the send FIFOs left for
 * later rounds, those of closed UDP sockets among them, are sent whole now, since no
 * application waits for the worker any more, and the closed sockets end. Returns 0. */
int chan_worker_udp_finish(struct stack *s, void *arg);

/* A change of process proc of app, run on worker w's thread (worker_call). */
struct chan_job {
	struct chan_app *app;
	unsigned proc;
	unsigned worker;
	const struct chan_req *req;     /* CHAN_OP_JOIN: the parent */
};

int chan_job_app_add(struct stack *s, void *arg);       /* the worker starts polling app */
int chan_job_proc_join(struct stack *s, void *arg);     /* proc inherits req->parent_proc's */
int chan_job_proc_gone(struct stack *s, void *arg);     /* closes what only proc held */
int chan_job_app_remove(struct stack *s, void *arg);    /* no process left: close the rest */

#endif
