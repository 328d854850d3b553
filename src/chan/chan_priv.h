/* The daemon's private side of the application channel: what it knows about each attached
 * application, kept out of the shared segment so that nothing an application writes can
 * mislead it. */
#ifndef DPS_CHAN_PRIV_H
#define DPS_CHAN_PRIV_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "stack/sock.h"
#include "chan.h"
#include "chan_arena.h"
#include "chan_shm.h"

struct tcp_conn;
struct udp_sock;
struct chan_app;

/* One socket of an application, owned by the worker sock % nb_workers. */
struct chan_dsock {
	struct chan_app *app;
	uint32_t index;
	uint8_t kind;                   /* chan_sock_kind; CHAN_SOCK_FREE when unused */
	bool claimed;                   /* a process took it (accepted sockets start unclaimed) */
	bool on_accept_list;            /* listener: the worker owes it an accept pump */
	uint64_t holders;               /* processes that hold it (fork shares sockets) */
	struct tcp_conn *tcp;
	struct udp_sock *udp;
	struct fifo *udp_tx;            /* UDP: datagrams the application queued */
	struct fifo *rx_retired;        /* TCP: the receive FIFO before autotuning moved it */
	struct chan_dsock *listener;    /* accepted and not yet claimed: whose */
	struct chan_ring *acc;          /* listener: its accept ring */
	uint32_t acc_mask;
	TAILQ_ENTRY(chan_dsock) accept_link;
	bool on_udp_tx_list;            /* UDP: datagrams left for the next round */
	bool udp_closing;               /* UDP: closed, sending what was queued before */
	TAILQ_ENTRY(chan_dsock) udp_tx_link;
};

/* The part of an application that one worker owns. */
struct chan_app_worker {
	struct chan_app *app;
	unsigned index;
	struct chan_arena arena;
	struct sock_mem mem;
	uint32_t *free_socks;           /* socket numbers this worker may hand out */
	uint32_t nfree;
	uint64_t procs;                 /* processes whose command rings it polls */
	uint64_t wake;                  /* processes to wake after this round */
};

struct chan_proc_priv {
	int fd;                         /* its unix connection; -1 when the slot is free */
	int efd;                        /* its eventfd */
	pid_t pid;                      /* as the daemon sees it (SO_PEERCRED), 0 when in a
					 * PID namespace the daemon cannot see into */
	pid_t ns_pid;                   /* as the process sees itself (its attach request) */
	uid_t uid;
	_Atomic bool kill;              /* a worker caught it misbehaving */
};

/* One user's share of the daemon, kept while any application of the user lives (its
 * segment included). Claimed and given up by the channel thread; the counts are changed by
 * whichever thread takes or frees the thing counted. */
struct chan_user {
	_Atomic uint32_t refs;          /* applications (segments) of the user; 0: slot free */
	_Atomic uint32_t uid;
	bool exempt;                    /* from per-user limits */
	_Atomic uint32_t apps;          /* attached, by the channel thread */
	_Atomic int64_t socks;
	_Atomic int64_t arena_bytes;    /* allocated blocks of its applications' arenas */
	_Atomic uint32_t listeners[CHAN_MAX_WORKERS];   /* each worker counts its own */
};

struct chan_app {
	uint64_t id, token;
	struct chan_user *user;         /* of its first process: joins must share the uid */
	_Atomic int64_t nsocks;         /* open, on every worker */
	_Atomic int64_t arena_bytes;    /* allocated blocks, on every worker */
	int memfd;
	void *base;
	struct chan_seg_hdr *hdr;
	struct chan_layout lay;
	struct chan *chan;
	_Atomic uint64_t refs;          /* 1 while attached, plus one per live arena block */
	struct chan_dsock *socks;       /* lay.max_socks */
	struct chan_app_worker *w;      /* lay.nb_workers */
	struct chan_proc_priv procs[CHAN_MAX_PROCS];
	unsigned nprocs;
	int vigil_slot;                 /* its place in the death notice (chan_vigil.c), -1 */
	TAILQ_ENTRY(chan_app) link;     /* the server's list */
};

