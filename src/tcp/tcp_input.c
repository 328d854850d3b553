/* TCP input (RFC 9293 §3.10.7 "SEGMENT ARRIVES"): validation, demultiplexing to a connection
 * or listener, the handshake, the synchronized-state checks in the RFC's order (PAWS, sequence
 * acceptability, RST, SYN, ACK, data, FIN) with the RFC 5961 defences. The ACK itself is
 * tcp_ack.c's. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "tcp_input.h"
#include "tcp_priv.h"
#include "tcp_syncookie.h"
#include "stack/exception.h"
#include "wire/checksum.h"
#include "wire/bytes.h"
#include "wire/icmp4.h"
#include "wire/icmp6.h"
#include "wire/ipv4.h"

#define PAWS_IDLE_MS (24ull * 24 * 3600 * 1000) /* RFC 7323 §5.5: 24 days */

/* Stores len payload bytes, from the payload's byte skip on, at offset off past the
 * receive FIFO's tail. */
static void tcp_seg_store(const struct tcp_seg *g, uint32_t skip, struct fifo *f, uint32_t off,
			  uint32_t len)
{
	if (g->payload != NULL) {
		fifo_write_at(f, off, g->payload + skip, len);
		return;
	}
	uint32_t pos = g->pay_off + skip; /* offset in the datagram */
	for (const struct rte_mbuf *seg = g->m; seg != NULL && len > 0; seg = seg->next) {
		uint32_t dl = seg->data_len;
		if (pos >= dl) {
			pos -= dl;
			continue;
		}
		uint32_t n = RTE_MIN(dl - pos, len);
		fifo_write_at(f, off, rte_pktmbuf_mtod_offset(seg, const uint8_t *, pos), n);
		off += n;
		len -= n;
		pos = 0;
	}
}

static uint32_t seg_seq_len(const struct tcp_seg *g)
{
	return g->len + !!(g->th.flags & TCP_FLAG_SYN) + !!(g->th.flags & TCP_FLAG_FIN);
}

/* Options a SYN brings (RFC 7323 §2.2, RFC 2018 §2, RFC 3168 §6.1.1). */
static void tcp_negotiate(struct tcp_conn *c, const struct tcp_seg *g)
{
	const struct tcp_options *o = &g->th.options;
	c->flags &= ~(TCPF_SACK_OK | TCPF_TS_OK | TCPF_WSCALE_OK);
	if (o->sack_permitted)
		c->flags |= TCPF_SACK_OK;
	if (o->has_timestamps) {
		c->flags |= TCPF_TS_OK;
		c->ts_recent = o->tsval;
		c->ts_recent_ms = c->s->now_ms;
	}
	if (o->has_wscale) {
		c->flags |= TCPF_WSCALE_OK;
		c->snd_wscale = o->wscale;
	} else {
		c->snd_wscale = 0;
		c->rcv_wscale = 0;
	}
	tcp_conn_set_mss(c, o->has_mss ? o->mss : TCP_MSS_DEFAULT);
}

/* ---- LISTEN (RFC 9293 §3.10.7.2) ---- */

/* A connection for the segment g to listener l, in the table, owned as l is. */
static struct tcp_conn *tcp_child_alloc(struct tcp_conn *l, const struct tcp_seg *g)
{
	struct tcp_conn *c = tcp_conn_alloc(l->s, &l->opts);
	if (c == NULL)
		return NULL;
	c->sk.laddr = g->ip->dst;
	c->sk.lport = g->th.dst_port;
	c->sk.raddr = g->ip->src;
	c->sk.rport = g->th.src_port;
	c->sk.scope = inet_hdr_scope(g->ip);
	c->sk.owner = l->sk.owner;
	c->sk.mem = l->sk.mem;
	if (tcp_conn_insert(c) != 0) {
		tcp_conn_free(c);
		return NULL;
	}
	return c;
}

static struct tcp_conn *tcp_child_create(struct tcp_conn *l, const struct tcp_seg *g)
{
	struct stack *s = l->s;
	struct tcp_conn *c = tcp_child_alloc(l, g);
	if (c == NULL)
		return NULL;
	c->ts_offset = tcp_isn(&s->tcp->secret, &c->sk.laddr, c->sk.lport, &c->sk.raddr,
			       c->sk.rport, 0);
	c->irs = g->th.seq;
	c->rcv_nxt = g->th.seq + 1;
	/* No window advertised yet: without this, rcv_adv = 0 reads as a huge window
	 * (tcp_rcv_window keeps the right edge) for half of the peers' ISNs. */
	c->rcv_adv = c->rcv_nxt;
	c->rcv_adv_max = c->rcv_adv;
	c->rcv_wscale = tcp_rcv_wscale_of(&c->opts);
	tcp_set_state(c, TCP_SYN_RECEIVED);
	tcp_negotiate(c, g);
	c->snd_wnd = g->th.window; /* never scaled in a SYN (RFC 7323 §2.2) */
	c->max_sndwnd = c->snd_wnd;
	c->snd_wl1 = g->th.seq;
	return c;
}

/* A SYN when the SYN queue is full: answer statelessly with a cookie (RFC 4987 §3.6). */
static void tcp_syncookie_reply(struct tcp_conn *l, const struct tcp_seg *g)
{
	struct stack *s = l->s;
	const struct tcp_options *in = &g->th.options;
	uint16_t mss;
	uint32_t isn = tcp_syncookie_make(&s->tcp->secret, &g->ip->dst, g->th.dst_port, &g->ip->src,
					  g->th.src_port, g->th.seq,
					  in->has_mss ? in->mss : TCP_MSS_DEFAULT, s->now_ms, &mss);
	struct tcp_seg_out o = {
		.laddr = g->ip->dst,
		.raddr = g->ip->src,
		.scope = inet_hdr_scope(g->ip),
		.lport = g->th.dst_port,
		.rport = g->th.src_port,
		.seq = isn,
		.ack = g->th.seq + 1,
		.flags = TCP_FLAG_SYN | TCP_FLAG_ACK,
		.window = (uint16_t)(l->opts.rcvbuf > UINT16_MAX ? UINT16_MAX : l->opts.rcvbuf),
		.tos = l->opts.ip.tos & (uint8_t)~IP_ECN_MASK,
		.ttl = l->opts.ip.ttl,
	};
	/* The option announces what we can receive (RFC 9293 §3.7.1); the cookie keeps the
	 * peer's MSS (mss), as Linux's cookie SYN-ACKs do. */
	o.opts.has_mss = true;
	o.opts.mss = tcp_mss_ours(s, &g->ip->src, inet_hdr_scope(g->ip), &l->opts);
	/* Without timestamps there is nowhere to keep the other options: offer none, as
	 * Linux does. */
	if (in->has_timestamps) {
		struct tcp_syncookie_opts co = {
			.mss = mss,
			.sack_ok = in->sack_permitted,
			.wscale_ok = in->has_wscale,
			.wscale = in->wscale, /* the peer's shift: restored as snd_wscale */
			.ecn_ok = (g->th.flags & (TCP_FLAG_ECE | TCP_FLAG_CWR)) ==
				  (TCP_FLAG_ECE | TCP_FLAG_CWR),
			.ts_ok = true,
		};
		o.opts.has_timestamps = true;
		o.opts.tsval = tcp_syncookie_tsval(&co, tcp_now_ts(s));
		o.opts.tsecr = in->tsval;
		o.opts.sack_permitted = co.sack_ok;
		o.opts.has_wscale = co.wscale_ok;
		o.opts.wscale = tcp_rcv_wscale_of(&l->opts); /* ours, as the accept restores */
		if (co.ecn_ok)
			o.flags |= TCP_FLAG_ECE;
	}
	stack_count(s, STACK_EV_TCP_SYNCOOKIES_SENT);
	tcp_seg_send(s, &o);
}

