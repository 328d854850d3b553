/* An application's socket numbers and buffer memory on the daemon (src/chan/chan_app.c,
 * chan_user.c): the numbers each worker hands out, the shared record a new socket starts
 * with, the per-application and per-user limits and their counters, the arena blocks that
 * keep a segment alive, and the table of users. No DPDK and no workers: a channel in plain
 * memory with two worker slots. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/chan/chan_priv.h"

#define NB_WORKERS 2
#define MAX_SOCKS 8
#define DAEMON_UID 4242
#define USER_UID 1000           /* not exempt from per-user limits */

static int setup(void **state)
{
	struct chan *ch = calloc(1, sizeof(*ch));
	assert_non_null(ch);
	ch->cfg = (struct chan_config){.max_socks = MAX_SOCKS, .arena_mb = 1};
	ch->nb_workers = NB_WORKERS;
	ch->daemon_uid = DAEMON_UID;
	for (unsigned w = 0; w < NB_WORKERS; w++) {
		ch->cw[w].chan = ch;
		ch->cw[w].index = w;
	}
	ch->bounds = (struct chan_limit_bounds){.max = {
		[CHAN_LIMIT_APPS_PER_USER] = CHAN_MAX_APPS,
		[CHAN_LIMIT_SOCKS_PER_APP] = MAX_SOCKS,
		[CHAN_LIMIT_SOCKS_PER_USER] = MAX_SOCKS * CHAN_MAX_APPS,
		[CHAN_LIMIT_LISTENERS_PER_USER] = MAX_SOCKS,
		[CHAN_LIMIT_ARENA_MB_PER_APP] = NB_WORKERS,
		[CHAN_LIMIT_ARENA_MB_PER_USER] = NB_WORKERS * CHAN_MAX_APPS,
		[CHAN_LIMIT_BINDS_PER_APP] = 1024,
	}};
	chan_limits_default(&ch->limits, &ch->bounds, 1ull << 34);
	*state = ch;
	return 0;
}

static int teardown(void **state)
{
	struct chan *ch = *state;
	assert_int_equal(atomic_load(&ch->live_apps), 0);
	assert_int_equal(atomic_load(&ch->live_socks), 0);
	assert_int_equal(atomic_load(&ch->arena_bytes), 0);
	for (unsigned i = 0; i < CHAN_MAX_APPS; i++)
		assert_int_equal(atomic_load(&ch->users[i].refs), 0);
	free(ch);
	return 0;
}

static struct chan_app *app_of(struct chan *ch, uid_t uid)
{
	char err[128] = "";
	struct chan_user *u = chan_user_get(ch, uid);
	assert_non_null(u);
	struct chan_app *a = chan_app_create(ch, u, err, sizeof(err));
	assert_non_null(a);
	return a;
}

static void release_all(struct chan_app *a)
{
	for (uint32_t s = 0; s < MAX_SOCKS; s++)
		if (a->socks[s].kind != CHAN_SOCK_FREE)
			chan_dsock_release(&a->socks[s]);
}

static void test_chan_app_worker_hands_out_its_own_numbers_lowest_first(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, 0);
	for (unsigned w = 0; w < NB_WORKERS; w++)
		for (uint32_t k = 0; k < MAX_SOCKS / NB_WORKERS; k++) {
			struct chan_dsock *ds = chan_dsock_alloc(&a->w[w], CHAN_SOCK_TCP);
			assert_non_null(ds);
			assert_int_equal(ds->index, w + k * NB_WORKERS);
			assert_int_equal(chan_sock_worker(&a->lay, ds->index), w);
		}
	assert_null(chan_dsock_alloc(&a->w[0], CHAN_SOCK_UDP)); /* this worker's are all out */
	assert_int_equal(atomic_load(&ch->live_socks), MAX_SOCKS);
	assert_int_equal(atomic_load(&a->nsocks), MAX_SOCKS);
	release_all(a);
	assert_int_equal(atomic_load(&a->nsocks), 0);
	chan_app_unref(a);
}

