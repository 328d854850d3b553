/* The socket calls: socket, bind, listen, accept, connect, shutdown, close, and names. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dpstack/dpstack.h>

#include "dps_priv.h"

#define DPS_EPHEMERAL_LO 32768
#define DPS_EPHEMERAL_HI 60999

/* A socket's end as the daemon published it. */
static struct dps_ep dps_sock_ep(const struct chan_sock *ss, bool peer)
{
	return (struct dps_ep){.addr = peer ? ss->raddr : ss->laddr,
			       .port = peer ? ss->rport : ss->lport, .scope = ss->scope};
}

/* The bind flags of a request: the options that let sockets share a port, IPV6_V6ONLY. */
static uint32_t dps_bind_flags(const struct dps_file *f)
{
	return (f->reuseaddr ? CHAN_BIND_REUSEADDR : 0) | (f->reuseport ? CHAN_BIND_REUSEPORT : 0) |
	       (f->v6only ? CHAN_BIND_V6ONLY : 0);
}

bool dps_rx_view(const struct dps_file *f, struct fifo *view, uint32_t *gen)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	for (;;) {
		uint32_t g = atomic_load_explicit(&ss->rx_gen, memory_order_acquire);
		if (g & 1) {
			doorbell_relax(); /* the worker is between two stores */
			continue;
		}
		uint64_t off = ss->rx_off, pos_off = ss->rx_pos_off;
		uint32_t size = ss->rx_size;
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&ss->rx_gen, memory_order_relaxed) != g)
			continue;
		*gen = g;
		return dps_fifo_view(f->at, view, pos_off, off, size);
	}
}

void dps_rx_seen(const struct dps_file *f, uint32_t gen)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	if (atomic_load_explicit(&ss->rx_gen_seen, memory_order_relaxed) != gen)
		atomic_store_explicit(&ss->rx_gen_seen, gen, memory_order_release);
}

int dps_file_attach_sock(struct dps_file *f, uint32_t sock)
{
	struct chan_sock *ss = dps_sock(f->at, sock);
	if (!dps_fifo_view(f->at, &f->tx, ss->tx_pos_off, ss->tx_off, ss->tx_size))
		return -EPROTO;
	f->socks[0] = sock;
	f->nsocks = 1;
	struct fifo rx;
	uint32_t gen;
	if (!dps_rx_view(f, &rx, &gen)) {
		f->nsocks = 0;
		return -EPROTO;
	}
	dps_file_bind_sock(f, sock);
	return 0;
}

int dps_socket(int domain, int type, int protocol)
{
	int base = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (domain != AF_INET && domain != AF_INET6)
		return DPS_FAIL(EAFNOSUPPORT);
	enum dps_kind kind;
	if (base == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP))
		kind = DPS_TCP;
	else if (base == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP))
		kind = DPS_UDP;
	else if (base == SOCK_STREAM || base == SOCK_DGRAM)
		return DPS_FAIL(EPROTONOSUPPORT);
	else
		return DPS_FAIL(EINVAL);
	struct dps_attach *at = dps_attach_get();
	if (at == NULL)
		return -1;
	struct dps_file *f = dps_file_new(kind, -1);
	if (f == NULL) {
		dps_attach_put(at);
		return -1;
	}
	f->at = at;
	f->family = domain;
	f->local = dps_ep_any(domain);
	if (type & SOCK_NONBLOCK)
		atomic_store(&f->flags, O_NONBLOCK);
	f->cloexec = (type & SOCK_CLOEXEC) != 0;
	if (dps_file_install(f) != 0) {
		dps_file_put(f);
		return DPS_FAIL(ENOMEM);
	}
	return f->fd;
}

/* A call that creates a socket (connect, a UDP socket), whose answer's socket becomes f's: on
 * the next worker in turn, or, when the flow or port it names is another worker's (-EXDEV),
 * on that one. */
static int dps_call_new_sock(struct dps_file *f, struct chan_req *rq, struct chan_reply *rep)
{
	struct dps_attach *at = f->at;
	int rc = dps_call(at, dps_next_worker(at), rq, rep);
	if (rc == -EXDEV && rep->redirect < at->lay.nb_workers)
		rc = dps_call(at, rep->redirect, rq, rep);
	if (rc < 0)
		return rc == -EXDEV ? -EPROTO : rc;
	return dps_file_attach_sock(f, rep->socks[0]);
}

