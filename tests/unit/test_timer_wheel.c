/* The timing wheel: every timer fires at exactly its millisecond (stepping 1 ms across every
 * level boundary, and jumping to far expiries), never early, exactly once; cancel and re-arm
 * from inside the callback; timers armed for the past; big clock jumps; and a randomized run
 * against a reference (the due timers, sorted by expiry). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/timer_wheel.h"
#include "test_rand.h"

#define MAX_REC 4096

/* What the fire callback saw: which timer, and the wheel's clock at that moment. */
struct rec {
	struct timer_wheel *w;
	unsigned n;
	struct tw_timer *who[MAX_REC];
	uint64_t clock[MAX_REC];
	bool armed_inside[MAX_REC];
	/* Optional action run inside the callback. */
	void (*action)(struct rec *r, struct tw_timer *t);
	struct tw_timer *other;
	struct tw_timer *pair[2];     /* for "the other one of two due together" */
	uint64_t when;
};

static void record(struct tw_timer *t, void *ctx)
{
	struct rec *r = ctx;

	assert_true(r->n < MAX_REC);
	r->who[r->n] = t;
	r->clock[r->n] = timer_wheel_now(r->w);
	r->armed_inside[r->n] = tw_timer_armed(t);
	r->n++;
	if (r->action != NULL)
		r->action(r, t);
}

static void count_only(struct tw_timer *t, void *ctx)
{
	(void)t;
	(*(uint64_t *)ctx)++;
}

static unsigned adv(struct rec *r, uint64_t now)
{
	return timer_wheel_advance(r->w, now, record, r);
}

static struct timer_wheel *new_wheel(struct rec *r, uint64_t now)
{
	memset(r, 0, sizeof(*r));
	r->w = timer_wheel_create(now);
	assert_non_null(r->w);
	return r->w;
}

/* --- basics --- */

static void test_tw_create_starts_clock_at_now(void **state)
{
	struct timer_wheel *w = timer_wheel_create(123456789);

	assert_non_null(w);
	assert_int_equal(timer_wheel_now(w), 123456789);
	timer_wheel_destroy(w);
}

static void test_tw_destroy_null_is_noop(void **state)
{
	timer_wheel_destroy(NULL);
}

static void test_tw_timer_zeroed_is_not_armed(void **state)
{
	struct tw_timer t;

	memset(&t, 0, sizeof(t));
	assert_false(tw_timer_armed(&t));
	tw_timer_init(&t);
	assert_false(tw_timer_armed(&t));
}

static void test_tw_arm_makes_timer_armed(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 10);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(t.expires, 10);
	timer_wheel_destroy(r.w);
}

static void test_tw_cancel_unarmed_timer_is_noop(void **state)
{
	struct tw_timer t = { 0 };

	tw_timer_cancel(&t);
	tw_timer_cancel(&t);
	assert_false(tw_timer_armed(&t));
}

static void test_tw_cancel_armed_timer_never_fires(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 10);
	tw_timer_cancel(&t);
	assert_false(tw_timer_armed(&t));
	assert_int_equal(adv(&r, 1000), 0);
	assert_int_equal(r.n, 0);
	timer_wheel_destroy(r.w);
}

static void test_tw_advance_empty_wheel_fires_nothing_moves_clock(void **state)
{
	struct rec r;

	new_wheel(&r, 5);
	assert_int_equal(adv(&r, 5000), 0);
	assert_int_equal(timer_wheel_now(r.w), 5000);
	timer_wheel_destroy(r.w);
}

static void test_tw_advance_backwards_keeps_clock(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 1000);
	tw_timer_arm(r.w, &t, 1001);
	assert_int_equal(adv(&r, 10), 0);
	assert_int_equal(timer_wheel_now(r.w), 1000);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(adv(&r, 1001), 1);
	timer_wheel_destroy(r.w);
}

static void test_tw_fired_timer_is_unarmed_inside_callback(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 3);
	assert_int_equal(adv(&r, 3), 1);
	assert_false(r.armed_inside[0]);
	assert_false(tw_timer_armed(&t));
	tw_timer_cancel(&t);   /* after firing: a no-op */
	timer_wheel_destroy(r.w);
}

static void test_tw_advance_returns_number_fired(void **state)
{
	struct rec r;
	struct tw_timer t[10];

	memset(t, 0, sizeof(t));
	new_wheel(&r, 0);
	for (unsigned i = 0; i < 10; i++)
		tw_timer_arm(r.w, &t[i], 1 + i * 100);
	assert_int_equal(adv(&r, 1), 1);
	assert_int_equal(adv(&r, 400), 3);
	assert_int_equal(adv(&r, 400), 0);
	assert_int_equal(adv(&r, 100000), 6);
	assert_int_equal(r.n, 10);
	timer_wheel_destroy(r.w);
}

