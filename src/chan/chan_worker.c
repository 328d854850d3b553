/* The channel's work on a worker, between bursts: commands from the applications' rings,
 * accepts into listeners' accept rings, UDP datagrams out of send FIFOs, and the events and
 * wake-ups that tell applications what changed. Nothing here locks: each worker touches only
 * its own sockets (socket s is worker s % nb_workers's) and its own rings. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "chan_priv.h"
#include "chan_worker.h"
#include "stack/stack.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

#define CHAN_CMD_BUDGET 256            /* commands per process per round */
/* Datagrams one UDP send FIFO may send per round: one KICK must not keep the worker
 * sending a whole SO_SNDBUF (thousands of small datagrams) while the other applications'
 * commands and the received frames wait. What is left goes next round, in order. */
#define CHAN_UDP_BUDGET 64

static struct chan_worker *chan_worker_of(const struct chan_dsock *ds)
{
	return &ds->app->chan->cw[ds->index % ds->app->lay.nb_workers];
}

/* Queue the socket in the event ring of every process holding it, once: the `queued` bit
 * stays set until the process takes it out, so a ring never holds a socket twice and never
 * overflows (it has room for every socket).
 *
 * A socket already queued still wakes the process: the earlier event may have found no
 * thread waiting (so nobody was woken) and the thread that went to sleep since then checked
 * what it waits for before this change; only a wake tells it to look again. */
static void chan_dsock_queue_events(struct chan_dsock *ds)
{
	struct chan_app *a = ds->app;
	struct chan_sock *ss = chan_dsock_shm(ds);
	unsigned w = ds->index % a->lay.nb_workers;
	uint64_t h = ds->holders;
	while (h != 0) {
		unsigned p = (unsigned)__builtin_ctzll(h);
		h &= h - 1;
		uint64_t bit = 1ull << p;
		if (atomic_fetch_or(&ss->queued, bit) & bit) {
			a->w[w].wake |= bit;
			continue;
		}
		if (chan_ring_put(chan_ev_ring(a->base, &a->lay, p, w), a->lay.ev_mask, ds->index)) {
			a->w[w].wake |= bit;
			chan_worker_of(ds)->st.events++;
		}
	}
}

