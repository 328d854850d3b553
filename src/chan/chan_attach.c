/* Application processes come and go: the attach of a new application (its segment and
 * eventfds), the join of a forked child, and the drop of a process that ended, misbehaved or
 * that the daemon stops serving. The channel thread (chan_server.c) receives the messages
 * and calls these; they are apart from its poll loop so that a test can drive them with the
 * bytes a hostile application would send. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chan_priv.h"
#include "chan_worker.h"
#include "dp/worker.h"

static int chan_run(struct chan *ch, unsigned w, int (*fn)(struct stack *, void *),
		    struct chan_job *j)
{
	j->worker = w;
	return worker_call(&ch->workers[w], fn, j);
}

static int chan_run_all(struct chan *ch, int (*fn)(struct stack *, void *), struct chan_job *j)
{
	int rc = 0;
	for (unsigned w = 0; w < ch->nb_workers; w++) {
		int r = chan_run(ch, w, fn, j);
		if (r < 0 && rc == 0)
			rc = r;
	}
	return rc;
}

static int chan_send(int fd, const struct chan_reply *rep, const int *fds, unsigned nfds)
{
	struct iovec iov = {.iov_base = (void *)rep, .iov_len = sizeof(*rep)};
	union {
		char buf[CMSG_SPACE(sizeof(int) * (CHAN_MAX_WORKERS + 2))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (nfds > 0) {
		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
	}
	return sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)sizeof(*rep) ? 0 : -1;
}

static int chan_reply_err(int fd, int err)
{
	struct chan_reply rep = {.err = err};
	return chan_send(fd, &rep, NULL, 0);
}

void chan_proc_drop(struct chan *ch, struct chan_app *a, unsigned p)
{
	struct chan_proc_priv *pp = &a->procs[p];
	close(pp->fd);
	pp->fd = -1;
	atomic_store(&a->hdr->procs[p].attached, 0);
	/* Its threads asleep on the bell's futex watch no connection: wake them to see it. */
	doorbell_ring(&a->hdr->procs[p].bell);
	struct chan_job j = {.app = a, .proc = p};
	chan_run_all(ch, chan_job_proc_gone, &j);
	/* The workers no longer wake it (proc_gone cleared its bits): its eventfd can go. */
	close(pp->efd);
	pp->efd = -1;
	atomic_store(&pp->kill, false);
	ch->st.procs_gone++;
	if (--a->nprocs > 0)
		return;
	chan_run_all(ch, chan_job_app_remove, &j);
	chan_vigil_unwatch(ch->vigil, a->vigil_slot);
	TAILQ_REMOVE(&ch->apps, a, link);
	ch->napps--;
	atomic_fetch_sub(&a->user->apps, 1);
	ch->st.apps_freed++;
	chan_app_unref(a);
}

static int chan_proc_slot(struct chan_app *a)
{
	for (int p = 0; p < CHAN_MAX_PROCS; p++)
		if (a->procs[p].fd < 0)
			return p;
	return -1;
}

static void chan_refuse(struct chan *ch, int fd, int err)
{
	chan_reply_err(fd, err);
	close(fd);
	ch->st.refused++;
}

/* A new application. Refusals: ENFILE when the daemon's table is full (Linux's errno for
 * a system-wide table), EUSERS when the user holds apps-per-user ("Too many users" says
 * what happened, and nothing retries it in a loop; it lasts until one of the user's
 * applications exits), ENOMEM when there is no memory for the segment. The library's
 * socket() fails with that errno. */
static void chan_attach(struct chan *ch, int fd, const struct ucred *cr,
			const struct chan_req *rq)
{
	char err[128];
	if (ch->napps >= CHAN_MAX_APPS) {
		chan_refuse(ch, fd, ENFILE);
		return;
	}
	struct chan_user *u = chan_user_get(ch, cr->uid);
	if (u == NULL) {
		chan_refuse(ch, fd, ENFILE);
		return;
	}
	if (!chan_limit_allows(&ch->limits, CHAN_LIMIT_APPS_PER_USER, atomic_load(&u->apps), 1,
			       u->exempt)) {
		chan_user_put(u);
		ch->st.app_limit++;
		chan_refuse(ch, fd, EUSERS);
		return;
	}
	struct chan_app *a = chan_app_create(ch, u, err, sizeof(err));
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (a == NULL || efd < 0) {
		fprintf(stderr, "dpstackd: application %d refused: %s\n", cr->pid,
			a == NULL ? err : strerror(errno));
		if (efd >= 0)
			close(efd);
		if (a != NULL)
			chan_app_unref(a);
		chan_refuse(ch, fd, ENOMEM);
		return;
	}
	a->vigil_slot = chan_vigil_watch(ch->vigil, a);
	atomic_fetch_add(&u->apps, 1);
	a->id = ++ch->next_app_id;
	if (getrandom(&a->token, sizeof(a->token), 0) != sizeof(a->token))
		a->token = a->id ^ (uint64_t)(uintptr_t)a;
	a->procs[0] = (struct chan_proc_priv){.fd = fd, .efd = efd, .pid = cr->pid,
					      .ns_pid = rq->pid, .uid = cr->uid};
	a->nprocs = 1;
	atomic_store(&a->hdr->procs[0].attached, 1);
	TAILQ_INSERT_TAIL(&ch->apps, a, link);
	ch->napps++;
	struct chan_job j = {.app = a, .proc = 0};
	if (chan_run_all(ch, chan_job_app_add, &j) < 0) {
		chan_reply_err(fd, ENFILE);
		chan_proc_drop(ch, a, 0);
		ch->st.refused++;
		return;
	}
	struct chan_reply rep = {.err = 0};
	rep.u.attach = (struct chan_attach_reply){
		.nb_workers = a->lay.nb_workers, .max_socks = a->lay.max_socks,
		.arena_size = a->lay.arena_size, .proc = 0, .app_id = a->id, .token = a->token};
	int fds[CHAN_MAX_WORKERS + 2] = {a->memfd, efd};
	for (unsigned w = 0; w < ch->nb_workers; w++)
		fds[2 + w] = ch->workers[w].wake_fd;
	if (chan_send(fd, &rep, fds, 2 + ch->nb_workers) != 0) {
		chan_proc_drop(ch, a, 0);
		return;
	}
	ch->st.attaches++;
}

