/* The calls a socket owner makes (tcp.h), RFC 9293 §3.10.1–3.10.6: OPEN, SEND, RECEIVE,
 * CLOSE, ABORT, STATUS, mapped onto BSD semantics and Linux's errno values. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "stack/steer.h"
#include "tcp_priv.h"

int tcp_listen(struct stack *s, const struct inet_addr *laddr, uint16_t lport, unsigned backlog,
	       const struct tcp_sockopts *opts, const struct sock_owner *owner,
	       struct tcp_conn **out)
{
	if (lport == 0)
		return -EINVAL;
	if (!inet_addr_is_any(laddr) && !netcfg_inet_is_local(&s->cfg, laddr, opts->scope))
		return -EADDRNOTAVAIL;
	struct tcp_conn *c = tcp_conn_alloc(s, opts);
	if (c == NULL)
		return -ENOMEM;
	c->sk.laddr = *laddr;
	c->sk.v6only = opts->v6only;
	c->sk.lport = lport;
	c->sk.owner = *owner;
	c->sk.mem = owner->mem;
	/* Linux caps the backlog at somaxconn (4096). */
	c->backlog = backlog == 0 ? 1 : backlog > 4096 ? 4096 : backlog;
	tcp_set_state(c, TCP_LISTEN);
	int rc = tcp_conn_insert(c);
	if (rc < 0) {
		tcp_conn_free(c);
		return rc == -EADDRINUSE ? rc : -ENOBUFS;
	}
	*out = c;
	return 0;
}

/* A listener on laddr:lport that a socket with opts may not share the port with. */
static bool tcp_listener_conflicts(struct stack *s, const struct inet_addr *laddr,
				   uint16_t lport, const struct tcp_sockopts *opts)
{
	const struct tcp_conn *l = tcp_listener_lookup(s, laddr, lport);
	return l != NULL && !tcp_reuseport_shares(&l->opts, opts);
}

int tcp_bind_check(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
		   const struct tcp_sockopts *opts)
{
	bool any = inet_addr_is_any(laddr);
	if (!any && !netcfg_inet_is_local(&s->cfg, laddr, opts->scope))
		return -EADDRNOTAVAIL;
	if (lport == 0)
		return 0;
	/* The address itself and its family's wildcard (tcp_listener_lookup); a dual-stack
	 * :: conflicts with every IPv4 listener too (Linux's inet6_bind_conflict). */
	bool v4 = inet_addr_is_v4(laddr);
	struct inet_addr fam_any = inet_addr_any(!v4), all = inet_addr_any(true);
	if (tcp_listener_conflicts(s, laddr, lport, opts) ||
	    tcp_listener_conflicts(s, &fam_any, lport, opts))
		return -EADDRINUSE;
	if (v4 || any) {
		struct inet_addr other = v4 ? all : inet_addr_any(false);
		const struct tcp_conn *l = tcp_listener_lookup(s, &other, lport);
		if (l != NULL && (v4 ? !l->sk.v6only : !opts->v6only) &&
		    !tcp_reuseport_shares(&l->opts, opts))
			return -EADDRINUSE;
	}
	return 0;
}

struct tcp_conn *tcp_accept(struct tcp_conn *l, const struct sock_owner *owner)
{
	struct tcp_conn *c = TAILQ_FIRST(&l->accept_q);
	if (c == NULL)
		return NULL;
	TAILQ_REMOVE(&l->accept_q, c, q_link);
	l->accept_qlen--;
	c->parent = NULL;
	c->sk.owner = owner != NULL ? *owner : l->sk.owner;
	/* Reset or timed out while it waited: its new owner hears what tcp_conn_done said to
	 * nobody. */
	if (c->state == TCP_CLOSED)
		tcp_notify(c, SOCK_EV_HUP | SOCK_EV_IN | SOCK_EV_OUT | SOCK_EV_RDHUP |
				      (c->sk.error != 0 ? SOCK_EV_ERR : 0));
	return c;
}

/* With several workers, a connection's segments reach the worker that owns its flow
 * (steer.h): an active open picks a port whose flow is the opening worker's. */
