/* Socket life: creation on the stack, the move to the kernel of sockets the stack does not
 * own (at their first bind, connect or send), and the calls on descriptors as such. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "../dpstack/dps_priv.h"
#include "preload.h"

/* Options are recorded for a socket that may move to the kernel; the value is the
 * application's: one that cannot be read is not kept (setsockopt says EFAULT). */
static void pl_record_opt(int fd, int level, int name, const void *uval, socklen_t len)
{
	unsigned char val[PL_OPT_LEN];
	if (len <= PL_OPT_LEN && pl_pending_has(fd) && dps_get_user(val, uval, len) == 0)
		pl_pending_record_opt(fd, level, name, val, len);
}

/* Remakes the pending stack socket fd as a kernel socket with the same number, flags and
 * options. Returns 0, or -1 with errno (fd then stays a stack socket). */
int pl_move_pending_to_kernel(int fd, const char *why)
{
	struct pl_pending *p = pl_pending_take(fd);
	if (p == NULL)
		return 0;
	int fl = dps_fcntl(fd, F_GETFL, 0);
	int fdfl = dps_fcntl(fd, F_GETFD, 0);
	int type = p->type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fl >= 0 && (fl & O_NONBLOCK))
		type |= SOCK_NONBLOCK;
	int k = pl_libc.socket(p->domain, type, p->protocol);
	if (k < 0) {
		free(p);
		return -1;
	}
	for (unsigned i = 0; i < p->nopts; i++)
		if (pl_libc.setsockopt(k, p->opts[i].level, p->opts[i].name, p->opts[i].val,
				       p->opts[i].len) != 0)
			PL_LOG("fd %d: the kernel refused option %d/%d: %s", fd, p->opts[i].level,
			       p->opts[i].name, strerror(errno));
	free(p);
	int rc = pl_libc.dup3(k, fd, fdfl >= 0 && (fdfl & FD_CLOEXEC) ? O_CLOEXEC : 0);
	int e = errno;
	pl_libc.close(k);
	if (rc < 0)
		return errno = e, -1;
	dps_release_to_kernel(fd);
	PL_LOG("fd %d moves to the kernel: %s", fd, why);
	return 0;
}

int socket(int domain, int type, int protocol)
{
	pl_init();
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (pl_off || (domain != AF_INET && domain != AF_INET6) ||
	    (base != SOCK_STREAM && base != SOCK_DGRAM))
		return pl_libc.socket(domain, type, protocol);
	int fd = dps_socket(domain, type, protocol);
	if (fd < 0) {
		int e = errno;
		/* What the stack does not serve (another protocol): the kernel. */
		if (e == EPROTONOSUPPORT || e == EAFNOSUPPORT)
			return pl_libc.socket(domain, type, protocol);
		static _Atomic bool told;
		if (e != EMFILE && e != ENFILE && e != ENOMEM && !atomic_exchange(&told, true)) {
			const char *path = getenv("DPSTACK_SOCK");
			fprintf(stderr, "dpstack: cannot reach the daemon at %s: %s "
					"(DPSTACK_PRELOAD=kernel runs on the kernel instead)\n",
				path != NULL ? path : "/run/dpstack/app.sock", strerror(e));
		}
		errno = e;
		return -1;
	}
	if (pl_pending_add(fd, domain, type, protocol) != 0) {
		dps_close(fd);
		errno = ENOMEM;
		return -1;
	}
	PL_LOG("socket(%s%s) = %d", base == SOCK_STREAM ? "tcp" : "udp",
	       domain == AF_INET6 ? "6" : "", fd);
	return fd;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.bind(fd, addr, len);
	if (pl_kernel_addr(addr, len)) {
		if (pl_move_pending_to_kernel(fd, "bind to a kernel address") != 0)
			return -1;
		return pl_libc.bind(fd, addr, len);
	}
	int rc = dps_bind(fd, addr, len);
	if (rc != 0 && errno == EADDRNOTAVAIL && pl_pending_has(fd)) {
		if (pl_move_pending_to_kernel(fd, "bind to an address the stack does not have") != 0)
			return -1;
		return pl_libc.bind(fd, addr, len);
	}
	if (rc == 0)
		pl_pending_forget(fd);
	PL_LOG("bind(%d) = %d%s", fd, rc, rc != 0 ? strerror(errno) : "");
	return rc;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.connect(fd, addr, len);
	bool pend = pl_pending_has(fd);
	if (pend && pl_kernel_addr(addr, len)) {
		if (pl_move_pending_to_kernel(fd, "connect to a kernel address") != 0)
			return -1;
		return pl_libc.connect(fd, addr, len);
	}
	int rc = dps_connect(fd, addr, len);
	int e = errno;
	if (rc != 0 && pend && (e == ENETUNREACH || e == EHOSTUNREACH)) {
		if (pl_move_pending_to_kernel(fd, "no route on the stack") != 0)
			return -1;
		return pl_libc.connect(fd, addr, len);
	}
	if (rc == 0 || e == EINPROGRESS)
		pl_pending_forget(fd);
	PL_LOG("connect(%d) = %d %s", fd, rc, rc != 0 ? strerror(e) : "");
	errno = e;
	return rc;
}

