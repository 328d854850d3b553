/* TCP output: building segments (header, options, payload from the send FIFO, checksum) and
 * deciding what to send: SYN and SYN-ACK, data within min(cwnd, peer window) with Nagle and
 * sender SWS avoidance (RFC 9293 §3.7.4, §3.8.6.2.1), FIN after the data, pure ACKs with SACK
 * blocks (RFC 2018) and timestamps (RFC 7323), ECN marks (RFC 3168), and resets. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "tcp_priv.h"
#include "wire/checksum.h"
#include "wire/ipv4.h"


uint32_t tcp_now_ts(const struct stack *s)
{
	return (uint32_t)s->now_ms;
}

/* Appends payload bytes the first mbuf had no room for in more mbufs chained to it: for a
 * TSO segment, and for a segment to one of our own addresses (up to 64 KB, see
 * tcp_mss_ours) of the one connection that cannot lend them (tcp_seg_lend): one to itself.
 * Returns the bytes copied: fewer than len when mbufs ran out. */
static uint32_t tcp_seg_chain(struct stack *s, struct rte_mbuf *m, const struct fifo *f,
			      uint32_t off, uint32_t len)
{
	uint32_t done = 0;
	struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
	while (done < len) {
		struct rte_mbuf *n = rte_pktmbuf_alloc(s->pool);
		if (n == NULL) {
			stack_count(s, STACK_EV_TCP_TX_NO_MBUF);
			break;
		}
		uint32_t k = RTE_MIN(len - done, (uint32_t)rte_pktmbuf_tailroom(n));
		uint8_t *dst = (uint8_t *)rte_pktmbuf_append(n, (uint16_t)k);
		fifo_peek(f, off + done, dst, k);
		last->next = n;
		last = n;
		m->nb_segs++;
		m->pkt_len += k;
		done += k;
	}
	return done;
}

/* A segment to another socket of this stack carries its payload by reference: mbufs
 * attached (as external buffers) to the send FIFO's bytes, one per contiguous run, which
 * the receiver copies into its receive FIFO when the loopback queue delivers the segment.
 * One copy instead of two, and no 2 KB mbuf per 2 KB of data. The bytes stay put until
 * acknowledged, which cannot happen before that delivery; a connection whose send FIFO
 * goes first takes its segments out of the queue (tcp_conn_buffers_free). Lent mbufs
 * never reach a port (a loopback datagram is never forwarded, in either family) nor
 * another worker (stack_steer_to copies them). Returns the bytes lent: fewer than len
 * when mbufs ran out. */
static uint32_t tcp_seg_lend(struct stack *s, struct rte_mbuf *m, const struct fifo *f,
			     uint32_t off, uint32_t len, struct rte_mbuf_ext_shared_info *lend)
{
	struct fifo_slice run[2];
	unsigned runs = fifo_read_slices(f, off, len, run);
	struct rte_mbuf *last = rte_pktmbuf_lastseg(m);
	uint32_t done = 0;
	for (unsigned i = 0; i < runs; i++) {
		for (uint32_t at = 0; at < run[i].len;) {
			struct rte_mbuf *n = rte_pktmbuf_alloc(s->pool);
			if (n == NULL) {
				stack_count(s, STACK_EV_TCP_TX_NO_MBUF);
				return done;
			}
			uint16_t k = (uint16_t)RTE_MIN(run[i].len - at, (uint32_t)UINT16_MAX);
			rte_mbuf_ext_refcnt_update(lend, 1);
			rte_pktmbuf_attach_extbuf(n, run[i].base + at, RTE_BAD_IOVA, k, lend);
			n->data_len = k;
			n->pkt_len = k;
			last->next = n;
			last = n;
			m->nb_segs++;
			m->pkt_len += k;
			at += k;
			done += k;
		}
	}
	return done;
}