/* Gives up the daemon's reservation of a TCP bind (the socket now listens or is connected,
 * or closes unused). */
static void dps_unbind(struct dps_file *f)
{
	if (f->bind_id == 0)
		return;
	struct chan_req rq = {.op = CHAN_OP_UNBIND, .sock = f->bind_id};
	struct chan_reply rep;
	dps_call(f->at, chan_bind_worker_of(&f->at->lay, f->local.port), &rq, &rep);
	f->bind_id = 0;
}

/* UDP sockets exist in the daemon from their bind (explicit, or implicit at the first send
 * or connect). */
static int dps_udp_open(struct dps_file *f, const struct dps_ep *local)
{
	struct chan_req rq = {.op = CHAN_OP_UDP_OPEN, .opts = f->opts, .flags = dps_bind_flags(f),
			      .laddr = f->local.addr};
	if (local != NULL) {
		rq.laddr = local->addr;
		rq.lport = local->port;
		rq.scope = local->scope;
	}
	struct chan_reply rep;
	int rc = dps_call_new_sock(f, &rq, &rep);
	if (rc < 0)
		return rc;
	f->local = (struct dps_ep){.addr = rep.laddr, .port = rep.lport, .scope = rq.scope};
	f->bound = true;
	return 0;
}

int dps_udp_ensure_open(struct dps_file *f)
{
	return f->nsocks > 0 ? 0 : dps_udp_open(f, NULL);
}

static int dps_bind_file(struct dps_file *f, const struct sockaddr *uaddr, socklen_t len)
{
	struct sockaddr_storage k;
	struct dps_ep ep;
	int rc = dps_addr_in(uaddr, len, &k);
	if (rc == 0)
		rc = dps_ep_in(f->family, (struct sockaddr *)&k, len, &ep);
	if (rc < 0)
		return rc;
	/* __inet6_bind: an IPv6-only socket cannot take an IPv4 address. */
	if (f->family == AF_INET6 && f->v6only && inet_addr_is_v4(&ep.addr))
		return -EINVAL;
	if (f->bound || f->nsocks > 0)
		return -EINVAL;
	if (f->kind == DPS_UDP)
		return dps_udp_open(f, &ep);
	if (f->kind != DPS_TCP)
		return -EINVAL;
	struct chan_req rq = {.op = CHAN_OP_BIND, .laddr = ep.addr, .lport = ep.port,
			      .scope = ep.scope, .flags = dps_bind_flags(f)};
	struct chan_reply rep;
	rc = dps_call(f->at, chan_bind_worker_of(&f->at->lay, ep.port), &rq, &rep);
	if (rc < 0)
		return rc;
	f->local = ep;
	f->bound = true;
	f->bind_id = ep.port != 0 ? rep.socks[0] : 0;
	return 0;
}

int dps_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = f->kind == DPS_EPOLL ? -ENOTSOCK : dps_bind_file(f, addr, len);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

/* A listener on every worker, so that connections reaching any of them are ours; the
 * calls run at once, and a failure anywhere closes the listeners made elsewhere. */
static int dps_listen_everywhere(struct dps_file *f, const struct chan_req *rq)
{
	struct dps_attach *at = f->at;
	const unsigned n = at->lay.nb_workers;
	int slot[CHAN_MAX_WORKERS];
	struct chan_reply rep[CHAN_MAX_WORKERS];
	int rc = 0;
	for (unsigned w = 0; w < n; w++) {
		slot[w] = dps_call_post(at, w, rq);
		if (slot[w] < 0 && rc == 0)
			rc = slot[w];
	}
	for (unsigned w = 0; w < n; w++) {
		if (slot[w] < 0)
			continue;
		int r = dps_call_wait(at, slot[w], &rep[w]);
		if (r < 0 && rc == 0)
			rc = r;
		if (r < 0)
			slot[w] = -1;
	}
	if (rc < 0) {
		for (unsigned w = 0; w < n; w++)
			if (slot[w] >= 0)
				dps_cmd(at, rep[w].socks[0], CHAN_CMD_CLOSE, 0);
		return rc;
	}
	for (unsigned w = 0; w < n; w++) {
		if (rep[w].count != 1 || chan_sock_worker(&at->lay, rep[w].socks[0]) != w)
			return -EPROTO;
		f->socks[w] = rep[w].socks[0];
		dps_file_bind_sock(f, rep[w].socks[0]);
	}
	f->nsocks = n;
	return 0;
}