/* The ACK completing a cookie handshake: rebuild the connection (RFC 4987 §3.6). NULL with
 * *valid set: a good cookie but no room (accept queue full, no memory). */
static struct tcp_conn *tcp_syncookie_accept(struct tcp_conn *l, const struct tcp_seg *g,
					     bool *valid)
{
	struct stack *s = l->s;
	uint16_t mss;
	if (tcp_syncookie_check(&s->tcp->secret, &g->ip->dst, g->th.dst_port, &g->ip->src,
				g->th.src_port, g->th.seq - 1, g->th.ack - 1, s->now_ms, &mss) != 0) {
		stack_count(s, STACK_EV_TCP_SYNCOOKIES_FAILED);
		return NULL;
	}
	*valid = true;
	if (l->accept_qlen >= l->backlog) {
		stack_count(s, STACK_EV_TCP_LISTEN_OVERFLOWS);
		return NULL;
	}
	struct tcp_conn *c = tcp_child_alloc(l, g);
	if (c == NULL)
		return NULL;
	c->flags |= TCPF_COOKIE;
	c->irs = g->th.seq - 1;
	c->rcv_nxt = g->th.seq;
	/* The window the cookie SYN-ACK offered (tcp_syncookie_reply, unscaled). */
	c->rcv_adv = c->rcv_nxt + (l->opts.rcvbuf > UINT16_MAX ? UINT16_MAX : l->opts.rcvbuf);
	c->rcv_adv_max = c->rcv_adv;
	c->iss = g->th.ack - 1;
	c->snd_una = g->th.ack - 1; /* the ACK below moves it past the SYN */
	c->snd_sml = c->snd_una;
	c->snd_nxt = g->th.ack;
	c->snd_max = g->th.ack;
	c->snd_wl1 = g->th.seq;
	c->snd_wl2 = g->th.ack;
	const struct tcp_options *in = &g->th.options;
	if (in->has_timestamps) {
		struct tcp_syncookie_opts co;
		tcp_syncookie_tsecr_decode(in->tsecr, &co);
		c->flags |= TCPF_TS_OK;
		c->ts_recent = in->tsval;
		c->ts_recent_ms = s->now_ms;
		if (co.sack_ok)
			c->flags |= TCPF_SACK_OK;
		if (co.wscale_ok) {
			c->flags |= TCPF_WSCALE_OK;
			c->snd_wscale = co.wscale;
			c->rcv_wscale = tcp_rcv_wscale_of(&l->opts);
		}
		if (co.ecn_ok)
			c->flags |= TCPF_ECN_OK;
	}
	tcp_set_state(c, TCP_SYN_RECEIVED);
	tcp_conn_set_mss(c, mss);
	c->parent = l;
	TAILQ_INSERT_TAIL(&l->syn_q, c, q_link);
	l->syn_qlen++;
	stack_count(s, STACK_EV_TCP_SYNCOOKIES_RECV);
	return c;
}

/* Returns the new child to continue processing the segment in, or NULL when done. */
static struct tcp_conn *tcp_listen_input(struct tcp_conn *l, const struct tcp_seg *g)
{
	struct stack *s = l->s;
	const uint8_t fl = g->th.flags;
	if (fl & TCP_FLAG_RST)
		return NULL; /* RFC 9293 §3.10.7.2: ignore */
	if (fl & TCP_FLAG_ACK) {
		if (!(fl & TCP_FLAG_SYN)) {
			bool valid = false;
			struct tcp_conn *c = tcp_syncookie_accept(l, g, &valid);
			if (c != NULL)
				return c;
			/* A good cookie without room is dropped, not reset (Linux with
			 * tcp_abort_on_overflow 0): the cookie stays valid, and the peer's
			 * next segment may find room. */
			if (valid)
				return NULL;
		}
		tcp_send_rst_reply(s, g->ip, &g->th, g->len);
		return NULL;
	}
	if (!(fl & TCP_FLAG_SYN)) {
		stack_drop_count(s, STACK_DROP_TCP_LISTEN_NO_SYN);
		return NULL;
	}
	if (l->accept_qlen >= l->backlog) {
		/* Linux drops the SYN too: a connection nobody accepts helps no one. */
		stack_count(s, STACK_EV_TCP_LISTEN_OVERFLOWS);
		return NULL;
	}
	if (l->syn_qlen >= 2 * l->backlog) {
		if (s->tcp->params.syncookies)
			tcp_syncookie_reply(l, g);
		else
			stack_count(s, STACK_EV_TCP_SYN_QUEUE_OVERFLOWS);
		return NULL;
	}
	struct tcp_conn *c = tcp_child_create(l, g);
	if (c == NULL) {
		stack_count(s, STACK_EV_TCP_NO_MEMORY);
		return NULL;
	}
	if ((fl & (TCP_FLAG_ECE | TCP_FLAG_CWR)) == (TCP_FLAG_ECE | TCP_FLAG_CWR))
		c->flags |= TCPF_ECN_OK; /* RFC 3168 §6.1.1: we always accept ECN */
	c->parent = l;
	TAILQ_INSERT_TAIL(&l->syn_q, c, q_link);
	l->syn_qlen++;
	c->iss = tcp_isn(&s->tcp->secret, &c->sk.laddr, c->sk.lport, &c->sk.raddr, c->sk.rport,
			 s->now_us);
	c->snd_una = c->iss;
	c->snd_sml = c->iss;
	c->snd_nxt = c->iss;
	c->snd_max = c->iss;
	stack_count(s, STACK_EV_TCP_PASSIVE_OPENS);
	/* Data in a SYN is not kept (no TCP Fast Open): the peer sends it again. */
	tcp_output(c, false);
	return NULL;
}