int tcp_seg_send(struct stack *s, const struct tcp_seg_out *o)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		stack_count(s, STACK_EV_TCP_TX_NO_MBUF);
		return -ENOBUFS;
	}
	struct tcp_repr th = {
		.src_port = o->lport,
		.dst_port = o->rport,
		.seq = o->seq,
		.ack = o->ack,
		.flags = o->flags,
		.window = o->window,
		.options = o->opts,
	};
	/* A segment to one of our own addresses goes through the loopback queue, whose input
	 * does not verify checksums (stack_loopback_queue): computing one would be wasted. Only
	 * such segments and TSO ones are larger than one mbuf. */
	bool local;
	tcp_path_mtu(s, &o->raddr, o->scope, &local);
	bool lend = local && o->lend != NULL && o->len != 0;
	/* The headers' room, then as much payload as the first mbuf holds (none when lent). */
	uint32_t tail = rte_pktmbuf_tailroom(m);
	uint32_t first = lend || tail <= TCP_HDR_MAX_LEN ? 0
							  : RTE_MIN(o->len, tail - TCP_HDR_MAX_LEN);
	uint8_t *buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(TCP_HDR_MAX_LEN + first));
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		stack_count(s, STACK_EV_TCP_TX_NO_MBUF);
		return -EMSGSIZE;
	}
	size_t hlen = tcp_build(buf, TCP_HDR_MAX_LEN, &th);
	/* The header may be shorter than the room kept for it: the payload follows it. */
	uint32_t copied = first == 0 ? 0 : fifo_peek(o->fifo, o->fifo_off, buf + hlen, first);
	rte_pktmbuf_trim(m, (uint16_t)(TCP_HDR_MAX_LEN - hlen + (first - copied)));
	if (lend)
		copied = tcp_seg_lend(s, m, o->fifo, o->fifo_off, o->len, o->lend);
	else if ((local || o->tso_segsz != 0) && copied == first && o->len > first)
		copied += tcp_seg_chain(s, m, o->fifo, o->fifo_off + first, o->len - first);
	if (copied < o->len && (local || o->tso_segsz != 0)) {
		/* Out of mbufs: a short segment would carry less than its caller counts as
		 * sent. Nothing goes; the caller sends again later. */
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	if (local) {
		buf[TCP_OFF_CSUM] = 0;
		buf[TCP_OFF_CSUM + 1] = 0;
	} else {
		/* The port or stack_xmit finishes it (tx_offload.h). */
		uint16_t l4_len = (uint16_t)(hlen + copied);
		uint32_t pseudo = inet_addr_csum_pseudo(&o->laddr, &o->raddr, IP4_PROTO_TCP,
							o->tso_segsz != 0 ? 0 : l4_len);
		tx_offload_l4_partial(m, buf + TCP_OFF_CSUM, pseudo, RTE_MBUF_F_TX_TCP_CKSUM,
				      (uint16_t)hlen, o->tso_segsz);
	}
	if (o->tso_segsz != 0) {
		stack_count(s, STACK_EV_TCP_TSO_SEGS);
		stack_count_n(s, STACK_EV_TCP_OUT_SEGS, (copied + o->tso_segsz - 1) / o->tso_segsz);
	} else {
		stack_count(s, STACK_EV_TCP_OUT_SEGS);
	}
	if (o->flags & TCP_FLAG_RST)
		stack_count(s, STACK_EV_TCP_OUT_RSTS);
	int rc;
	if (inet_addr_is_v4(&o->raddr)) {
		rc = ip4_output(s, m, IP4_PROTO_TCP, inet_addr_to_v4(&o->laddr),
				inet_addr_to_v4(&o->raddr), o->tos, o->ttl, true);
	} else {
		/* IPv6 has no DF: our segments are sized by the path MTU (RFC 8201). */
		struct ip6_out d = {.dst = inet_addr_to_v6(&o->raddr),
				    .src = inet_addr_to_v6(&o->laddr), .port = o->scope,
				    .next_header = IP6_NH_TCP, .tclass = o->tos,
				    .hop_limit = o->ttl};
		rc = ip6_output(s, m, &d);
	}
	return rc < 0 ? rc : (int)copied;
}

