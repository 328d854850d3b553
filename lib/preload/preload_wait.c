/* Readiness: poll, select and epoll over any mix of stack sockets and kernel descriptors.
 * Without a stack socket among them the kernel answers alone; with one, libdpstack does
 * (it sleeps in the kernel on the kernel descriptors and its own eventfd together, so
 * nothing spins). An epoll instance becomes libdpstack's the first time a stack socket is
 * added to it (dps_epoll_adopt): until then it is the kernel's, untouched. */
#include <errno.h>
#include <stdlib.h>

#include <dpstack/dpstack.h>

#include "../dpstack/dps_priv.h"
#include "../dpstack/dps_ucopy.h"
#include "preload.h"

/* Any stack socket among fds. The array is the application's: it is read through the
 * fault-safe copies, a piece at a time, and one that cannot be read goes to libc, where the
 * kernel says EFAULT. */
static bool pl_any_stack(const struct pollfd *fds, nfds_t n)
{
	struct pollfd piece[64];
	for (nfds_t i = 0; i < n; i += 64) {
		nfds_t k = n - i < 64 ? n - i : 64;
		if (dps_get_user(piece, fds + i, k * sizeof(*fds)) < 0)
			return false;
		for (nfds_t j = 0; j < k; j++)
			if (pl_is_stack(piece[j].fd))
				return true;
	}
	return false;
}

int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	pl_init();
	if (pl_off || !pl_any_stack(fds, n))
		return pl_libc.poll(fds, n, timeout);
	return dps_poll(fds, n, timeout);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	pl_init();
	if (pl_off || n > fdslen / sizeof(*fds) || !pl_any_stack(fds, n))
		return pl_libc.poll_chk(fds, n, timeout, fdslen);
	return dps_poll(fds, n, timeout);
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	pl_init();
	if (pl_off || !pl_any_stack(fds, n))
		return pl_libc.ppoll(fds, n, ts, mask);
	return dps_ppoll(fds, n, ts, mask);
}

/* Which descriptors of word w (of unsigned longs) any of the sets names; false when a set
 * cannot be read (libc's select then says EFAULT). */
static bool pl_sets_word(fd_set *const sets[3], size_t w, unsigned long *bits)
{
	*bits = 0;
	for (int i = 0; i < 3; i++) {
		unsigned long v;
		if (sets[i] == NULL)
			continue;
		if (dps_get_user(&v, (unsigned long *)sets[i] + w, sizeof(v)) < 0)
			return false;
		*bits |= v;
	}
	return true;
}

/* Any stack socket in the sets, scanning as far as nfds as the kernel does. */
static bool pl_sets_have_stack(int nfds, fd_set *rd, fd_set *wr, fd_set *ex)
{
	fd_set *const sets[3] = {rd, wr, ex};
	const int per = 8 * sizeof(unsigned long);
	unsigned long bits = 0;
	for (int fd = 0; fd < nfds; fd++) {
		if (fd % per == 0 && !pl_sets_word(sets, (size_t)(fd / per), &bits))
			return false;
		if ((bits & (1ul << (fd % per))) && pl_is_stack(fd))
			return true;
	}
	return false;
}

/* Above FD_SETSIZE an fd_set is not what select(2) documents; with stack sockets in such
 * sets the call fails with EINVAL rather than reading or writing past the sets. */
static bool pl_select_too_wide(int nfds)
{
	if (nfds <= FD_SETSIZE)
		return false;
	PL_LOG("select with nfds %d > FD_SETSIZE and stack sockets: EINVAL", nfds);
	errno = EINVAL;
	return true;
}

int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	pl_init();
	if (pl_off || nfds <= 0 || !pl_sets_have_stack(nfds, rd, wr, ex))
		return pl_libc.select(nfds, rd, wr, ex, tv);
	return pl_select_too_wide(nfds) ? -1 : dps_select(nfds, rd, wr, ex, tv);
}

int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,
	    const sigset_t *mask)
{
	pl_init();
	if (pl_off || nfds <= 0 || !pl_sets_have_stack(nfds, rd, wr, ex))
		return pl_libc.pselect(nfds, rd, wr, ex, ts, mask);
	return pl_select_too_wide(nfds) ? -1 : dps_pselect(nfds, rd, wr, ex, ts, mask);
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	pl_init();
	if (pl_off)
		return pl_libc.epoll_ctl(epfd, op, fd, ev);
	bool ours = pl_is_stack(epfd);
	if (!ours && pl_is_stack(fd)) {
		if (dps_epoll_adopt(epfd, fd) != 0)
			return -1;
		ours = true;
		PL_LOG("epoll %d now watches stack sockets", epfd);
	}
	return ours ? dps_epoll_ctl(epfd, op, fd, ev) : pl_libc.epoll_ctl(epfd, op, fd, ev);
}

int epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	pl_init();
	return pl_is_stack(epfd) ? dps_epoll_wait(epfd, evs, max, timeout)
				 : pl_libc.epoll_wait(epfd, evs, max, timeout);
}

int epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout, const sigset_t *mask)
{
	pl_init();
	if (!pl_is_stack(epfd))
		return pl_libc.epoll_pwait(epfd, evs, max, timeout, mask);
	return dps_epoll_pwait(epfd, evs, max, timeout, mask);
}

int epoll_pwait2(int epfd, struct epoll_event *evs, int max, const struct timespec *ts,
		 const sigset_t *mask)
{
	pl_init();
	if (!pl_is_stack(epfd))
		return pl_libc.epoll_pwait2(epfd, evs, max, ts, mask);
	return dps_epoll_pwait2(epfd, evs, max, ts, mask);
}
