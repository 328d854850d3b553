/* The library's fault-safe copies (lib/dpstack/dps_ucopy.c) and the SIGSEGV/SIGBUS handler
 * behind them (dps_fault.c): a bad page of the application's range ends a copy with the
 * bytes before it, with the signal mask of before; a fault that is not a copy's goes to the
 * application's handler as the kernel would deliver it, or to the default action. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../lib/dpstack/dps_fault.h"
#include "../../lib/dpstack/dps_ucopy.h"

static size_t page;

/* Three pages, the middle one with protection prot. */
static unsigned char *three_pages(int prot)
{
	unsigned char *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0x11, 3 * page);
	assert_int_equal(mprotect(p + page, page, prot), 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	page = (size_t)sysconf(_SC_PAGESIZE);
	dps_fault_init();
	return 0;
}

static void good_buffers_are_copied_whole(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_READ | PROT_WRITE), out[3 * 4096];
	size_t n = 3 * page < sizeof(out) ? 3 * page : sizeof(out);
	assert_int_equal(dps_copy_from_user(out, p, n), n);
	memset(out, 0x22, n);
	assert_int_equal(dps_copy_to_user(p, out, n), n);
	assert_int_equal(p[n - 1], 0x22);
	munmap(p, 3 * page);
}

static void a_read_only_page_ends_a_copy_out_with_the_bytes_before_it(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_READ);
	static unsigned char src[3 * 65536];
	memset(src, 0x33, sizeof(src));
	size_t off = 100;
	assert_int_equal(dps_copy_to_user(p + off, src, 3 * page - off), page - off);
	assert_int_equal(p[page - 1], 0x33);
	assert_int_equal(p[page], 0x11);
	assert_int_equal(dps_put_user(p + page - 2, src, 4), -EFAULT);
	munmap(p, 3 * page);
}

static void an_unmapped_page_ends_a_copy_in_with_the_bytes_before_it(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_NONE);
	static unsigned char dst[3 * 65536];
	assert_int_equal(dps_copy_from_user(dst, p + 7, 3 * page - 7), page - 7);
	assert_int_equal(dst[page - 8], 0x11);
	assert_int_equal(dps_copy_from_user(dst, p + page, 10), 0);
	munmap(p, 3 * page);
}

static void null_with_a_length_copies_nothing_and_null_without_is_fine(void **state)
{
	(void)state;
	char buf[16];
	assert_int_equal(dps_copy_from_user(buf, NULL, sizeof(buf)), 0);
	assert_int_equal(dps_copy_to_user(NULL, buf, sizeof(buf)), 0);
	assert_int_equal(dps_get_user(buf, NULL, 0), 0);
	assert_int_equal(dps_put_user(NULL, buf, 0), 0);
	/* A range that wraps around the address space. */
	assert_int_equal(dps_copy_from_user(buf, (void *)(UINTPTR_MAX - 3), 8), 0);
#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
	/* A non-canonical pointer is a general protection fault, reported without address. */
	assert_int_equal(dps_copy_from_user(buf, (void *)0xdead000000000000ull, 8), 0);
#endif
}

static void the_signal_mask_of_before_the_fault_is_back(void **state)
{
	(void)state;
	sigset_t usr1, before, after;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, &before);
	char buf[8];
	for (int i = 0; i < 1000; i++)
		assert_int_equal(dps_copy_from_user(buf, NULL, sizeof(buf)), 0);
	pthread_sigmask(SIG_SETMASK, &before, &after);
	assert_true(sigismember(&after, SIGUSR1));
	assert_false(sigismember(&after, SIGSEGV));
	assert_false(sigismember(&after, SIGBUS));
}

/* A truncated file mapping: SIGBUS past its end. */
static void a_sigbus_page_ends_a_copy_too(void **state)
{
	(void)state;
	FILE *tmp = tmpfile();
	assert_non_null(tmp);
	int fd = fileno(tmp);
	assert_int_equal(ftruncate(fd, (off_t)page), 0);
	unsigned char *p = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(p != MAP_FAILED);
	static unsigned char dst[2 * 65536];
	assert_int_equal(dps_copy_from_user(dst, p, 2 * page), page);
	munmap(p, 2 * page);
	fclose(tmp);
}

