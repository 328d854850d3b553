/* Readiness and sleeping. The workers queue a socket number in this process's event ring
 * when something changed on it, and ring the process's doorbell (src/base/doorbell.h): its
 * eventfd is written when a thread announced it is about to sleep. A waiter spins briefly,
 * announces itself, looks again, then sleeps, so no wake-up is lost.
 *
 * Each thread sleeps in an epoll set of its own holding the eventfd edge-triggered: every
 * write of the daemon reaches every sleeping thread's set, and nobody has to drain the
 * counter for the others (a level-triggered poll on one shared eventfd would lose wake-ups
 * to whichever thread read it first). The set also watches the daemon connection, so a
 * daemon that dies wakes everyone. */
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

int64_t dps_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t dps_deadline_ms(int64_t timeout_ms)
{
	return timeout_ms > 0 ? dps_now_ms() + timeout_ms : -1;
}

int dps_ms_left(int64_t deadline)
{
	if (deadline < 0)
		return -1;
	int64_t left = deadline - dps_now_ms();
	return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

void dps_events_drain(struct dps_attach *at)
{
	pthread_mutex_lock(&at->ev_lock);
	const uint64_t bit = 1ull << at->proc;
	for (unsigned w = 0; w < at->lay.nb_workers; w++) {
		struct chan_ring *r = chan_ev_ring(at->base, &at->lay, at->proc, w);
		uint64_t v;
		int corrupt = 0;
		while (chan_ring_get(r, at->lay.ev_mask, &v, &corrupt)) {
			if (v >= at->lay.max_socks)
				continue;
			/* Cleared before looking: a change after this queues the socket again. */
			atomic_fetch_and(&dps_sock(at, (uint32_t)v)->queued, ~bit);
			struct dps_file *f = at->sock_file[v];
			if (f != NULL && f->watchers != NULL) {
				pthread_mutex_lock(&dps_ep_lock);
				dps_epoll_notify(f);
				pthread_mutex_unlock(&dps_ep_lock);
			}
		}
	}
	pthread_mutex_unlock(&at->ev_lock);
}

bool dps_events_pending(void *ctx)
{
	struct dps_attach *at = ctx;
	for (unsigned w = 0; w < at->lay.nb_workers; w++)
		if (chan_ring_count(chan_ev_ring(at->base, &at->lay, at->proc, w)) != 0)
			return true;
	/* Not the daemon's death: dps_epoll_pwait goes round again while this says yes, and a
	 * dead daemon queues nothing more, so that would spin for ever (nginx's workers at
	 * 100% CPU after a kill -9 of dpstackd). Its death wakes the sleep that follows: the
	 * instance watches the daemon connection. */
	return false;
}

/* Data to read. Read only: a view of a block the FIFO just moved from shows it empty, or
 * (freed and reused) at worst something to read where a recv then finds nothing. */
static bool dps_rx_ready(const struct dps_file *f)
{
	struct fifo rx;
	uint32_t gen;
	return dps_rx_view(f, &rx, &gen) && fifo_used(&rx) > 0;
}

static uint32_t dps_stream_ready(struct dps_file *f)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	uint32_t st = dps_sock_state(f);
	uint32_t ev = 0;
	if (dps_rx_ready(f) || (st & (CHAN_SS_RDHUP | CHAN_SS_HUP)) || f->shut_rd)
		ev |= EPOLLIN | EPOLLRDNORM;
	/* Linux (tcp_poll): a connection over both ways is shut both ways (tcp_done sets
	 * SHUTDOWN_MASK): readable (the end), RDHUP, writable (EPIPE) and hung up. */
	if (st & (CHAN_SS_RDHUP | CHAN_SS_HUP))
		ev |= EPOLLRDHUP;
	if (st & CHAN_SS_HUP)
		ev |= EPOLLHUP | EPOLLOUT | EPOLLWRNORM;
	if ((st & CHAN_SS_CONNECTED) && !(st & CHAN_SS_WRSHUT)) {
		if (chan_tx_writable(fifo_used(&f->tx), fifo_free(&f->tx))) {
			ev |= EPOLLOUT | EPOLLWRNORM;
		} else if (atomic_load_explicit(&ss->nospace, memory_order_relaxed) == 0) {
			/* Ask the worker to tell us when it is writable again, then look once
			 * more (the worker may have freed room before it saw the flag). */
			atomic_store_explicit(&ss->nospace, 1, memory_order_relaxed);
			atomic_thread_fence(memory_order_seq_cst);
			if (chan_tx_writable(fifo_used(&f->tx), fifo_free(&f->tx)))
				ev |= EPOLLOUT | EPOLLWRNORM;
		}
	}
	if ((st & CHAN_SS_ERR) && atomic_load(&ss->error) != 0)
		ev |= EPOLLERR;
	return ev;
}

