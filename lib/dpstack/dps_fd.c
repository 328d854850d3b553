/* The descriptor table: stack files by descriptor number. Each socket holds a placeholder
 * kernel descriptor (/dev/null), so its number is unique in the process and cannot be taken
 * by a file or a kernel socket; epoll files hold their kernel epoll instance. Lookups take a
 * reference under a read lock, so a file closed by one thread while another uses it is
 * freed only when the last user is done. Placeholders are always close-on-exec (see
 * F_SETFD in dps_opt.c). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

static pthread_rwlock_t fd_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct dps_file **fd_table;
static size_t fd_cap;

static int dps_placeholder(void)
{
	static _Atomic int null_fd = -1;
	int n = atomic_load(&null_fd);
	if (n < 0) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		int expected = -1;
		if (!atomic_compare_exchange_strong(&null_fd, &expected, fd))
			close(fd);
		n = atomic_load(&null_fd);
	}
	return fcntl(n, F_DUPFD_CLOEXEC, 0);
}

struct dps_file *dps_file_new(enum dps_kind kind, int kernel_fd)
{
	struct dps_file *f = calloc(1, sizeof(*f));
	if (f == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	f->fd = kernel_fd >= 0 ? kernel_fd : dps_placeholder();
	if (f->fd < 0) {
		free(f);
		return NULL;
	}
	f->kind = kind;
	f->cloexec = true;
	atomic_init(&f->refs, 1);
	atomic_init(&f->nfds, 1);
	pthread_mutex_init(&f->rx_lock, NULL);
	pthread_mutex_init(&f->tx_lock, NULL);
	return f;
}

static int dps_table_grow(size_t need)
{
	if (need < fd_cap)
		return 0;
	size_t cap = fd_cap == 0 ? 1024 : fd_cap;
	while (cap <= need)
		cap *= 2;
	struct dps_file **t = realloc(fd_table, cap * sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	memset(t + fd_cap, 0, (cap - fd_cap) * sizeof(*t));
	fd_table = t;
	fd_cap = cap;
	return 0;
}

int dps_file_install_at(struct dps_file *f, int fd)
{
	pthread_rwlock_wrlock(&fd_lock);
	int rc = dps_table_grow((size_t)fd);
	if (rc == 0) {
		if (fd != f->fd)
			atomic_fetch_add(&f->refs, 1);
		fd_table[fd] = f;
	}
	pthread_rwlock_unlock(&fd_lock);
	return rc;
}

int dps_file_install(struct dps_file *f)
{
	return dps_file_install_at(f, f->fd);
}

struct dps_file *dps_file_get(int fd)
{
	struct dps_file *f = NULL;
	if (fd < 0)
		return NULL;
	pthread_rwlock_rdlock(&fd_lock);
	if ((size_t)fd < fd_cap && (f = fd_table[fd]) != NULL)
		atomic_fetch_add(&f->refs, 1);
	pthread_rwlock_unlock(&fd_lock);
	return f;
}

struct dps_file *dps_file_remove(int fd)
{
	struct dps_file *f = NULL;
	pthread_rwlock_wrlock(&fd_lock);
	if (fd >= 0 && (size_t)fd < fd_cap) {
		f = fd_table[fd];
		fd_table[fd] = NULL;
	}
	pthread_rwlock_unlock(&fd_lock);
	return f;
}

void dps_file_put(struct dps_file *f)
{
	if (f == NULL || atomic_fetch_sub(&f->refs, 1) != 1)
		return;
	if (f->at != NULL) {
		pthread_mutex_lock(&f->at->ev_lock);
		for (unsigned i = 0; i < f->nsocks; i++)
			if (f->at->sock_file[f->socks[i]] == f)
				f->at->sock_file[f->socks[i]] = NULL;
		pthread_mutex_unlock(&f->at->ev_lock);
	}
	dps_epoll_file_free(f);
	if (f->fd >= 0)
		close(f->fd);
	dps_attach_put(f->at);
	free(f);
}

void dps_file_bind_sock(struct dps_file *f, uint32_t sock)
{
	pthread_mutex_lock(&f->at->ev_lock);
	f->at->sock_file[sock] = f;
	pthread_mutex_unlock(&f->at->ev_lock);
}

void dps_files_after_fork(void)
{
	pthread_rwlock_init(&fd_lock, NULL);
	for (size_t i = 0; i < fd_cap; i++)
		if (fd_table[i] != NULL) {
			pthread_mutex_init(&fd_table[i]->rx_lock, NULL);
			pthread_mutex_init(&fd_table[i]->tx_lock, NULL);
		}
	pthread_mutex_init(&dps_ep_lock, NULL);
}

int dps_is_stack_fd(int fd)
{
	struct dps_file *f = dps_file_get(fd);
	dps_file_put(f);
	return f != NULL;
}
