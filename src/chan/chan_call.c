/* Calls: the socket operations that need an answer (listen, connect, bind, UDP sockets,
 * options, TCP_INFO), run on the worker whose command ring carried them, in order with the
 * process's other commands. The request is copied out of the segment before anything looks
 * at it; what it names is checked against the worker's own tables. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "chan_priv.h"
#include "stack/stack.h"
#include "stack/steer.h"
#include "tcp/tcp.h"
#include "tcp/cc/tcp_cc.h"
#include "udp/udp.h"

#define CHAN_PRIV_PORT 1024      /* below: root only, as CAP_NET_BIND_SERVICE on Linux */

/* What one call of process p sees of its application. */
struct chan_ctx {
	struct chan_worker *cw;
	struct chan_app *a;
	unsigned p;
	const struct chan_req *rq;
	struct chan_reply *rep;
};

static bool chan_port_allowed(const struct chan_ctx *x, uint16_t port_be)
{
	uint16_t port = ntohs(port_be);
	return x->a->procs[x->p].uid == 0 || port == 0 || port >= CHAN_PRIV_PORT;
}

uint16_t chan_scope_port(uint32_t ifindex)
{
	return ifindex >= 1 && ifindex <= NETCFG_MAX_PORTS ? (uint16_t)(ifindex - 1)
							   : NETCFG_PORT_ANY;
}

/* The options of a request that concern its addresses: IPV6_V6ONLY and the scope. */
static void chan_addr_opts_to_tcp(const struct chan_req *rq, struct tcp_sockopts *o)
{
	o->v6only = (rq->flags & CHAN_BIND_V6ONLY) != 0;
	o->scope = chan_scope_port(rq->scope);
}

static void chan_cc_name(const char in[CHAN_CC_NAME_MAX], char out[CHAN_CC_NAME_MAX])
{
	memcpy(out, in, CHAN_CC_NAME_MAX);
	out[CHAN_CC_NAME_MAX - 1] = '\0';
}

/* -EINVAL for values Linux refuses too; 0 fields keep the stack's defaults. */
static int chan_opts_to_tcp(const struct chan_opts *in, struct tcp_sockopts *o)
{
	tcp_sockopts_default(o);
	if (in->rcvbuf != 0) {
		o->rcvbuf = in->rcvbuf;
		o->rcvbuf_locked = true;
	}
	if (in->sndbuf != 0)
		o->sndbuf = in->sndbuf;
	o->nodelay = in->nodelay != 0;
	o->cork = in->cork != 0;
	o->keepalive = in->keepalive != 0;
	if (in->keep_idle_s != 0)
		o->keep_idle_ms = in->keep_idle_s * 1000u;
	if (in->keep_intvl_s != 0)
		o->keep_intvl_ms = in->keep_intvl_s * 1000u;
	if (in->keep_cnt != 0)
		o->keep_cnt = in->keep_cnt;
	o->user_timeout_ms = in->user_timeout_ms;
	o->mss = in->maxseg;
	o->linger = in->linger0 != 0;
	o->ip = (struct sock_ip_opts){.ttl = in->ttl, .tos = in->tos};
	if (in->cc[0] != '\0') {
		char name[CHAN_CC_NAME_MAX];
		chan_cc_name(in->cc, name);
		o->cc = tcp_cc_find(name);
		if (o->cc == NULL)
			return -ENOENT; /* Linux: TCP_CONGESTION with an unknown name */
	}
	return 0;
}

/* SO_REUSEPORT travels in the request's bind flags; the group is the process's user. */
static void chan_reuseport_to_tcp(const struct chan_ctx *x, struct tcp_sockopts *o)
{
	o->reuseport = (x->rq->flags & CHAN_BIND_REUSEPORT) != 0;
	o->reuseport_uid = (uint32_t)x->a->procs[x->p].uid;
}

static void chan_opts_from_tcp(const struct tcp_sockopts *o, struct chan_info *out)
{
	out->rcvbuf = o->rcvbuf;
	out->sndbuf = o->sndbuf;
	out->nodelay = o->nodelay;
	out->keepalive = o->keepalive;
	out->keep_idle_s = o->keep_idle_ms / 1000u;
	out->keep_intvl_s = o->keep_intvl_ms / 1000u;
	out->keep_cnt = o->keep_cnt;
	out->user_timeout_ms = o->user_timeout_ms;
	out->maxseg = o->mss;
	out->linger0 = o->linger;
	const char *cc = o->cc != NULL ? o->cc->name : tcp_cc_default()->name;
	strncpy(out->cc, cc, sizeof(out->cc) - 1);
}