/* A TCP bind reservation (chan_bind.c), kept by worker lport % nb_workers. */
struct chan_bind {
	const struct chan_app *app;
	unsigned proc;
	uid_t uid;
	struct inet_addr laddr;         /* as in chan_req */
	uint16_t lport;
	uint32_t flags;                 /* CHAN_BIND_* (V6ONLY: laddr :: hears no IPv4) */
	uint32_t id;
};

/* Per worker. Only its own thread touches it, except through worker_call. */
struct chan_worker {
	struct chan *chan;
	unsigned index;
	struct stack *stack;
	int wake_fd;                    /* the worker's eventfd (apps write it to wake it) */
	struct chan_app *apps[CHAN_MAX_APPS];
	unsigned napps;
	TAILQ_HEAD(, chan_dsock) accept_list;
	TAILQ_HEAD(, chan_dsock) udp_tx_list;   /* send FIFOs whose budget ran out */
	uint8_t *udp_buf;               /* one datagram from a UDP send FIFO */
	struct chan_bind *binds;        /* reservations of the ports p % nb_workers == index */
	unsigned nbinds, cap_binds;
	uint32_t next_bind_id;
	struct chan_worker_stats st;
};

struct chan {
	struct chan_config cfg;
	struct worker *workers;
	unsigned nb_workers;
	struct chan_worker cw[CHAN_MAX_WORKERS];
	int listen_fd;
	int wake_fd;                    /* workers ask the server to act (a process to drop) */
	int stop_fd;
	char path[108];
	pthread_t thread;
	bool thread_running;
	uint64_t next_app_id;
	TAILQ_HEAD(, chan_app) apps;
	unsigned napps;
	struct chan_server_stats st;
	struct chan_vigil *vigil;
	_Atomic int64_t live_apps, live_socks, arena_bytes;
	struct chan_limits limits;
	struct chan_limit_bounds bounds;
	uid_t daemon_uid;
	struct chan_user users[CHAN_MAX_APPS];  /* a user per live application at most */
};

/* --- chan_vigil.c: the death notice in every segment (chan_seg_hdr.daemon_life) --- */
struct chan_vigil;
struct chan_vigil *chan_vigil_start(char *err, size_t errlen);
/* Sets a's daemon_life and has the kernel change it when the daemon ends. Returns the
 * slot to unwatch, or -1 (then the word stays 0: no notice for that application). */
int chan_vigil_watch(struct chan_vigil *v, struct chan_app *a);
void chan_vigil_unwatch(struct chan_vigil *v, int slot);
/* Ends the thread; applications still watched get the notice. */
void chan_vigil_stop(struct chan_vigil *v);

/* --- chan_user.c --- */
/* The user's entry (taking a reference), or NULL when the table is full. Channel thread. */
struct chan_user *chan_user_get(struct chan *ch, uid_t uid);
void chan_user_put(struct chan_user *u);
/* Takes one socket of a's on worker cw under socks-per-app and socks-per-user (the refusal
 * is counted); chan_sock_give returns it. */
bool chan_sock_take(struct chan_worker *cw, struct chan_app *a);
void chan_sock_give(struct chan_app *a);
/* Counts bytes of arena blocks that worker cw took for a, under arena-mb-per-user (the
 * refusal is counted); chan_arena_give uncounts them. */
bool chan_arena_take(struct chan_worker *cw, struct chan_app *a, int64_t bytes);
void chan_arena_give(struct chan_app *a, int64_t bytes);

/* --- chan_attach.c (on the channel thread) --- */
struct ucred;
/* The first message on a new connection fd, sent by the process cr: attaches, joins or
 * refuses it (then fd is closed). len is the message's length; msg is read only when that
 * is sizeof(struct chan_req). */
void chan_hello(struct chan *ch, int fd, const void *msg, size_t len, const struct ucred *cr);
/* Process p of a is gone: its sockets, eventfd and slot; the application with its last. */
void chan_proc_drop(struct chan *ch, struct chan_app *a, unsigned p);
/* Drops the processes a worker caught misbehaving (chan_proc_kill). */
void chan_drop_killed(struct chan *ch);
/* Drops every process, as if each had exited (the daemon stops). */
void chan_drop_all(struct chan *ch);