void chan_sock_share_rx(struct chan_app *a, struct chan_sock *ss, const struct fifo *rx)
{
	uint32_t gen = atomic_load_explicit(&ss->rx_gen, memory_order_relaxed);
	atomic_store_explicit(&ss->rx_gen, gen + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	ss->rx_off = chan_app_off(a, rx->data);
	ss->rx_pos_off = chan_app_off(a, rx->pos);
	ss->rx_size = rx->size;
	atomic_store_explicit(&ss->rx_gen, gen + 2, memory_order_release);
}

void chan_sock_share_tx(struct chan_app *a, struct chan_sock *ss, const struct fifo *tx)
{
	ss->tx_off = chan_app_off(a, tx->data);
	ss->tx_pos_off = chan_app_off(a, tx->pos);
	ss->tx_size = tx->size;
}

void chan_dsock_share_tcp(struct chan_dsock *ds)
{
	const struct sock *sk = tcp_sock(ds->tcp);
	struct chan_sock *ss = chan_dsock_shm(ds);
	chan_sock_share_rx(ds->app, ss, sk->rx);
	chan_sock_share_tx(ds->app, ss, sk->tx);
	ss->laddr = sk->laddr;
	ss->lport = htons(sk->lport);
	ss->raddr = sk->raddr;
	ss->rport = htons(sk->rport);
	ss->scope = sk->scope == NETCFG_PORT_ANY ? 0 : netcfg_ifindex(sk->scope);
}

void chan_dsock_publish(struct chan_dsock *ds, uint32_t events)
{
	struct chan_sock *ss = chan_dsock_shm(ds);
	uint32_t set = 0;
	if (ds->kind == CHAN_SOCK_TCP) {
		struct sock *sk = tcp_sock(ds->tcp);
		enum tcp_state st = tcp_conn_state(ds->tcp);
		if (st != TCP_SYN_SENT && st != TCP_SYN_RECEIVED && st != TCP_CLOSED)
			set |= CHAN_SS_CONNECTED;
		if (events & SOCK_EV_RDHUP)
			set |= CHAN_SS_RDHUP;
		if (events & SOCK_EV_HUP)
			set |= CHAN_SS_HUP;
		if (sk->error != 0) {
			/* SO_ERROR is read and cleared by the application from now on. */
			atomic_store(&ss->error, (uint32_t)sk->error);
			sk->error = 0;
			set |= CHAN_SS_ERR;
		}
		if (inet_addr_is_any(&ss->laddr) && !inet_addr_is_any(&sk->laddr)) {
			ss->laddr = sk->laddr;
			ss->lport = htons(sk->lport);
		}
	} else if (ds->kind == CHAN_SOCK_UDP) {
		struct sock *sk = udp_sock(ds->udp);
		if (sk->error != 0) {
			atomic_store(&ss->error, (uint32_t)sk->error);
			sk->error = 0;
			set |= CHAN_SS_ERR;
		}
	}
	if (set != 0)
		atomic_fetch_or(&ss->state, set);
	chan_dsock_queue_events(ds);
}

static bool chan_can_write(enum tcp_state st)
{
	return st == TCP_ESTABLISHED || st == TCP_CLOSE_WAIT;
}

/* Room that ACKs freed in a connected stream's send FIFO is news only to an application
 * that found it too full (chan_sock.nospace), and only once it is writable again. */
static bool chan_write_space_wanted(struct chan_dsock *ds, const struct sock *sk)
{
	struct chan_sock *ss = chan_dsock_shm(ds);
	/* Pairs with the application's fence between setting nospace and looking again. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&ss->nospace, memory_order_relaxed) == 0 ||
	    !chan_tx_writable(fifo_used(sk->tx), fifo_free(sk->tx)))
		return false;
	atomic_store_explicit(&ss->nospace, 0, memory_order_relaxed);
	return true;
}

static void chan_notify(struct sock *sk, uint32_t events)
{
	struct chan_dsock *ds = sk->owner.ctx;
	if (ds->kind == CHAN_SOCK_TCP_LISTEN) {
		if (!ds->on_accept_list) {
			ds->on_accept_list = true;
			TAILQ_INSERT_TAIL(&chan_worker_of(ds)->accept_list, ds, accept_link);
		}
		return;
	}
	if (events == SOCK_EV_OUT && ds->kind == CHAN_SOCK_TCP && sk->tx != NULL &&
	    sk->error == 0 && chan_can_write(tcp_conn_state(ds->tcp)) &&
	    (atomic_load_explicit(&chan_dsock_shm(ds)->state, memory_order_relaxed) &
	     CHAN_SS_CONNECTED) && !chan_write_space_wanted(ds, sk))
		return;
	chan_dsock_publish(ds, events);
}

/* The receive FIFO may move (tcp_rcvbuf.c) when the one it moved from last time is no
 * longer read: the application has read from the current one since (rx_gen_seen). A socket
 * that several processes hold keeps its FIFO: one process's reads say nothing of another's
 * views. */
static bool chan_rx_swappable(const struct sock *sk)
{
	struct chan_dsock *ds = sk->owner.ctx;
	if (ds->holders & (ds->holders - 1))
		return false;
	if (ds->rx_retired != NULL) {
		struct chan_sock *ss = chan_dsock_shm(ds);
		if (atomic_load_explicit(&ss->rx_gen_seen, memory_order_acquire) !=
		    atomic_load_explicit(&ss->rx_gen, memory_order_relaxed))
			return false;
		sock_fifo_free(sk->mem, ds->rx_retired);
		ds->rx_retired = NULL;
	}
	return true;
}

static void chan_rx_retire(struct sock *sk, struct fifo *old)
{
	struct chan_dsock *ds = sk->owner.ctx;
	ds->rx_retired = old;
	chan_sock_share_rx(ds->app, chan_dsock_shm(ds), sk->rx);
}

struct sock_owner chan_owner(struct chan_dsock *ds, pid_t pid, pid_t ns_pid)
{
	struct chan_app_worker *aw = &ds->app->w[ds->index % ds->app->lay.nb_workers];
	return (struct sock_owner){.notify = chan_notify, .ctx = ds, .mem = &aw->mem,
				   .pid = pid, .ns_pid = ns_pid, .rx_swappable = chan_rx_swappable,
				   .rx_retire = chan_rx_retire};
}

/* Moves established connections from the listener to its accept ring, as far as the ring
 * and the socket numbers go; what is left waits in the stack's accept queue (the backlog). */
static void chan_accept_pump(struct chan_worker *cw, struct chan_dsock *l)
{
	struct chan_app *a = l->app;
	struct chan_app_worker *aw = &a->w[cw->index];
	bool any = false;
	for (;;) {
		uint32_t used = chan_ring_count(l->acc);
		if (used > l->acc_mask)
			break; /* full, or its head was scribbled on: no more until a kick */
		struct chan_dsock *ds = chan_dsock_alloc(aw, CHAN_SOCK_TCP);
		if (ds == NULL) {
			cw->st.accept_no_sock++;
			break;
		}
		struct sock *lsk = tcp_sock(l->tcp);
		struct sock_owner own = chan_owner(ds, lsk->owner.pid, lsk->owner.ns_pid);
		struct tcp_conn *c = tcp_accept(l->tcp, &own);
		if (c == NULL) {
			chan_dsock_release(ds);
			break;
		}
		ds->tcp = c;
		ds->listener = l;
		ds->claimed = false;
		struct chan_sock *ss = chan_dsock_shm(ds);
		chan_dsock_share_tcp(ds);
		chan_dsock_publish(ds, 0);
		enum tcp_state st = tcp_conn_state(c);
		if (st == TCP_CLOSE_WAIT || st == TCP_LAST_ACK || st == TCP_CLOSING ||
		    st == TCP_TIME_WAIT)
			atomic_fetch_or(&ss->state, CHAN_SS_RDHUP);
		chan_ring_put(l->acc, l->acc_mask, ds->index);
		cw->st.accepts++;
		any = true;
	}
	if (any)
		chan_dsock_queue_events(l);
}

/* A socket every holder closed is gone for the applications: its number comes back. A
 * process that still holds it was let go of (dropped, or the daemon stops): what it sees of
 * the socket from now on is the library's to say (lib/dpstack/dps_orphan.c). */
static void chan_dsock_closed(struct chan_dsock *ds)
{
	atomic_fetch_or(&chan_dsock_shm(ds)->state, CHAN_SS_CLOSED);
	chan_dsock_release(ds);
}

/* The end of a closed UDP socket whose send FIFO is empty now. */
static void chan_udp_close_now(struct chan_worker *cw, struct chan_dsock *ds)
{
	struct chan_app_worker *aw = &ds->app->w[cw->index];
	struct fifo *tx = ds->udp_tx;
	udp_close(ds->udp);
	ds->udp_tx = NULL;
	ds->udp_closing = false;
	chan_dsock_closed(ds);
	/* Last: the FIFO may hold the last reference to a segment whose processes are gone. */
	sock_fifo_free(&aw->mem, tx);
}

/* Sends up to budget of the datagrams the application queued in a UDP socket's send FIFO;
 * a FIFO with more goes on the worker's list for the next round. A closed socket whose
 * FIFO is empty ends here. */
static void chan_udp_drain(struct chan_worker *cw, struct chan_dsock *ds, unsigned budget)
{
	struct fifo *f = ds->udp_tx;
	struct chan_udp_tx_hdr h;
	for (;;) {
		uint32_t used = fifo_used(f);
		if (used < sizeof(h))
			break;
		if (budget-- == 0) {
			if (!ds->on_udp_tx_list) {
				ds->on_udp_tx_list = true;
				TAILQ_INSERT_TAIL(&cw->udp_tx_list, ds, udp_tx_link);
				cw->st.budget_yields++;
			}
			return;
		}
		/* The application may move the FIFO's tail back between our reads of it: each
		 * copy must have got all it asked for, or the header or datagram is stale. */
		if (fifo_peek(f, 0, &h, sizeof(h)) != sizeof(h) || h.len > UDP6_MAX_PAYLOAD ||
		    h.len > used - sizeof(h) ||
		    fifo_peek(f, sizeof(h), cw->udp_buf, h.len) != h.len) {
			/* A record the application garbled: drop everything queued. */
			fifo_consume(f, used);
			cw->st.udp_tx_err++;
			break;
		}
		fifo_consume(f, (uint32_t)sizeof(h) + h.len);
		struct sock_ip_opts ip = {.ttl = h.ttl, .tos = h.tos};
		struct udp_send_opts o = {.from = h.laddr,
					  .ip = h.flags & CHAN_UDP_TX_IP ? &ip : NULL,
					  .scoped = h.scope != 0, .port = chan_scope_port(h.scope)};
		ssize_t rc = udp_sendmsg_inet(ds->udp, cw->udp_buf, h.len,
					      inet_addr_is_any(&h.raddr) ? NULL : &h.raddr,
					      ntohs(h.rport), &o);
		if (rc < 0) {
			/* Linux would have failed the sendto(2) itself: report it as SO_ERROR. */
			udp_sock(ds->udp)->error = (int)-rc;
			chan_dsock_publish(ds, SOCK_EV_ERR);
			cw->st.udp_tx_err++;
		} else {
			cw->st.udp_tx++;
		}
	}
	if (ds->udp_closing) {
		chan_udp_close_now(cw, ds);
		return;
	}
	/* Room in the FIFO again: a writer waiting for it must hear. */
	chan_dsock_queue_events(ds);
}

/* Unclaimed children of a listener that goes away are reset, as Linux resets its accept
 * queue (inet_csk_listen_stop). */
static void chan_listener_drop_children(struct chan_worker *cw, struct chan_dsock *l)
{
	struct chan_app *a = l->app;
	for (uint32_t s = cw->index; s < a->lay.max_socks; s += a->lay.nb_workers) {
		struct chan_dsock *ds = &a->socks[s];
		if (ds->kind == CHAN_SOCK_TCP && ds->listener == l && !ds->claimed)
			chan_dsock_close(cw, ds);
	}
}

void chan_dsock_close(struct chan_worker *cw, struct chan_dsock *ds)
{
	struct chan_app_worker *aw = &ds->app->w[cw->index];
	switch (ds->kind) {
	case CHAN_SOCK_TCP:
		if (!ds->claimed) {
			struct tcp_sockopts o = *tcp_get_sockopts(ds->tcp);
			o.linger = true;
			tcp_set_sockopts(ds->tcp, &o);
		}
		tcp_close(ds->tcp);
		break;
	case CHAN_SOCK_TCP_LISTEN:
		if (ds->on_accept_list) {
			TAILQ_REMOVE(&cw->accept_list, ds, accept_link);
			/* Or the record's next life would think itself on the list: never
			 * pumped, and removed from it again at its close. */
			ds->on_accept_list = false;
		}
		tcp_close(ds->tcp);
		atomic_fetch_sub(&ds->app->user->listeners[cw->index], 1);
		chan_listener_drop_children(cw, ds);
		aw->mem.free(aw->mem.ctx, ds->acc, chan_ring_bytes(ds->acc_mask + 1));
		break;
	case CHAN_SOCK_UDP:
		/* Datagrams queued before the close were sent as far as the application knows
		 * (Linux sends in sendto): they go out first, at a KICK's pace (CHAN_UDP_BUDGET
		 * a round, so a full SO_SNDBUF does not hold the worker), and the socket ends
		 * with its FIFO's last (chan_udp_drain). A process that exits right after its
		 * last sendto has its holds dropped before the worker reads its ring's kick. */
		if (ds->udp_closing)
			return; /* closed already, still sending (the application goes now) */
		if (ds->udp_tx == NULL) {
			chan_udp_close_now(cw, ds);
			return;
		}
		ds->udp_closing = true;
		if (!ds->on_udp_tx_list) /* else it goes on there, in its turn */
			chan_udp_drain(cw, ds, CHAN_UDP_BUDGET);
		return;
	default:
		return;
	}
	chan_dsock_closed(ds);
}

void chan_proc_kill(struct chan_app *a, unsigned proc)
{
	atomic_store(&a->procs[proc].kill, true);
	uint64_t one = 1;
	if (write(a->chan->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter is saturated: the server is awake anyway. */
	}
}

/* One command from process p; false when it is not one a well-behaved library sends. */
static bool chan_cmd_run(struct chan_worker *cw, struct chan_app *a, unsigned p, uint64_t v)
{
	unsigned op = (unsigned)(v >> 56);
	unsigned arg = (unsigned)(v >> 32) & 0xffffff;
	uint32_t s = (uint32_t)v;
	if (op == CHAN_CMD_CALL)
		return chan_call_run(cw, a, p, arg);
	if (s >= a->lay.max_socks || s % a->lay.nb_workers != cw->index)
		return false;
	struct chan_dsock *ds = &a->socks[s];
	uint64_t bit = 1ull << p;
	if (op == CHAN_CMD_CLAIM) {
		if (ds->kind != CHAN_SOCK_TCP || ds->claimed || ds->listener == NULL ||
		    !(ds->listener->holders & bit))
			return false;
		ds->claimed = true;
		ds->listener = NULL;
		ds->holders = bit;
		chan_dsock_queue_events(ds);
		return true;
	}
	if (ds->kind == CHAN_SOCK_FREE || !(ds->holders & bit))
		return false;
	switch (op) {
	case CHAN_CMD_KICK:
		atomic_store(&chan_dsock_shm(ds)->kick, 0);
		if (ds->kind == CHAN_SOCK_TCP) {
			tcp_set_more(ds->tcp, atomic_load(&chan_dsock_shm(ds)->more) != 0);
			tcp_kick(ds->tcp);
		}
		else if (ds->kind == CHAN_SOCK_TCP_LISTEN)
			chan_accept_pump(cw, ds);
		else if (ds->udp_tx != NULL && !ds->on_udp_tx_list)
			chan_udp_drain(cw, ds, CHAN_UDP_BUDGET);
		return true;
	case CHAN_CMD_SHUTDOWN:
		if (arg != SHUT_RD && arg != SHUT_WR && arg != SHUT_RDWR)
			return false;
		if (ds->kind == CHAN_SOCK_TCP && tcp_shutdown(ds->tcp, (int)arg) == 0 &&
		    arg != SHUT_RD)
			atomic_fetch_or(&chan_dsock_shm(ds)->state, CHAN_SS_WRSHUT);
		return true;
	case CHAN_CMD_SETOPT:
		/* The library checked the value; a refusal here has nobody to tell. */
		chan_dsock_setopt(ds, arg >> 16, arg & 0xffff, NULL);
		return true;
	case CHAN_CMD_CLOSE:
		ds->holders &= ~bit;
		if (ds->holders == 0)
			chan_dsock_close(cw, ds);
		return true;
	default:
		return false;
	}
}

/* Delivers what this worker sent to its own addresses (one application talking to another),
 * which would otherwise wait for the next received frame or transport tick, up to a
 * millisecond per hop. Returns the datagrams that were waiting. */
static unsigned chan_worker_loopback(struct chan_worker *cw)
{
	unsigned n = cw->stack->lo_count;
	if (n != 0)
		stack_loopback_drain(cw->stack);
	return n;
}

unsigned chan_worker_run_proc(struct chan_worker *cw, struct chan_app *a, unsigned p,
			      unsigned budget)
{
	if (atomic_load_explicit(&a->procs[p].kill, memory_order_relaxed))
		return 0;
	struct chan_ring *r = chan_cmd_ring(a->base, &a->lay, p, cw->index);
	/* A process that finds the ring full waits on its doorbell for room: ring it. */
	if (chan_ring_count(r) > a->lay.cmd_mask / 2)
		a->w[cw->index].wake |= 1ull << p;
	uint64_t v;
	int corrupt = 0;
	unsigned n = 0, done = 0;
	while (n < budget && chan_ring_get(r, a->lay.cmd_mask, &v, &corrupt)) {
		n++;
		if (!chan_cmd_run(cw, a, p, v)) {
			corrupt = 1;
			break;
		}
		/* After each command, as stack_input does after each frame: the kicks of a
		 * round's streams would together overflow the loopback queue. */
		done += chan_worker_loopback(cw);
	}
	cw->st.cmds += n;
	if (corrupt) {
		cw->st.bad_cmds++;
		chan_proc_kill(a, p);
	}
	return done + n;
}

static unsigned chan_worker_run_app(struct chan_worker *cw, struct chan_app *a)
{
	unsigned done = 0;
	uint64_t procs = a->w[cw->index].procs;
	while (procs != 0) {
		unsigned p = (unsigned)__builtin_ctzll(procs);
		procs &= procs - 1;
		done += chan_worker_run_proc(cw, a, p, CHAN_CMD_BUDGET);
	}
	return done;
}

/* Ring the processes that got events or answers: each has its doorbell (chan_shm.h), whose
 * eventfd is written only when one of its threads announced a sleep. */
static void chan_worker_wake(struct chan_worker *cw, struct chan_app *a)
{
	struct chan_app_worker *aw = &a->w[cw->index];
	uint64_t wake = aw->wake;
	aw->wake = 0;
	while (wake != 0) {
		unsigned p = (unsigned)__builtin_ctzll(wake);
		wake &= wake - 1;
		if (a->procs[p].efd >= 0 && doorbell_ring_fd(&a->hdr->procs[p].bell, a->procs[p].efd))
			cw->st.wakes++;
	}
}

/* One more budget for each send FIFO left from an earlier round, in the order they ran
 * out; those that still have more go to the back of the list for the next round. */
static unsigned chan_worker_udp_continue(struct chan_worker *cw)
{
	TAILQ_HEAD(, chan_dsock) now = TAILQ_HEAD_INITIALIZER(now);
	TAILQ_CONCAT(&now, &cw->udp_tx_list, udp_tx_link);
	unsigned n = 0;
	struct chan_dsock *ds;
	while ((ds = TAILQ_FIRST(&now)) != NULL) {
		TAILQ_REMOVE(&now, ds, udp_tx_link);
		ds->on_udp_tx_list = false;
		chan_udp_drain(cw, ds, CHAN_UDP_BUDGET);
		n++;
	}
	return n;
}

int chan_worker_udp_finish(struct stack *s, void *arg)
{
	struct chan_worker *cw = arg;
	struct chan_dsock *ds;
	while ((ds = TAILQ_FIRST(&cw->udp_tx_list)) != NULL) {
		TAILQ_REMOVE(&cw->udp_tx_list, ds, udp_tx_link);
		ds->on_udp_tx_list = false;
		chan_udp_drain(cw, ds, UINT32_MAX);
	}
	return 0;
}

unsigned chan_worker_poll(void *ctx)
{
	struct chan_worker *cw = ctx;
	unsigned done = 0;
	for (unsigned i = 0; i < cw->napps; i++)
		done += chan_worker_run_app(cw, cw->apps[i]);
	/* Worker 0 answers CHAN_OP_LINKS: it tells the applications when the table changed. */
	if (cw->index == 0)
		for (unsigned i = 0; i < cw->napps; i++)
			if (atomic_load_explicit(&cw->apps[i]->hdr->links_gen, memory_order_relaxed) !=
			    cw->stack->cfg.gen)
				atomic_store_explicit(&cw->apps[i]->hdr->links_gen, cw->stack->cfg.gen,
						      memory_order_release);
	/* And what the server's calls on this worker (a connect's SYN) sent to ourselves. */
	done += chan_worker_loopback(cw);
	done += chan_worker_udp_continue(cw);
	struct chan_dsock *l;
	while ((l = TAILQ_FIRST(&cw->accept_list)) != NULL) {
		TAILQ_REMOVE(&cw->accept_list, l, accept_link);
		l->on_accept_list = false;
		chan_accept_pump(cw, l);
		done++;
	}
	for (unsigned i = 0; i < cw->napps; i++)
		chan_worker_wake(cw, cw->apps[i]);
	return done;
}

bool chan_worker_sleeping(void *ctx, bool on)
{
	struct chan_worker *cw = ctx;
	for (unsigned i = 0; i < cw->napps; i++)
		atomic_store(&cw->apps[i]->hdr->workers[cw->index].bell.fd_sleepers, on ? 1u : 0u);
	if (!on)
		return true;
	atomic_thread_fence(memory_order_seq_cst); /* the Dekker pair of doorbell_ring_fd */
	/* Commands queued before the flag was seen would wait for the timeout: look again. */
	for (unsigned i = 0; i < cw->napps; i++) {
		struct chan_app *a = cw->apps[i];
		uint64_t procs = a->w[cw->index].procs;
		while (procs != 0) {
			unsigned p = (unsigned)__builtin_ctzll(procs);
			procs &= procs - 1;
			if (chan_ring_count(chan_cmd_ring(a->base, &a->lay, p, cw->index)) != 0) {
				chan_worker_sleeping(ctx, false);
				return false;
			}
		}
	}
	return true;
}