int listen(int fd, int backlog)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.listen(fd, backlog);
	pl_pending_forget(fd);
	int rc = dps_listen(fd, backlog);
	PL_LOG("listen(%d, %d) = %d", fd, backlog, rc);
	return rc;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.accept(fd, addr, len);
	return dps_accept(fd, addr, len);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.accept4(fd, addr, len, flags);
	return dps_accept4(fd, addr, len, flags);
}

int close(int fd)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.close(fd);
	pl_pending_forget(fd);
	PL_LOG("close(%d)", fd);
	return dps_close(fd);
}

int shutdown(int fd, int how)
{
	pl_init();
	return pl_is_stack(fd) ? dps_shutdown(fd, how) : pl_libc.shutdown(fd, how);
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	pl_init();
	return pl_is_stack(fd) ? dps_getsockname(fd, addr, len)
			       : pl_libc.getsockname(fd, addr, len);
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	pl_init();
	return pl_is_stack(fd) ? dps_getpeername(fd, addr, len)
			       : pl_libc.getpeername(fd, addr, len);
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	pl_init();
	return pl_is_stack(fd) ? dps_getsockopt(fd, level, name, val, len)
			       : pl_libc.getsockopt(fd, level, name, val, len);
}

/* Options that only tune what the stack does its own way (marking, priorities, timestamps,
 * kernel-only shortcuts): accepted on stack sockets and ignored (getsockopt says
 * ENOPROTOOPT). */
static bool pl_opt_ignorable(int level, int name)
{
	switch (level) {
	case SOL_SOCKET:
		return name == SO_PRIORITY || name == SO_TIMESTAMP || name == SO_TIMESTAMPNS ||
		       name == SO_MARK || name == SO_BUSY_POLL || name == SO_INCOMING_CPU;
	case IPPROTO_TCP:
		return name == TCP_QUICKACK || name == TCP_DEFER_ACCEPT || name == TCP_FASTOPEN ||
		       name == TCP_NOTSENT_LOWAT || name == TCP_WINDOW_CLAMP;
	default:
		return false;
	}
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	pl_init();
	if (!pl_is_stack(fd))
		return pl_libc.setsockopt(fd, level, name, val, len);
	pl_record_opt(fd, level, name, val, len);
	int rc = dps_setsockopt(fd, level, name, val, len);
	if (rc != 0 && errno == ENOPROTOOPT && pl_opt_ignorable(level, name)) {
		PL_LOG("setsockopt(%d, %d, %d): ignored on the stack", fd, level, name);
		return 0;
	}
	return rc;
}

