/* Limits on what one application or one user may take of the daemon: applications,
 * sockets, listeners, socket-buffer memory and bind reservations. Without them a single
 * unprivileged program could fill a table every application shares (1012 listeners left
 * every other application's listen failing with ENOBUFS until it exited).
 *
 * Per-application limits apply to everyone. Per-user limits (the uid from SO_PEERCRED)
 * do not apply to root or to the daemon's own user: those can stop or reconfigure the
 * daemon anyway, and an operator's tools must not be locked out by the users they police.
 *
 * The values live in struct chan_limits (atomics): `apps limits NAME VALUE` changes them at
 * run time for every later request; what is already held above a lowered limit stays, as
 * with setrlimit(2). The names, bounds and texts come from the one list below, so the
 * CLI, `stats` and the help never drift. Pure C: unit tests link it alone. */
#ifndef DPS_CHAN_LIMIT_H
#define DPS_CHAN_LIMIT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* X(ID, name, per_user, text) */
#define CHAN_LIMIT_LIST(X) \
	X(APPS_PER_USER, "apps-per-user", true, "applications one user may attach") \
	X(SOCKS_PER_APP, "socks-per-app", false, \
	  "sockets of one application (a listener is one on each worker); raised: for the next attaches") \
	X(SOCKS_PER_USER, "socks-per-user", true, "sockets of all applications of one user") \
	X(LISTENERS_PER_USER, "listeners-per-user", true, \
	  "listening sockets of one user on each worker (at most its listener table, tcp-listeners)") \
	X(ARENA_MB_PER_APP, "arena-mb-per-app", false, \
	  "MiB of socket buffers one application may have allocated (whole blocks)") \
	X(ARENA_MB_PER_USER, "arena-mb-per-user", true, \
	  "MiB of socket buffers all applications of one user may have allocated") \
	X(BINDS_PER_APP, "binds-per-app", false, \
	  "bound TCP ports, not yet listening or connected, of one application on one worker")

enum chan_limit {
#define CHAN_LIMIT_ENUM(id, name, per_user, text) CHAN_LIMIT_##id,
	CHAN_LIMIT_LIST(CHAN_LIMIT_ENUM)
#undef CHAN_LIMIT_ENUM
	CHAN_LIMIT_COUNT
};

struct chan_limit_info {
	const char *name;
	bool per_user;
	const char *text;
};

extern const struct chan_limit_info chan_limit_info[CHAN_LIMIT_COUNT];

struct chan_limits {
	_Atomic uint32_t v[CHAN_LIMIT_COUNT];
};

/* What the daemon's resources allow at most for each limit. */
struct chan_limit_bounds {
	uint32_t max[CHAN_LIMIT_COUNT];
};

/* One user's default share of a worker's listener table (the bound of listeners-per-user):
 * 1/64, 256 of the default 16384 entries, so that many users reach their limit long before
 * the table is full and nobody's listen fails for what others hold. */
#define CHAN_LISTENERS_PER_USER_SHARE 64
#define CHAN_BINDS_PER_APP_DEFAULT 1024
/* What an application's segment holds unless socks-per-app is raised (CHAN_MAX_SOCKS_DEFAULT
 * in chan.h), and what socks-per-user's default is four times. */
#define CHAN_SOCKS_PER_APP_DEFAULT 16384

/* The defaults: the bounds, except that an application gets CHAN_SOCKS_PER_APP_DEFAULT
 * sockets, one user an eighth of the application table (at least one), 1/64 of a
 * worker's listener table (at least one), four applications' worth of
 * sockets, and one application as well as all of one user's half of ram_bytes in socket
 * buffers (counted as whole allocated blocks, an upper bound of the memory they touch). */
void chan_limits_default(struct chan_limits *l, const struct chan_limit_bounds *b,
			 uint64_t ram_bytes);
/* The limit called name, or -1. */
int chan_limit_by_name(const char *name);
static inline uint32_t chan_limit_get(const struct chan_limits *l, enum chan_limit k)
{
	return atomic_load_explicit(&l->v[k], memory_order_relaxed);
}
/* Per-user limits spare root and the daemon's own user (see above). */
static inline bool chan_limit_user_exempt(uid_t uid, uid_t daemon_uid)
{
	return uid == 0 || uid == daemon_uid;
}
/* May one more be taken, with `used` held now, under limit k for a user (exempt: false
 * when the holder is exempt from per-user limits)? */
static inline bool chan_limit_allows(const struct chan_limits *l, enum chan_limit k,
				     uint64_t used, uint64_t more, bool exempt)
{
	if (exempt && chan_limit_info[k].per_user)
		return true;
	uint64_t lim = chan_limit_get(l, k);
	if (k == CHAN_LIMIT_ARENA_MB_PER_APP || k == CHAN_LIMIT_ARENA_MB_PER_USER)
		lim <<= 20;
	return used + more <= lim && used + more >= used;
}

#endif