uint32_t tcp_unsent(const struct tcp_conn *c)
{
	if (c->sk.tx == NULL)
		return 0;
	uint32_t queued = fifo_used(c->sk.tx);
	uint32_t off = c->snd_nxt - c->snd_una;
	return off < queued ? queued - off : 0;
}

uint32_t tcp_tsval(const struct tcp_conn *c)
{
	return tcp_now_ts(c->s) + c->ts_offset;
}

uint32_t tcp_flight(const struct tcp_conn *c)
{
	return c->snd_max - c->snd_una;
}

uint32_t tcp_rcv_slack(const struct tcp_conn *c)
{
	const uint32_t unit = 1u << c->rcv_wscale;
	const uint32_t buf = c->sk.rx != NULL ? c->sk.rx->size : c->opts.rcvbuf;
	if (unit == 1)
		return 0;
	return 16 * unit > buf / 8 ? 16 * unit : buf / 8;
}

/* The window to advertise, unscaled: the receive FIFO's free room (out-of-order data sits
 * beyond its tail, inside that room), rounded down to the scale unit, never moving the right
 * edge back (RFC 9293 §3.8.6.2.2 / RFC 7323 §2.4), and only moved forward by at least
 * min(half the buffer, one MSS) (receiver SWS avoidance, RFC 9293 §3.8.6.2.2). */
uint32_t tcp_rcv_window(const struct tcp_conn *c)
{
	const uint32_t unit = 1u << c->rcv_wscale;
	const uint32_t real_free = c->sk.rx != NULL ? fifo_free(c->sk.rx) : c->opts.rcvbuf;
	/* A scaled window field cannot say "cur" exactly: keeping the right edge where it was
	 * (RFC 7323 §2.4) rounds cur up by less than a unit at every ACK whose RCV.NXT is not
	 * aligned with the edge, so the edge creeps forward (Linux does the same and relies on
	 * buffer slack, offering about half of it). New window is offered only up to the room
	 * less a slack (tcp_rcv_slack: an eighth of the FIFO, at least 16 units), which the
	 * creep may use; in the corner where even that is used up, the edge steps back by
	 * less than a unit rather than promise bytes the FIFO cannot hold. The slack must
	 * outlast the ACKs of a window's worth of segments: each may creep by a unit (128 bytes
	 * at the scale autotuning needs), and an edge that steps back cuts data the peer sent
	 * within it, to be sent again after a timeout. */
	const uint32_t slack = tcp_rcv_slack(c);
	uint32_t free_room = real_free > slack ? real_free - slack : 0;
	uint32_t max = (uint32_t)UINT16_MAX << c->rcv_wscale;
	if (free_room > max)
		free_room = max;
	free_room &= ~(unit - 1);
	uint32_t cur = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	cur = (uint32_t)(((uint64_t)cur + unit - 1) & ~(uint64_t)(unit - 1));
	if (cur > real_free)
		cur = real_free & ~(unit - 1);
	if (free_room <= cur)
		return cur;
	uint32_t buf = c->sk.rx != NULL ? c->sk.rx->size : c->opts.rcvbuf;
	uint32_t step = buf / 2 < c->rcv_mss ? buf / 2 : c->rcv_mss;
	if (free_room - cur < step)
		return cur;
	return free_room;
}

static void tcp_fill_common(const struct tcp_conn *c, struct tcp_seg_out *o, uint32_t seq,
			    uint8_t flags)
{
	*o = (struct tcp_seg_out){
		.laddr = c->sk.laddr,
		.raddr = c->sk.raddr,
		.scope = c->sk.scope,
		.lport = c->sk.lport,
		.rport = c->sk.rport,
		.seq = seq,
		.ack = c->rcv_nxt,
		.flags = flags,
		.tos = c->opts.ip.tos & (uint8_t)~IP_ECN_MASK,
		.ttl = c->opts.ip.ttl,
	};
	if (c->flags & TCPF_TS_OK || (flags & TCP_FLAG_SYN && c->state == TCP_SYN_SENT)) {
		o->opts.has_timestamps = true;
		o->opts.tsval = tcp_tsval(c);
		o->opts.tsecr = c->ts_recent;
	}
}