static void *faulting_copies(void *arg)
{
	unsigned char *p = arg, buf[64];
	for (int i = 0; i < 2000; i++)
		if (dps_copy_from_user(buf, p + page - 32, sizeof(buf)) != 32)
			return (void *)1;
	return NULL;
}

static void threads_recover_each_on_their_own(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_NONE);
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, faulting_copies, p), 0);
	for (int i = 0; i < 4; i++) {
		void *rc;
		pthread_join(t[i], &rc);
		assert_null(rc);
	}
	munmap(p, 3 * page);
}

/* ---- faults that are not the library's ---- */

static volatile sig_atomic_t seen_sig, seen_code, seen_plain, seen_blocked_self;
static void *volatile seen_addr;
static void *volatile seen_uc;
static unsigned char *volatile fix_page;

static void app_siginfo(int sig, siginfo_t *si, void *uc)
{
	seen_sig = sig;
	seen_code = si->si_code;
	seen_addr = si->si_addr;
	seen_uc = uc;
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	seen_blocked_self = sigismember(&now, sig);
	/* let the faulting instruction go on */
	mprotect(fix_page, page, PROT_READ | PROT_WRITE);
}

static void app_plain(int sig)
{
	seen_plain = sig;
	mprotect(fix_page, page, PROT_READ | PROT_WRITE);
}

static void set_app(int sig, void (*h)(int), void (*sa)(int, siginfo_t *, void *), int flags)
{
	struct sigaction act;
	memset(&act, 0, sizeof(act));
	if (sa != NULL)
		act.sa_sigaction = sa;
	else
		act.sa_handler = h;
	act.sa_flags = flags;
	sigemptyset(&act.sa_mask);
	int rc = -1;
	assert_true(dps_fault_sigaction(sig, &act, NULL, &rc));
	assert_int_equal(rc, 0);
}

static void touch(volatile unsigned char *at)
{
	*at = 1;
}

static void a_foreign_fault_reaches_the_siginfo_handler_with_its_siginfo(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_READ);
	fix_page = p + page;
	set_app(SIGSEGV, NULL, app_siginfo, SA_SIGINFO);
	seen_sig = 0;
	touch(p + page + 5);
	assert_int_equal(seen_sig, SIGSEGV);
	assert_int_equal(seen_code, SEGV_ACCERR);
	assert_ptr_equal(seen_addr, p + page + 5);
	assert_non_null(seen_uc);
	assert_true(seen_blocked_self); /* blocked while it runs: no SA_NODEFER */
	assert_int_equal(p[page + 5], 1);
	/* The copies still recover while the application has a handler of its own. */
	mprotect(p + page, page, PROT_NONE);
	char buf[8];
	seen_sig = 0;
	assert_int_equal(dps_copy_from_user(buf, p + page, sizeof(buf)), 0);
	assert_int_equal(seen_sig, 0);
	munmap(p, 3 * page);
}

static void a_plain_handler_is_called_with_the_signal_and_nodefer_is_kept(void **state)
{
	(void)state;
	unsigned char *p = three_pages(PROT_NONE);
	fix_page = p + page;
	set_app(SIGSEGV, app_plain, NULL, SA_NODEFER);
	seen_plain = 0;
	touch(p + page);
	assert_int_equal(seen_plain, SIGSEGV);
	munmap(p, 3 * page);
	fix_page = NULL;
	set_app(SIGSEGV, NULL, app_siginfo, SA_SIGINFO | SA_NODEFER);
	p = three_pages(PROT_NONE);
	fix_page = p + page;
	touch(p + page);
	assert_false(seen_blocked_self);
	munmap(p, 3 * page);
}