/* --- exact firing --- */

/* Delays on both sides of every level boundary up to level 3 (64^3 = 262144 ms). */
static const uint64_t boundary_delays[] = {
	1, 2, 62, 63, 64, 65, 127, 128, 129, 4095, 4096, 4097, 4160, 262143, 262144, 262145,
};
#define N_BOUNDARY (sizeof(boundary_delays) / sizeof(boundary_delays[0]))

/* Steps the clock 1 ms at a time; each timer must fire in the step that reaches its expiry,
 * with the wheel's clock equal to it. */
static void step_and_check_exact(uint64_t origin)
{
	struct rec r;
	struct tw_timer t[N_BOUNDARY];
	uint64_t last = origin;

	memset(t, 0, sizeof(t));
	new_wheel(&r, origin);
	for (unsigned i = 0; i < N_BOUNDARY; i++) {
		tw_timer_arm(r.w, &t[i], origin + boundary_delays[i]);
		if (origin + boundary_delays[i] > last)
			last = origin + boundary_delays[i];
	}
	for (uint64_t now = origin + 1; now <= last; now++) {
		unsigned before = r.n;
		unsigned got = adv(&r, now);

		assert_int_equal(got, r.n - before);
		for (unsigned k = before; k < r.n; k++) {
			assert_int_equal(r.who[k]->expires, now);
			assert_int_equal(r.clock[k], now);
		}
		for (unsigned i = 0; i < N_BOUNDARY; i++)
			assert_int_equal(tw_timer_armed(&t[i]), t[i].expires > now);
	}
	assert_int_equal(r.n, N_BOUNDARY);
	timer_wheel_destroy(r.w);
}

static void test_tw_step_1ms_fires_exactly_at_expiry_from_zero(void **state)
{
	step_and_check_exact(0);
}

static void test_tw_step_1ms_fires_exactly_at_expiry_from_unaligned_clock(void **state)
{
	step_and_check_exact(1000003);
}

static void test_tw_step_1ms_fires_exactly_just_before_level_rollover(void **state)
{
	/* The clock's low digits are all 63: every delay crosses several boundaries at once. */
	step_and_check_exact((UINT64_C(1) << 30) - 1);
}

static void test_tw_step_1ms_fires_exactly_near_2_pow_40(void **state)
{
	step_and_check_exact((UINT64_C(1) << 40) - 3);
}

/* Far expiries, reached by jumps: one ms before must not fire, the expiry itself must. */
static void test_tw_far_timers_fire_at_exact_ms_not_before(void **state)
{
	static const uint64_t far[] = {
		3600ull * 1000,                 /* an hour */
		7200ull * 1000 + 1,             /* TCP keepalive idle */
		86400ull * 1000,                /* a day */
		7ull * 86400 * 1000 + 12345,    /* a week */
		(UINT64_C(1) << 32) - 1,
		UINT64_C(1) << 32,
		(UINT64_C(1) << 32) + 1,
		UINT64_C(1) << 40,
		(UINT64_C(1) << 50) + 77,
	};
	const uint64_t origin = 987654321;

	for (unsigned i = 0; i < sizeof(far) / sizeof(far[0]); i++) {
		struct rec r;
		struct tw_timer t = { 0 };
		uint64_t e = origin + far[i];

		new_wheel(&r, origin);
		tw_timer_arm(r.w, &t, e);
		assert_int_equal(adv(&r, e - 1000), 0);
		assert_int_equal(adv(&r, e - 1), 0);
		assert_true(tw_timer_armed(&t));
		assert_int_equal(adv(&r, e), 1);
		assert_int_equal(r.clock[0], e);
		assert_false(tw_timer_armed(&t));
		timer_wheel_destroy(r.w);
	}
}

static void test_tw_far_timer_jump_past_expiry_fires_with_clock_at_expiry(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };
	const uint64_t e = 5ull * 86400 * 1000 + 17;

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, e);
	assert_int_equal(adv(&r, e + 3600 * 1000), 1);
	assert_int_equal(r.clock[0], e);
	assert_int_equal(timer_wheel_now(r.w), e + 3600 * 1000);
	timer_wheel_destroy(r.w);
}

static void test_tw_expiry_uint64_max_fires_only_at_uint64_max(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, UINT64_MAX);
	assert_int_equal(adv(&r, UINT64_MAX - 1), 0);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(adv(&r, UINT64_MAX), 1);
	assert_int_equal(r.clock[0], UINT64_MAX);
	timer_wheel_destroy(r.w);
}

