/* The application channel, daemon side: the unix socket DPSTACK_SOCK where applications
 * attach, their shared segments, and the work each worker does for them between bursts
 * (commands, accepts, events, wake-ups). The shared layout is in chan_shm.h. */
#ifndef DPS_CHAN_H
#define DPS_CHAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CHAN_MAX_APPS 64
#define CHAN_MAX_SOCKS_DEFAULT 16384
#define CHAN_ARENA_MB_DEFAULT 4096     /* address space per worker and app; RAM as used */
#define CHAN_MAX_BINDS_DEFAULT 1024    /* bound, not yet listening or connected sockets */

struct worker;
struct stack;
struct chan;

struct chan_config {
	uint32_t max_socks;             /* sockets per application (a power of two) */
	uint64_t arena_mb;              /* per worker and application (a power of two) */
	uint32_t max_binds;             /* TCP bind reservations per application and worker */
};

struct chan_worker_stats {
	uint64_t cmds, bad_cmds, calls, accepts, accept_no_sock, events, wakes, udp_tx, udp_tx_err;
	uint64_t bind_limit;            /* binds refused: the application holds max_binds */
};

struct chan_server_stats {
	uint64_t attaches, joins, refused, procs_gone, apps_freed, bad_msgs;
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

#endif
