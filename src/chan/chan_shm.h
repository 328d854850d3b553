/* The application channel's shared memory and messages: the contract between dpstackd
 * (src/chan) and libdpstack (lib/dpstack). Nothing here allocates or depends on DPDK.
 *
 * Each application process attaches over the unix socket DPSTACK_SOCK (SOCK_SEQPACKET: one
 * message per request and per reply). Its first process gets a memfd segment of its own
 * (one per application, so no application can map another's data), an eventfd on which the
 * daemon wakes it, and the eventfds that wake each worker. A forked child joins the same
 * application with the token of the attach and gets a process slot and an eventfd of its
 * own; it keeps the parent's mapping. That is all the unix socket carries: every socket
 * operation travels through the segment.
 *
 * Segment layout (offsets from its start, all computed by chan_layout from the three numbers
 * in chan_seg_hdr, so both sides agree without trusting anything the other writes):
 *
 *   chan_seg_hdr                           doorbells of the processes and workers
 *   chan_sock[max_socks]                   one per socket, written by the daemon
 *   per process p, per worker w:
 *     command ring  (app → worker)         chan_ring of CHAN_CMD_RING entries
 *     event ring    (worker → app)         chan_ring of max_socks entries: never full
 *   per process p: chan_call[CHAN_CALL_SLOTS]   operations that need an answer
 *   per worker w: an arena                  socket FIFOs and accept rings, allocated by w:
 *                                           a FIFO's data in a block of exactly its size,
 *                                           its positions (struct fifo_pos) in a 128-byte
 *                                           slot elsewhere (src/chan/chan_arena.h)
 *
 * A call (connect, listen, bind, options, TCP_INFO, ...) is a request written into one of the
 * process's call slots, then a CHAN_CMD_CALL naming the slot on the command ring of the worker
 * that must run it: commands and calls of a process reach a worker in the order the process
 * queued them. The worker copies the request out before it looks at it, writes the reply,
 * marks the slot done and rings the process's doorbell; the calling thread spins briefly,
 * then sleeps on its eventfd (src/base/doorbell.h).
 *
 * Who writes what: the daemon writes chan_sock (except `queued` bits, which each process
 * clears for itself, `kick` and `nospace`), the event rings' tails, the command rings' heads, the
 * replies in call slots, and the arenas' FIFO sides it produces (TCP receive data, accept
 * rings). The application writes command ring tails, event ring heads, requests, and the
 * FIFO sides it produces (send data). The daemon treats everything the application can
 * write as hostile: positions are clamped, requests are copied before they are checked,
 * commands are checked against its own private tables, never against the segment. */
#ifndef DPS_CHAN_SHM_H
#define DPS_CHAN_SHM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/doorbell.h"
#include "wire/inet_addr.h"

#define CHAN_MAGIC 0x43535044u         /* "DPSC" */
#define CHAN_VERSION 8u              /* 8: the links table's IPv6 addresses (IPV6_PKTINFO) */
#define CHAN_MAX_WORKERS 64
#define CHAN_MAX_PROCS 32              /* processes of one application (fork) */
#define CHAN_CMD_RING 1024             /* commands in flight per process and worker */
#define CHAN_CALL_SLOTS 64             /* calls in flight per process */
#define CHAN_ALIGN 64

/* A ring of 64-bit entries with one producer and one consumer, in shared memory. The mask
 * is fixed by the layout; each side keeps its own copy and never reads it back. */
struct chan_ring {
	_Alignas(CHAN_ALIGN) _Atomic uint32_t head;   /* consumer position */
	_Alignas(CHAN_ALIGN) _Atomic uint32_t tail;   /* producer position */
	_Alignas(CHAN_ALIGN) uint64_t slot[];
};

static inline size_t chan_ring_bytes(uint32_t entries)
{
	return sizeof(struct chan_ring) + (size_t)entries * sizeof(uint64_t);
}

/* Producer: false when full. A hostile consumer can only make the ring look full or empty. */
static inline int chan_ring_put(struct chan_ring *r, uint32_t mask, uint64_t v)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	if (t - h > mask)
		return 0;
	r->slot[t & mask] = v;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return 1;
}

