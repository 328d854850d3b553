/* The library's side of the application channel for unit tests (test_dps_call.c,
 * test_accept_close_race.c): an attachment as dps_attach.c makes one from the daemon's
 * answer, without the exchange on the unix socket, over a segment the test provides. */
#ifndef DPS_TEST_DPS_UTIL_H
#define DPS_TEST_DPS_UTIL_H

#include "../../lib/dpstack/dps_priv.h"

/* at over the segment at base laid out as lay, with one worker; its unix connection is a
 * socket pair whose other end (the daemon's) is returned. Fails the running cmocka test
 * when something cannot be made. */
int dps_test_attach_init(struct dps_attach *at, void *base, const struct chan_layout *lay);
/* Closes what dps_test_attach_init opened, and the daemon's end peer_fd. */
void dps_test_attach_fini(struct dps_attach *at, int peer_fd);

#endif