/* ---- SYN-SENT (RFC 9293 §3.10.7.3) ---- */

static void tcp_syn_sent_input(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct stack *s = c->s;
	const uint8_t fl = g->th.flags;
	bool ack_ok = false;
	if (fl & TCP_FLAG_ACK) {
		if (seq_le(g->th.ack, c->iss) || seq_gt(g->th.ack, c->snd_max)) {
			if (!(fl & TCP_FLAG_RST))
				tcp_send_rst_reply(s, g->ip, &g->th, g->len);
			stack_drop_count(s, STACK_DROP_TCP_BAD_ACK);
			return;
		}
		ack_ok = true;
	}
	if (fl & TCP_FLAG_RST) {
		/* RFC 5961 §3.2 keeps RFC 793's rule here: a reset counts only with an
		 * acceptable ACK. */
		if (ack_ok) {
			stack_count(s, STACK_EV_TCP_CONN_REFUSED);
			tcp_conn_done(c, ECONNREFUSED);
		}
		return;
	}
	if (!(fl & TCP_FLAG_SYN))
		return;
	c->irs = g->th.seq;
	c->rcv_nxt = g->th.seq + 1;
	c->rcv_adv = c->rcv_nxt; /* nothing advertised for this sequence space yet */
	c->rcv_adv_max = c->rcv_adv;
	tcp_negotiate(c, g);
	if (c->opts.ecn && (fl & (TCP_FLAG_ECE | TCP_FLAG_CWR)) == TCP_FLAG_ECE)
		c->flags |= TCPF_ECN_OK; /* RFC 3168 §6.1.1: ECE without CWR in the SYN-ACK */
	if (ack_ok) {
		c->snd_una = g->th.ack;
		c->snd_wnd = g->th.window; /* never scaled in a SYN (RFC 7323 §2.2) */
		c->max_sndwnd = c->snd_wnd;
		c->snd_wl1 = g->th.seq;
		c->snd_wl2 = g->th.ack;
		if (c->retries == 0) /* Karn: no sample from a retransmitted SYN */
			tcp_rtt_sample(c, (uint32_t)(s->now_us - c->rtt_start_us));
		tcp_timer_cancel(c, TCP_T_RTX);
		if (tcp_conn_established(c) < 0) {
			tcp_send_rst(c);
			tcp_conn_done(c, ENOMEM);
			return;
		}
		c->flags |= TCPF_ACK_NOW;
		return;
	}
	/* Simultaneous open (RFC 9293 §3.5, figure 7): SYN-RECEIVED, SYN-ACK from our ISS. */
	stack_count(s, STACK_EV_TCP_SIMULTANEOUS_OPENS);
	tcp_set_state(c, TCP_SYN_RECEIVED);
	c->snd_wnd = g->th.window;
	c->snd_wl1 = g->th.seq;
	c->snd_nxt = c->iss;
	tcp_output(c, false);
}

/* ---- Synchronized states (RFC 9293 §3.10.7.4) ---- */

/* RFC 9293 §3.10.7.4 "first, check sequence number": the four cases of the acceptability
 * table against the window we advertised. */
static bool tcp_seq_acceptable(const struct tcp_conn *c, const struct tcp_seg *g)
{
	uint32_t wnd = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t len = seg_seq_len(g);
	uint32_t seq = g->th.seq;
	if (len == 0)
		return wnd == 0 ? seq == c->rcv_nxt : seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd);
	if (wnd == 0)
		return false;
	return seq_in(seq, c->rcv_nxt, c->rcv_nxt + wnd) ||
	       seq_in(seq + len - 1, c->rcv_nxt, c->rcv_nxt + wnd);
}

/* A segment we cannot take from a sender that may rightly have sent it: text into a zero
 * window at RCV.NXT (RFC 9293 §3.10.7.4: "special allowance should be made to accept valid
 * ACKs"), or anything starting in the sliver a scaled window loses when it is rounded down
 * (RFC 7323 §2.4), up to the furthest edge we ever offered. Its ACK still counts. Without
 * this a sender whose SND.NXT lies in that sliver sends only unacceptable segments, the ACKs
 * of our own data are lost with them, and both directions stall (seen: an echo server
 * blocked on a full send FIFO with its receive FIFO full). */
static bool tcp_ack_past_window(const struct tcp_conn *c, const struct tcp_seg *g)
{
	if (!(g->th.flags & TCP_FLAG_ACK) || g->th.flags & (TCP_FLAG_SYN | TCP_FLAG_RST) ||
	    tcp_seq_acceptable(c, g))
		return false;
	uint32_t seq = g->th.seq, len = seg_seq_len(g);
	/* A pure ACK may sit at that edge: its sender filled the window it was given (Linux
	 * accepts SEG.SEQ = RCV.NXT + RCV.WND too, tcp_sequence). */
	bool offered = seq_le(seq, c->rcv_nxt) || seq_lt(seq, c->rcv_adv_max) ||
		       (len == 0 && seq == c->rcv_adv_max);
	return seq_gt(seq + len, c->rcv_nxt) && offered;
}

/* RFC 7323 §5.3 PAWS: a segment whose TSval is older than TS.Recent is a duplicate from an
 * earlier wrap of the sequence space. TS.Recent older than 24 days is no longer trusted. */
/* A duplicate ACK overtaken by a later segment: a pure ACK at RCV.NXT for SND.UNA that
 * changes no window, whose timestamp is at most an RTO older than TS.Recent. PAWS guards
 * against old data; this carries none, and its SACK blocks are what loss recovery needs
 * (Linux's tcp_disordered_ack; RFC 7323 §5.3 leaves ACK-only segments to judgement). */
static bool tcp_disordered_dupack(const struct tcp_conn *c, const struct tcp_seg *g)
{
	return g->len == 0 && !(g->th.flags & (TCP_FLAG_SYN | TCP_FLAG_FIN)) &&
	       g->th.seq == c->rcv_nxt && g->th.ack == c->snd_una &&
	       (uint32_t)g->th.window << c->snd_wscale == c->snd_wnd &&
	       c->ts_recent - g->th.options.tsval <= c->rto_ms;
}

