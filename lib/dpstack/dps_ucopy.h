/* Copies between the application's memory and the library's (its own state, the shared
 * segment) that survive a bad pointer: a page the application cannot give (unmapped, NULL,
 * read-only for a receive buffer) ends the copy there instead of crashing the process, and
 * the call says EFAULT or returns the bytes done, as the kernel does for a system call.
 *
 * How, and why this way: every copy arms a thread-local recovery point (sigsetjmp without the
 * signal mask, so no system call) and copies page by page of the application's range; the
 * library's SIGSEGV/SIGBUS handler (dps_fault.c) checks whether the faulting thread is inside
 * an armed copy and the fault address lies in that copy's application range, and if so puts
 * the interrupted signal mask back and jumps to the recovery point: the copy returns the
 * bytes of the pages it finished. Nothing else is skipped: the jump never leaves the copy
 * function, so its caller goes on normally, releases its locks and publishes FIFO positions
 * only for what was copied. The alternatives cost a system call per copy (process_vm_readv,
 * mincore, a write(2) probe), which is what the library exists to avoid, or still crash
 * (checking pointers for NULL). A fault anywhere else is the application's (dps_fault.c). */
#ifndef DPS_LIB_UCOPY_H
#define DPS_LIB_UCOPY_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* Each returns the count of bytes copied before the first page of the application's side
 * (usrc, udst) that could not be read or written, n when all were. A short count means the
 * bytes before it arrived; those after it are undefined. */
size_t dps_copy_from_user(void *dst, const void *usrc, size_t n);
size_t dps_copy_to_user(void *udst, const void *src, size_t n);

/* The same for an object that must arrive whole: 0 or -EFAULT. */
static inline int dps_get_user(void *dst, const void *usrc, size_t n)
{
	return dps_copy_from_user(dst, usrc, n) == n ? 0 : -EFAULT;
}

static inline int dps_put_user(void *udst, const void *src, size_t n)
{
	return dps_copy_to_user(udst, src, n) == n ? 0 : -EFAULT;
}

/* For the fault handler: when the calling thread faulted on the application's side of an
 * armed copy, resumes that copy (with the signal mask of before the fault, from uc) and
 * does not return; otherwise returns. */
void dps_ucopy_recover(const siginfo_t *si, void *uc);

#endif