static struct chan_dsock *chan_new_sock(const struct chan_ctx *x, uint8_t kind)
{
	struct chan_dsock *ds = chan_dsock_alloc(&x->a->w[x->cw->index], kind);
	if (ds != NULL)
		ds->holders = 1ull << x->p;
	return ds;
}

static struct sock_owner chan_ctx_owner(const struct chan_ctx *x, struct chan_dsock *ds)
{
	return chan_owner(ds, x->a->procs[x->p].pid, x->a->procs[x->p].ns_pid);
}

/* The socket a request names, if process p holds it (it is then this worker's); else
 * NULL, and the call answers EBADF. */
static struct chan_dsock *chan_ctx_sock(const struct chan_ctx *x)
{
	uint32_t i = x->rq->sock;
	if (i >= x->a->lay.max_socks || chan_sock_worker(&x->a->lay, i) != x->cw->index)
		return NULL;
	struct chan_dsock *ds = &x->a->socks[i];
	return ds->kind != CHAN_SOCK_FREE && (ds->holders & (1ull << x->p)) ? ds : NULL;
}

static int chan_call_listen(const struct chan_ctx *x)
{
	const struct chan_req *rq = x->rq;
	if (!chan_port_allowed(x, rq->lport))
		return -EACCES;
	/* Another socket's bind of the port, kept where the port's reservations are. */
	if (chan_bind_worker_of(&x->a->lay, rq->lport) == x->cw->index &&
	    chan_bind_conflict(x->cw, x->a->procs[x->p].uid, &rq->laddr, rq->lport,
			       rq->flags & (CHAN_BIND_REUSEPORT | CHAN_BIND_V6ONLY), x->a, x->p,
			       rq->sock))
		return -EADDRINUSE;
	struct tcp_sockopts o;
	int rc = chan_opts_to_tcp(&rq->opts, &o);
	if (rc < 0)
		return rc;
	chan_reuseport_to_tcp(x, &o);
	chan_addr_opts_to_tcp(rq, &o);
	/* Every user's listeners share this worker's table: one user may fill a part only.
	 * ENOBUFS, as when the table itself is full. */
	struct chan_user *u = x->a->user;
	_Atomic uint32_t *listeners = &u->listeners[x->cw->index];
	if (!chan_limit_allows(&x->cw->chan->limits, CHAN_LIMIT_LISTENERS_PER_USER,
			       atomic_load(listeners), 1, u->exempt)) {
		x->cw->st.listen_limit++;
		return -ENOBUFS;
	}
	struct chan_dsock *ds = chan_new_sock(x, CHAN_SOCK_TCP_LISTEN);
	if (ds == NULL)
		return -EMFILE;
	struct chan_app_worker *aw = &x->a->w[x->cw->index];
	uint32_t backlog = rq->backlog == 0 ? 1 : rq->backlog > 4096 ? 4096 : rq->backlog;
	uint32_t entries = 16;
	while (entries < backlog)
		entries <<= 1;
	ds->acc = aw->mem.alloc(aw->mem.ctx, chan_ring_bytes(entries));
	if (ds->acc == NULL) {
		chan_dsock_release(ds);
		return -ENOMEM;
	}
	ds->acc_mask = entries - 1;
	atomic_store(&ds->acc->head, 0);
	atomic_store(&ds->acc->tail, 0);
	struct sock_owner own = chan_ctx_owner(x, ds);
	rc = tcp_listen(x->cw->stack, &rq->laddr, ntohs(rq->lport), backlog, &o, &own, &ds->tcp);
	if (rc < 0) {
		aw->mem.free(aw->mem.ctx, ds->acc, chan_ring_bytes(entries));
		chan_dsock_release(ds);
		return rc;
	}
	atomic_fetch_add(listeners, 1);
	struct chan_sock *ss = chan_dsock_shm(ds);
	ss->acc_off = chan_app_off(x->a, ds->acc);
	ss->acc_mask = ds->acc_mask;
	ss->laddr = rq->laddr;
	ss->lport = rq->lport;
	ss->scope = rq->scope;
	atomic_store(&ss->state, CHAN_SS_LISTEN);
	x->rep->socks[0] = ds->index;
	x->rep->count = 1;
	return 0;
}