static bool tcp_paws_reject(struct tcp_conn *c, const struct tcp_seg *g)
{
	if (!(c->flags & TCPF_TS_OK) || !g->th.options.has_timestamps || g->th.flags & TCP_FLAG_RST)
		return false;
	if (!seq_lt(g->th.options.tsval, c->ts_recent))
		return false;
	if (c->s->now_ms - c->ts_recent_ms > PAWS_IDLE_MS) {
		c->ts_recent = g->th.options.tsval;
		return false;
	}
	return !tcp_disordered_dupack(c, g);
}

static void tcp_rst_input(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct stack *s = c->s;
	/* RFC 5961 §3.2: only a reset at exactly RCV.NXT resets; one elsewhere in the window
	 * gets a challenge ACK, so a blind attacker must hit one number in 2^32. */
	if (g->th.seq != c->rcv_nxt) {
		stack_count(s, STACK_EV_TCP_RST_CHALLENGED);
		tcp_send_challenge_ack(c);
		return;
	}
	stack_count(s, STACK_EV_TCP_IN_RSTS);
	switch (c->state) {
	case TCP_SYN_RECEIVED:
		/* From LISTEN: back to it quietly; from an active open: refused. */
		tcp_conn_done(c, c->parent != NULL ? 0 : ECONNREFUSED);
		break;
	case TCP_TIME_WAIT:
		tcp_conn_done(c, 0);
		break;
	default:
		/* RFC 9293 §3.10.7.4 lets CLOSING, LAST-ACK and TIME-WAIT close quietly, but an
		 * owner that only shut writing still holds the socket, and Linux and FreeBSD
		 * tell it ECONNRESET in CLOSING and LAST-ACK (Linux's tcp_reset: EPIPE only in
		 * CLOSE-WAIT, where our FIN was never sent). */
		tcp_conn_done(c, c->state == TCP_CLOSE_WAIT ? EPIPE : ECONNRESET);
		break;
	}
}

static void tcp_fin_take(struct tcp_conn *c);

/* Quick-ACK mode (Linux's tcp_incr_quickack): the next segments are ACKed at once rather than
 * after the delayed-ACK time, so a sender in slow start is not held back by delayed ACKs
 * while its window opens (RFC 5681 §4.2 allows ACKing every segment; RFC 9293 §3.8.6.3 only
 * bounds the delay). As many as half the receive window holds full segments, at least 2, at
 * most TCP_QUICKACKS. */
static void tcp_quickack_enter(struct tcp_conn *c)
{
	uint32_t per = 2u * c->rcv_mss;
	uint32_t n = per != 0 ? tcp_rcv_window(c) / per : 0;
	if (n == 0)
		n = 2;
	if (n > TCP_QUICKACKS)
		n = TCP_QUICKACKS;
	if (n > c->quickacks)
		c->quickacks = (uint8_t)n;
	c->flags &= ~TCPF_PINGPONG;
}

/* Data arrived (Linux's tcp_event_data_recv): the first data of the connection, and data
 * after a pause longer than the RTO (the sender restarts from a small window), start a
 * quick-ACK run. */
static void tcp_quickack_on_data(struct tcp_conn *c)
{
	uint64_t now = c->s->now_ms;
	if (!(c->flags & TCPF_DATA_SEEN) || now - c->rcv_data_ms > c->rto_ms) {
		c->flags |= TCPF_DATA_SEEN;
		tcp_quickack_enter(c);
	}
	c->rcv_data_ms = now;
}

/* Keeps a FIN that came beyond a hole (RFC 9293 §3.10.7.4: segments past RCV.NXT are held
 * for later processing; the FIN takes a sequence number like a byte): its sequence number
 * joins the out-of-order ranges, so the SACK blocks cover it as Linux's do, and the FIN is
 * taken as soon as the hole fills, without waiting for the peer to send it again. The
 * first FIN kept is the one that counts. */
static void tcp_ooo_fin_keep(struct tcp_conn *c, uint32_t fin_seq)
{
	if (c->flags & TCPF_OOO_FIN)
		return;
	c->flags |= TCPF_OOO_FIN;
	c->ooo_fin_seq = fin_seq;
	stack_count(c->s, STACK_EV_TCP_OOO_FINS);
}