static void test_tw_first_advance_to_1e12_fires_due_timers_only(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 }, c = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 200);
	tw_timer_arm(r.w, &b, 999999999999ull);
	tw_timer_arm(r.w, &c, 1000000000001ull);
	assert_int_equal(adv(&r, 1000000000000ull), 2);
	assert_ptr_equal(r.who[0], &a);
	assert_ptr_equal(r.who[1], &b);
	assert_true(tw_timer_armed(&c));
	assert_int_equal(adv(&r, 1000000000001ull), 1);
	timer_wheel_destroy(r.w);
}

static void test_tw_wheel_created_at_1e12_arms_relative_timers(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };
	const uint64_t t0 = 1000000000000ull;

	new_wheel(&r, t0);
	tw_timer_arm(r.w, &t, t0 + 200);
	assert_int_equal(adv(&r, t0 + 199), 0);
	assert_int_equal(adv(&r, t0 + 200), 1);
	timer_wheel_destroy(r.w);
}

static void test_tw_idle_wheel_jump_to_uint64_max_completes(void **state)
{
	struct rec r;

	new_wheel(&r, 0);
	assert_int_equal(adv(&r, UINT64_MAX), 0);
	assert_int_equal(timer_wheel_now(r.w), UINT64_MAX);
	timer_wheel_destroy(r.w);
}

static void test_tw_timers_fire_in_order_of_expiry(void **state)
{
	static const uint64_t e[] = { 500000, 3, 70, 64, 4097, 1, 262144, 65, 100000000, 2 };
	struct rec r;
	struct tw_timer t[10];

	memset(t, 0, sizeof(t));
	new_wheel(&r, 0);
	for (unsigned i = 0; i < 10; i++)
		tw_timer_arm(r.w, &t[i], e[i]);
	assert_int_equal(adv(&r, UINT64_C(1) << 40), 10);
	for (unsigned k = 1; k < 10; k++)
		assert_true(r.who[k - 1]->expires <= r.who[k]->expires);
	for (unsigned k = 0; k < 10; k++)
		assert_int_equal(r.clock[k], r.who[k]->expires);
	timer_wheel_destroy(r.w);
}

static void test_tw_many_timers_same_expiry_all_fire_once(void **state)
{
	struct rec r;
	struct tw_timer t[100];

	memset(t, 0, sizeof(t));
	new_wheel(&r, 0);
	for (unsigned i = 0; i < 100; i++)
		tw_timer_arm(r.w, &t[i], 5000);
	assert_int_equal(adv(&r, 4999), 0);
	assert_int_equal(adv(&r, 5000), 100);
	for (unsigned i = 0; i < 100; i++)
		assert_false(tw_timer_armed(&t[i]));
	timer_wheel_destroy(r.w);
}

/* --- arming in the past, re-arming --- */

static void test_tw_arm_in_past_fires_on_next_advance(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 1000);
	tw_timer_arm(r.w, &t, 10);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(adv(&r, 1000), 1);
	assert_ptr_equal(r.who[0], &t);
	timer_wheel_destroy(r.w);
}

static void test_tw_arm_at_clock_fires_on_next_advance_without_moving(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 1000);
	tw_timer_arm(r.w, &t, 1000);
	assert_int_equal(adv(&r, 1000), 1);
	assert_int_equal(adv(&r, 1000), 0);
	timer_wheel_destroy(r.w);
}

