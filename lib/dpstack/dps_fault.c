/* The SIGSEGV/SIGBUS handler: a fault inside a fault-safe copy on the application's side
 * becomes that copy's short count (dps_ucopy.c); any other goes where it would have gone
 * without the library. The kernel holds the library's handler, installed with the
 * application's mask and SA_ONSTACK/SA_NODEFER/SA_RESTART flags, so that the application's
 * handler runs on the stack and with the mask the kernel would have given it; the
 * application's disposition is recorded here (dps_fault_sigaction: the preload shim's
 * sigaction and signal, so that a handler installed later does not remove ours and oldact
 * reports the application's). A fault that is not ours then goes to:
 *  - the application's handler, called as the kernel calls it (SA_SIGINFO or not, the same
 *    siginfo and context; SA_RESETHAND takes the disposition back to SIG_DFL first);
 *  - the default action: the kernel's disposition goes back to SIG_DFL and the signal is
 *    queued again for this thread with the same siginfo, so that it arrives as this handler
 *    returns and ends the process with the same signal (a core dump included); a fault that
 *    was a real one would also repeat;
 *  - nothing, for a SIG_IGN of a signal that was sent (a fault cannot be ignored: the
 *    kernel kills then, and so do we).
 * Known limit: an application that blocks SIGSEGV itself gets the kernel's forced default
 * action on a bad pointer in a copy, where Linux would return EFAULT. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dps_fault.h"
#include "dps_ucopy.h"

#define DPS_FAULT_NSIG 2

typedef int (*dps_sigaction_fn)(int, const struct sigaction *, struct sigaction *);

/* The kernel's sigaction, resolved past the preload shim (which defines sigaction and would
 * send the library's own calls back here). */
static dps_sigaction_fn dps_real_sigaction;
static atomic_bool dps_fault_on;
static pthread_once_t dps_fault_once = PTHREAD_ONCE_INIT;

/* The application's dispositions, read by the handler: a sequence lock (odd while being
 * written; writers take it by making it odd), since a lock cannot be taken in a handler. */
static struct sigaction dps_app[DPS_FAULT_NSIG];
static _Atomic unsigned dps_app_seq;

static int dps_fault_slot(int sig)
{
	return sig == SIGSEGV ? 0 : sig == SIGBUS ? 1 : -1;
}

static bool dps_is_handler(const struct sigaction *a)
{
	return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

static void dps_app_read(int slot, struct sigaction *out)
{
	for (;;) {
		unsigned s = atomic_load_explicit(&dps_app_seq, memory_order_acquire);
		if (s & 1)
			continue;
		memcpy(out, &dps_app[slot], sizeof(*out));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&dps_app_seq, memory_order_relaxed) == s)
			return;
	}
}

/* The writer also keeps both signals off this thread meanwhile: a handler that ran on it
 * (a sent SIGSEGV) would wait for ever on the odd sequence. */
static void dps_app_lock(sigset_t *saved)
{
	sigset_t both;
	sigemptyset(&both);
	sigaddset(&both, SIGSEGV);
	sigaddset(&both, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &both, saved);
	unsigned s = atomic_load_explicit(&dps_app_seq, memory_order_relaxed);
	for (;;) {
		if (!(s & 1) && atomic_compare_exchange_weak_explicit(&dps_app_seq, &s, s + 1,
								       memory_order_acquire,
								       memory_order_relaxed))
			break;
		s = atomic_load_explicit(&dps_app_seq, memory_order_relaxed);
	}
	atomic_thread_fence(memory_order_release);
}

static void dps_app_unlock(const sigset_t *saved)
{
	atomic_fetch_add_explicit(&dps_app_seq, 1, memory_order_release);
	pthread_sigmask(SIG_SETMASK, saved, NULL);
}

static void dps_fault_handler(int sig, siginfo_t *si, void *uc);

/* What the kernel holds for sig while the application's disposition is app. */
static void dps_kernel_act(const struct sigaction *app, struct sigaction *k)
{
	memset(k, 0, sizeof(*k));
	k->sa_sigaction = dps_fault_handler;
	if (dps_is_handler(app))
		k->sa_mask = app->sa_mask;
	else
		sigemptyset(&k->sa_mask);
	k->sa_flags = SA_SIGINFO | (app->sa_flags & (SA_ONSTACK | SA_NODEFER | SA_RESTART));
}