static int dps_listen_file(struct dps_file *f, int backlog)
{
	if (f->kind == DPS_LISTEN)
		return 0; /* Linux adjusts the backlog; ours stays */
	if (f->kind != DPS_TCP)
		return f->kind == DPS_UDP ? -EOPNOTSUPP : -ENOTSOCK;
	if (f->nsocks > 0)
		return -EINVAL;
	struct chan_req rq = {.op = CHAN_OP_LISTEN, .laddr = f->local.addr,
			      .lport = f->local.port, .scope = f->local.scope, .opts = f->opts,
			      .sock = f->bind_id,
			      .flags = dps_bind_flags(f) & ~CHAN_BIND_REUSEADDR,
			      .backlog = backlog < 0 ? 0 : (uint32_t)backlog};
	/* Linux sizes small backlogs up a little; 0 still accepts one. */
	if (backlog <= 0)
		rq.backlog = 1;
	int rc;
	if (rq.lport == 0) {
		/* An unbound listener gets an ephemeral port, as Linux autobinds. */
		unsigned range = DPS_EPHEMERAL_HI - DPS_EPHEMERAL_LO + 1;
		unsigned start = (unsigned)rand() % range;
		rc = -EADDRINUSE;
		for (unsigned i = 0; i < 64 && rc == -EADDRINUSE; i++) {
			rq.lport = htons((uint16_t)(DPS_EPHEMERAL_LO + (start + i * 7919) % range));
			rc = dps_listen_everywhere(f, &rq);
		}
	} else {
		rc = dps_listen_everywhere(f, &rq);
	}
	if (rc < 0)
		return rc;
	dps_unbind(f);
	f->local.port = rq.lport;
	f->bound = true;
	f->kind = DPS_LISTEN;
	return 0;
}

int dps_listen(int fd, int backlog)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = dps_listen_file(f, backlog);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

/* Pops from an accept ring that other processes (fork) may pop from too. */
static bool dps_accept_pop(struct chan_ring *r, uint32_t mask, uint64_t *v, uint32_t *was)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	for (;;) {
		uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
		if (t == h || t - h > mask + 1)
			return false;
		*v = r->slot[h & mask];
		*was = t - h;
		if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + 1,
							  memory_order_acq_rel,
							  memory_order_acquire))
			return true;
	}
}

/* A listener's accept ring that looks non-empty, or NULL. */
static struct chan_ring *dps_accept_ring(struct dps_attach *at, uint32_t ls)
{
	struct chan_sock *lss = dps_sock(at, ls);
	if (lss->acc_off < at->lay.arenas_off || lss->acc_off >= at->lay.seg_size)
		return NULL;
	struct chan_ring *r = (struct chan_ring *)((char *)at->base + lss->acc_off);
	return chan_ring_count(r) != 0 ? r : NULL;
}

static int dps_accept_one(struct dps_file *l, int flags, struct dps_file **out)
{
	struct dps_attach *at = l->at;
	unsigned start = atomic_fetch_add(&l->accept_next, 1);
	for (unsigned k = 0; k < l->nsocks; k++) {
		uint32_t ls = l->socks[(start + k) % l->nsocks];
		struct chan_ring *r = dps_accept_ring(at, ls);
		if (r == NULL)
			continue;
		/* The descriptor first: without one (EMFILE) the connection stays queued, as on
		 * Linux, instead of being taken and lost. */
		struct dps_file *f = dps_file_new(DPS_TCP, -1);
		if (f == NULL)
			return -errno;
		uint32_t mask = dps_sock(at, ls)->acc_mask;
		uint64_t v;
		uint32_t was;
		if (!dps_accept_pop(r, mask, &v, &was)) {
			dps_file_put(f); /* another thread or process took it */
			continue;
		}
		/* The worker stops filling a full ring: tell it there is room again. */
		if (was > (mask + 1) / 2)
			dps_kick(at, ls);
		if (v >= at->lay.max_socks) {
			dps_file_put(f);
			return -EPROTO;
		}
		uint32_t s = (uint32_t)v;
		int rc = dps_cmd(at, s, CHAN_CMD_CLAIM, 0);
		if (rc < 0) {
			/* Unclaimed, it stays the listener's, which resets it at its close. */
			dps_file_put(f);
			return rc;
		}
		atomic_fetch_add(&at->refs, 1);
		f->at = at;
		f->family = l->family;
		f->v6only = l->v6only;
		f->opts = l->opts;
		f->ip = l->ip; /* as inet_sk_clone */
		f->rcvtimeo_ms = l->rcvtimeo_ms;
		f->sndtimeo_ms = l->sndtimeo_ms;
		if (flags & SOCK_NONBLOCK)
			atomic_store(&f->flags, O_NONBLOCK);
		f->cloexec = (flags & SOCK_CLOEXEC) != 0;
		rc = dps_file_attach_sock(f, s);
		if (rc == 0)
			rc = dps_file_install(f);
		if (rc < 0) {
			dps_cmd(at, s, CHAN_CMD_CLOSE, 0);
			dps_file_put(f);
			return rc;
		}
		*out = f;
		return 0;
	}
	return -EAGAIN;
}

