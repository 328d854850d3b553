/* sendmmsg and recvmmsg: the library's sendmsg/recvmsg in a loop, with Linux's answers
 * (net/socket.c __sys_sendmmsg, do_recvmmsg): vlen capped at UIO_MAXIOV; the count done when
 * at least one message went, else the error; a stream whose message was sent in part ends
 * the batch; MSG_WAITFORONE turns MSG_DONTWAIT on after the first datagram; the timeout is
 * looked at only after each datagram (a blocking first one may wait longer, as on Linux) and
 * what is left of it is written back. An error after some datagrams is left for the next
 * call, as Linux leaves it in sk_err. The vector is the application's: each header is copied
 * in by sendmsg/recvmsg, each msg_len written out through the fault-safe copies (one that
 * cannot be written ends the batch, the message not counted), and the timeout read first
 * and written back once at the end, as the kernel does. */
#include <stdbool.h>
#include <sys/socket.h>
#include <time.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

#define DPS_UIO_MAXIOV 1024     /* UIO_MAXIOV */

/* The outcome n of message *done (its count, or -1 with errno): written into its entry and
 * counted, true; or false with *err, the batch ends (an entry that cannot be written ends
 * it too, its message not counted). */
static bool dps_mmsg_count(struct mmsghdr *vec, unsigned *done, ssize_t n, int *err)
{
	if (n < 0) {
		*err = errno;
		return false;
	}
	unsigned len = (unsigned)n;
	if (dps_put_user(&vec[*done].msg_len, &len, sizeof(len)) < 0) {
		*err = EFAULT;
		return false;
	}
	(*done)++;
	return true;
}

/* The batch's answer: the count done, or the error when nothing was. */
static int dps_mmsg_result(unsigned done, int err)
{
	return done == 0 && err != 0 ? DPS_FAIL(err) : (int)done;
}

int dps_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	if (vlen > DPS_UIO_MAXIOV)
		vlen = DPS_UIO_MAXIOV;
	unsigned done = 0;
	int err = 0;
	while (done < vlen) {
		size_t want;
		ssize_t n = dps_msg_send(fd, &vec[done].msg_hdr, flags, &want);
		if (!dps_mmsg_count(vec, &done, n, &err) || (size_t)n < want)
			break; /* failed, or a stream took part of it */
	}
	return dps_mmsg_result(done, err);
}

static int64_t dps_ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

int dps_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
		 struct timespec *timeout)
{
	struct timespec now, left_ts;
	int64_t end_ns = 0;
	if (timeout != NULL) {
		if (dps_get_user(&left_ts, timeout, sizeof(left_ts)) < 0)
			return DPS_FAIL(EFAULT);
		if (left_ts.tv_sec < 0 || left_ts.tv_nsec < 0 || left_ts.tv_nsec >= 1000000000)
			return DPS_FAIL(EINVAL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		end_ns = dps_ts_ns(&now) + dps_ts_ns(&left_ts);
	}
	if (vlen > DPS_UIO_MAXIOV)
		vlen = DPS_UIO_MAXIOV;
	const bool wait_for_one = (flags & MSG_WAITFORONE) != 0;
	flags &= ~MSG_WAITFORONE;
	unsigned done = 0;
	int err = 0;
	while (done < vlen) {
		/* A pending error after some datagrams waits for the next call. */
		if (done > 0 && dps_error_pending(fd))
			break;
		ssize_t n = dps_recvmsg(fd, &vec[done].msg_hdr, flags);
		if (!dps_mmsg_count(vec, &done, n, &err))
			break;
		if (wait_for_one)
			flags |= MSG_DONTWAIT;
		if (timeout != NULL) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			int64_t left = end_ns - dps_ts_ns(&now);
			if (left < 0)
				left = 0;
			left_ts.tv_sec = left / 1000000000;
			left_ts.tv_nsec = left % 1000000000;
			if (left == 0)
				break;
		}
	}
	if (done > 0 && timeout != NULL && dps_put_user(timeout, &left_ts, sizeof(left_ts)) < 0)
		return DPS_FAIL(EFAULT);
	return dps_mmsg_result(done, err);
}
