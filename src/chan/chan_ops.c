/* The server's requests, run on the worker that owns the socket (worker_call): the socket
 * calls that need an answer (listen, connect, bind, options, TCP_INFO), and the changes of
 * an application's processes (join after fork, exit). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "chan_priv.h"
#include "chan_worker.h"
#include "../proto/stack.h"
#include "../proto/tcp.h"
#include "../proto/steer.h"
#include "../proto/tcp_cc.h"
#include "../proto/udp.h"

static struct chan_worker *chan_job_worker(const struct chan_job *j)
{
	return &j->app->chan->cw[j->worker];
}

/* -EINVAL for values Linux refuses too; 0 fields keep the stack's defaults. */
static int chan_opts_to_tcp(const struct chan_opts *in, struct tcp_sockopts *o)
{
	tcp_sockopts_default(o);
	if (in->rcvbuf != 0)
		o->rcvbuf = in->rcvbuf;
	if (in->sndbuf != 0)
		o->sndbuf = in->sndbuf;
	o->nodelay = in->nodelay != 0;
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
	if (in->cc[0] != '\0') {
		char name[CHAN_CC_NAME_MAX];
		memcpy(name, in->cc, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		o->cc = tcp_cc_find(name);
		if (o->cc == NULL)
			return -ENOENT; /* Linux: TCP_CONGESTION with an unknown name */
	}
	return 0;
}

/* SO_REUSEPORT travels in the request's bind flags; the group is the process's user. */
static void chan_reuseport_to_tcp(const struct chan_job *j, struct tcp_sockopts *o)
{
	o->reuseport = (j->req->flags & CHAN_BIND_REUSEPORT) != 0;
	o->reuseport_uid = (uint32_t)j->app->procs[j->proc].uid;
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

int chan_job_app_add(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_worker *cw = chan_job_worker(j);
	if (cw->napps >= CHAN_MAX_APPS)
		return -ENOSPC;
	cw->apps[cw->napps++] = j->app;
	j->app->w[j->worker].procs |= 1ull << j->proc;
	return 0;
}

/* A process slot starts clean: its rings empty and no stale `queued` bits. */
static void chan_proc_reset(struct chan_app *a, unsigned w, unsigned p)
{
	struct chan_ring *r = chan_cmd_ring(a->base, &a->lay, p, w);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	r = chan_ev_ring(a->base, &a->lay, p, w);
	atomic_store(&r->head, 0);
	atomic_store(&r->tail, 0);
	uint64_t bit = 1ull << p;
	for (uint32_t s = w; s < a->lay.max_socks; s += a->lay.nb_workers)
		atomic_fetch_and(&chan_sock_at(a->base, &a->lay, s)->queued, ~bit);
}

int chan_job_proc_join(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	uint64_t parent = 1ull << j->req->parent_proc, child = 1ull << j->proc;
	/* The child inherits what the parent holds when it forks, so what the parent queued
	 * before comes first: the CLAIM of a connection it has just accepted, the CLOSE of a
	 * socket it has let go of. Its ring holds no more than CHAN_CMD_RING commands. */
	if (a->w[j->worker].procs & parent)
		chan_worker_run_proc(chan_job_worker(j), a, j->req->parent_proc, CHAN_CMD_RING);
	chan_proc_reset(a, j->worker, j->proc);
	for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers)
		if (a->socks[i].kind != CHAN_SOCK_FREE && (a->socks[i].holders & parent))
			a->socks[i].holders |= child;
	a->w[j->worker].procs |= child;
	return 0;
}

int chan_job_proc_gone(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	struct chan_worker *cw = chan_job_worker(j);
	uint64_t bit = 1ull << j->proc;
	/* Its last calls first: a process that accepted, wrote and closed, then exited at once
	 * left the CLAIM, KICK and CLOSE in its ring, and the exit must not undo them (an
	 * unclaimed connection would be reset, its reply lost). A process disconnected for a
	 * bad command has nothing more run. */
	if (a->w[j->worker].procs & bit)
		chan_worker_run_proc(cw, a, j->proc, CHAN_CMD_RING);
	a->w[j->worker].procs &= ~bit;
	a->w[j->worker].wake &= ~bit;
	for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers) {
		struct chan_dsock *ds = &a->socks[i];
		if (ds->kind == CHAN_SOCK_FREE || !(ds->holders & bit))
			continue;
		ds->holders &= ~bit;
		if (ds->holders == 0)
			chan_dsock_close(cw, ds);
	}
	return 0;
}

