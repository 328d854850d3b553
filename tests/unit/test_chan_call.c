/* A process's call slots on the daemon (src/chan/chan_call.c, chan_worker.c): a posted call
 * is run once, answered and marked done, and the process's bell is due; a CALL command that
 * names a slot the process did not post (idle, already answered, out of the table) or an
 * operation no library sends disconnects the process, leaving the slot as it was; a failed
 * call answers its errno and no socket. One worker with a real stack on the test EAL, an
 * application made as the channel makes one, commands put on its ring as a library would. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_chan_util.h"
#include "test_eal.h"
#include "base/fifo.h"
#include "tcp/tcp_priv.h"

static int setup(void **state)
{
	struct chan_test *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	chan_test_start(f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct chan_test *f = *state;
	chan_test_app_end(f);
	assert_int_equal(atomic_load(&f->ch->live_socks), 0);
	assert_int_equal(atomic_load(&f->ch->live_apps), 0);
	assert_int_equal(f->stack->tcp->nconns, 0);
	chan_test_free(f);
	free(f);
	return 0;
}

static struct chan_call *slot_at(struct chan_test *f, unsigned slot)
{
	return chan_call_at(f->a->base, &f->a->lay, 0, slot);
}

/* What the library does: the request into the slot, the slot posted, then the command. */
static void post(struct chan_test *f, unsigned slot, const struct chan_req *rq)
{
	struct chan_call *c = slot_at(f, slot);
	c->req = *rq;
	atomic_store(&c->state, CHAN_CALL_POSTED);
}

static void queue(struct chan_test *f, enum chan_cmd_op op, uint32_t arg, uint32_t sock)
{
	assert_true(chan_ring_put(chan_cmd_ring(f->a->base, &f->a->lay, 0, 0), f->a->lay.cmd_mask,
				  chan_cmd(op, arg, sock)));
}

static void run(struct chan_test *f)
{
	chan_worker_run_proc(&f->ch->cw[0], f->a, 0, 256);
}

static bool disconnected(struct chan_test *f)
{
	return atomic_load(&f->a->procs[0].kill);
}

static void test_chan_call_posted_call_is_answered_once_and_rings_the_process(void **state)
{
	struct chan_test *f = *state;
	post(f, 5, &(struct chan_req){.op = CHAN_OP_LINKS});
	queue(f, CHAN_CMD_CALL, 5, 0);
	run(f);
	struct chan_call *c = slot_at(f, 5);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_DONE);
	assert_int_equal(c->rep.err, 0);
	assert_int_equal(c->rep.u.links.nlinks, 1);
	assert_string_equal(c->rep.u.links.links[0].name, "port0");
	assert_int_equal(c->rep.u.links.naddrs, 1);
	assert_int_equal(c->rep.u.links.addrs[0].addr, htonl(CT_ADDR));
	assert_int_equal(f->a->w[0].wake, 1); /* process 0's bell is due */
	assert_int_equal(f->ch->cw[0].st.calls, 1);
	assert_false(disconnected(f));
}

static void test_chan_call_idle_slot_disconnects_the_process(void **state)
{
	struct chan_test *f = *state;
	struct chan_call *c = slot_at(f, 2);
	c->req = (struct chan_req){.op = CHAN_OP_LINKS};
	c->rep.err = 77; /* untouched by a refused call */
	queue(f, CHAN_CMD_CALL, 2, 0);
	post(f, 3, &(struct chan_req){.op = CHAN_OP_LINKS});
	queue(f, CHAN_CMD_CALL, 3, 0);
	run(f);
	assert_true(disconnected(f));
	assert_int_equal(f->ch->cw[0].st.bad_cmds, 1);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_IDLE);
	assert_int_equal(c->rep.err, 77);
	/* Nothing after the bad command runs, then or later. */
	assert_int_equal(atomic_load(&slot_at(f, 3)->state), CHAN_CALL_POSTED);
	run(f);
	assert_int_equal(atomic_load(&slot_at(f, 3)->state), CHAN_CALL_POSTED);
	assert_int_equal(f->ch->cw[0].st.calls, 0);
}

static void test_chan_call_answered_slot_is_not_run_again(void **state)
{
	struct chan_test *f = *state;
	post(f, 0, &(struct chan_req){.op = CHAN_OP_SETOPT, .sock = 9});
	queue(f, CHAN_CMD_CALL, 0, 0);
	run(f);
	struct chan_call *c = slot_at(f, 0);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_DONE);
	assert_int_equal(c->rep.err, EBADF);
	/* The process has not taken the answer yet and names the slot again. */
	c->req.op = CHAN_OP_LINKS;
	queue(f, CHAN_CMD_CALL, 0, 0);
	run(f);
	assert_true(disconnected(f));
	assert_int_equal(c->rep.err, EBADF);
	assert_int_equal(f->ch->cw[0].st.calls, 1);
}

