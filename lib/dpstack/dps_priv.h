/* libdpstack's inside: the attachment to the daemon, the descriptor table, and the pieces
 * every call uses (requests, commands, waiting, readiness). */
#ifndef DPS_LIB_PRIV_H
#define DPS_LIB_PRIV_H

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../../src/base/doorbell.h"
#include "../../src/chan/chan_shm.h"
#include "base/fifo.h"
#include "dps_sockaddr.h"
#include "dps_ucopy.h"

/* The kernel's epoll on the library's own instances, by system call: the preload shim
 * defines epoll_ctl and epoll_wait and would hand an instance of ours back to us. */
static inline int dps_sys_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	return (int)syscall(SYS_epoll_ctl, epfd, op, fd, ev);
}

static inline int dps_sys_epoll_pwait(int epfd, struct epoll_event *evs, int max, int timeout,
				      const sigset_t *mask)
{
	return (int)syscall(SYS_epoll_pwait, epfd, evs, max, timeout, mask, _NSIG / 8);
}

static inline int dps_sys_epoll_wait(int epfd, struct epoll_event *evs, int max, int timeout)
{
	return dps_sys_epoll_pwait(epfd, evs, max, timeout, NULL);
}

/* Calls return -1 and set errno the way libc does. */
#define DPS_FAIL(e) (errno = (e), -1)

/* One attachment to one daemon. A daemon restart makes a new one; files made on an old one
 * keep it (dead) until they are closed. */
struct dps_attach {
	_Atomic int refs;
	unsigned gen;                   /* tells thread-local wait sets which attach they serve */
	int sock_fd;                    /* unix connection to the daemon */
	int ev_fd;                      /* the daemon writes it when it queued events for us */
	int mem_fd;                     /* the segment, kept for a hand-over across exec */
	int worker_fd[CHAN_MAX_WORKERS];
	void *base;
	struct chan_seg_hdr *hdr;
	struct chan_layout lay;
	unsigned proc;
	uint64_t app_id, token;
	_Atomic bool dead;
	_Atomic int64_t checked_ms;     /* when dps_attach_check_lazy last asked */
	_Atomic uint64_t calls_free;    /* bit i: call slot i is ours to take */
	_Atomic uint64_t calls_late;    /* bit i: slot i's caller gave up (dps_call_wait) */
	int64_t call_timeout_ms;        /* DPSTACK_CALL_TIMEOUT_MS; 0: wait for ever */
	struct doorbell calls_bell;     /* rung when a call slot is given back */
	_Atomic unsigned next_worker;   /* connects and UDP sockets go to each worker in turn */
	int64_t spin_ns;                /* how long waits spin before they sleep */
	pthread_mutex_t cmd_lock[CHAN_MAX_WORKERS];
	pthread_mutex_t ev_lock;
	struct dps_file **sock_file;    /* socket number → the file holding it */
};

enum dps_kind { DPS_TCP, DPS_LISTEN, DPS_UDP, DPS_EPOLL };

/* Options of levels IPPROTO_IP and IPPROTO_IPV6 that the library keeps itself (TTL and TOS
 * are in chan_opts); an accepted socket inherits them and an exec carries them, as Linux's
 * socket state. */
struct dps_ip_flags {
	unsigned cmsgs;                 /* DPS_CMSG*: what recvmsg adds (IP_PKTINFO, ...) */
	bool recverr;                   /* IP_RECVERR, only read back (no error queue) */
	uint8_t pmtudisc;               /* IP_MTU_DISCOVER + 1, 0: the default; read back only */
	bool bind_no_port;              /* IP_BIND_ADDRESS_NO_PORT, read back only */
};

struct dps_epitem;
struct dps_epoll;

