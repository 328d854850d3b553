/* The sockets of a dead daemon (lib/dpstack/dps_orphan.c): at its first look the library
 * makes a socket's shared record one that a reset ended, with tcp_reset's error for the
 * state it was in (net/ipv4/tcp_input.c), once; a UDP socket is shut down both ways without
 * an error. The daemon is played by the test: an attachment over a plain anonymous segment
 * whose socket records the test writes. */
#include <errno.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "../../lib/dpstack/dps_priv.h"

#define SOCK 3

struct fixture {
	struct dps_attach at;
	struct dps_file file;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	struct dps_attach *at = &fx->at;
	chan_layout(&at->lay, 1, 16, 1u << 21);
	at->base = mmap(NULL, at->lay.seg_size, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(at->base != MAP_FAILED);
	at->hdr = at->base;
	atomic_store(&at->hdr->procs[0].attached, 1);
	fx->file = (struct dps_file){.kind = DPS_TCP, .at = at, .socks = {SOCK}, .nsocks = 1};
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	munmap(fx->at.base, fx->at.lay.seg_size);
	free(fx);
	return 0;
}

static struct chan_sock *record(struct fixture *fx)
{
	return dps_sock(&fx->at, SOCK);
}

/* The record in state st, its daemon gone: what a first look leaves in its error. */
static uint32_t error_after_death(struct fixture *fx, uint32_t st)
{
	atomic_store(&record(fx)->state, st);
	atomic_store(&fx->at.dead, true);
	uint32_t seen = dps_sock_state(&fx->file);
	assert_int_equal(seen, atomic_load(&record(fx)->state));
	assert_true(seen & CHAN_SS_ORPHAN);
	assert_true(seen & CHAN_SS_HUP);
	uint32_t err = atomic_exchange(&record(fx)->error, 0);
	assert_int_equal((seen & CHAN_SS_ERR) != 0, err != 0);
	return err;
}

static void test_live_daemon_state_as_published(void **state)
{
	struct fixture *fx = *state;
	atomic_store(&record(fx)->state, CHAN_SS_CONNECTED);
	assert_int_equal(dps_sock_state(&fx->file), CHAN_SS_CONNECTED);
	assert_int_equal(atomic_load(&record(fx)->error), 0);
}

static void test_established_connection_of_dead_daemon_reset_econnreset(void **state)
{
	assert_int_equal(error_after_death(*state, CHAN_SS_CONNECTED), ECONNRESET);
}

/* tcp_reset: "case TCP_CLOSE_WAIT: err = EPIPE". */
static void test_close_wait_connection_of_dead_daemon_reset_epipe(void **state)
{
	assert_int_equal(error_after_death(*state, CHAN_SS_CONNECTED | CHAN_SS_RDHUP), EPIPE);
}

static void test_last_ack_connection_of_dead_daemon_reset_econnreset(void **state)
{
	assert_int_equal(error_after_death(*state, CHAN_SS_CONNECTED | CHAN_SS_RDHUP |
							   CHAN_SS_WRSHUT),
			 ECONNRESET);
}

/* An RST answering the SYN: "case TCP_SYN_SENT: err = ECONNREFUSED". */
static void test_connecting_socket_of_dead_daemon_refused(void **state)
{
	assert_int_equal(error_after_death(*state, 0), ECONNREFUSED);
}

/* tcp_reset returns at once in TCP_CLOSE: a connection already over gets no new error. */
static void test_connection_already_reset_gets_no_second_error(void **state)
{
	assert_int_equal(error_after_death(*state, CHAN_SS_CONNECTED | CHAN_SS_HUP), 0);
}

static void test_pending_error_of_dead_daemon_socket_kept(void **state)
{
	struct fixture *fx = *state;
	atomic_store(&record(fx)->error, ETIMEDOUT);
	assert_int_equal(error_after_death(fx, CHAN_SS_CONNECTED | CHAN_SS_HUP | CHAN_SS_ERR),
			 ETIMEDOUT);
}

static void test_udp_socket_of_dead_daemon_shut_without_error(void **state)
{
	struct fixture *fx = *state;
	fx->file.kind = DPS_UDP;
	assert_int_equal(error_after_death(fx, 0), 0);
}

/* A socket the daemon freed while this process still holds it (it let go of the process). */
static void test_socket_freed_under_live_attachment_reset(void **state)
{
	struct fixture *fx = *state;
	atomic_store(&record(fx)->state, CHAN_SS_CONNECTED | CHAN_SS_CLOSED);
	uint32_t st = dps_sock_state(&fx->file);
	assert_true(st & CHAN_SS_HUP);
	assert_int_equal(atomic_load(&record(fx)->error), ECONNRESET);
}

/* The segment says the daemon ended (its life word, as the kernel marks it at the vigil
 * thread's death) before anything set the attachment's flag: the first look sees it. */
static void test_daemon_death_seen_in_life_word_without_a_call(void **state)
{
	struct fixture *fx = *state;
	atomic_store(&record(fx)->state, CHAN_SS_CONNECTED);
	atomic_store(&fx->at.hdr->daemon_life, 1234u | FUTEX_OWNER_DIED);
	assert_true(dps_sock_state(&fx->file) & CHAN_SS_HUP);
	assert_int_equal(atomic_load(&record(fx)->error), ECONNRESET);
}

static void test_error_taken_once_then_never_armed_again(void **state)
{
	struct fixture *fx = *state;
	assert_int_equal(error_after_death(fx, CHAN_SS_CONNECTED), ECONNRESET);
	for (int i = 0; i < 3; i++) {
		assert_true(dps_sock_state(&fx->file) & CHAN_SS_HUP);
		assert_int_equal(atomic_load(&record(fx)->error), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_live_daemon_state_as_published),
		T(test_established_connection_of_dead_daemon_reset_econnreset),
		T(test_close_wait_connection_of_dead_daemon_reset_epipe),
		T(test_last_ack_connection_of_dead_daemon_reset_econnreset),
		T(test_connecting_socket_of_dead_daemon_refused),
		T(test_connection_already_reset_gets_no_second_error),
		T(test_pending_error_of_dead_daemon_socket_kept),
		T(test_udp_socket_of_dead_daemon_shut_without_error),
		T(test_socket_freed_under_live_attachment_reset),
		T(test_daemon_death_seen_in_life_word_without_a_call),
		T(test_error_taken_once_then_never_armed_again),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
