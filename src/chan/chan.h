/* The application channel, daemon side: the unix socket DPSTACK_SOCK where applications
 * attach, their shared segments, and the work each worker does for them between bursts
 * (commands, accepts, events, wake-ups). The shared layout is in chan_shm.h. */
#ifndef DPS_CHAN_H
#define DPS_CHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chan_limit.h"

#define CHAN_MAX_APPS 256              /* attached at once, all users together */
#define CHAN_MAX_SOCKS_DEFAULT CHAN_SOCKS_PER_APP_DEFAULT
/* socks-per-app's bound. An application's segment holds socks-per-app as it is when the
 * application attaches (rounded up to a power of two, at least chan_config.max_socks): each
 * socket number costs a record and event-ring entries in the segment and 1 MiB of arena
 * address space on its worker (CHAN_ARENA_KB_PER_SOCK), RAM only as touched. */
#define CHAN_MAX_SOCKS_LIMIT (1u << 18)
/* A worker's arena in each application's segment is address space, RAM only as touched:
 * by default big enough that every socket number of the worker can be a connection with
 * twice the default buffers (two 256 KiB FIFOs, room for SO_SNDBUF and receive autotuning
 * to grow some), and never below CHAN_ARENA_MB_MIN. */
#define CHAN_ARENA_MB_MIN 4096
#define CHAN_ARENA_KB_PER_SOCK 1024

struct worker;
struct stack;
struct chan;

struct chan_config {
	uint32_t max_socks;             /* sockets of the smallest segment (a power of two) */
	uint64_t arena_mb;              /* per worker and application (a power of two); 0: the
					 * default for max_socks (CHAN_ARENA_KB_PER_SOCK) */
};

struct chan_worker_stats {
	uint64_t cmds, bad_cmds, calls, accepts, accept_no_sock, events, wakes, udp_tx, udp_tx_err;
	/* Refusals by limit (chan_limit.h): binds-per-app, socks-per-app, socks-per-user,
	 * listeners-per-user, arena-mb-per-app, arena-mb-per-user. */
	uint64_t bind_limit, sock_limit, user_sock_limit, listen_limit, arena_limit;
	uint64_t user_arena_limit;
	uint64_t budget_yields;         /* UDP send FIFOs left for the next round (CHAN_UDP_BUDGET) */
};

struct chan_server_stats {
	uint64_t attaches, joins, refused, procs_gone, apps_freed, bad_msgs;
	uint64_t app_limit;             /* attaches refused: the user holds apps-per-user */
	/* Gauges: what exists now. A segment outlives its application while connections it
	 * closed finish sending; all three return to 0 once everything is reclaimed. */
	uint64_t live_apps, live_socks, arena_bytes;
};

/* Creates the channel for the workers (not yet running) and listens on path. */
struct chan *chan_create(const struct chan_config *cfg, struct worker *workers, unsigned n,
			 const char *path, char *err, size_t errlen);
/* Serves applications on a thread of its own, once the workers run. */
int chan_start(struct chan *ch);
/* Stops serving: every application sees its connection end, and the workers drop their
 * sockets. Call before the workers stop. */
void chan_stop(struct chan *ch);
/* Frees what is left, once the workers' stacks are gone. */
void chan_destroy(struct chan *ch);

void chan_stats(struct chan *ch, struct chan_server_stats *srv, struct chan_worker_stats *wk);

/* The limits now and the most each may be set to. */
void chan_limits_read(struct chan *ch, uint32_t now[CHAN_LIMIT_COUNT],
		      struct chan_limit_bounds *bounds);
/* Sets limit k for every later request: 0, or -ERANGE when v is beyond its bound. */
int chan_limit_set(struct chan *ch, enum chan_limit k, uint32_t v);

/* What one user holds now. */
struct chan_user_use {
	uint32_t uid;
	bool exempt;                    /* from per-user limits (root, the daemon's user) */
	uint32_t apps, listeners;       /* listeners: on the worker where it holds most */
	uint64_t socks;
	uint64_t arena_bytes;           /* socket buffers, as arena-mb-per-user counts them */
};
/* Fills out with up to max users holding something; returns how many. */
unsigned chan_users(struct chan *ch, struct chan_user_use *out, unsigned max);

#endif