static int chan_call_connect(const struct chan_ctx *x)
{
	const struct chan_req *rq = x->rq;
	if (inet_addr_is_any(&rq->raddr) || rq->rport == 0)
		return -ECONNREFUSED;
	struct tcp_sockopts o;
	int rc = chan_opts_to_tcp(&rq->opts, &o);
	if (rc < 0)
		return rc;
	chan_addr_opts_to_tcp(rq, &o);
	struct chan_dsock *ds = chan_new_sock(x, CHAN_SOCK_TCP);
	if (ds == NULL)
		return -EMFILE;
	struct stack *s = x->cw->stack;
	struct sock_owner own = chan_ctx_owner(x, ds);
	/* An unbound socket, or one bound to a wildcard, sends from the peer's family: an
	 * AF_INET6 socket reaches an IPv4 peer by its mapped address (RFC 4291 §2.5.5.2). */
	struct inet_addr raddr = rq->raddr, laddr = rq->laddr;
	if (inet_addr_is_any(&laddr))
		laddr = inet_addr_any(!inet_addr_is_v4(&raddr));
	uint16_t lport = ntohs(rq->lport), rport = ntohs(rq->rport);
	rc = tcp_connect(s, &laddr, lport, &raddr, rport, &o, &own, &ds->tcp);
	if (rc == -EXDEV && tcp_connect_source(s, &raddr, o.scope, &laddr) == 0)
		x->rep->redirect = steer_tcp_owner_inet(s->steer, &raddr, &laddr, rport, lport);
	if (rc < 0) {
		chan_dsock_release(ds);
		return rc;
	}
	chan_dsock_share_tcp(ds);
	/* A connection to ourselves may be established already. */
	chan_dsock_publish(ds, 0);
	x->rep->socks[0] = ds->index;
	x->rep->count = 1;
	return 0;
}

static int chan_call_bind(const struct chan_ctx *x)
{
	const struct chan_req *rq = x->rq;
	if (!chan_port_allowed(x, rq->lport))
		return -EACCES;
	if (rq->lport == 0)
		return 0; /* nothing to reserve: listen or connect picks the port */
	if (chan_bind_worker_of(&x->a->lay, rq->lport) != x->cw->index)
		return -EINVAL; /* the library sends binds to the port's worker */
	uid_t uid = x->a->procs[x->p].uid;
	if (chan_bind_conflict(x->cw, uid, &rq->laddr, rq->lport, rq->flags, NULL, 0, 0))
		return -EADDRINUSE;
	struct tcp_sockopts o;
	chan_reuseport_to_tcp(x, &o);
	chan_addr_opts_to_tcp(rq, &o);
	int rc = tcp_bind_check(x->cw->stack, &rq->laddr, ntohs(rq->lport), &o);
	if (rc < 0)
		return rc;
	if (!chan_limit_allows(&x->cw->chan->limits, CHAN_LIMIT_BINDS_PER_APP,
			       chan_bind_count(x->cw, x->a), 1, false)) {
		x->cw->st.bind_limit++;
		return -ENOBUFS;
	}
	return chan_bind_add(x->cw, x->a, x->p, &rq->laddr, rq->lport, rq->flags,
			     &x->rep->socks[0]);
}

static int chan_call_unbind(const struct chan_ctx *x)
{
	chan_bind_drop(x->cw, x->a, x->p, x->rq->sock);
	return 0;
}