uint32_t dps_file_ready(struct dps_file *f)
{
	/* The sockets of a dead daemon: a connection as one that was reset, a datagram socket
	 * as one shut down both ways (dps_orphan.c); a listener never has a connection again,
	 * so it is not readable (as a Linux listener with an empty queue) and accept says
	 * EINVAL (as on a listener that was shut down). A Linux listener shut down also polls
	 * OUT|HUP (tcp_poll of TCP_CLOSE), but HUP, which epoll reports unasked, would make a
	 * level-triggered server spin on accepts that fail (nginx does). */
	bool dead = f->at != NULL && dps_attach_dead(f->at);
	switch (f->kind) {
	case DPS_TCP:
		/* Linux: a socket that never connected polls as writable and hung up. */
		return f->nsocks == 0 ? EPOLLOUT | EPOLLHUP : dps_stream_ready(f);
	case DPS_LISTEN:
		for (unsigned i = 0; !dead && i < f->nsocks; i++) {
			struct chan_sock *ss = dps_sock(f->at, f->socks[i]);
			struct chan_ring *r = (struct chan_ring *)((char *)f->at->base + ss->acc_off);
			if (chan_ring_count(r) != 0)
				return EPOLLIN | EPOLLRDNORM;
		}
		return 0;
	case DPS_UDP: {
		if (f->nsocks == 0)
			return EPOLLOUT | EPOLLWRNORM;
		struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
		uint32_t st = dps_sock_state(f);
		uint32_t ev = 0;
		if (dps_rx_ready(f))
			ev |= EPOLLIN | EPOLLRDNORM;
		if (fifo_free(&f->tx) >= sizeof(struct chan_udp_tx_hdr) + 1500)
			ev |= EPOLLOUT | EPOLLWRNORM;
		/* Shut down both ways (net/core/datagram.c datagram_poll). */
		if (st & CHAN_SS_HUP)
			ev |= EPOLLIN | EPOLLRDNORM | EPOLLRDHUP | EPOLLOUT | EPOLLWRNORM | EPOLLHUP;
		if ((st & CHAN_SS_ERR) && atomic_load(&ss->error) != 0)
			ev |= EPOLLERR;
		return ev;
	}
	case DPS_EPOLL:
		return 0; /* dps_poll asks the kernel instance */
	}
	return 0;
}

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static __thread int tl_epfd = -1;
static __thread unsigned tl_gen;

static void dps_tl_close(void *p)
{
	(void)p;
	if (tl_epfd >= 0)
		close(tl_epfd);
	tl_epfd = -1;
}

static void dps_tl_init(void)
{
	pthread_key_create(&tl_key, dps_tl_close);
}

/* This thread's wait set for at, built on first use and after a fork or re-attach. */
static int dps_thread_epfd(struct dps_attach *at)
{
	if (tl_epfd >= 0 && tl_gen == at->gen)
		return tl_epfd;
	pthread_once(&tl_once, dps_tl_init);
	if (tl_epfd >= 0)
		close(tl_epfd);
	tl_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (tl_epfd < 0)
		return -1;
	struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.u32 = 0};
	dps_sys_epoll_ctl(tl_epfd, EPOLL_CTL_ADD, at->ev_fd, &e);
	e = (struct epoll_event){.events = EPOLLRDHUP, .data.u32 = 1};
	dps_sys_epoll_ctl(tl_epfd, EPOLL_CTL_ADD, at->sock_fd, &e);
	tl_gen = at->gen;
	pthread_setspecific(tl_key, &tl_epfd);
	return tl_epfd;
}

/* Takes what the thread's wait set reported (so the next sleep waits for new news). */
static int dps_thread_events(struct dps_attach *at, int epfd, int timeout_ms)
{
	struct epoll_event evs[2];
	int n = dps_sys_epoll_wait(epfd, evs, 2, timeout_ms);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		if (evs[i].data.u32 == 1)
			dps_attach_check(at);
	return 0;
}

int dps_sleep(struct dps_attach *at, int timeout_ms)
{
	int epfd = dps_thread_epfd(at);
	if (epfd < 0)
		return -errno;
	return dps_thread_events(at, epfd, timeout_ms);
}

