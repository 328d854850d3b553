/* poll and select over stack and kernel descriptors: stack readiness is computed from the
 * shared segment, kernel readiness asked of the kernel, and the sleep waits on both (the
 * kernel descriptors plus this thread's wait set). poll(2) bits equal epoll's on Linux.
 * The application's array and sets are copied in first and the answers out last, as the
 * kernel does (do_sys_poll, core_sys_select): a bad one is EFAULT, an array that cannot be
 * written only after the wait. */
#include <stdlib.h>
#include <string.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

/* Stack descriptors' revents; kernel ones are copied to kfds (index map in kidx). Returns
 * the number of stack descriptors ready. */
static int dps_poll_stack(struct pollfd *fds, nfds_t n, struct dps_file **files)
{
	int ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		if (files[i] == NULL)
			continue;
		fds[i].revents = (short)(dps_file_ready(files[i]) &
					 ((unsigned)fds[i].events | POLLERR | POLLHUP));
		if (fds[i].revents != 0)
			ready++;
	}
	return ready;
}

/* poll with ppoll's mask (NULL: none), in place only while the thread sleeps. */
static int dps_poll_masked(struct pollfd *ufds, nfds_t n, int timeout_ms,
			   const sigset_t *mask)
{
	struct dps_file **files = calloc(n + 1, sizeof(*files));
	struct pollfd *kfds = calloc(n + 1, sizeof(*kfds));
	struct pollfd *fds = calloc(n + 1, sizeof(*fds));
	nfds_t *kidx = calloc(n + 1, sizeof(*kidx));
	int err = files == NULL || kfds == NULL || fds == NULL || kidx == NULL ? ENOMEM
		  : dps_get_user(fds, ufds, n * sizeof(*fds)) < 0 ? EFAULT : 0;
	if (err != 0) {
		free(files);
		free(kfds);
		free(fds);
		free(kidx);
		return DPS_FAIL(err);
	}
	struct dps_attach *at = NULL;
	unsigned nk = 0;
	for (nfds_t i = 0; i < n; i++) {
		fds[i].revents = 0;
		files[i] = fds[i].fd >= 0 ? dps_file_get(fds[i].fd) : NULL;
		if (files[i] != NULL && files[i]->kind == DPS_EPOLL) {
			/* An epoll instance is a kernel descriptor the kernel can poll. */
			dps_file_put(files[i]);
			files[i] = NULL;
		}
		if (files[i] != NULL) {
			at = files[i]->at;
		} else if (fds[i].fd >= 0) {
			kfds[nk] = fds[i];
			kidx[nk++] = i;
		}
	}
	const int64_t deadline = dps_deadline_ms(timeout_ms);
	int ready, rc = 0;
	for (;;) {
		if (at != NULL)
			dps_events_drain(at);
		ready = dps_poll_stack(fds, n, files);
		int k = nk > 0 ? poll(kfds, nk, 0) : 0;
		if (k < 0) {
			rc = -errno;
			break;
		}
		if (ready + k > 0 || timeout_ms == 0)
			break;
		int left = dps_ms_left(deadline);
		if (left == 0)
			break;
		if (at == NULL) {
			struct timespec ts = {.tv_sec = left / 1000, .tv_nsec = left % 1000 * 1000000};
			k = ppoll(kfds, nk, left < 0 ? NULL : &ts, mask);
			if (k < 0)
				rc = -errno;
			break;
		}
		_Atomic uint32_t *waiters = &dps_bell(at)->fd_sleepers;
		atomic_fetch_add(waiters, 1);
		atomic_thread_fence(memory_order_seq_cst);
		ready = dps_poll_stack(fds, n, files);
		k = ready == 0 ? dps_sleep_poll(at, kfds, nk, left, mask) : 0;
		atomic_fetch_sub(waiters, 1);
		if (k < 0) {
			rc = k;
			break;
		}
	}
	for (unsigned j = 0; j < nk; j++) {
		fds[kidx[j]].revents = kfds[j].revents;
		if (kfds[j].revents != 0)
			ready++;
	}
	for (nfds_t i = 0; i < n; i++)
		dps_file_put(files[i]);
	for (nfds_t i = 0; i < n && rc == 0; i++)
		if (dps_put_user(&ufds[i].revents, &fds[i].revents, sizeof(fds[i].revents)) < 0)
			rc = -EFAULT;
	free(files);
	free(kfds);
	free(fds);
	free(kidx);
	return rc < 0 ? DPS_FAIL(-rc) : ready;
}

