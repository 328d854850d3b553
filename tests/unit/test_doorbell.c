/* The doorbell (src/base/doorbell.c): no lost wake-up between threads or processes, in both
 * sleeping ways, with and without the spin; timeouts and signals. A lost wake-up shows as a
 * wait that runs into its (generous) timeout, which fails the test instead of hanging it. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/base/doorbell.h"

#define LOST_NS (5ll * 1000000000) /* a wait this long means a lost wake-up */
#define ROUNDS 20000

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void test_doorbell_ring_without_sleepers_moves_sequence_only(void **state)
{
	(void)state;
	struct doorbell d;
	doorbell_init(&d);
	uint32_t s = doorbell_seq(&d);
	doorbell_ring(&d);
	assert_int_equal(doorbell_seq(&d), s + 1);
	assert_int_equal(atomic_load(&d.sleepers), 0);
	/* The sequence moved: a wait for the old one returns at once, even with no spin. */
	assert_int_equal(doorbell_wait(&d, s, 0, LOST_NS), 0);
	assert_false(doorbell_ring_fd(&d, -1));
}

static void test_doorbell_wait_times_out_when_nobody_rings(void **state)
{
	(void)state;
	struct doorbell d;
	doorbell_init(&d);
	int64_t t0 = now_ns();
	assert_int_equal(doorbell_wait(&d, doorbell_seq(&d), 1000, 20 * 1000000), -ETIMEDOUT);
	assert_true(now_ns() - t0 >= 19 * 1000000);
	assert_int_equal(doorbell_wait(&d, doorbell_seq(&d), 1000, 0), -ETIMEDOUT);
	assert_int_equal(atomic_load(&d.sleepers), 0);
}

static void on_alarm(int sig)
{
	(void)sig;
}

static void test_doorbell_wait_reports_a_signal_handler(void **state)
{
	(void)state;
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	struct doorbell d;
	doorbell_init(&d);
	struct itimerval it = {.it_value = {.tv_usec = 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int rc = doorbell_wait(&d, doorbell_seq(&d), 0, LOST_NS);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(rc, -EINTR);
}

/* The untimed futex sleep beside a second word: SA_RESTART resumes it, another handler ends
 * it with EINTR, and a change of the second word (with a wake) ends it. */
static _Atomic uint32_t other_word;

static void *change_other_later(void *arg)
{
	(void)arg;
	usleep(150000);
	atomic_store(&other_word, 1);
	syscall(SYS_futex, (uint32_t *)&other_word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	return NULL;
}

static volatile sig_atomic_t alarms;

static void count_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int wait_also_with_alarm(int sa_flags)
{
	struct sigaction sa = {.sa_handler = count_alarm, .sa_flags = sa_flags}, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	alarms = 0;
	atomic_store(&other_word, 0);
	struct doorbell d;
	doorbell_init(&d);
	sigset_t alrm, mask;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, &mask); /* the alarm is for this thread */
	pthread_t t;
	pthread_create(&t, NULL, change_other_later, NULL);
	pthread_sigmask(SIG_SETMASK, &mask, NULL);
	struct itimerval it = {.it_value = {.tv_usec = 30000}};
	setitimer(ITIMER_REAL, &it, NULL);
	int rc;
	do
		rc = doorbell_wait_also(&d, doorbell_seq(&d), &other_word, 0, 0);
	while (rc == 0 && atomic_load(&other_word) == 0); /* a spurious wake-up */
	pthread_join(t, NULL);
	sigaction(SIGALRM, &old, NULL);
	assert_int_equal(atomic_load(&d.sleepers), 0);
	return rc;
}

/* Kernels before Linux 5.16 have no futex_waitv, nor has qemu-user 7.2 (the arm64 unit
 * tests, tests/arm64.sh): doorbell_wait_also then says -ENOSYS, which its callers handle. */
static void skip_without_futex_waitv(int rc)
{
	if (rc == -ENOSYS) {
		print_message("no futex_waitv here: skipped\n");
		skip();
	}
}

static void test_doorbell_wait_also_resumes_after_sa_restart(void **state)
{
	(void)state;
	int rc = wait_also_with_alarm(SA_RESTART);
	skip_without_futex_waitv(rc);
	assert_int_equal(rc, 0);
	assert_int_equal(alarms, 1);
	assert_int_equal(atomic_load(&other_word), 1);
}

static void test_doorbell_wait_also_ends_with_eintr_without_sa_restart(void **state)
{
	(void)state;
	int rc = wait_also_with_alarm(0);
	skip_without_futex_waitv(rc);
	assert_int_equal(rc, -EINTR);
	assert_int_equal(alarms, 1);
}

/* A bell both kinds sleep on: doorbell_ring_fd wakes the futex sleeper too. */
struct both {
	struct doorbell bell;
	_Atomic int woke;
	_Atomic int rc;                 /* the sleeper's doorbell_wait_also, 1 before it ends */
};

static void *futex_sleeper(void *arg)
{
	struct both *b = arg;
	uint32_t s = doorbell_seq(&b->bell);
	_Atomic uint32_t never = 7;
	int rc = doorbell_wait_also(&b->bell, s, &never, 7, 0);
	if (rc == 0)
		atomic_store(&b->woke, 1);
	atomic_store(&b->rc, rc);
	return NULL;
}

static void test_doorbell_ring_fd_wakes_futex_sleepers_too(void **state)
{
	(void)state;
	static struct both b;
	doorbell_init(&b.bell);
	atomic_store(&b.woke, 0);
	atomic_store(&b.rc, 1);
	pthread_t t;
	pthread_create(&t, NULL, futex_sleeper, &b);
	while (atomic_load(&b.bell.sleepers) == 0 && atomic_load(&b.rc) == 1)
		usleep(1000);
	if (atomic_load(&b.rc) == -ENOSYS) {
		pthread_join(t, NULL);
		skip_without_futex_waitv(-ENOSYS);
	}
	int efd = eventfd(0, EFD_NONBLOCK);
	assert_false(doorbell_ring_fd(&b.bell, efd)); /* no eventfd sleeper: not written */
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&b.woke), 1);
	atomic_fetch_add(&b.bell.fd_sleepers, 1);
	assert_true(doorbell_ring_fd(&b.bell, efd));
	close(efd);
}

