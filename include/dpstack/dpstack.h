/**
 * @file
 * libdpstack: BSD sockets on the dpstack userspace TCP/IP stack.
 *
 * An application links libdpstack.so and calls dps_socket(), dps_bind(), ... exactly as it
 * would call socket(2), bind(2), ...: the same arguments, the same results, -1 with the
 * errno Linux sets for the same call. The process attaches to dpstackd on first use over the
 * unix socket named by the environment variable DPSTACK_SOCK (default
 * /run/dpstack/app.sock); it needs no root, no hugepages and no DPDK.
 *
 * Descriptors are real descriptor numbers of the process (each socket holds a placeholder
 * kernel descriptor), so they never collide with files and kernel sockets, and
 * dps_poll()/dps_select()/dps_epoll_*() accept kernel descriptors beside stack ones. Close a
 * stack descriptor with dps_close(), never close(2).
 *
 * Semantics worth knowing:
 *  - AF_INET and AF_INET6 with SOCK_STREAM (TCP) and SOCK_DGRAM (UDP). SOCK_NONBLOCK and
 *    SOCK_CLOEXEC flags are accepted in the type. An AF_INET6 socket takes struct
 *    sockaddr_in6 (sin6_scope_id: the interface index of a link-local address, as
 *    `dpstackctl link show` numbers them) and, unless IPV6_V6ONLY is set (Linux's default
 *    is off), reaches and accepts IPv4 peers as mapped addresses ::ffff:a.b.c.d.
 *  - Blocking calls sleep without spinning and wake on the daemon's eventfd. SO_RCVTIMEO
 *    and SO_SNDTIMEO bound them (EAGAIN).
 *  - Thread-safe. A forked child keeps working sockets: it joins the application on its
 *    first call, and a socket stays open until every process holding it closes it or exits.
 *    Two processes must not read (or write) the same stream at the same moment.
 *  - When the daemon goes away, calls fail cleanly: reads with ECONNRESET, writes with
 *    EPIPE, others with ENOTCONN; blocked callers wake. A later dps_socket() attaches to a
 *    new daemon.
 *  - Writes to a stream whose peer reset raise SIGPIPE unless MSG_NOSIGNAL is given, as on
 *    Linux.
 */
#ifndef DPSTACK_DPSTACK_H
#define DPSTACK_DPSTACK_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPS_EXPORT __attribute__((visibility("default")))

/**
 * Attaches this process to the daemon now rather than on the first call.
 * @return 0, or -1 with errno (ENOENT/ECONNREFUSED: no daemon at DPSTACK_SOCK).
 */
DPS_EXPORT int dps_init(void);

/** @return 1 if fd is a descriptor of the stack (socket or epoll instance), else 0. */
DPS_EXPORT int dps_is_stack_fd(int fd);

/**
 * A kernel descriptor that becomes readable (edge-triggered: each new event, in an epoll set
 * with EPOLLET) when something happened on this process's stack sockets, for event loops
 * that cannot call dps_epoll_wait(). After it fires, look at the sockets with
 * dps_poll(..., 0). -1 with errno when not attached.
 */
DPS_EXPORT int dps_event_fd(void);

DPS_EXPORT int dps_socket(int domain, int type, int protocol);
DPS_EXPORT int dps_bind(int fd, const struct sockaddr *addr, socklen_t len);
DPS_EXPORT int dps_listen(int fd, int backlog);
DPS_EXPORT int dps_accept(int fd, struct sockaddr *addr, socklen_t *len);
DPS_EXPORT int dps_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
/** Blocking, or with O_NONBLOCK -1/EINPROGRESS and the result in SO_ERROR once writable. */
DPS_EXPORT int dps_connect(int fd, const struct sockaddr *addr, socklen_t len);
DPS_EXPORT int dps_close(int fd);
DPS_EXPORT int dps_shutdown(int fd, int how);

DPS_EXPORT ssize_t dps_read(int fd, void *buf, size_t len);
DPS_EXPORT ssize_t dps_write(int fd, const void *buf, size_t len);
DPS_EXPORT ssize_t dps_readv(int fd, const struct iovec *iov, int iovcnt);
DPS_EXPORT ssize_t dps_writev(int fd, const struct iovec *iov, int iovcnt);
/** flags: MSG_DONTWAIT, MSG_NOSIGNAL, MSG_PEEK (recv), MSG_WAITALL (recv), MSG_TRUNC (UDP). */
DPS_EXPORT ssize_t dps_send(int fd, const void *buf, size_t len, int flags);
DPS_EXPORT ssize_t dps_recv(int fd, void *buf, size_t len, int flags);
DPS_EXPORT ssize_t dps_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
		   socklen_t tolen);
DPS_EXPORT ssize_t dps_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		     socklen_t *fromlen);
DPS_EXPORT ssize_t dps_sendmsg(int fd, const struct msghdr *msg, int flags);
DPS_EXPORT ssize_t dps_recvmsg(int fd, struct msghdr *msg, int flags);
/** sendmmsg(2)/recvmmsg(2) with Linux's partial counts, MSG_WAITFORONE and timeout
 * (struct mmsghdr is <sys/socket.h>'s with _GNU_SOURCE). */
