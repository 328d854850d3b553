/* The race between a thread in accept(2) and another closing the listener, both sides
 * driven step by step in the racy order (commit 3143ca3): a connection reaches the accept
 * ring while a thread sleeps in accept, the listener is closed, and only then does the
 * accepting thread take the connection and claim it. Linux holds the listening socket for
 * an accept in progress, so the connection is accepted, the listener closed after it, and
 * the process stays attached; before the fix the worker read the listener's CLOSE first,
 * reset the unclaimed connection, then took the CLAIM for a bad command and dropped the
 * whole process.
 *
 * Both sides run in this process over one segment: the daemon's (test_chan_util.h: one
 * worker with a real stack on the test EAL, an application made as the channel makes one)
 * and the library's (an attachment over that segment, files made as dps_listen and
 * dps_accept make them). The worker never wakes the process (it has no eventfd of it): the
 * test wakes the accepting thread itself, after the close. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <dpstack/dpstack.h>

#include "test_chan_util.h"
#include "test_eal.h"
#include "test_dps_util.h"

#define PORT 8080

struct fixture {
	struct chan_test d;             /* the daemon's side of the application */
	struct dps_attach at;           /* the library's, over the same segment */
	int peer_fd;                    /* the daemon's end of the unix connection */
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	assert_non_null(fx);
	chan_test_start(&fx->d);
	fx->peer_fd = dps_test_attach_init(&fx->at, fx->d.a->base, &fx->d.a->lay);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	chan_test_app_end(&fx->d);
	chan_test_free(&fx->d);
	dps_test_attach_fini(&fx->at, fx->peer_fd);
	free(fx);
	return 0;
}

/* ---- the daemon's side ---- */

/* A call the library would post, run on the worker; the socket it answered. */
static uint32_t daemon_call(struct fixture *fx, const struct chan_req *rq)
{
	struct chan_call *c = chan_call_at(fx->d.a->base, &fx->d.a->lay, 0, 0);
	c->req = *rq;
	atomic_store(&c->state, CHAN_CALL_POSTED);
	assert_true(chan_ring_put(chan_cmd_ring(fx->d.a->base, &fx->d.a->lay, 0, 0),
				  fx->d.a->lay.cmd_mask, chan_cmd(CHAN_CMD_CALL, 0, 0)));
	chan_worker_run_proc(&fx->d.ch->cw[0], fx->d.a, 0, 256);
	assert_int_equal(atomic_load(&c->state), CHAN_CALL_DONE);
	assert_int_equal(c->rep.err, 0);
	assert_int_equal(c->rep.count, 1);
	uint32_t s = c->rep.socks[0];
	atomic_store(&c->state, CHAN_CALL_IDLE);
	return s;
}

/* A worker round: the process's commands, then the loopback, then the accept pumps. */
static void worker_round(struct fixture *fx)
{
	chan_worker_poll(&fx->d.ch->cw[0]);
}

static bool disconnected(struct fixture *fx)
{
	return atomic_load(&fx->d.a->procs[0].kill);
}

static unsigned accept_ring_count(struct fixture *fx, uint32_t ls)
{
	const struct chan_sock *ss = chan_sock_at(fx->d.a->base, &fx->d.a->lay, ls);
	return chan_ring_count((struct chan_ring *)((char *)fx->d.a->base + ss->acc_off));
}

/* ---- the library's side ---- */

/* The listener's file, as dps_listen makes it from the worker's answer. */
static int library_listener(struct fixture *fx, uint32_t ls)
{
	struct dps_file *l = dps_file_new(DPS_LISTEN, -1);
	assert_non_null(l);
	atomic_fetch_add(&fx->at.refs, 1);
	l->at = &fx->at;
	l->socks[0] = ls;
	l->nsocks = 1;
	dps_file_bind_sock(l, ls);
	assert_int_equal(dps_file_install(l), 0); /* the table has the reference */
	return l->fd;
}

struct accepter {
	int listen_fd;
	_Atomic pid_t tid;
	int fd, err;                    /* accept's result */
};

