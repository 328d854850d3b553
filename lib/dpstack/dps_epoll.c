/* epoll over stack sockets and kernel descriptors, with epoll(7)'s semantics.
 *
 * An instance is a kernel epoll instance (its descriptor is the instance's number) that
 * holds the kernel descriptors the application adds, plus this process's eventfd
 * (edge-triggered) and the daemon connection: sleeping in it wakes on a kernel event, on
 * news from the workers, and on the daemon's death. Stack sockets are items in user space:
 * each socket file lists the items watching it, and a socket whose events arrive (the
 * event rings, dps_events_drain) puts its items on their instance's ready list, as the
 * kernel's ep_poll_callback does. dps_epoll_wait then asks each ready item's socket what it
 * is ready for now: level-triggered items stay on the list while ready, edge-triggered and
 * one-shot ones leave it until the next event. */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/queue.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

/* data.u64 of the two internal members of the kernel instance; an application's own value
 * equal to these would be taken for them (a 2^-64 chance per value). */
#define DPS_EP_EVENTS 0x6470737461636b01ull
#define DPS_EP_DAEMON 0x6470737461636b02ull

pthread_mutex_t dps_ep_lock = PTHREAD_MUTEX_INITIALIZER;

struct dps_epitem {
	struct dps_epoll *ep;
	struct dps_file *file;          /* not a reference: closing the file removes the item */
	uint32_t events;
	epoll_data_t data;
	bool ready;                     /* on ep->ready */
	bool disabled;                  /* EPOLLONESHOT fired */
	struct dps_epitem *next_watch;  /* the file's items */
	TAILQ_ENTRY(dps_epitem) ready_link;
	LIST_ENTRY(dps_epitem) ep_link;
};

struct dps_epoll {
	struct dps_attach *at;
	int kfd;                        /* the kernel instance */
	unsigned gen;
	/* Kernel descriptors the application added (an adopted instance may hold some we did
	 * not see: it counts one). Without any, a wait asks the kernel nothing until it sleeps. */
	_Atomic int nkernel;
	/* Stack events were returned without asking the kernel: the next wait asks it first,
	 * so kernel descriptors are never starved by a busy stack (as VPP's ldp alternates). */
	_Atomic bool kernel_owed;
	TAILQ_HEAD(ready_q, dps_epitem) ready;
	LIST_HEAD(, dps_epitem) items;
	unsigned excl_next;
};

static void dps_ep_mark_ready(struct dps_epitem *it)
{
	if (!it->ready && !it->disabled) {
		it->ready = true;
		TAILQ_INSERT_TAIL(&it->ep->ready, it, ready_link);
	}
}

static void dps_ep_unready(struct dps_epitem *it)
{
	if (it->ready) {
		it->ready = false;
		TAILQ_REMOVE(&it->ep->ready, it, ready_link);
	}
}

void dps_epoll_notify(struct dps_file *f)
{
	/* EPOLLEXCLUSIVE: of the items that asked for it, one is told (in turn). */
	unsigned nexcl = 0;
	for (struct dps_epitem *it = f->watchers; it != NULL; it = it->next_watch) {
		if (it->events & EPOLLEXCLUSIVE)
			nexcl++;
		else
			dps_ep_mark_ready(it);
	}
	if (nexcl == 0)
		return;
	unsigned pick = f->watchers->ep->excl_next++ % nexcl, k = 0;
	for (struct dps_epitem *it = f->watchers; it != NULL; it = it->next_watch)
		if ((it->events & EPOLLEXCLUSIVE) && k++ == pick)
			dps_ep_mark_ready(it);
}

static void dps_ep_item_free(struct dps_epitem *it)
{
	struct dps_epitem **pp = &it->file->watchers;
	while (*pp != it)
		pp = &(*pp)->next_watch;
	*pp = it->next_watch;
	dps_ep_unready(it);
	LIST_REMOVE(it, ep_link);
	free(it);
}

void dps_epoll_hand_over(struct dps_file *f, int kfd)
{
	pthread_mutex_lock(&dps_ep_lock);
	for (struct dps_epitem *it = f->watchers; it != NULL; it = it->next_watch) {
		struct epoll_event e = {.events = it->events, .data = it->data};
		if (!it->disabled)
			dps_sys_epoll_ctl(it->ep->kfd, EPOLL_CTL_ADD, kfd, &e);
	}
	pthread_mutex_unlock(&dps_ep_lock);
}