static void test_tw_arm_in_past_fires_before_wheel_timers(void **state)
{
	struct rec r;
	struct tw_timer past = { 0 }, future = { 0 };

	new_wheel(&r, 1000);
	tw_timer_arm(r.w, &future, 1001);
	tw_timer_arm(r.w, &past, 0);
	assert_int_equal(adv(&r, 2000), 2);
	assert_ptr_equal(r.who[0], &past);
	assert_ptr_equal(r.who[1], &future);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_later_does_not_fire_at_old_expiry(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 100);
	tw_timer_arm(r.w, &t, 5000);
	assert_int_equal(adv(&r, 4999), 0);
	assert_int_equal(adv(&r, 5000), 1);
	assert_int_equal(adv(&r, 100000), 0);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_earlier_fires_at_new_expiry_once(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 5000);
	tw_timer_arm(r.w, &t, 100);
	assert_int_equal(adv(&r, 99), 0);
	assert_int_equal(adv(&r, 100), 1);
	assert_int_equal(adv(&r, 100000), 0);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_same_expiry_many_times_fires_once(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	for (unsigned i = 0; i < 1000; i++)
		tw_timer_arm(r.w, &t, 300);
	assert_int_equal(adv(&r, 1000), 1);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_after_partial_advance_uses_current_clock(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 100000);
	assert_int_equal(adv(&r, 70000), 0);
	tw_timer_arm(r.w, &t, 70001);
	assert_int_equal(adv(&r, 70000), 0);
	assert_int_equal(adv(&r, 70001), 1);
	timer_wheel_destroy(r.w);
}

/* --- actions inside the callback --- */

static struct tw_timer *peer_of(struct rec *r, struct tw_timer *t)
{
	return t == r->pair[0] ? r->pair[1] : r->pair[0];
}

static void act_cancel_peer(struct rec *r, struct tw_timer *t)
{
	tw_timer_cancel(peer_of(r, t));
}

static void act_defer_peer(struct rec *r, struct tw_timer *t)
{
	tw_timer_arm(r->w, peer_of(r, t), r->when);
}

/* Two timers due at once, in the same slot: whichever fires first cancels the other. */
static void test_tw_cancel_same_slot_peer_inside_fire_prevents_it(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 50);
	tw_timer_arm(r.w, &b, 50);
	r.action = act_cancel_peer;
	r.pair[0] = &a;
	r.pair[1] = &b;
	assert_int_equal(adv(&r, 50), 1);
	assert_false(tw_timer_armed(&a));
	assert_false(tw_timer_armed(&b));
	assert_int_equal(adv(&r, 100000), 0);
	timer_wheel_destroy(r.w);
}

/* The same through a cascade: both sit in a level-2 slot until the clock reaches it. */
static void test_tw_cancel_peer_cascaded_together_inside_fire_prevents_it(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 3 * 4096);
	tw_timer_arm(r.w, &b, 3 * 4096);
	r.action = act_cancel_peer;
	r.pair[0] = &a;
	r.pair[1] = &b;
	assert_int_equal(adv(&r, 1000000), 1);
	assert_int_equal(r.clock[0], 3 * 4096);
	assert_false(tw_timer_armed(&a));
	assert_false(tw_timer_armed(&b));
	timer_wheel_destroy(r.w);
}

static void act_cancel_both(struct rec *r, struct tw_timer *t)
{
	tw_timer_cancel(r->other);
	tw_timer_cancel(t);
}

static void test_tw_cancel_later_timer_inside_fire_prevents_it(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 10);
	tw_timer_arm(r.w, &b, 20000);
	r.action = act_cancel_both;
	r.other = &b;
	assert_int_equal(adv(&r, 100000), 1);
	assert_ptr_equal(r.who[0], &a);
	assert_false(tw_timer_armed(&b));
	timer_wheel_destroy(r.w);
}

static void act_rearm_self_once(struct rec *r, struct tw_timer *t)
{
	if (r->n == 1)
		tw_timer_arm(r->w, t, r->when);
}

static void test_tw_rearm_self_inside_fire_for_later_fires_again_same_call(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 10);
	r.action = act_rearm_self_once;
	r.when = 300000;
	assert_int_equal(adv(&r, 1000000), 2);
	assert_int_equal(r.clock[0], 10);
	assert_int_equal(r.clock[1], 300000);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_self_inside_fire_beyond_now_waits(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 10);
	r.action = act_rearm_self_once;
	r.when = 1001;
	assert_int_equal(adv(&r, 1000), 1);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(adv(&r, 1001), 1);
	timer_wheel_destroy(r.w);
}

static void act_rearm_self_at_clock(struct rec *r, struct tw_timer *t)
{
	tw_timer_arm(r->w, t, timer_wheel_now(r->w));
}

static void test_tw_rearm_self_at_clock_inside_fire_fires_next_call_no_loop(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &t, 10);
	r.action = act_rearm_self_at_clock;
	assert_int_equal(adv(&r, 20), 1);
	assert_true(tw_timer_armed(&t));
	assert_int_equal(t.expires, 10);
	assert_int_equal(adv(&r, 20), 1);
	assert_int_equal(adv(&r, 20), 1);
	tw_timer_cancel(&t);
	assert_int_equal(adv(&r, 20), 0);
	timer_wheel_destroy(r.w);
}

static void act_arm_other(struct rec *r, struct tw_timer *t)
{
	if (t != r->other)
		tw_timer_arm(r->w, r->other, r->when);
}

static void test_tw_arm_other_inside_fire_within_advance_fires_same_call(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 100);
	r.action = act_arm_other;
	r.other = &b;
	r.when = 5000;
	assert_int_equal(adv(&r, 6000), 2);
	assert_ptr_equal(r.who[1], &b);
	assert_int_equal(r.clock[1], 5000);
	timer_wheel_destroy(r.w);
}

