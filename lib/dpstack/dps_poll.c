/* poll and select over stack and kernel descriptors: stack readiness is computed from the
 * shared segment, kernel readiness asked of the kernel, and the sleep waits on both (the
 * kernel descriptors plus this thread's wait set). poll(2) bits equal epoll's on Linux. */
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
static int dps_poll_masked(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask)
{
	if (n > 0 && fds == NULL)
		return DPS_FAIL(EFAULT);
	struct dps_file **files = calloc(n + 1, sizeof(*files));
	struct pollfd *kfds = calloc(n + 1, sizeof(*kfds));
	nfds_t *kidx = calloc(n + 1, sizeof(*kidx));
	if (files == NULL || kfds == NULL || kidx == NULL) {
		free(files);
		free(kfds);
		free(kidx);
		return DPS_FAIL(ENOMEM);
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
	const int64_t deadline = timeout_ms > 0 ? dps_now_ms() + timeout_ms : -1;
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
		int left = -1;
		if (deadline >= 0) {
			int64_t now = dps_now_ms();
			if (now >= deadline)
				break;
			left = (int)(deadline - now);
		}
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
	free(files);
	free(kfds);
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

static int dps_select_masked(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, int timeout_ms,
			     const sigset_t *mask)
{
	if (nfds < 0 || nfds > FD_SETSIZE)
		return DPS_FAIL(EINVAL);
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

int dps_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *timeout)
{
	int timeout_ms = -1;
	if (timeout != NULL) {
		if (timeout->tv_sec < 0 || timeout->tv_usec < 0)
			return DPS_FAIL(EINVAL);
		timeout_ms = (int)(timeout->tv_sec * 1000 + (timeout->tv_usec + 999) / 1000);
	}
	return dps_select_masked(nfds, rd, wr, ex, timeout_ms, NULL);
}

int dps_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *timeout,
		const sigset_t *mask)
{
	int ms = dps_timespec_ms(timeout);
	return ms < -1 ? DPS_FAIL(-ms) : dps_select_masked(nfds, rd, wr, ex, ms, mask);
}