void dps_epoll_forget(struct dps_file *f)
{
	pthread_mutex_lock(&dps_ep_lock);
	while (f->watchers != NULL)
		dps_ep_item_free(f->watchers);
	pthread_mutex_unlock(&dps_ep_lock);
}

void dps_epoll_file_free(struct dps_file *f)
{
	if (f->kind != DPS_EPOLL || f->ep == NULL)
		return;
	pthread_mutex_lock(&dps_ep_lock);
	struct dps_epitem *it;
	while ((it = LIST_FIRST(&f->ep->items)) != NULL)
		dps_ep_item_free(it);
	pthread_mutex_unlock(&dps_ep_lock);
	free(f->ep);
	f->ep = NULL;
}

/* The internal members: this process's eventfd and daemon connection (again after a fork,
 * which gives the child its own). */
static int dps_ep_add_internal(int kfd, struct dps_epoll *ep)
{
	struct epoll_event e = {.events = EPOLLIN | EPOLLET, .data.u64 = DPS_EP_EVENTS};
	if (dps_sys_epoll_ctl(kfd, EPOLL_CTL_ADD, ep->at->ev_fd, &e) != 0 && errno != EEXIST)
		return -errno;
	e = (struct epoll_event){.events = EPOLLRDHUP, .data.u64 = DPS_EP_DAEMON};
	if (dps_sys_epoll_ctl(kfd, EPOLL_CTL_ADD, ep->at->sock_fd, &e) != 0 && errno != EEXIST)
		return -errno;
	ep->gen = ep->at->gen;
	return 0;
}

/* Makes the kernel epoll instance kfd one of ours, serving at (whose reference it takes): 0,
 * or -1 with errno and kfd left as it was. */
static int dps_epoll_wrap(int kfd, bool cloexec, int nkernel, struct dps_attach *at)
{
	struct dps_epoll *ep = calloc(1, sizeof(*ep));
	struct dps_file *f = ep != NULL ? dps_file_new(DPS_EPOLL, kfd) : NULL;
	if (f == NULL) {
		free(ep);
		dps_attach_put(at);
		return DPS_FAIL(ENOMEM);
	}
	f->cloexec = cloexec;
	f->at = at;
	f->ep = ep;
	ep->at = at;
	ep->kfd = kfd;
	atomic_init(&ep->nkernel, nkernel);
	TAILQ_INIT(&ep->ready);
	LIST_INIT(&ep->items);
	int rc = dps_ep_add_internal(kfd, ep);
	if (rc == 0)
		rc = dps_file_install(f);
	if (rc < 0) {
		f->fd = -1;
		dps_file_put(f);
		return DPS_FAIL(-rc);
	}
	return 0;
}

int dps_epoll_create1(int flags)
{
	if (flags & ~EPOLL_CLOEXEC)
		return DPS_FAIL(EINVAL);
	int kfd = epoll_create1(flags);
	if (kfd < 0)
		return -1;
	struct dps_attach *at = dps_attach_get();
	if (at == NULL || dps_epoll_wrap(kfd, (flags & EPOLL_CLOEXEC) != 0, 0, at) < 0) {
		int e = errno;
		close(kfd);
		return DPS_FAIL(e);
	}
	return kfd;
}

int dps_epoll_adopt(int kfd, int fd)
{
	int fl = fcntl(kfd, F_GETFD);
	if (fl < 0)
		return -1;
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL || f->at == NULL) {
		dps_file_put(f);
		return DPS_FAIL(EBADF);
	}
	/* The socket's attachment, not a new one: a socket of a daemon that ended can still be
	 * watched (as a reset one), as Linux adds a reset socket to an epoll instance. */
	struct dps_attach *at = f->at;
	atomic_fetch_add(&at->refs, 1);
	dps_file_put(f);
	return dps_epoll_wrap(kfd, (fl & FD_CLOEXEC) != 0, 1, at);
}

int dps_epoll_create(int size)
{
	if (size <= 0)
		return DPS_FAIL(EINVAL);
	return dps_epoll_create1(0);
}

static struct dps_epitem *dps_ep_find(struct dps_epoll *ep, struct dps_file *f)
{
	for (struct dps_epitem *it = f->watchers; it != NULL; it = it->next_watch)
		if (it->ep == ep)
			return it;
	return NULL;
}

