/* Linked into the unit tests of library code that copies through dps_ucopy: cmocka's
 * signal() calls must not take the library's fault handler away. */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

#include "../../lib/dpstack/dps_fault.h"

/* cmocka installs its own SIGSEGV and SIGBUS handlers with signal() around each test: they
 * are kept as the application's, as the preload shim keeps a program's (a crashing test is
 * still reported), and the library's handler stays in the kernel. */
sighandler_t signal(int sig, sighandler_t h)
{
	struct sigaction act, old;
	memset(&act, 0, sizeof(act));
	act.sa_handler = h;
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	int rc;
	if (h != SIG_ERR && dps_fault_sigaction(sig, &act, &old, &rc))
		return rc == 0 ? old.sa_handler : SIG_ERR;
	sighandler_t (*next)(int, sighandler_t) = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
	return next(sig, h);
}