struct mmsghdr;
struct timespec;
DPS_EXPORT int dps_sendmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags);
DPS_EXPORT int dps_recvmmsg(int fd, struct mmsghdr *vec, unsigned int vlen, int flags,
			    struct timespec *timeout);

DPS_EXPORT int dps_getsockname(int fd, struct sockaddr *addr, socklen_t *len);
DPS_EXPORT int dps_getpeername(int fd, struct sockaddr *addr, socklen_t *len);
/**
 * SOL_SOCKET: SO_REUSEADDR, SO_REUSEPORT, SO_RCVBUF, SO_SNDBUF, SO_KEEPALIVE, SO_LINGER,
 * SO_ERROR, SO_RCVTIMEO, SO_SNDTIMEO, SO_TYPE, SO_DOMAIN, SO_PROTOCOL, SO_ACCEPTCONN,
 * SO_BROADCAST; IPPROTO_TCP: TCP_NODELAY, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_INFO,
 * TCP_CONGESTION, TCP_MAXSEG, TCP_USER_TIMEOUT, TCP_CORK (and MSG_MORE on sends: short
 * segments wait for more, the uncork or the persist timer, as Linux); IPPROTO_IP: IP_TTL,
 * IP_TOS, IP_PKTINFO, IP_RECVTTL, IP_RECVTOS (UDP's recvmsg ancillary data), IP_RECVERR (read
 * back only: there is no error queue, MSG_ERRQUEUE gives EAGAIN). Others: ENOPROTOOPT.
 */
DPS_EXPORT int dps_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
DPS_EXPORT int dps_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
/** F_GETFL, F_SETFL (O_NONBLOCK), F_GETFD, F_SETFD. */
DPS_EXPORT int dps_fcntl(int fd, int cmd, ...);
/** FIONREAD, FIONBIO; on sockets the interface ioctls SIOCGIFCONF, SIOCGIFINDEX,
 * SIOCGIFNAME, SIOCGIFHWADDR, SIOCGIFADDR, SIOCGIFNETMASK, SIOCGIFBRDADDR, SIOCGIFFLAGS and
 * SIOCGIFMTU, answered with the stack's ports (ENODEV for another name). Others: ENOTTY. */
DPS_EXPORT int dps_ioctl(int fd, unsigned long request, ...);

/**
 * Stack and kernel descriptors may be mixed. The p-forms install the signal mask (when not
 * NULL) atomically with the sleep, as ppoll(2) and pselect(2) do: a signal it unblocks ends
 * the sleep with EINTR even when it was pending at the call.
 */
DPS_EXPORT int dps_poll(struct pollfd *fds, nfds_t nfds, int timeout_ms);
DPS_EXPORT int dps_ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
			 const sigset_t *mask);
DPS_EXPORT int dps_select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *timeout);
DPS_EXPORT int dps_pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			   const struct timespec *timeout, const sigset_t *mask);

/**
 * epoll over stack and kernel descriptors: level- and edge-triggered, EPOLLONESHOT,
 * EPOLLRDHUP, EPOLLEXCLUSIVE (one of the instances watching a socket with it is told), as
 * epoll(7). The epoll descriptor is a kernel epoll instance, so it can itself be polled.
 */
DPS_EXPORT int dps_epoll_create(int size);
DPS_EXPORT int dps_epoll_create1(int flags);
DPS_EXPORT int dps_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
DPS_EXPORT int dps_epoll_wait(int epfd, struct epoll_event *events, int maxevents, int timeout_ms);
/** The same with epoll_pwait(2)'s atomic signal mask, and epoll_pwait2(2)'s timespec. */
DPS_EXPORT int dps_epoll_pwait(int epfd, struct epoll_event *events, int maxevents,
			       int timeout_ms, const sigset_t *mask);
DPS_EXPORT int dps_epoll_pwait2(int epfd, struct epoll_event *events, int maxevents,
				const struct timespec *timeout, const sigset_t *mask);

/**
 * Zero-copy reading: up to two slices of received stream bytes, in place in the socket's
 * receive buffer. @return the bytes described (0 at end of stream), or -1 (EAGAIN when
 * nothing is there with MSG_DONTWAIT or O_NONBLOCK; otherwise it blocks like dps_recv).
 * The bytes stay valid until dps_zc_recv_done(fd, n) releases the first n of them.
 */
DPS_EXPORT ssize_t dps_zc_recv(int fd, struct iovec iov[2], int flags);
DPS_EXPORT int dps_zc_recv_done(int fd, size_t n);
/**
 * Zero-copy writing: up to two slices of free room in the socket's send buffer. @return
 * the bytes described, or -1 (EAGAIN when full and non-blocking). Fill them, then
 * dps_zc_send_commit(fd, n) sends the first n bytes.
 */
DPS_EXPORT ssize_t dps_zc_send_reserve(int fd, struct iovec iov[2], int flags);
DPS_EXPORT int dps_zc_send_commit(int fd, size_t n);

#ifdef __cplusplus
}
#endif

#endif