static int dps_ep_ctl_stack(struct dps_epoll *ep, int op, struct dps_file *f,
			    const struct epoll_event *ev)
{
	struct dps_epitem *it = dps_ep_find(ep, f);
	switch (op) {
	case EPOLL_CTL_ADD:
		if (it != NULL)
			return -EEXIST;
		it = calloc(1, sizeof(*it));
		if (it == NULL)
			return -ENOMEM;
		it->ep = ep;
		it->file = f;
		it->next_watch = f->watchers;
		f->watchers = it;
		LIST_INSERT_HEAD(&ep->items, it, ep_link);
		break;
	case EPOLL_CTL_MOD:
		if (it == NULL)
			return -ENOENT;
		/* Linux: EPOLLEXCLUSIVE is for ADD only, and an exclusive item cannot be
		 * modified. */
		if ((ev->events & EPOLLEXCLUSIVE) || (it->events & EPOLLEXCLUSIVE))
			return -EINVAL;
		break;
	case EPOLL_CTL_DEL:
		if (it == NULL)
			return -ENOENT;
		dps_ep_item_free(it);
		return 0;
	default:
		return -EINVAL;
	}
	it->events = ev->events;
	it->data = ev->data;
	it->disabled = false;
	/* Readiness that exists now is reported, as the kernel does on ADD and MOD. */
	if (dps_file_ready(f) & (ev->events | EPOLLERR | EPOLLHUP))
		dps_ep_mark_ready(it);
	return 0;
}

int dps_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	struct dps_file *e = dps_file_get(epfd);
	if (e == NULL)
		return epoll_ctl(epfd, op, fd, ev); /* not ours: the kernel answers */
	int rc;
	struct dps_file *f = NULL;
	struct epoll_event kev = {0};
	if (e->kind != DPS_EPOLL)
		rc = -EINVAL;
	else if (fd == epfd)
		rc = -EINVAL;
	else if (op != EPOLL_CTL_DEL && dps_get_user(&kev, ev, sizeof(kev)) < 0)
		rc = -EFAULT;
	else if ((f = dps_file_get(fd)) == NULL || f->kind == DPS_EPOLL) {
		rc = dps_sys_epoll_ctl(epfd, op, fd, ev) == 0 ? 0 : -errno;
		if (rc == 0 && op == EPOLL_CTL_ADD)
			atomic_fetch_add(&e->ep->nkernel, 1);
		else if (rc == 0 && op == EPOLL_CTL_DEL && atomic_load(&e->ep->nkernel) > 0)
			atomic_fetch_sub(&e->ep->nkernel, 1);
	}
	else {
		pthread_mutex_lock(&dps_ep_lock);
		rc = dps_ep_ctl_stack(e->ep, op, f, &kev);
		pthread_mutex_unlock(&dps_ep_lock);
	}
	dps_file_put(f);
	dps_file_put(e);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

/* Reports what the ready items are ready for now, at most max, into the application's evs.
 * An event that cannot be written leaves its item ready and ends the list there
 * (ep_send_events): the count before it, or -EFAULT when it was the first. */
static int dps_ep_collect(struct dps_epoll *ep, struct epoll_event *evs, int max)
{
	int n = 0;
	pthread_mutex_lock(&dps_ep_lock);
	struct dps_epitem *it = TAILQ_FIRST(&ep->ready), *last = TAILQ_LAST(&ep->ready, ready_q);
	while (it != NULL && n < max) {
		struct dps_epitem *next = TAILQ_NEXT(it, ready_link);
		bool was_last = it == last;
		uint32_t r = dps_file_ready(it->file) &
			     ((it->events & ~(EPOLLET | EPOLLONESHOT | EPOLLEXCLUSIVE)) |
			      EPOLLERR | EPOLLHUP);
		if (r != 0) {
			struct epoll_event e = {.events = r, .data = it->data};
			if (dps_put_user(&evs[n], &e, sizeof(e)) < 0) {
				n = n > 0 ? n : -EFAULT;
				break;
			}
			n++;
		}
		dps_ep_unready(it);
		if (r != 0) {
			if (it->events & EPOLLONESHOT)
				it->disabled = true;
			else if (!(it->events & EPOLLET))
				dps_ep_mark_ready(it); /* level: asked again next time */
		}
		if (was_last)
			break;
		it = next;
	}
	pthread_mutex_unlock(&dps_ep_lock);
	return n;
}

/* The daemon went away: every item is looked at again, so that a server's event loop sees
 * its connections end as reset ones (dps_orphan.c); listeners stay quiet (dps_file_ready). */
static void dps_ep_daemon_gone(struct dps_epoll *ep)
{
	pthread_mutex_lock(&dps_ep_lock);
	struct dps_epitem *it;
	LIST_FOREACH(it, &ep->items, ep_link)
		dps_ep_mark_ready(it);
	pthread_mutex_unlock(&dps_ep_lock);
}

