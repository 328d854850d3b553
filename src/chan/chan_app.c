/* An attached application: its memfd segment, its socket numbers, and its lifetime. The
 * segment stays until the last FIFO in it is freed, because a closed connection can still be
 * sending its last bytes (FIN-WAIT) after the application has gone. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "chan_priv.h"

_Static_assert(sizeof(struct fifo_pos) <= CHAN_ARENA_SLOT, "a FIFO's positions fit a slot");

static void *chan_mem_alloc(void *ctx, size_t bytes)
{
	struct chan_app_worker *aw = ctx;
	struct chan *ch = aw->app->chan;
	struct chan_worker *cw = &ch->cw[aw->index];
	if (!chan_limit_allows(&ch->limits, CHAN_LIMIT_ARENA_MB_PER_APP,
			       (uint64_t)atomic_load(&aw->app->arena_bytes), bytes, false)) {
		cw->st.arena_limit++;
		return NULL;
	}
	uint64_t before = aw->arena.live_bytes;
	void *p = chan_arena_alloc(&aw->arena, bytes);
	if (p == NULL)
		return NULL;
	if (!chan_arena_take(cw, aw->app, (int64_t)(aw->arena.live_bytes - before))) {
		chan_arena_free(&aw->arena, p, bytes);
		return NULL;
	}
	atomic_fetch_add(&aw->app->refs, 1);
	return p;
}

static void chan_mem_free(void *ctx, void *p, size_t bytes)
{
	struct chan_app_worker *aw = ctx;
	uint64_t before = aw->arena.live_bytes;
	chan_arena_free(&aw->arena, p, bytes);
	chan_arena_give(aw->app, (int64_t)(before - aw->arena.live_bytes));
	chan_app_unref(aw->app);
}

static void chan_app_destroy(struct chan_app *a)
{
	atomic_fetch_sub(&a->chan->live_apps, 1);
	if (a->user != NULL) {
		/* Every block is back by now (each held a reference): what is still counted are
		 * the pages of positions slots, which go with the segment. */
		chan_arena_give(a, atomic_load(&a->arena_bytes));
		chan_user_put(a->user);
	}
	if (a->w != NULL) {
		for (unsigned w = 0; w < a->lay.nb_workers; w++) {
			chan_arena_fini(&a->w[w].arena);
			free(a->w[w].free_socks);
		}
	}
	if (a->base != NULL && a->base != MAP_FAILED)
		munmap(a->base, a->lay.seg_size);
	if (a->memfd >= 0)
		close(a->memfd);
	free(a->w);
	free(a->socks);
	free(a);
}

void chan_app_unref(struct chan_app *a)
{
	if (atomic_fetch_sub(&a->refs, 1) == 1)
		chan_app_destroy(a);
}

uint64_t chan_arena_mb(const struct chan *ch, uint32_t max_socks)
{
	if (ch->cfg.arena_mb != 0)
		return ch->cfg.arena_mb;
	uint64_t socks = (max_socks + ch->nb_workers - 1) / ch->nb_workers;
	uint64_t want = socks * CHAN_ARENA_KB_PER_SOCK >> 10, mb = CHAN_ARENA_MB_MIN;
	while (mb < want)
		mb <<= 1;
	return mb;
}

/* Room for socks-per-app as it is now: raising it at run time serves the applications
 * that attach afterwards, as a raised RLIMIT_NOFILE serves the processes started
 * afterwards; a segment never shrinks below the configured one. */
static uint32_t chan_app_max_socks(const struct chan *ch)
{
	uint32_t want = chan_limit_get(&ch->limits, CHAN_LIMIT_SOCKS_PER_APP);
	uint32_t n = ch->cfg.max_socks;
	while (n < want && n < CHAN_MAX_SOCKS_LIMIT)
		n <<= 1;
	return n;
}