static void oldact_reports_the_applications_disposition_and_resethand_resets_it(void **state)
{
	(void)state;
	set_app(SIGSEGV, NULL, app_siginfo, SA_SIGINFO | SA_RESETHAND);
	struct sigaction old;
	int rc;
	assert_true(dps_fault_sigaction(SIGSEGV, NULL, &old, &rc));
	assert_int_equal(rc, 0);
	assert_ptr_equal(old.sa_sigaction, app_siginfo);
	assert_true(old.sa_flags & SA_RESETHAND);
	/* The kernel holds the library's handler all along. */
	struct sigaction k;
	sigaction(SIGSEGV, NULL, &k);
	assert_ptr_not_equal(k.sa_sigaction, app_siginfo);
	unsigned char *p = three_pages(PROT_NONE);
	fix_page = p + page;
	seen_sig = 0;
	touch(p + page);
	assert_int_equal(seen_sig, SIGSEGV);
	assert_true(dps_fault_sigaction(SIGSEGV, NULL, &old, &rc));
	assert_ptr_equal(old.sa_handler, SIG_DFL);
	munmap(p, 3 * page);
	/* Signals the library does not keep are not its business; bad pointers are EFAULT. */
	assert_false(dps_fault_sigaction(SIGUSR1, NULL, &old, &rc));
	assert_true(dps_fault_sigaction(SIGBUS, (void *)8, NULL, &rc));
	assert_int_equal(rc, -1);
	assert_int_equal(errno, EFAULT);
}

/* In a child: sig's disposition as given, then fault (or be sent sig); how it ended. */
static int child_status(int sig, void (*disp)(int), bool sent)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct sigaction act;
		memset(&act, 0, sizeof(act));
		act.sa_handler = disp;
		int rc;
		dps_fault_sigaction(sig, &act, NULL, &rc);
		if (sent) {
			kill(getpid(), sig);
		} else {
			unsigned char *p = three_pages(PROT_NONE);
			touch(p + page);
		}
		_exit(7);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void a_foreign_fault_without_a_handler_kills_with_the_same_signal(void **state)
{
	(void)state;
	/* qemu-user 7.2 (tests/arm64.sh sets DPSTACK_TEST_QEMU) aborts on its own assertion
	 * (cpu == current_cpu) when a forked child's fault meets the default action. */
	if (getenv("DPSTACK_TEST_QEMU") != NULL) {
		print_message("qemu-user cannot take a fault to its default action: skipped\n");
		skip();
	}
	int st = child_status(SIGSEGV, SIG_DFL, false);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSEGV);
	st = child_status(SIGSEGV, SIG_IGN, false); /* a fault cannot be ignored */
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGSEGV);
	st = child_status(SIGBUS, SIG_DFL, true);
	assert_true(WIFSIGNALED(st));
	assert_int_equal(WTERMSIG(st), SIGBUS);
	st = child_status(SIGSEGV, SIG_IGN, true); /* a sent one can */
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(good_buffers_are_copied_whole),
		cmocka_unit_test(a_read_only_page_ends_a_copy_out_with_the_bytes_before_it),
		cmocka_unit_test(an_unmapped_page_ends_a_copy_in_with_the_bytes_before_it),
		cmocka_unit_test(null_with_a_length_copies_nothing_and_null_without_is_fine),
		cmocka_unit_test(the_signal_mask_of_before_the_fault_is_back),
		cmocka_unit_test(a_sigbus_page_ends_a_copy_too),
		cmocka_unit_test(threads_recover_each_on_their_own),
		cmocka_unit_test(a_foreign_fault_reaches_the_siginfo_handler_with_its_siginfo),
		cmocka_unit_test(a_plain_handler_is_called_with_the_signal_and_nodefer_is_kept),
		cmocka_unit_test(oldact_reports_the_applications_disposition_and_resethand_resets_it),
		cmocka_unit_test(a_foreign_fault_without_a_handler_kills_with_the_same_signal),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