/* Records app as sig's disposition and gives the kernel the matching action (under the
 * writer's lock). */
static int dps_app_set(int sig, const struct sigaction *app)
{
	struct sigaction k;
	dps_kernel_act(app, &k);
	int rc = dps_real_sigaction(sig, &k, NULL);
	if (rc == 0)
		dps_app[dps_fault_slot(sig)] = *app;
	return rc;
}

static void dps_default_action(int sig, siginfo_t *si)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	dps_real_sigaction(sig, &dfl, NULL);
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	if (syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, si) != 0)
		syscall(SYS_tgkill, pid, tid, sig);
}

static void dps_fault_handler(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	dps_ucopy_recover(si, uc);
	struct sigaction app;
	dps_app_read(dps_fault_slot(sig), &app);
	if (dps_is_handler(&app)) {
		if (app.sa_flags & SA_RESETHAND) {
			struct sigaction dfl;
			memset(&dfl, 0, sizeof(dfl));
			dfl.sa_handler = SIG_DFL;
			sigset_t saved;
			dps_app_lock(&saved);
			dps_app_set(sig, &dfl);
			dps_app_unlock(&saved);
		}
		/* errno as the application's handler would have found it (and may leave it) */
		errno = saved_errno;
		if (app.sa_flags & SA_SIGINFO)
			app.sa_sigaction(sig, si, uc);
		else
			app.sa_handler(sig);
		return;
	}
	/* SIG_IGN of a sent signal: ignored, as the kernel ignores it */
	if (app.sa_handler == SIG_DFL || si->si_code > 0)
		dps_default_action(sig, si);
	errno = saved_errno;
}

static void dps_fault_setup(void)
{
	dps_real_sigaction = (dps_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
	if (dps_real_sigaction == NULL)
		return; /* copies still work; a bad pointer crashes as before */
	const int sigs[DPS_FAULT_NSIG] = {SIGSEGV, SIGBUS};
	bool ok = true;
	sigset_t saved;
	dps_app_lock(&saved);
	for (int i = 0; i < DPS_FAULT_NSIG && ok; i++) {
		struct sigaction cur;
		ok = dps_real_sigaction(sigs[i], NULL, &cur) == 0 && dps_app_set(sigs[i], &cur) == 0;
	}
	dps_app_unlock(&saved);
	atomic_store(&dps_fault_on, ok);
}

void dps_fault_init(void)
{
	pthread_once(&dps_fault_once, dps_fault_setup);
}

bool dps_fault_sigaction(int sig, const struct sigaction *act, struct sigaction *oldact,
			 int *rc)
{
	int slot = dps_fault_slot(sig);
	if (slot < 0 || !atomic_load(&dps_fault_on))
		return false;
	struct sigaction cur, next;
	/* Both pointers belong to the application: a bad one is EFAULT, as the kernel says. */
	if (act != NULL && dps_get_user(&next, act, sizeof(next)) < 0) {
		errno = EFAULT;
		*rc = -1;
		return true;
	}
	sigset_t saved;
	dps_app_lock(&saved);
	cur = dps_app[slot];
	*rc = act != NULL ? dps_app_set(sig, &next) : 0;
	dps_app_unlock(&saved);
	if (*rc == 0 && oldact != NULL && dps_put_user(oldact, &cur, sizeof(cur)) < 0) {
		errno = EFAULT;
		*rc = -1;
	}
	return true;
}

/* The kernel's disposition for the new image: SIG_IGN where the application ignores. */
static void dps_fault_exec_kernel(bool before)
{
	if (!atomic_load(&dps_fault_on))
		return;
	const int sigs[DPS_FAULT_NSIG] = {SIGSEGV, SIGBUS};
	sigset_t saved;
	dps_app_lock(&saved);
	for (int i = 0; i < DPS_FAULT_NSIG; i++) {
		if (dps_app[i].sa_handler != SIG_IGN)
			continue;
		if (before)
			dps_real_sigaction(sigs[i], &dps_app[i], NULL);
		else
			dps_app_set(sigs[i], &dps_app[i]);
	}
	dps_app_unlock(&saved);
}

void dps_fault_exec_prepare(void)
{
	dps_fault_exec_kernel(true);
}

void dps_fault_exec_failed(void)
{
	dps_fault_exec_kernel(false);
}