/* Consumer: false when empty. *corrupt is set when the producer's tail is out of range,
 * which only a hostile or broken producer can cause. */
static inline int chan_ring_get(struct chan_ring *r, uint32_t mask, uint64_t *v, int *corrupt)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	if (t == h)
		return 0;
	if (t - h > mask + 1) {
		*corrupt = 1;
		return 0;
	}
	*v = r->slot[h & mask];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return 1;
}

static inline uint32_t chan_ring_count(struct chan_ring *r)
{
	return atomic_load_explicit(&r->tail, memory_order_acquire) -
	       atomic_load_explicit(&r->head, memory_order_acquire);
}

/* Commands, application → worker: op in bits 56-63, argument in 32-55, socket in 0-31. */
enum chan_cmd_op {
	CHAN_CMD_KICK = 1,      /* send data was written or receive data read (FIFOs, accept ring) */
	CHAN_CMD_CLOSE = 2,     /* this process lets go of the socket (close(2)) */
	CHAN_CMD_SHUTDOWN = 3,  /* argument: SHUT_RD, SHUT_WR or SHUT_RDWR */
	CHAN_CMD_CLAIM = 4,     /* this process took the socket from an accept ring */
	CHAN_CMD_CALL = 5,      /* argument: a call slot of the process (socket unused) */
	CHAN_CMD_SETOPT = 6,    /* argument: CHAN_CMD_SETOPT_ARG(opt, value), no answer */
};

/* A socket option whose value fits 16 bits, set without waiting for an answer: the library
 * has checked the value as Linux would, and the worker applies it in order with the
 * process's other commands. */
#define CHAN_CMD_SETOPT_ARG(opt, value) ((uint32_t)(opt) << 16 | ((uint32_t)(value) & 0xffff))

static inline uint64_t chan_cmd(enum chan_cmd_op op, uint32_t arg, uint32_t sock)
{
	return (uint64_t)op << 56 | (uint64_t)(arg & 0xffffff) << 32 | sock;
}

/* chan_sock.state bits, set by the worker (ORPHAN, and what comes with it, by the library);
 * readiness is computed from them and the FIFOs. */
#define CHAN_SS_CONNECTED 0x01   /* the connection was established (stays set) */
#define CHAN_SS_RDHUP 0x02       /* the peer's FIN was received: reads end after the data */
#define CHAN_SS_HUP 0x04         /* both directions are over (closed, reset) */
#define CHAN_SS_ERR 0x08         /* error holds an errno not yet read */
#define CHAN_SS_WRSHUT 0x10      /* our side is shut for writing */
#define CHAN_SS_LISTEN 0x20
#define CHAN_SS_CLOSED 0x40      /* the daemon freed the socket (after CLOSE) */
#define CHAN_SS_ORPHAN 0x80      /* freed or its daemon gone: the library made it a socket
				    that was reset (lib/dpstack/dps_orphan.c) */

enum chan_sock_kind {
	CHAN_SOCK_FREE = 0,
	CHAN_SOCK_TCP = 1,
	CHAN_SOCK_TCP_LISTEN = 2,
	CHAN_SOCK_UDP = 3,
};