/* Two threads pass a token back and forth: each waits for its bell, then rings the other. */
struct pingpong {
	struct doorbell bell[2];
	_Atomic uint32_t turn;          /* whose move: 0 or 1 */
	int64_t spin_ns;
	_Atomic int lost;
};

static void pingpong_play(struct pingpong *pp, unsigned me)
{
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (;;) {
			uint32_t s = doorbell_seq(&pp->bell[me]);
			if (atomic_load(&pp->turn) == me)
				break;
			int rc = doorbell_wait(&pp->bell[me], s, pp->spin_ns, LOST_NS);
			if (rc == -ETIMEDOUT) {
				atomic_store(&pp->lost, 1);
				return;
			}
		}
		atomic_store(&pp->turn, 1 - me);
		doorbell_ring(&pp->bell[1 - me]);
	}
}

static void *pingpong_thread(void *arg)
{
	pingpong_play(arg, 1);
	return NULL;
}

static void pingpong_threads(int64_t spin_ns)
{
	struct pingpong pp = {.spin_ns = spin_ns};
	doorbell_init(&pp.bell[0]);
	doorbell_init(&pp.bell[1]);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, pingpong_thread, &pp), 0);
	pingpong_play(&pp, 0);
	pthread_join(t, NULL);
	assert_int_equal(atomic_load(&pp.lost), 0);
}

static void test_doorbell_pingpong_threads_sleeping_loses_nothing(void **state)
{
	(void)state;
	pingpong_threads(0);
}

static void test_doorbell_pingpong_threads_spinning_loses_nothing(void **state)
{
	(void)state;
	pingpong_threads(DOORBELL_SPIN_NS_DEFAULT);
}

