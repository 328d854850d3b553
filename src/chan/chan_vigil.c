/* The daemon's death notice: a word in every application's segment (chan_seg_hdr's
 * daemon_life) that the kernel itself changes when the daemon ends, however it ends (a
 * SIGKILL, a crash, a clean stop), waking a thread that sleeps on it.
 *
 * Why it is needed: an application thread blocked in recv(2) on a stack socket sleeps on a
 * futex, since only a futex sleep gives Linux's signal semantics for blocking socket calls
 * (src/base/doorbell.h), and a futex sleeper watches no descriptor that would hang up when
 * the daemon goes. The kernel's robust futex list (set_robust_list(2),
 * Documentation/locking/robust-futexes.rst) is the one mechanism that acts in memory when a
 * process dies: at a thread's exit the kernel walks the list the thread registered and,
 * for each word holding that thread's TID, stores FUTEX_OWNER_DIED (keeping FUTEX_WAITERS)
 * and wakes one waiter. That waiter wakes the others (lib/dpstack/dps_wait.c).
 *
 * The list: a thread of its own (it replaces glibc's list for itself alone, and no robust
 * mutex is ever taken on it) registers a list whose entries lie in daemon-private memory,
 * one page apart, so that nothing an application writes can steer the kernel's walk. Each
 * entry's word is at the same distance from it (the list's futex_offset): in a window of
 * pages where page i maps application i's first segment page, shared. The thread then
 * sleeps until the daemon stops: its exit, any exit, is the daemon's death. */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chan_priv.h"

_Static_assert(offsetof(struct chan_seg_hdr, daemon_life) + sizeof(uint32_t) <= 4096,
	       "daemon_life must lie in the segment's first page");

struct chan_vigil {
	pthread_t thread;
	int stop_fd;
	_Atomic pid_t tid;              /* the thread's TID once its list is registered; 0 if
					 * the kernel refused it */
	_Atomic bool ready;
	size_t page;
	char *entries;                  /* CHAN_MAX_APPS private pages, an entry at each start */
	char *window;                   /* CHAN_MAX_APPS pages, each one application's first */
	struct robust_list_head head;   /* read by the kernel when the thread exits */
	pthread_mutex_t lock;           /* watch/unwatch from the channel thread and stop */
	bool used[CHAN_MAX_APPS];
};

static struct robust_list *chan_vigil_entry(struct chan_vigil *v, unsigned slot)
{
	return (struct robust_list *)(v->entries + (size_t)slot * v->page);
}

static void *chan_vigil_thread(void *arg)
{
	struct chan_vigil *v = arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	if (syscall(SYS_set_robust_list, &v->head, sizeof(v->head)) == 0)
		atomic_store(&v->tid, tid);
	else
		fprintf(stderr, "dpstackd: no death notice for applications (set_robust_list: "
				"%s); they learn it from their connection\n", strerror(errno));
	atomic_store(&v->ready, true);
	syscall(SYS_futex, (uint32_t *)&v->ready, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	uint64_t one;
	while (read(v->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR) {
		/* the stop is what ends it */
	}
	return NULL;
}

struct chan_vigil *chan_vigil_start(char *err, size_t errlen)
{
	struct chan_vigil *v = calloc(1, sizeof(*v));
	if (v == NULL) {
		snprintf(err, errlen, "death notice: out of memory");
		return NULL;
	}
	v->page = (size_t)sysconf(_SC_PAGESIZE);
	size_t bytes = (size_t)CHAN_MAX_APPS * v->page;
	v->stop_fd = eventfd(0, EFD_CLOEXEC);
	v->entries = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	v->window = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_mutex_init(&v->lock, NULL);
	v->head.list.next = &v->head.list; /* empty: the list is circular through the head */
	v->head.futex_offset = (long)(v->window - v->entries) +
			       (long)offsetof(struct chan_seg_hdr, daemon_life);
	int rc = v->stop_fd < 0 || v->entries == MAP_FAILED || v->window == MAP_FAILED
			 ? errno
			 : pthread_create(&v->thread, NULL, chan_vigil_thread, v);
	if (rc != 0) {
		snprintf(err, errlen, "death notice: %s", strerror(rc));
		if (v->entries != MAP_FAILED)
			munmap(v->entries, bytes);
		if (v->window != MAP_FAILED)
			munmap(v->window, bytes);
		if (v->stop_fd >= 0)
			close(v->stop_fd);
		free(v);
		return NULL;
	}
	while (!atomic_load(&v->ready))
		syscall(SYS_futex, (uint32_t *)&v->ready, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return v;
}

int chan_vigil_watch(struct chan_vigil *v, struct chan_app *a)
{
	pid_t tid = atomic_load(&v->tid);
	if (tid == 0)
		return -1;
	pthread_mutex_lock(&v->lock);
	unsigned slot = 0;
	while (slot < CHAN_MAX_APPS && v->used[slot])
		slot++;
	char *page = v->window + (size_t)slot * v->page;
	if (slot == CHAN_MAX_APPS || mmap(page, v->page, PROT_READ | PROT_WRITE,
					  MAP_SHARED | MAP_FIXED, a->memfd, 0) == MAP_FAILED) {
		pthread_mutex_unlock(&v->lock);
		return -1;
	}
	v->used[slot] = true;
	atomic_store_explicit(&a->hdr->daemon_life, (uint32_t)tid, memory_order_release);
	/* Linked at the front with one store, so that a walk at any moment (the daemon may die
	 * right now) sees a whole list. */
	struct robust_list *e = chan_vigil_entry(v, slot);
	e->next = v->head.list.next;
	__atomic_store_n(&v->head.list.next, e, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&v->lock);
	return (int)slot;
}

void chan_vigil_unwatch(struct chan_vigil *v, int slot)
{
	if (slot < 0)
		return;
	pthread_mutex_lock(&v->lock);
	struct robust_list *e = chan_vigil_entry(v, (unsigned)slot), *p = &v->head.list;
	while (p->next != e && p->next != &v->head.list)
		p = p->next;
	if (p->next == e)
		__atomic_store_n(&p->next, e->next, __ATOMIC_RELEASE);
	/* The page goes back to reserved address space: the segment can be freed. */
	mmap(v->window + (size_t)slot * v->page, v->page, PROT_NONE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	v->used[slot] = false;
	pthread_mutex_unlock(&v->lock);
}

void chan_vigil_stop(struct chan_vigil *v)
{
	if (v == NULL)
		return;
	uint64_t one = 1;
	if (write(v->stop_fd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd */
	}
	/* Its exit walks the list: applications still watched learn that the daemon ends. */
	pthread_join(v->thread, NULL);
	size_t bytes = (size_t)CHAN_MAX_APPS * v->page;
	munmap(v->entries, bytes);
	munmap(v->window, bytes);
	close(v->stop_fd);
	pthread_mutex_destroy(&v->lock);
	free(v);
}