static void test_tw_arm_other_inside_fire_in_past_fires_next_call(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 100);
	r.action = act_arm_other;
	r.other = &b;
	r.when = 50;
	assert_int_equal(adv(&r, 6000), 1);
	assert_true(tw_timer_armed(&b));
	r.action = NULL;
	assert_int_equal(adv(&r, 6000), 1);
	assert_ptr_equal(r.who[1], &b);
	timer_wheel_destroy(r.w);
}

static void test_tw_rearm_same_slot_peer_inside_fire_to_later_defers_it(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 77);
	tw_timer_arm(r.w, &b, 77);
	r.action = act_defer_peer;
	r.pair[0] = &a;
	r.pair[1] = &b;
	r.when = 10000;
	assert_int_equal(adv(&r, 77), 1);
	assert_true(tw_timer_armed(peer_of(&r, r.who[0])));
	r.action = NULL;
	assert_int_equal(adv(&r, 9999), 0);
	assert_int_equal(adv(&r, 10000), 1);
	timer_wheel_destroy(r.w);
}

static void test_tw_cancel_pending_peer_inside_fire_prevents_it(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 1000);
	tw_timer_arm(r.w, &a, 1);
	tw_timer_arm(r.w, &b, 2);
	r.action = act_cancel_peer;
	r.pair[0] = &a;
	r.pair[1] = &b;
	assert_int_equal(adv(&r, 1000), 1);
	assert_false(tw_timer_armed(&a));
	assert_false(tw_timer_armed(&b));
	timer_wheel_destroy(r.w);
}

/* --- next_expiry --- */

static void test_tw_next_expiry_empty_is_uint64_max(void **state)
{
	struct rec r;

	new_wheel(&r, 7);
	assert_true(timer_wheel_next_expiry(r.w) == UINT64_MAX);
	timer_wheel_destroy(r.w);
}

static void test_tw_next_expiry_near_timer_is_exact(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 128);
	tw_timer_arm(r.w, &t, 150);
	assert_int_equal(timer_wheel_next_expiry(r.w), 150);
	timer_wheel_destroy(r.w);
}

static void test_tw_next_expiry_with_past_timer_is_clock(void **state)
{
	struct rec r;
	struct tw_timer t = { 0 };

	new_wheel(&r, 500);
	tw_timer_arm(r.w, &t, 3);
	assert_int_equal(timer_wheel_next_expiry(r.w), 500);
	timer_wheel_destroy(r.w);
}

static void test_tw_next_expiry_after_cancel_is_never_late(void **state)
{
	struct rec r;
	struct tw_timer a = { 0 }, b = { 0 };

	new_wheel(&r, 0);
	tw_timer_arm(r.w, &a, 10);
	tw_timer_arm(r.w, &b, 20);
	tw_timer_cancel(&a);
	assert_true(timer_wheel_next_expiry(r.w) <= 20);
	tw_timer_cancel(&b);
	/* Cancel leaves occupancy hints behind: early answers, and advances that fire nothing. */
	assert_true(timer_wheel_next_expiry(r.w) >= 10);
	assert_int_equal(adv(&r, 30), 0);
	assert_true(timer_wheel_next_expiry(r.w) == UINT64_MAX);
	timer_wheel_destroy(r.w);
}

/* Sleeping until next_expiry, again and again, reaches every timer at its exact expiry. */
static void test_tw_sleep_until_next_expiry_fires_each_on_time(void **state)
{
	struct rec r;
	struct tw_timer t[64];
	uint32_t seed = 0x1234567;
	unsigned loops = 0;

	memset(t, 0, sizeof(t));
	new_wheel(&r, 424242);
	for (unsigned i = 0; i < 64; i++)
		tw_timer_arm(r.w, &t[i], 424242 + 1 + rnd(&seed) % (UINT64_C(2) << (i % 32)));
	while (r.n < 64) {
		uint64_t next = timer_wheel_next_expiry(r.w);
		unsigned before = r.n;
		uint64_t earliest = UINT64_MAX;

		for (unsigned i = 0; i < 64; i++)
			if (tw_timer_armed(&t[i]) && t[i].expires < earliest)
				earliest = t[i].expires;
		assert_true(next <= earliest);
		adv(&r, next);
		for (unsigned k = before; k < r.n; k++)
			assert_int_equal(r.who[k]->expires, next);
		assert_true(++loops < 64 * 12);
	}
	timer_wheel_destroy(r.w);
}

