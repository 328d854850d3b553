#include "daemon.h"

int daemon_each_worker(struct daemon *d, int (*fn)(struct stack *s, void *arg), void *arg)
{
	int first = 0;
	for (unsigned i = 0; i < d->nb_workers; i++) {
		struct worker *w = &d->workers[i];
		int rc = d->workers_running ? worker_call(w, fn, arg) : fn(w->stack, arg);
		if (rc != 0 && first == 0)
			first = rc;
	}
	return first;
}

int daemon_apply(struct daemon *d, int (*fn_master)(struct netcfg *c, void *arg),
		 int (*fn_stack)(struct stack *s, void *arg), void *arg)
{
	int rc = fn_master(&d->master, arg);
	if (rc != 0)
		return rc;
	/* The workers hold the same tables as the master and receive the same change, so they
	 * cannot disagree with it; an error here would be a bug worth shouting about. */
	return daemon_each_worker(d, fn_stack, arg);
}