struct dps_file {
	_Atomic int refs;               /* 0: free (the record is kept for reuse, dps_fd.c) */
	struct dps_file *next_free;
	_Atomic int nfds;               /* descriptor numbers naming it (dup); the socket is
					 * closed when the last of them is */
	int fd;                         /* the first number, -1 once closed while dups remain */
	enum dps_kind kind;
	struct dps_attach *at;
	uint32_t socks[CHAN_MAX_WORKERS];
	unsigned nsocks;                /* 0: a TCP socket not connected yet */
	struct fifo tx;                 /* a view of the socket's send FIFO (TCP, UDP); the
					 * receive FIFO's is taken per call (dps_rx_view) */
	_Atomic int flags;              /* O_NONBLOCK */
	bool cloexec;
	int rcvtimeo_ms, sndtimeo_ms;   /* 0: forever */
	struct chan_opts opts;          /* options, kept for connect/listen and getsockopt */
	struct dps_ip_flags ip;         /* the IP level's own options (dps_opt_ip.c) */
	bool reuseaddr, reuseport;
	int linger_on, linger_s;
	int family;                     /* AF_INET or AF_INET6 */
	bool v6only;                    /* IPV6_V6ONLY (AF_INET6; Linux's default off) */
	struct dps_ep local;            /* bind(2) */
	bool bound;
	uint32_t bind_id;               /* the daemon's reservation of a TCP bind, 0: none */
	bool shut_rd, shut_wr;          /* shutdown(2) here, before the worker confirms */
	bool connect_pending;           /* a non-blocking connect(2) said EINPROGRESS */
	_Atomic unsigned accept_next;
	/* A listener's accepts in progress, and its close while there were some: the last of
	 * them closes its sockets (dps_accept_leave). Under rx_lock. */
	unsigned accepting;
	bool listen_closed;
	pthread_mutex_t rx_lock, tx_lock;
	struct dps_epitem *watchers;    /* epoll items on this file (under dps_ep_lock) */
	struct dps_epoll *ep;           /* DPS_EPOLL */
};

/* --- dps_attach.c --- */
/* The current attachment, attaching (or joining, in a forked child) when needed; NULL with
 * errno set. The reference is the caller's. */
struct dps_attach *dps_attach_get(void);
void dps_attach_put(struct dps_attach *at);
/* A call (chan_shm.h): the request runs on worker w, in order with this process's earlier
 * commands there; the reply comes back in rep. Returns 0 or the negative errno of the
 * reply, or -ENOTCONN when the daemon is gone. */
int dps_call(struct dps_attach *at, unsigned w, struct chan_req *rq, struct chan_reply *rep);
/* The same in two steps, so that calls to several workers run at once: post returns the
 * slot (or -errno), wait takes the reply and gives the slot back. */
int dps_call_post(struct dps_attach *at, unsigned w, const struct chan_req *rq);
int dps_call_wait(struct dps_attach *at, int slot, struct chan_reply *rep);
/* The worker for a new connection or datagram socket: each in turn. */
unsigned dps_next_worker(struct dps_attach *at);
/* Queues a command for the socket's worker and wakes it if it sleeps. */
int dps_cmd(struct dps_attach *at, uint32_t sock, enum chan_cmd_op op, uint32_t arg);
/* The kick: coalesced through the socket's kick flag. */
void dps_kick(struct dps_attach *at, uint32_t sock);
/* dead: what is known (cheap); check: asks the connection (a system call); check_lazy:
 * asks at most every DPS_LIVENESS_MS, for paths that run while data moves (a read that
 * found nothing) and must not pay a system call each time. A thread that sleeps learns of
 * the daemon's end at once: its wait set watches the connection. */
#define DPS_LIVENESS_MS 50
bool dps_attach_dead(struct dps_attach *at);
bool dps_attach_check(struct dps_attach *at);
bool dps_attach_check_lazy(struct dps_attach *at);
static inline struct chan_sock *dps_sock(struct dps_attach *at, uint32_t s)
{
	return chan_sock_at(at->base, &at->lay, s);
}
/* The state (CHAN_SS_*) of f's first socket; once the daemon is gone, that of a socket it
 * reset (dps_orphan.c). */
uint32_t dps_sock_state(struct dps_file *f);
/* In a forked child: the lock under which dps_sock_state turns a record, free again. */
void dps_orphan_after_fork(void);
/* FIFO views from a socket's record (positions at pos_off, data at off); false when the
 * record points outside the segment's arenas. */
bool dps_fifo_view(struct dps_attach *at, struct fifo *f, uint64_t pos_off, uint64_t off,
		   uint32_t size);

/* What a new program image needs to go on with this process's attachment across execve(2)
 * (dps_exec.c): the same connection, so the daemon sees the same process. */
struct dps_exec_attach {
	int sock_fd, mem_fd, ev_fd;
	int worker_fd[CHAN_MAX_WORKERS];
	struct chan_attach_reply ar;
};
/* Fills x from the current attachment; -1 when there is none (or it is dead). */
int dps_attach_export(struct dps_exec_attach *x);
/* Makes the current attachment from x (descriptors passed over exec); a reference for the
 * caller, or NULL with *err (the descriptors are closed). */
struct dps_attach *dps_attach_import(const struct dps_exec_attach *x, int *err);

