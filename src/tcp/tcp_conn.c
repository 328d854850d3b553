/* TCP connection blocks: allocation, the per-worker tables (rte_hash: 4-tuple → connection,
 * (address, port) → listener), state changes, and the calls a socket owner makes (tcp.h). */
#include <assert.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_hash.h>
#include <rte_jhash.h>

#include "tcp_priv.h"

/* rte_hash refuses fewer entries than a bucket holds (RTE_HASH_BUCKET_ENTRIES, private to
 * lib/hash/rte_cuckoo_hash.h). */
#define TCP_HASH_MIN_ENTRIES 8u

/* Both families in one table, IPv4 as mapped addresses (inet_addr.h): 36 bytes, no
 * padding for rte_hash to read. */
struct tcp_key {
	struct inet_addr laddr;
	struct inet_addr raddr;
	uint16_t lport;
	uint16_t rport;
};

/* Key of the listener table; a family's wildcard (inet_addr_any) listens on every address
 * of that family, :: on IPv4's too unless v6only. */
struct tcp_listen_key {
	struct inet_addr laddr;
	uint16_t lport;
	uint16_t zero;
};

static const char *const tcp_state_names[] = {
#define TCP_STATE_NAME(id, name) [TCP_##id] = name,
	TCP_STATE_LIST(TCP_STATE_NAME)
#undef TCP_STATE_NAME
};

const char *tcp_state_name(enum tcp_state st)
{
	return st < TCP_STATE_COUNT ? tcp_state_names[st] : "?";
}

void tcp_sockopts_default(struct tcp_sockopts *o)
{
	/* Linux's tcp_rmem/tcp_wmem maxima are 6 MB and 4 MB after autotuning; a fixed 256 KB
	 * fills a LAN path and the FIFO pages are only touched when used. */
	*o = (struct tcp_sockopts){
		.rcvbuf = 256 * 1024,
		.sndbuf = 256 * 1024,
		.keep_idle_ms = 7200 * 1000,  /* RFC 1122 §4.2.3.6: at least two hours */
		.keep_intvl_ms = 75 * 1000,
		.keep_cnt = 9,
		.scope = UINT16_MAX, /* NETCFG_PORT_ANY */
	};
}

/* extra_flag RTE_HASH_EXTRA_FLAGS_EXT_TABLE: chained buckets beside the cuckoo ones, so an
 * insertion fails only when all entries are taken (without, the 1024-entry listener table
 * refused its 1013th key): a table's size is then exactly what its directive says. */
static struct rte_hash *tcp_hash_create(const char *what, unsigned id, uint32_t entries,
					uint32_t key_len, uint8_t extra_flag)
{
	char name[RTE_HASH_NAMESIZE];
	snprintf(name, sizeof(name), "tcp_%s_w%u", what, id);
	struct rte_hash_parameters p = {
		.name = name,
		.entries = entries,
		.key_len = key_len,
		.hash_func = rte_jhash,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = extra_flag,
	};
	return rte_hash_create(&p);
}

static void tcp_stack_fini(struct stack *s);

static int tcp_stack_init(struct stack *s, const struct stack_params *p)
{
	uint32_t listen_max = p->tcp_listen_max, conn_max = p->tcp_conn_max;
	if (listen_max == 0 || listen_max > TCP_LISTEN_MAX_LIMIT || conn_max < TCP_CONN_MAX_MIN ||
	    conn_max > TCP_CONN_MAX_LIMIT)
		return -EINVAL;
	struct tcp_stack *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	s->tcp = t;
	TAILQ_INIT(&t->all);
	TAILQ_INIT(&t->reap);
	TAILQ_INIT(&t->notify_q);
	t->conns = tcp_hash_create("conns", s->id, conn_max, sizeof(struct tcp_key),
				   RTE_HASH_EXTRA_FLAGS_EXT_TABLE);
	t->conn_max = conn_max;
	/* listen_used bounds it; rte_hash wants at least a bucket's worth of entries. */
	t->listeners = tcp_hash_create("listen", s->id, RTE_MAX(listen_max, TCP_HASH_MIN_ENTRIES),
				       sizeof(struct tcp_listen_key), RTE_HASH_EXTRA_FLAGS_EXT_TABLE);
	t->listen_max = listen_max;
	t->timers = timer_wheel_create(s->now_ms);
	if (t->conns == NULL || t->listeners == NULL || t->timers == NULL) {
		tcp_stack_fini(s);
		return -ENOMEM;
	}
	int rc = tcp_secret_init_random(&t->secret);
	if (rc < 0) {
		tcp_stack_fini(s);
		return rc;
	}
	tcp_params_default(&t->params);
	t->next_ephemeral = (uint16_t)(TCP_EPHEMERAL_LO + t->secret.isn_key.k0 %
				       (TCP_EPHEMERAL_HI - TCP_EPHEMERAL_LO + 1));
	return 0;
}