/* The SACK blocks we would send now (RFC 2018 §4), at most max. */
static unsigned tcp_sack_pending(const struct tcp_conn *c, struct tcp_sack_block *out,
				 unsigned max)
{
	if (!(c->flags & TCPF_SACK_OK) || (!c->has_dsack && tcp_ooo_empty(&c->ooo)))
		return 0;
	return tcp_ooo_sack_blocks(&c->ooo, c->has_dsack ? &c->dsack : NULL, out, max);
}

/* The option bytes n SACK blocks take: NOP NOP kind length, then 8 bytes each. */
static uint32_t tcp_sack_bytes(unsigned n)
{
	return n == 0 ? 0 : 4 + 8 * n;
}

uint32_t tcp_cur_mss(const struct tcp_conn *c)
{
	struct tcp_sack_block b[TCP_SACK_MAX_BLOCKS];
	unsigned n = tcp_sack_pending(c, b, c->flags & TCPF_TS_OK ? 3 : TCP_SACK_MAX_BLOCKS);
	uint32_t opt = tcp_sack_bytes(n);
	return c->snd_mss > opt + TCP_MSS_MIN ? c->snd_mss - opt : TCP_MSS_MIN;
}

/* Sends one segment of c: flags at seq, with len bytes of the send FIFO from seq. */
int tcp_send_segment(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags)
{
	return tcp_send_segment_tso(c, seq, len, flags, len);
}