static void chan_join(struct chan *ch, int fd, const struct ucred *cr, const struct chan_req *rq)
{
	struct chan_app *a;
	TAILQ_FOREACH(a, &ch->apps, link)
		if (a->id == rq->app_id)
			break;
	/* The token proves the process inherited the segment; the uid that it runs as the
	 * same user as the parent (a setuid child must attach afresh). */
	int p = a != NULL ? chan_proc_slot(a) : -1;
	if (a == NULL || a->token != rq->token || rq->parent_proc >= CHAN_MAX_PROCS ||
	    a->procs[rq->parent_proc].fd < 0 || a->procs[rq->parent_proc].uid != cr->uid || p < 0) {
		chan_reply_err(fd, a != NULL && p < 0 ? EMFILE : EPERM);
		close(fd);
		ch->st.refused++;
		return;
	}
	int efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (efd < 0) {
		chan_reply_err(fd, ENOMEM);
		close(fd);
		return;
	}
	a->procs[p] = (struct chan_proc_priv){.fd = fd, .efd = efd, .pid = cr->pid,
					      .ns_pid = rq->pid, .uid = cr->uid};
	a->nprocs++;
	doorbell_init(&a->hdr->procs[p].bell);
	atomic_store(&a->hdr->procs[p].attached, 1);
	struct chan_job j = {.app = a, .proc = (unsigned)p, .req = rq};
	chan_run_all(ch, chan_job_proc_join, &j);
	struct chan_reply rep = {.err = 0};
	rep.u.attach = (struct chan_attach_reply){
		.nb_workers = a->lay.nb_workers, .max_socks = a->lay.max_socks,
		.arena_size = a->lay.arena_size, .proc = (uint32_t)p, .app_id = a->id,
		.token = a->token};
	if (chan_send(fd, &rep, &efd, 1) != 0) {
		chan_proc_drop(ch, a, (unsigned)p);
		return;
	}
	ch->st.joins++;
}

void chan_hello(struct chan *ch, int fd, const void *msg, size_t len, const struct ucred *cr)
{
	struct chan_req rq;
	if (len != sizeof(rq)) {
		ch->st.bad_msgs++;
		close(fd);
		return;
	}
	memcpy(&rq, msg, sizeof(rq));
	if (rq.op == CHAN_OP_ATTACH) {
		chan_attach(ch, fd, cr, &rq);
	} else if (rq.op == CHAN_OP_JOIN) {
		chan_join(ch, fd, cr, &rq);
	} else {
		ch->st.bad_msgs++;
		close(fd);
	}
}

void chan_drop_killed(struct chan *ch)
{
	uint64_t v;
	if (read(ch->wake_fd, &v, sizeof(v)) < 0) {
		/* spurious */
	}
	struct chan_app *a, *next;
	for (a = TAILQ_FIRST(&ch->apps); a != NULL; a = next) {
		next = TAILQ_NEXT(a, link);
		for (unsigned p = 0; p < CHAN_MAX_PROCS; p++) {
			if (a->procs[p].fd >= 0 && atomic_load(&a->procs[p].kill)) {
				fprintf(stderr, "dpstackd: application process %d disconnected: bad "
						"command on its ring\n", a->procs[p].pid);
				bool last = a->nprocs == 1;
				chan_proc_drop(ch, a, p);
				if (last)
					break;
			}
		}
	}
}

void chan_drop_all(struct chan *ch)
{
	struct chan_app *a;
	while ((a = TAILQ_FIRST(&ch->apps)) != NULL)
		for (unsigned p = 0; p < CHAN_MAX_PROCS; p++)
			if (a->procs[p].fd >= 0) {
				bool last = a->nprocs == 1;
				chan_proc_drop(ch, a, p);
				if (last)
					break;
			}
	/* Closed UDP sockets still sending keep their segments: they end now. */
	for (unsigned w = 0; w < ch->nb_workers; w++)
		worker_call(&ch->workers[w], chan_worker_udp_finish, &ch->cw[w]);
}