static void test_tw_destroy_disarms_armed_timers(void **state)
{
	struct timer_wheel *w = timer_wheel_create(0);
	struct tw_timer a = { 0 }, b = { 0 }, c = { 0 };

	assert_non_null(w);
	tw_timer_arm(w, &a, 5);
	tw_timer_arm(w, &b, UINT64_C(1) << 33);
	timer_wheel_advance(w, 10, count_only, &(uint64_t){ 0 });
	tw_timer_arm(w, &c, 1);   /* pending */
	timer_wheel_destroy(w);
	assert_false(tw_timer_armed(&a));
	assert_false(tw_timer_armed(&b));
	assert_false(tw_timer_armed(&c));
	tw_timer_cancel(&b);
}

/* --- randomized against a reference --- */

#define RND_TIMERS 1500

struct model {
	struct rec r;
	struct tw_timer t[RND_TIMERS];
	bool armed[RND_TIMERS];
	uint64_t expires[RND_TIMERS];
	bool past[RND_TIMERS];        /* armed for a time <= the clock: fires first */
	uint32_t seed;
	uint64_t target;              /* now of the advance in progress */
	bool act_in_fire;
	unsigned fired;
};

static uint64_t random_delay(uint32_t *seed)
{
	switch (rnd(seed) % 8) {
	case 0:
		return rnd(seed) % 70;
	case 1:
		return rnd(seed) % 5000;
	case 2:
		return rnd(seed) % 300000;
	case 3:
		return rnd(seed) % (30u * 60 * 1000);
	case 4:
		return rnd(seed);                         /* up to 2^32 */
	case 5:
		return (uint64_t)rnd(seed) << (rnd(seed) % 20);
	case 6:
		return 64ull << (6 * (rnd(seed) % 5));    /* exact boundaries */
	default:
		return rnd(seed) % 2;
	}
}

static void model_arm(struct model *m, unsigned i, uint64_t e)
{
	uint64_t clock = timer_wheel_now(m->r.w);

	tw_timer_arm(m->r.w, &m->t[i], e);
	m->armed[i] = true;
	m->expires[i] = e;
	m->past[i] = e <= clock;
}

static void model_fire(struct tw_timer *t, void *ctx)
{
	struct model *m = ctx;
	unsigned i = (unsigned)(t - m->t);
	uint64_t clock = timer_wheel_now(m->r.w);

	assert_true(i < RND_TIMERS);
	/* Exactly once: it was armed, and now it is not. */
	assert_true(m->armed[i]);
	assert_false(tw_timer_armed(t));
	assert_int_equal(t->expires, m->expires[i]);
	/* Never early. */
	assert_true(t->expires <= m->target);
	/* Wheel timers fire with the clock at their exact expiry. */
	if (!m->past[i])
		assert_int_equal(clock, t->expires);
	m->armed[i] = false;
	m->fired++;
	if (!m->act_in_fire)
		return;
	switch (rnd(&m->seed) % 6) {
	case 0:
		model_arm(m, i, clock + random_delay(&m->seed));
		break;
	case 1: {
		unsigned j = rnd(&m->seed) % RND_TIMERS;

		tw_timer_cancel(&m->t[j]);
		m->armed[j] = false;
		break;
	}
	case 2: {
		unsigned j = rnd(&m->seed) % RND_TIMERS;

		model_arm(m, j, clock + random_delay(&m->seed));
		break;
	}
	case 3:
		model_arm(m, i, clock);   /* due again: next call */
		break;
	default:
		break;
	}
}

static void run_random_model(uint64_t origin, uint32_t seed, bool act_in_fire)
{
	struct model *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->seed = seed;
	m->act_in_fire = act_in_fire;
	m->r.w = timer_wheel_create(origin);
	assert_non_null(m->r.w);

	for (unsigned round = 0; round < 3000; round++) {
		uint64_t clock = timer_wheel_now(m->r.w);
		unsigned ops = rnd(&m->seed) % 20;
		uint64_t due_before = 0;
		unsigned got;

		for (unsigned k = 0; k < ops; k++) {
			unsigned i = rnd(&m->seed) % RND_TIMERS;
			uint32_t op = rnd(&m->seed) % 10;

			if (op < 6)
				model_arm(m, i, clock + random_delay(&m->seed));
			else if (op < 7 && clock > 100)
				model_arm(m, i, clock - rnd(&m->seed) % 100);   /* in the past */
			else {
				tw_timer_cancel(&m->t[i]);
				m->armed[i] = false;
			}
		}

		switch (rnd(&m->seed) % 10) {
		case 0:
			m->target = clock;
			break;
		case 1:
			m->target = clock + (uint64_t)rnd(&m->seed) * (rnd(&m->seed) % 64);   /* big jump */
			break;
		case 2:
			m->target = clock + rnd(&m->seed) % 4000000;
			break;
		default:
			m->target = clock + rnd(&m->seed) % 3000;
			break;
		}

		for (unsigned i = 0; i < RND_TIMERS; i++)
			if (m->armed[i] && m->expires[i] <= m->target)
				due_before++;
		m->fired = 0;
		got = timer_wheel_advance(m->r.w, m->target, model_fire, m);
		assert_int_equal(got, m->fired);
		if (!act_in_fire)
			assert_int_equal(got, due_before);
		assert_int_equal(timer_wheel_now(m->r.w), m->target);
		/* Never lost: whatever is still due was armed for the past inside a callback. */
		for (unsigned i = 0; i < RND_TIMERS; i++) {
			assert_int_equal(tw_timer_armed(&m->t[i]), m->armed[i]);
			if (m->armed[i] && m->expires[i] <= m->target)
				assert_true(act_in_fire && m->past[i]);
		}
	}
	timer_wheel_destroy(m->r.w);
	free(m);
}

