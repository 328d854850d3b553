/* Receive buffer autotuning: a connection whose application keeps up gets a bigger receive
 * FIFO, so a fast sender is not held back by a window of the default size.
 *
 * Linux grows sk_rcvbuf when the application copied more than the current space in one
 * round trip (tcp_rcv_space_adjust, "dynamic right-sizing"). The worker sees neither the
 * application's reads nor a receive-side RTT, but it sees both ends of what matters: the
 * window closing (the FIFO three quarters full: the sender was held by it) and the FIFO
 * found empty soon after (the application took a whole buffer quickly). A reader that drains a full
 * buffer within TCP_RCVBUF_DRAIN_US would have taken more; a slow one never triggers it, so
 * its memory stays at the default.
 *
 * The FIFO is replaced only while it is empty and nothing out of order lies past its tail,
 * so no byte moves; its owner may still read the old one (an application process may hold
 * a view of it), so the owner is asked first and frees the old FIFO itself
 * (sock_owner.rx_swappable, rx_retire). An application that set SO_RCVBUF keeps its size,
 * as Linux keeps a locked sk_rcvbuf (SOCK_RCVBUF_LOCK). */
#include "tcp_priv.h"

/* Linux's tcp_rmem[2] is 6 MB; FIFOs are powers of two. */
#define TCP_RCVBUF_MAX (4u << 20)
#define TCP_RCVBUF_DRAIN_US 2000

uint8_t tcp_rcv_wscale_of(const struct tcp_sockopts *o)
{
	/* The scale is fixed at the handshake (RFC 7323 §2.2): leave room for growth. */
	return tcp_wscale_for(o->rcvbuf_locked ? o->rcvbuf : TCP_RCVBUF_MAX);
}

void tcp_rcvbuf_note(struct tcp_conn *c)
{
	if (fifo_free(c->sk.rx) < c->sk.rx->size / 4) {
		c->rcv_full = true;
		c->rcv_full_us = c->s->now_us;
	}
}

static bool tcp_rcvbuf_may_grow(const struct tcp_conn *c)
{
	const struct sock *sk = &c->sk;
	return !c->opts.rcvbuf_locked && sk->rx->size < TCP_RCVBUF_MAX &&
	       fifo_used(sk->rx) == 0 && tcp_ooo_empty(&c->ooo) &&
	       (1u << c->rcv_wscale) * (uint64_t)UINT16_MAX >= 2ull * sk->rx->size &&
	       (sk->owner.rx_swappable == NULL || sk->owner.rx_swappable(sk));
}

void tcp_rcvbuf_adjust(struct tcp_conn *c)
{
	if (!c->rcv_full || fifo_used(c->sk.rx) != 0)
		return;
	bool quick = c->s->now_us - c->rcv_full_us <= TCP_RCVBUF_DRAIN_US;
	c->rcv_full = false;
	if (!quick || !tcp_rcvbuf_may_grow(c))
		return;
	struct fifo *bigger = sock_fifo_alloc(c->sk.mem, c->sk.rx->size * 2, 4096);
	if (bigger == NULL) {
		stack_count(c->s, STACK_EV_TCP_RCVBUF_NO_MEMORY);
		return;
	}
	struct fifo *old = c->sk.rx;
	c->sk.rx = bigger;
	if (c->sk.owner.rx_retire != NULL)
		c->sk.owner.rx_retire(&c->sk, old);
	else
		sock_fifo_free(c->sk.mem, old);
	stack_count(c->s, STACK_EV_TCP_RCVBUF_GROWN);
}