int chan_job_app_remove(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_app *a = j->app;
	struct chan_worker *cw = chan_job_worker(j);
	/* Listeners first: closing one closes its unclaimed children too. */
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = j->worker; i < a->lay.max_socks; i += a->lay.nb_workers) {
			struct chan_dsock *ds = &a->socks[i];
			if (ds->kind != CHAN_SOCK_FREE &&
			    (pass == 1 || ds->kind == CHAN_SOCK_TCP_LISTEN))
				chan_dsock_close(cw, ds);
		}
	for (unsigned i = 0; i < cw->napps; i++)
		if (cw->apps[i] == a) {
			cw->apps[i] = cw->apps[--cw->napps];
			break;
		}
	return 0;
}

static struct chan_dsock *chan_job_new_sock(struct chan_job *j, uint8_t kind)
{
	struct chan_dsock *ds = chan_dsock_alloc(&j->app->w[j->worker], kind);
	if (ds != NULL)
		ds->holders = 1ull << j->proc;
	return ds;
}

int chan_job_listen(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	const struct chan_req *rq = j->req;
	struct tcp_sockopts o;
	int rc = chan_opts_to_tcp(&rq->opts, &o);
	if (rc < 0)
		return rc;
	chan_reuseport_to_tcp(j, &o);
	struct chan_dsock *ds = chan_job_new_sock(j, CHAN_SOCK_TCP_LISTEN);
	if (ds == NULL)
		return -EMFILE;
	struct chan_app_worker *aw = &j->app->w[j->worker];
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
	struct sock_owner own = chan_owner(ds, rq->pid);
	rc = tcp_listen(s, ntohl(rq->laddr), ntohs(rq->lport), backlog, &o, &own, &ds->tcp);
	if (rc < 0) {
		aw->mem.free(aw->mem.ctx, ds->acc, chan_ring_bytes(entries));
		chan_dsock_release(ds);
		return rc;
	}
	struct chan_sock *ss = chan_dsock_shm(ds);
	ss->acc_off = chan_app_off(j->app, ds->acc);
	ss->acc_mask = ds->acc_mask;
	ss->laddr = rq->laddr;
	ss->lport = rq->lport;
	atomic_store(&ss->state, CHAN_SS_LISTEN);
	j->rep->socks[j->worker] = ds->index;
	return 0;
}

int chan_job_unlisten(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_dsock *ds = &j->app->socks[j->rep->socks[j->worker]];
	if (ds->kind == CHAN_SOCK_TCP_LISTEN)
		chan_dsock_close(chan_job_worker(j), ds);
	return 0;
}