static void tcp_stack_fini(struct stack *s)
{
	struct tcp_stack *t = s->tcp;
	if (t == NULL)
		return;
	struct tcp_conn *c;
	while ((c = TAILQ_FIRST(&t->all)) != NULL)
		tcp_conn_free(c);
	tcp_reap(s);
	rte_hash_free(t->conns);
	rte_hash_free(t->listeners);
	timer_wheel_destroy(t->timers);
	free(t);
	s->tcp = NULL;
}

/* The last lent mbuf of a connection was freed: the count says it, nothing to do. */
static void tcp_lent_returned(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

struct tcp_conn *tcp_conn_alloc(struct stack *s, const struct tcp_sockopts *opts)
{
	struct tcp_conn *c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->s = s;
	c->sk.proto = IPPROTO_TCP;
	c->sk.scope = NETCFG_PORT_ANY;
	c->opts = *opts;
	c->state = TCP_CLOSED;
	TAILQ_INIT(&c->syn_q);
	TAILQ_INIT(&c->accept_q);
	for (unsigned k = 0; k < TCP_T_COUNT; k++) {
		tw_timer_init(&c->timers[k].tw);
		c->timers[k].kind = (uint8_t)k;
	}
	tcp_ooo_init(&c->ooo);
	tcp_sb_init(&c->sb);
	c->lent.free_cb = tcp_lent_returned;
	rte_mbuf_ext_refcnt_set(&c->lent, 0);
	c->rto_ms = TCP_RTO_INIT_MS;
	c->snd_mss = TCP_MSS_DEFAULT;
	tcp_cc_init(&c->cc, opts->cc != NULL ? opts->cc : tcp_cc_default(), c->snd_mss);
	TAILQ_INSERT_TAIL(&s->tcp->all, c, all_link);
	s->tcp->nconns++;
	return c;
}

unsigned tcp_conn_count(const struct stack *s)
{
	return *(const volatile unsigned *)&s->tcp->nconns;
}

unsigned tcp_estab_count(const struct stack *s)
{
	return *(const volatile unsigned *)&s->tcp->curr_estab;
}

uint32_t tcp_listen_capacity(const struct stack *s)
{
	return s->tcp->listen_max;
}

uint32_t tcp_conn_capacity(const struct stack *s)
{
	return s->tcp->conn_max;
}

uint32_t tcp_conn_used(const struct stack *s)
{
	return *(const volatile uint32_t *)&s->tcp->conn_used;
}

uint32_t tcp_listen_used(const struct stack *s)
{
	return *(const volatile uint32_t *)&s->tcp->listen_used;
}

int tcp_conn_buffers_alloc(struct tcp_conn *c)
{
	if (c->sk.rx == NULL)
		c->sk.rx = sock_fifo_alloc(c->sk.mem, c->opts.rcvbuf, 4096);
	if (c->sk.tx == NULL)
		c->sk.tx = sock_fifo_alloc(c->sk.mem, c->opts.sndbuf, 4096);
	if (c->sm.r == NULL && tcp_sm_init(&c->sm) < 0)
		return -ENOMEM;
	return c->sk.rx != NULL && c->sk.tx != NULL ? 0 : -ENOMEM;
}

void tcp_conn_buffers_free(struct tcp_conn *c)
{
	/* Lent segments still queued would point into the freed FIFO: they go first, lost as
	 * a wire loses what an aborting sender sent last (only an abort frees a send FIFO
	 * with bytes unacknowledged). None is being delivered now: a connection never lends
	 * to itself (tcp_send_segment), and delivering to another frees none of ours. */
	if (rte_mbuf_ext_refcnt_read(&c->lent) != 0)
		stack_loopback_forget(c->s, &c->lent);
	assert(rte_mbuf_ext_refcnt_read(&c->lent) == 0);
	sock_fifo_free(c->sk.mem, c->sk.rx);
	sock_fifo_free(c->sk.mem, c->sk.tx);
	c->sk.rx = NULL;
	c->sk.tx = NULL;
	tcp_sm_fini(&c->sm);
}

static void tcp_key_of(const struct tcp_conn *c, struct tcp_key *k)
{
	*k = (struct tcp_key){.laddr = c->sk.laddr, .raddr = c->sk.raddr,
			      .lport = c->sk.lport, .rport = c->sk.rport};
}

int tcp_conn_insert(struct tcp_conn *c)
{
	int rc;
	if (c->state == TCP_LISTEN) {
		struct tcp_listen_key lk = {.laddr = c->sk.laddr, .lport = c->sk.lport};
		void *data;
		if (rte_hash_lookup_data(c->s->tcp->listeners, &lk, &data) >= 0) {
			struct tcp_conn *first = data;
			if (!tcp_reuseport_shares(&first->opts, &c->opts))
				return -EADDRINUSE;
			c->reuse_next = first->reuse_next;
			first->reuse_next = c;
			rc = 0;
		} else if (c->s->tcp->listen_used == c->s->tcp->listen_max) {
			stack_count(c->s, STACK_EV_TCP_LISTEN_TABLE_FULL);
			rc = -ENOBUFS;
		} else {
			rc = rte_hash_add_key_data(c->s->tcp->listeners, &lk, c);
			c->s->tcp->listen_used += rc == 0;
		}
	} else {
		struct tcp_key k;
		tcp_key_of(c, &k);
		if (c->s->tcp->conn_used == c->s->tcp->conn_max) {
			stack_count(c->s, STACK_EV_TCP_CONN_TABLE_FULL);
			rc = -ENOBUFS;
		} else {
			rc = rte_hash_add_key_data(c->s->tcp->conns, &k, c);
			c->s->tcp->conn_used += rc == 0;
		}
	}
	if (rc == 0)
		c->flags |= TCPF_IN_TABLE;
	return rc;
}

static void tcp_conn_unhash(struct tcp_conn *c)
{
	if (!(c->flags & TCPF_IN_TABLE))
		return;
	if (c->state == TCP_LISTEN) {
		struct tcp_listen_key lk = {.laddr = c->sk.laddr, .lport = c->sk.lport};
		void *data;
		struct tcp_conn *first = rte_hash_lookup_data(c->s->tcp->listeners, &lk, &data) >= 0
						 ? data : NULL;
		if (first == c && c->reuse_next != NULL)
			rte_hash_add_key_data(c->s->tcp->listeners, &lk, c->reuse_next); /* replaces */
		else if (first == c && rte_hash_del_key(c->s->tcp->listeners, &lk) >= 0)
			c->s->tcp->listen_used--;
		for (struct tcp_conn *prev = first; prev != NULL && prev != c; prev = prev->reuse_next)
			if (prev->reuse_next == c) {
				prev->reuse_next = c->reuse_next;
				break;
			}
		c->reuse_next = NULL;
	} else {
		struct tcp_key k;
		tcp_key_of(c, &k);
		if (rte_hash_del_key(c->s->tcp->conns, &k) >= 0)
			c->s->tcp->conn_used--;
	}
	c->flags &= ~TCPF_IN_TABLE;
}

struct tcp_conn *tcp_conn_lookup(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
				 const struct inet_addr *raddr, uint16_t rport)
{
	struct tcp_key k = {.laddr = *laddr, .raddr = *raddr, .lport = lport, .rport = rport};
	void *data;
	return rte_hash_lookup_data(s->tcp->conns, &k, &data) >= 0 ? data : NULL;
}

static struct tcp_conn *tcp_listener_exact(struct stack *s, const struct inet_addr *laddr,
					   uint16_t lport)
{
	struct tcp_listen_key k = {.laddr = *laddr, .lport = lport};
	void *data;
	return rte_hash_lookup_data(s->tcp->listeners, &k, &data) >= 0 ? data : NULL;
}

struct tcp_conn *tcp_listener_lookup(struct stack *s, const struct inet_addr *laddr,
				     uint16_t lport)
{
	/* Linux's order: the address itself, then its family's wildcard, then, for IPv4, a
	 * dual-stack listener on :: (RFC 3493 §3.7: it takes IPv4 as mapped peers). */
	struct tcp_conn *l = tcp_listener_exact(s, laddr, lport);
	if (l != NULL || inet_addr_is_any(laddr))
		return l;
	bool v4 = inet_addr_is_v4(laddr);
	struct inet_addr fam_any = inet_addr_any(!v4), all = inet_addr_any(true);
	l = tcp_listener_exact(s, &fam_any, lport);
	if (l != NULL || !v4)
		return l;
	l = tcp_listener_exact(s, &all, lport);
	return l != NULL && !l->sk.v6only ? l : NULL;
}

bool tcp_reuseport_shares(const struct tcp_sockopts *a, const struct tcp_sockopts *b)
{
	return a->reuseport && b->reuseport && a->reuseport_uid == b->reuseport_uid;
}

struct tcp_conn *tcp_listener_select(struct tcp_conn *l, const struct inet_addr *raddr,
				     uint16_t rport)
{
	if (l->reuse_next == NULL)
		return l;
	unsigned n = 0;
	for (const struct tcp_conn *i = l; i != NULL; i = i->reuse_next)
		n++;
	/* MurmurHash3's finalizer: every input bit moves the high bits that pick, since
	 * Linux clients use only even source ports for connect(). */
	uint32_t words[4];
	memcpy(words, raddr->b, sizeof(words));
	uint32_t h = words[0] ^ words[1] ^ words[2] ^ words[3] ^
		     ((uint32_t)rport << 16 | l->sk.lport);
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	unsigned pick = (unsigned)(((uint64_t)h * n) >> 32);
	while (pick-- != 0)
		l = l->reuse_next;
	return l;
}

/* Frees c now. Children of a listener are reset first: nobody will accept them. */
void tcp_orphan_uncount(struct tcp_conn *c)
{
	if (c->flags & TCPF_ORPHAN_COUNTED) {
		c->flags &= ~TCPF_ORPHAN_COUNTED;
		c->s->tcp->orphans--;
	}
}

void tcp_conn_free(struct tcp_conn *c)
{
	struct stack *s = c->s;
	if (c->flags & TCPF_FREED)
		return;
	tcp_orphan_uncount(c);
	struct tcp_conn *child;
	while ((child = TAILQ_FIRST(&c->syn_q)) != NULL ||
	       (child = TAILQ_FIRST(&c->accept_q)) != NULL) {
		if (child->state != TCP_CLOSED && child->state != TCP_TIME_WAIT)
			tcp_send_rst(child);
		tcp_conn_free(child);
	}
	if (c->parent != NULL) {
		if (c->state == TCP_SYN_RECEIVED) {
			TAILQ_REMOVE(&c->parent->syn_q, c, q_link);
			c->parent->syn_qlen--;
		} else {
			TAILQ_REMOVE(&c->parent->accept_q, c, q_link);
			c->parent->accept_qlen--;
		}
		c->parent = NULL;
	}
	tcp_conn_unhash(c);
	tcp_timers_cancel(c);
	tcp_conn_buffers_free(c);
	if (c->pending_events != 0) {
		TAILQ_REMOVE(&s->tcp->notify_q, c, notify_link);
		c->pending_events = 0;
	}
	if (c->state != TCP_CLOSED)
		tcp_set_state(c, TCP_CLOSED);
	/* The memory goes at the end of the current input or tick (tcp_reap): code up the
	 * call stack, or an owner inside notify, may still hold c. */
	TAILQ_REMOVE(&s->tcp->all, c, all_link);
	TAILQ_INSERT_TAIL(&s->tcp->reap, c, all_link);
	c->flags |= TCPF_FREED;
	s->tcp->nconns--;
}

void tcp_reap(struct stack *s)
{
	struct tcp_conn *c;
	while ((c = TAILQ_FIRST(&s->tcp->reap)) != NULL) {
		TAILQ_REMOVE(&s->tcp->reap, c, all_link);
		free(c);
	}
}

void tcp_set_state(struct tcp_conn *c, enum tcp_state st)
{
	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT)
		c->s->tcp->curr_estab--;
	if (st == TCP_ESTABLISHED || st == TCP_CLOSE_WAIT)
		c->s->tcp->curr_estab++;
	c->state = st;
}

