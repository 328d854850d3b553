/* The descriptor table: stack files by descriptor number. Each socket holds a placeholder
 * kernel descriptor, so its number is unique in the process and cannot be taken by a file or
 * a kernel socket; epoll files hold their kernel epoll instance. The placeholder is a kernel
 * socket, so that what the shim does not stand in front of sees a socket as on Linux
 * (fstat's S_IFSOCK, which libuv, systemd's sd_is_socket and inetd-style servers test), yet
 * one shut both ways: a system call that bypasses libc reads end of file and cannot write.
 * All placeholders are duplicates of one (one inode). They are always close-on-exec: a socket
 * that is not (F_SETFD in dps_opt.c) is carried across exec by the hand-over of dps_exec.c.
 *
 * Lookups take no lock, so that the shim's question "is this descriptor the stack's?", asked
 * on every call a program makes on any descriptor, costs two loads. The table is chunks of
 * atomic pointers that are never moved or freed. A lookup takes a reference on the file it
 * found, then checks that the file is still the one at that number; file records are never
 * given back to malloc but kept for reuse, so the reference count of a record that was closed
 * meanwhile can be read and refused safely (as SLAB_TYPESAFE_BY_RCU objects are in Linux).
 * A file closed by one thread while another uses it is released when the last user is done. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_fdmap.h"
#include "dps_priv.h"

static struct dps_fdmap fd_map;

/* Released records waiting for reuse, linked through next_free. */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dps_file *free_files;

static int dps_placeholder(void)
{
	static _Atomic int dead_fd = -1;
	int n = atomic_load(&dead_fd);
	if (n < 0) {
		int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -1;
		shutdown(fd, SHUT_RDWR);
		int expected = -1;
		if (!atomic_compare_exchange_strong(&dead_fd, &expected, fd))
			close(fd);
		n = atomic_load(&dead_fd);
	}
	return fcntl(n, F_DUPFD_CLOEXEC, 0);
}

/* A record with every field cleared but the reference count, which a racing lookup may be
 * reading (it is 0 here, and lookups refuse 0). */
static struct dps_file *dps_file_record(void)
{
	pthread_mutex_lock(&free_lock);
	struct dps_file *f = free_files;
	if (f != NULL)
		free_files = f->next_free;
	pthread_mutex_unlock(&free_lock);
	if (f == NULL)
		return calloc(1, sizeof(*f));
	const size_t r = offsetof(struct dps_file, refs), after = r + sizeof(f->refs);
	memset(f, 0, r);
	memset((char *)f + after, 0, sizeof(*f) - after);
	return f;
}

struct dps_file *dps_file_new(enum dps_kind kind, int kernel_fd)
{
	struct dps_file *f = dps_file_record();
	if (f == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	f->fd = kernel_fd >= 0 ? kernel_fd : dps_placeholder();
	if (f->fd < 0) {
		int e = errno;
		pthread_mutex_lock(&free_lock);
		f->next_free = free_files;
		free_files = f;
		pthread_mutex_unlock(&free_lock);
		errno = e;
		return NULL;
	}
	f->kind = kind;
	f->cloexec = true;
	f->family = AF_INET; /* dps_socket and accept set the socket's own */
	f->local = dps_ep_any(AF_INET);
	atomic_init(&f->nfds, 1);
	pthread_mutex_init(&f->rx_lock, NULL);
	pthread_mutex_init(&f->tx_lock, NULL);
	atomic_store_explicit(&f->refs, 1, memory_order_release);
	return f;
}

int dps_file_install_at(struct dps_file *f, int fd)
{
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&fd_map, fd, true);
	if (slot == NULL)
		return fd < 0 || fd >= DPS_FDMAP_MAX ? -EMFILE : -ENOMEM;
	if (fd != f->fd)
		atomic_fetch_add(&f->refs, 1);
	atomic_store_explicit(slot, f, memory_order_release);
	return 0;
}

int dps_file_install(struct dps_file *f)
{
	return dps_file_install_at(f, f->fd);
}