/* RFC 9293 §3.10.7.4 "seventh, process the segment text". */
static void tcp_data_input(struct tcp_conn *c, struct tcp_seg *g)
{
	struct stack *s = c->s;
	uint32_t seq = g->th.seq;
	uint32_t skip = 0; /* payload bytes we already have */
	uint32_t len = g->len;
	if (seq_lt(seq, c->rcv_nxt)) {
		uint32_t dup = c->rcv_nxt - seq;
		if (dup >= len) {
			/* All old: a retransmission we already have (RFC 2883 D-SACK). Our ACKs
			 * may be getting lost: ACK the next ones at once too (Linux's
			 * tcp_data_queue enters quick-ACK mode here). */
			c->dsack = (struct tcp_sack_block){seq, seq + len};
			c->has_dsack = true;
			c->flags |= TCPF_ACK_NOW;
			tcp_quickack_enter(c);
			stack_count(s, STACK_EV_TCP_DUPLICATE_SEGS);
			return;
		}
		c->dsack = (struct tcp_sack_block){seq, c->rcv_nxt};
		c->has_dsack = true;
		seq += dup;
		skip = dup;
		len -= dup;
		stack_count(s, STACK_EV_TCP_PARTIAL_DUPLICATES);
	}
	tcp_rcvbuf_adjust(c);
	uint32_t wnd = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t room = fifo_free(c->sk.rx);
	uint32_t limit = wnd < room ? wnd : room;
	uint32_t off = seq - c->rcv_nxt;
	if (off >= limit) {
		stack_drop_count(s, STACK_DROP_TCP_DATA_PAST_WINDOW);
		c->flags |= TCPF_ACK_NOW;
		g->th.flags &= (uint8_t)~TCP_FLAG_FIN;
		return;
	}
	if (off + len > limit) {
		/* RFC 9293 §3.10.7.4: trim what lies beyond the window; the FIN goes with it. */
		stack_drop_count(s, STACK_DROP_TCP_DATA_PAST_WINDOW);
		len = limit - off;
		g->th.flags &= (uint8_t)~TCP_FLAG_FIN;
	}
	tcp_quickack_on_data(c);
	if (off != 0) {
		struct tcp_sack_block d;
		bool has_d = false;
		/* A FIN the window left on the segment is kept with its data (its sequence
		 * number as one more in the range; it takes no room in the FIFO). */
		uint32_t fin = g->th.flags & TCP_FLAG_FIN ? 1 : 0;
		int n = tcp_ooo_add(&c->ooo, c->rcv_nxt, seq, len + fin, &d, &has_d);
		if (n < 0) {
			stack_drop_count(s, STACK_DROP_TCP_OOO_DROPPED);
		} else {
			tcp_seg_store(g, skip, c->sk.rx, off, len);
			stack_count(s, STACK_EV_TCP_OOO_SEGS);
			if (fin)
				tcp_ooo_fin_keep(c, seq + len);
			if (has_d) {
				c->dsack = d;
				c->has_dsack = true;
			}
		}
		/* RFC 5681 §4.2: an out-of-order segment is acknowledged at once (dupACK with
		 * SACK blocks), and so is one that fills a hole. */
		c->flags |= TCPF_ACK_NOW;
		g->th.flags &= (uint8_t)~TCP_FLAG_FIN; /* kept above, taken when the hole fills */
		return;
	}
	tcp_seg_store(g, skip, c->sk.rx, 0, len);
	uint32_t nxt = c->rcv_nxt + len;
	bool had_ooo = !tcp_ooo_empty(&c->ooo);
	if (had_ooo) {
		nxt = tcp_ooo_advance(&c->ooo, nxt);
		c->flags |= TCPF_ACK_NOW;
	}
	/* The data reached a FIN kept beyond the hole: it ends the stream there. */
	bool fin_now = c->flags & TCPF_OOO_FIN && seq_gt(nxt, c->ooo_fin_seq);
	if (fin_now) {
		nxt = c->ooo_fin_seq;
		c->flags &= ~TCPF_OOO_FIN;
		tcp_ooo_clear(&c->ooo);
	}
	uint32_t delivered = nxt - c->rcv_nxt;
	fifo_produce(c->sk.rx, delivered);
	tcp_rcvbuf_note(c);
	c->rcv_nxt = nxt;
	c->bytes_received += delivered;
	if (c->flags & TCPF_RD_SHUT)
		fifo_consume(c->sk.rx, delivered);
	else
		tcp_notify(c, SOCK_EV_IN);
	/* RFC 9293 §3.8.6.3 / RFC 5681 §4.2: ACK at least every second full-sized segment,
	 * otherwise within the delayed-ACK time. With timestamps a full-sized segment carries
	 * 12 bytes less than the MSS we announced (RFC 6691 §3). A segment that GRO merged
	 * from two or more (src/dp/gro.c) is ACKed at once, as Linux's byte count does. */
	uint32_t full = c->rcv_mss - (c->flags & TCPF_TS_OK ? TCPOLEN_TSTAMP_ALIGNED : 0);
	if (len >= full || c->segs_unacked > 0)
		c->segs_unacked += len >= 2 * full ? 2 : 1;
	if (c->segs_unacked >= 2) {
		c->flags |= TCPF_ACK_NOW;
	} else if (c->quickacks > 0 && !(c->flags & TCPF_PINGPONG)) {
		/* Quick-ACK mode (tcp_quickack_enter): no delay; interactive traffic
		 * (PINGPONG: we answer within the delayed-ACK time) piggybacks instead. */
		if (!(c->flags & TCPF_ACK_NOW))
			stack_count(s, STACK_EV_TCP_QUICK_ACKS);
		c->flags |= TCPF_ACK_NOW;
	} else if (!(c->flags & TCPF_ACK_NOW) && !tcp_timer_armed(c, TCP_T_DELACK)) {
		tcp_timer_arm(c, TCP_T_DELACK, s->tcp->params.delack_ms);
	}
	if (fin_now)
		tcp_fin_take(c);
}

/* RFC 9293 §3.10.7.4 "eighth, check the FIN bit". */
static void tcp_fin_input(struct tcp_conn *c, const struct tcp_seg *g)
{
	if (g->th.seq + g->len != c->rcv_nxt && !(g->len == 0 && g->th.seq == c->rcv_nxt)) {
		/* A bare FIN beyond a hole: kept (tcp_ooo_fin_keep) and answered at once by a
		 * duplicate ACK with its SACK block (RFC 5681 §4.2), as Linux queues it out of
		 * order. With data, tcp_data_input kept it. */
		bool receiving = c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
				 c->state == TCP_FIN_WAIT_2;
		if (g->len == 0 && receiving && seq_gt(g->th.seq, c->rcv_nxt)) {
			struct tcp_sack_block d;
			bool has_d = false;
			if (tcp_ooo_add(&c->ooo, c->rcv_nxt, g->th.seq, 1, &d, &has_d) < 0) {
				stack_drop_count(c->s, STACK_DROP_TCP_OOO_DROPPED);
			} else {
				tcp_ooo_fin_keep(c, g->th.seq);
				if (has_d) {
					c->dsack = d;
					c->has_dsack = true;
				}
			}
			c->flags |= TCPF_ACK_NOW;
		}
		return;
	}
	tcp_fin_take(c);
}

/* The FIN at RCV.NXT, in order (RFC 9293 §3.10.7.4 "eighth"). */
static void tcp_fin_take(struct tcp_conn *c)
{
	c->rcv_nxt++;
	c->flags |= TCPF_ACK_NOW;
	stack_count(c->s, STACK_EV_TCP_IN_FINS);
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		tcp_set_state(c, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT_1:
		if (tcp_fin_acked(c))
			tcp_conn_enter_time_wait(c);
		else
			tcp_set_state(c, TCP_CLOSING);
		break;
	case TCP_FIN_WAIT_2:
		tcp_conn_enter_time_wait(c);
		break;
	case TCP_TIME_WAIT:
		tcp_timer_arm(c, TCP_T_KEEP, c->s->tcp->params.time_wait_ms);
		break;
	default:
		break;
	}
	tcp_notify(c, SOCK_EV_IN | SOCK_EV_RDHUP);
}