static void *accept_thread(void *arg)
{
	struct accepter *ac = arg;
	atomic_store(&ac->tid, gettid());
	ac->fd = dps_accept(ac->listen_fd, NULL, NULL);
	ac->err = ac->fd < 0 ? errno : 0;
	return NULL;
}

/* The thread sleeps in the kernel (its accept found nothing and waits for a wake-up). */
static bool thread_sleeping(pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *st = strrchr(buf, ')');
	return st != NULL && st[1] == ' ' && st[2] == 'S';
}

static void wait_sleeping(struct accepter *ac)
{
	for (int i = 0; i < 5000; i++) {
		pid_t tid = atomic_load(&ac->tid);
		if (tid != 0 && thread_sleeping(tid))
			return;
		nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
	}
	fail_msg("the accepting thread never went to sleep (fd %d errno %d)", ac->fd, ac->err);
}

static void test_accept_takes_connection_of_listener_closed_meanwhile_and_nothing_is_lost(
	void **state)
{
	struct fixture *fx = *state;
	fx->at.spin_ns = 0;
	uint32_t ls = daemon_call(fx, &(struct chan_req){.op = CHAN_OP_LISTEN,
							 .laddr = inet_addr_v4(CT_ADDR), .lport = htons(PORT),
							 .backlog = 8});
	int lfd = library_listener(fx, ls);

	/* 1. A thread blocks in accept: the accept ring is empty. */
	struct accepter ac = {.listen_fd = lfd};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, accept_thread, &ac), 0);
	wait_sleeping(&ac);

	/* 2. A connection to the listener (the process's own, over the stack's loopback)
	 * reaches its accept ring; the worker tells nobody (no eventfd), so the accepting
	 * thread sleeps on. */
	uint32_t cs = daemon_call(fx, &(struct chan_req){.op = CHAN_OP_CONNECT,
							 .raddr = inet_addr_v4(CT_ADDR), .rport = htons(PORT)});
	for (int i = 0; i < 8 && accept_ring_count(fx, ls) == 0; i++)
		worker_round(fx);
	assert_int_equal(accept_ring_count(fx, ls), 1);
	assert_true(thread_sleeping(atomic_load(&ac.tid)));

	/* 3. Another thread closes the listener. */
	assert_int_equal(dps_close(lfd), 0);

	/* 4. The accepting thread wakes, takes the connection and claims it. */
	uint64_t one = 1;
	assert_int_equal(write(fx->at.ev_fd, &one, sizeof(one)), (ssize_t)sizeof(one));
	pthread_join(t, NULL);
	assert_int_equal(ac.err, 0);
	assert_true(ac.fd >= 0);

	/* 5. The worker reads what the library queued: the connection is the process's, the
	 * listener is gone, and the process is still served. */
	worker_round(fx);
	assert_false(disconnected(fx));
	struct dps_file *f = dps_file_get(ac.fd);
	assert_non_null(f);
	uint32_t ns = f->socks[0];
	dps_file_put(f);
	assert_int_equal(fx->d.a->socks[ls].kind, CHAN_SOCK_FREE);
	assert_int_equal(fx->d.a->socks[ns].kind, CHAN_SOCK_TCP);
	assert_true(fx->d.a->socks[ns].claimed);
	assert_true(atomic_load(&chan_sock_at(fx->d.a->base, &fx->d.a->lay, ns)->state) &
		    CHAN_SS_CONNECTED);

	/* 6. Nothing in limbo: closing the accepted connection and the client frees every
	 * socket of the process. */
	assert_int_equal(dps_close(ac.fd), 0);
	assert_true(chan_ring_put(chan_cmd_ring(fx->d.a->base, &fx->d.a->lay, 0, 0),
				  fx->d.a->lay.cmd_mask, chan_cmd(CHAN_CMD_CLOSE, 0, cs)));
	worker_round(fx);
	assert_false(disconnected(fx));
	assert_int_equal(atomic_load(&fx->d.ch->live_socks), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
			test_accept_takes_connection_of_listener_closed_meanwhile_and_nothing_is_lost,
			setup, teardown),
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
