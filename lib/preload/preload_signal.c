/* sigaction and the signal() family for SIGSEGV and SIGBUS: the library's handler stays
 * installed (it turns a bad pointer given to a stack socket call into EFAULT, see
 * lib/dpstack/dps_fault.c) and the application's disposition is kept beside it, reported
 * back as the kernel would and obeyed for every fault that is not the library's. glibc's
 * signal(), bsd_signal() and sysv_signal() install through its internal sigaction, past
 * this shim, so each is defined here with glibc's flags. Other signals go to libc. */
#include <errno.h>
#include <signal.h>

#include "../dpstack/dps_fault.h"
#include "preload.h"

int sigaction(int sig, const struct sigaction *act, struct sigaction *oldact)
{
	pl_init();
	int rc;
	if (dps_fault_sigaction(sig, act, oldact, &rc))
		return rc;
	return pl_libc.sigaction(sig, act, oldact);
}

/* signal() with glibc's flags for it; false when the shim does not keep sig. */
static bool pl_signal_as(int sig, sighandler_t h, int flags, bool mask_self, sighandler_t *old)
{
	struct sigaction act = {.sa_handler = h, .sa_flags = flags}, prev;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	int rc;
	if (h == SIG_ERR || !dps_fault_sigaction(sig, &act, &prev, &rc))
		return false;
	*old = rc == 0 ? prev.sa_handler : SIG_ERR;
	return true;
}

/* BSD semantics: the handler stays, its signal is blocked while it runs, calls restart. */
sighandler_t signal(int sig, sighandler_t h)
{
	pl_init();
	sighandler_t old;
	return pl_signal_as(sig, h, SA_RESTART, true, &old) ? old : pl_libc.signal(sig, h);
}

sighandler_t bsd_signal(int sig, sighandler_t h); /* no longer declared by glibc */
sighandler_t bsd_signal(int sig, sighandler_t h)
{
	return signal(sig, h);
}

/* System V semantics: once, not blocked, calls interrupted. */
sighandler_t sysv_signal(int sig, sighandler_t h)
{
	pl_init();
	sighandler_t old;
	return pl_signal_as(sig, h, SA_RESETHAND | SA_NODEFER, false, &old)
		       ? old : pl_libc.sysv_signal(sig, h);
}

sighandler_t __sysv_signal(int sig, sighandler_t h);
sighandler_t __sysv_signal(int sig, sighandler_t h)
{
	return sysv_signal(sig, h);
}