int tcp_send_segment_tso(struct tcp_conn *c, uint32_t seq, uint32_t len, uint8_t flags,
			 uint32_t segsz)
{
	uint32_t wire_segs = len > segsz ? (len + segsz - 1) / segsz : 1;
	struct tcp_seg_out o;
	tcp_fill_common(c, &o, seq, flags);
	if (flags & TCP_FLAG_SYN) {
		/* RFC 9293 §3.7.1, RFC 7323 §2.2, RFC 2018 §2: offered in SYNs only. */
		o.opts.has_mss = true;
		o.opts.mss = c->rcv_mss;
		o.opts.has_wscale = c->state == TCP_SYN_SENT || c->flags & TCPF_WSCALE_OK;
		o.opts.wscale = c->rcv_wscale;
		o.opts.sack_permitted = c->state == TCP_SYN_SENT || c->flags & TCPF_SACK_OK;
		uint32_t wnd = tcp_rcv_window(c);
		o.window = (uint16_t)(wnd > UINT16_MAX ? UINT16_MAX : wnd);
		if (c->state == TCP_SYN_SENT && c->opts.ecn)
			o.flags |= TCP_FLAG_ECE | TCP_FLAG_CWR; /* RFC 3168 §6.1.1 */
		else if (c->state == TCP_SYN_RECEIVED && c->flags & TCPF_ECN_OK)
			o.flags |= TCP_FLAG_ECE;
	} else {
		uint32_t wnd = tcp_rcv_window(c);
		o.window = (uint16_t)(wnd >> c->rcv_wscale);
		/* snd_mss leaves room for timestamps only: a segment with data carries the SACK
		 * blocks that fit beside it, so that it never outgrows the path MTU (callers
		 * that can, size their data with tcp_cur_mss to leave room for them all). */
		unsigned max = o.opts.has_timestamps ? 3 : TCP_SACK_MAX_BLOCKS;
		while (max > 0 && RTE_MIN(len, segsz) + tcp_sack_bytes(max) > c->snd_mss)
			max--;
		o.opts.sack_count = (uint8_t)tcp_sack_pending(c, o.opts.sack_blocks, max);
		if (c->flags & TCPF_ECN_OK) {
			if (c->flags & TCPF_ECE)
				o.flags |= TCP_FLAG_ECE;
			/* RFC 3168 §6.1.5: data is ECN-capable, retransmissions and pure ACKs
			 * are not; CWR rides on the first new data after a reduction. */
			if (len != 0 && seq_ge(seq, c->snd_max)) {
				o.tos |= IP_ECN_ECT0;
				if (c->flags & TCPF_CWR) {
					o.flags |= TCP_FLAG_CWR;
					c->flags &= ~TCPF_CWR;
				}
			}
		}
	}
	if (len != 0) {
		uint32_t data_start = c->snd_una + (c->state == TCP_SYN_SENT ||
						    c->state == TCP_SYN_RECEIVED);
		o.fifo = c->sk.tx;
		o.fifo_off = seq - data_start;
		o.len = len;
		/* A connection to itself would read what it lent while freeing it (an abort
		 * on its own segment): it copies. So does one whose lent mbufs would overflow
		 * their 16-bit count (a segment takes at most two). */
		bool to_itself = inet_addr_equal(&c->sk.laddr, &c->sk.raddr) &&
				 c->sk.lport == c->sk.rport;
		bool count_full = rte_mbuf_ext_refcnt_read(&c->lent) > UINT16_MAX - 2;
		o.lend = to_itself || count_full ? NULL : &c->lent;
		o.tso_segsz = wire_segs > 1 ? (uint16_t)segsz : 0;
	}
	int rc = tcp_seg_send(c->s, &o);
	if (rc < 0)
		return rc;
	c->segs_out += wire_segs;
	/* Data and FINs go on the sent map (probes below SND.UNA carry nothing to track), one
	 * record per segment on the wire: the port cuts a TSO segment where segsz says. */
	if (c->sm.r != NULL && !(flags & TCP_FLAG_SYN) && (len != 0 || flags & TCP_FLAG_FIN) &&
	    seq_ge(seq, c->snd_una)) {
		bool fin = flags & TCP_FLAG_FIN;
		uint32_t now = (uint32_t)c->s->now_us;
		for (uint32_t at = 0; at + segsz < len; at += segsz)
			tcp_sm_sent(&c->sm, seq + at, seq + at + segsz, false, now);
		uint32_t last = len > segsz ? (wire_segs - 1) * segsz : 0;
		tcp_sm_sent(&c->sm, seq + last, seq + len + fin, fin, now);
		if (c->flags & TCPF_IN_RECOVERY)
			c->prr_out += len + fin;
	}
	if (c->cc.pacing_rate != 0 && len != 0) {
		/* The next segment may go once this one has left at the pacing rate. The timer
		 * wheel ticks in ms, so up to one tick of unused time still counts: a send
		 * after a wait may catch up by that much, never more (a pacing qdisc's
		 * quantum); without it a wait would cost the whole tick. */
		uint64_t now = c->s->now_us;
		uint64_t floor = now > TCP_PACE_CREDIT_US ? now - TCP_PACE_CREDIT_US : 0;
		uint64_t start = c->pace_next_us > floor ? c->pace_next_us : floor;
		c->pace_next_us = start + (uint64_t)len * 1000000 / c->cc.pacing_rate;
	}
	if (flags & TCP_FLAG_ACK) {
		c->rcv_adv = c->rcv_nxt + (flags & TCP_FLAG_SYN ? o.window
								 : (uint32_t)o.window << c->rcv_wscale);
		if (seq_gt(c->rcv_adv, c->rcv_adv_max))
			c->rcv_adv_max = c->rcv_adv;
		c->last_ack_sent = c->rcv_nxt;
		c->segs_unacked = 0;
		c->has_dsack = false;
		c->flags &= ~TCPF_ACK_NOW;
		tcp_timer_cancel(c, TCP_T_DELACK);
		if (c->quickacks > 0)
			c->quickacks--; /* Linux's tcp_dec_quickack_mode */
	}
	/* Data sent within the delayed-ACK time of data received: an exchange of requests
	 * and answers, whose ACKs ride on the answers (Linux's pingpong mode). */
	if (len != 0 && c->flags & TCPF_DATA_SEEN &&
	    c->s->now_ms - c->rcv_data_ms < c->s->tcp->params.delack_ms)
		c->flags |= TCPF_PINGPONG;
	c->last_send_ms = c->s->now_ms;
	return rc;
}