/* --- dps_fd.c --- */
struct dps_file *dps_file_new(enum dps_kind kind, int kernel_fd);
/* The file for fd with a reference, or NULL (EBADF for stack-less fds is the caller's). */
struct dps_file *dps_file_get(int fd);
void dps_file_put(struct dps_file *f);
/* Publishes f at f->fd: from now on calls find it. */
int dps_file_install(struct dps_file *f);
/* The same at another number (a dup of f), taking a reference for the table. */
int dps_file_install_at(struct dps_file *f, int fd);
/* Removes fd from the table; returns the file (reference passed to the caller) or NULL. */
struct dps_file *dps_file_remove(int fd);
void dps_files_after_fork(void);
/* Calls fn for every descriptor number in the table (no lock: for fork and exec). */
void dps_files_each(void (*fn)(int fd, struct dps_file *f, void *ctx), void *ctx);
/* A socket number now belongs to f (events for it go to f's epoll items). */
void dps_file_bind_sock(struct dps_file *f, uint32_t sock);

/* --- dps_wait.c --- */
/* Takes the events the workers queued for this process and hands them to epoll items. */
void dps_events_drain(struct dps_attach *at);
/* True when a worker queued events not yet taken (ctx: the attach; a doorbell_spin test). */
bool dps_events_pending(void *ctx);
/* The daemon ended, as dps_attach_dead knows or the segment says (two loads, no call). */
bool dps_attach_gone(struct dps_attach *at);
/* What f is ready for now (EPOLL* bits). */
uint32_t dps_file_ready(struct dps_file *f);
/* Waits until f is ready for one of want (or error/hang-up); 0, -EAGAIN at the deadline
 * (timeout_ms < 0: none), -ENOTCONN when the daemon went away, -EINTR on a signal. */
int dps_wait(struct dps_file *f, uint32_t want, int timeout_ms);
/* The same for a call that holds one of f's locks: it is let go during the sleep, as Linux
 * releases a socket while a call on it sleeps (sk_wait_event), so that other threads' calls
 * on the socket go on, each sleeping and taking signals on its own, and a fork() meanwhile
 * does not copy a held lock. */
int dps_wait_unlocked(struct dps_file *f, pthread_mutex_t *lock, uint32_t want, int timeout_ms);
/* Sleeps until the daemon signals this process or timeout_ms passes (-1: forever); extra
 * kernel fds may be watched too (poll). Used by dps_wait, dps_poll, dps_call_wait. */
int dps_sleep(struct dps_attach *at, int timeout_ms);
/* This process's doorbell, which the workers ring (chan_shm.h). */
static inline struct doorbell *dps_bell(struct dps_attach *at)
{
	return &at->hdr->procs[at->proc].bell;
}
/* The same, also waking when one of the kernel descriptors kfds[0..nk) is ready (kfds needs
 * room for nk + 1 entries), with the signal mask (unless NULL) in place during the sleep
 * only, as ppoll(2). Returns how many of them are, or -errno. */
struct pollfd;
int dps_sleep_poll(struct dps_attach *at, struct pollfd *kfds, unsigned nk, int timeout_ms,
		   const sigset_t *mask);
int64_t dps_now_ms(void);
/* A deadline timeout_ms from now in dps_now_ms's clock, for timeout_ms > 0; else -1 (none). */
int64_t dps_deadline_ms(int64_t timeout_ms);
/* The milliseconds left until deadline (from dps_deadline_ms): -1 when there is none, 0 once
 * it has passed, at most INT_MAX. */
int dps_ms_left(int64_t deadline);
/* A ppoll/pselect/epoll_pwait2 timeout in poll's milliseconds, rounded up (NULL: -1, none);
 * -EINVAL for a negative or malformed one, -EFAULT for one that cannot be read, as the
 * kernel says. */
int dps_timespec_ms(const struct timespec *ts);

/* --- dps_epoll.c --- */
extern pthread_mutex_t dps_ep_lock;
/* f became (maybe) ready: queue it on the epoll instances watching it. Under dps_ep_lock. */
void dps_epoll_notify(struct dps_file *f);
void dps_epoll_forget(struct dps_file *f);
/* The epoll instances watching f watch kernel descriptor kfd instead, with the same events
 * and data (a socket remade on the kernel under the same number). */
void dps_epoll_hand_over(struct dps_file *f, int kfd);
void dps_epoll_file_free(struct dps_file *f);

/* --- dps_opt.c, dps_opt_ip.c, dps_opt_ip6.c --- */
/* Applies an option to the live socket (every per-worker listener of a listening one); a
 * socket not connected yet takes it from f->opts at connect or listen. */