/* One socket, as the application sees it. */
struct chan_sock {
	_Atomic uint32_t state;         /* CHAN_SS_* */
	_Atomic uint32_t error;         /* the pending SO_ERROR, cleared by a read of it */
	_Atomic uint64_t queued;        /* bit p: the socket is in process p's event ring */
	_Atomic uint32_t kick;          /* an application sets it before queueing a KICK */
	/* The application found the send FIFO too full to call the socket writable (Linux's
	 * SOCK_NOSPACE): only then does room freed by ACKs make an event, once a third of
	 * the FIFO is free (sk_stream_write_space). Without it every ACK would wake the
	 * application for a few bytes of room. */
	_Atomic uint32_t nospace;
	/* The application's latest stream send had MSG_MORE (stored before its bytes and its
	 * KICK): the worker holds short segments as for TCP_CORK (tcp_set_more). */
	_Atomic uint32_t more;
	uint32_t kind;                  /* chan_sock_kind */
	uint64_t rx_off, tx_off;        /* the FIFOs' data in the segment, 0 = none */
	uint64_t rx_pos_off, tx_pos_off;        /* their positions (struct fifo_pos) */
	uint32_t rx_size, tx_size;      /* their sizes (the shared parts do not hold them) */
	/* The worker moves an empty TCP receive FIFO to a bigger block (receive autotuning,
	 * src/tcp/tcp_rcvbuf.c): rx_gen is a sequence lock over rx_off, rx_pos_off and
	 * rx_size (odd while they change), so processes take a view per call and keep none.
	 * The moved FIFO has positions of its own, not the old ones reset: a view taken before
	 * the move pairs the old data with the old positions, which nobody moves any more (the
	 * FIFO was empty), so it reads nothing rather than the new data at old positions.
	 * rx_gen_seen: the last generation the application read from; the worker frees the old
	 * FIFO (data and positions) once it is the current one. */
	_Atomic uint32_t rx_gen;
	_Atomic uint32_t rx_gen_seen;
	uint64_t acc_off;               /* listener: accept ring in the segment */
	uint32_t acc_mask;
	/* The socket's names, of either family (IPv4 as mapped addresses, wire/inet_addr.h),
	 * written on setup only: the send and receive paths never touch them. */
	struct inet_addr laddr, raddr;
	uint16_t lport, rport;          /* network order */
	uint32_t scope;                 /* the interface index of a link-local laddr/raddr,
					 * 0: none (sin6_scope_id, RFC 4007 §6) */
} __attribute__((aligned(CHAN_ALIGN)));

struct chan_proc {
	/* Rung by a worker that queued events or answered a call: its sequence moves, its
	 * futex sleepers wake, and its eventfd is written while a thread announced a sleep
	 * in bell.fd_sleepers. The daemon rings it too when it stops serving the process. */
	struct doorbell bell;
	_Atomic uint32_t attached;      /* 1 while the daemon serves this process */
} __attribute__((aligned(CHAN_ALIGN)));

/* A worker's bell as this application sees it: fd_sleepers is set while the worker naps, and
 * a process that queues a command then writes the worker's eventfd. */
struct chan_worker_bell {
	struct doorbell bell;
} __attribute__((aligned(CHAN_ALIGN)));

struct chan_seg_hdr {
	uint32_t magic, version;
	uint32_t nb_workers, max_socks;
	uint64_t seg_size, arena_size;
	/* The daemon's life (src/chan/chan_vigil.c): the TID of its vigil thread while it
	 * lives, which the kernel replaces with FUTEX_OWNER_DIED when the daemon ends, however
	 * it ends, waking a thread that sleeps on it (FUTEX_WAITERS). 0: no such notice (then
	 * applications learn it from their connection). In the segment's first page. */
	_Atomic uint32_t daemon_life;
	_Atomic uint32_t links_gen;     /* worker 0's chan_links.gen, 0 until it first looked */
	_Alignas(CHAN_ALIGN) struct chan_worker_bell workers[CHAN_MAX_WORKERS];
	_Alignas(CHAN_ALIGN) struct chan_proc procs[CHAN_MAX_PROCS];
};

/* A stream is writable when the room in its send FIFO is at least half of what is queued
 * (net/core/stream.c: sk_stream_wspace >= sk_stream_min_wspace), that is, a third of a
 * full FIFO: both sides use this one rule. */
static inline int chan_tx_writable(uint32_t used, uint32_t free_room)
{
	return free_room > 0 && free_room >= used / 2;
}

/* A datagram in a UDP socket's send FIFO: this header, then len bytes. */
struct chan_udp_tx_hdr {
	uint32_t len;
	uint16_t rport;                 /* network order */
	uint16_t flags;                 /* CHAN_UDP_TX_* */
	struct inet_addr raddr;         /* either family; the wildcard: the connected peer */
	struct inet_addr laddr;         /* the source (IP_PKTINFO, IPV6_PKTINFO); the
					 * wildcard: the socket's choice */
	uint32_t scope;                 /* interface index of a link-local raddr, 0: none */
	uint8_t ttl, tos;               /* with CHAN_UDP_TX_IP: this datagram's (IP_TTL,
					 * IP_TOS control messages), ttl 0 = the default */
	uint16_t pad;
};
#define CHAN_UDP_TX_IP 0x1