void tcp_conn_done(struct tcp_conn *c, int err)
{
	if (c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT) {
		if (err != 0)
			stack_count(c->s, STACK_EV_TCP_ESTAB_RESETS);
	}
	/* Freed before the state changes: tcp_conn_free finds a child's queue (SYN or accept)
	 * from its state, and a CLOSED SYN-RECEIVED child would be unlinked from the wrong
	 * one. tcp_conn_free also does what follows (CLOSED, timers, tables). A child that
	 * was established stays in the accept queue, dead, as Linux keeps it: accept() hands
	 * it out with what it received and the error (tcp_accept). */
	if (c->flags & TCPF_ORPHAN || (c->parent != NULL && c->state == TCP_SYN_RECEIVED)) {
		tcp_conn_free(c);
		return;
	}
	tcp_set_state(c, TCP_CLOSED);
	tcp_timers_cancel(c);
	tcp_conn_unhash(c);
	if (err != 0 && c->sk.error == 0)
		c->sk.error = err;
	tcp_notify(c, SOCK_EV_HUP | SOCK_EV_IN | SOCK_EV_OUT | SOCK_EV_RDHUP |
			    (err != 0 ? SOCK_EV_ERR : 0));
}

void tcp_conn_enter_time_wait(struct tcp_conn *c)
{
	tcp_set_state(c, TCP_TIME_WAIT);
	tcp_orphan_uncount(c); /* TIME-WAIT holds no buffers of an orphan */
	tcp_timer_cancel(c, TCP_T_RTX);
	tcp_timer_cancel(c, TCP_T_DELACK);
	tcp_timer_cancel(c, TCP_T_REO);
	tcp_timer_cancel(c, TCP_T_TLP);
	/* RFC 9293 §3.10.7.4: 2 MSL. The FIFOs are no longer needed, unless the owner still
	 * has data to read. */
	tcp_timer_arm(c, TCP_T_KEEP, c->s->tcp->params.time_wait_ms);
	if (c->flags & TCPF_ORPHAN)
		tcp_conn_buffers_free(c);
	tcp_notify(c, SOCK_EV_HUP | SOCK_EV_IN | SOCK_EV_RDHUP);
}