static void tcp_established_input(struct tcp_conn *c, struct tcp_seg *g)
{
	struct stack *s = c->s;
	const uint8_t fl = g->th.flags;
	if (tcp_paws_reject(c, g)) {
		stack_drop_count(s, STACK_DROP_TCP_PAWS);
		tcp_send_ack(c);
		return;
	}
	if ((fl & (TCP_FLAG_SYN | TCP_FLAG_RST)) == TCP_FLAG_SYN) {
		/* A SYN with RST is a reset, below (Linux checks RST before SYN: it resets at
		 * RCV.NXT, draws a challenge ACK elsewhere in the window).
		 * RFC 5961 §4.2: a SYN on a synchronized connection gets a challenge ACK
		 * "irrespective of the sequence number", so before the window check (Linux:
		 * tcp_validate_incoming's syn_challenge). In SYN-RECEIVED a resent SYN from the
		 * same peer (at IRS, hence left of the window) only means our SYN-ACK was lost:
		 * send it again (Linux: tcp_check_req). */
		if (c->state == TCP_SYN_RECEIVED && g->th.seq == c->irs &&
		    !(fl & (TCP_FLAG_ACK | TCP_FLAG_FIN))) {
			c->snd_nxt = c->iss;
			c->retransmits++;
			stack_count(s, STACK_EV_TCP_RETRANS_SEGS);
			tcp_output(c, false);
			return;
		}
		/* A SYN with FIN is handled as the SYN it carries (Linux's tcp_validate_incoming
		 * looks at th->syn alone): the challenge ACK, never the FIN. */
		if (fl & TCP_FLAG_FIN)
			stack_count(s, STACK_EV_TCP_SYN_FIN_CHALLENGED);
		stack_count(s, STACK_EV_TCP_SYN_CHALLENGED);
		tcp_send_challenge_ack(c);
		return;
	}
	if (tcp_ack_past_window(c, g)) {
		/* Keep the ACK as if it came at RCV.NXT, drop the text (and a FIN with it). */
		if (seg_seq_len(g) != 0)
			stack_drop_count(s, STACK_DROP_TCP_DATA_PAST_WINDOW);
		g->th.seq = c->rcv_nxt;
		g->len = 0;
		g->th.flags &= (uint8_t)~TCP_FLAG_FIN;
		c->flags |= TCPF_ACK_NOW;
	}
	if (!tcp_seq_acceptable(c, g)) {
		/* Data wholly received already (a resend whose ACK was lost, or a spurious
		 * retransmission: a peer's tail loss probe on a busy path) loses nothing: an
		 * event. What lies beyond the window we offered is a drop. */
		if (g->len != 0 && seq_le(g->th.seq + g->len, c->rcv_nxt))
			stack_count(s, STACK_EV_TCP_DUPLICATE_SEGS);
		else
			stack_drop_count(s, STACK_DROP_TCP_OUT_OF_WINDOW);
		if (fl & TCP_FLAG_RST)
			return;
		/* RFC 2883 §4: data already received is reported by a D-SACK in the ACK (as
		 * Linux's tcp_send_dupack): the only way the sender learns the resend was not
		 * needed. */
		if (c->flags & TCPF_SACK_OK && g->len != 0 && seq_lt(g->th.seq, c->rcv_nxt)) {
			uint32_t end = g->th.seq + g->len;
			c->dsack = (struct tcp_sack_block){g->th.seq, seq_lt(end, c->rcv_nxt) ? end
											   : c->rcv_nxt};
			c->has_dsack = true;
		}
		/* Old data again: our ACKs may be getting lost, so ACK the next segments at
		 * once too (Linux's tcp_send_dupack enters quick-ACK mode). */
		if (g->len != 0 && seq_lt(g->th.seq, c->rcv_nxt))
			tcp_quickack_enter(c);
		tcp_send_ack(c);
		return;
	}
	if (fl & TCP_FLAG_RST) {
		tcp_rst_input(c, g);
		return;
	}
	if (!(fl & TCP_FLAG_ACK)) {
		stack_drop_count(s, STACK_DROP_TCP_NO_ACK);
		return;
	}
	/* RFC 7323 §4.3: remember the timestamp of the segment at the left window edge. */
	if (c->flags & TCPF_TS_OK && g->th.options.has_timestamps &&
	    seq_le(g->th.seq, c->last_ack_sent) && seq_ge(g->th.options.tsval, c->ts_recent)) {
		c->ts_recent = g->th.options.tsval;
		c->ts_recent_ms = s->now_ms;
	}
	if (!tcp_ack_input(c, g))
		return;
	c->last_rx_ms = s->now_ms;
	c->probes = 0;
	/* RFC 3168 §6.1.3: a CE mark is echoed with ECE until the sender's CWR. */
	if (c->flags & TCPF_ECN_OK) {
		if ((g->ecn & IP_ECN_MASK) == IP_ECN_CE) {
			c->flags |= TCPF_ECE | TCPF_ACK_NOW;
			stack_count(s, STACK_EV_TCP_ECN_CE_RX);
		} else if (fl & TCP_FLAG_CWR) {
			c->flags &= ~TCPF_ECE;
		}
	}
	if (g->len != 0) {
		switch (c->state) {
		case TCP_FIN_WAIT_1:
		case TCP_FIN_WAIT_2:
			/* RFC 1122 §4.2.2.13: new data for a connection its owner closed can
			 * never be read: reset it (as Linux does) rather than ACK into a void. */
			if ((c->flags & TCPF_ORPHAN) && seq_gt(g->th.seq + g->len, c->rcv_nxt)) {
				tcp_send_rst(c);
				tcp_conn_done(c, ECONNRESET);
				return;
			}
			tcp_data_input(c, g);
			break;
		case TCP_ESTABLISHED:
			tcp_data_input(c, g);
			break;
		default:
			/* RFC 9293: after the peer's FIN, more text is ignored; say so. */
			stack_drop_count(s, STACK_DROP_TCP_DATA_AFTER_FIN);
			c->flags |= TCPF_ACK_NOW;
			break;
		}
	}
	if (g->th.flags & TCP_FLAG_FIN)
		tcp_fin_input(c, g);
}

/* RFC 6191 / RFC 1122 §4.2.2.13, as Linux's tcp_timewait_state_process: a SYN for a
 * connection in TIME-WAIT may start a new incarnation when its sequence number or its
 * timestamp is newer than the old one's, and PAWS does not reject it. */
static bool tcp_time_wait_reusable(const struct tcp_conn *c, const struct tcp_seg *g)
{
	if ((g->th.flags & (TCP_FLAG_SYN | TCP_FLAG_ACK | TCP_FLAG_RST | TCP_FLAG_FIN)) !=
	    TCP_FLAG_SYN)
		return false;
	bool ts = c->flags & TCPF_TS_OK && g->th.options.has_timestamps;
	if (ts && seq_lt(g->th.options.tsval, c->ts_recent))
		return false;
	return seq_gt(g->th.seq, c->rcv_nxt) || (ts && seq_gt(g->th.options.tsval, c->ts_recent));
}