static void test_chan_app_released_number_is_handed_out_next(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, 0);
	struct chan_dsock *first = chan_dsock_alloc(&a->w[1], CHAN_SOCK_TCP);
	struct chan_dsock *second = chan_dsock_alloc(&a->w[1], CHAN_SOCK_TCP);
	assert_int_equal(first->index, 1);
	assert_int_equal(second->index, 3);
	chan_dsock_release(first);
	assert_int_equal(first->kind, CHAN_SOCK_FREE);
	assert_int_equal(first->holders, 0);
	struct chan_dsock *again = chan_dsock_alloc(&a->w[1], CHAN_SOCK_UDP);
	assert_ptr_equal(again, first);
	assert_int_equal(again->kind, CHAN_SOCK_UDP);
	release_all(a);
	chan_app_unref(a);
}

static void test_chan_app_new_socket_record_is_clean_but_keeps_queued_bits(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, 0);
	struct chan_sock *ss = chan_sock_at(a->base, &a->lay, 0);
	/* What an application (or the socket's previous life) left in the record. */
	memset(ss, 0xa5, sizeof(*ss));
	atomic_store(&ss->queued, 0x5);
	struct chan_dsock *ds = chan_dsock_alloc(&a->w[0], CHAN_SOCK_TCP_LISTEN);
	assert_int_equal(ds->index, 0);
	assert_int_equal(ss->kind, CHAN_SOCK_TCP_LISTEN);
	assert_int_equal(atomic_load(&ss->state), 0);
	assert_int_equal(atomic_load(&ss->error), 0);
	assert_int_equal(ss->rx_off, 0);
	assert_int_equal(ss->tx_off, 0);
	assert_int_equal(ss->acc_off, 0);
	assert_int_equal(ss->lport, 0);
	/* A process may still have the number in its event ring: its bit stays for it. */
	assert_int_equal(atomic_load(&ss->queued), 0x5);
	assert_true(ds->claimed);
	assert_null(ds->tcp);
	assert_null(ds->listener);
	release_all(a);
	chan_app_unref(a);
}

static void test_chan_app_socks_per_app_limit_refuses_and_counts(void **state)
{
	struct chan *ch = *state;
	assert_int_equal(chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_APP, 3), 0);
	struct chan_app *a = app_of(ch, 0);
	for (unsigned i = 0; i < 3; i++)
		assert_non_null(chan_dsock_alloc(&a->w[i % NB_WORKERS], CHAN_SOCK_TCP));
	assert_null(chan_dsock_alloc(&a->w[1], CHAN_SOCK_TCP));
	assert_int_equal(ch->cw[1].st.sock_limit, 1);
	assert_int_equal(ch->cw[0].st.sock_limit, 0); /* counted by the refusing worker */
	chan_dsock_release(&a->socks[0]);
	assert_non_null(chan_dsock_alloc(&a->w[1], CHAN_SOCK_TCP));
	release_all(a);
	chan_app_unref(a);
}