void tcp_send_ack(struct tcp_conn *c)
{
	tcp_send_segment(c, c->snd_nxt, 0, TCP_FLAG_ACK);
}

void tcp_send_challenge_ack(struct tcp_conn *c)
{
	struct tcp_stack *t = c->s->tcp;
	if (c->s->now_ms - t->challenge_window_ms >= 1000) {
		t->challenge_window_ms = c->s->now_ms;
		t->challenge_acks = 0;
	}
	if (t->challenge_acks >= TCP_CHALLENGE_ACK_PER_S) {
		stack_count(c->s, STACK_EV_TCP_CHALLENGE_ACK_LIMITED);
		return;
	}
	t->challenge_acks++;
	stack_count(c->s, STACK_EV_TCP_CHALLENGE_ACKS);
	tcp_send_ack(c);
}

void tcp_send_rst(struct tcp_conn *c)
{
	struct tcp_seg_out o;
	tcp_fill_common(c, &o, c->snd_nxt, TCP_FLAG_RST | TCP_FLAG_ACK);
	o.opts.has_timestamps = false;
	tcp_seg_send(c->s, &o);
}

void tcp_send_rst_reply(struct stack *s, const struct inet_hdr *ip, const struct tcp_repr *th,
			uint32_t payload_len)
{
	/* RFC 9293 §3.10.7.1: never answer a reset; otherwise <SEQ=SEG.ACK><CTL=RST> when the
	 * segment had ACK, else <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. */
	if (th->flags & TCP_FLAG_RST)
		return;
	struct tcp_seg_out o = {
		.laddr = ip->dst,
		.raddr = ip->src,
		.scope = inet_hdr_scope(ip),
		.lport = th->dst_port,
		.rport = th->src_port,
	};
	if (th->flags & TCP_FLAG_ACK) {
		o.seq = th->ack;
		o.flags = TCP_FLAG_RST;
	} else {
		o.ack = th->seq + payload_len + !!(th->flags & TCP_FLAG_SYN) +
			!!(th->flags & TCP_FLAG_FIN);
		o.flags = TCP_FLAG_RST | TCP_FLAG_ACK;
	}
	tcp_seg_send(s, &o);
}

/* Nagle (RFC 9293 §3.7.4) and sender SWS avoidance (§3.8.6.2.1): a short segment goes only
 * when it carries everything queued and no short segment is unacknowledged (or
 * TCP_NODELAY), or when it fills half of the largest window the peer ever offered. Only
 * short segments in flight hold the next one back (Minshall's variant, as Linux's
 * tcp_minshall_check): with RFC 896's rule the tail of a bulk write after full segments
 * waits for their ACK, which the peer delays (one segment is not two), 40 ms a time. */
static bool tcp_short_segment_ok(const struct tcp_conn *c, uint32_t len, uint32_t unsent)
{
	if (c->flags & TCPF_SWS_OVERRIDE)
		return true;
	/* TCP_CORK or MSG_MORE (Linux's TCP_NAGLE_CORK): the tail shorter than a segment waits
	 * for more data, the uncork or a send without MSG_MORE, and at worst for the persist
	 * timer, which sends it as the SWS override (Linux's probe timer: 200 ms); a FIN does
	 * not wait. RFC 9293 §3.7.4 allows a sender to hold short segments. */
	if ((c->opts.cork || c->flags & TCPF_MORE) && !(c->flags & TCPF_FIN_QUEUED) &&
	    unsent < tcp_cur_mss(c))
		return false;
	if (len == unsent && (c->opts.nodelay || c->snd_nxt == c->snd_una ||
			      seq_le(c->snd_sml, c->snd_una) || c->flags & TCPF_FIN_QUEUED))
		return true;
	return c->max_sndwnd != 0 && len >= c->max_sndwnd / 2;
}

static bool tcp_fin_pending(const struct tcp_conn *c)
{
	if (!(c->flags & TCPF_FIN_QUEUED))
		return false;
	if (c->state != TCP_FIN_WAIT_1 && c->state != TCP_CLOSING && c->state != TCP_LAST_ACK)
		return false;
	return c->snd_nxt == c->snd_una + fifo_used(c->sk.tx);
}