static int chan_call_udp_open(const struct chan_ctx *x)
{
	const struct chan_req *rq = x->rq;
	if (!chan_port_allowed(x, rq->lport))
		return -EACCES;
	struct chan_dsock *ds = chan_new_sock(x, CHAN_SOCK_UDP);
	if (ds == NULL)
		return -EMFILE;
	struct stack *s = x->cw->stack;
	struct chan_app_worker *aw = &x->a->w[x->cw->index];
	struct sock_owner own = chan_ctx_owner(x, ds);
	/* SO_REUSEPORT is taken as SO_REUSEADDR: enough for a server's connected socket per
	 * client beside its listening one (iperf3), not for datagrams spread by hash. */
	unsigned bf = rq->flags & (CHAN_BIND_REUSEADDR | CHAN_BIND_REUSEPORT) ? UDP_BIND_REUSEADDR : 0;
	if (rq->flags & CHAN_BIND_V6ONLY)
		bf |= UDP_BIND_V6ONLY;
	int rc = udp_bind_inet(s, &rq->laddr, ntohs(rq->lport), rq->opts.rcvbuf, bf, &own,
			       &ds->udp);
	if (rc == -EXDEV)
		x->rep->redirect = steer_udp_owner(s->steer, ntohs(rq->lport));
	if (rc < 0) {
		chan_dsock_release(ds);
		return rc;
	}
	udp_set_broadcast(ds->udp, rq->opts.broadcast != 0);
	udp_set_ip_opts(ds->udp, &(struct sock_ip_opts){.ttl = rq->opts.ttl, .tos = rq->opts.tos});
	/* The send FIFO: datagrams with their headers, as large as SO_SNDBUF (Linux's default
	 * 212992), and never smaller than one largest datagram. */
	struct sock *sk = udp_sock(ds->udp);
	ds->udp_tx = sock_fifo_alloc(&aw->mem, rq->opts.sndbuf != 0 ? rq->opts.sndbuf : 212992,
				     1u << 17);
	if (ds->udp_tx == NULL) {
		udp_close(ds->udp);
		chan_dsock_release(ds);
		return -ENOMEM;
	}
	struct chan_sock *ss = chan_dsock_shm(ds);
	chan_sock_share_rx(x->a, ss, sk->rx);
	chan_sock_share_tx(x->a, ss, ds->udp_tx);
	ss->laddr = sk->laddr;
	ss->lport = htons(sk->lport);
	x->rep->socks[0] = ds->index;
	x->rep->count = 1;
	x->rep->laddr = ss->laddr;
	x->rep->lport = ss->lport;
	return 0;
}

static int chan_call_udp_connect(const struct chan_ctx *x)
{
	struct chan_dsock *ds = chan_ctx_sock(x);
	if (ds == NULL || ds->kind != CHAN_SOCK_UDP)
		return -EBADF;
	int rc = udp_connect_inet(ds->udp, &x->rq->raddr, ntohs(x->rq->rport),
				  chan_scope_port(x->rq->scope));
	if (rc == 0) {
		struct sock *sk = udp_sock(ds->udp);
		struct chan_sock *ss = chan_dsock_shm(ds);
		ss->laddr = sk->laddr;
		ss->raddr = sk->raddr;
		ss->rport = htons(sk->rport);
	}
	return rc;
}

/* IP_TTL or IP_TOS (checked by the library as Linux checks them) into a socket's options. */
static void chan_ip_opt_set(struct sock_ip_opts *ip, unsigned opt, uint32_t v)
{
	if (opt == CHAN_OPT_TTL)
		ip->ttl = (uint8_t)v;
	else
		ip->tos = (uint8_t)v;
}

int chan_dsock_setopt(struct chan_dsock *ds, unsigned opt, uint32_t v, const char *cc)
{
	if (ds->kind == CHAN_SOCK_UDP) {
		struct udp_sock *u = ds->udp;
		if (opt == CHAN_OPT_BROADCAST)
			udp_set_broadcast(u, v != 0);
		if (opt == CHAN_OPT_TTL || opt == CHAN_OPT_TOS) {
			struct sock_ip_opts ip = *udp_get_ip_opts(u);
			chan_ip_opt_set(&ip, opt, v);
			udp_set_ip_opts(u, &ip);
		}
		return 0; /* buffer sizes: the FIFOs keep theirs */
	}
	struct tcp_sockopts o = *tcp_get_sockopts(ds->tcp);
	switch (opt) {
	case CHAN_OPT_RCVBUF: o.rcvbuf = v; o.rcvbuf_locked = true; break;
	case CHAN_OPT_SNDBUF: o.sndbuf = v; break;
	case CHAN_OPT_NODELAY: o.nodelay = v != 0; break;
	case CHAN_OPT_CORK: o.cork = v != 0; break;
	case CHAN_OPT_KEEPALIVE: o.keepalive = v != 0; break;
	case CHAN_OPT_KEEPIDLE: o.keep_idle_ms = v * 1000u; break;
	case CHAN_OPT_KEEPINTVL: o.keep_intvl_ms = v * 1000u; break;
	case CHAN_OPT_KEEPCNT: o.keep_cnt = v; break;
	case CHAN_OPT_USER_TIMEOUT: o.user_timeout_ms = v; break;
	case CHAN_OPT_MAXSEG: o.mss = (uint16_t)v; break;
	case CHAN_OPT_LINGER0: o.linger = v != 0; break;
	case CHAN_OPT_BROADCAST: return 0;
	case CHAN_OPT_TTL:
	case CHAN_OPT_TOS: chan_ip_opt_set(&o.ip, opt, v); break;
	case CHAN_OPT_CONGESTION:
		o.cc = cc != NULL ? tcp_cc_find(cc) : NULL;
		if (o.cc == NULL)
			return -ENOENT;
		break;
	default:
		return -ENOPROTOOPT;
	}
	return tcp_set_sockopts(ds->tcp, &o);
}

