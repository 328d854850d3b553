/* Attaching to dpstackd: the unix connection, the segment and the eventfds it hands over;
 * requests and commands; fork (the child joins as a process of the same application) and
 * the daemon going away.
 *
 * Fork: a child must hold its parent's sockets from the first instant, or a close in the
 * parent right after fork(2) would close them under the child. So the parent joins on the
 * child's behalf before fork (pthread_atfork prepare): the daemon copies the parent's holds
 * to a new process slot served on a new connection, the child keeps that connection and the
 * parent closes its copy. When the child exits or execs (the descriptors are close-on-exec),
 * the daemon sees the connection end and drops the child's holds. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <dpstack/ctl.h>

#include <dpstack/dpstack.h>

#include "dps_links.h"
#include "dps_priv.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dps_attach *g_at;
static unsigned g_gen;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

/* Prepared by the parent for its child across fork(2). */
static struct {
	int fd, efd;
	unsigned proc;
	bool ready;
} g_fork;

static const char *dps_sock_path(void)
{
	const char *p = getenv(DPSTACK_SOCK_ENV);
	return p != NULL && p[0] != '\0' ? p : DPSTACK_SOCK_DEFAULT;
}

static int dps_connect_daemon(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *path = dps_sock_path();
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

/* Sends rq and receives the reply with up to maxfds descriptors. Returns the number of
 * descriptors received, or -errno (-ENOTCONN when the daemon closed). */
static int dps_exchange(int fd, const struct chan_req *rq, struct chan_reply *rep, int *fds,
			unsigned maxfds)
{
	if (send(fd, rq, sizeof(*rq), MSG_NOSIGNAL) != (ssize_t)sizeof(*rq))
		return -ENOTCONN;
	union {
		char buf[CMSG_SPACE(sizeof(int) * (CHAN_MAX_WORKERS + 2))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n;
	do
		n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	int got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		int k = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		int *in = (int *)(void *)CMSG_DATA(c);
		for (int i = 0; i < k; i++) {
			if ((unsigned)got < maxfds)
				fds[got++] = in[i];
			else
				close(in[i]);
		}
	}
	if (n != (ssize_t)sizeof(*rep)) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		return -ENOTCONN;
	}
	return got;
}

/* How long a call waits for its answer: a daemon that takes longer is stuck (a worker
 * answers within microseconds; even a connect only starts there), and the caller gets
 * ETIMEDOUT rather than hanging. DPSTACK_CALL_TIMEOUT_MS overrides it; 0 waits for ever. */
#define DPS_CALL_TIMEOUT_MS_DEFAULT 30000

static int64_t dps_call_timeout_ms(void)
{
	const char *env = getenv("DPSTACK_CALL_TIMEOUT_MS");
	if (env == NULL || env[0] == '\0')
		return DPS_CALL_TIMEOUT_MS_DEFAULT;
	char *end;
	errno = 0;
	long long v = strtoll(env, &end, 10);
	if (*end != '\0' || errno != 0 || v < 0) {
		fprintf(stderr, "libdpstack: DPSTACK_CALL_TIMEOUT_MS=%s is not milliseconds; "
				"using %d\n", env, DPS_CALL_TIMEOUT_MS_DEFAULT);
		return DPS_CALL_TIMEOUT_MS_DEFAULT;
	}
	return v;
}

static void dps_attach_locks_init(struct dps_attach *at)
{
	pthread_mutex_init(&at->ev_lock, NULL);
	for (unsigned w = 0; w < CHAN_MAX_WORKERS; w++)
		pthread_mutex_init(&at->cmd_lock[w], NULL);
}

static void dps_attach_free(struct dps_attach *at)
{
	if (at->sock_fd >= 0)
		close(at->sock_fd);
	if (at->ev_fd >= 0)
		close(at->ev_fd);
	if (at->mem_fd >= 0)
		close(at->mem_fd);
	for (unsigned w = 0; w < CHAN_MAX_WORKERS; w++)
		if (at->worker_fd[w] >= 0)
			close(at->worker_fd[w]);
	if (at->base != NULL)
		munmap(at->base, at->lay.seg_size);
	free(at->sock_file);
	free(at);
}

/* A process with many sockets needs many descriptors (each socket holds one): raise the
 * soft limit as far as the hard one allows. */
static void dps_raise_nofile(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > (1u << 20) ? (1u << 20) : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* An attach record with no descriptor yet. */
static struct dps_attach *dps_attach_alloc(void)
{
	struct dps_attach *at = calloc(1, sizeof(*at));
	if (at == NULL)
		return NULL;
	at->sock_fd = at->mem_fd = at->ev_fd = -1;
	for (unsigned w = 0; w < CHAN_MAX_WORKERS; w++)
		at->worker_fd[w] = -1;
	return at;
}

/* The rest of an attach once its descriptors are in at (connection, segment, eventfds):
 * maps and checks the segment. Frees at and returns NULL with *err on failure. */
static struct dps_attach *dps_attach_setup(struct dps_attach *at,
					   const struct chan_attach_reply *ar, int *err)
{
	chan_layout(&at->lay, ar->nb_workers, ar->max_socks, ar->arena_size);
	/* Mapped without access, then opened up: under mlockall(MCL_FUTURE) a new mapping is
	 * populated and locked whole at once (gigabytes of arenas), while a shared mapping that
	 * mprotect() makes writable is not (mm/mprotect.c populates private ones only), so its
	 * pages are locked as they are first used. */
	at->base = mmap(NULL, at->lay.seg_size, PROT_NONE, MAP_SHARED | MAP_NORESERVE, at->mem_fd,
			0);
	if (at->base != MAP_FAILED &&
	    mprotect(at->base, at->lay.seg_size, PROT_READ | PROT_WRITE) != 0) {
		munmap(at->base, at->lay.seg_size);
		at->base = MAP_FAILED;
	}
	at->sock_file = calloc(ar->max_socks, sizeof(*at->sock_file));
	if (at->base == MAP_FAILED || at->sock_file == NULL) {
		at->base = NULL;
		*err = ENOMEM;
		dps_attach_free(at);
		return NULL;
	}
	at->hdr = at->base;
	if (at->hdr->magic != CHAN_MAGIC || at->hdr->version != CHAN_VERSION ||
	    at->hdr->seg_size != at->lay.seg_size) {
		*err = EPROTO;
		dps_attach_free(at);
		return NULL;
	}
	at->proc = ar->proc;
	at->app_id = ar->app_id;
	at->token = ar->token;
	atomic_init(&at->refs, 1);
	atomic_init(&at->calls_free, ~0ull);
	atomic_init(&at->calls_late, 0);
	at->call_timeout_ms = dps_call_timeout_ms();
	doorbell_init(&at->calls_bell);
	at->spin_ns = doorbell_spin_default();
	dps_attach_locks_init(at);
	dps_raise_nofile();
	return at;
}

static bool dps_attach_reply_ok(const struct chan_attach_reply *ar)
{
	return ar->nb_workers > 0 && ar->nb_workers <= CHAN_MAX_WORKERS && ar->max_socks > 0 &&
	       (ar->max_socks & (ar->max_socks - 1)) == 0 && ar->proc < CHAN_MAX_PROCS;
}

static struct dps_attach *dps_attach_new(int *err)
{
	struct dps_attach *at = dps_attach_alloc();
	if (at == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	at->sock_fd = dps_connect_daemon();
	if (at->sock_fd < 0) {
		*err = -at->sock_fd == ENOENT ? ECONNREFUSED : -at->sock_fd;
		free(at);
		return NULL;
	}
	struct chan_req rq = {.op = CHAN_OP_ATTACH, .pid = getpid()};
	struct chan_reply rep;
	int fds[CHAN_MAX_WORKERS + 2];
	int got = dps_exchange(at->sock_fd, &rq, &rep, fds, CHAN_MAX_WORKERS + 2);
	const struct chan_attach_reply *ar = &rep.u.attach;
	if (got < 0 || rep.err != 0 || !dps_attach_reply_ok(ar) ||
	    got != (int)(2 + ar->nb_workers)) {
		for (int i = 0; i < got; i++)
			close(fds[i]);
		*err = got < 0 ? -got : rep.err != 0 ? rep.err : EPROTO;
		dps_attach_free(at);
		return NULL;
	}
	at->mem_fd = fds[0];
	at->ev_fd = fds[1];
	for (unsigned w = 0; w < ar->nb_workers; w++)
		at->worker_fd[w] = fds[2 + w];
	return dps_attach_setup(at, ar, err);
}

static void dps_fork_prepare(void)
{
	pthread_mutex_lock(&g_lock);
	g_fork.ready = false;
	struct dps_attach *at = g_at;
	if (at == NULL || atomic_load(&at->dead))
		return; /* g_lock stays held until parent/child handlers */
	int fd = dps_connect_daemon();
	if (fd < 0)
		return;
	struct chan_req rq = {.op = CHAN_OP_JOIN, .app_id = at->app_id, .token = at->token,
			      .parent_proc = at->proc, .pid = getpid()};
	struct chan_reply rep;
	int efd = -1;
	int got = dps_exchange(fd, &rq, &rep, &efd, 1);
	if (got != 1 || rep.err != 0 || rep.u.attach.proc >= CHAN_MAX_PROCS) {
		if (got == 1)
			close(efd);
		close(fd);
		return;
	}
	g_fork.fd = fd;
	g_fork.efd = efd;
	g_fork.proc = rep.u.attach.proc;
	g_fork.ready = true;
}

static void dps_fork_parent(void)
{
	if (g_fork.ready) {
		close(g_fork.fd);
		close(g_fork.efd);
		g_fork.ready = false;
	}
	pthread_mutex_unlock(&g_lock);
}

static void dps_fork_child(void)
{
	/* Only this thread exists now: locks other threads held are reset, not waited for. */
	pthread_mutex_init(&g_lock, NULL);
	struct dps_attach *at = g_at;
	if (at != NULL) {
		dps_attach_locks_init(at);
		close(at->sock_fd);
		close(at->ev_fd);
		if (g_fork.ready) {
			at->sock_fd = g_fork.fd;
			at->ev_fd = g_fork.efd;
			at->proc = g_fork.proc;
			/* The child's process slot has call slots of its own, all free; the
			 * parent's other threads and their calls did not come along. */
			atomic_store(&at->calls_free, ~0ull);
			atomic_store(&at->calls_late, 0);
		} else {
			/* The daemon could not take the child: its sockets are unusable. */
			at->sock_fd = -1;
			at->ev_fd = -1;
			atomic_store(&at->dead, true);
		}
		at->gen = ++g_gen;
	}
	g_fork.ready = false;
	dps_files_after_fork();
	dps_links_after_fork();
	dps_orphan_after_fork();
}

static void dps_once(void)
{
	pthread_atfork(dps_fork_prepare, dps_fork_parent, dps_fork_child);
}

struct dps_attach *dps_attach_get(void)
{
	pthread_once(&g_once, dps_once);
	pthread_mutex_lock(&g_lock);
	if (g_at != NULL && dps_attach_check_lazy(g_at)) {
		/* The daemon went away: the next socket goes to whichever daemon is there now. */
		dps_attach_put(g_at);
		g_at = NULL;
	}
	if (g_at == NULL) {
		int err = 0;
		g_at = dps_attach_new(&err);
		if (g_at == NULL) {
			pthread_mutex_unlock(&g_lock);
			errno = err;
			return NULL;
		}
		g_at->gen = ++g_gen;
	}
	struct dps_attach *at = g_at;
	atomic_fetch_add(&at->refs, 1);
	pthread_mutex_unlock(&g_lock);
	return at;
}

int dps_attach_export(struct dps_exec_attach *x)
{
	pthread_once(&g_once, dps_once);
	pthread_mutex_lock(&g_lock);
	struct dps_attach *at = g_at;
	bool ok = at != NULL && !dps_attach_check(at) && at->mem_fd >= 0;
	if (ok) {
		x->sock_fd = at->sock_fd;
		x->mem_fd = at->mem_fd;
		x->ev_fd = at->ev_fd;
		memcpy(x->worker_fd, at->worker_fd, sizeof(x->worker_fd));
		x->ar = (struct chan_attach_reply){
			.nb_workers = at->lay.nb_workers, .max_socks = at->lay.max_socks,
			.arena_size = at->lay.arena_size, .proc = at->proc, .app_id = at->app_id,
			.token = at->token};
	}
	pthread_mutex_unlock(&g_lock);
	return ok ? 0 : -1;
}

/* Call slots that threads of the image before exec left: a posted call is answered within
 * moments (the worker runs it whatever happens to its caller), then every slot is free. */
static void dps_calls_settle(struct dps_attach *at)
{
	const int64_t give_up = dps_now_ms() + 2000;
	for (unsigned i = 0; i < CHAN_CALL_SLOTS; i++) {
		struct chan_call *c = chan_call_at(at->base, &at->lay, at->proc, i);
		while (atomic_load_explicit(&c->state, memory_order_acquire) == CHAN_CALL_POSTED) {
			if (dps_now_ms() > give_up || dps_attach_check(at)) {
				/* Never answered: the slot stays taken rather than reused. */
				atomic_fetch_and(&at->calls_free, ~(1ull << i));
				break;
			}
			usleep(100);
		}
		if (atomic_load(&c->state) == CHAN_CALL_DONE)
			atomic_store(&c->state, CHAN_CALL_IDLE);
	}
}

struct dps_attach *dps_attach_import(const struct dps_exec_attach *x, int *err)
{
	pthread_once(&g_once, dps_once);
	struct dps_attach *at = dps_attach_alloc();
	if (at == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	at->sock_fd = x->sock_fd;
	at->mem_fd = x->mem_fd;
	at->ev_fd = x->ev_fd;
	bool ok = dps_attach_reply_ok(&x->ar);
	for (unsigned w = 0; ok && w < x->ar.nb_workers; w++)
		at->worker_fd[w] = x->worker_fd[w];
	if (!ok) {
		*err = EPROTO;
		dps_attach_free(at);
		return NULL;
	}
	at = dps_attach_setup(at, &x->ar, err);
	if (at == NULL)
		return NULL;
	dps_calls_settle(at);
	pthread_mutex_lock(&g_lock);
	if (g_at != NULL)
		dps_attach_put(g_at);
	g_at = at;
	at->gen = ++g_gen;
	atomic_fetch_add(&at->refs, 1);
	pthread_mutex_unlock(&g_lock);
	return at;
}

void dps_attach_put(struct dps_attach *at)
{
	if (at != NULL && atomic_fetch_sub(&at->refs, 1) == 1)
		dps_attach_free(at);
}

bool dps_attach_dead(struct dps_attach *at)
{
	return atomic_load_explicit(&at->dead, memory_order_relaxed);
}

bool dps_attach_check(struct dps_attach *at)
{
	if (dps_attach_dead(at))
		return true;
	/* The daemon never writes unasked: readable or hung up means it is gone. */
	char c;
	ssize_t n = recv(at->sock_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		atomic_store(&at->dead, true);
		return true;
	}
	return false;
}

/* A deadline DPSTACK_CALL_TIMEOUT_MS from now, in dps_now_ms's clock; -1: none. */
static int64_t dps_call_deadline(struct dps_attach *at)
{
	return dps_deadline_ms(at->call_timeout_ms);
}

/* Sleeps on this process's eventfd way until news, or until deadline_ms (-1: none). */
static int dps_sleep_until(struct dps_attach *at, int64_t deadline_ms)
{
	int left = dps_ms_left(deadline_ms);
	return left != 0 ? dps_sleep(at, left) : 0;
}

/* Queues v on worker w's command ring of this process. A full ring (the worker takes
 * CHAN_CMD_BUDGET commands per round) is waited out on the process's doorbell: the worker
 * rings it when it has emptied a ring that was filling up. The wait is a library request
 * like a call: a daemon that does not take commands (stopped, stuck) ends it with
 * -ETIMEDOUT after DPSTACK_CALL_TIMEOUT_MS, a dead one at once with -ENOTCONN (the sleep
 * watches the daemon connection). The ring's lock is not held while waiting, so that other
 * threads' commands meet the same limit instead of waiting for this one's, one after the
 * other. */
struct dps_ring_wait {
	struct dps_attach *at;
	struct chan_ring *r;
	int64_t deadline_ms;            /* -1: none */
};

static bool dps_ring_has_room(void *ctx)
{
	struct dps_ring_wait *rw = ctx;
	return chan_ring_count(rw->r) <= rw->at->lay.cmd_mask || dps_attach_dead(rw->at) ||
	       dps_ms_left(rw->deadline_ms) == 0;
}

static int dps_ring_sleep(void *ctx)
{
	struct dps_ring_wait *rw = ctx;
	return dps_sleep_until(rw->at, rw->deadline_ms);
}

static void dps_ring_worker(struct dps_attach *at, unsigned w)
{
	doorbell_ring_fd(&at->hdr->workers[w].bell, at->worker_fd[w]);
}

static bool dps_ring_try_put(struct dps_attach *at, unsigned w, struct chan_ring *r, uint64_t v)
{
	pthread_mutex_lock(&at->cmd_lock[w]);
	bool put = chan_ring_put(r, at->lay.cmd_mask, v);
	pthread_mutex_unlock(&at->cmd_lock[w]);
	return put;
}

static int dps_cmd_to(struct dps_attach *at, unsigned w, uint64_t v)
{
	struct chan_ring *r = chan_cmd_ring(at->base, &at->lay, at->proc, w);
	if (!dps_ring_try_put(at, w, r, v)) {
		struct dps_ring_wait rw = {.at = at, .r = r, .deadline_ms = dps_call_deadline(at)};
		do {
			if (dps_attach_dead(at))
				return -ENOTCONN;
			if (dps_ms_left(rw.deadline_ms) == 0)
				return -ETIMEDOUT;
			uint64_t one = 1;
			if (write(at->worker_fd[w], &one, sizeof(one)) < 0) {
				/* saturated counter: the worker is awake */
			}
			doorbell_wait_fd(dps_bell(at), at->spin_ns, dps_ring_has_room, dps_ring_sleep,
					 &rw);
		} while (!dps_ring_try_put(at, w, r, v));
	}
	dps_ring_worker(at, w);
	return 0;
}

int dps_cmd(struct dps_attach *at, uint32_t sock, enum chan_cmd_op op, uint32_t arg)
{
	return dps_cmd_to(at, chan_sock_worker(&at->lay, sock), chan_cmd(op, arg, sock));
}

unsigned dps_next_worker(struct dps_attach *at)
{
	return atomic_fetch_add_explicit(&at->next_worker, 1, memory_order_relaxed) %
	       at->lay.nb_workers;
}

static void dps_call_slot_give(struct dps_attach *at, int slot);

/* An answer that came after its caller gave up: what the call made is not wanted, so the
 * sockets it opened are closed. */
static void dps_call_late_drop(struct dps_attach *at, const struct chan_call *c)
{
	uint32_t op = c->req.op;
	if (c->rep.err != 0 || (op != CHAN_OP_LISTEN && op != CHAN_OP_CONNECT &&
				op != CHAN_OP_UDP_OPEN))
		return;
	for (uint32_t i = 0; i < c->rep.count && i < CHAN_MAX_WORKERS; i++)
		if (c->rep.socks[i] < at->lay.max_socks)
			dps_cmd(at, c->rep.socks[i], CHAN_CMD_CLOSE, 0);
}

/* A late bind's reservation is given up as dps_unbind gives up a bound socket's at its
 * close: with CHAN_OP_UNBIND to the worker that keeps the port's reservations. That is a
 * call, so it goes out in the late slot itself, which stays late until its answer is in
 * (taking another slot here could wait for the very slots being reclaimed). True when the
 * slot went out again. */
static bool dps_call_late_unbind(struct dps_attach *at, struct chan_call *c, int slot)
{
	if (c->req.op != CHAN_OP_BIND || c->rep.err != 0 || c->req.lport == 0)
		return false;
	unsigned w = chan_bind_worker_of(&at->lay, c->req.lport);
	c->req = (struct chan_req){.op = CHAN_OP_UNBIND, .sock = c->rep.socks[0],
				   .pid = getpid()};
	atomic_store_explicit(&c->state, CHAN_CALL_POSTED, memory_order_release);
	atomic_fetch_or_explicit(&at->calls_late, 1ull << slot, memory_order_release);
	if (dps_cmd_to(at, w, chan_cmd(CHAN_CMD_CALL, (uint32_t)slot, 0)) == 0)
		return true;
	/* Not queued (the daemon is gone or stuck): nobody will answer, and a daemon that
	 * comes back has no reservations of ours. */
	atomic_fetch_and_explicit(&at->calls_late, ~(1ull << slot), memory_order_relaxed);
	return false;
}

/* Slots whose callers timed out come back once their answer is in: until then the
 * daemon may still write them, so nobody else may use them. */
static void dps_calls_reclaim(struct dps_attach *at)
{
	uint64_t late = atomic_load_explicit(&at->calls_late, memory_order_acquire);
	while (late != 0) {
		int slot = __builtin_ctzll(late);
		uint64_t bit = 1ull << slot;
		late &= ~bit;
		struct chan_call *c = chan_call_at(at->base, &at->lay, at->proc, (unsigned)slot);
		if (atomic_load_explicit(&c->state, memory_order_acquire) != CHAN_CALL_DONE)
			continue;
		if (!(atomic_fetch_and(&at->calls_late, ~bit) & bit))
			continue; /* another thread took it */
		if (dps_call_late_unbind(at, c, slot))
			continue;
		dps_call_late_drop(at, c);
		atomic_store_explicit(&c->state, CHAN_CALL_IDLE, memory_order_relaxed);
		dps_call_slot_give(at, slot);
	}
}

/* A free call slot, waiting for one when CHAN_CALL_SLOTS threads are in calls (or have
 * given up on a stuck daemon: then this wait too ends with ETIMEDOUT). */
static int dps_call_slot_take(struct dps_attach *at)
{
	const int64_t deadline = dps_call_deadline(at);
	for (;;) {
		dps_calls_reclaim(at);
		uint32_t seen = doorbell_seq(&at->calls_bell);
		uint64_t f = atomic_load_explicit(&at->calls_free, memory_order_acquire);
		while (f != 0) {
			int slot = __builtin_ctzll(f);
			if (atomic_compare_exchange_weak_explicit(&at->calls_free, &f,
								  f & ~(1ull << slot),
								  memory_order_acq_rel,
								  memory_order_acquire))
				return slot;
		}
		if (dps_attach_dead(at))
			return -ENOTCONN;
		int left_ms = dps_ms_left(deadline);
		if (left_ms == 0)
			return -ETIMEDOUT;
		doorbell_wait(&at->calls_bell, seen, at->spin_ns,
			      left_ms < 0 ? -1 : (int64_t)left_ms * 1000000);
	}
}

static void dps_call_slot_give(struct dps_attach *at, int slot)
{
	atomic_fetch_or_explicit(&at->calls_free, 1ull << slot, memory_order_release);
	doorbell_ring(&at->calls_bell);
}

int dps_call_post(struct dps_attach *at, unsigned w, const struct chan_req *rq)
{
	if (dps_attach_dead(at))
		return -ENOTCONN;
	int slot = dps_call_slot_take(at);
	if (slot < 0)
		return slot;
	struct chan_call *c = chan_call_at(at->base, &at->lay, at->proc, (unsigned)slot);
	memcpy(&c->req, rq, sizeof(*rq));
	c->req.pid = getpid();
	atomic_store_explicit(&c->state, CHAN_CALL_POSTED, memory_order_release);
	int rc = dps_cmd_to(at, w, chan_cmd(CHAN_CMD_CALL, (uint32_t)slot, 0));
	if (rc < 0) {
		atomic_store(&c->state, CHAN_CALL_IDLE);
		dps_call_slot_give(at, slot);
		return rc;
	}
	return slot;
}

struct dps_call_waiter {
	struct dps_attach *at;
	struct chan_call *c;
	int64_t deadline_ms;            /* -1: none */
};

static bool dps_call_done(void *ctx)
{
	struct dps_call_waiter *cw = ctx;
	return atomic_load_explicit(&cw->c->state, memory_order_acquire) == CHAN_CALL_DONE ||
	       dps_attach_dead(cw->at);
}

static int dps_call_sleep(void *ctx)
{
	struct dps_call_waiter *cw = ctx;
	return dps_sleep_until(cw->at, cw->deadline_ms);
}

int dps_call_wait(struct dps_attach *at, int slot, struct chan_reply *rep)
{
	struct chan_call *c = chan_call_at(at->base, &at->lay, at->proc, (unsigned)slot);
	struct dps_call_waiter cw = {.at = at, .c = c, .deadline_ms = dps_call_deadline(at)};
	/* A signal does not end the wait: the call runs anyway, and its answer is needed to
	 * know what exists (a socket the daemon made). A daemon that does not answer in time
	 * does: the slot is left to dps_calls_reclaim, which takes the late answer (and closes
	 * what it made) before the slot serves another call. */
	while (!dps_call_done(&cw)) {
		if (dps_ms_left(cw.deadline_ms) == 0) {
			atomic_fetch_or_explicit(&at->calls_late, 1ull << slot, memory_order_release);
			dps_calls_reclaim(at); /* it may have come just now */
			return -ETIMEDOUT;
		}
		doorbell_wait_fd(dps_bell(at), at->spin_ns, dps_call_done, dps_call_sleep, &cw);
	}
	if (atomic_load_explicit(&c->state, memory_order_acquire) != CHAN_CALL_DONE)
		return -ENOTCONN; /* the daemon died; the slot goes with the attachment */
	memcpy(rep, &c->rep, sizeof(*rep));
	atomic_store_explicit(&c->state, CHAN_CALL_IDLE, memory_order_relaxed);
	dps_call_slot_give(at, slot);
	return rep->err != 0 ? -rep->err : 0;
}

int dps_call(struct dps_attach *at, unsigned w, struct chan_req *rq, struct chan_reply *rep)
{
	int slot = dps_call_post(at, w, rq);
	return slot < 0 ? slot : dps_call_wait(at, slot, rep);
}

void dps_kick(struct dps_attach *at, uint32_t sock)
{
	_Atomic uint32_t *kick = &dps_sock(at, sock)->kick;
	/* A kick that could not be queued must not leave the flag set: later ones would
	 * think it on its way and never be sent. */
	if (atomic_exchange(kick, 1) == 0 && dps_cmd(at, sock, CHAN_CMD_KICK, 0) < 0)
		atomic_store(kick, 0);
}

/* Whether bytes at off lie in the arenas: where the daemon puts FIFOs. */
static bool dps_in_arenas(const struct dps_attach *at, uint64_t off, uint64_t bytes)
{
	return off >= at->lay.arenas_off && off <= at->lay.seg_size &&
	       bytes <= at->lay.seg_size - off;
}

bool dps_fifo_view(struct dps_attach *at, struct fifo *f, uint64_t pos_off, uint64_t off,
		   uint32_t size)
{
	if (!fifo_size_valid(size) || !dps_in_arenas(at, off, size) ||
	    !dps_in_arenas(at, pos_off, sizeof(struct fifo_pos)))
		return false;
	return fifo_attach(f, (char *)at->base + pos_off, (char *)at->base + off, size) == 0;
}

bool dps_attach_check_lazy(struct dps_attach *at)
{
	if (dps_attach_dead(at))
		return true;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	int64_t last = atomic_load_explicit(&at->checked_ms, memory_order_relaxed);
	if (now - last < DPS_LIVENESS_MS ||
	    !atomic_compare_exchange_strong_explicit(&at->checked_ms, &last, now,
						     memory_order_relaxed, memory_order_relaxed))
		return false;
	return dps_attach_check(at);
}

int dps_init(void)
{
	struct dps_attach *at = dps_attach_get();
	if (at == NULL)
		return -1;
	dps_attach_put(at);
	return 0;
}

int dps_event_fd(void)
{
	struct dps_attach *at = dps_attach_get();
	if (at == NULL)
		return -1;
	int fd = at->ev_fd;
	/* The daemon writes it only while someone sleeps: count a permanent sleeper. */
	atomic_fetch_add(&dps_bell(at)->fd_sleepers, 1);
	dps_attach_put(at);
	return fd;
}
