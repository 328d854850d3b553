#include "daemon.h"

#include <poll.h>

int daemon_each_worker(struct daemon *d, int (*fn)(struct stack *s, void *arg), void *arg)
{
	int first = 0;
	for (unsigned i = 0; i < d->nb_workers && !d->dry_run; i++) {
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

struct netcfg_call {
	int (*fn)(struct netcfg *c, void *arg);
	void *arg;
};

static int netcfg_call_on_stack(struct stack *s, void *arg)
{
	struct netcfg_call *call = arg;
	return call->fn(&s->cfg, call->arg);
}

int daemon_apply_netcfg(struct daemon *d, int (*fn)(struct netcfg *c, void *arg), void *arg)
{
	int rc = fn(&d->master, arg);
	if (rc != 0)
		return rc;
	struct netcfg_call call = {.fn = fn, .arg = arg};
	return daemon_each_worker(d, netcfg_call_on_stack, &call);
}

bool daemon_interrupted(const struct daemon *d)
{
	struct pollfd fds[2] = {{.fd = d->sig_fd, .events = POLLIN},
				{.fd = d->client_fd, .events = POLLRDHUP}};
	if (poll(fds, 2, 0) <= 0)
		return false;
	return (fds[0].revents & POLLIN) != 0 ||
	       (fds[1].revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}