int chan_job_connect(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	const struct chan_req *rq = j->req;
	struct tcp_sockopts o;
	int rc = chan_opts_to_tcp(&rq->opts, &o);
	if (rc < 0)
		return rc;
	struct chan_dsock *ds = chan_job_new_sock(j, CHAN_SOCK_TCP);
	if (ds == NULL)
		return -EMFILE;
	struct sock_owner own = chan_owner(ds, rq->pid);
	uint32_t laddr = ntohl(rq->laddr), raddr = ntohl(rq->raddr);
	uint16_t lport = ntohs(rq->lport), rport = ntohs(rq->rport);
	rc = tcp_connect(s, laddr, lport, raddr, rport, &o, &own, &ds->tcp);
	if (rc == -EXDEV && tcp_connect_source(s, raddr, &laddr) == 0)
		j->redirect = steer_tcp_owner(s->steer, raddr, laddr, rport, lport);
	if (rc < 0) {
		chan_dsock_release(ds);
		return rc;
	}
	struct sock *sk = tcp_sock(ds->tcp);
	struct chan_sock *ss = chan_dsock_shm(ds);
	ss->rx_off = chan_app_off(j->app, sk->rx->shm);
	ss->tx_off = chan_app_off(j->app, sk->tx->shm);
	ss->rx_size = sk->rx->size;
	ss->tx_size = sk->tx->size;
	ss->laddr = htonl(sk->laddr);
	ss->lport = htons(sk->lport);
	ss->raddr = htonl(sk->raddr);
	ss->rport = htons(sk->rport);
	/* A connection to ourselves may be established already. */
	chan_dsock_publish(ds, 0);
	j->rep->socks[0] = ds->index;
	return 0;
}

int chan_job_bind_check(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct tcp_sockopts o;
	chan_reuseport_to_tcp(j, &o);
	return tcp_bind_check(s, ntohl(j->req->laddr), ntohs(j->req->lport), &o);
}

int chan_job_udp_open(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	const struct chan_req *rq = j->req;
	struct chan_dsock *ds = chan_job_new_sock(j, CHAN_SOCK_UDP);
	if (ds == NULL)
		return -EMFILE;
	struct chan_app_worker *aw = &j->app->w[j->worker];
	struct sock_owner own = chan_owner(ds, rq->pid);
	/* SO_REUSEPORT is taken as SO_REUSEADDR: enough for a server's connected socket per
	 * client beside its listening one (iperf3), not for datagrams spread by hash. */
	unsigned bf = rq->flags & (CHAN_BIND_REUSEADDR | CHAN_BIND_REUSEPORT) ? UDP_BIND_REUSEADDR : 0;
	int rc = udp_bind(s, ntohl(rq->laddr), ntohs(rq->lport), rq->opts.rcvbuf, bf, &own,
			  &ds->udp);
	if (rc < 0) {
		chan_dsock_release(ds);
		return rc;
	}
	udp_set_broadcast(ds->udp, rq->opts.broadcast != 0);
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
	ss->rx_off = chan_app_off(j->app, sk->rx->shm);
	ss->rx_size = sk->rx->size;
	ss->tx_off = chan_app_off(j->app, ds->udp_tx->shm);
	ss->tx_size = ds->udp_tx->size;
	ss->laddr = htonl(sk->laddr);
	ss->lport = htons(sk->lport);
	j->rep->socks[0] = ds->index;
	j->rep->laddr = ss->laddr;
	j->rep->lport = ss->lport;
	return 0;
}

/* The socket the request names, if process proc of the application holds it on this
 * worker; NULL otherwise (the server answers EBADF). */
static struct chan_dsock *chan_job_sock(struct chan_job *j)
{
	uint32_t i = j->req->sock;
	if (i >= j->app->lay.max_socks || i % j->app->lay.nb_workers != j->worker)
		return NULL;
	/* What the process queued before this request comes first: above all the CLAIM of a
	 * connection it has just accepted, without which a setsockopt right after accept
	 * found the socket not yet its own (EBADF; sockperf's server sets TCP_NODELAY so). */
	if (j->app->w[j->worker].procs & (1ull << j->proc))
		chan_worker_run_proc(chan_job_worker(j), j->app, j->proc, CHAN_CMD_RING);
	struct chan_dsock *ds = &j->app->socks[i];
	return ds->kind != CHAN_SOCK_FREE && (ds->holders & (1ull << j->proc)) ? ds : NULL;
}