uint32_t tcp_path_mtu(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
		      bool *local)
{
	if (!inet_addr_is_v4(raddr)) {
		struct ip6_addr dst = inet_addr_to_v6(raddr);
		return ip6_path_mtu(s, &dst, scope, local);
	}
	const struct route *r = route_lookup4(s->cfg.routes, inet_addr_to_v4(raddr));
	*local = r != NULL && r->type == ROUTE_LOCAL;
	return r != NULL ? netcfg_route_mtu(&s->cfg, r) : 0;
}

uint16_t tcp_mss_ours(struct stack *s, const struct inet_addr *raddr, uint16_t scope,
		      const struct tcp_sockopts *o)
{
	bool local;
	uint32_t mtu = tcp_path_mtu(s, raddr, scope, &local);
	/* The network and TCP headers without options: 40 bytes over IPv4, 60 over IPv6
	 * (RFC 8200 §8.3: the MSS is the MTU less both fixed headers). */
	uint32_t hdrs = inet_addr_is_v4(raddr) ? 40 : IP6_HDR_LEN + 20;
	uint32_t mine;
	if (local) {
		/* Our own address: segments never meet a port, so as large as an IP datagram
		 * allows (Linux's lo has a 64 KB MTU), carried in chains of mbufs. */
		mine = IP4_MAX_LEN - hdrs;
	} else {
		if (mtu == 0)
			mtu = 1500; /* no route: the segments will not go anyway */
		uint32_t room = rte_pktmbuf_data_room_size(s->pool) - RTE_PKTMBUF_HEADROOM;
		mine = mtu - hdrs;
		if (room - TCP_HDR_MAX_LEN < mine)
			mine = room - TCP_HDR_MAX_LEN;
	}
	if (o->mss != 0 && o->mss < mine)
		mine = o->mss;
	return (uint16_t)mine;
}