static int chan_call_setopt(const struct chan_ctx *x)
{
	char cc[CHAN_CC_NAME_MAX];
	chan_cc_name(x->rq->cc, cc);
	if (x->rq->sock == UINT32_MAX && x->rq->opt == CHAN_OPT_CONGESTION)
		return tcp_cc_find(cc) != NULL ? 0 : -ENOENT; /* only: is the name known? */
	struct chan_dsock *ds = chan_ctx_sock(x);
	if (ds == NULL)
		return -EBADF;
	return chan_dsock_setopt(ds, x->rq->opt, x->rq->value, cc);
}

/* Linux's numbering of TCP states (include/net/tcp_states.h), which TCP_INFO reports. */
static uint8_t chan_linux_state(enum tcp_state st)
{
	static const uint8_t map[TCP_STATE_COUNT] = {
		[TCP_CLOSED] = 7, [TCP_LISTEN] = 10, [TCP_SYN_SENT] = 2, [TCP_SYN_RECEIVED] = 3,
		[TCP_ESTABLISHED] = 1, [TCP_FIN_WAIT_1] = 4, [TCP_FIN_WAIT_2] = 5,
		[TCP_CLOSE_WAIT] = 8, [TCP_CLOSING] = 11, [TCP_LAST_ACK] = 9, [TCP_TIME_WAIT] = 6,
	};
	return (unsigned)st < TCP_STATE_COUNT ? map[st] : 7;
}

/* The stack keeps ports in host order; chan_info has them as struct sockaddr_in6. */
static void chan_info_addrs(struct chan_info *out, const struct inet_addr *laddr, uint16_t lport,
			    const struct inet_addr *raddr, uint16_t rport)
{
	out->laddr = *laddr;
	out->lport = htons(lport);
	out->raddr = *raddr;
	out->rport = htons(rport);
}

static int chan_call_info(const struct chan_ctx *x)
{
	struct chan_dsock *ds = chan_ctx_sock(x);
	if (ds == NULL)
		return -EBADF;
	struct chan_info *out = &x->rep->u.info;
	memset(out, 0, sizeof(*out));
	out->kind = ds->kind;
	if (ds->kind == CHAN_SOCK_UDP) {
		struct udp_sock_info ui;
		udp_sock_info(ds->udp, &ui);
		chan_info_addrs(out, &ui.local, ui.lport, &ui.remote, ui.rport);
		out->rcvbuf = ui.rcvbuf;
		out->sndbuf = ds->udp_tx->size;
		out->broadcast = ui.broadcast;
		return 0;
	}
	struct tcp_conn_info ti;
	tcp_conn_info(ds->tcp, &ti);
	chan_info_addrs(out, &ti.laddr, ti.lport, &ti.raddr, ti.rport);
	out->tcp_state = chan_linux_state(ti.state);
	out->snd_wscale = ti.snd_wscale;
	out->rcv_wscale = ti.rcv_wscale;
	/* TCPI_OPT_TIMESTAMPS 1, TCPI_OPT_SACK 2, TCPI_OPT_WSCALE 4, TCPI_OPT_ECN 8 */
	out->options = (uint8_t)((ti.timestamps ? 1 : 0) | (ti.sack ? 2 : 0) |
				 (ti.snd_wscale || ti.rcv_wscale ? 4 : 0) | (ti.ecn ? 8 : 0));
	out->rto_us = ti.rto_ms * 1000u;
	out->snd_mss = ti.snd_mss;
	out->rcv_mss = ti.rcv_mss;
	out->rtt_us = ti.srtt_us;
	out->rttvar_us = ti.rttvar_us;
	uint32_t mss = ti.snd_mss != 0 ? ti.snd_mss : 536;
	out->snd_cwnd = ti.cwnd / mss;
	out->snd_ssthresh = ti.ssthresh / mss;
	out->unacked = ti.tx_queued / mss;
	out->total_retrans = (uint32_t)ti.retransmits;
	out->bytes_acked = ti.bytes_acked;
	out->bytes_received = ti.bytes_received;
	out->segs_out = ti.segs_out;
	out->segs_in = ti.segs_in;
	chan_opts_from_tcp(tcp_get_sockopts(ds->tcp), out);
	const struct sock *sk = tcp_sock(ds->tcp);
	if (sk->rx != NULL)
		out->rcvbuf = sk->rx->size;
	if (sk->tx != NULL)
		out->sndbuf = sk->tx->size;
	return 0;
}