/* TIME-WAIT (RFC 9293 §3.10.7.4), as Linux's tcp_timewait_state_process: a bare ACK or a
 * reset exactly at RCV.NXT is taken silently (the reset ends TIME-WAIT: Linux's default,
 * tcp_rfc1337 = 0); any other non-reset segment, above all a retransmitted FIN whose ACK was
 * lost, is answered by an ACK, and one carrying ACK restarts the 2 MSL timer ("acknowledge
 * it, and restart the 2 MSL timeout"). Other resets are dropped. Answers to segments without
 * text (a bare ACK or SYN) are limited to one per TCP_OOW_ACK_MS per connection, as Linux's
 * tcp_oow_rate_limited, so two stacks cannot ACK each other in a loop. */
static void tcp_time_wait_input(struct tcp_conn *c, const struct tcp_seg *g)
{
	struct stack *s = c->s;
	const uint8_t fl = g->th.flags;
	bool paws = tcp_paws_reject(c, g);
	if (!paws && g->th.seq == c->rcv_nxt && (seg_seq_len(g) == 0 || fl & TCP_FLAG_RST)) {
		if (fl & TCP_FLAG_RST) {
			stack_count(s, STACK_EV_TCP_IN_RSTS);
			tcp_conn_done(c, 0);
			return;
		}
		tcp_timer_arm(c, TCP_T_KEEP, s->tcp->params.time_wait_ms);
		if (c->flags & TCPF_TS_OK && g->th.options.has_timestamps) {
			c->ts_recent = g->th.options.tsval;
			c->ts_recent_ms = s->now_ms;
		}
		return;
	}
	if (fl & TCP_FLAG_RST) {
		stack_drop_count(s, STACK_DROP_TCP_OUT_OF_WINDOW);
		return;
	}
	if (paws)
		stack_drop_count(s, STACK_DROP_TCP_PAWS);
	if (paws || fl & TCP_FLAG_ACK)
		tcp_timer_arm(c, TCP_T_KEEP, s->tcp->params.time_wait_ms);
	if (seg_seq_len(g) == 0 || fl & TCP_FLAG_SYN) {
		if (c->flags & TCPF_OOW_ACKED && s->now_ms - c->oow_ack_ms < TCP_OOW_ACK_MS)
			return;
		c->flags |= TCPF_OOW_ACKED;
		c->oow_ack_ms = s->now_ms;
	}
	stack_count(s, STACK_EV_TCP_TIME_WAIT_ACKS);
	tcp_send_ack(c);
}

static bool tcp_checksum_ok(const struct rte_mbuf *m, const struct inet_hdr *ip,
			    const uint8_t *seg, size_t len)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return true;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	if (m->nb_segs == 1) {
		uint32_t sum = inet_addr_csum_pseudo(&ip->src, &ip->dst, IP4_PROTO_TCP,
						     (uint32_t)len);
		return wire_csum_finish(wire_csum_add(sum, seg, len)) == 0;
	}
	return inet_l4_checksum(m, ip, IP4_PROTO_TCP, (uint32_t)len) == 0;
}

void tcp_input(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *ip, bool bcast)
{
	stack_count(s, STACK_EV_TCP_IN_SEGS);
	if (bcast) {
		/* RFC 1122 §4.2.3.10: no TCP to broadcast or multicast addresses. */
		stack_drop(s, STACK_DROP_TCP_BCAST, m);
		return;
	}
	/* The header as one view: in place in the first mbuf, or gathered from a chain whose
	 * first piece is shorter (a reassembled datagram, RFC 1122 §3.3.2; IP fragments may
	 * cut anywhere). The parser reads no more than the header. */
	uint8_t hdr_copy[TCP_HDR_MAX_LEN];
	size_t seg_len = ip->l4_len;
	const uint8_t *seg = rte_pktmbuf_read(m, ip->l4_off,
					      (uint32_t)RTE_MIN(seg_len, sizeof(hdr_copy)), hdr_copy);
	struct tcp_seg g = {.ip = ip, .m = m, .ecn = ip->tos & IP_ECN_MASK};
	enum wire_status st = seg != NULL ? tcp_parse(seg, seg_len, &g.th) : WIRE_TRUNCATED;
	if (st != WIRE_OK) {
		stack_drop(s, st == WIRE_TRUNCATED ? STACK_DROP_TCP_TRUNCATED
			   : st == WIRE_BAD_HDR_LEN ? STACK_DROP_TCP_BAD_HDR_LEN
			   : st == WIRE_BAD_OPTION ? STACK_DROP_TCP_BAD_OPTION
			   : STACK_DROP_TCP_BAD_FLAGS, m);
		return;
	}
	if (!tcp_checksum_ok(m, ip, seg, seg_len)) {
		stack_drop(s, STACK_DROP_TCP_BAD_CHECKSUM, m);
		return;
	}
	g.pay_off = (uint32_t)(ip->l4_off + g.th.hdr_len);
	g.payload = m->nb_segs == 1 ? seg + g.th.hdr_len : NULL;
	g.len = (uint32_t)(seg_len - g.th.hdr_len);

	struct tcp_conn *c = tcp_conn_lookup(s, &ip->dst, g.th.dst_port, &ip->src, g.th.src_port);
	/* SYN+FIN opens nothing: a listener or a SYN-SENT connection drops it without an
	 * answer (Linux: tcp_rcv_state_process in LISTEN); a closed port resets it like any
	 * other segment (Linux's tcp_v4_send_reset does, RFC 9293 §3.10.7.1); a synchronized
	 * connection answers it with a challenge ACK (RFC 5961 §4). */
	const uint8_t sf = TCP_FLAG_SYN | TCP_FLAG_FIN;
	bool syn_fin = (g.th.flags & sf) == sf;
	if (syn_fin && c != NULL && c->state == TCP_SYN_SENT) {
		stack_drop(s, STACK_DROP_TCP_BAD_FLAGS, m);
		return;
	}
	if (c != NULL && c->state == TCP_TIME_WAIT && tcp_time_wait_reusable(c, &g)) {
		stack_count(s, STACK_EV_TCP_TIME_WAIT_REUSED);
		/* Out of the table for the new incarnation; freed now if orphaned, else when
		 * its owner closes it. */
		tcp_conn_done(c, 0);
		c = NULL;
	}
	if (c == NULL) {
		struct tcp_conn *l = tcp_listener_lookup(s, &ip->dst, g.th.dst_port);
		if (l == NULL) {
			/* Not the stack's: maybe the kernel's (its listeners, its connections). */
			if (stack_exception(s, m, STACK_EV_KERNEL_TCP))
				return;
			/* RFC 9293 §3.10.7.1: CLOSED answers everything but a reset with one. */
			stack_count(s, STACK_EV_TCP_NO_CONN);
			tcp_send_rst_reply(s, ip, &g.th, g.len);
			rte_pktmbuf_free(m);
			return;
		}
		if (syn_fin) {
			stack_drop(s, STACK_DROP_TCP_BAD_FLAGS, m);
			return;
		}
		c = tcp_listen_input(tcp_listener_select(l, &ip->src, g.th.src_port), &g);
		if (c == NULL) {
			rte_pktmbuf_free(m);
			tcp_deliver_events(s);
			tcp_reap(s);
			return;
		}
	}
	c->segs_in++;
	if (c->state == TCP_SYN_SENT)
		tcp_syn_sent_input(c, &g);
	else if (c->state == TCP_TIME_WAIT)
		tcp_time_wait_input(c, &g);
	else
		tcp_established_input(c, &g);
	if (!(c->flags & TCPF_FREED) && c->state != TCP_CLOSED) {
		if (c->flags & TCPF_ACK_NOW)
			tcp_output(c, true);
		else
			tcp_output(c, false);
	}
	rte_pktmbuf_free(m);
	tcp_deliver_events(s);
	tcp_reap(s);
}