static bool tcp_flow_is_ours(const struct stack *s, const struct inet_addr *laddr,
			     uint16_t lport, const struct inet_addr *raddr, uint16_t rport)
{
	return s->steer == NULL ||
	       steer_tcp_owner_inet(s->steer, raddr, laddr, rport, lport) == s->id;
}

/* IPv6's source: the route's, else RFC 6724's (ip6_source_for); a link-local peer needs
 * its scope. */
static int tcp_connect_source6(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
			       struct inet_addr *laddr)
{
	struct ip6_out d = {.dst = inet_addr_to_v6(raddr), .src = inet_addr_to_v6(laddr),
			    .port = scope};
	if (ip6_is_multicast(&d.dst))
		return -ENETUNREACH; /* RFC 1122 §4.2.3.10: no TCP to groups */
	int rc = ip6_source_for(s, &d);
	if (rc < 0)
		return rc;
	*laddr = inet_addr_v6(&d.src);
	return netcfg_inet_is_local(&s->cfg, laddr, d.port) ? 0 : -EADDRNOTAVAIL;
}

int tcp_connect_source(struct stack *s, const struct inet_addr *raddr_in, uint16_t scope,
		       struct inet_addr *laddr_in)
{
	if (inet_addr_is_any(raddr_in))
		return -EINVAL;
	if (inet_addr_is_v4(raddr_in) != inet_addr_is_v4(laddr_in))
		return -EAFNOSUPPORT; /* a socket bound to one family's address, to the other */
	if (!inet_addr_is_v4(raddr_in))
		return tcp_connect_source6(s, raddr_in, scope, laddr_in);
	uint32_t raddr = inet_addr_to_v4(raddr_in), laddr_v4 = inet_addr_to_v4(laddr_in);
	uint32_t *laddr = &laddr_v4;
	const struct route *r = route_lookup4(s->cfg.routes, raddr);
	if (r == NULL || r->type == ROUTE_BLACKHOLE || r->type == ROUTE_UNREACHABLE)
		return -ENETUNREACH;
	if (r->type == ROUTE_BROADCAST)
		return -ENETUNREACH; /* Linux: connect() to a broadcast address */
	if (*laddr == 0)
		*laddr = netcfg_route_source4(&s->cfg, r, raddr);
	if (*laddr == 0 || !netcfg_addr_is_local(&s->cfg, *laddr))
		return -EADDRNOTAVAIL;
	*laddr_in = inet_addr_v4(*laddr);
	return 0;
}