_Static_assert(CHAN_LINKS_MAX == NETCFG_MAX_PORTS, "one chan_link per port");

/* The table of chan_links from this worker's copy of the configuration. */
static int chan_call_links(const struct chan_ctx *x)
{
	const struct netcfg *cfg = &x->cw->stack->cfg;
	struct chan_links *out = &x->rep->u.links;
	memset(out, 0, sizeof(*out));
	out->gen = cfg->gen;
	uint16_t link_of[NETCFG_MAX_PORTS];
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct netcfg_iface *i = &cfg->ifaces[p];
		if (!i->present)
			continue;
		struct chan_link *l = &out->links[out->nlinks];
		snprintf(l->name, sizeof(l->name), "%s", i->name);
		l->ifindex = netcfg_ifindex(p);
		memcpy(l->mac, i->mac.b, sizeof(l->mac));
		l->mtu = i->mtu;
		l->up = i->up;
		link_of[p] = (uint16_t)out->nlinks++;
	}
	for (unsigned k = 0; k < NETCFG_MAX_ADDRS && out->naddrs < CHAN_LINK_ADDRS_MAX; k++) {
		const struct netcfg_addr *a = &cfg->addrs[k];
		if (a->used && a->port < NETCFG_MAX_PORTS && cfg->ifaces[a->port].present)
			out->addrs[out->naddrs++] = (struct chan_link_addr){
				.addr = htonl(a->addr), .link = link_of[a->port], .plen = a->plen};
	}
	for (unsigned k = 0; k < NETCFG_MAX_ADDRS6 && out->naddrs6 < CHAN_LINK_ADDRS6_MAX; k++) {
		const struct netcfg_addr6 *a = &cfg->addrs6[k];
		if (a->used && a->port < NETCFG_MAX_PORTS && cfg->ifaces[a->port].present)
			out->addrs6[out->naddrs6++] = (struct chan_link_addr6){
				.addr = inet_addr_v6(&a->addr), .link = link_of[a->port],
				.usable = !(a->flags & NETCFG6_UNUSABLE)};
	}
	return 0;
}

bool chan_call_run(struct chan_worker *cw, struct chan_app *a, unsigned p, unsigned slot)
{
	if (slot >= CHAN_CALL_SLOTS)
		return false;
	struct chan_call *c = chan_call_at(a->base, &a->lay, p, slot);
	if (atomic_load_explicit(&c->state, memory_order_acquire) != CHAN_CALL_POSTED)
		return false;
	/* The process may go on writing the slot: what is run is this copy. */
	struct chan_req rq;
	memcpy(&rq, &c->req, sizeof(rq));
	struct chan_reply rep;
	memset(&rep, 0, sizeof(rep));
	struct chan_ctx x = {.cw = cw, .a = a, .p = p, .rq = &rq, .rep = &rep};
	int rc;
	switch (rq.op) {
	case CHAN_OP_LISTEN: rc = chan_call_listen(&x); break;
	case CHAN_OP_CONNECT: rc = chan_call_connect(&x); break;
	case CHAN_OP_BIND: rc = chan_call_bind(&x); break;
	case CHAN_OP_UNBIND: rc = chan_call_unbind(&x); break;
	case CHAN_OP_UDP_OPEN: rc = chan_call_udp_open(&x); break;
	case CHAN_OP_UDP_CONNECT: rc = chan_call_udp_connect(&x); break;
	case CHAN_OP_SETOPT: rc = chan_call_setopt(&x); break;
	case CHAN_OP_INFO: rc = chan_call_info(&x); break;
	case CHAN_OP_LINKS: rc = chan_call_links(&x); break;
	default:
		return false;
	}
	rep.err = rc < 0 ? -rc : 0;
	if (rc < 0)
		rep.count = 0;
	memcpy(&c->rep, &rep, sizeof(rep));
	atomic_store_explicit(&c->state, CHAN_CALL_DONE, memory_order_release);
	cw->st.calls++;
	a->w[cw->index].wake |= 1ull << p;
	return true;
}