static void test_chan_call_slot_beyond_the_table_disconnects(void **state)
{
	struct chan_test *f = *state;
	queue(f, CHAN_CMD_CALL, CHAN_CALL_SLOTS, 0);
	run(f);
	assert_true(disconnected(f));
}

static void test_chan_call_unknown_operation_disconnects_and_keeps_the_slot(void **state)
{
	struct chan_test *f = *state;
	post(f, 1, &(struct chan_req){.op = CHAN_OP_ATTACH}); /* the unix socket's, not a call */
	queue(f, CHAN_CMD_CALL, 1, 0);
	run(f);
	assert_true(disconnected(f));
	assert_int_equal(atomic_load(&slot_at(f, 1)->state), CHAN_CALL_POSTED);
}

static void test_chan_call_failure_answers_errno_without_sockets(void **state)
{
	struct chan_test *f = *state;
	/* A port below 1024 for a user that is not root: EACCES, as without
	 * CAP_NET_BIND_SERVICE. */
	post(f, 4, &(struct chan_req){.op = CHAN_OP_LISTEN, .laddr = inet_addr_v4(CT_ADDR),
				      .lport = htons(80), .backlog = 4});
	queue(f, CHAN_CMD_CALL, 4, 0);
	run(f);
	struct chan_call *c = slot_at(f, 4);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_DONE);
	assert_int_equal(c->rep.err, EACCES);
	assert_int_equal(c->rep.count, 0);
	assert_int_equal(atomic_load(&f->ch->live_socks), 0);
	assert_false(disconnected(f));
}

static void test_chan_call_listen_answers_a_socket_and_close_gives_it_back(void **state)
{
	struct chan_test *f = *state;
	post(f, 0, &(struct chan_req){.op = CHAN_OP_LISTEN, .laddr = inet_addr_v4(CT_ADDR),
				      .lport = htons(8080), .backlog = 100});
	queue(f, CHAN_CMD_CALL, 0, 0);
	run(f);
	struct chan_call *c = slot_at(f, 0);
	assert_int_equal(c->rep.err, 0);
	assert_int_equal(c->rep.count, 1);
	uint32_t s = c->rep.socks[0];
	assert_int_equal(s, 0);
	const struct chan_sock *ss = chan_sock_at(f->a->base, &f->a->lay, s);
	assert_int_equal(atomic_load(&ss->state), CHAN_SS_LISTEN);
	assert_int_equal(ss->acc_mask, 127); /* the backlog rounded up to a power of two */
	assert_int_equal(atomic_load(&f->a->user->listeners[0]), 1);
	queue(f, CHAN_CMD_CLOSE, 0, s);
	run(f);
	assert_int_equal(f->a->socks[s].kind, CHAN_SOCK_FREE);
	assert_true(atomic_load(&ss->state) & CHAN_SS_CLOSED);
	assert_int_equal(atomic_load(&f->a->user->listeners[0]), 0);
	/* The number is this process's no more: another CLOSE of it is a bad command. */
	queue(f, CHAN_CMD_CLOSE, 0, s);
	run(f);
	assert_true(disconnected(f));
}

/* A UDP socket of the application on CT_ADDR:5000 whose send FIFO holds n datagrams of 32
 * bytes to a neighbour the stack knows (so each goes straight out). */
static uint32_t udp_with_queue(struct chan_test *f, unsigned n)
{
	const struct eth_addr peer_mac = {{0x02, 0, 0, 0, 0, 9}};
	assert_int_equal(neigh_add_static(f->stack->neigh, 0, INET_ADDR_V4(CT_ADDR + 7),
					  &peer_mac), 0);
	post(f, 0, &(struct chan_req){.op = CHAN_OP_UDP_OPEN, .laddr = inet_addr_v4(CT_ADDR),
				      .lport = htons(5000)});
	queue(f, CHAN_CMD_CALL, 0, 0);
	run(f);
	assert_int_equal(slot_at(f, 0)->rep.err, 0);
	uint32_t s = slot_at(f, 0)->rep.socks[0];
	struct fifo *tx = f->a->socks[s].udp_tx;
	char dgram[sizeof(struct chan_udp_tx_hdr) + 32] = {0};
	struct chan_udp_tx_hdr h = {.len = 32, .raddr = inet_addr_v4(CT_ADDR + 7), .rport = htons(9)};
	memcpy(dgram, &h, sizeof(h));
	for (unsigned i = 0; i < n; i++)
		assert_int_equal(fifo_enqueue(tx, dgram, sizeof(dgram)), sizeof(dgram));
	return s;
}