/* Sends new (or, after an RTO, resent) data from snd_nxt within the usable window. Returns
 * the number of segments sent. */
static unsigned tcp_output_data(struct tcp_conn *c)
{
	unsigned sent = 0;
	for (;;) {
		uint32_t wnd = c->snd_wnd < c->cc.cwnd ? c->snd_wnd : c->cc.cwnd;
		uint32_t in_use = c->snd_nxt - c->snd_una;
		uint32_t usable = wnd > in_use ? wnd - in_use : 0;
		uint32_t unsent = tcp_unsent(c);
		uint32_t mss = tcp_cur_mss(c);
		/* Resent data (after an RTO without SACK) goes a segment at a time. */
		uint32_t seg_max = seq_lt(c->snd_nxt, c->snd_max) ? mss : tcp_tso_max(c, mss);
		uint32_t len = unsent < seg_max ? unsent : seg_max;
		if (len > usable)
			len = usable;
		if (len == 0)
			break;
		/* A TSO segment holds whole segments; the short tail goes on its own. */
		if (len > mss && len < unsent)
			len -= len % mss;
		if (len < mss && !tcp_short_segment_ok(c, len, unsent))
			break;
		if (tcp_pace_wait(c))
			break;
		uint8_t flags = TCP_FLAG_ACK;
		if (len == unsent)
			flags |= TCP_FLAG_PSH;
		bool resend = seq_lt(c->snd_nxt, c->snd_max);
		if (!resend && !(c->flags & TCPF_RTT_TIMING)) {
			/* Time one segment per window (RFC 6298 §3, Karn: never a resent one). */
			c->flags |= TCPF_RTT_TIMING;
			c->rtt_seq = c->snd_nxt;
			c->rtt_start_us = c->s->now_us;
		}
		int rc = tcp_send_segment_tso(c, c->snd_nxt, len, flags, mss);
		if (rc < 0)
			break;
		if (resend) {
			c->retransmits++;
			stack_count(c->s, STACK_EV_TCP_RETRANS_SEGS);
		}
		c->snd_nxt += len;
		if (seq_gt(c->snd_nxt, c->snd_max))
			c->snd_max = c->snd_nxt;
		if (len % mss != 0)
			c->snd_sml = c->snd_nxt;
		sent++;
	}
	if (tcp_fin_pending(c)) {
		/* Resent after a timeout, the FIN is a retransmission like any segment. */
		bool resend = seq_lt(c->snd_nxt, c->snd_max);
		if (tcp_send_segment(c, c->snd_nxt, 0, TCP_FLAG_FIN | TCP_FLAG_ACK) >= 0) {
			if (resend) {
				c->retransmits++;
				stack_count(c->s, STACK_EV_TCP_RETRANS_SEGS);
			}
			c->flags |= TCPF_FIN_SENT;
			c->snd_nxt++;
			if (seq_gt(c->snd_nxt, c->snd_max))
				c->snd_max = c->snd_nxt;
			sent++;
		}
	}
	return sent;
}