static void test_chan_app_segment_holds_socks_per_app_as_at_its_attach(void **state)
{
	struct chan *ch = *state;
	ch->bounds.max[CHAN_LIMIT_SOCKS_PER_APP] = CHAN_MAX_SOCKS_LIMIT;
	struct chan_app *before = app_of(ch, USER_UID);
	assert_int_equal(before->lay.max_socks, MAX_SOCKS);
	/* Raised: the next application's segment has room for it (a power of two); the one
	 * attached before keeps its own, as a process keeps the RLIMIT_NOFILE it started with. */
	chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_APP, 3 * MAX_SOCKS);
	struct chan_app *after = app_of(ch, USER_UID);
	assert_int_equal(after->lay.max_socks, 4 * MAX_SOCKS);
	assert_int_equal(after->w[1].nfree, 2 * MAX_SOCKS); /* every number on its worker */
	assert_int_equal(before->lay.max_socks, MAX_SOCKS);
	struct chan_dsock *ds[3 * MAX_SOCKS + 1];
	unsigned n = 0;
	while (n < 3 * MAX_SOCKS + 1 && (ds[n] = chan_dsock_alloc(&after->w[n % NB_WORKERS],
								  CHAN_SOCK_UDP)) != NULL)
		n++;
	assert_int_equal(n, 3 * MAX_SOCKS); /* the limit, not the segment, refuses */
	for (unsigned i = 0; i < n; i++)
		chan_dsock_release(ds[i]);
	/* Lowered: segments never shrink below the configured size. */
	chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_APP, 1);
	struct chan_app *low = app_of(ch, USER_UID);
	assert_int_equal(low->lay.max_socks, MAX_SOCKS);
	/* At the bound: no more than CHAN_MAX_SOCKS_LIMIT, however small the base. */
	chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_APP, CHAN_MAX_SOCKS_LIMIT);
	struct chan_app *top = app_of(ch, USER_UID);
	assert_int_equal(top->lay.max_socks, CHAN_MAX_SOCKS_LIMIT);
	chan_app_unref(before);
	chan_app_unref(after);
	chan_app_unref(low);
	chan_app_unref(top);
}

static void test_chan_app_arena_default_grows_with_the_segment(void **state)
{
	struct chan *ch = *state;
	ch->cfg.arena_mb = 0; /* the default: 1 MiB per socket number of a worker */
	assert_int_equal(chan_arena_mb(ch, 16384), 8192);          /* two workers */
	assert_int_equal(chan_arena_mb(ch, 8), CHAN_ARENA_MB_MIN);  /* never below */
	assert_int_equal(chan_arena_mb(ch, 1u << 18), 131072);
	ch->cfg.arena_mb = 1;
	assert_int_equal(chan_arena_mb(ch, 1u << 18), 1);         /* configured: as it is */
}

static void test_chan_app_socks_per_user_limit_spans_applications(void **state)
{
	struct chan *ch = *state;
	assert_int_equal(chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_USER, 2), 0);
	struct chan_app *a = app_of(ch, USER_UID), *b = app_of(ch, USER_UID);
	struct chan_app *root = app_of(ch, 0);
	assert_ptr_equal(a->user, b->user);
	assert_non_null(chan_dsock_alloc(&a->w[0], CHAN_SOCK_TCP));
	assert_non_null(chan_dsock_alloc(&b->w[0], CHAN_SOCK_TCP));
	assert_null(chan_dsock_alloc(&b->w[1], CHAN_SOCK_TCP));
	assert_int_equal(ch->cw[1].st.user_sock_limit, 1);
	assert_int_equal(atomic_load(&a->user->socks), 2); /* the refusal undid its count */
	assert_int_equal(atomic_load(&b->nsocks), 1);
	/* Root is exempt, and so is the daemon's own user. */
	for (unsigned i = 0; i < 4; i++)
		assert_non_null(chan_dsock_alloc(&root->w[i % NB_WORKERS], CHAN_SOCK_UDP));
	struct chan_app *own = app_of(ch, DAEMON_UID);
	for (unsigned i = 0; i < 4; i++)
		assert_non_null(chan_dsock_alloc(&own->w[i % NB_WORKERS], CHAN_SOCK_UDP));
	release_all(a);
	assert_non_null(chan_dsock_alloc(&b->w[1], CHAN_SOCK_TCP));
	struct chan_app *apps[] = {a, b, root, own};
	for (unsigned i = 0; i < 4; i++) {
		release_all(apps[i]);
		chan_app_unref(apps[i]);
	}
}