/* --- requests and replies: calls in the segment, and the unix socket's attach and join --- */

/* ATTACH and JOIN travel on the unix socket; every other operation is a call, run by the
 * worker whose command ring carries it. */
enum chan_op {
	CHAN_OP_ATTACH = 1,     /* → chan_attach_reply + fds: memfd, own eventfd, worker eventfds */
	CHAN_OP_JOIN,           /* a forked child: → chan_attach_reply + fd: own eventfd */
	CHAN_OP_LISTEN,         /* this worker's listener → socks[0] (one call per worker) */
	CHAN_OP_CONNECT,        /* → socks[0]; completion shows in its state; -EXDEV: the flow
				 * is worker `redirect`'s (a bound source port) */
	CHAN_OP_BIND,           /* TCP bind(2), on worker lport % nb_workers: reserves
				 * laddr:lport until the socket listens, connects or closes
				 * (CHAN_OP_UNBIND) → socks[0]: the reservation */
	CHAN_OP_UDP_OPEN,       /* → socks[0], bound address; -EXDEV: the port is `redirect`'s */
	CHAN_OP_UDP_CONNECT,
	CHAN_OP_SETOPT,         /* a socket option of a live socket; sock UINT32_MAX with
				 * CHAN_OPT_CONGESTION only asks whether the name is known */
	CHAN_OP_INFO,           /* → chan_info (TCP_INFO, names, options) */
	CHAN_OP_UNBIND,         /* sock: a reservation of CHAN_OP_BIND, given up */
	CHAN_OP_LINKS,          /* worker 0: → chan_links */
};

/* chan_req.flags of CHAN_OP_BIND, LISTEN and UDP_OPEN: the socket options that let two
 * sockets share a port. */
#define CHAN_BIND_REUSEADDR 0x1
#define CHAN_BIND_REUSEPORT 0x2
/* IPV6_V6ONLY: a socket bound to :: takes no IPv4 (RFC 3493 §5.3). */
#define CHAN_BIND_V6ONLY 0x4

/* Socket options the channel carries (level and name folded into one number). */
enum chan_opt {
	CHAN_OPT_RCVBUF = 1,
	CHAN_OPT_SNDBUF,
	CHAN_OPT_NODELAY,
	CHAN_OPT_KEEPALIVE,
	CHAN_OPT_KEEPIDLE,      /* seconds */
	CHAN_OPT_KEEPINTVL,     /* seconds */
	CHAN_OPT_KEEPCNT,
	CHAN_OPT_USER_TIMEOUT,  /* ms */
	CHAN_OPT_MAXSEG,
	CHAN_OPT_LINGER0,       /* SO_LINGER on with 0 s: close resets */
	CHAN_OPT_BROADCAST,
	CHAN_OPT_CONGESTION,    /* value: index into the daemon's list, see chan_opts.cc */
	CHAN_OPT_TTL,           /* IP_TTL, 0 = the default */
	CHAN_OPT_TOS,           /* IP_TOS */
	CHAN_OPT_CORK,          /* TCP_CORK */
};

#define CHAN_CC_NAME_MAX 16

/* The options an application sets before connect/listen, carried with the request. */
struct chan_opts {
	uint32_t rcvbuf, sndbuf;        /* 0 = default */
	uint32_t keep_idle_s, keep_intvl_s, keep_cnt;   /* 0 = default */
	uint32_t user_timeout_ms;
	uint16_t maxseg;
	uint8_t nodelay, keepalive, linger0, broadcast;
	char cc[CHAN_CC_NAME_MAX];      /* "" = default */
	uint8_t ttl, tos;               /* IP_TTL (0 = default), IP_TOS */
	uint8_t cork;                   /* TCP_CORK */
};