void tcp_output(struct tcp_conn *c, bool force_ack)
{
	switch (c->state) {
	case TCP_CLOSED:
	case TCP_LISTEN:
		return;
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		if (c->snd_nxt == c->iss) {
			uint8_t flags = TCP_FLAG_SYN | (c->state == TCP_SYN_RECEIVED ? TCP_FLAG_ACK : 0);
			if (tcp_send_segment(c, c->iss, 0, flags) >= 0) {
				c->snd_nxt = c->iss + 1;
				c->snd_max = c->snd_nxt;
				if (c->retries == 0)
					c->rtt_start_us = c->s->now_us; /* the handshake's RTT */
			}
			if (!tcp_timer_armed(c, TCP_T_RTX))
				tcp_timer_rtx_arm(c);
		} else if (force_ack || c->flags & TCPF_ACK_NOW) {
			tcp_send_ack(c);
		}
		return;
	case TCP_TIME_WAIT:
		if (force_ack || c->flags & TCPF_ACK_NOW)
			tcp_send_ack(c);
		return;
	default:
		break;
	}
	/* RFC 5681 §4.1, RFC 9438 §5.8: new data after an idle period (nothing in flight): the
	 * controller restarts from the initial window when the pause exceeded the RTO, and
	 * CUBIC takes the pause out of its clock. */
	if (c->snd_una == c->snd_max && c->last_send_ms != 0 && tcp_unsent(c) != 0 &&
	    c->s->now_ms > c->last_send_ms && c->cc.ops->on_idle != NULL)
		c->cc.ops->on_idle(&c->cc, c->rto_ms, c->s->now_ms - c->last_send_ms);
	unsigned sent;
	if (c->flags & (TCPF_IN_RECOVERY | TCPF_LOSS) && c->flags & TCPF_SACK_OK &&
	    c->sm.r != NULL) {
		uint32_t before = c->segs_out;
		tcp_recovery_send(c);
		sent = c->segs_out != before;
	} else {
		sent = tcp_output_data(c);
	}
	/* draft-cheng §3.4: the application, not cwnd, is what holds the sender back now. */
	if (c->sm.r != NULL && tcp_unsent(c) == 0 && tcp_pipe(c) + c->snd_mss < c->cc.cwnd)
		tcp_sm_app_limited(&c->sm);
	if (sent == 0 && (force_ack || c->flags & TCPF_ACK_NOW))
		tcp_send_ack(c);
	if (c->snd_una != c->snd_max) {
		/* Data in flight: its ACKs bring the window, and the retransmission timer
		 * covers their loss. */
		tcp_timer_cancel(c, TCP_T_PERSIST);
		if (!tcp_timer_armed(c, TCP_T_RTX))
			tcp_timer_rtx_arm(c);
	} else if (tcp_unsent(c) != 0 && !tcp_timer_armed(c, TCP_T_PERSIST)) {
		/* RFC 9293 §3.8.6.1: the peer closed its window: probe it. With a window too
		 * small for SWS avoidance to send into, the same timer is the override timeout
		 * of §3.8.6.2.1. */
		tcp_timer_arm(c, TCP_T_PERSIST, c->rto_ms < TCP_PERSIST_MIN_MS ? TCP_PERSIST_MIN_MS
									      : c->rto_ms);
	}
	tcp_tlp_arm(c);
}

bool tcp_pace_wait(struct tcp_conn *c)
{
	if (c->cc.pacing_rate == 0 || c->pace_next_us <= c->s->now_us)
		return false;
	uint64_t wait_us = c->pace_next_us - c->s->now_us;
	if (!tcp_timer_armed(c, TCP_T_PACE))
		tcp_timer_arm(c, TCP_T_PACE, (wait_us + 999) / 1000);
	stack_count(c->s, STACK_EV_TCP_PACING_WAITS);
	return true;
}

unsigned tcp_output_probe_new(struct tcp_conn *c)
{
	if (tcp_unsent(c) == 0 || c->snd_nxt != c->snd_max)
		return 0;
	/* One segment past SND.NXT whatever cwnd says (the peer's window still applies). */
	uint32_t cwnd = c->cc.cwnd;
	c->cc.cwnd = c->snd_nxt - c->snd_una + c->snd_mss;
	unsigned n = tcp_output_data(c);
	c->cc.cwnd = cwnd;
	return n;
}

bool tcp_window_update_due(const struct tcp_conn *c)
{
	if (c->sk.rx == NULL)
		return false;
	uint32_t wnd_now = tcp_rcv_window(c);
	uint32_t adv = seq_gt(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	/* The owner read: tell the peer when the window grew by two segments or half the
	 * buffer, since it may be waiting on a zero or small window (RFC 9293 §3.8.6.2.2). */
	return wnd_now >= adv + 2u * c->rcv_mss || wnd_now >= adv + c->sk.rx->size / 2;
}