static void test_chan_app_arena_blocks_keep_the_segment_until_freed(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, 0);
	struct sock_mem *m = &a->w[1].mem;
	void *p = m->alloc(m->ctx, 5000); /* rounded up to a whole 8 KiB block */
	assert_non_null(p);
	assert_true((char *)p >= (char *)a->base + a->lay.arenas_off + a->lay.arena_size);
	assert_int_equal(atomic_load(&a->arena_bytes), 8192);
	assert_int_equal(atomic_load(&ch->arena_bytes), 8192);
	assert_int_equal(atomic_load(&a->refs), 2);
	chan_app_unref(a); /* the application is gone: its segment stays for the block */
	assert_int_equal(atomic_load(&ch->live_apps), 1);
	memset(p, 1, 5000);
	m->free(m->ctx, p, 5000); /* the last block: the segment goes with it */
	assert_int_equal(atomic_load(&ch->live_apps), 0);
}

static void test_chan_app_arena_limit_refuses_and_counts(void **state)
{
	struct chan *ch = *state;
	assert_int_equal(chan_limit_set(ch, CHAN_LIMIT_ARENA_MB_PER_APP, 1), 0);
	struct chan_app *a = app_of(ch, 0);
	struct sock_mem *m0 = &a->w[0].mem, *m1 = &a->w[1].mem;
	void *p = m0->alloc(m0->ctx, 512 * 1024);
	void *q = m1->alloc(m1->ctx, 512 * 1024);
	assert_non_null(p);
	assert_non_null(q);
	/* The limit is the application's, over all of its workers' arenas. */
	assert_null(m1->alloc(m1->ctx, 4096));
	assert_int_equal(ch->cw[1].st.arena_limit, 1);
	assert_int_equal(atomic_load(&a->refs), 3); /* a refusal holds nothing */
	m0->free(m0->ctx, p, 512 * 1024);
	void *r = m1->alloc(m1->ctx, 4096);
	assert_non_null(r);
	m1->free(m1->ctx, r, 4096);
	m1->free(m1->ctx, q, 512 * 1024);
	chan_app_unref(a);
}

static void test_chan_app_arena_per_user_limit_spans_its_applications_root_exempt(void **state)
{
	struct chan *ch = *state;
	assert_int_equal(chan_limit_set(ch, CHAN_LIMIT_ARENA_MB_PER_USER, 1), 0);
	struct chan_app *a = app_of(ch, USER_UID), *b = app_of(ch, USER_UID);
	struct chan_app *root = app_of(ch, 0);
	struct sock_mem *ma = &a->w[0].mem, *mb0 = &b->w[0].mem, *mb1 = &b->w[1].mem;
	struct sock_mem *mr = &root->w[0].mem;
	void *p = ma->alloc(ma->ctx, 512 * 1024), *q = mb1->alloc(mb1->ctx, 512 * 1024);
	assert_non_null(p);
	assert_non_null(q);
	assert_int_equal(atomic_load(&a->user->arena_bytes), 1 << 20);
	/* The user's second application, on another worker: the sum is the user's. */
	assert_null(mb0->alloc(mb0->ctx, 4096));
	assert_int_equal(ch->cw[0].st.user_arena_limit, 1);
	assert_int_equal(ch->cw[0].st.arena_limit, 0);
	assert_int_equal(atomic_load(&b->refs), 2); /* a refusal holds nothing */
	assert_int_equal(atomic_load(&b->arena_bytes), 512 * 1024);
	assert_int_equal(atomic_load(&a->user->arena_bytes), 1 << 20);
	void *big = mr->alloc(mr->ctx, 1 << 20); /* root: exempt */
	assert_non_null(big);
	mr->free(mr->ctx, big, 1 << 20);
	ma->free(ma->ctx, p, 512 * 1024);
	void *r = mb0->alloc(mb0->ctx, 4096);
	assert_non_null(r);
	mb0->free(mb0->ctx, r, 4096);
	mb1->free(mb1->ctx, q, 512 * 1024);
	struct chan_user *u = a->user;
	chan_app_unref(a);
	chan_app_unref(b);
	chan_app_unref(root);
	assert_int_equal(atomic_load(&u->arena_bytes), 0);
}