static int pl_fcntl_stack(int fd, int cmd, long arg)
{
	if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)
		return dps_dup(fd, -1, (int)arg);
	return dps_fcntl(fd, cmd, arg);
}

/* fcntl and fcntl64 (what programs built with 64-bit off_t call) differ only in which libc
 * definition takes the descriptors that are not ours. */
static int pl_fcntl(int fd, int cmd, long arg, int (*next)(int, int, ...))
{
	return pl_is_stack(fd) ? pl_fcntl_stack(fd, cmd, arg) : next(fd, cmd, arg);
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	pl_init();
	return pl_fcntl(fd, cmd, arg, pl_libc.fcntl);
}

int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	long arg = va_arg(ap, long);
	va_end(ap);
	pl_init();
	return pl_fcntl(fd, cmd, arg, pl_libc.fcntl64);
}

int ioctl(int fd, unsigned long request, ...)
{
	pl_init();
	va_list ap;
	va_start(ap, request);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return pl_is_stack(fd) ? dps_ioctl(fd, request, arg) : pl_libc.ioctl(fd, request, arg);
}

/* close_range(2) and closefrom(3) over stack files: each is closed on the stack (or marked
 * close-on-exec) before the kernel closes the rest of the range, placeholders included, so no
 * stack socket is left behind a closed number that a new file could take. */
static void pl_close_stack_range(unsigned first, unsigned last, bool cloexec)
{
	int hi = last > INT_MAX ? INT_MAX : (int)last;
	for (int fd = dps_fd_next((int)first, hi); fd >= 0; fd = dps_fd_next(fd + 1, hi)) {
		if (cloexec) {
			dps_fcntl(fd, F_SETFD, FD_CLOEXEC);
			continue;
		}
		pl_pending_forget(fd);
		dps_close(fd);
	}
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	pl_init();
	/* The kernel's checks first: nothing is closed when the call is refused. */
	if (first > last || (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC))) {
		errno = EINVAL;
		return -1;
	}
	if (!pl_off && first <= INT_MAX)
		pl_close_stack_range(first, last, flags & CLOSE_RANGE_CLOEXEC);
	return pl_libc.close_range(first, last, flags);
}

void closefrom(int lowfd)
{
	pl_init();
	if (!pl_off)
		pl_close_stack_range(lowfd < 0 ? 0 : (unsigned)lowfd, UINT_MAX, false);
	pl_libc.closefrom(lowfd);
}

/* A second number for a stack socket names the same socket (libdpstack's dps_dup); putting
 * a kernel descriptor over a stack socket closes that number of the socket first, as the
 * kernel would. */
static int pl_dup_onto(int oldfd, int newfd, int flags, bool is_dup2)
{
	if (!is_dup2 && (oldfd == newfd || (flags & ~O_CLOEXEC))) {
		errno = EINVAL;
		return -1;
	}
	if (pl_is_stack(oldfd))
		return dps_dup(oldfd, newfd, 0);
	if (oldfd != newfd && pl_is_stack(newfd)) {
		pl_pending_forget(newfd);
		dps_release_fd(newfd);
	}
	return is_dup2 ? pl_libc.dup2(oldfd, newfd) : pl_libc.dup3(oldfd, newfd, flags);
}

int dup(int fd)
{
	pl_init();
	return pl_is_stack(fd) ? dps_dup(fd, -1, 0) : pl_libc.dup(fd);
}

int dup2(int oldfd, int newfd)
{
	pl_init();
	return pl_dup_onto(oldfd, newfd, 0, true);
}

int dup3(int oldfd, int newfd, int flags)
{
	pl_init();
	return pl_dup_onto(oldfd, newfd, flags, false);
}

/* A vfork child shares the parent's memory: a close or connect there would change the
 * parent's sockets. A real fork keeps them apart (the library joins for the child). */
pid_t vfork(void)
{
	pl_init();
	return pl_libc.fork();
}
