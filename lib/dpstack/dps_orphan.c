/* The sockets of a dead daemon, as the application sees them.
 *
 * When dpstackd ends, however it ends, the sockets it served end with it while the
 * application still holds them; so do those it frees while a process it let go of (dropped
 * for misbehaving, or as it stops) still holds them (CHAN_SS_CLOSED). Linux has one model
 * for a connection that ends under a program without its doing: the peer's reset
 * (net/ipv4/tcp_input.c tcp_reset). Its error goes in sk_err and is reported once, by the
 * first recv, send or SO_ERROR that finds it (net/core/sock.c sock_error); after it the
 * socket is shut both ways (tcp_done): recv returns 0, send EPIPE with SIGPIPE, poll
 * IN|OUT|HUP|RDHUP without ERR (net/ipv4/tcp.c tcp_poll). So the first look at a socket
 * of a dead daemon makes its shared record what the daemon itself publishes for a reset
 * (chan_dsock_publish: HUP, and the error under CHAN_SS_ERR), with tcp_reset's error for
 * the state it was in:
 *   - connected: ECONNRESET; in CLOSE_WAIT (the peer's FIN came, we may still write) EPIPE;
 *   - connecting (not yet connected): ECONNREFUSED, as an RST answering the SYN;
 *   - already over (reset, closed): nothing more, as tcp_reset ignores TCP_CLOSE.
 * From there on the one path that serves a reset from the network serves it too.
 * A UDP socket has no connection to reset: a Linux UDP socket that stops for good is one
 * shut down both ways (inet_shutdown): HUP without an error, so poll says
 * IN|OUT|HUP|RDHUP, recv returns 0 (EAGAIN when non-blocking, since no datagram came;
 * net/core/datagram.c __skb_wait_for_more_packets) and send EPIPE without SIGPIPE.
 * Listeners: dps_file_ready.
 *
 * The record is turned once, under a lock, so that two threads never both arm the error.
 * Forked processes holding the same socket each have their own lock; the error is armed
 * only over an empty one, so at worst a process that read it between two such turns sees
 * it twice. */
#include <pthread.h>

#include "dps_priv.h"

static pthread_mutex_t dps_orphan_lock = PTHREAD_MUTEX_INITIALIZER;

/* tcp_reset's error for a connection in the state st describes (0: it was over). */
static uint32_t dps_orphan_tcp_error(uint32_t st)
{
	if (st & CHAN_SS_HUP)
		return 0;
	if (!(st & CHAN_SS_CONNECTED))
		return ECONNREFUSED;
	if ((st & CHAN_SS_RDHUP) && !(st & CHAN_SS_WRSHUT))
		return EPIPE;
	return ECONNRESET;
}

static void dps_orphan(struct dps_file *f, struct chan_sock *ss)
{
	pthread_mutex_lock(&dps_orphan_lock);
	uint32_t st = atomic_load(&ss->state);
	if (!(st & CHAN_SS_ORPHAN)) {
		uint32_t set = CHAN_SS_ORPHAN | CHAN_SS_HUP;
		uint32_t err = f->kind == DPS_TCP ? dps_orphan_tcp_error(st) : 0, none = 0;
		if (err != 0 && atomic_compare_exchange_strong(&ss->error, &none, err))
			set |= CHAN_SS_ERR;
		atomic_fetch_or(&ss->state, set);
	}
	pthread_mutex_unlock(&dps_orphan_lock);
}

void dps_orphan_after_fork(void)
{
	/* Only the forking thread exists now: a lock another thread held is reset. */
	pthread_mutex_init(&dps_orphan_lock, NULL);
}

uint32_t dps_sock_state(struct dps_file *f)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	uint32_t st = atomic_load_explicit(&ss->state, memory_order_acquire);
	if (!(st & CHAN_SS_ORPHAN) && ((st & CHAN_SS_CLOSED) || dps_attach_gone(f->at))) {
		dps_orphan(f, ss);
		st = atomic_load_explicit(&ss->state, memory_order_acquire);
	}
	return st;
}