int dps_timespec_ms(const struct timespec *ts)
{
	struct timespec k;
	if (ts == NULL)
		return -1;
	if (dps_get_user(&k, ts, sizeof(k)) < 0)
		return -EFAULT;
	if (k.tv_sec < 0 || k.tv_nsec < 0 || k.tv_nsec >= 1000000000)
		return -EINVAL;
	long long ms = (long long)k.tv_sec * 1000 + (k.tv_nsec + 999999) / 1000000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

int dps_sleep_poll(struct dps_attach *at, struct pollfd *kfds, unsigned nk, int timeout_ms,
		   const sigset_t *mask)
{
	int epfd = dps_thread_epfd(at);
	if (epfd < 0)
		return -errno;
	/* kfds has room for one more entry: the wait set, readable when news came. */
	kfds[nk] = (struct pollfd){.fd = epfd, .events = POLLIN};
	struct timespec ts = {.tv_sec = timeout_ms / 1000, .tv_nsec = timeout_ms % 1000 * 1000000};
	int n = ppoll(kfds, nk + 1, timeout_ms < 0 ? NULL : &ts, mask);
	if (n < 0)
		return -errno;
	if (kfds[nk].revents != 0) {
		n--;
		dps_thread_events(at, epfd, 0);
	}
	return n;
}

struct dps_file_wait {
	struct dps_file *f;
	uint32_t want;
	int timeout_ms;                 /* of this sleep: -1 forever */
};

static bool dps_file_wait_ready(void *ctx)
{
	struct dps_file_wait *fw = ctx;
	dps_events_drain(fw->f->at);
	return (dps_file_ready(fw->f) & fw->want) != 0;
}

static int dps_file_wait_sleep(void *ctx)
{
	struct dps_file_wait *fw = ctx;
	return dps_sleep(fw->f->at, fw->timeout_ms);
}

/* The daemon ended, as its life word or this process's record in the segment says. */
static bool dps_daemon_ended(struct dps_attach *at, uint32_t life)
{
	if (!(life & FUTEX_OWNER_DIED) &&
	    atomic_load_explicit(&at->hdr->procs[at->proc].attached, memory_order_acquire) != 0)
		return false;
	atomic_store(&at->dead, true);
	return true;
}

bool dps_attach_gone(struct dps_attach *at)
{
	return dps_attach_dead(at) ||
	       dps_daemon_ended(at, atomic_load_explicit(&at->hdr->daemon_life,
							 memory_order_acquire));
}

/* An untimed wait of a blocking socket call sleeps on the process's bell as a futex, beside
 * the daemon's life word (src/chan/chan_vigil.c), so that signals act on it as on a kernel
 * socket's sleep (src/base/doorbell.h): after an SA_RESTART handler the kernel resumes it,
 * another handler ends the call with EINTR. Returns 0 to look again, -EINTR, or -ENOSYS
 * when this way is closed (a daemon without the notice, a kernel before 5.16): then the
 * eventfd way serves. */
static int dps_sleep_restartable(struct dps_attach *at, uint32_t seen)
{
	_Atomic uint32_t *life = &at->hdr->daemon_life;
	uint32_t v = atomic_load_explicit(life, memory_order_acquire);
	if (dps_daemon_ended(at, v))
		return 0;
	if ((v & FUTEX_TID_MASK) == 0)
		return -ENOSYS;
	/* The kernel wakes a waiter at the owner's death only if FUTEX_WAITERS is set. */
	if (!(v & FUTEX_WAITERS) && !atomic_compare_exchange_strong(life, &v, v | FUTEX_WAITERS))
		return 0; /* the word changed under us: look again */
	int rc = doorbell_wait_also(dps_bell(at), seen, life, v | FUTEX_WAITERS, at->spin_ns);
	v = atomic_load_explicit(life, memory_order_acquire);
	if ((v & FUTEX_OWNER_DIED) && !dps_attach_dead(at))
		/* The kernel woke one sleeper: this one wakes the rest. */
		syscall(SYS_futex, (uint32_t *)life, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	dps_daemon_ended(at, v);
	return rc;
}

int dps_wait(struct dps_file *f, uint32_t want, int timeout_ms)
{
	struct dps_attach *at = f->at;
	const int64_t deadline = dps_deadline_ms(timeout_ms);
	struct dps_file_wait fw = {.f = f, .want = want | EPOLLERR | EPOLLHUP, .timeout_ms = -1};
	/* With SO_RCVTIMEO/SO_SNDTIMEO the kernel's sleep ends with EINTR after any handler
	 * (sock_intr_errno): the eventfd way does the same. */
	bool restartable = deadline < 0;
	for (;;) {
		uint32_t seen = doorbell_seq(dps_bell(at));
		/* Asked before readiness: a connection of a daemon that died in between is
		 * ready (reset), never -ENOTCONN. */
		bool dead = dps_attach_dead(at);
		if (dps_file_wait_ready(&fw))
			return 0;
		if (dead)
			return -ENOTCONN;
		int rc;
		if (restartable) {
			rc = dps_sleep_restartable(at, seen);
			if (rc == -ENOSYS) {
				restartable = false;
				continue;
			}
		} else {
			fw.timeout_ms = dps_ms_left(deadline);
			if (fw.timeout_ms == 0)
				return -EAGAIN;
			rc = doorbell_wait_fd(dps_bell(at), at->spin_ns, dps_file_wait_ready,
					      dps_file_wait_sleep, &fw);
		}
		if (rc == -EINTR)
			return rc;
	}
}

int dps_wait_unlocked(struct dps_file *f, pthread_mutex_t *lock, uint32_t want, int timeout_ms)
{
	pthread_mutex_unlock(lock);
	int rc = dps_wait(f, want, timeout_ms);
	pthread_mutex_lock(lock);
	return rc;
}