static void test_tw_random_arm_cancel_advance_matches_reference(void **state)
{
	run_random_model(0, 0xc0ffee, false);
}

static void test_tw_random_from_large_clock_matches_reference(void **state)
{
	run_random_model(1000000000000ull - 12345, 0xbadf00d, false);
}

static void test_tw_random_with_arm_and_cancel_inside_fire_never_early_or_lost(void **state)
{
	run_random_model(77777, 0x5eed, true);
}

/* Sorted reference: timers armed up front fire in ascending expiry order, each at its own
 * expiry, across random advances. */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void test_tw_random_timers_fire_in_sorted_reference_order(void **state)
{
	enum { N = 3000 };
	struct tw_timer *t = calloc(N, sizeof(*t));
	uint64_t *sorted = calloc(N, sizeof(*sorted));
	struct rec *r = calloc(1, sizeof(*r));
	uint32_t seed = 0xabcdef;
	unsigned next = 0;
	uint64_t now = 55555;

	assert_non_null(t);
	assert_non_null(sorted);
	assert_non_null(r);
	r->w = timer_wheel_create(now);
	assert_non_null(r->w);
	for (unsigned i = 0; i < N; i++) {
		sorted[i] = now + 1 + random_delay(&seed);
		tw_timer_arm(r->w, &t[i], sorted[i]);
	}
	qsort(sorted, N, sizeof(*sorted), cmp_u64);
	while (next < N) {
		now += (rnd(&seed) % 4 == 0) ? (uint64_t)rnd(&seed) << (rnd(&seed) % 20)
					     : rnd(&seed) % 5000;
		r->n = 0;
		adv(r, now);
		for (unsigned k = 0; k < r->n; k++, next++) {
			assert_true(next < N);
			assert_int_equal(r->who[k]->expires, sorted[next]);
			assert_int_equal(r->clock[k], sorted[next]);
		}
		assert_true(next == N || sorted[next] > now);
	}
	timer_wheel_destroy(r->w);
	free(r);
	free(sorted);
	free(t);
}

/* 100k timers, re-armed and cancelled like a busy worker's; no timing threshold, only that it
 * completes and the counts add up. */