struct dps_file *dps_file_get(int fd)
{
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&fd_map, fd, false);
	if (slot == NULL)
		return NULL;
	for (;;) {
		struct dps_file *f = atomic_load_explicit(slot, memory_order_acquire);
		if (f == NULL)
			return NULL;
		int r = atomic_load_explicit(&f->refs, memory_order_relaxed);
		bool got = false;
		while (r > 0 && !(got = atomic_compare_exchange_weak_explicit(
					  &f->refs, &r, r + 1, memory_order_acquire,
					  memory_order_relaxed)))
			;
		if (got) {
			if (atomic_load_explicit(slot, memory_order_acquire) == f)
				return f;
			dps_file_put(f); /* closed and reused meanwhile: look again */
		}
	}
}

struct dps_file *dps_file_remove(int fd)
{
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&fd_map, fd, false);
	return slot != NULL ? atomic_exchange_explicit(slot, NULL, memory_order_acq_rel) : NULL;
}

void dps_file_put(struct dps_file *f)
{
	if (f == NULL || atomic_fetch_sub_explicit(&f->refs, 1, memory_order_acq_rel) != 1)
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
	pthread_mutex_destroy(&f->rx_lock);
	pthread_mutex_destroy(&f->tx_lock);
	pthread_mutex_lock(&free_lock);
	f->next_free = free_files;
	free_files = f;
	pthread_mutex_unlock(&free_lock);
}

void dps_file_bind_sock(struct dps_file *f, uint32_t sock)
{
	pthread_mutex_lock(&f->at->ev_lock);
	f->at->sock_file[sock] = f;
	pthread_mutex_unlock(&f->at->ev_lock);
}

void dps_files_each(void (*fn)(int fd, struct dps_file *f, void *ctx), void *ctx)
{
	for (unsigned c = 0; c < DPS_FDMAP_CHUNKS; c++) {
		dps_fdmap_slot *chunk = dps_fdmap_chunk(&fd_map, c);
		for (unsigned i = 0; chunk != NULL && i < DPS_FDMAP_CHUNK; i++) {
			struct dps_file *f = atomic_load(&chunk[i]);
			if (f != NULL)
				fn((int)(c * DPS_FDMAP_CHUNK + i), f, ctx);
		}
	}
}

static void dps_file_locks_reset(int fd, struct dps_file *f, void *ctx)
{
	(void)fd;
	(void)ctx;
	pthread_mutex_init(&f->rx_lock, NULL);
	pthread_mutex_init(&f->tx_lock, NULL);
	f->accepting = 0; /* the other threads and their accepts did not come along */
}

void dps_files_after_fork(void)
{
	/* Only the forking thread exists now: locks others held are reset, not waited for. */
	pthread_mutex_init(&free_lock, NULL);
	dps_files_each(dps_file_locks_reset, NULL);
	pthread_mutex_init(&dps_ep_lock, NULL);
}

int dps_fd_next(int from, int last)
{
	if (from < 0)
		from = 0;
	if (last >= DPS_FDMAP_MAX)
		last = DPS_FDMAP_MAX - 1;
	for (int fd = from; fd <= last;) {
		dps_fdmap_slot *chunk = dps_fdmap_chunk(&fd_map, (unsigned)fd / DPS_FDMAP_CHUNK);
		if (chunk == NULL) {
			fd = (fd / DPS_FDMAP_CHUNK + 1) * DPS_FDMAP_CHUNK; /* none in this chunk */
			continue;
		}
		if (atomic_load_explicit(&chunk[fd % DPS_FDMAP_CHUNK], memory_order_acquire) != NULL)
			return fd;
		fd++;
	}
	return -1;
}

int dps_is_stack_fd(int fd)
{
	dps_fdmap_slot *slot = dps_fdmap_slot_of(&fd_map, fd, false);
	return slot != NULL && atomic_load_explicit(slot, memory_order_acquire) != NULL;
}