/* A thread in accept(2) keeps the listener, as Linux's holds the listening socket's file
 * until it returns: a close meanwhile leaves the sockets open, and the last accept to leave
 * closes them. So a connection an accept took off a ring is always claimed before the
 * worker hears of the close, which resets the unclaimed ones (a CLAIM after that would be
 * a bad command, and the daemon drops the whole process), and nothing reads the accept
 * rings of a closed listener, whose memory the worker gives back. False: the listener was
 * closed already (EBADF, as an accept that starts after the close). */
static bool dps_accept_enter(struct dps_file *l)
{
	pthread_mutex_lock(&l->rx_lock);
	bool open = !l->listen_closed;
	if (open)
		l->accepting++;
	pthread_mutex_unlock(&l->rx_lock);
	return open;
}

static void dps_accept_leave(struct dps_file *l)
{
	pthread_mutex_lock(&l->rx_lock);
	bool last = --l->accepting == 0 && l->listen_closed;
	pthread_mutex_unlock(&l->rx_lock);
	if (last)
		dps_file_close_socks(l);
}

/* The close of a listener: true when accepts are in progress, the last of which closes
 * its sockets. */
static bool dps_listen_close_deferred(struct dps_file *l)
{
	pthread_mutex_lock(&l->rx_lock);
	l->listen_closed = true;
	bool busy = l->accepting > 0;
	pthread_mutex_unlock(&l->rx_lock);
	return busy;
}

int dps_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct dps_file *l = dps_file_get(fd);
	if (l == NULL)
		return DPS_FAIL(EBADF);
	int rc;
	struct dps_file *f = NULL;
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		rc = -EINVAL;
	else if (l->kind != DPS_LISTEN)
		rc = l->kind == DPS_UDP ? -EOPNOTSUPP : l->kind == DPS_EPOLL ? -ENOTSOCK : -EINVAL;
	else if (!dps_accept_enter(l))
		rc = -EBADF;
	else {
		for (;;) {
			if (dps_attach_dead(l->at)) {
				rc = -EINVAL; /* the listener is gone with its daemon */
				break;
			}
			rc = dps_accept_one(l, flags, &f);
			if (rc != -EAGAIN)
				break;
			if (atomic_load(&l->flags) & O_NONBLOCK) {
				dps_attach_check_lazy(l->at);
				break;
			}
			rc = dps_wait(l, EPOLLIN, l->rcvtimeo_ms);
			if (rc < 0) {
				rc = rc == -ENOTCONN ? -EINVAL : rc;
				break;
			}
		}
		dps_accept_leave(l);
	}
	if (rc == 0 && addr != NULL) {
		/* An address that cannot be written costs the connection, as on Linux. */
		struct dps_ep peer = dps_sock_ep(dps_sock(f->at, f->socks[0]), true);
		rc = dps_ep_put(f, &peer, addr, len);
		if (rc < 0)
			dps_close(f->fd);
	}
	if (rc == 0)
		rc = f->fd;
	dps_file_put(l);
	return rc < 0 ? DPS_FAIL(-rc) : rc;
}

int dps_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return dps_accept4(fd, addr, len, 0);
}

/* The outcome of a connect that has been started: 0, -EINPROGRESS/-EALREADY, or the error
 * (taken, as a read of SO_ERROR would). */
static int dps_connect_result(struct dps_file *f)
{
	struct chan_sock *ss = dps_sock(f->at, f->socks[0]);
	uint32_t st = dps_sock_state(f);
	uint32_t err = atomic_exchange(&ss->error, 0);
	if (err != 0)
		return -(int)err;
	if (st & CHAN_SS_CONNECTED)
		return 0;
	if (st & CHAN_SS_HUP)
		return -ECONNREFUSED;
	return -EALREADY;
}