static void test_chan_udp_close_sends_its_queue_a_budget_per_round_then_frees(void **state)
{
	struct chan_test *f = *state;
	struct chan_worker *cw = &f->ch->cw[0];
	const unsigned n = 150; /* CHAN_UDP_BUDGET 64: two rounds and a bit */
	uint32_t s = udp_with_queue(f, n);
	queue(f, CHAN_CMD_CLOSE, 0, s);
	run(f);
	assert_int_equal(cw->st.udp_tx, 64);
	assert_int_equal(cw->st.budget_yields, 1);
	/* Closed for the application, but its number is not handed out while it sends. */
	assert_int_equal(f->a->socks[s].kind, CHAN_SOCK_UDP);
	assert_int_equal(atomic_load(&f->ch->live_socks), 1);
	chan_worker_poll(cw);
	assert_int_equal(cw->st.udp_tx, 128);
	chan_worker_poll(cw);
	assert_int_equal(cw->st.udp_tx, n);
	assert_int_equal(cw->st.udp_tx_err, 0);
	assert_true(TAILQ_EMPTY(&cw->udp_tx_list));
	assert_int_equal(f->a->socks[s].kind, CHAN_SOCK_FREE);
	assert_true(atomic_load(&chan_sock_at(f->a->base, &f->a->lay, s)->state) & CHAN_SS_CLOSED);
	assert_int_equal(atomic_load(&f->ch->live_socks), 0);
	/* The number is this process's no more: a KICK of it is a bad command. */
	queue(f, CHAN_CMD_KICK, 0, s);
	run(f);
	assert_true(disconnected(f));
}

static void test_chan_udp_closing_socket_outlives_its_application(void **state)
{
	struct chan_test *f = *state;
	struct chan_worker *cw = &f->ch->cw[0];
	uint32_t s = udp_with_queue(f, 100);
	queue(f, CHAN_CMD_CLOSE, 0, s);
	run(f);
	assert_int_equal(cw->st.udp_tx, 64);
	/* The process and the application go, as chan_proc_drop does it: the socket goes on
	 * sending from the segment, which its FIFO keeps. */
	struct chan_job j = {.app = f->a, .proc = 0, .worker = 0};
	chan_job_proc_gone(f->stack, &j);
	chan_job_app_remove(f->stack, &j);
	chan_app_unref(f->a);
	f->a = NULL;
	assert_int_equal(cw->napps, 0);
	assert_int_equal(atomic_load(&f->ch->live_apps), 1);
	chan_worker_poll(cw);
	assert_int_equal(cw->st.udp_tx, 100);
	assert_int_equal(atomic_load(&f->ch->live_socks), 0);
	assert_int_equal(atomic_load(&f->ch->live_apps), 0); /* with its last datagram */
}

static void test_chan_udp_closing_sockets_end_at_once_when_the_daemon_stops(void **state)
{
	struct chan_test *f = *state;
	struct chan_worker *cw = &f->ch->cw[0];
	uint32_t s = udp_with_queue(f, 300);
	queue(f, CHAN_CMD_CLOSE, 0, s);
	run(f);
	assert_int_equal(cw->st.udp_tx, 64);
	assert_int_equal(chan_worker_udp_finish(f->stack, cw), 0);
	assert_int_equal(cw->st.udp_tx, 300);
	assert_true(TAILQ_EMPTY(&cw->udp_tx_list));
	assert_int_equal(f->a->socks[s].kind, CHAN_SOCK_FREE);
	assert_int_equal(atomic_load(&f->ch->live_socks), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
		T(test_chan_call_posted_call_is_answered_once_and_rings_the_process),
		T(test_chan_call_idle_slot_disconnects_the_process),
		T(test_chan_call_answered_slot_is_not_run_again),
		T(test_chan_call_slot_beyond_the_table_disconnects),
		T(test_chan_call_unknown_operation_disconnects_and_keeps_the_slot),
		T(test_chan_call_failure_answers_errno_without_sockets),
		T(test_chan_call_listen_answers_a_socket_and_close_gives_it_back),
		T(test_chan_udp_close_sends_its_queue_a_budget_per_round_then_frees),
		T(test_chan_udp_closing_socket_outlives_its_application),
		T(test_chan_udp_closing_sockets_end_at_once_when_the_daemon_stops),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
