/* The channel server: a thread of its own that accepts applications on DPSTACK_SOCK, gives
 * each its segment and eventfds, joins forked children, and cleans up after processes that
 * exit, crash or misbehave (their connection ends). It is on no socket call's path: those
 * travel on the command rings to the workers (chan_call.c). Every message is checked for
 * size and meaning; a process that sends garbage is disconnected, which closes its sockets
 * as an exit would, and nobody else notices. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "chan_priv.h"
#include "chan_worker.h"
#include "dp/worker.h"
#include "tcp/tcp.h"

#define CHAN_MAX_PENDING 64      /* connections that have not attached yet */

struct chan_pending {
	int fd;
	uint64_t seq;                   /* order of arrival: the oldest makes room */
};

static struct chan_pending pending[CHAN_MAX_PENDING];
static uint64_t pending_seq;

/* A first message on a new connection: ATTACH or JOIN (chan_hello). */
static void chan_greet(struct chan *ch, unsigned slot)
{
	int fd = pending[slot].fd;
	struct chan_req rq;
	struct ucred cr;
	socklen_t crlen = sizeof(cr);
	/* MSG_TRUNC: the message's real length, so that a longer one is refused, not cut. */
	ssize_t n = recv(fd, &rq, sizeof(rq), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	pending[slot].fd = -1;
	if (n <= 0 || getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) != 0) {
		close(fd);
		return;
	}
	chan_hello(ch, fd, &rq, (size_t)n, &cr);
}

/* An attached process says nothing more on its connection: its end (exit, crash, exec) or
 * anything it sends drops it. */
static void chan_serve_proc(struct chan *ch, struct chan_app *a, unsigned p, short revents)
{
	char c;
	ssize_t n = recv(a->procs[p].fd, &c, sizeof(c), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR) && !(revents & (POLLHUP | POLLERR)))
		return;
	if (n > 0)
		ch->st.bad_msgs++;
	chan_proc_drop(ch, a, p);
}

static void chan_accept_new(struct chan *ch)
{
	int fd = accept4(ch->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	/* Every slot taken by connections that have not said hello: the oldest goes, so that
	 * idle connections cannot lock applications out (a real library sends its hello right
	 * after connecting, long before 63 newer connections arrive). */
	unsigned slot = 0;
	for (unsigned i = 0; i < CHAN_MAX_PENDING; i++) {
		if (pending[i].fd < 0) {
			slot = i;
			break;
		}
		if (pending[i].seq < pending[slot].seq)
			slot = i;
	}
	if (pending[slot].fd >= 0) {
		close(pending[slot].fd);
		ch->st.refused++;
	}
	pending[slot] = (struct chan_pending){.fd = fd, .seq = ++pending_seq};
}


static void *chan_thread(void *arg)
{
	struct chan *ch = arg;
	enum { MAXFDS = 3 + CHAN_MAX_PENDING + CHAN_MAX_APPS * CHAN_MAX_PROCS };
	static struct pollfd fds[MAXFDS];
	/* Whose each entry is: a process of an application, or (a NULL) pending slot p as it
	 * was when polled (seq), since chan_accept_new may give the slot to another. */
	static struct { struct chan_app *a; unsigned p; uint64_t seq; } who[MAXFDS];
	for (;;) {
		unsigned n = 0;
		fds[n++] = (struct pollfd){.fd = ch->stop_fd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = ch->wake_fd, .events = POLLIN};
		fds[n++] = (struct pollfd){.fd = ch->listen_fd, .events = POLLIN};
		for (unsigned i = 0; i < CHAN_MAX_PENDING; i++)
			if (pending[i].fd >= 0) {
				who[n].a = NULL;
				who[n].p = i;
				who[n].seq = pending[i].seq;
				fds[n++] = (struct pollfd){.fd = pending[i].fd, .events = POLLIN};
			}
		struct chan_app *a;
		TAILQ_FOREACH(a, &ch->apps, link)
			for (unsigned p = 0; p < CHAN_MAX_PROCS; p++)
				if (a->procs[p].fd >= 0) {
					who[n].a = a;
					who[n].p = p;
					fds[n++] = (struct pollfd){.fd = a->procs[p].fd, .events = POLLIN};
				}
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("dpstackd: channel poll");
			break;
		}
		if (fds[0].revents != 0)
			break;
		if (fds[1].revents != 0) {
			chan_drop_killed(ch);
			continue; /* the fd list changed */
		}
		if (fds[2].revents & POLLIN)
			chan_accept_new(ch);
		for (unsigned i = 3; i < n; i++) {
			if (fds[i].revents == 0)
				continue;
			if (who[i].a == NULL) {
				if (pending[who[i].p].seq == who[i].seq)
					chan_greet(ch, who[i].p);
				continue;
			}
			/* A process dropped may take its application (and later entries of
			 * this list) with it: poll afresh. */
			uint64_t gone = ch->st.procs_gone;
			chan_serve_proc(ch, who[i].a, who[i].p, fds[i].revents);
			if (ch->st.procs_gone != gone)
				break;
		}
	}
	chan_drop_all(ch);
	for (unsigned i = 0; i < CHAN_MAX_PENDING; i++)
		if (pending[i].fd >= 0) {
			close(pending[i].fd);
			pending[i].fd = -1;
		}
	return NULL;
}