/* --- chan_app.c --- */
/* MiB of each worker's arena in a segment of max_socks sockets: chan_config.arena_mb, or
 * CHAN_ARENA_KB_PER_SOCK for each socket number of a worker (socket s is worker
 * s % nb_workers's) as a power of two of at least CHAN_ARENA_MB_MIN. */
uint64_t chan_arena_mb(const struct chan *ch, uint32_t max_socks);
/* Takes over the reference to user (given back when the segment is freed). */
struct chan_app *chan_app_create(struct chan *ch, struct chan_user *user, char *err,
				 size_t errlen);
void chan_app_unref(struct chan_app *a);
/* NULL when the application has no socket number left or holds its limit (counted). */
struct chan_dsock *chan_dsock_alloc(struct chan_app_worker *aw, uint8_t kind);
void chan_dsock_release(struct chan_dsock *ds);
/* The socket's shared record. */
static inline struct chan_sock *chan_dsock_shm(const struct chan_dsock *ds)
{
	return chan_sock_at(ds->app->base, &ds->app->lay, ds->index);
}

static inline uint64_t chan_app_off(const struct chan_app *a, const void *p)
{
	return (uint64_t)((const char *)p - (const char *)a->base);
}

/* --- chan_worker.c (on the worker) --- */
struct sock_owner chan_owner(struct chan_dsock *ds, pid_t pid, pid_t ns_pid);
/* Puts a connection's FIFOs and addresses into its shared record (connect, accept). */
void chan_dsock_share_tcp(struct chan_dsock *ds);
/* Publishes where a socket's receive FIFO is, under its sequence lock (chan_sock.rx_gen). */
void chan_sock_share_rx(struct chan_app *a, struct chan_sock *ss, const struct fifo *rx);
/* Publishes where its send FIFO is (set once, before the application sees the socket). */
void chan_sock_share_tx(struct chan_app *a, struct chan_sock *ss, const struct fifo *tx);
/* Moves the stack's view of a socket into its shared record and queues events for the
 * processes holding it. */
void chan_dsock_publish(struct chan_dsock *ds, uint32_t events);
void chan_dsock_close(struct chan_worker *cw, struct chan_dsock *ds);
void chan_proc_kill(struct chan_app *a, unsigned proc);
/* Runs up to budget commands from process p's ring on this worker (a bad one has the
 * process disconnected); returns the work done. */
unsigned chan_worker_run_proc(struct chan_worker *cw, struct chan_app *a, unsigned p,
			      unsigned budget);

/* --- chan_call.c (on the worker) --- */
/* Runs the call in process p's slot; false when the slot holds no call a well-behaved
 * library posts (the process is then disconnected). */
bool chan_call_run(struct chan_worker *cw, struct chan_app *a, unsigned p, unsigned slot);
/* sin6_scope_id, an interface index (netcfg_ifindex: the port plus one), as the stack's port;
 * 0 (none) and indexes of no port are NETCFG_PORT_ANY. */
uint16_t chan_scope_port(uint32_t ifindex);
/* Sets a socket option (CHAN_OPT_*) on a socket: 0 or -errno. cc: CHAN_OPT_CONGESTION's name. */
int chan_dsock_setopt(struct chan_dsock *ds, unsigned opt, uint32_t value, const char *cc);

/* --- chan_bind.c (on worker lport % nb_workers) --- */
/* Would a socket of user uid bound to laddr:lport with flags clash with a reservation? The
 * reservation self_id of (self_app, self_proc), when not 0, is the socket's own. */
bool chan_bind_conflict(const struct chan_worker *cw, uid_t uid, const struct inet_addr *laddr,
			uint16_t lport, uint32_t flags, const struct chan_app *self_app,
			unsigned self_proc, uint32_t self_id);
unsigned chan_bind_count(const struct chan_worker *cw, const struct chan_app *a);
int chan_bind_add(struct chan_worker *cw, struct chan_app *a, unsigned p,
		  const struct inet_addr *laddr,
		  uint16_t lport, uint32_t flags, uint32_t *id);
void chan_bind_drop(struct chan_worker *cw, const struct chan_app *a, unsigned p, uint32_t id);
void chan_bind_drop_proc(struct chan_worker *cw, const struct chan_app *a, unsigned p);

#endif