static void test_tw_100k_timers_rearm_cancel_advance_completes(void **state)
{
	enum { N = 100000 };
	struct tw_timer *t = calloc(N, sizeof(*t));
	struct timer_wheel *w = timer_wheel_create(0);
	uint32_t seed = 0x777;
	uint64_t fired = 0, expected = 0, now = 0;

	assert_non_null(t);
	assert_non_null(w);
	for (unsigned i = 0; i < N; i++)
		tw_timer_arm(w, &t[i], 1 + random_delay(&seed));
	for (unsigned i = 0; i < N; i += 2)
		tw_timer_arm(w, &t[i], 1 + random_delay(&seed));
	for (unsigned i = 0; i < N; i += 4)
		tw_timer_cancel(&t[i]);
	for (unsigned i = 0; i < N; i++)
		expected += tw_timer_armed(&t[i]);
	while (now < (UINT64_C(1) << 52)) {
		now += rnd(&seed) % 2 ? rnd(&seed) % 10000 : (uint64_t)rnd(&seed) << 8;
		timer_wheel_advance(w, now, count_only, &fired);
	}
	assert_int_equal(fired, expected);
	for (unsigned i = 0; i < N; i++)
		assert_false(tw_timer_armed(&t[i]));
	timer_wheel_destroy(w);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tw_create_starts_clock_at_now),
		cmocka_unit_test(test_tw_destroy_null_is_noop),
		cmocka_unit_test(test_tw_timer_zeroed_is_not_armed),
		cmocka_unit_test(test_tw_arm_makes_timer_armed),
		cmocka_unit_test(test_tw_cancel_unarmed_timer_is_noop),
		cmocka_unit_test(test_tw_cancel_armed_timer_never_fires),
		cmocka_unit_test(test_tw_advance_empty_wheel_fires_nothing_moves_clock),
		cmocka_unit_test(test_tw_advance_backwards_keeps_clock),
		cmocka_unit_test(test_tw_fired_timer_is_unarmed_inside_callback),
		cmocka_unit_test(test_tw_advance_returns_number_fired),
		cmocka_unit_test(test_tw_step_1ms_fires_exactly_at_expiry_from_zero),
		cmocka_unit_test(test_tw_step_1ms_fires_exactly_at_expiry_from_unaligned_clock),
		cmocka_unit_test(test_tw_step_1ms_fires_exactly_just_before_level_rollover),
		cmocka_unit_test(test_tw_step_1ms_fires_exactly_near_2_pow_40),
		cmocka_unit_test(test_tw_far_timers_fire_at_exact_ms_not_before),
		cmocka_unit_test(test_tw_far_timer_jump_past_expiry_fires_with_clock_at_expiry),
		cmocka_unit_test(test_tw_expiry_uint64_max_fires_only_at_uint64_max),
		cmocka_unit_test(test_tw_first_advance_to_1e12_fires_due_timers_only),
		cmocka_unit_test(test_tw_wheel_created_at_1e12_arms_relative_timers),
		cmocka_unit_test(test_tw_idle_wheel_jump_to_uint64_max_completes),
		cmocka_unit_test(test_tw_timers_fire_in_order_of_expiry),
		cmocka_unit_test(test_tw_many_timers_same_expiry_all_fire_once),
		cmocka_unit_test(test_tw_arm_in_past_fires_on_next_advance),
		cmocka_unit_test(test_tw_arm_at_clock_fires_on_next_advance_without_moving),
		cmocka_unit_test(test_tw_arm_in_past_fires_before_wheel_timers),
		cmocka_unit_test(test_tw_rearm_later_does_not_fire_at_old_expiry),
		cmocka_unit_test(test_tw_rearm_earlier_fires_at_new_expiry_once),
		cmocka_unit_test(test_tw_rearm_same_expiry_many_times_fires_once),
		cmocka_unit_test(test_tw_rearm_after_partial_advance_uses_current_clock),
		cmocka_unit_test(test_tw_cancel_same_slot_peer_inside_fire_prevents_it),
		cmocka_unit_test(test_tw_cancel_peer_cascaded_together_inside_fire_prevents_it),
		cmocka_unit_test(test_tw_cancel_later_timer_inside_fire_prevents_it),
		cmocka_unit_test(test_tw_rearm_self_inside_fire_for_later_fires_again_same_call),
		cmocka_unit_test(test_tw_rearm_self_inside_fire_beyond_now_waits),
		cmocka_unit_test(test_tw_rearm_self_at_clock_inside_fire_fires_next_call_no_loop),
		cmocka_unit_test(test_tw_arm_other_inside_fire_within_advance_fires_same_call),
		cmocka_unit_test(test_tw_arm_other_inside_fire_in_past_fires_next_call),
		cmocka_unit_test(test_tw_rearm_same_slot_peer_inside_fire_to_later_defers_it),
		cmocka_unit_test(test_tw_cancel_pending_peer_inside_fire_prevents_it),
		cmocka_unit_test(test_tw_next_expiry_empty_is_uint64_max),
		cmocka_unit_test(test_tw_next_expiry_near_timer_is_exact),
		cmocka_unit_test(test_tw_next_expiry_with_past_timer_is_clock),
		cmocka_unit_test(test_tw_next_expiry_after_cancel_is_never_late),
		cmocka_unit_test(test_tw_sleep_until_next_expiry_fires_each_on_time),
		cmocka_unit_test(test_tw_destroy_disarms_armed_timers),
		cmocka_unit_test(test_tw_random_arm_cancel_advance_matches_reference),
		cmocka_unit_test(test_tw_random_from_large_clock_matches_reference),
		cmocka_unit_test(test_tw_random_with_arm_and_cancel_inside_fire_never_early_or_lost),
		cmocka_unit_test(test_tw_random_timers_fire_in_sorted_reference_order),
		cmocka_unit_test(test_tw_100k_timers_rearm_cancel_advance_completes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
