/* Accounting against the limits of chan_limit.h: each application's and each user's
 * sockets and socket buffers, and the table of users with live applications. */
#include <errno.h>
#include <string.h>

#include "chan_priv.h"

struct chan_user *chan_user_get(struct chan *ch, uid_t uid)
{
	struct chan_user *free_slot = NULL;
	for (unsigned i = 0; i < CHAN_MAX_APPS; i++) {
		struct chan_user *u = &ch->users[i];
		/* Only this thread raises refs from 0, so a slot seen free stays free. */
		if (atomic_load(&u->refs) == 0) {
			if (free_slot == NULL)
				free_slot = u;
		} else if (atomic_load(&u->uid) == (uint32_t)uid) {
			atomic_fetch_add(&u->refs, 1);
			return u;
		}
	}
	if (free_slot == NULL)
		return NULL;
	atomic_store(&free_slot->uid, (uint32_t)uid);
	free_slot->exempt = chan_limit_user_exempt(uid, ch->daemon_uid);
	atomic_store(&free_slot->refs, 1);
	return free_slot;
}

void chan_user_put(struct chan_user *u)
{
	atomic_fetch_sub(&u->refs, 1);
}

bool chan_sock_take(struct chan_worker *cw, struct chan_app *a)
{
	const struct chan_limits *l = &cw->chan->limits;
	if (!chan_limit_allows(l, CHAN_LIMIT_SOCKS_PER_APP, (uint64_t)atomic_load(&a->nsocks), 1,
			       false)) {
		cw->st.sock_limit++;
		return false;
	}
	/* Workers take sockets of one user at once: the add decides, and undoes itself. */
	int64_t before = atomic_fetch_add(&a->user->socks, 1);
	if (!chan_limit_allows(l, CHAN_LIMIT_SOCKS_PER_USER, (uint64_t)before, 1,
			       a->user->exempt)) {
		atomic_fetch_sub(&a->user->socks, 1);
		cw->st.user_sock_limit++;
		return false;
	}
	atomic_fetch_add(&a->nsocks, 1);
	return true;
}

void chan_sock_give(struct chan_app *a)
{
	atomic_fetch_sub(&a->nsocks, 1);
	atomic_fetch_sub(&a->user->socks, 1);
}

bool chan_arena_take(struct chan_worker *cw, struct chan_app *a, int64_t bytes)
{
	/* As for sockets: the add decides, and undoes itself. */
	struct chan_user *u = a->user;
	int64_t before = atomic_fetch_add(&u->arena_bytes, bytes);
	if (!chan_limit_allows(&cw->chan->limits, CHAN_LIMIT_ARENA_MB_PER_USER,
			       before > 0 ? (uint64_t)before : 0, (uint64_t)bytes, u->exempt)) {
		atomic_fetch_sub(&u->arena_bytes, bytes);
		cw->st.user_arena_limit++;
		return false;
	}
	atomic_fetch_add(&a->arena_bytes, bytes);
	atomic_fetch_add(&a->chan->arena_bytes, bytes);
	return true;
}

void chan_arena_give(struct chan_app *a, int64_t bytes)
{
	atomic_fetch_sub(&a->user->arena_bytes, bytes);
	atomic_fetch_sub(&a->arena_bytes, bytes);
	atomic_fetch_sub(&a->chan->arena_bytes, bytes);
}

unsigned chan_users(struct chan *ch, struct chan_user_use *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < CHAN_MAX_APPS && n < max; i++) {
		struct chan_user *u = &ch->users[i];
		if (atomic_load(&u->refs) == 0)
			continue;
		struct chan_user_use *o = &out[n++];
		memset(o, 0, sizeof(*o));
		o->uid = atomic_load(&u->uid);
		o->exempt = u->exempt;
		o->apps = atomic_load(&u->apps);
		int64_t socks = atomic_load(&u->socks);
		o->socks = socks > 0 ? (uint64_t)socks : 0;
		int64_t arena = atomic_load(&u->arena_bytes);
		o->arena_bytes = arena > 0 ? (uint64_t)arena : 0;
		for (unsigned w = 0; w < ch->nb_workers; w++) {
			uint32_t l = atomic_load(&u->listeners[w]);
			if (l > o->listeners)
				o->listeners = l;
		}
	}
	return n;
}

void chan_limits_read(struct chan *ch, uint32_t now[CHAN_LIMIT_COUNT],
		      struct chan_limit_bounds *bounds)
{
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		now[k] = chan_limit_get(&ch->limits, k);
	*bounds = ch->bounds;
}

int chan_limit_set(struct chan *ch, enum chan_limit k, uint32_t v)
{
	if ((unsigned)k >= CHAN_LIMIT_COUNT || v > ch->bounds.max[k])
		return -ERANGE;
	atomic_store(&ch->limits.v[k], v);
	return 0;
}