/* The connection an ICMP or ICMPv6 error quotes a segment of (RFC 1122 §4.2.3.9, RFC
 * 5927): the quoted sequence number must lie in [SND.UNA, SND.MAX) or the message is forged
 * or stale (counted). NULL when there is none to tell. */
static struct tcp_conn *tcp_icmp_conn(struct stack *s, const struct inet_addr *laddr,
				      const struct inet_addr *raddr, const uint8_t *l4,
				      size_t l4_len)
{
	if (l4_len < 8)
		return NULL;
	uint16_t sport = wire_get_be16(l4), dport = wire_get_be16(l4 + 2);
	uint32_t seq = wire_get_be32(l4 + 4);
	struct tcp_conn *c = tcp_conn_lookup(s, laddr, sport, raddr, dport);
	if (c == NULL || c->state == TCP_TIME_WAIT)
		return NULL;
	if (!seq_in(seq, c->snd_una, c->snd_max) && !(c->snd_una == c->snd_max && seq == c->snd_una)) {
		stack_count(s, STACK_EV_TCP_ICMP_IGNORED);
		return NULL;
	}
	stack_count(s, STACK_EV_TCP_ICMP_ERRORS);
	return c;
}

/* The path MTU is mtu (frag-needed, RFC 1191 §6.4; Packet Too Big, RFC 8201 §4), at least
 * floor: the MSS follows and what was sent beyond it goes again. */
static void tcp_pmtu_lower(struct stack *s, struct tcp_conn *c, uint32_t mtu, uint32_t floor)
{
	/* A forged message naming a tiny MTU would otherwise make a live connection send tiny
	 * segments (RFC 5927 §7.2): never below the floor, counted. */
	if (mtu < floor) {
		stack_count(s, STACK_EV_TCP_PMTU_CLAMPED);
		mtu = floor;
	}
	uint32_t hdrs = inet_addr_is_v4(&c->sk.raddr) ? 40 : IP6_HDR_LEN + 20;
	uint32_t ts = c->flags & TCPF_TS_OK ? TCPOLEN_TSTAMP_ALIGNED : 0;
	if (mtu - hdrs - ts >= c->snd_mss)
		return;
	uint32_t mss = mtu - hdrs - ts;
	c->snd_mss = (uint16_t)(mss < TCP_MSS_MIN ? TCP_MSS_MIN : mss);
	c->cc.mss = c->snd_mss;
	c->snd_nxt = c->snd_una;
	tcp_output(c, false);
	tcp_deliver_events(s);
}

/* Unreachable: a refused opening connection ends (hard, as Linux); every other error is
 * soft, remembered and reported only if the connection then times out. */
static void tcp_icmp_unreach(struct stack *s, struct tcp_conn *c, int err)
{
	if (c->state == TCP_SYN_SENT && err == ECONNREFUSED)
		tcp_conn_done(c, err);
	else
		c->soft_error = err;
	tcp_deliver_events(s);
	tcp_reap(s);
}

void tcp_icmp_error(struct stack *s, const struct ip4_repr *qip, const uint8_t *l4,
		    size_t l4_len, uint8_t type, uint8_t code, uint32_t info)
{
	struct tcp_conn *c = tcp_icmp_conn(s, INET_ADDR_V4(qip->src), INET_ADDR_V4(qip->dst),
					   l4, l4_len);
	if (c == NULL)
		return;
	if (type == ICMP4_DEST_UNREACH && code == ICMP4_UNREACH_FRAG_NEEDED) {
		/* RFC 1191 §3 leaves the plateau to the host; Linux never goes below
		 * ip_rt_min_pmtu (552): neither do we. */
		tcp_pmtu_lower(s, c, info & 0xffff, TCP_PMTU_MIN);
		return;
	}
	int err = EHOSTUNREACH;
	if (type == ICMP4_DEST_UNREACH) {
		if (code == ICMP4_UNREACH_PORT || code == ICMP4_UNREACH_PROTO)
			err = ECONNREFUSED;
		else if (code == ICMP4_UNREACH_NET)
			err = ENETUNREACH;
	}
	tcp_icmp_unreach(s, c, err);
}

void tcp_icmp6_error(struct stack *s, const struct inet_hdr *quoted, const uint8_t *l4,
		     size_t l4_len, uint8_t type, uint8_t code, uint32_t info)
{
	struct tcp_conn *c = tcp_icmp_conn(s, &quoted->src, &quoted->dst, l4, l4_len);
	if (c == NULL)
		return;
	if (type == ICMP6_PACKET_TOO_BIG) {
		/* RFC 8201 §4: never below the IPv6 minimum MTU. */
		tcp_pmtu_lower(s, c, info, IP6_MIN_MTU);
		return;
	}
	int err = EHOSTUNREACH;
	if (type == ICMP6_DEST_UNREACH) {
		if (code == ICMP6_UNREACH_PORT)
			err = ECONNREFUSED;
		else if (code == ICMP6_UNREACH_NO_ROUTE)
			err = ENETUNREACH;
	}
	tcp_icmp_unreach(s, c, err);
}