/* RFC 9293 §3.7.1 and RFC 6691: the MSS we send is the peer's (536 without the option),
 * capped by our route MTU minus 40, by TCP_MAXSEG, and by what one mbuf holds; timestamps
 * take 12 bytes of every segment. The MSS we announce comes from the route MTU. */
void tcp_conn_set_mss(struct tcp_conn *c, uint16_t peer_mss)
{
	struct stack *s = c->s;
	uint32_t mine = tcp_mss_ours(s, &c->sk.raddr, c->sk.scope, &c->opts);
	c->rcv_mss = (uint16_t)mine;
	if (c->state == TCP_SYN_SENT && peer_mss == 0)
		return; /* before the SYN: announce only */
	uint32_t mss = peer_mss != 0 ? peer_mss : TCP_MSS_DEFAULT;
	if (mss < TCP_MSS_MIN)
		mss = TCP_MSS_MIN;
	if (mss > mine)
		mss = mine;
	if (c->flags & TCPF_TS_OK)
		mss -= TCPOLEN_TSTAMP_ALIGNED;
	c->snd_mss = (uint16_t)mss;
	c->cc.mss = mss;
}

/* The smallest shift that lets the whole receive FIFO be announced (RFC 7323 §2.3). */
uint8_t tcp_wscale_for(uint32_t rcvbuf)
{
	uint8_t shift = 0;
	while (shift < TCP_WSCALE_MAX && (rcvbuf >> shift) > UINT16_MAX)
		shift++;
	return shift;
}