/* Kernel events, minus the internal members. */
static int dps_ep_kernel(struct dps_epoll *ep, int kfd, struct epoll_event *evs, int max,
			 int timeout, const sigset_t *mask)
{
	int k = dps_sys_epoll_pwait(kfd, evs, max, timeout, mask);
	if (k < 0)
		return -errno;
	int n = 0;
	for (int i = 0; i < k; i++) {
		if (evs[i].data.u64 == DPS_EP_EVENTS)
			continue;
		if (evs[i].data.u64 == DPS_EP_DAEMON) {
			/* A hung-up connection stays ready: out of the set once it is seen. */
			if (dps_attach_check(ep->at)) {
				dps_sys_epoll_ctl(kfd, EPOLL_CTL_DEL, ep->at->sock_fd, NULL);
				dps_ep_daemon_gone(ep);
			}
			continue;
		}
		evs[n++] = evs[i];
	}
	return n;
}

/* Ready stack items, then ready kernel descriptors, without sleeping: the kernel is asked
 * only when the instance holds kernel descriptors, and not twice in a row while stack
 * events keep coming. */
static int dps_ep_gather(struct dps_epoll *ep, int kfd, struct epoll_event *evs, int max)
{
	dps_events_drain(ep->at);
	int n = dps_ep_collect(ep, evs, max);
	if (n < 0)
		return n;
	bool ask = atomic_load_explicit(&ep->nkernel, memory_order_relaxed) > 0 &&
		   (n == 0 || atomic_load_explicit(&ep->kernel_owed, memory_order_relaxed));
	if (ask && n < max) {
		int k = dps_ep_kernel(ep, kfd, evs + n, max - n, 0, NULL);
		n += k > 0 ? k : 0;
		atomic_store_explicit(&ep->kernel_owed, false, memory_order_relaxed);
	} else if (n > 0) {
		atomic_store_explicit(&ep->kernel_owed, true, memory_order_relaxed);
	}
	return n;
}

int dps_epoll_pwait(int epfd, struct epoll_event *evs, int maxevents, int timeout,
		    const sigset_t *mask)
{
	struct dps_file *e = dps_file_get(epfd);
	if (e == NULL)
		return epoll_pwait(epfd, evs, maxevents, timeout, mask);
	/* evs is checked as it is written: the kernel, too, finds a bad one only when it
	 * has an event to put there. */
	if (e->kind != DPS_EPOLL || maxevents <= 0) {
		dps_file_put(e);
		return DPS_FAIL(EINVAL);
	}
	struct dps_epoll *ep = e->ep;
	struct dps_attach *at = ep->at;
	if (ep->gen != at->gen)
		dps_ep_add_internal(e->fd, ep);
	_Atomic uint32_t *sleepers = &dps_bell(at)->fd_sleepers;
	const int64_t deadline = dps_deadline_ms(timeout);
	int n;
	for (;;) {
		n = dps_ep_gather(ep, e->fd, evs, maxevents);
		if (n != 0 || timeout == 0)
			break;
		int left = dps_ms_left(deadline);
		if (left == 0)
			break;
		/* The doorbell (src/base/doorbell.h): spin briefly on the event rings, then
		 * announce and look again before sleeping; the kernel instance holds this
		 * process's eventfd, which the workers write once we announced. */
		if (doorbell_spin(at->spin_ns, dps_events_pending, at))
			continue;
		atomic_fetch_add(sleepers, 1);
		atomic_thread_fence(memory_order_seq_cst);
		dps_events_drain(at);
		n = dps_ep_collect(ep, evs, maxevents);
		if (n == 0)
			n = dps_ep_kernel(ep, e->fd, evs, maxevents, left, mask);
		atomic_fetch_sub(sleepers, 1);
		if (n != 0)
			break;
	}
	dps_file_put(e);
	return n < 0 ? DPS_FAIL(-n) : n;
}

int dps_epoll_wait(int epfd, struct epoll_event *evs, int maxevents, int timeout)
{
	return dps_epoll_pwait(epfd, evs, maxevents, timeout, NULL);
}

int dps_epoll_pwait2(int epfd, struct epoll_event *evs, int maxevents,
		     const struct timespec *timeout, const sigset_t *mask)
{
	int ms = dps_timespec_ms(timeout);
	return ms < -1 ? DPS_FAIL(-ms) : dps_epoll_pwait(epfd, evs, maxevents, ms, mask);
}