int chan_job_udp_connect(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_dsock *ds = chan_job_sock(j);
	if (ds == NULL || ds->kind != CHAN_SOCK_UDP)
		return -EBADF;
	int rc = udp_connect(ds->udp, ntohl(j->req->raddr), ntohs(j->req->rport));
	if (rc == 0) {
		struct sock *sk = udp_sock(ds->udp);
		struct chan_sock *ss = chan_dsock_shm(ds);
		ss->laddr = htonl(sk->laddr);
		ss->raddr = htonl(sk->raddr);
		ss->rport = htons(sk->rport);
	}
	return rc;
}

int chan_job_setopt(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_dsock *ds = chan_job_sock(j);
	if (ds == NULL)
		return -EBADF;
	const uint32_t v = j->req->value;
	if (ds->kind == CHAN_SOCK_UDP) {
		if (j->req->opt == CHAN_OPT_BROADCAST) {
			udp_set_broadcast(ds->udp, v != 0);
			return 0;
		}
		return 0; /* buffer sizes: the FIFOs keep theirs */
	}
	struct tcp_sockopts o = *tcp_get_sockopts(ds->tcp);
	switch (j->req->opt) {
	case CHAN_OPT_RCVBUF: o.rcvbuf = v; break;
	case CHAN_OPT_SNDBUF: o.sndbuf = v; break;
	case CHAN_OPT_NODELAY: o.nodelay = v != 0; break;
	case CHAN_OPT_KEEPALIVE: o.keepalive = v != 0; break;
	case CHAN_OPT_KEEPIDLE: o.keep_idle_ms = v * 1000u; break;
	case CHAN_OPT_KEEPINTVL: o.keep_intvl_ms = v * 1000u; break;
	case CHAN_OPT_KEEPCNT: o.keep_cnt = v; break;
	case CHAN_OPT_USER_TIMEOUT: o.user_timeout_ms = v; break;
	case CHAN_OPT_MAXSEG: o.mss = (uint16_t)v; break;
	case CHAN_OPT_LINGER0: o.linger = v != 0; break;
	case CHAN_OPT_BROADCAST: return 0;
	case CHAN_OPT_CONGESTION: {
		char name[CHAN_CC_NAME_MAX];
		memcpy(name, j->req->cc, sizeof(name));
		name[sizeof(name) - 1] = '\0';
		o.cc = tcp_cc_find(name);
		if (o.cc == NULL)
			return -ENOENT;
		break;
	}
	default:
		return -ENOPROTOOPT;
	}
	return tcp_set_sockopts(ds->tcp, &o);
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

int chan_job_info(struct stack *s, void *arg)
{
	struct chan_job *j = arg;
	struct chan_dsock *ds = chan_job_sock(j);
	if (ds == NULL)
		return -EBADF;
	struct chan_info *out = &j->rep->u.info;
	memset(out, 0, sizeof(*out));
	out->kind = ds->kind;
	if (ds->kind == CHAN_SOCK_UDP) {
		struct udp_sock_info ui;
		udp_sock_info(ds->udp, &ui);
		out->laddr = htonl(ui.laddr);
		out->lport = htons(ui.lport);
		out->raddr = htonl(ui.raddr);
		out->rport = htons(ui.rport);
		out->rcvbuf = ui.rcvbuf;
		out->sndbuf = ds->udp_tx->size;
		out->broadcast = ui.broadcast;
		return 0;
	}
	struct tcp_conn_info ti;
	tcp_conn_info(ds->tcp, &ti);
	out->laddr = htonl(ti.laddr);
	out->lport = htons(ti.lport);
	out->raddr = htonl(ti.raddr);
	out->rport = htons(ti.rport);
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
	if (ds->tcp != NULL && tcp_sock(ds->tcp)->rx != NULL)
		out->rcvbuf = tcp_sock(ds->tcp)->rx->size;
	if (ds->tcp != NULL && tcp_sock(ds->tcp)->tx != NULL)
		out->sndbuf = tcp_sock(ds->tcp)->tx->size;
	return 0;
}