int tcp_conn_established(struct tcp_conn *c)
{
	int rc = tcp_conn_buffers_alloc(c);
	if (rc < 0)
		return rc;
	/* A close during the handshake left the FIN queued (tcp_queue_fin). */
	tcp_set_state(c, c->flags & TCPF_FIN_QUEUED ? TCP_FIN_WAIT_1 : TCP_ESTABLISHED);
	tcp_cc_init(&c->cc, c->cc.ops, c->snd_mss);
	/* RFC 6582 §3.2: "recover" starts at the ISS (so does the once-per-window ECN guard,
	 * RFC 3168 §6.1.2). Left at 0, seq_gt(ack, 0) fails for half of all random ISSs, and
	 * those connections would neither enter fast recovery nor react to ECE. */
	c->recover = c->iss;
	c->ecn_recover = c->iss;
	tcp_rack_init(&c->rack, c->snd_una);
	if (c->srtt_us != 0 && c->cc.ops->on_rtt != NULL)
		c->cc.ops->on_rtt(&c->cc, c->srtt_us, c->s->now_us); /* the handshake's sample */
	c->backoff = 0;
	c->retries = 0;
	c->rtx_since_ms = 0;
	c->last_rx_ms = c->s->now_ms;
	tcp_timer_keepalive_arm(c);
	stack_count(c->s, STACK_EV_TCP_ESTABLISHED);
	struct tcp_conn *l = c->parent;
	if (l != NULL) {
		TAILQ_REMOVE(&l->syn_q, c, q_link);
		l->syn_qlen--;
		TAILQ_INSERT_TAIL(&l->accept_q, c, q_link);
		l->accept_qlen++;
		tcp_notify(l, SOCK_EV_IN);
	} else {
		tcp_notify(c, SOCK_EV_OUT);
	}
	return 0;
}

void tcp_notify(struct tcp_conn *c, uint32_t events)
{
	if (c->sk.owner.notify == NULL || (c->flags & TCPF_FREED) || events == 0)
		return;
	if (c->pending_events == 0)
		TAILQ_INSERT_TAIL(&c->s->tcp->notify_q, c, notify_link);
	c->pending_events |= events;
}

void tcp_deliver_events(struct stack *s)
{
	struct tcp_stack *t = s->tcp;
	/* An owner's call from inside a callback (tcp_send, tcp_close, ...) queues its events
	 * for the loop below instead of calling other owners from inside this one. */
	if (t->delivering)
		return;
	t->delivering = true;
	struct tcp_conn *c;
	while ((c = TAILQ_FIRST(&t->notify_q)) != NULL) {
		TAILQ_REMOVE(&t->notify_q, c, notify_link);
		uint32_t ev = c->pending_events;
		c->pending_events = 0;
		sock_notify(&c->sk, ev);
	}
	t->delivering = false;
}

const struct stack_proto tcp_proto = {
	.name = "tcp",
	.init = tcp_stack_init,
	.fini = tcp_stack_fini,
	.ip_proto = IP4_PROTO_TCP,
	.l4_input = tcp_input,
	.ip6_icmp_error = tcp_icmp6_error,
	.ip4_icmp_error = tcp_icmp_error,
	.tick_transport = tcp_stack_tick,
};