static void test_chan_app_positions_slots_page_counted_until_the_segment_goes(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, USER_UID);
	struct sock_mem *m = &a->w[0].mem;
	struct chan_user *u = a->user;
	void *pos = m->alloc(m->ctx, sizeof(struct fifo_pos));
	assert_non_null(pos);
	assert_int_equal(atomic_load(&a->arena_bytes), 4096); /* the page of slots */
	assert_int_equal(atomic_load(&u->arena_bytes), 4096);
	void *more = m->alloc(m->ctx, sizeof(struct fifo_pos)); /* same page */
	assert_int_equal(atomic_load(&a->arena_bytes), 4096);
	assert_int_equal(atomic_load(&a->refs), 3); /* each slot keeps the segment too */
	m->free(m->ctx, pos, sizeof(struct fifo_pos));
	m->free(m->ctx, more, sizeof(struct fifo_pos));
	assert_int_equal(atomic_load(&ch->arena_bytes), 4096);
	chan_app_unref(a); /* the segment goes, and its page with it */
	assert_int_equal(atomic_load(&u->arena_bytes), 0);
	assert_int_equal(atomic_load(&ch->arena_bytes), 0);
}

static void test_chan_app_arena_refuses_more_than_it_holds(void **state)
{
	struct chan *ch = *state;
	struct chan_app *a = app_of(ch, 0);
	struct sock_mem *m = &a->w[0].mem;
	assert_null(m->alloc(m->ctx, (2u << 20))); /* the arena is 1 MiB */
	void *whole = m->alloc(m->ctx, 1u << 20);
	assert_non_null(whole);
	assert_null(m->alloc(m->ctx, 4096));
	m->free(m->ctx, whole, 1u << 20);
	chan_app_unref(a);
}

static void test_chan_user_entries_are_shared_per_uid_and_run_out(void **state)
{
	struct chan *ch = *state;
	struct chan_user *u = chan_user_get(ch, USER_UID), *v = chan_user_get(ch, USER_UID);
	assert_ptr_equal(u, v);
	assert_int_equal(atomic_load(&u->refs), 2);
	assert_false(u->exempt);
	struct chan_user *held[CHAN_MAX_APPS];
	for (unsigned i = 0; i < CHAN_MAX_APPS - 1; i++) {
		held[i] = chan_user_get(ch, 20000 + i);
		assert_non_null(held[i]);
	}
	assert_null(chan_user_get(ch, 1)); /* a user per application at most: full */
	assert_ptr_equal(chan_user_get(ch, 20000), held[0]); /* a known one still works */
	chan_user_put(held[0]);
	for (unsigned i = 0; i < CHAN_MAX_APPS - 1; i++)
		chan_user_put(held[i]);
	struct chan_user *r = chan_user_get(ch, 0);
	assert_non_null(r);
	assert_true(r->exempt);
	chan_user_put(r);
	chan_user_put(u);
	chan_user_put(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_chan_app_worker_hands_out_its_own_numbers_lowest_first),
		T(test_chan_app_released_number_is_handed_out_next),
		T(test_chan_app_new_socket_record_is_clean_but_keeps_queued_bits),
		T(test_chan_app_socks_per_app_limit_refuses_and_counts),
		T(test_chan_app_segment_holds_socks_per_app_as_at_its_attach),
		T(test_chan_app_arena_default_grows_with_the_segment),
		T(test_chan_app_socks_per_user_limit_spans_applications),
		T(test_chan_app_arena_blocks_keep_the_segment_until_freed),
		T(test_chan_app_arena_limit_refuses_and_counts),
		T(test_chan_app_arena_per_user_limit_spans_its_applications_root_exempt),
		T(test_chan_app_positions_slots_page_counted_until_the_segment_goes),
		T(test_chan_app_arena_refuses_more_than_it_holds),
		T(test_chan_user_entries_are_shared_per_uid_and_run_out),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
