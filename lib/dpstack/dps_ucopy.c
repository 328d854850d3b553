/* Fault-safe copies (see dps_ucopy.h for the design). */
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>

#include "dps_fault.h"
#include "dps_ucopy.h"

/* Copies are cut where the application's range crosses a multiple of this: a fault in one
 * piece means the page holding it is bad and every piece before it arrived, whatever order
 * memcpy touches bytes in. 4 KiB divides every page size Linux has. */
#define DPS_UCOPY_PIECE 4096u

/* One armed copy. Armed copies nest (a signal handler of the application may call the
 * library while a copy of the same thread is interrupted): prev is the outer one. */
struct dps_ucopy {
	sigjmp_buf env;
	uintptr_t lo, hi;               /* the application's range, [lo, hi) */
	volatile size_t done;           /* read after the jump: volatile */
	struct dps_ucopy *prev;
};

#if defined(__SANITIZE_ADDRESS__)
/* ASan's memcpy checks both ranges itself and reports a wild application pointer as an
 * error before the copy could fault (and UBSan's a NULL one): the sanitized build copies
 * with a loop they do not instrument (volatile, or the compiler makes it a memcpy again). */
__attribute__((no_sanitize("address", "undefined")))
static void dps_ucopy_bytes(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}
#else
#define dps_ucopy_bytes memcpy
#endif

/* initial-exec: read from the signal handler, where a lazily allocated TLS block (the
 * general dynamic model in a dlopen'ed library) is not safe. */
static __thread struct dps_ucopy *dps_ucopy_cur __attribute__((tls_model("initial-exec")));

/* The copy under its recovery point. Kept out of line: nothing of its caller's is live
 * across the sigsetjmp. */
static __attribute__((noinline)) size_t dps_ucopy_armed(void *dst, const void *src, size_t n,
							 uintptr_t user)
{
	struct dps_ucopy c;
	c.lo = user;
	c.hi = user + n < user ? UINTPTR_MAX : user + n;
	c.done = 0;
	c.prev = dps_ucopy_cur;
	if (sigsetjmp(c.env, 0) == 0) {
		dps_ucopy_cur = &c;
		atomic_signal_fence(memory_order_seq_cst);
		size_t done = 0;
		while (done < n) {
			size_t piece = DPS_UCOPY_PIECE - ((user + done) & (DPS_UCOPY_PIECE - 1));
			if (piece > n - done)
				piece = n - done;
			dps_ucopy_bytes((char *)dst + done, (const char *)src + done, piece);
			done += piece;
			c.done = done;
		}
	}
	atomic_signal_fence(memory_order_seq_cst);
	dps_ucopy_cur = c.prev;
	return c.done;
}

static size_t dps_ucopy(void *dst, const void *src, size_t n, uintptr_t user)
{
	if (n == 0)
		return 0;
	/* The handler is installed by the first copy (a load and a branch after that): a
	 * program that never hands the library a pointer keeps its dispositions untouched. */
	dps_fault_init();
	return dps_ucopy_armed(dst, src, n, user);
}

size_t dps_copy_from_user(void *dst, const void *usrc, size_t n)
{
	return dps_ucopy(dst, usrc, n, (uintptr_t)usrc);
}

size_t dps_copy_to_user(void *udst, const void *src, size_t n)
{
	return dps_ucopy(udst, src, n, (uintptr_t)udst);
}

/* x86-64 reports an access to a non-canonical address (a garbage pointer such as
 * 0xdead000000000000) as a general protection fault: SI_KERNEL and no address. Inside an
 * armed copy only the application's side can be such a pointer when its range leaves the
 * lower half (the library's own pointers are canonical). */
static bool dps_ucopy_noncanonical(const siginfo_t *si, const struct dps_ucopy *c)
{
#if defined(__x86_64__)
	return si->si_code == SI_KERNEL && c->hi > ((uintptr_t)1 << 47);
#else
	(void)si;
	(void)c;
	return false;
#endif
}

void dps_ucopy_recover(const siginfo_t *si, void *uc)
{
	struct dps_ucopy *c = dps_ucopy_cur;
	/* si_code <= 0: sent by kill(2) or sigqueue(3), not a fault of this thread. */
	if (c == NULL || si->si_code <= 0)
		return;
	uintptr_t a = (uintptr_t)si->si_addr;
	if ((a < c->lo || a >= c->hi) && !dps_ucopy_noncanonical(si, c))
		return;
	/* The jump keeps the handler's mask (the signal blocked): the one of before the fault
	 * goes back first, a system call on this rare path only. */
	pthread_sigmask(SIG_SETMASK, &((ucontext_t *)uc)->uc_sigmask, NULL);
	siglongjmp(c->env, 1);
}
