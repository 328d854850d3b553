/* A hierarchical timing wheel for the per-connection TCP timers (retransmission, delayed ACK,
 * persist, keepalive, TIME_WAIT, user timeout), one wheel per worker.
 *
 * Why a wheel: a busy worker holds up to millions of timers that are re-armed on almost every
 * segment and rarely fire. Arming, re-arming and cancelling are O(1) list operations on an
 * intrusive node (no allocation, so they cannot fail), and running the wheel costs O(1)
 * amortised per timer: a timer moves down at most one level per cascade, and an empty stretch
 * of time is skipped through per-level occupancy bitmaps, so a worker that slept for an hour,
 * or a first call with now = 10^12, costs a few bitmap scans, not one step per millisecond.
 *
 * Precision: time is in milliseconds (any monotonic origin). A timer fires in the first
 * timer_wheel_advance whose now >= its expiry, never earlier: cascading re-files a far timer
 * into finer levels until it sits in a 1 ms slot, so even a timer days away fires at its
 * exact millisecond. The levels cover all 64 bits of expiry, so no expiry is clamped.
 *
 * Not thread-safe: each worker owns its wheel (docs/ARCHITECTURE.md: workers share nothing
 * they write, and nothing on the packet path takes a lock). */
#ifndef DPS_BASE_TIMER_WHEEL_H
#define DPS_BASE_TIMER_WHEEL_H

#include <stdbool.h>
#include <stdint.h>

/* Embedded in the owner (a connection). All-zero, or tw_timer_init, means not armed. */
struct tw_timer {
	struct tw_timer *next;
	struct tw_timer **pprev;   /* NULL when not armed */
	uint64_t expires;          /* ms; meaningful while armed */
};

struct timer_wheel;

/* A wheel whose clock starts at now. Returns NULL with errno = ENOMEM on failure. */
struct timer_wheel *timer_wheel_create(uint64_t now);

/* Frees the wheel; timers still armed on it are disarmed (tw_timer_armed becomes false). */
void timer_wheel_destroy(struct timer_wheel *w);

/* The wheel's clock: the now of the last timer_wheel_advance (or of create). */
uint64_t timer_wheel_now(const struct timer_wheel *w);

void tw_timer_init(struct tw_timer *t);

/* Arms t to fire at expires, re-arming it (on this wheel) if it is armed. An expiry at or
 * before the wheel's clock fires on the next timer_wheel_advance. Also allowed from inside
 * a fire callback. */
void tw_timer_arm(struct timer_wheel *w, struct tw_timer *t, uint64_t expires);

/* Disarms t; does nothing if it is not armed. Also allowed from inside a fire callback. */
void tw_timer_cancel(struct tw_timer *t);

bool tw_timer_armed(const struct tw_timer *t);

/* Moves the wheel's clock to now (never backwards) and fires every timer with
 * expires <= now exactly once, calling fire(t, ctx) after unlinking t (so it is not armed
 * inside the callback). Order: first the timers that were armed for an already passed time
 * (tw_timer_arm with expires <= the clock), in no particular order, then the others in order
 * of expiry. fire may arm or cancel any timer, including t and the
 * others due in this call. A timer armed during the call for a time still ahead of the
 * expiries being processed fires in this call; one armed for a time already passed fires on
 * the next call (so a callback that re-arms itself at now cannot loop forever). Not
 * re-entrant: fire must not call timer_wheel_advance. Returns the number of timers fired. */
unsigned timer_wheel_advance(struct timer_wheel *w, uint64_t now,
			     void (*fire)(struct tw_timer *t, void *ctx), void *ctx);

/* A time at or before the earliest pending expiry (UINT64_MAX if nothing is armed): exact for
 * timers in the finest level, else the start of the coarser slot holding the earliest, so a
 * worker may sleep until then and never wake up late. Returns the wheel's clock if timers
 * armed for the past wait for the next advance. */
uint64_t timer_wheel_next_expiry(const struct timer_wheel *w);

#endif