int dps_setopt_live(struct dps_file *f, enum chan_opt opt, uint32_t value);
/* Level IPPROTO_IP: 0 or -errno, as Linux. */
int dps_set_ip_level(struct dps_file *f, int name, const void *val, socklen_t len);
int dps_get_ip_level(struct dps_file *f, int name, void *val, socklen_t *len);
/* Level IPPROTO_IPV6 (AF_INET6 sockets): 0 or -errno, as Linux. */
int dps_set_ip6_level(struct dps_file *f, int name, const void *val, socklen_t len);
int dps_get_ip6_level(struct dps_file *f, int name, void *val, socklen_t *len);
/* An int option's value as Linux reads it (four bytes, else one, else 0), and an int answer
 * as do_ip_getsockopt writes it (one byte when asked for less than an int). */
int dps_ip_int_arg(const void *val, socklen_t len, int *out);
int dps_ip_put_int(void *val, socklen_t *len, int v);

/* --- dps_io.c --- */
/* fd's socket holds an error not yet reported (SO_ERROR), which its next read returns. */
bool dps_error_pending(int fd);
/* An address in from the application (move_addr_to_kernel): 0, -EINVAL for a length out of
 * range, -EFAULT. */
int dps_addr_in(const struct sockaddr *uaddr, socklen_t len, struct sockaddr_storage *k);
/* An address of klen bytes out to the application (move_addr_to_user): what fits of it in
 * *ulen bytes, then klen into *ulen; 0, -EINVAL for a negative *ulen, -EFAULT. */
int dps_addr_out(const void *k, socklen_t klen, struct sockaddr *uaddr, socklen_t *ulen);
/* ep as f's family shows it, out to the application as dps_addr_out. */
int dps_ep_put(const struct dps_file *f, const struct dps_ep *ep, struct sockaddr *uaddr,
	       socklen_t *ulen);
/* sendmsg, also telling how many bytes the message asked to send (sendmmsg). */
ssize_t dps_msg_send(int fd, const struct msghdr *umsg, int flags, size_t *want);

/* --- dps_socket.c --- */
/* Sets up a file for an established socket (accept, connect): views, table. */
int dps_file_attach_sock(struct dps_file *f, uint32_t sock);
/* A view of the socket's receive FIFO where the worker last put it, and its generation
 * (chan_sock.rx_gen). Views are taken per call and never kept: a TCP worker moves an empty
 * FIFO to a bigger block (receive autotuning). False if the record points outside the
 * segment (a daemon bug). */
bool dps_rx_view(const struct dps_file *f, struct fifo *view, uint32_t *gen);
/* Said by the thread that consumes, under rx_lock, after taking a view of generation gen:
 * no thread of this process will read the block the FIFO moved from, which the worker may
 * now free. */
void dps_rx_seen(const struct dps_file *f, uint32_t gen);
/* A UDP socket exists in the daemon once bound; sending or connecting binds it. */
int dps_udp_ensure_open(struct dps_file *f);
/* Tells the daemon that f's sockets (and bind reservation) are closed. */
void dps_file_close_socks(struct dps_file *f);

/* --- for the preload shim (lib/preload) --- */
/* Before execve(2): hands this process's stack sockets that are not close-on-exec over to
 * the new image (dps_exec.c). Returns the environment to exec with: envp itself when there
 * is nothing to hand over, else envp with the hand-over and those "NAME=value" entries of
 * carry (NULL-terminated) whose NAME it lacks. After a failed exec,
 * dps_exec_failed(returned, envp) undoes it all. */
char **dps_exec_prepare(char *const envp[], const char *const carry[]);
void dps_exec_failed(char **env, char *const envp[]);
/* Closes the stack socket behind fd but leaves the number open for what the caller puts
 * there (dup2 over a stack socket). */
int dps_release_fd(int fd);
/* The same when the shim has just put a kernel socket at fd (dup3) for a socket that turned
 * out not to be the stack's: the epoll instances watching it watch the kernel socket now. */
int dps_release_to_kernel(int fd);
/* The lowest number in [from, last] that names a stack file (socket or epoll instance), or
 * -1: close_range and closefrom close those first. */
int dps_fd_next(int from, int last);
/* Makes an existing kernel epoll instance able to watch stack sockets too, beginning with
 * the stack socket fd (the instance serves its attachment). */
int dps_epoll_adopt(int kfd, int fd);
/* dup(2) family for stack files: a second number naming the same file (newfd < 0: the
 * lowest free number >= minfd; else exactly newfd, closing what was there). Returns the
 * number, or -1 with errno. */
int dps_dup(int oldfd, int newfd, int minfd);

#endif