int dps_poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	return dps_poll_masked(fds, n, timeout_ms, NULL);
}

int dps_ppoll(struct pollfd *fds, nfds_t n, const struct timespec *timeout, const sigset_t *mask)
{
	int ms = dps_timespec_ms(timeout);
	return ms < -1 ? DPS_FAIL(-ms) : dps_poll_masked(fds, n, ms, mask);
}

/* select on the library's copies of the sets. */
static int dps_select_sets(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int timeout_ms,
			   const sigset_t *mask)
{
	struct pollfd *p = calloc((size_t)nfds + 1, sizeof(*p));
	if (p == NULL)
		return DPS_FAIL(ENOMEM);
	nfds_t n = 0;
	for (int fd = 0; fd < nfds; fd++) {
		short ev = 0;
		if (rd != NULL && FD_ISSET(fd, rd))
			ev |= POLLIN;
		if (wr != NULL && FD_ISSET(fd, wr))
			ev |= POLLOUT;
		if (ex != NULL && FD_ISSET(fd, ex))
			ev |= POLLPRI;
		if (ev != 0)
			p[n++] = (struct pollfd){.fd = fd, .events = ev};
	}
	int rc = dps_poll_masked(p, n, timeout_ms, mask);
	if (rc < 0) {
		free(p);
		return -1;
	}
	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL) {
			free(p);
			return DPS_FAIL(EBADF);
		}
	int count = 0;
	if (rd != NULL)
		FD_ZERO(rd);
	if (wr != NULL)
		FD_ZERO(wr);
	if (ex != NULL)
		FD_ZERO(ex);
	for (nfds_t i = 0; i < n; i++) {
		short r = p[i].revents;
		/* select reports errors and hang-ups as readable (and writable), as Linux. */
		if (rd != NULL && (p[i].events & POLLIN) && (r & (POLLIN | POLLERR | POLLHUP))) {
			FD_SET(p[i].fd, rd);
			count++;
		}
		if (wr != NULL && (p[i].events & POLLOUT) && (r & (POLLOUT | POLLERR))) {
			FD_SET(p[i].fd, wr);
			count++;
		}
		if (ex != NULL && (p[i].events & POLLPRI) && (r & POLLPRI)) {
			FD_SET(p[i].fd, ex);
			count++;
		}
	}
	free(p);
	return count;
}

/* The sets in and out: the bytes that nfds covers, in whole longs (get_fd_set). */
static int dps_select_masked(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int timeout_ms,
			     const sigset_t *mask)
{
	if (nfds < 0 || nfds > FD_SETSIZE)
		return DPS_FAIL(EINVAL);
	const size_t word = sizeof(unsigned long);
	const size_t bytes = ((size_t)nfds + 8 * word - 1) / (8 * word) * word;
	fd_set *const u[3] = {rd, wr, ex};
	fd_set k[3];
	for (int i = 0; i < 3; i++) {
		FD_ZERO(&k[i]);
		if (u[i] != NULL && dps_get_user(&k[i], u[i], bytes) < 0)
			return DPS_FAIL(EFAULT);
	}
	int rc = dps_select_sets(nfds, rd != NULL ? &k[0] : NULL, wr != NULL ? &k[1] : NULL,
				 ex != NULL ? &k[2] : NULL, timeout_ms, mask);
	for (int i = 0; i < 3 && rc >= 0; i++)
		if (u[i] != NULL && dps_put_user(u[i], &k[i], bytes) < 0)
			return DPS_FAIL(EFAULT);
	return rc;
}

int dps_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *timeout)
{
	int timeout_ms = -1;
	struct timeval tv;
	if (timeout != NULL) {
		if (dps_get_user(&tv, timeout, sizeof(tv)) < 0)
			return DPS_FAIL(EFAULT);
		if (tv.tv_sec < 0 || tv.tv_usec < 0)
			return DPS_FAIL(EINVAL);
		timeout_ms = (int)(tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000);
	}
	return dps_select_masked(nfds, rd, wr, ex, timeout_ms, NULL);
}

int dps_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *timeout,
		const sigset_t *mask)
{
	int ms = dps_timespec_ms(timeout);
	return ms < -1 ? DPS_FAIL(-ms) : dps_select_masked(nfds, rd, wr, ex, ms, mask);
}