/* The most each limit may be: what the tables and a segment's layout hold. */
static void chan_limit_bounds_of(const struct chan *ch, struct chan_limit_bounds *b)
{
	uint64_t arena_mb = chan_arena_mb(ch, ch->cfg.max_socks) * ch->nb_workers;
	uint64_t all_arenas_mb = arena_mb * CHAN_MAX_APPS;
	uint64_t all_socks = (uint64_t)CHAN_MAX_SOCKS_LIMIT * CHAN_MAX_APPS;
	*b = (struct chan_limit_bounds){.max = {
		[CHAN_LIMIT_APPS_PER_USER] = CHAN_MAX_APPS,
		[CHAN_LIMIT_SOCKS_PER_APP] = CHAN_MAX_SOCKS_LIMIT,
		[CHAN_LIMIT_SOCKS_PER_USER] = all_socks > UINT32_MAX ? UINT32_MAX : (uint32_t)all_socks,
		/* Each worker counts a user's listeners against its own table. */
		[CHAN_LIMIT_LISTENERS_PER_USER] = tcp_listen_capacity(ch->workers[0].stack),
		[CHAN_LIMIT_ARENA_MB_PER_APP] = arena_mb > UINT32_MAX ? UINT32_MAX : (uint32_t)arena_mb,
		[CHAN_LIMIT_ARENA_MB_PER_USER] = all_arenas_mb > UINT32_MAX ? UINT32_MAX
									     : (uint32_t)all_arenas_mb,
		[CHAN_LIMIT_BINDS_PER_APP] = 1u << 20,
	}};
}

