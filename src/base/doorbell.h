/* The doorbell: how every thread of dpstack, in the daemon and in applications, waits for
 * another to say that something changed, without sleeping in fixed steps and without
 * losing a wake-up.
 *
 * A waiter reads the bell's sequence, checks its condition, spins briefly (the answer of a
 * busy peer often comes within microseconds, and a sleep and wake-up cost more than that),
 * then announces itself in `sleepers`, checks once more and sleeps. A ringer changes the
 * state first, then rings: it bumps the sequence and, only when someone announced a sleep,
 * wakes them. The pair of full fences (the waiter's after announcing, the ringer's after
 * bumping) makes the ringer see the sleeper or the sleeper see the new sequence (Dekker):
 * a ring is never lost, and a ring nobody waits for costs no system call.
 *
 * Two ways to sleep: on the sequence word itself (futex; shared, so the bell may live in
 * memory mapped by several processes), or on an eventfd that the caller also watches with
 * other descriptors (an application waiting for the daemon and its own sockets at once; a
 * worker waiting for applications and its ports' timers). Both kinds may sleep on one bell
 * at once; each has its own count, so a ring makes only the system calls someone needs.
 *
 * An untimed futex sleep has one more property that an application's blocking socket call
 * needs: a signal handler installed with SA_RESTART makes the kernel restart it, one
 * without makes it fail with EINTR (futex(2) returns ERESTARTSYS), exactly what a blocking
 * recv(2) without SO_RCVTIMEO does in the kernel (sock_intr_errno). epoll_wait and poll
 * always fail with EINTR instead. A bell in memory that another
 * process can write is trusted for nothing but wake-ups: a scribbled bell makes a wake-up
 * spurious or late, never unsafe.
 *
 * Pure C, no DPDK: the daemon and libdpstack both build it. */
#ifndef DPS_BASE_DOORBELL_H
#define DPS_BASE_DOORBELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct doorbell {
	_Atomic uint32_t seq;           /* futex word: moves at every ring */
	_Atomic uint32_t sleepers;      /* threads past their spin, about to sleep on seq or
					 * asleep there */
	_Atomic uint32_t fd_sleepers;   /* the same for threads sleeping on an eventfd */
};

/* How long a waiter spins before it sleeps, by default: long enough to catch the answer of
 * a peer that is running, short against a sleep and wake-up (a few microseconds each). On a
 * machine with one CPU nothing is spun: the peer cannot run while we spin. */
#define DOORBELL_SPIN_NS_DEFAULT 4000

static inline void doorbell_init(struct doorbell *d)
{
	atomic_store_explicit(&d->seq, 0, memory_order_relaxed);
	atomic_store_explicit(&d->sleepers, 0, memory_order_relaxed);
	atomic_store_explicit(&d->fd_sleepers, 0, memory_order_relaxed);
}

/* One step of a spin: tells the CPU we are waiting for another thread's store (x86 PAUSE,
 * arm64 YIELD), which lets a sibling hyperthread run and saves power. */
static inline void doorbell_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* The sequence to wait past: read it before checking the condition. */
static inline uint32_t doorbell_seq(const struct doorbell *d)
{
	return atomic_load_explicit((_Atomic uint32_t *)&d->seq, memory_order_acquire);
}

/* Wakes the bell's futex sleepers; a no-op (no system call) when nobody sleeps. */
void doorbell_ring(struct doorbell *d);

/* Wakes every sleeper of a bell that both kinds may sleep on: moves the sequence, wakes the
 * futex sleepers, and writes efd (the eventfd they watch) when an eventfd sleeper announced
 * itself. Returns true when it wrote efd. */
bool doorbell_ring_fd(struct doorbell *d, int efd);

/* Spins up to spin_ns, then sleeps on the futex until the sequence moves past seen, or
 * until timeout_ns passes (< 0: no limit). Returns 0 when the sequence moved (or may have:
 * the caller checks its condition again), -ETIMEDOUT, or -EINTR when a signal handler ran. */
int doorbell_wait(struct doorbell *d, uint32_t seen, int64_t spin_ns, int64_t timeout_ns);

/* The same, untimed, also ending when the word *also no longer holds also_seen (a second
 * futex word: another party's news, such as "the daemon died"). Returns 0 (the caller
 * checks its conditions again), -EINTR when a signal handler without SA_RESTART ran (after
 * one with SA_RESTART the kernel resumes the sleep by itself), or -ENOSYS on a kernel
 * without futex_waitv (before Linux 5.16). */
int doorbell_wait_also(struct doorbell *d, uint32_t seen, _Atomic uint32_t *also,
		       uint32_t also_seen, int64_t spin_ns);

/* The eventfd way: spins up to spin_ns while ready(ctx) is false, then announces a sleep,
 * checks ready(ctx) once more and calls sleep(ctx), which blocks on the caller's eventfd
 * (and whatever else it watches) and returns 0 or -errno. Returns 0 when ready, else what
 * sleep returned. */
int doorbell_wait_fd(struct doorbell *d, int64_t spin_ns, bool (*ready)(void *ctx),
		     int (*sleep)(void *ctx), void *ctx);

/* Spin for up to spin_ns while ready(ctx) is false; true when it became ready. */
bool doorbell_spin(int64_t spin_ns, bool (*ready)(void *ctx), void *ctx);

/* DOORBELL_SPIN_NS_DEFAULT, or 0 on a machine with one CPU; DPSTACK_SPIN_NS overrides it. */
int64_t doorbell_spin_default(void);

#endif