struct chan_app *chan_app_create(struct chan *ch, struct chan_user *user, char *err,
				 size_t errlen)
{
	struct chan_app *a = calloc(1, sizeof(*a));
	if (a == NULL) {
		chan_user_put(user);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	a->memfd = -1;
	a->chan = ch;
	a->user = user;
	atomic_fetch_add(&ch->live_apps, 1);
	atomic_init(&a->refs, 1);
	for (unsigned p = 0; p < CHAN_MAX_PROCS; p++)
		a->procs[p] = (struct chan_proc_priv){.fd = -1, .efd = -1};
	const unsigned nw = ch->nb_workers;
	uint32_t max_socks = chan_app_max_socks(ch);
	chan_layout(&a->lay, nw, max_socks, chan_arena_mb(ch, max_socks) << 20);
	a->socks = calloc(a->lay.max_socks, sizeof(*a->socks));
	a->w = calloc(nw, sizeof(*a->w));
	if (a->socks == NULL || a->w == NULL)
		goto nomem;
	/* Sealed at its size: an application that could shrink it would make the daemon fault
	 * on the next byte it touches there. */
	a->memfd = memfd_create("dpstack-app", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (a->memfd < 0 || ftruncate(a->memfd, (off_t)a->lay.seg_size) != 0 ||
	    fcntl(a->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		snprintf(err, errlen, "segment: %s", strerror(errno));
		chan_app_destroy(a);
		return NULL;
	}
	a->base = mmap(NULL, a->lay.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
		       a->memfd, 0);
	if (a->base == MAP_FAILED) {
		snprintf(err, errlen, "segment mmap: %s", strerror(errno));
		chan_app_destroy(a);
		return NULL;
	}
	a->hdr = a->base;
	a->hdr->magic = CHAN_MAGIC;
	a->hdr->version = CHAN_VERSION;
	a->hdr->nb_workers = nw;
	a->hdr->max_socks = a->lay.max_socks;
	a->hdr->seg_size = a->lay.seg_size;
	a->hdr->arena_size = a->lay.arena_size;
	for (uint32_t s = 0; s < a->lay.max_socks; s++) {
		a->socks[s].app = a;
		a->socks[s].index = s;
	}
	for (unsigned w = 0; w < nw; w++) {
		struct chan_app_worker *aw = &a->w[w];
		aw->app = a;
		aw->index = w;
		chan_arena_init(&aw->arena, a->memfd, a->base,
				a->lay.arenas_off + (uint64_t)w * a->lay.arena_size, a->lay.arena_size);
		aw->mem = (struct sock_mem){.alloc = chan_mem_alloc, .free = chan_mem_free,
					    .ctx = aw};
		uint32_t n = (a->lay.max_socks - w + nw - 1) / nw;
		aw->free_socks = malloc(n * sizeof(uint32_t));
		if (aw->free_socks == NULL)
			goto nomem;
		/* Handed out lowest first, as the kernel numbers descriptors. */
		for (uint32_t i = 0; i < n; i++)
			aw->free_socks[i] = w + (n - 1 - i) * nw;
		aw->nfree = n;
	}
	return a;
nomem:
	snprintf(err, errlen, "out of memory");
	chan_app_destroy(a);
	return NULL;
}

struct chan_dsock *chan_dsock_alloc(struct chan_app_worker *aw, uint8_t kind)
{
	if (aw->nfree == 0 || !chan_sock_take(&aw->app->chan->cw[aw->index], aw->app))
		return NULL;
	struct chan_dsock *ds = &aw->app->socks[aw->free_socks[--aw->nfree]];
	struct chan_sock *ss = chan_dsock_shm(ds);
	/* `queued` stays: a process may still have the number in its ring from the socket's
	 * previous life, and it clears the bit when it takes it out. It is not even written
	 * here: a process clearing its bit between a read and a write-back would see it set
	 * again with nothing in its ring, and never hear of the socket's new life (nginx lost
	 * about one accepted connection in 25,000 that way). */
	const size_t q = offsetof(struct chan_sock, queued), after = q + sizeof(ss->queued);
	memset(ss, 0, q);
	memset((char *)ss + after, 0, sizeof(*ss) - after);
	ss->kind = kind;
	ds->kind = kind;
	atomic_fetch_add(&aw->app->chan->live_socks, 1);
	ds->claimed = true;
	ds->holders = 0;
	ds->tcp = NULL;
	ds->udp = NULL;
	ds->udp_tx = NULL;
	ds->listener = NULL;
	ds->acc = NULL;
	ds->on_udp_tx_list = false;
	ds->udp_closing = false;
	return ds;
}

void chan_dsock_release(struct chan_dsock *ds)
{
	struct chan_app_worker *aw = &ds->app->w[ds->index % ds->app->lay.nb_workers];
	sock_fifo_free(&aw->mem, ds->rx_retired);
	ds->rx_retired = NULL;
	ds->kind = CHAN_SOCK_FREE;
	ds->holders = 0;
	atomic_fetch_sub(&ds->app->chan->live_socks, 1);
	chan_sock_give(ds->app);
	aw->free_socks[aw->nfree++] = ds->index;
}