/* Refuses when a daemon answers on path; removes a stale socket file. */
static int chan_listen(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "application socket path too long: %s", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "application socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		snprintf(err, errlen, "another daemon serves applications on %s", path);
		close(fd);
		return -1;
	}
	unlink(path);
	/* Any user may attach (apps need no root); credentials decide what they may do. */
	mode_t old = umask(0);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc != 0 || listen(fd, 128) != 0) {
		snprintf(err, errlen, "application socket %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	return fd;
}

struct chan *chan_create(const struct chan_config *cfg, struct worker *workers, unsigned n,
			 const char *path, char *err, size_t errlen)
{
	struct chan *ch = calloc(1, sizeof(*ch));
	if (ch == NULL || n == 0 || n > CHAN_MAX_WORKERS) {
		snprintf(err, errlen, "channel: %s", ch == NULL ? "out of memory" : "bad worker count");
		free(ch);
		return NULL;
	}
	ch->cfg = *cfg;
	ch->workers = workers;
	ch->nb_workers = n;
	chan_limit_bounds_of(ch, &ch->bounds);
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	chan_limits_default(&ch->limits, &ch->bounds,
			    pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0);
	ch->daemon_uid = geteuid();
	TAILQ_INIT(&ch->apps);
	ch->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ch->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	ch->listen_fd = -1;
	for (unsigned i = 0; i < CHAN_MAX_PENDING; i++)
		pending[i].fd = -1;
	if (ch->wake_fd < 0 || ch->stop_fd < 0) {
		snprintf(err, errlen, "channel: %s", strerror(errno));
		chan_destroy(ch);
		return NULL;
	}
	for (unsigned w = 0; w < n; w++) {
		struct chan_worker *cw = &ch->cw[w];
		cw->chan = ch;
		cw->index = w;
		cw->stack = workers[w].stack;
		cw->wake_fd = workers[w].wake_fd;
		TAILQ_INIT(&cw->accept_list);
		TAILQ_INIT(&cw->udp_tx_list);
		cw->udp_buf = malloc(65536);
		if (cw->udp_buf == NULL) {
			snprintf(err, errlen, "channel: out of memory");
			chan_destroy(ch);
			return NULL;
		}
		workers[w].hooks = (struct worker_hooks){
			.poll = chan_worker_poll, .sleeping = chan_worker_sleeping, .ctx = cw};
	}
	ch->vigil = chan_vigil_start(err, errlen);
	ch->listen_fd = ch->vigil != NULL ? chan_listen(path, err, errlen) : -1;
	if (ch->listen_fd < 0) {
		chan_destroy(ch);
		return NULL;
	}
	snprintf(ch->path, sizeof(ch->path), "%s", path);
	return ch;
}

int chan_start(struct chan *ch)
{
	int rc = pthread_create(&ch->thread, NULL, chan_thread, ch);
	if (rc == 0)
		ch->thread_running = true;
	return -rc;
}

void chan_stop(struct chan *ch)
{
	if (ch == NULL || !ch->thread_running)
		return;
	uint64_t one = 1;
	if (write(ch->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd */
	}
	pthread_join(ch->thread, NULL);
	ch->thread_running = false;
}

void chan_destroy(struct chan *ch)
{
	if (ch == NULL)
		return;
	chan_stop(ch);
	chan_vigil_stop(ch->vigil);
	if (ch->listen_fd >= 0) {
		close(ch->listen_fd);
		unlink(ch->path);
	}
	if (ch->wake_fd >= 0)
		close(ch->wake_fd);
	if (ch->stop_fd >= 0)
		close(ch->stop_fd);
	for (unsigned w = 0; w < ch->nb_workers; w++) {
		free(ch->cw[w].udp_buf);
		free(ch->cw[w].binds);
		if (ch->workers != NULL)
			ch->workers[w].hooks = (struct worker_hooks){0};
	}
	free(ch);
}

void chan_stats(struct chan *ch, struct chan_server_stats *srv, struct chan_worker_stats *wk)
{
	*srv = ch->st;
	srv->live_apps = (uint64_t)atomic_load(&ch->live_apps);
	srv->live_socks = (uint64_t)atomic_load(&ch->live_socks);
	srv->arena_bytes = (uint64_t)atomic_load(&ch->arena_bytes);
	memset(wk, 0, sizeof(*wk));
	for (unsigned w = 0; w < ch->nb_workers; w++) {
		const struct chan_worker_stats *s = &ch->cw[w].st;
		wk->cmds += s->cmds;
		wk->bad_cmds += s->bad_cmds;
		wk->calls += s->calls;
		wk->bind_limit += s->bind_limit;
		wk->sock_limit += s->sock_limit;
		wk->user_sock_limit += s->user_sock_limit;
		wk->listen_limit += s->listen_limit;
		wk->arena_limit += s->arena_limit;
		wk->user_arena_limit += s->user_arena_limit;
		wk->budget_yields += s->budget_yields;
		wk->accepts += s->accepts;
		wk->accept_no_sock += s->accept_no_sock;
		wk->events += s->events;
		wk->wakes += s->wakes;
		wk->udp_tx += s->udp_tx;
		wk->udp_tx_err += s->udp_tx_err;
	}
}
