/* The doorbell (doorbell.h): spin briefly, then sleep on a futex or an eventfd. */
#include "doorbell.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int64_t doorbell_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Not FUTEX_PRIVATE_FLAG: bells live in segments that the daemon and an application map
 * each at their own address; the kernel keys shared futexes by the page, not the address. */
static long doorbell_futex(_Atomic uint32_t *word, int op, uint32_t val,
			   const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

void doorbell_ring(struct doorbell *d)
{
	atomic_fetch_add_explicit(&d->seq, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&d->sleepers, memory_order_relaxed) != 0)
		doorbell_futex(&d->seq, FUTEX_WAKE, INT_MAX, NULL);
}

bool doorbell_ring_fd(struct doorbell *d, int efd)
{
	doorbell_ring(d);
	/* The eventfd keeps the ring until the sleeper reads it; the fence in doorbell_ring
	 * pairs with the sleeper's announcement. */
	if (atomic_load_explicit(&d->fd_sleepers, memory_order_relaxed) == 0 || efd < 0)
		return false;
	uint64_t one = 1;
	/* EAGAIN: the counter is saturated, the sleeper is being woken anyway. */
	return write(efd, &one, sizeof(one)) == sizeof(one);
}

bool doorbell_spin(int64_t spin_ns, bool (*ready)(void *ctx), void *ctx)
{
	if (spin_ns <= 0)
		return ready(ctx);
	int64_t end = 0;
	for (unsigned i = 0;; i++) {
		if (ready(ctx))
			return true;
		doorbell_relax();
		/* The clock (vDSO, some tens of ns) is read every 32 pauses. */
		if ((i & 31) == 0) {
			int64_t now = doorbell_now_ns();
			if (end == 0)
				end = now + spin_ns;
			else if (now >= end)
				return ready(ctx);
		}
	}
}

struct doorbell_seq_wait {
	struct doorbell *d;
	uint32_t seen;
};

static bool doorbell_moved(void *ctx)
{
	struct doorbell_seq_wait *w = ctx;
	return doorbell_seq(w->d) != w->seen;
}

int doorbell_wait(struct doorbell *d, uint32_t seen, int64_t spin_ns, int64_t timeout_ns)
{
	struct doorbell_seq_wait w = {.d = d, .seen = seen};
	if (doorbell_spin(spin_ns, doorbell_moved, &w))
		return 0;
	if (timeout_ns == 0)
		return -ETIMEDOUT;
	struct timespec ts, *tsp = NULL;
	if (timeout_ns > 0) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000);
		ts.tv_nsec = (long)(timeout_ns % 1000000000);
		tsp = &ts;
	}
	atomic_fetch_add_explicit(&d->sleepers, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	int rc = 0;
	/* The kernel compares the word with seen atomically with the sleep: a ring after our
	 * check either changed the word (no sleep) or finds us asleep (woken). */
	if (doorbell_futex(&d->seq, FUTEX_WAIT, seen, tsp) != 0)
		rc = errno == ETIMEDOUT ? -ETIMEDOUT : errno == EINTR ? -EINTR : 0;
	atomic_fetch_sub_explicit(&d->sleepers, 1, memory_order_relaxed);
	return rc;
}

struct doorbell_also_wait {
	struct doorbell *d;
	uint32_t seen;
	_Atomic uint32_t *also;
	uint32_t also_seen;
};

static bool doorbell_moved_or_also(void *ctx)
{
	struct doorbell_also_wait *w = ctx;
	return doorbell_seq(w->d) != w->seen ||
	       atomic_load_explicit(w->also, memory_order_acquire) != w->also_seen;
}

int doorbell_wait_also(struct doorbell *d, uint32_t seen, _Atomic uint32_t *also,
		       uint32_t also_seen, int64_t spin_ns)
{
	struct doorbell_also_wait w = {.d = d, .seen = seen, .also = also, .also_seen = also_seen};
	if (doorbell_spin(spin_ns, doorbell_moved_or_also, &w))
		return 0;
	struct futex_waitv v[2] = {
		{.val = seen, .uaddr = (uintptr_t)&d->seq, .flags = FUTEX_32},
		{.val = also_seen, .uaddr = (uintptr_t)also, .flags = FUTEX_32},
	};
	atomic_fetch_add_explicit(&d->sleepers, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	int rc = 0;
	/* Untimed on purpose: with a timeout the kernel would end the sleep with EINTR after
	 * any handler, SA_RESTART or not. EAGAIN: a word had moved already. */
	if (syscall(SYS_futex_waitv, v, 2, 0, NULL, 0) < 0)
		rc = errno == EINTR ? -EINTR : errno == ENOSYS ? -ENOSYS : 0;
	atomic_fetch_sub_explicit(&d->sleepers, 1, memory_order_relaxed);
	return rc;
}

int doorbell_wait_fd(struct doorbell *d, int64_t spin_ns, bool (*ready)(void *ctx),
		     int (*sleep)(void *ctx), void *ctx)
{
	if (doorbell_spin(spin_ns, ready, ctx))
		return 0;
	atomic_fetch_add_explicit(&d->fd_sleepers, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	int rc = ready(ctx) ? 0 : sleep(ctx);
	atomic_fetch_sub_explicit(&d->fd_sleepers, 1, memory_order_relaxed);
	return rc;
}

int64_t doorbell_spin_default(void)
{
	static _Atomic int64_t cached = -1;
	int64_t v = atomic_load_explicit(&cached, memory_order_relaxed);
	if (v >= 0)
		return v;
	const char *env = getenv("DPSTACK_SPIN_NS");
	char *end;
	long long e = env != NULL && *env != '\0' ? strtoll(env, &end, 10) : -1;
	if (env != NULL && *env != '\0' && *end == '\0' && e >= 0 && e <= 1000000000)
		v = e;
	else
		v = sysconf(_SC_NPROCESSORS_ONLN) > 1 ? DOORBELL_SPIN_NS_DEFAULT : 0;
	atomic_store_explicit(&cached, v, memory_order_relaxed);
	return v;
}
