/* The hierarchical timing wheel (see timer_wheel.h for what it guarantees).
 *
 * Layout: TW_LEVELS levels of 64 slots; level l covers bits 6l..6l+5 of the expiry (its
 * "digit"), so level 0 slots are 1 ms wide, level 1 slots 64 ms, level 2 about 4 s, level 3
 * about 4.5 min, level 4 about 4.7 h, level 5 about 12.4 days, and eleven levels cover all 64
 * bits. A timer due at e > now goes to the level of the highest bit in which e and now differ,
 * into the slot given by e's digit there. Hence the invariant, for every timer filed in the
 * wheel: its digits above its level equal the clock's, and its digit at its level is strictly
 * greater than the clock's. (Timers due at or before the clock wait on the pending list.)
 *
 * Advancing: the next instant at which anything must happen is the first time the clock's
 * digit at some level reaches an occupied slot, with all lower digits zero. Occupancy bitmaps
 * give it per level in a few instructions, and the lowest level that has one has the earliest
 * (a level-l event comes before the clock's next multiple of 64^(l+1), every higher-level one
 * at or after it). At that instant only that one level has an event (lower digits are zero
 * and slot 0 is never occupied), so the clock jumps there and the slot is emptied: timers due
 * exactly then fire, the others are re-filed relative to the new clock, which puts them in a
 * strictly lower level. So the cost of an advance is a bitmap scan per non-empty slot passed
 * plus at most one re-filing per level per timer, however far the clock moves; and a timer
 * fires at exactly its millisecond, in order of expiry.
 *
 * Cancel gets no wheel, so it cannot clear a slot's occupancy bit when it empties the slot:
 * the bits are hints ("may hold timers"). A stale bit costs one empty event when the clock
 * reaches it, and makes timer_wheel_next_expiry early, never late. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>

#include "timer_wheel.h"

#define TW_BITS 6
#define TW_SLOTS (1u << TW_BITS)
#define TW_LEVELS ((64 + TW_BITS - 1) / TW_BITS)

_Static_assert(TW_SLOTS == 64, "occupancy bitmaps are uint64_t");

struct timer_wheel {
	uint64_t now;
	struct tw_timer *pending;                   /* armed for <= now: fire on next advance */
	/* The timers of the slot being processed. A list, not a loose array: a callback that
	 * cancels or re-arms one of them unlinks it from here like from any slot. In the wheel
	 * rather than on advance's stack so that no timer ever points into a dead frame. */
	struct tw_timer *batch;
	uint64_t occupied[TW_LEVELS];               /* bit s: slot s may hold timers */
	struct tw_timer *slot[TW_LEVELS][TW_SLOTS];
};

static void tw_list_add(struct tw_timer **head, struct tw_timer *t)
{
	t->next = *head;
	if (t->next != NULL)
		t->next->pprev = &t->next;
	*head = t;
	t->pprev = head;
}

static void tw_unlink(struct tw_timer *t)
{
	*t->pprev = t->next;
	if (t->next != NULL)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
}

/* Moves the list at *from to *to, leaving *from empty. */
static void tw_list_move(struct tw_timer **from, struct tw_timer **to)
{
	*to = *from;
	*from = NULL;
	if (*to != NULL)
		(*to)->pprev = to;
}

static unsigned tw_digit(uint64_t t, unsigned level)
{
	return (unsigned)(t >> (level * TW_BITS)) & (TW_SLOTS - 1);
}

/* Files t relative to the wheel's clock: pending if already due, else by the invariant. */
static void tw_insert(struct timer_wheel *w, struct tw_timer *t)
{
	unsigned level, s;

	if (t->expires <= w->now) {
		tw_list_add(&w->pending, t);
		return;
	}
	level = (unsigned)(63 - __builtin_clzll(t->expires ^ w->now)) / TW_BITS;
	s = tw_digit(t->expires, level);
	tw_list_add(&w->slot[level][s], t);
	w->occupied[level] |= UINT64_C(1) << s;
}