struct chan_req {
	uint32_t op;
	uint32_t sock;
	struct inet_addr laddr, raddr;  /* IPv4 as mapped addresses */
	uint16_t lport, rport;          /* network order */
	uint32_t scope;                 /* sin6_scope_id of a link-local laddr or raddr, 0: none */
	uint32_t backlog;
	uint32_t opt, value;            /* CHAN_OP_SETOPT */
	uint32_t flags;                 /* CHAN_OP_BIND, LISTEN, UDP_OPEN */
	uint64_t app_id, token;         /* CHAN_OP_JOIN */
	uint32_t parent_proc;           /* CHAN_OP_JOIN */
	int32_t pid;                    /* of the sender, for messages and sock show */
	struct chan_opts opts;
	char cc[CHAN_CC_NAME_MAX];      /* CHAN_OP_SETOPT of CHAN_OPT_CONGESTION */
};

/* The stack's interfaces and addresses as applications see them (the SIOCGIF* ioctls, and
 * the broadcast check of sendto). CHAN_OP_LINKS, on worker 0, answers with this table, and
 * worker 0 keeps chan_seg_hdr.links_gen equal to gen: a library asks again only when the
 * two differ. Port names longer than CHAN_IFNAME_MAX - 1 (IFNAMSIZ) are cut; addresses
 * beyond CHAN_LINK_ADDRS_MAX (CHAN_LINK_ADDRS6_MAX) are left out. */
#define CHAN_LINKS_MAX 16               /* NETCFG_MAX_PORTS */
#define CHAN_LINK_ADDRS_MAX 32
#define CHAN_IFNAME_MAX 16

struct chan_link {
	char name[CHAN_IFNAME_MAX];
	uint32_t ifindex;
	uint8_t mac[6];
	uint16_t mtu;
	uint8_t up;                     /* administratively (link set up/down) */
};

/* IPv4 addresses: what reads them (the SIOCGIF* ioctls, SIOCGIFCONF, the broadcast and
 * IP_PKTINFO checks) is IPv4's on Linux too; getifaddrs' IPv6 comes from netlink, which the
 * stack does not serve. */
struct chan_link_addr {
	uint32_t addr;                  /* network order */
	uint16_t link;                  /* index into chan_links.links */
	uint8_t plen;
};

/* IPv6 addresses: for sendmsg's IPV6_PKTINFO check only. */
#define CHAN_LINK_ADDRS6_MAX 32
struct chan_link_addr6 {
	struct inet_addr addr;
	uint16_t link;                  /* index into chan_links.links */
	uint8_t usable;                 /* neither tentative nor a DAD failure: a source may
					 * be it (RFC 4862 §5.4) */
	uint8_t pad;
};

struct chan_links {
	uint32_t gen;
	uint32_t nlinks, naddrs, naddrs6;
	struct chan_link links[CHAN_LINKS_MAX];
	struct chan_link_addr addrs[CHAN_LINK_ADDRS_MAX];
	struct chan_link_addr6 addrs6[CHAN_LINK_ADDRS6_MAX];
};

struct chan_attach_reply {
	uint32_t nb_workers, max_socks;
	uint64_t arena_size;
	uint32_t proc;
	uint64_t app_id, token;
};

/* What CHAN_OP_INFO reports: struct tcp_info's fields that the stack knows, and more. */
struct chan_info {
	uint32_t kind;
	struct inet_addr laddr, raddr;
	uint16_t lport, rport;          /* network order */
	uint8_t tcp_state;              /* Linux's TCP_ESTABLISHED... numbering */
	uint8_t snd_wscale, rcv_wscale, options;  /* TCPI_OPT_* */
	uint32_t rto_us, snd_mss, rcv_mss, rtt_us, rttvar_us;
	uint32_t snd_ssthresh, snd_cwnd;        /* segments, as Linux */
	uint32_t unacked, total_retrans;
	uint64_t bytes_acked, bytes_received, segs_out, segs_in;
	uint32_t rcvbuf, sndbuf;
	uint32_t keep_idle_s, keep_intvl_s, keep_cnt, user_timeout_ms;
	uint16_t maxseg;
	uint8_t nodelay, keepalive, linger0, broadcast;
	char cc[CHAN_CC_NAME_MAX];
};

struct chan_reply {
	int32_t err;                    /* 0 or a positive errno */
	uint32_t count;                 /* socks used */
	uint32_t socks[CHAN_MAX_WORKERS];
	uint32_t redirect;              /* -EXDEV: the worker to ask instead */
	struct inet_addr laddr;         /* bound address (UDP_OPEN) */
	uint16_t lport;                 /* network order */
	union {
		struct chan_attach_reply attach;
		struct chan_info info;
		struct chan_links links;
	} u;
};

