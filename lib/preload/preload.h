/* libdpstack_preload.so: unmodified programs on dpstack.
 *
 * The shim defines the libc socket and descriptor calls. A call on a stack socket goes to
 * libdpstack (linked in whole); every other descriptor, and every socket the stack does not
 * own, goes to the next definition (libc) untouched. Stack sockets are real descriptor
 * numbers (the library's placeholders), so fd_sets, arrays and fork keep working.
 *
 * Which sockets are the stack's: an AF_INET or AF_INET6 stream or datagram socket starts on
 * the stack and stays there unless its first bind or connect
 * names an address that is not: one in 127.0.0.0/8, ::1 or DPSTACK_KERNEL_NETS (IPv4, also
 * as an AF_INET6 socket's mapped address ::ffff:a.b.c.d), a bind to an address the stack
 * does not have, a connect the stack has no route for. Then it moves to a kernel socket of the same number,
 * with the options it was given. DPSTACK_PRELOAD=kernel sends everything to the kernel;
 * DPSTACK_PRELOAD_LOG=1 logs the calls on stack sockets and these choices to stderr.
 *
 * A bad pointer given to a call on a stack socket is EFAULT, as on the kernel: libdpstack
 * reaches the application's memory through fault-safe copies, whose SIGSEGV/SIGBUS handler
 * (installed by the first of them) the shim keeps when the program installs its own
 * (preload_signal.c). What the shim itself reads of the application's memory to choose
 * between the stack and libc goes through the same copies; what it cannot read goes to libc,
 * where the kernel says EFAULT. */
#ifndef DPS_PRELOAD_H
#define DPS_PRELOAD_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Everything here is the shim's own: hidden, so it cannot interpose on a program's names. */
#pragma GCC visibility push(hidden)

/* The definitions the shim stands in front of. */
struct pl_libc {
	int (*socket)(int, int, int);
	int (*bind)(int, const struct sockaddr *, socklen_t);
	int (*listen)(int, int);
	int (*accept)(int, struct sockaddr *, socklen_t *);
	int (*accept4)(int, struct sockaddr *, socklen_t *, int);
	int (*connect)(int, const struct sockaddr *, socklen_t);
	int (*close)(int);
	int (*shutdown)(int, int);
	ssize_t (*read)(int, void *, size_t);
	ssize_t (*write)(int, const void *, size_t);
	ssize_t (*readv)(int, const struct iovec *, int);
	ssize_t (*writev)(int, const struct iovec *, int);
	ssize_t (*recv)(int, void *, size_t, int);
	ssize_t (*send)(int, const void *, size_t, int);
	ssize_t (*recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
	ssize_t (*sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
	ssize_t (*recvmsg)(int, struct msghdr *, int);
	ssize_t (*sendmsg)(int, const struct msghdr *, int);
	int (*sendmmsg)(int, struct mmsghdr *, unsigned int, int);
	int (*recvmmsg)(int, struct mmsghdr *, unsigned int, int, struct timespec *);
	ssize_t (*read_chk)(int, void *, size_t, size_t);
	ssize_t (*recv_chk)(int, void *, size_t, size_t, int);
	ssize_t (*recvfrom_chk)(int, void *, size_t, size_t, int, struct sockaddr *,
				socklen_t *);
	ssize_t (*sendfile)(int, int, off_t *, size_t);
	int (*getsockopt)(int, int, int, void *, socklen_t *);
	int (*setsockopt)(int, int, int, const void *, socklen_t);
	int (*getsockname)(int, struct sockaddr *, socklen_t *);
	int (*getpeername)(int, struct sockaddr *, socklen_t *);
	int (*fcntl)(int, int, ...);
	int (*fcntl64)(int, int, ...);
	int (*ioctl)(int, unsigned long, ...);
	int (*dup)(int);
	int (*dup2)(int, int);
	int (*dup3)(int, int, int);
	int (*close_range)(unsigned int, unsigned int, int);
	void (*closefrom)(int);
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
	int (*poll_chk)(struct pollfd *, nfds_t, int, size_t);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
		       const sigset_t *);
	int (*epoll_ctl)(int, int, int, struct epoll_event *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int, const struct timespec *,
			    const sigset_t *);
	pid_t (*fork)(void);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*sigaction)(int, const struct sigaction *, struct sigaction *);
	sighandler_t (*signal)(int, sighandler_t);
	sighandler_t (*sysv_signal)(int, sighandler_t);
};

extern struct pl_libc pl_libc;
/* DPSTACK_PRELOAD=kernel: the shim only passes calls on. */
extern bool pl_off;
extern bool pl_log_on;

/* What a new program image needs to go on using stack sockets handed over across exec
 * (preload_exec.c): "LD_PRELOAD=<this shim>", "DPSTACK_SOCK=…" as at start; NULL-ended. */
extern const char *pl_exec_carry[3];

/* Resolves pl_libc and reads the environment, once; every entry point calls it first, since
 * other libraries' constructors may call in before ours runs. */
void pl_init(void);

void pl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define PL_LOG(...)                        \
	do {                               \
		if (pl_log_on)             \
			pl_log(__VA_ARGS__); \
	} while (0)

/* A stack socket or stack epoll instance (not when the shim is off). */
bool pl_is_stack(int fd);

/* True when an address belongs to the kernel by rule: loopback (127.0.0.0/8, ::1) and
 * DPSTACK_KERNEL_NETS, IPv4 also as an AF_INET6 socket's mapped address. */
bool pl_kernel_addr(const struct sockaddr *addr, socklen_t len);

/* Sockets created on the stack that have not bound or connected yet: how to remake them on
 * the kernel, with the options they were given (preload_pending.c). */
#define PL_MAX_OPTS 16
#define PL_OPT_LEN 32
struct pl_pending {
	int domain, type, protocol;
	unsigned nopts;
	struct {
		int level, name;
		socklen_t len;
		unsigned char val[PL_OPT_LEN];
	} opts[PL_MAX_OPTS];
};
/* A record for fd (replacing any): 0, or -1 when there is no memory. */
int pl_pending_add(int fd, int domain, int type, int protocol);
/* Takes fd's record out of the table (the caller frees it), or NULL. */
struct pl_pending *pl_pending_take(int fd);
bool pl_pending_has(int fd);
void pl_pending_forget(int fd);
/* Keeps an option (val: len bytes, already copied from the application) in fd's record, if
 * it has one; PL_MAX_OPTS at most. */
void pl_pending_record_opt(int fd, int level, int name, const void *val, socklen_t len);
/* Remakes a pending stack socket as a kernel socket of the same number (a no-op for one
 * that is not pending). 0, or -1 with errno. */
int pl_move_pending_to_kernel(int fd, const char *why);

#pragma GCC visibility pop

#endif