/* The bells in a shared mapping, the players in two processes: the futex is shared. */
static void test_doorbell_pingpong_processes_loses_nothing(void **state)
{
	(void)state;
	struct pingpong *pp = mmap(NULL, sizeof(*pp), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(pp != MAP_FAILED);
	memset(pp, 0, sizeof(*pp));
	doorbell_init(&pp->bell[0]);
	doorbell_init(&pp->bell[1]);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pingpong_play(pp, 1);
		_exit(atomic_load(&pp->lost) ? 1 : 0);
	}
	pingpong_play(pp, 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(atomic_load(&pp->lost), 0);
	munmap(pp, sizeof(*pp));
}

/* Many waiters on one bell, a ringer publishing generations: every waiter sees the last
 * one (a broadcast wake-up is never lost for anyone). */
#define MANY 8
#define GENERATIONS 2000

struct broadcast {
	struct doorbell bell;
	_Atomic uint32_t gen;
	_Atomic uint32_t seen[MANY];
	_Atomic int lost;
};

struct broadcast_arg {
	struct broadcast *b;
	unsigned index;
};

static void *broadcast_waiter(void *arg)
{
	struct broadcast_arg *a = arg;
	struct broadcast *b = a->b;
	uint32_t mine = 0;
	while (mine < GENERATIONS) {
		uint32_t s = doorbell_seq(&b->bell);
		uint32_t g = atomic_load(&b->gen);
		if (g != mine) {
			mine = g;
			atomic_store(&b->seen[a->index], g);
			continue;
		}
		if (doorbell_wait(&b->bell, s, (a->index & 1) ? 2000 : 0, LOST_NS) == -ETIMEDOUT) {
			atomic_store(&b->lost, 1);
			return NULL;
		}
	}
	return NULL;
}

static void test_doorbell_broadcast_reaches_every_waiter(void **state)
{
	(void)state;
	static struct broadcast b;
	memset(&b, 0, sizeof(b));
	doorbell_init(&b.bell);
	pthread_t t[MANY];
	struct broadcast_arg args[MANY];
	for (unsigned i = 0; i < MANY; i++) {
		args[i] = (struct broadcast_arg){.b = &b, .index = i};
		assert_int_equal(pthread_create(&t[i], NULL, broadcast_waiter, &args[i]), 0);
	}
	for (uint32_t g = 1; g <= GENERATIONS; g++) {
		atomic_store(&b.gen, g);
		doorbell_ring(&b.bell);
		if ((g & 63) == 0)
			usleep(100); /* let some of them fall asleep */
	}
	for (unsigned i = 0; i < MANY; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(atomic_load(&b.lost), 0);
	for (unsigned i = 0; i < MANY; i++)
		assert_int_equal(atomic_load(&b.seen[i]), GENERATIONS);
}

/* The eventfd way: each player sleeps in poll(2) on its eventfd, as a thread that also
 * watches other descriptors would. */
struct fdplay {
	struct doorbell bell[2];
	int efd[2];
	_Atomic uint32_t turn;
	int64_t spin_ns;
	unsigned me;
	_Atomic int lost;
};

struct fdctx {
	struct fdplay *fp;
	unsigned me;
};

static bool fd_ready(void *ctx)
{
	struct fdctx *c = ctx;
	return atomic_load(&c->fp->turn) == c->me;
}

static int fd_sleep(void *ctx)
{
	struct fdctx *c = ctx;
	struct pollfd p = {.fd = c->fp->efd[c->me], .events = POLLIN};
	int n = poll(&p, 1, (int)(LOST_NS / 1000000));
	if (n == 0)
		return -ETIMEDOUT;
	uint64_t v;
	if (n > 0 && read(c->fp->efd[c->me], &v, sizeof(v)) < 0) {
		/* spurious: nothing to take */
	}
	return 0;
}

static void fdplay_play(struct fdplay *fp, unsigned me)
{
	struct fdctx c = {.fp = fp, .me = me};
	for (unsigned r = 0; r < ROUNDS; r++) {
		while (!fd_ready(&c))
			if (doorbell_wait_fd(&fp->bell[me], fp->spin_ns, fd_ready, fd_sleep, &c) ==
			    -ETIMEDOUT) {
				atomic_store(&fp->lost, 1);
				return;
			}
		atomic_store(&fp->turn, 1 - me);
		doorbell_ring_fd(&fp->bell[1 - me], fp->efd[1 - me]);
	}
}

static void *fdplay_thread(void *arg)
{
	fdplay_play(arg, 1);
	return NULL;
}

static void fdplay_threads(int64_t spin_ns)
{
	struct fdplay fp = {.spin_ns = spin_ns};
	for (int i = 0; i < 2; i++) {
		doorbell_init(&fp.bell[i]);
		fp.efd[i] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		assert_true(fp.efd[i] >= 0);
	}
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, fdplay_thread, &fp), 0);
	fdplay_play(&fp, 0);
	pthread_join(t, NULL);
	close(fp.efd[0]);
	close(fp.efd[1]);
	assert_int_equal(atomic_load(&fp.lost), 0);
}

static void test_doorbell_eventfd_pingpong_sleeping_loses_nothing(void **state)
{
	(void)state;
	fdplay_threads(0);
}

static void test_doorbell_eventfd_pingpong_spinning_loses_nothing(void **state)
{
	(void)state;
	fdplay_threads(DOORBELL_SPIN_NS_DEFAULT);
}

static void test_doorbell_spin_default_follows_environment(void **state)
{
	(void)state;
	/* Cached at first use: read in a child so the value of this process stays as it is. */
	pid_t pid = fork();
	if (pid == 0) {
		setenv("DPSTACK_SPIN_NS", "1234", 1);
		_exit(doorbell_spin_default() == 1234 ? 0 : 1);
	}
	int st;
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pid = fork();
	if (pid == 0) {
		setenv("DPSTACK_SPIN_NS", "-5", 1); /* refused: the default stays */
		int64_t v = doorbell_spin_default();
		_exit(v == 0 || v == DOORBELL_SPIN_NS_DEFAULT ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doorbell_ring_without_sleepers_moves_sequence_only),
		cmocka_unit_test(test_doorbell_wait_times_out_when_nobody_rings),
		cmocka_unit_test(test_doorbell_wait_reports_a_signal_handler),
		cmocka_unit_test(test_doorbell_wait_also_resumes_after_sa_restart),
		cmocka_unit_test(test_doorbell_wait_also_ends_with_eintr_without_sa_restart),
		cmocka_unit_test(test_doorbell_ring_fd_wakes_futex_sleepers_too),
		cmocka_unit_test(test_doorbell_pingpong_threads_sleeping_loses_nothing),
		cmocka_unit_test(test_doorbell_pingpong_threads_spinning_loses_nothing),
		cmocka_unit_test(test_doorbell_pingpong_processes_loses_nothing),
		cmocka_unit_test(test_doorbell_broadcast_reaches_every_waiter),
		cmocka_unit_test(test_doorbell_eventfd_pingpong_sleeping_loses_nothing),
		cmocka_unit_test(test_doorbell_eventfd_pingpong_spinning_loses_nothing),
		cmocka_unit_test(test_doorbell_spin_default_follows_environment),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