/* An ephemeral port for laddr → raddr:rport that no connection uses. */
static int tcp_pick_port(struct stack *s, const struct inet_addr *laddr,
			 const struct inet_addr *raddr, uint16_t rport, uint16_t *out)
{
	const unsigned range = TCP_EPHEMERAL_HI - TCP_EPHEMERAL_LO + 1;
	for (unsigned i = 0; i < range; i++) {
		uint16_t p = s->tcp->next_ephemeral;
		s->tcp->next_ephemeral = p >= TCP_EPHEMERAL_HI ? TCP_EPHEMERAL_LO : p + 1;
		if (tcp_flow_is_ours(s, laddr, p, raddr, rport) &&
		    tcp_conn_lookup(s, laddr, p, raddr, rport) == NULL &&
		    tcp_listener_lookup(s, laddr, p) == NULL) {
			*out = p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

int tcp_connect(struct stack *s, const struct inet_addr *laddr_in, uint16_t lport,
		const struct inet_addr *raddr_in, uint16_t rport, const struct tcp_sockopts *opts,
		const struct sock_owner *owner, struct tcp_conn **out)
{
	if (rport == 0)
		return -EINVAL;
	/* A v4-mapped peer of an IPv6 socket is IPv4 (RFC 4291 §2.5.5.2): its wildcard too. */
	struct inet_addr laddr = *laddr_in, raddr = *raddr_in;
	if (inet_addr_is_v4(&raddr) && inet_addr_is_any(&laddr))
		laddr = inet_addr_any(false);
	int rc = tcp_connect_source(s, &raddr, opts->scope, &laddr);
	if (rc < 0)
		return rc;
	if (lport == 0) {
		rc = tcp_pick_port(s, &laddr, &raddr, rport, &lport);
		if (rc < 0)
			return rc;
	} else if (!tcp_flow_is_ours(s, &laddr, lport, &raddr, rport)) {
		return -EXDEV;
	} else if (tcp_conn_lookup(s, &laddr, lport, &raddr, rport) != NULL) {
		return -EADDRINUSE;
	}
	struct tcp_conn *c = tcp_conn_alloc(s, opts);
	if (c == NULL)
		return -ENOMEM;
	c->sk.laddr = laddr;
	c->sk.lport = lport;
	c->sk.raddr = raddr;
	c->sk.rport = rport;
	struct ip6_addr r6 = inet_addr_to_v6(&raddr);
	c->sk.scope = ip6_is_link_local(&r6) ? opts->scope : NETCFG_PORT_ANY;
	c->sk.owner = *owner;
	c->sk.mem = owner->mem;
	rc = tcp_conn_buffers_alloc(c);
	if (rc == 0 && tcp_conn_insert(c) != 0)
		rc = -ENOBUFS;
	if (rc < 0) {
		tcp_conn_free(c);
		return rc;
	}
	c->iss = tcp_isn(&s->tcp->secret, &laddr, lport, &raddr, rport, s->now_us);
	c->ts_offset = tcp_isn(&s->tcp->secret, &laddr, lport, &raddr, rport, 0);
	c->rcv_wscale = tcp_rcv_wscale_of(&c->opts);
	c->snd_una = c->iss;
	c->snd_sml = c->iss;
	c->snd_nxt = c->iss;
	c->snd_max = c->iss;
	tcp_conn_set_mss(c, 0);
	tcp_set_state(c, TCP_SYN_SENT);
	stack_count(s, STACK_EV_TCP_ACTIVE_OPENS);
	*out = c;
	tcp_output(c, false);
	return 0;
}

static bool tcp_can_send(const struct tcp_conn *c)
{
	return c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT;
}

ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len)
{
	if (c->sk.error != 0 && c->state == TCP_CLOSED)
		return -EPIPE;
	if (c->flags & TCPF_FIN_QUEUED)
		return -EPIPE;
	if (c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED)
		return -EAGAIN;
	if (!tcp_can_send(c))
		return c->state == TCP_LISTEN || c->state == TCP_CLOSED ? -ENOTCONN : -EPIPE;
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	uint32_t n = fifo_enqueue(c->sk.tx, buf, (uint32_t)len);
	if (n == 0)
		return -EAGAIN;
	tcp_output(c, false);
	tcp_deliver_events(c->s);
	return n;
}

ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len)
{
	/* What arrived before a reset is read first, then the error (Linux tcp_recvmsg). */
	if (len > UINT32_MAX)
		len = UINT32_MAX;
	uint32_t n = c->sk.rx != NULL ? fifo_dequeue(c->sk.rx, buf, (uint32_t)len) : 0;
	if (n > 0) {
		tcp_kick(c);
		return n;
	}
	if (c->sk.rx == NULL || (c->state == TCP_CLOSED && c->sk.error != 0))
		return c->sk.error != 0 ? -c->sk.error : 0;
	switch (c->state) {
	case TCP_LISTEN:
		return -ENOTCONN;
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
	case TCP_FIN_WAIT_1:
	case TCP_FIN_WAIT_2:
		return -EAGAIN;
	default:
		return 0; /* the peer's FIN has been read */
	}
}

void tcp_kick(struct tcp_conn *c)
{
	if (c->state == TCP_CLOSED || c->state == TCP_LISTEN || c->state == TCP_TIME_WAIT)
		return;
	tcp_output(c, tcp_window_update_due(c));
	tcp_deliver_events(c->s);
}

void tcp_set_more(struct tcp_conn *c, bool more)
{
	if (more)
		c->flags |= TCPF_MORE;
	else
		c->flags &= ~TCPF_MORE;
}

int tcp_set_sockopts(struct tcp_conn *c, const struct tcp_sockopts *o)
{
	if (o->keepalive && (o->keep_idle_ms == 0 || o->keep_intvl_ms == 0 || o->keep_cnt == 0))
		return -EINVAL;
	const struct tcp_sockopts old = c->opts;
	c->opts = *o;
	/* The FIFOs keep the size they were made with; the new sizes serve accepted children. */
	if (o->cc != old.cc)
		tcp_cc_set_ops(&c->cc, o->cc != NULL ? o->cc : tcp_cc_default());
	if ((c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT) &&
	    (o->keepalive != old.keepalive || o->keep_idle_ms != old.keep_idle_ms)) {
		tcp_timer_cancel(c, TCP_T_KEEP);
		tcp_timer_keepalive_arm(c);
	}
	/* Linux pushes what Nagle held back when TCP_NODELAY is turned on, and what the cork
	 * held when TCP_CORK is turned off (tcp_push_pending_frames). */
	if ((o->nodelay && !old.nodelay) || (!o->cork && old.cork))
		tcp_kick(c);
	return 0;
}

const struct tcp_sockopts *tcp_get_sockopts(const struct tcp_conn *c)
{
	return &c->opts;
}

/* RFC 9293 §3.10.4 CLOSE: the FIN is queued after the data; ESTABLISHED goes to FIN-WAIT-1
 * and CLOSE-WAIT to LAST-ACK at once. In SYN-RECEIVED the FIN waits for the handshake. */
static void tcp_queue_fin(struct tcp_conn *c)
{
	if (c->flags & TCPF_FIN_QUEUED)
		return;
	c->flags |= TCPF_FIN_QUEUED;
	if (c->state == TCP_ESTABLISHED)
		tcp_set_state(c, TCP_FIN_WAIT_1);
	else if (c->state == TCP_CLOSE_WAIT)
		tcp_set_state(c, TCP_LAST_ACK);
	tcp_output(c, false);
}

int tcp_shutdown(struct tcp_conn *c, int how)
{
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return -EINVAL;
	if (c->state == TCP_LISTEN || c->state == TCP_CLOSED || c->state == TCP_SYN_SENT)
		return -ENOTCONN;
	if (how != SHUT_WR)
		c->flags |= TCPF_RD_SHUT;
	if (how != SHUT_RD)
		tcp_queue_fin(c);
	tcp_deliver_events(c->s);
	return 0;
}

void tcp_close(struct tcp_conn *c)
{
	c->flags |= TCPF_ORPHAN;
	c->sk.owner = (struct sock_owner){0};
	switch (c->state) {
	case TCP_LISTEN:
	case TCP_CLOSED:
	case TCP_SYN_SENT:
		tcp_conn_free(c);
		return;
	case TCP_TIME_WAIT:
		tcp_conn_buffers_free(c); /* the 2MSL timer frees the rest */
		return;
	default:
		break;
	}
	bool unread = c->sk.rx != NULL && fifo_used(c->sk.rx) > 0;
	if (unread || (c->opts.linger && c->state != TCP_SYN_RECEIVED)) {
		/* RFC 2525 §2.17 / RFC 9293 §3.10.4: data the application never read is lost:
		 * tell the peer with a reset instead of a FIN. */
		stack_count(c->s, unread ? STACK_EV_TCP_ABORT_ON_CLOSE : STACK_EV_TCP_ABORT_LINGER);
		tcp_send_rst(c);
		tcp_conn_free(c);
		return;
	}
	struct tcp_stack *t = c->s->tcp;
	if (t->orphans >= t->params.max_orphans) {
		/* Too many closed connections still finishing: this one would hold its buffers
		 * for as long as its peer likes. Linux resets it (tcp_too_many_orphans). */
		stack_count(c->s, STACK_EV_TCP_ORPHANS_RESET);
		tcp_send_rst(c);
		tcp_conn_free(c);
		return;
	}
	t->orphans++;
	c->flags |= TCPF_ORPHAN_COUNTED;
	tcp_queue_fin(c);
	/* Already half-closed and acknowledged: nobody will read what the peer still sends,
	 * and the peer may never close; bound the wait as tcp_fin_timeout does. */
	if (c->state == TCP_FIN_WAIT_2)
		tcp_timer_arm(c, TCP_T_KEEP, c->s->tcp->params.fin_timeout_ms);
}

struct sock *tcp_sock(struct tcp_conn *c)
{
	return &c->sk;
}

enum tcp_state tcp_conn_state(const struct tcp_conn *c)
{
	return c->state;
}

void tcp_conn_info(const struct tcp_conn *c, struct tcp_conn_info *o)
{
	*o = (struct tcp_conn_info){
		.state = c->state,
		.laddr = c->sk.laddr,
		.raddr = c->sk.raddr,
		.lport = c->sk.lport,
		.rport = c->sk.rport,
		.rx_queued = c->sk.rx != NULL ? fifo_used(c->sk.rx) : c->accept_qlen,
		.tx_queued = c->sk.tx != NULL ? fifo_used(c->sk.tx) : c->syn_qlen,
		.snd_mss = c->snd_mss,
		.rcv_mss = c->rcv_mss,
		.cwnd = c->cc.cwnd,
		.ssthresh = c->cc.ssthresh,
		.srtt_us = c->srtt_us,
		.rttvar_us = c->rttvar_us,
		.rto_ms = c->rto_ms,
		.snd_wnd = c->snd_wnd,
		.rcv_wnd = c->rcv_adv - c->rcv_nxt,
		.snd_wscale = c->snd_wscale,
		.rcv_wscale = c->rcv_wscale,
		.sack = c->flags & TCPF_SACK_OK,
		.timestamps = c->flags & TCPF_TS_OK,
		.ecn = c->flags & TCPF_ECN_OK,
		.segs_in = c->segs_in,
		.segs_out = c->segs_out,
		.bytes_acked = c->bytes_acked,
		.bytes_received = c->bytes_received,
		.retransmits = c->retransmits,
		.cc = c->cc.ops->name,
	};
}

int tcp_walk(struct stack *s, int (*fn)(const struct tcp_conn *c, void *arg), void *arg)
{
	const struct tcp_conn *c;
	TAILQ_FOREACH(c, &s->tcp->all, all_link) {
		int rc = fn(c, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void tcp_params_default(struct tcp_params *p)
{
	*p = (struct tcp_params){
		.syn_retries = TCP_SYN_RETRIES,
		.synack_retries = TCP_SYNACK_RETRIES,
		.retries = TCP_DATA_RETRIES,
		.rto_min_ms = TCP_RTO_MIN_MS,
		.delack_ms = TCP_DELACK_MS,
		.fin_timeout_ms = TCP_FIN_WAIT2_MS,
		.time_wait_ms = 2 * TCP_MSL_MS,
		.syncookies = 1,
		.max_orphans = TCP_MAX_ORPHANS,
	};
}

void tcp_get_params(const struct stack *s, struct tcp_params *p)
{
	*p = s->tcp->params;
}

int tcp_set_params(struct stack *s, const struct tcp_params *p)
{
	/* Each bound keeps the timers meaningful: a retry limit of 0 would give up before the
	 * first retransmission, a delayed ACK of 500 ms or more breaks RFC 9293 §3.8.6.3. */
	if (p->syn_retries < 1 || p->syn_retries > 127 || p->synack_retries < 1 ||
	    p->synack_retries > 127 || p->retries < 1 || p->retries > 127 ||
	    p->rto_min_ms < 1 || p->rto_min_ms > TCP_RTO_INIT_MS || p->delack_ms < 1 ||
	    p->delack_ms >= 500 || p->fin_timeout_ms < 1 || p->time_wait_ms < 1 ||
	    p->syncookies > 1 || p->max_orphans > TCP_MAX_ORPHANS_LIMIT)
		return -EINVAL;
	s->tcp->params = *p;
	return 0;
}
