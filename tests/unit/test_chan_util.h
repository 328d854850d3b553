/* The daemon's side of the application channel for unit tests (test_chan_call.c,
 * test_accept_close_race.c): one worker with a real stack on the test EAL (10.0.0.2/24 on
 * port 0, frames sent are dropped), a channel as chan_server.c makes one, and one
 * application with its process 0 attached, as the channel makes them, which no eventfd
 * wakes. */
#ifndef DPS_TEST_CHAN_UTIL_H
#define DPS_TEST_CHAN_UTIL_H

#include "../../src/chan/chan_priv.h"
#include "../../src/chan/chan_worker.h"
#include "stack/stack.h"

#define CT_ADDR 0x0a000002u      /* 10.0.0.2 */
#define CT_MAX_SOCKS 16

struct chan_test {
	struct chan *ch;
	struct stack *stack;
	struct chan_app *a;
};

/* Fails the running cmocka test when something cannot be made. */
void chan_test_start(struct chan_test *t);
/* The application goes (its worker closes what it held), unless the test removed it (a
 * NULL t->a): what a test checks afterwards (live counts, the stack's connections) is
 * still there to read. */
void chan_test_app_end(struct chan_test *t);
/* Frees the rest (after chan_test_app_end). */
void chan_test_free(struct chan_test *t);

#endif
