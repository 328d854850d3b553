/* Data calls: stack sockets to libdpstack, everything else to libc. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "../dpstack/dps_ucopy.h"
#include "preload.h"

ssize_t read(int fd, void *buf, size_t len)
{
	pl_init();
	return pl_is_stack(fd) ? dps_read(fd, buf, len) : pl_libc.read(fd, buf, len);
}

ssize_t write(int fd, const void *buf, size_t len)
{
	pl_init();
	return pl_is_stack(fd) ? dps_write(fd, buf, len) : pl_libc.write(fd, buf, len);
}

ssize_t readv(int fd, const struct iovec *iov, int iovcnt)
{
	pl_init();
	return pl_is_stack(fd) ? dps_readv(fd, iov, iovcnt) : pl_libc.readv(fd, iov, iovcnt);
}

ssize_t writev(int fd, const struct iovec *iov, int iovcnt)
{
	pl_init();
	return pl_is_stack(fd) ? dps_writev(fd, iov, iovcnt) : pl_libc.writev(fd, iov, iovcnt);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	pl_init();
	return pl_is_stack(fd) ? dps_recv(fd, buf, len, flags) : pl_libc.recv(fd, buf, len, flags);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	pl_init();
	return pl_is_stack(fd) ? dps_send(fd, buf, len, flags) : pl_libc.send(fd, buf, len, flags);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		 socklen_t *fromlen)
{
	pl_init();
	return pl_is_stack(fd) ? dps_recvfrom(fd, buf, len, flags, from, fromlen)
			       : pl_libc.recvfrom(fd, buf, len, flags, from, fromlen);
}

ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	pl_init();
	return pl_is_stack(fd) ? dps_recvmsg(fd, msg, flags) : pl_libc.recvmsg(fd, msg, flags);
}

/* A datagram socket's first send may name a kernel destination (a resolver on 127.0.0.53):
 * then it is remade on the kernel, as at connect. */
static bool pl_send_on_kernel(int fd, const struct sockaddr *to, socklen_t tolen)
{
	if (to == NULL || !pl_kernel_addr(to, tolen))
		return false;
	return pl_move_pending_to_kernel(fd, "send to a kernel address") == 0 && !pl_is_stack(fd);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	pl_init();
	if (!pl_is_stack(fd) || pl_send_on_kernel(fd, to, tolen))
		return pl_libc.sendto(fd, buf, len, flags, to, tolen);
	return dps_sendto(fd, buf, len, flags, to, tolen);
}

/* The same for a message header of the application's: one that cannot be read stays on the
 * stack, whose sendmsg says EFAULT. */
static bool pl_msg_on_kernel(int fd, const struct msghdr *umsg)
{
	struct msghdr m;
	return dps_get_user(&m, umsg, sizeof(m)) == 0 &&
	       pl_send_on_kernel(fd, m.msg_name, m.msg_namelen);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	pl_init();
	if (!pl_is_stack(fd) || pl_msg_on_kernel(fd, msg))
		return pl_libc.sendmsg(fd, msg, flags);
	return dps_sendmsg(fd, msg, flags);
}

/* _FORTIFY_SOURCE's checked variants, which Debian's programs call. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen);

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	pl_init();
	if (len > buflen || !pl_is_stack(fd))
		return pl_libc.read_chk(fd, buf, len, buflen);
	return dps_read(fd, buf, len);
}

ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	pl_init();
	if (len > buflen || !pl_is_stack(fd))
		return pl_libc.recv_chk(fd, buf, len, buflen, flags);
	return dps_recv(fd, buf, len, flags);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
		       struct sockaddr *from, socklen_t *fromlen)
{
	pl_init();
	if (len > buflen || !pl_is_stack(fd))
		return pl_libc.recvfrom_chk(fd, buf, len, buflen, flags, from, fromlen);
	return dps_recvfrom(fd, buf, len, flags, from, fromlen);
}

/* File to stack socket: the file is read straight into the socket's send buffer (the
 * zero-copy slices), so the bytes are copied once, as the kernel's sendfile copies them
 * once into socket buffers. Reads at *offset (pread) or at the file position. */
static ssize_t pl_sendfile_stack(int out, int in, off_t *offset, size_t count)
{
	size_t done = 0;
	off_t pos = offset != NULL ? *offset : 0;
	while (done < count) {
		struct iovec iov[2];
		ssize_t room = dps_zc_send_reserve(out, iov, done > 0 ? MSG_DONTWAIT : 0);
		if (room < 0) {
			if (done > 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (done > 0)
				break;
			return -1;
		}
		size_t want = count - done, got = 0;
		for (int i = 0; i < 2 && got < want; i++) {
			size_t n = iov[i].iov_len < want - got ? iov[i].iov_len : want - got;
			if (n == 0)
				continue;
			ssize_t r = offset != NULL ? pread(in, iov[i].iov_base, n, pos + (off_t)got)
						   : pl_libc.read(in, iov[i].iov_base, n);
			if (r <= 0) {
				if (r < 0 && got == 0 && done == 0) {
					int e = errno;
					dps_zc_send_commit(out, 0);
					errno = e;
					return -1;
				}
				want = got; /* end of file or an error after some bytes */
				break;
			}
			got += (size_t)r;
			if ((size_t)r < n) {
				want = got;
				break;
			}
		}
		if (dps_zc_send_commit(out, got) != 0)
			return done > 0 ? (ssize_t)done : -1;
		done += got;
		pos += (off_t)got;
		if (got < (size_t)room && got < count - (done - got))
			break; /* end of file */
	}
	if (offset != NULL)
		*offset = pos;
	return (ssize_t)done;
}

ssize_t sendfile(int out, int in, off_t *offset, size_t count)
{
	pl_init();
	if (!pl_is_stack(out))
		return pl_libc.sendfile(out, in, offset, count);
	/* The offset is the application's: read first and written back last (EFAULT). */
	off_t pos;
	if (offset != NULL && dps_get_user(&pos, offset, sizeof(pos)) < 0) {
		errno = EFAULT;
		return -1;
	}
	ssize_t rc = pl_sendfile_stack(out, in, offset != NULL ? &pos : NULL, count);
	if (rc >= 0 && offset != NULL && dps_put_user(offset, &pos, sizeof(pos)) < 0) {
		errno = EFAULT;
		return -1;
	}
	return rc;
}

ssize_t sendfile64(int out, int in, off_t *offset, size_t count)
{
	return sendfile(out, in, offset, count);
}

/* Batches: the library's loop for stack sockets; a pending datagram socket whose first
 * message goes to a kernel address moves to the kernel, as at sendmsg. */
int sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags)
{
	pl_init();
	if (!pl_is_stack(fd) || (vlen > 0 && pl_msg_on_kernel(fd, &vec[0].msg_hdr)))
		return pl_libc.sendmmsg(fd, vec, vlen, flags);
	return dps_sendmmsg(fd, vec, vlen, flags);
}

int recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags, struct timespec *timeout)
{
	pl_init();
	return pl_is_stack(fd) ? dps_recvmmsg(fd, vec, vlen, flags, timeout)
			       : pl_libc.recvmmsg(fd, vec, vlen, flags, timeout);
}
