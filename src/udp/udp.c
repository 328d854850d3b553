/* UDP sockets (RFC 768, RFC 1122 §4.1): the per-worker tables (rte_hash: 4-tuple → connected
 * socket, (address, port) → bound socket), binding with Linux's rules, connect, receive from
 * the FIFO, and owner notification. Input is in udp_input.c, output in udp_output.c. */
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_random.h>

#include "stack/steer.h"
#include "udp_priv.h"

struct udp_conn_key {
	uint32_t laddr;
	uint32_t raddr;
	uint16_t lport;
	uint16_t rport;
};

struct udp_bind_key {
	uint32_t laddr;
	uint16_t lport;
	uint16_t zero;
};

static struct rte_hash *udp_hash_create(const char *what, unsigned id, uint32_t key_len)
{
	char name[RTE_HASH_NAMESIZE];
	snprintf(name, sizeof(name), "udp_%s_w%u", what, id);
	struct rte_hash_parameters p = {
		.name = name,
		.entries = UDP_SOCK_MAX,
		.key_len = key_len,
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
		/* Every socket must find room, whatever its key hashes to. */
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	return rte_hash_create(&p);
}

static void udp_stack_fini(struct stack *s);

static int udp_stack_init(struct stack *s, const struct stack_params *p)
{
	struct udp_stack *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	s->udp = t;
	TAILQ_INIT(&t->all);
	TAILQ_INIT(&t->notify_q);
	t->conns = udp_hash_create("conns", s->id, sizeof(struct udp_conn_key));
	t->binds = udp_hash_create("binds", s->id, sizeof(struct udp_bind_key));
	if (t->conns == NULL || t->binds == NULL) {
		udp_stack_fini(s);
		return -ENOMEM;
	}
	/* RFC 6056 §3.3.1's simple random start; the search is sequential from there. */
	t->next_ephemeral = (uint16_t)(UDP_EPHEMERAL_LO +
				       rte_rand_max(UDP_EPHEMERAL_HI - UDP_EPHEMERAL_LO + 1));
	return 0;
}

static void udp_sock_free(struct udp_sock *u);

static void udp_stack_fini(struct stack *s)
{
	struct udp_stack *t = s->udp;
	if (t == NULL)
		return;
	struct udp_sock *u;
	while ((u = TAILQ_FIRST(&t->all)) != NULL)
		udp_sock_free(u);
	rte_hash_free(t->conns);
	rte_hash_free(t->binds);
	free(t);
	s->udp = NULL;
}

/* --- tables --- */

struct udp_sock *udp_lookup_conn(struct stack *s, uint32_t laddr, uint16_t lport,
				 uint32_t raddr, uint16_t rport)
{
	struct udp_conn_key k = {.laddr = laddr, .raddr = raddr, .lport = lport, .rport = rport};
	void *data;
	return rte_hash_lookup_data(s->udp->conns, &k, &data) >= 0 ? data : NULL;
}

struct udp_sock *udp_lookup_bind(struct stack *s, uint32_t laddr, uint16_t lport)
{
	struct udp_bind_key k = {.laddr = laddr, .lport = lport};
	void *data;
	return rte_hash_lookup_data(s->udp->binds, &k, &data) >= 0 ? data : NULL;
}

static void udp_conn_key_of(const struct udp_sock *u, struct udp_conn_key *k)
{
	*k = (struct udp_conn_key){.laddr = inet_addr_to_v4(&u->sk.laddr),
				   .raddr = inet_addr_to_v4(&u->sk.raddr),
				   .lport = u->sk.lport, .rport = u->sk.rport};
}

/* The bind table's entry for u's bound address: taken (if free) or given up. */
static void udp_hold_bind(struct udp_sock *u, bool hold)
{
	struct udp_bind_key k = {.laddr = u->bound_laddr, .lport = u->sk.lport};
	if (hold && !(u->flags & UDPF_IN_BINDS) && udp_lookup_bind(u->s, k.laddr, k.lport) == NULL &&
	    rte_hash_add_key_data(u->s->udp->binds, &k, u) >= 0)
		u->flags |= UDPF_IN_BINDS;
	else if (!hold && (u->flags & UDPF_IN_BINDS)) {
		rte_hash_del_key(u->s->udp->binds, &k);
		u->flags &= ~UDPF_IN_BINDS;
	}
}

static void udp_unconnect(struct udp_sock *u)
{
	if (u->flags & UDPF_CONNECTED) {
		struct udp_conn_key k;
		udp_conn_key_of(u, &k);
		rte_hash_del_key(u->s->udp->conns, &k);
		u->flags &= ~UDPF_CONNECTED;
		if (u->flags & UDPF_REUSEADDR)
			udp_hold_bind(u, true);
	}
	u->sk.raddr = inet_addr_v4(0);
	u->sk.rport = 0;
	u->sk.laddr = inet_addr_v4(u->bound_laddr);
}

/* Linux's bind conflict rule without SO_REUSEADDR: the wildcard address conflicts with every
 * address on the same port, a specific address with itself and with the wildcard. */
static bool udp_port_taken(struct stack *s, uint32_t laddr, uint16_t lport)
{
	if (laddr == 0)
		return s->udp->port_binds[lport] != 0;
	return udp_lookup_bind(s, laddr, lport) != NULL || udp_lookup_bind(s, 0, lport) != NULL;
}

/* With SO_REUSEADDR only an unconnected socket without it, or one at the same address, is
 * in the way (Linux: both sockets must have the option). */
static bool udp_reuse_taken(struct stack *s, uint32_t laddr, uint16_t lport)
{
	const struct udp_sock *same = udp_lookup_bind(s, laddr, lport);
	if (same != NULL)
		return true;
	const struct udp_sock *wild = laddr != 0 ? udp_lookup_bind(s, 0, lport) : NULL;
	return wild != NULL && !(wild->flags & UDPF_REUSEADDR);
}

/* With several workers, datagrams to a port reach the worker that owns it (steer.h). */
static bool udp_port_is_ours(const struct stack *s, uint16_t lport)
{
	return s->steer == NULL || steer_udp_owner(s->steer, lport) == s->id;
}

static int udp_pick_port(struct stack *s, uint32_t laddr, uint16_t *lport)
{
	struct udp_stack *t = s->udp;
	const unsigned range = UDP_EPHEMERAL_HI - UDP_EPHEMERAL_LO + 1;
	for (unsigned i = 0; i < range; i++) {
		uint16_t p = t->next_ephemeral;
		t->next_ephemeral = p == UDP_EPHEMERAL_HI ? UDP_EPHEMERAL_LO : (uint16_t)(p + 1);
		if (udp_port_is_ours(s, p) && !udp_port_taken(s, laddr, p)) {
			*lport = p;
			return 0;
		}
	}
	return -EADDRINUSE;
}

/* An address a socket may bind: one of ours, a connected subnet's broadcast address or the
 * limited broadcast (Linux allows binding to those to receive broadcasts). */
static bool udp_addr_bindable(struct stack *s, uint32_t laddr)
{
	if (laddr == 0 || ip4_is_limited_broadcast(laddr))
		return true;
	const struct route *r = route_lookup4(s->cfg.routes, laddr);
	return r != NULL && (r->type == ROUTE_LOCAL || r->type == ROUTE_BROADCAST) &&
	       inet_addr_to_v4(&r->prefix) == laddr && r->plen == 32;
}

static uint32_t udp_rcvbuf(uint32_t bytes)
{
	if (bytes == 0)
		return UDP_RCVBUF_DEFAULT;
	return bytes > UDP_RCVBUF_MAX ? UDP_RCVBUF_MAX : bytes;
}

int udp_bind(struct stack *s, uint32_t laddr, uint16_t lport, uint32_t rcvbuf, unsigned flags,
	     const struct sock_owner *owner, struct udp_sock **out)
{
	struct udp_stack *t = s->udp;
	if (out == NULL)
		return -EINVAL;
	if (!udp_addr_bindable(s, laddr))
		return -EADDRNOTAVAIL;
	if (lport == 0) {
		int rc = udp_pick_port(s, laddr, &lport);
		if (rc < 0)
			return rc;
	} else if (!udp_port_is_ours(s, lport)) {
		return -EXDEV;
	} else if ((flags & UDP_BIND_REUSEADDR) ? udp_reuse_taken(s, laddr, lport)
						   : udp_port_taken(s, laddr, lport)) {
		return -EADDRINUSE;
	}
	if (t->nsocks >= UDP_SOCK_MAX)
		return -ENOBUFS;
	struct udp_sock *u = calloc(1, sizeof(*u));
	if (u == NULL)
		return -ENOMEM;
	u->s = s;
	u->sk.proto = IPPROTO_UDP;
	u->sk.laddr = inet_addr_v4(laddr);
	u->sk.lport = lport;
	u->bound_laddr = laddr;
	u->flags = UDPF_IN_BINDS | ((flags & UDP_BIND_REUSEADDR) ? UDPF_REUSEADDR : 0);
	if (owner != NULL) {
		u->sk.owner = *owner;
		u->sk.mem = owner->mem;
	}
	u->sk.rx = sock_fifo_alloc(u->sk.mem, udp_rcvbuf(rcvbuf), FIFO_SIZE_MIN);
	struct udp_bind_key k = {.laddr = laddr, .lport = lport};
	int rc = u->sk.rx == NULL ? -ENOMEM : rte_hash_add_key_data(t->binds, &k, u);
	if (rc < 0) {
		sock_fifo_free(u->sk.mem, u->sk.rx);
		free(u);
		return rc == -ENOSPC ? -ENOBUFS : rc;
	}
	t->port_binds[lport]++;
	t->nsocks++;
	TAILQ_INSERT_TAIL(&t->all, u, all_link);
	*out = u;
	return 0;
}

int udp_connect(struct udp_sock *u, uint32_t raddr, uint16_t rport)
{
	struct stack *s = u->s;
	if (raddr == 0) {
		udp_unconnect(u);
		return 0;
	}
	if (rport == 0)
		return -EINVAL;
	/* The local address comes from the route (RFC 1122 §4.1.3.4 for the source of a
	 * wildcard-bound socket), as Linux's ip4_datagram_connect. */
	uint32_t laddr = u->bound_laddr;
	const struct route *r = route_lookup4(s->cfg.routes, raddr);
	bool bcast = ip4_is_limited_broadcast(raddr) || (r != NULL && r->type == ROUTE_BROADCAST);
	if (bcast && !(u->flags & UDPF_BROADCAST))
		return -EACCES;
	/* The limited broadcast leaves by the route that covers it, like any address. */
	if (r == NULL || r->type == ROUTE_BLACKHOLE)
		return -ENETUNREACH;
	if (r->type == ROUTE_UNREACHABLE)
		return -EHOSTUNREACH;
	if (laddr == 0)
		laddr = netcfg_route_source4(&s->cfg, r, raddr);
	if (laddr == 0)
		return -EADDRNOTAVAIL;

	struct udp_sock *other = udp_lookup_conn(s, laddr, u->sk.lport, raddr, rport);
	if (other != NULL && other != u)
		return -EADDRINUSE; /* two sockets with one 4-tuple: not without SO_REUSEADDR */
	udp_unconnect(u);
	u->sk.laddr = inet_addr_v4(laddr);
	u->sk.raddr = inet_addr_v4(raddr);
	u->sk.rport = rport;
	struct udp_conn_key k;
	udp_conn_key_of(u, &k);
	int rc = rte_hash_add_key_data(s->udp->conns, &k, u);
	if (rc < 0) {
		udp_unconnect(u);
		return rc == -ENOSPC ? -ENOBUFS : rc;
	}
	u->flags |= UDPF_CONNECTED;
	if (u->flags & UDPF_REUSEADDR)
		udp_hold_bind(u, false);
	return 0;
}

void udp_set_broadcast(struct udp_sock *u, bool on)
{
	if (on)
		u->flags |= UDPF_BROADCAST;
	else
		u->flags &= ~UDPF_BROADCAST;
}

void udp_set_ip_opts(struct udp_sock *u, const struct sock_ip_opts *ip)
{
	u->ip = *ip;
}

const struct sock_ip_opts *udp_get_ip_opts(const struct udp_sock *u)
{
	return &u->ip;
}

static void udp_sock_free(struct udp_sock *u)
{
	struct udp_stack *t = u->s->udp;
	u->flags &= ~UDPF_REUSEADDR; /* closing: no taking the bind entry back */
	udp_unconnect(u);
	udp_hold_bind(u, false);
	t->port_binds[u->sk.lport]--;
	if (u->flags & UDPF_NOTIFY_Q)
		TAILQ_REMOVE(&t->notify_q, u, notify_link);
	TAILQ_REMOVE(&t->all, u, all_link);
	t->nsocks--;
	sock_fifo_free(u->sk.mem, u->sk.rx);
	free(u);
}

void udp_close(struct udp_sock *u)
{
	if (u != NULL)
		udp_sock_free(u);
}

struct sock *udp_sock(struct udp_sock *u)
{
	return &u->sk;
}

ssize_t udp_recvmsg(struct udp_sock *u, void *buf, size_t len, struct udp_rx_hdr *hdr,
		    bool *trunc)
{
	/* Linux's __skb_recv_udp reports a pending error before queued data. */
	if (u->sk.error != 0) {
		int err = u->sk.error;
		u->sk.error = 0;
		return -err;
	}
	struct fifo *f = u->sk.rx;
	uint32_t used = fifo_used(f);
	struct udp_rx_hdr h;
	if (used < sizeof(h))
		return -EAGAIN;
	fifo_peek(f, 0, &h, sizeof(h));
	if (h.len > used - sizeof(h)) {
		/* Not a record we wrote: nothing after it can be trusted either. */
		fifo_consume(f, used);
		return -EIO;
	}
	uint32_t n = len < h.len ? (uint32_t)len : h.len;
	if (n > 0)
		fifo_peek(f, sizeof(h), buf, n);
	fifo_consume(f, (uint32_t)sizeof(h) + h.len);
	*hdr = h;
	if (trunc != NULL)
		*trunc = n < h.len;
	return n;
}

ssize_t udp_recvfrom(struct udp_sock *u, void *buf, size_t len, uint32_t *raddr,
		     uint16_t *rport, bool *trunc)
{
	struct udp_rx_hdr h;
	ssize_t n = udp_recvmsg(u, buf, len, &h, trunc);
	if (n >= 0 && raddr != NULL)
		*raddr = h.saddr;
	if (n >= 0 && rport != NULL)
		*rport = h.sport;
	return n;
}

void udp_sock_info(const struct udp_sock *u, struct udp_sock_info *out)
{
	*out = (struct udp_sock_info){
		.laddr = inet_addr_to_v4(&u->sk.laddr),
		.raddr = inet_addr_to_v4(&u->sk.raddr),
		.lport = u->sk.lport,
		.rport = u->sk.rport,
		.rx_queued = fifo_used(u->sk.rx),
		.rcvbuf = u->sk.rx->size,
		.broadcast = (u->flags & UDPF_BROADCAST) != 0,
		.error = u->sk.error,
		.datagrams_in = u->datagrams_in,
		.datagrams_out = u->datagrams_out,
		.bytes_in = u->bytes_in,
		.bytes_out = u->bytes_out,
		.rcvbuf_drops = u->rcvbuf_drops,
	};
}

unsigned udp_sock_count(const struct stack *s)
{
	return *(const volatile unsigned *)&s->udp->nsocks;
}

int udp_walk(struct stack *s, int (*fn)(const struct udp_sock *u, void *arg), void *arg)
{
	struct udp_sock *u, *next;
	for (u = TAILQ_FIRST(&s->udp->all); u != NULL; u = next) {
		next = TAILQ_NEXT(u, all_link);
		int rc = fn(u, arg);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* --- owner notification --- */

void udp_notify(struct udp_sock *u, uint32_t events)
{
	if (u->sk.owner.notify == NULL || events == 0)
		return;
	u->pending_events |= events;
	if (!(u->flags & UDPF_NOTIFY_Q)) {
		TAILQ_INSERT_TAIL(&u->s->udp->notify_q, u, notify_link);
		u->flags |= UDPF_NOTIFY_Q;
	}
}

void udp_deliver_events(struct stack *s)
{
	struct udp_stack *t = s->udp;
	if (t->depth != 0)
		return; /* the outermost delivery or send runs the queue */
	t->depth++;
	struct udp_sock *u;
	while ((u = TAILQ_FIRST(&t->notify_q)) != NULL) {
		TAILQ_REMOVE(&t->notify_q, u, notify_link);
		u->flags &= ~UDPF_NOTIFY_Q;
		uint32_t ev = u->pending_events;
		u->pending_events = 0;
		/* The owner may send (queueing more events, run by this loop) or close u. */
		sock_notify(&u->sk, ev);
	}
	t->depth--;
}

const struct stack_proto udp_proto = {
	.name = "udp",
	.init = udp_stack_init,
	.fini = udp_stack_fini,
	.ip_proto = IP4_PROTO_UDP,
	.l4_input = udp_input,
	.ip4_icmp_error = udp_icmp_error,
};
