/* The library's side of a call slot (lib/dpstack/dps_attach.c): taken, posted with its
 * command, answered, given back; a caller that times out leaves its slot taken until the
 * answer comes, and a late answer that made a socket has that socket closed before the slot
 * serves another call. The daemon is played by the test: an attachment over a plain
 * anonymous segment, whose command ring and call slots the test reads and answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "test_dps_util.h"

#define MAX_SOCKS 16
#define TIMEOUT_MS 20

struct fixture {
	struct dps_attach at;
	int peer_fd;            /* the daemon's end of the connection */
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	struct chan_layout lay;
	chan_layout(&lay, 1, MAX_SOCKS, 1u << 21);
	void *base = mmap(NULL, lay.seg_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	assert_true(base != MAP_FAILED);
	f->peer_fd = dps_test_attach_init(&f->at, base, &lay);
	f->at.call_timeout_ms = TIMEOUT_MS;
	doorbell_init(&f->at.hdr->procs[0].bell);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	dps_test_attach_fini(&f->at, f->peer_fd);
	munmap(f->at.base, f->at.lay.seg_size);
	free(f);
	return 0;
}

/* The next command the library queued for worker 0, or 0 when there is none. */
static uint64_t next_cmd(struct fixture *f)
{
	uint64_t v = 0;
	int corrupt = 0;
	chan_ring_get(chan_cmd_ring(f->at.base, &f->at.lay, 0, 0), f->at.lay.cmd_mask, &v,
		      &corrupt);
	assert_int_equal(corrupt, 0);
	return v;
}

/* The daemon answers slot's call. */
static void answer(struct fixture *f, int slot, int err, uint32_t sock)
{
	struct chan_call *c = chan_call_at(f->at.base, &f->at.lay, 0, (unsigned)slot);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_POSTED);
	c->rep = (struct chan_reply){.err = err, .count = err == 0 ? 1 : 0, .socks = {sock}};
	atomic_store(&c->state, CHAN_CALL_DONE);
}

static int post_req(struct fixture *f, const struct chan_req *rq)
{
	int slot = dps_call_post(&f->at, 0, rq);
	assert_true(slot >= 0);
	assert_int_equal(next_cmd(f), chan_cmd(CHAN_CMD_CALL, (uint32_t)slot, 0));
	return slot;
}

static int post(struct fixture *f, uint32_t op)
{
	return post_req(f, &(struct chan_req){.op = op});
}

static void test_dps_call_answer_in_time_frees_the_slot(void **state)
{
	struct fixture *f = *state;
	int slot = post(f, CHAN_OP_CONNECT);
	assert_int_equal(slot, 0);
	assert_int_equal(atomic_load(&f->at.calls_free) & 1, 0); /* taken */
	answer(f, slot, EADDRINUSE, 0);
	struct chan_reply rep;
	assert_int_equal(dps_call_wait(&f->at, slot, &rep), -EADDRINUSE);
	assert_int_equal(rep.err, EADDRINUSE);
	struct chan_call *c = chan_call_at(f->at.base, &f->at.lay, 0, 0);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_IDLE);
	assert_int_equal(atomic_load(&f->at.calls_free), ~0ull);
	assert_int_equal(post(f, CHAN_OP_LINKS), 0); /* the same slot serves the next call */
}

static void test_dps_call_timed_out_slot_stays_taken_until_answered(void **state)
{
	struct fixture *f = *state;
	int slot = post(f, CHAN_OP_CONNECT);
	struct chan_reply rep;
	assert_int_equal(dps_call_wait(&f->at, slot, &rep), -ETIMEDOUT);
	assert_int_equal(atomic_load(&f->at.calls_late), 1ull << slot);
	/* The daemon may still write slot 0: the next call takes another. */
	assert_int_equal(post(f, CHAN_OP_LINKS), 1);
	assert_int_equal(next_cmd(f), 0); /* and nothing else was queued */
}

static void test_dps_call_late_answer_closes_the_socket_it_made(void **state)
{
	struct fixture *f = *state;
	int slot = post(f, CHAN_OP_CONNECT);
	struct chan_reply rep;
	assert_int_equal(dps_call_wait(&f->at, slot, &rep), -ETIMEDOUT);
	answer(f, slot, 0, 5);
	/* The next call reclaims the slot first: the connection nobody wants is closed. */
	int again = dps_call_post(&f->at, 0, &(struct chan_req){.op = CHAN_OP_LINKS});
	assert_int_equal(again, slot);
	assert_int_equal(next_cmd(f), chan_cmd(CHAN_CMD_CLOSE, 0, 5));
	assert_int_equal(next_cmd(f), chan_cmd(CHAN_CMD_CALL, (uint32_t)again, 0));
	assert_int_equal(atomic_load(&f->at.calls_late), 0);
}