/* The first instant after the clock at which an occupied slot is reached, and its level.
 * Returns false if no slot is occupied. */
static bool tw_next_event(const struct timer_wheel *w, uint64_t *at, unsigned *level)
{
	for (unsigned l = 0; l < TW_LEVELS; l++) {
		unsigned shift = l * TW_BITS;
		unsigned d = tw_digit(w->now, l);
		uint64_t later = d == TW_SLOTS - 1 ? 0 : ~UINT64_C(0) << (d + 1);
		uint64_t m = w->occupied[l] & later;
		uint64_t above;

		if (m == 0)
			continue;
		/* The clock's digits above this level; none above the top level. */
		above = shift + TW_BITS >= 64 ? 0 : w->now >> (shift + TW_BITS) << (shift + TW_BITS);
		*at = above | (uint64_t)__builtin_ctzll(m) << shift;
		*level = l;
		return true;
	}
	return false;
}

struct timer_wheel *timer_wheel_create(uint64_t now)
{
	struct timer_wheel *w = calloc(1, sizeof(*w));

	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	w->now = now;
	return w;
}

static void tw_list_disarm(struct tw_timer **head)
{
	struct tw_timer *t;

	while ((t = *head) != NULL)
		tw_unlink(t);
}

void timer_wheel_destroy(struct timer_wheel *w)
{
	if (w == NULL)
		return;
	/* Owners may still call tw_timer_cancel on their timers: leave none pointing in here. */
	tw_list_disarm(&w->pending);
	for (unsigned l = 0; l < TW_LEVELS; l++)
		for (unsigned s = 0; s < TW_SLOTS; s++)
			tw_list_disarm(&w->slot[l][s]);
	free(w);
}

uint64_t timer_wheel_now(const struct timer_wheel *w)
{
	return w->now;
}

void tw_timer_init(struct tw_timer *t)
{
	t->next = NULL;
	t->pprev = NULL;
	t->expires = 0;
}

void tw_timer_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t expires)
{
	if (t->pprev != NULL)
		tw_unlink(t);
	t->expires = expires;
	tw_insert(w, t);
}

void tw_timer_cancel(struct tw_timer *t)
{
	if (t->pprev != NULL)
		tw_unlink(t);
}

bool tw_timer_armed(const struct tw_timer *t)
{
	return t->pprev != NULL;
}

unsigned timer_wheel_advance(struct timer_wheel *w, uint64_t now,
			     void (*fire)(struct tw_timer *t, void *ctx), void *ctx)
{
	struct tw_timer *t;
	unsigned fired = 0;
	unsigned level;
	uint64_t at;

	/* Armed for the past since the last call. Ones armed for the past by these callbacks
	 * land on the fresh pending list and wait for the next call. */
	tw_list_move(&w->pending, &w->batch);
	while ((t = w->batch) != NULL) {
		tw_unlink(t);
		fire(t, ctx);
		fired++;
	}

	while (now > w->now && tw_next_event(w, &at, &level) && at <= now) {
		unsigned s = tw_digit(at, level);

		w->now = at;
		w->occupied[level] &= ~(UINT64_C(1) << s);
		tw_list_move(&w->slot[level][s], &w->batch);
		while ((t = w->batch) != NULL) {
			tw_unlink(t);
			if (t->expires <= at) {
				fire(t, ctx);
				fired++;
			} else {
				tw_insert(w, t);   /* lands in a lower level */
			}
		}
	}
	if (now > w->now)
		w->now = now;
	return fired;
}

uint64_t timer_wheel_next_expiry(const struct timer_wheel *w)
{
	uint64_t at;
	unsigned level;

	if (w->pending != NULL)
		return w->now;
	if (tw_next_event(w, &at, &level))
		return at;
	return UINT64_MAX;
}