static int dps_connect_tcp(struct dps_file *f, const struct dps_ep *to)
{
	if (f->nsocks > 0) {
		uint32_t st = dps_sock_state(f);
		if (st & CHAN_SS_CONNECTED) {
			/* Linux: the first connect(2) after a non-blocking one completed reports
			 * the success; later ones EISCONN. */
			if (f->connect_pending) {
				f->connect_pending = false;
				return 0;
			}
			return -EISCONN;
		}
		if (st & CHAN_SS_HUP) {
			/* The attempt failed: its error once (unless SO_ERROR took it), then
			 * ECONNABORTED, as Linux. */
			f->connect_pending = false;
			uint32_t err = atomic_exchange(&dps_sock(f->at, f->socks[0])->error, 0);
			return err != 0 ? -(int)err : -ECONNABORTED;
		}
		if (atomic_load(&f->flags) & O_NONBLOCK)
			return -EALREADY;
	} else {
		/* One scope: the peer's when it is link-local, else the bound address's. */
		struct chan_req rq = {.op = CHAN_OP_CONNECT, .laddr = f->local.addr,
				      .lport = f->local.port, .raddr = to->addr,
				      .rport = to->port, .opts = f->opts,
				      .scope = to->scope != 0 ? to->scope : f->local.scope,
				      .flags = f->v6only ? CHAN_BIND_V6ONLY : 0};
		struct chan_reply rep;
		int rc = dps_call_new_sock(f, &rq, &rep);
		if (rc < 0)
			return rc;
		dps_unbind(f);
		if (atomic_load(&f->flags) & O_NONBLOCK) {
			/* Linux reports the outcome only later, in SO_ERROR, even when the
			 * handshake (or its refusal) was quicker than this call. */
			f->connect_pending = true;
			return -EINPROGRESS;
		}
	}
	int rc = dps_wait(f, EPOLLOUT, f->sndtimeo_ms);
	if (rc == -EAGAIN)
		return -EINPROGRESS; /* Linux, when SO_SNDTIMEO ends a blocking connect */
	if (rc < 0)
		return rc;
	f->connect_pending = false;
	return dps_connect_result(f);
}

static int dps_connect_udp(struct dps_file *f, const struct sockaddr *addr, socklen_t len)
{
	struct chan_req rq = {.op = CHAN_OP_UDP_CONNECT};
	if (len >= sizeof(sa_family_t) && addr->sa_family == AF_UNSPEC) {
		rq.raddr = inet_addr_any(false); /* dissolve the association */
	} else {
		struct dps_ep ep;
		int rc = dps_ep_in(f->family, addr, len, &ep);
		if (rc < 0)
			return rc;
		rq.raddr = ep.addr;
		rq.rport = ep.port;
		rq.scope = ep.scope;
	}
	int rc = dps_udp_ensure_open(f);
	if (rc < 0)
		return rc;
	rq.sock = f->socks[0];
	struct chan_reply rep;
	return dps_call(f->at, chan_sock_worker(&f->at->lay, rq.sock), &rq, &rep);
}

static int dps_connect_file(struct dps_file *f, const struct sockaddr *addr, socklen_t len)
{
	struct dps_ep to;
	if (f->kind == DPS_UDP)
		return dps_connect_udp(f, addr, len);
	if (f->kind == DPS_LISTEN)
		return -EISCONN;
	if (f->kind == DPS_EPOLL)
		return -ENOTSOCK;
	int rc = dps_ep_in(f->family, addr, len, &to);
	if (rc < 0)
		return rc;
	/* tcp_v6_connect: an IPv6-only socket has no route to an IPv4 peer. */
	if (f->family == AF_INET6 && f->v6only && inet_addr_is_v4(&to.addr))
		return -ENETUNREACH;
	return dps_connect_tcp(f, &to);
}

int dps_connect(int fd, const struct sockaddr *uaddr, socklen_t len)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	struct sockaddr_storage k;
	int rc = dps_addr_in(uaddr, len, &k); /* first, as __sys_connect */
	if (rc == 0)
		rc = dps_connect_file(f, (struct sockaddr *)&k, len);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