static void test_dps_call_late_refusal_or_portless_bind_closes_nothing(void **state)
{
	struct fixture *f = *state;
	struct chan_reply rep;
	int refused = post(f, CHAN_OP_LISTEN), bound = post(f, CHAN_OP_BIND);
	int refused_bind = post_req(f, &(struct chan_req){.op = CHAN_OP_BIND, .lport = htons(80)});
	assert_int_equal(dps_call_wait(&f->at, refused, &rep), -ETIMEDOUT);
	assert_int_equal(dps_call_wait(&f->at, bound, &rep), -ETIMEDOUT);
	assert_int_equal(dps_call_wait(&f->at, refused_bind, &rep), -ETIMEDOUT);
	answer(f, refused, EMFILE, 0);
	answer(f, bound, 0, 7); /* port 0: the daemon reserves nothing until listen or connect */
	answer(f, refused_bind, EADDRINUSE, 0);
	int a = post(f, CHAN_OP_LINKS), b = post(f, CHAN_OP_LINKS), c = post(f, CHAN_OP_LINKS);
	assert_int_equal(a, 0);
	assert_int_equal(b, 1);
	assert_int_equal(c, 2);
	assert_int_equal(next_cmd(f), 0);
}

static void test_dps_call_late_bind_gives_up_its_reservation_in_the_same_slot(void **state)
{
	struct fixture *f = *state;
	struct chan_reply rep;
	int slot = post_req(f, &(struct chan_req){.op = CHAN_OP_BIND, .lport = htons(8080)});
	assert_int_equal(dps_call_wait(&f->at, slot, &rep), -ETIMEDOUT);
	answer(f, slot, 0, 7); /* reservation 7 */
	/* The next call reclaims the slot: it goes out again, as the reservation's UNBIND. */
	int other = dps_call_post(&f->at, 0, &(struct chan_req){.op = CHAN_OP_LINKS});
	assert_int_not_equal(other, slot);
	assert_int_equal(next_cmd(f), chan_cmd(CHAN_CMD_CALL, (uint32_t)slot, 0));
	assert_int_equal(next_cmd(f), chan_cmd(CHAN_CMD_CALL, (uint32_t)other, 0));
	struct chan_call *c = chan_call_at(f->at.base, &f->at.lay, 0, (unsigned)slot);
	assert_int_equal(c->req.op, CHAN_OP_UNBIND);
	assert_int_equal(c->req.sock, 7);
	assert_int_equal(atomic_load(&f->at.calls_late), 1ull << slot);
	assert_int_equal(atomic_load(&f->at.calls_free) & (1ull << slot), 0);
	/* Its answer frees the slot, and an unbind's answer asks for nothing more. */
	answer(f, slot, 0, 0);
	assert_int_equal(post(f, CHAN_OP_LINKS), slot);
	assert_int_equal(atomic_load(&f->at.calls_late), 0);
	assert_int_equal(next_cmd(f), 0);
}

static void test_dps_call_late_answer_naming_no_socket_of_ours_is_ignored(void **state)
{
	struct fixture *f = *state;
	int slot = post(f, CHAN_OP_UDP_OPEN);
	struct chan_reply rep;
	assert_int_equal(dps_call_wait(&f->at, slot, &rep), -ETIMEDOUT);
	answer(f, slot, 0, MAX_SOCKS); /* a broken daemon's answer: outside the segment */
	assert_int_equal(post(f, CHAN_OP_LINKS), slot);
	assert_int_equal(next_cmd(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_dps_call_answer_in_time_frees_the_slot),
		T(test_dps_call_timed_out_slot_stays_taken_until_answered),
		T(test_dps_call_late_answer_closes_the_socket_it_made),
		T(test_dps_call_late_refusal_or_portless_bind_closes_nothing),
		T(test_dps_call_late_bind_gives_up_its_reservation_in_the_same_slot),
		T(test_dps_call_late_answer_naming_no_socket_of_ours_is_ignored),
#undef T
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