/* A call slot. The process owns it while idle: it writes the request, sets POSTED and queues
 * CHAN_CMD_CALL; the worker copies the request out, runs it, writes the reply and sets DONE;
 * the process copies the reply out and sets IDLE. */
enum chan_call_state {
	CHAN_CALL_IDLE = 0,
	CHAN_CALL_POSTED = 1,
	CHAN_CALL_DONE = 2,
};

struct chan_call {
	_Atomic uint32_t state;         /* chan_call_state */
	struct chan_req req;
	struct chan_reply rep;
} __attribute__((aligned(CHAN_ALIGN)));

/* Where everything is, from nb_workers, max_socks and arena_size (a power of two). */
struct chan_layout {
	uint32_t nb_workers, max_socks, ev_mask, cmd_mask;
	uint64_t socks_off;
	uint64_t rings_off, ring_pair_bytes, cmd_bytes;
	uint64_t calls_off;
	uint64_t arenas_off, arena_size;
	uint64_t seg_size;
};

static inline uint64_t chan_align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

static inline void chan_layout(struct chan_layout *l, uint32_t nb_workers, uint32_t max_socks,
			       uint64_t arena_size)
{
	l->nb_workers = nb_workers;
	l->max_socks = max_socks;
	l->ev_mask = max_socks - 1;
	l->cmd_mask = CHAN_CMD_RING - 1;
	l->socks_off = chan_align_up(sizeof(struct chan_seg_hdr), 4096);
	l->rings_off = chan_align_up(l->socks_off + (uint64_t)max_socks * sizeof(struct chan_sock),
				     4096);
	l->cmd_bytes = chan_align_up(chan_ring_bytes(CHAN_CMD_RING), 4096);
	l->ring_pair_bytes = l->cmd_bytes + chan_align_up(chan_ring_bytes(max_socks), 4096);
	l->calls_off = chan_align_up(l->rings_off + (uint64_t)CHAN_MAX_PROCS * nb_workers *
							    l->ring_pair_bytes, 4096);
	l->arenas_off = chan_align_up(l->calls_off + (uint64_t)CHAN_MAX_PROCS * CHAN_CALL_SLOTS *
							     sizeof(struct chan_call), 1u << 21);
	l->arena_size = arena_size;
	l->seg_size = l->arenas_off + (uint64_t)nb_workers * arena_size;
}

static inline struct chan_ring *chan_cmd_ring(void *base, const struct chan_layout *l,
					      unsigned proc, unsigned worker)
{
	return (struct chan_ring *)((char *)base + l->rings_off +
				    ((uint64_t)proc * l->nb_workers + worker) * l->ring_pair_bytes);
}

static inline struct chan_ring *chan_ev_ring(void *base, const struct chan_layout *l,
					     unsigned proc, unsigned worker)
{
	return (struct chan_ring *)((char *)chan_cmd_ring(base, l, proc, worker) + l->cmd_bytes);
}

static inline struct chan_sock *chan_sock_at(void *base, const struct chan_layout *l,
					     uint32_t sock)
{
	return (struct chan_sock *)((char *)base + l->socks_off) + sock;
}

/* Sockets are numbered so that socket s lives on worker s % nb_workers: each worker hands
 * out its own numbers without asking anyone. */
static inline unsigned chan_sock_worker(const struct chan_layout *l, uint32_t sock)
{
	return sock % l->nb_workers;
}

/* The worker that keeps the TCP bind reservations of port lport (network order). */
static inline unsigned chan_bind_worker_of(const struct chan_layout *l, uint16_t lport_be)
{
	return (unsigned)(((lport_be & 0xff) << 8 | lport_be >> 8) % l->nb_workers);
}

static inline struct chan_call *chan_call_at(void *base, const struct chan_layout *l,
					     unsigned proc, unsigned slot)
{
	return (struct chan_call *)((char *)base + l->calls_off) +
	       (uint64_t)proc * CHAN_CALL_SLOTS + slot;
}

#endif
