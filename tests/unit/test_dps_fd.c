/* The library's descriptor table (lib/dpstack/dps_fd.c): placeholders, references, dup'ed
 * numbers, the table's bounds and walks, and the reuse of released records. No daemon: the
 * files made here are never attached. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <dpstack/dpstack.h>

#include "../../lib/dpstack/dps_priv.h"

#define FD_LIMIT (1 << 20)      /* the table's size: Linux's default nr_open */

static int refs(const struct dps_file *f)
{
	return atomic_load(&f->refs);
}

/* A socket file published at its placeholder's number, as dps_socket makes one. */
static struct dps_file *installed_socket(void)
{
	struct dps_file *f = dps_file_new(DPS_TCP, -1);
	assert_non_null(f);
	assert_int_equal(dps_file_install(f), 0);
	return f;
}

/* What dps_close does with the last number of a file. */
static void close_number(int fd)
{
	struct dps_file *f = dps_file_remove(fd);
	assert_non_null(f);
	dps_file_put(f);
}

static void test_dps_fd_placeholder_is_a_socket_shut_both_ways(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	struct stat st;
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_true(S_ISSOCK(st.st_mode));
	assert_int_equal(fcntl(f->fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	char c;
	assert_int_equal(read(f->fd, &c, 1), 0); /* a bypassing read sees end of file */
	assert_int_equal(send(f->fd, "x", 1, MSG_NOSIGNAL | MSG_DONTWAIT), -1);
	assert_true(f->cloexec);
	close_number(f->fd);
}

static void test_dps_fd_lookup_finds_only_installed_numbers(void **state)
{
	(void)state;
	struct dps_file *f = dps_file_new(DPS_UDP, -1);
	assert_non_null(f);
	assert_false(dps_is_stack_fd(f->fd));
	assert_null(dps_file_get(f->fd));
	assert_int_equal(dps_file_install(f), 0);
	assert_true(dps_is_stack_fd(f->fd));
	assert_ptr_equal(dps_file_get(f->fd), f);
	dps_file_put(f);
	close_number(f->fd);
}

static void test_dps_fd_get_and_put_count_references(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	assert_int_equal(refs(f), 1); /* the table's, which creation made */
	struct dps_file *a = dps_file_get(f->fd), *b = dps_file_get(f->fd);
	assert_ptr_equal(a, f);
	assert_ptr_equal(b, f);
	assert_int_equal(refs(f), 3);
	dps_file_put(a);
	dps_file_put(b);
	assert_int_equal(refs(f), 1);
	close_number(f->fd);
}

static void test_dps_fd_last_put_closes_the_placeholder(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	int fd = f->fd;
	struct dps_file *user = dps_file_get(fd);
	assert_ptr_equal(dps_file_remove(fd), f); /* closed by one thread ... */
	assert_false(dps_is_stack_fd(fd));
	dps_file_put(f);
	assert_int_not_equal(fcntl(fd, F_GETFD), -1); /* ... still used by another */
	dps_file_put(user);
	assert_int_equal(fcntl(fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
}

static void test_dps_fd_dup_number_shares_the_file_and_holds_a_reference(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	int dup_fd = f->fd + 3000;
	assert_int_equal(dps_file_install_at(f, dup_fd), 0);
	assert_int_equal(refs(f), 2);
	assert_ptr_equal(dps_file_get(dup_fd), f);
	dps_file_put(f);
	close_number(f->fd);
	/* The dup keeps the file (and its placeholder) alive. */
	assert_int_equal(refs(f), 1);
	assert_int_not_equal(fcntl(f->fd, F_GETFD), -1);
	close_number(dup_fd);
}

static void test_dps_fd_numbers_outside_the_table_are_refused(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	assert_int_equal(dps_file_install_at(f, -1), -EMFILE);
	assert_int_equal(dps_file_install_at(f, FD_LIMIT), -EMFILE);
	assert_int_equal(refs(f), 1); /* a refusal takes no reference */
	assert_null(dps_file_get(-1));
	assert_null(dps_file_get(FD_LIMIT));
	assert_null(dps_file_remove(FD_LIMIT));
	assert_false(dps_is_stack_fd(-5));
	assert_false(dps_is_stack_fd(INT32_MAX));
	assert_int_equal(dps_file_install_at(f, FD_LIMIT - 1), 0); /* the last number is in */
	assert_true(dps_is_stack_fd(FD_LIMIT - 1));
	close_number(FD_LIMIT - 1);
	close_number(f->fd);
}

static void test_dps_fd_next_walks_numbers_in_order_across_chunks(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	const int far = 700000, farther = 900000; /* chunks nobody made before */
	assert_int_equal(dps_file_install_at(f, farther), 0);
	assert_int_equal(dps_file_install_at(f, far), 0);
	assert_int_equal(dps_fd_next(f->fd + 1, FD_LIMIT), far);
	assert_int_equal(dps_fd_next(far, FD_LIMIT), far);
	assert_int_equal(dps_fd_next(far + 1, FD_LIMIT), farther);
	assert_int_equal(dps_fd_next(far + 1, farther - 1), -1);
	assert_int_equal(dps_fd_next(farther + 1, INT32_MAX), -1); /* the bound is clamped */
	assert_int_equal(dps_fd_next(-7, f->fd), f->fd);
	close_number(far);
	close_number(farther);
	close_number(f->fd);
}

struct seen {
	int fds[4];
	unsigned n;
};

static void note(int fd, struct dps_file *f, void *ctx)
{
	(void)f;
	struct seen *s = ctx;
	if (s->n < 4)
		s->fds[s->n] = fd;
	s->n++;
}

static void test_dps_fd_each_visits_every_number_once(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	assert_int_equal(dps_file_install_at(f, 500000), 0);
	struct seen s = {0};
	dps_files_each(note, &s);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.fds[0], f->fd);
	assert_int_equal(s.fds[1], 500000);
	close_number(500000);
	close_number(f->fd);
}

static void test_dps_fd_released_record_is_reused_cleared(void **state)
{
	(void)state;
	struct dps_file *f = installed_socket();
	f->nsocks = 3;
	f->reuseaddr = true;
	atomic_store(&f->flags, O_NONBLOCK);
	close_number(f->fd);
	assert_int_equal(refs(f), 0); /* what a racing lookup reads: refused */
	struct dps_file *g = dps_file_new(DPS_LISTEN, -1);
	assert_ptr_equal(g, f);
	assert_int_equal(g->kind, DPS_LISTEN);
	assert_int_equal(g->nsocks, 0);
	assert_false(g->reuseaddr);
	assert_int_equal(atomic_load(&g->flags), 0);
	assert_int_equal(refs(g), 1);
	assert_int_equal(atomic_load(&g->nfds), 1);
	assert_int_equal(dps_file_install(g), 0);
	close_number(g->fd);
}

static void test_dps_fd_kernel_descriptor_is_kept_as_given(void **state)
{
	(void)state;
	int kfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(kfd >= 0);
	struct dps_file *f = dps_file_new(DPS_EPOLL, kfd);
	assert_non_null(f);
	assert_int_equal(f->fd, kfd);
	assert_int_equal(dps_file_install(f), 0);
	close_number(kfd);
	assert_int_equal(fcntl(kfd, F_GETFD), -1); /* the file's last put closed it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dps_fd_placeholder_is_a_socket_shut_both_ways),
		cmocka_unit_test(test_dps_fd_lookup_finds_only_installed_numbers),
		cmocka_unit_test(test_dps_fd_get_and_put_count_references),
		cmocka_unit_test(test_dps_fd_last_put_closes_the_placeholder),
		cmocka_unit_test(test_dps_fd_dup_number_shares_the_file_and_holds_a_reference),
		cmocka_unit_test(test_dps_fd_numbers_outside_the_table_are_refused),
		cmocka_unit_test(test_dps_fd_next_walks_numbers_in_order_across_chunks),
		cmocka_unit_test(test_dps_fd_each_visits_every_number_once),
		cmocka_unit_test(test_dps_fd_released_record_is_reused_cleared),
		cmocka_unit_test(test_dps_fd_kernel_descriptor_is_kept_as_given),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