int dps_shutdown(int fd, int how)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = 0;
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		rc = -EINVAL;
	else if (f->kind == DPS_EPOLL)
		rc = -ENOTSOCK;
	else if (f->kind != DPS_TCP || f->nsocks == 0 ||
		 !(atomic_load(&dps_sock(f->at, f->socks[0])->state) & CHAN_SS_CONNECTED))
		rc = -ENOTCONN;
	else {
		if (how != SHUT_WR)
			f->shut_rd = true;
		if (how != SHUT_RD)
			f->shut_wr = true;
		rc = dps_cmd(f->at, f->socks[0], CHAN_CMD_SHUTDOWN, (uint32_t)how);
	}
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

void dps_file_close_socks(struct dps_file *f)
{
	if (f->at == NULL || dps_attach_dead(f->at))
		return;
	for (unsigned i = 0; i < f->nsocks; i++)
		dps_cmd(f->at, f->socks[i], CHAN_CMD_CLOSE, 0);
	/* Bound, never listened nor connected: the port is free again. */
	dps_unbind(f);
}

/* Closes the stack side of fd; the number stays open (keep_fd) for whatever the caller has
 * put there, or is closed with it. */
static int dps_close_file(int fd, bool keep_fd)
{
	struct dps_file *f = dps_file_remove(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	/* This number goes now; the file's first number is closed by its last reference. */
	bool first = fd == f->fd;
	if (first && (keep_fd || atomic_load(&f->nfds) > 1))
		f->fd = -1;
	if ((!first || f->fd < 0) && !keep_fd)
		close(fd);
	if (atomic_fetch_sub(&f->nfds, 1) > 1) {
		/* Another number still names the socket (dup): it stays open. */
		dps_file_put(f);
		return 0;
	}
	if (f->kind != DPS_LISTEN || !dps_listen_close_deferred(f))
		dps_file_close_socks(f);
	dps_epoll_forget(f);
	dps_file_put(f);
	return 0;
}

int dps_close(int fd)
{
	return dps_close_file(fd, false);
}

int dps_release_fd(int fd)
{
	return dps_close_file(fd, true);
}

int dps_release_to_kernel(int fd)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	dps_epoll_hand_over(f, fd);
	dps_file_put(f);
	return dps_close_file(fd, true);
}

int dps_dup(int oldfd, int newfd, int minfd)
{
	struct dps_file *f = dps_file_get(oldfd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	if (newfd == oldfd) {
		dps_file_put(f);
		return newfd;
	}
	/* A kernel duplicate of the old number's placeholder (or epoll instance) holds the new
	 * number, as the first one does. By system call: the preload shim's fcntl and dup3
	 * would send a stack file back here. */
	int n;
	if (newfd < 0) {
		n = (int)syscall(SYS_fcntl, oldfd, F_DUPFD_CLOEXEC, minfd);
	} else {
		if (dps_is_stack_fd(newfd))
			dps_close_file(newfd, true);
		n = (int)syscall(SYS_dup3, oldfd, newfd, O_CLOEXEC);
	}
	if (n < 0) {
		int e = errno;
		dps_file_put(f);
		return DPS_FAIL(e);
	}
	atomic_fetch_add(&f->nfds, 1);
	int rc = dps_file_install_at(f, n);
	if (rc < 0) {
		atomic_fetch_sub(&f->nfds, 1);
		close(n);
	}
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : n;
}

static int dps_name(int fd, struct sockaddr *addr, socklen_t *len, bool peer)
{
	struct dps_file *f = dps_file_get(fd);
	if (f == NULL)
		return DPS_FAIL(EBADF);
	int rc = 0;
	struct dps_ep ep;
	if (f->kind == DPS_EPOLL) {
		rc = -ENOTSOCK;
	} else if (peer) {
		struct chan_sock *ss = f->nsocks > 0 && f->kind != DPS_LISTEN
					       ? dps_sock(f->at, f->socks[0]) : NULL;
		if (ss == NULL || ss->rport == 0 ||
		    (f->kind == DPS_TCP && !(atomic_load(&ss->state) & CHAN_SS_CONNECTED)))
			rc = -ENOTCONN;
		else
			ep = dps_sock_ep(ss, true);
	} else if (f->nsocks > 0) {
		ep = dps_sock_ep(dps_sock(f->at, f->socks[0]), false);
	} else {
		ep = f->bound ? f->local : dps_ep_any(f->family);
	}
	if (rc == 0)
		rc = dps_ep_put(f, &ep, addr, len);
	dps_file_put(f);
	return rc < 0 ? DPS_FAIL(-rc) : 0;
}

int dps_getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	return dps_name(fd, addr, len, false);
}

int dps_getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	return dps_name(fd, addr, len, true);
}
