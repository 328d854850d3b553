/* The pending table: for each stack socket that has not bound or connected yet, how to
 * remake it on the kernel (preload_socket.c).
 *
 * Every close(2) of a stack socket asks this table, and so do connect and setsockopt, in
 * programs with many threads (nginx, redis): the common answer, "no record", costs one load
 * and takes no lock. The table is chunks of atomic pointers that are made once and never
 * moved or freed (dps_fdmap.h, as libdpstack's descriptor table), so it grows without a lock.
 * The one lock serves only descriptors that have a record: a record is changed in place by
 * setsockopt, and must not be freed by a close meanwhile.
 *
 * fork(2) copies the lock as it is: held by another thread at that instant, a child would
 * wait for ever at its first close of a new socket. The lock is taken around fork (its
 * holders never block), so the child gets it free and every record whole. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../dpstack/dps_fdmap.h"
#include "preload.h"

static struct dps_fdmap pending;

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void pl_pending_fork_prepare(void)
{
	pthread_mutex_lock(&record_lock);
}

static void pl_pending_fork_done(void)
{
	pthread_mutex_unlock(&record_lock);
}

static void pl_pending_fork_register(void)
{
	pthread_atfork(pl_pending_fork_prepare, pl_pending_fork_done, pl_pending_fork_done);
}

/* fd's record without the lock: NULL is the common answer, and final. */
static struct pl_pending *pl_pending_peek(int fd)
{
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&pending, fd, false);
	return slot != NULL ? atomic_load_explicit(slot, memory_order_acquire) : NULL;
}

int pl_pending_add(int fd, int domain, int type, int protocol)
{
	pthread_once(&fork_once, pl_pending_fork_register);
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&pending, fd, true);
	struct pl_pending *p = slot != NULL ? calloc(1, sizeof(*p)) : NULL;
	if (p == NULL)
		return -1;
	*p = (struct pl_pending){.domain = domain, .type = type, .protocol = protocol};
	pthread_mutex_lock(&record_lock);
	free(atomic_exchange_explicit(slot, p, memory_order_acq_rel));
	pthread_mutex_unlock(&record_lock);
	return 0;
}

struct pl_pending *pl_pending_take(int fd)
{
	if (pl_pending_peek(fd) == NULL)
		return NULL;
	pthread_mutex_lock(&record_lock);
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&pending, fd, false);
	struct pl_pending *p = atomic_exchange_explicit(slot, NULL, memory_order_acq_rel);
	pthread_mutex_unlock(&record_lock);
	return p;
}

bool pl_pending_has(int fd)
{
	return pl_pending_peek(fd) != NULL;
}

void pl_pending_forget(int fd)
{
	free(pl_pending_take(fd));
}

void pl_pending_record_opt(int fd, int level, int name, const void *val, socklen_t len)
{
	if (len > PL_OPT_LEN || pl_pending_peek(fd) == NULL)
		return;
	pthread_mutex_lock(&record_lock);
	struct pl_pending *p = pl_pending_peek(fd); /* again: a close may have taken it */
	if (p != NULL) {
		unsigned i = 0;
		while (i < p->nopts && (p->opts[i].level != level || p->opts[i].name != name))
			i++;
		if (i < PL_MAX_OPTS) {
			p->opts[i].level = level;
			p->opts[i].name = name;
			p->opts[i].len = len;
			memcpy(p->opts[i].val, val, len);
			if (i == p->nopts)
				p->nopts++;
		}
	}
	pthread_mutex_unlock(&record_lock);
}
