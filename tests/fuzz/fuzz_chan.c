/* libFuzzer target: the daemon's side of the application channel (src/chan) against a
 * hostile application. The harness plays the application with the real daemon code in the
 * same process: it attaches and joins through chan_hello with the bytes a process would
 * send on DPSTACK_SOCK, maps the segment from the memfd the daemon passes back, and then
 * writes what an application may write there (commands, call requests, FIFO data, and any
 * word of the segment it likes) between the rounds of the two workers, whose stacks run on
 * a virtual clock. Workers and the channel thread are not threads here: worker_call runs a
 * job at once, and the harness does what the channel thread does when a process ends or a
 * worker reports one that misbehaved.
 *
 * Topology: two workers (stacks), each 10.0.0.2/24 on port 0, peer 10.0.0.1 that never
 * answers; connections to 10.0.0.2 go through each stack's loopback. Segments: 64 sockets,
 * 4 MiB arenas.
 *
 * Input: records  op:u8 then its arguments (big-endian), until the input ends:
 *   0 ATTACH  how:u8          a new application (at most 2): uid 0 (exempt from per-user
 *                             limits) or, with how & 1, uid 1000; how & 2 sends a message of
 *                             how >> 2 bytes instead (refused).
 *   1 JOIN    app proc flags  a forked child of (app, proc): flags 1 wrong token, 2 wrong
 *                             application, 4 parent_proc = proc unmasked, 8 another uid.
 *   2 HELLO   len:u8 bytes    a first message of len bytes (≤ sizeof(struct chan_req) + 8).
 *   3 EXIT    app proc        the process ends (its connection hangs up).
 *   4 CMD     app proc w cmd:u64    a raw command on the process's ring to worker w.
 *   5 CALL    app proc w slot state len:u8 bytes   a call: len bytes over a zeroed
 *                             chan_req in slot, the slot's state set to state (1 = POSTED),
 *                             CHAN_CMD_CALL naming slot queued to worker w.
 *   6 POLL    w               worker w's round (and its nap announcement), then the channel
 *                             thread's drop of misbehaving processes.
 *   7 POKE    app region index:u16 word:u8 value:u32   the application scribbles one 32-bit
 *                             word: 0 segment header, 1 chan_sock[index], 2 a command ring's
 *                             positions, 3 an event ring's, 4 a call slot, 5 the positions
 *                             of socket index's FIFOs or accept ring (as chan_sock says).
 *   8 WRITE   app proc sock:u16 len:u16   len bytes into the socket's send FIFO, then KICK.
 *   9 READ    app proc sock:u16 len:u16   consumes len bytes of its receive FIFO, then KICK.
 *  10 DGRAM   app proc sock:u16 len:u16 lie:u16 dst:u8 flags:u8   a datagram record in a UDP
 *                             send FIFO: header length len ^ lie, destination by dst.
 *  11 ACCEPT  app proc sock:u16   takes a number from the listener's accept ring and CLAIMs it.
 *  12 CLOCK   ms:u16          both stacks' clocks advance by ms % 4096.
 *  13 LIMIT   which:u8 value:u32   chan_limit_set (restored after the input).
 *  14 EVENTS  app proc w      the process empties its event ring from worker w.
 * Anything an application can do must end in a clean answer, a counted refusal or the
 * process's disconnection. After each input every process exits, the clocks run for an
 * hour and the harness aborts unless every application, socket, arena byte, connection,
 * user entry and mbuf is gone: each leftover is a leak an application can repeat. */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_eal.h"
#include "../../src/chan/chan_priv.h"
#include "../../src/chan/chan_worker.h"
#include "../../src/dp/worker.h"
#include "base/fifo.h"
#include "stack/stack.h"
#include "tcp/tcp_priv.h"
#include "udp/udp_priv.h"
#include "inet/inet.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define ADDR IP4(10, 0, 0, 2)
#define PEER IP4(10, 0, 0, 1)
#define NB_WORKERS 2
#define MAX_SOCKS 64
#define MAX_SOCKS_RAISED (4 * MAX_SOCKS) /* the most socks-per-app a run sets */
#define ARENA_MB 4
#define POOL_MBUFS 2047u
#define FUZZ_APPS 2
#define FUZZ_PROCS 4            /* per application: the attach and three joins */
#define SETTLE_MS (3600u * 1000u)

enum {
	OP_ATTACH, OP_JOIN, OP_HELLO, OP_EXIT, OP_CMD, OP_CALL, OP_POLL, OP_POKE, OP_WRITE,
	OP_READ, OP_DGRAM, OP_ACCEPT, OP_CLOCK, OP_LIMIT, OP_EVENTS, OP_COUNT
};

static const struct eth_addr mac_port = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x00}};
static const struct eth_addr mac_peer = {{0x02, 0xaa, 0x00, 0x00, 0x00, 0x01}};

static struct rte_mempool *pool;
static unsigned pool_baseline;
static struct worker workers[NB_WORKERS];
static struct chan *ch;
static char sock_path[108];
static uint32_t limits_default[CHAN_LIMIT_COUNT];
static struct chan_limit_bounds limit_bounds;

/* What the application side knows: its mapping and, per process, its connection. */
struct fuzz_proc {
	int fd;                 /* our end of the process's connection; -1: none */
	int efd;                /* the eventfd the daemon gave it */
	uint32_t proc;
};

struct fuzz_app {
	bool live;
	uid_t uid;
	uint64_t id, token;
	char *base;
	struct chan_layout lay;
	int wake_fds[NB_WORKERS];
	struct fuzz_proc procs[FUZZ_PROCS];
};

static struct fuzz_app apps[FUZZ_APPS];

/* FUZZ_CHAN_VERBOSE=1 in the environment: print the answers to calls and the channel's
 * counters after each input, to see what a seed reaches (run the binary on single files). */
static bool verbose;

/* The daemon runs the channel's jobs on its workers through worker_call once they run, and
 * directly before (src/ctl/daemon.c). Here nothing runs concurrently: directly. */
int worker_call(struct worker *w, int (*fn)(struct stack *s, void *arg), void *arg)
{
	return fn(w->stack, arg);
}

static void fuzz_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	(void)ctx;
	(void)port;
	rte_pktmbuf_free(m);
}

/* --- input --- */

struct reader {
	const uint8_t *p;
	size_t left;
};

static bool take(struct reader *r, void *out, size_t n)
{
	if (r->left < n)
		return false;
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
	return true;
}

static bool take_u8(struct reader *r, uint8_t *v)
{
	return take(r, v, 1);
}

static bool take_u16(struct reader *r, uint16_t *v)
{
	uint8_t b[2];
	if (!take(r, b, 2))
		return false;
	*v = (uint16_t)(b[0] << 8 | b[1]);
	return true;
}

static bool take_u32(struct reader *r, uint32_t *v)
{
	uint16_t hi, lo;
	if (!take_u16(r, &hi) || !take_u16(r, &lo))
		return false;
	*v = (uint32_t)hi << 16 | lo;
	return true;
}

static bool take_u64(struct reader *r, uint64_t *v)
{
	uint32_t hi, lo;
	if (!take_u32(r, &hi) || !take_u32(r, &lo))
		return false;
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* --- the daemon's side of things the channel thread does --- */

static struct chan_app *daemon_app(const struct fuzz_app *fa)
{
	struct chan_app *a;
	TAILQ_FOREACH(a, &ch->apps, link)
		if (a->id == fa->id)
			return a;
	return NULL;
}

static void app_unmap(struct fuzz_app *fa)
{
	munmap(fa->base, fa->lay.seg_size);
	for (unsigned w = 0; w < NB_WORKERS; w++)
		close(fa->wake_fds[w]);
	fa->live = false;
}

/* The process's connection ended: what chan_serve_proc does on a hang-up. The last
 * process of an application takes the harness's mapping with it. */
static void proc_exit(struct fuzz_app *fa, struct fuzz_proc *fp)
{
	struct chan_app *a = daemon_app(fa);
	if (a != NULL && a->procs[fp->proc].fd >= 0)
		chan_proc_drop(ch, a, fp->proc);
	close(fp->fd);
	close(fp->efd);
	fp->fd = fp->efd = -1;
	for (unsigned k = 0; k < FUZZ_PROCS; k++)
		if (fa->procs[k].fd >= 0)
			return;
	app_unmap(fa);
}

/* A process the daemon disconnected (a bad command) sees its connection end. */
static void procs_reap_disconnected(void)
{
	for (unsigned i = 0; i < FUZZ_APPS; i++) {
		struct fuzz_app *fa = &apps[i];
		if (!fa->live)
			continue;
		struct chan_app *a = daemon_app(fa);
		for (unsigned k = 0; k < FUZZ_PROCS && fa->live; k++) {
			struct fuzz_proc *fp = &fa->procs[k];
			if (fp->fd >= 0 && (a == NULL || a->procs[fp->proc].fd < 0))
				proc_exit(fa, fp);
		}
	}
}

/* The processes take their answers, as the library's dps_call_wait does: a reply names
 * sockets of the application only. */
static void calls_take_answers(void)
{
	for (unsigned i = 0; i < FUZZ_APPS; i++) {
		struct fuzz_app *fa = &apps[i];
		for (unsigned k = 0; k < FUZZ_PROCS && fa->live; k++) {
			if (fa->procs[k].fd < 0)
				continue;
			for (unsigned slot = 0; slot < CHAN_CALL_SLOTS; slot++) {
				struct chan_call *c = chan_call_at(fa->base, &fa->lay,
								   fa->procs[k].proc, slot);
				if (atomic_load(&c->state) != CHAN_CALL_DONE)
					continue;
				const struct chan_reply *rep = &c->rep;
				if (verbose)
					fprintf(stderr, "app %u proc %u slot %u: op %u -> err %d socks "
						"%u [%u]\n", i, fa->procs[k].proc, slot, c->req.op,
						rep->err, rep->count, rep->socks[0]);
				if (rep->err == 0 && c->req.op != CHAN_OP_BIND)
					for (uint32_t n = 0; n < rep->count; n++)
						FUZZ_CHECK(n < CHAN_MAX_WORKERS &&
							   rep->socks[n] < fa->lay.max_socks);
				atomic_store(&c->state, CHAN_CALL_IDLE);
			}
		}
	}
}

static void worker_round(unsigned w)
{
	struct worker_hooks *h = &workers[w].hooks;
	h->poll(h->ctx);
	if (h->sleeping(h->ctx, true))
		h->sleeping(h->ctx, false);
	chan_drop_killed(ch);
	procs_reap_disconnected();
	calls_take_answers();
}

/* --- the application side --- */

/* Sends a first message on a fresh connection and receives the answer with its
 * descriptors (up to 2 + NB_WORKERS); -1 when the daemon refused or closed it. */
static int hello(int *app_fd, const void *msg, size_t len, uid_t uid, struct chan_reply *rep,
		 int fds[2 + NB_WORKERS])
{
	int sv[2];
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	struct ucred cr = {.pid = getpid(), .uid = uid, .gid = uid};
	chan_hello(ch, sv[1], msg, len, &cr);
	union {
		char buf[CMSG_SPACE(sizeof(int) * (2 + CHAN_MAX_WORKERS))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = rep, .iov_len = sizeof(*rep)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			    .msg_controllen = sizeof(u.buf)};
	ssize_t n = recvmsg(sv[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	int got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int nfd = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			FUZZ_CHECK(nfd <= 2 + NB_WORKERS && got == 0);
			memcpy(fds, CMSG_DATA(c), (size_t)nfd * sizeof(int));
			got = nfd;
		}
	if (n != (ssize_t)sizeof(*rep) || rep->err != 0) {
		FUZZ_CHECK(got == 0); /* a refusal passes no descriptor */
		close(sv[0]);
		return -1;
	}
	*app_fd = sv[0];
	return got;
}

static void app_attach(uint8_t how)
{
	uid_t uid = how & 1 ? 1000 : 0;
	struct chan_req rq = {.op = CHAN_OP_ATTACH, .pid = getpid()};
	size_t len = how & 2 ? (size_t)(how >> 2) : sizeof(rq);
	if (len > sizeof(rq))
		len = sizeof(rq);
	struct fuzz_app *fa = NULL;
	for (unsigned i = 0; i < FUZZ_APPS && fa == NULL; i++)
		if (!apps[i].live)
			fa = &apps[i];
	if (fa == NULL)
		return;
	struct chan_reply rep;
	int fds[2 + NB_WORKERS], fd;
	int got = hello(&fd, &rq, len, uid, &rep, fds);
	if (got < 0)
		return;
	FUZZ_CHECK(len == sizeof(rq) && got == 2 + NB_WORKERS);
	const struct chan_attach_reply *ar = &rep.u.attach;
	/* Room for socks-per-app as it was at the attach: a power of two, never below the
	 * configured size (chan_app_max_socks). */
	FUZZ_CHECK(ar->nb_workers == NB_WORKERS && ar->proc == 0 && ar->max_socks >= MAX_SOCKS &&
		   ar->max_socks <= MAX_SOCKS_RAISED && (ar->max_socks & (ar->max_socks - 1)) == 0);
	chan_layout(&fa->lay, ar->nb_workers, ar->max_socks, ar->arena_size);
	fa->base = mmap(NULL, fa->lay.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	FUZZ_CHECK(fa->base != MAP_FAILED);
	close(fds[0]);
	fa->live = true;
	fa->uid = uid;
	fa->id = ar->app_id;
	fa->token = ar->token;
	for (unsigned w = 0; w < NB_WORKERS; w++)
		fa->wake_fds[w] = fds[2 + w];
	for (unsigned k = 0; k < FUZZ_PROCS; k++)
		fa->procs[k] = (struct fuzz_proc){.fd = -1, .efd = -1};
	fa->procs[0] = (struct fuzz_proc){.fd = fd, .efd = fds[1], .proc = 0};
}

static struct fuzz_proc *proc_of(struct fuzz_app *fa, uint8_t proc)
{
	struct fuzz_proc *fp = &fa->procs[proc % FUZZ_PROCS];
	return fp->fd >= 0 ? fp : NULL;
}

static void app_join(struct fuzz_app *fa, uint8_t parent, uint8_t flags)
{
	struct fuzz_proc *pp = proc_of(fa, parent), *child = NULL;
	for (unsigned k = 0; k < FUZZ_PROCS && child == NULL; k++)
		if (fa->procs[k].fd < 0)
			child = &fa->procs[k];
	if (child == NULL)
		return;
	struct chan_req rq = {.op = CHAN_OP_JOIN, .pid = getpid(), .app_id = fa->id,
			      .token = fa->token, .parent_proc = pp != NULL ? pp->proc : 0};
	if (flags & 1)
		rq.token ^= 1;
	if (flags & 2)
		rq.app_id += 7;
	if (flags & 4)
		rq.parent_proc = parent;
	uid_t uid = flags & 8 ? fa->uid + 1 : fa->uid;
	struct chan_reply rep;
	int fds[2 + NB_WORKERS], fd;
	int got = hello(&fd, &rq, sizeof(rq), uid, &rep, fds);
	if (got < 0)
		return;
	FUZZ_CHECK(got == 1 && (flags & 11) == 0 && rep.u.attach.proc < CHAN_MAX_PROCS);
	*child = (struct fuzz_proc){.fd = fd, .efd = fds[0], .proc = rep.u.attach.proc};
}

static void app_hello_raw(struct reader *r)
{
	uint8_t len;
	uint8_t msg[sizeof(struct chan_req) + 8] = {0};
	if (!take_u8(r, &len))
		return;
	len = (uint8_t)(len % sizeof(msg));
	size_t n = len < r->left ? len : r->left;
	take(r, msg, n);
	struct chan_reply rep;
	int fds[2 + NB_WORKERS], fd;
	int got = hello(&fd, msg, len, 1000, &rep, fds);
	if (got < 0)
		return;
	/* Accepted: an attach or a join whose token the fuzzer found. The harness does not
	 * track it: it ends at once. */
	for (int i = 0; i < got; i++)
		close(fds[i]);
	close(fd);
	struct chan_app *a;
	TAILQ_FOREACH(a, &ch->apps, link)
		for (unsigned p = 0; p < CHAN_MAX_PROCS; p++)
			if (a->procs[p].fd >= 0 && a->procs[p].pid == getpid() &&
			    p == rep.u.attach.proc && a->id == rep.u.attach.app_id) {
				chan_proc_drop(ch, a, p);
				return;
			}
}

static void cmd_put(struct fuzz_app *fa, const struct fuzz_proc *fp, unsigned w, uint64_t v)
{
	/* As the library: a full ring waits for room, which a worker round gives. */
	struct chan_ring *r = chan_cmd_ring(fa->base, &fa->lay, fp->proc, w % NB_WORKERS);
	chan_ring_put(r, fa->lay.cmd_mask, v);
}

static void app_call(struct fuzz_app *fa, const struct fuzz_proc *fp, uint8_t w, uint8_t slot,
		     uint8_t state, struct reader *r)
{
	uint8_t len;
	struct chan_req rq;
	memset(&rq, 0, sizeof(rq));
	if (!take_u8(r, &len))
		return;
	size_t n = len < sizeof(rq) ? len : sizeof(rq);
	if (n > r->left)
		n = r->left;
	take(r, &rq, n);
	struct chan_call *c = chan_call_at(fa->base, &fa->lay, fp->proc, slot % CHAN_CALL_SLOTS);
	memcpy(&c->req, &rq, sizeof(rq));
	atomic_store(&c->state, state);
	cmd_put(fa, fp, w, chan_cmd(CHAN_CMD_CALL, slot, 0));
}

/* A word the application may write: every byte of its segment is the application's. */
static void poke(struct fuzz_app *fa, uint8_t region, uint16_t index, uint8_t word,
		 uint32_t value)
{
	const struct chan_layout *l = &fa->lay;
	char *at;
	size_t bytes;
	switch (region % 6) {
	case 0:
		at = fa->base;
		bytes = sizeof(struct chan_seg_hdr);
		break;
	case 1:
		at = (char *)chan_sock_at(fa->base, l, index % l->max_socks);
		bytes = sizeof(struct chan_sock);
		break;
	case 2:
	case 3: {
		unsigned p = (index >> 8) % CHAN_MAX_PROCS, w = index % NB_WORKERS;
		at = (char *)(region % 6 == 2 ? chan_cmd_ring(fa->base, l, p, w)
					      : chan_ev_ring(fa->base, l, p, w));
		at += word & 1 ? offsetof(struct chan_ring, tail) : offsetof(struct chan_ring, head);
		bytes = sizeof(uint32_t);
		word = 0;
		break;
	}
	case 4:
		at = (char *)chan_call_at(fa->base, l, (index >> 8) % CHAN_MAX_PROCS,
					  index % CHAN_CALL_SLOTS);
		bytes = sizeof(struct chan_call);
		break;
	default: {
		const struct chan_sock *ss = chan_sock_at(fa->base, l, index % l->max_socks);
		/* A FIFO's positions or an accept ring's: head, then tail a cache line on. */
		uint64_t off = word & 2 ? ss->tx_pos_off : word & 4 ? ss->acc_off : ss->rx_pos_off;
		/* Where the daemon said; the harness itself must stay inside its segment. */
		if (off < l->arenas_off || off > l->seg_size - 2 * FIFO_CACHE_LINE || off % 64 != 0)
			return;
		at = fa->base + off + (word & 1 ? FIFO_CACHE_LINE : 0);
		bytes = sizeof(uint32_t);
		word = 0;
		break;
	}
	}
	size_t words = bytes / sizeof(uint32_t);
	memcpy(at + (word % words) * sizeof(uint32_t), &value, sizeof(value));
}

/* The application's view of one of socket sock's FIFOs, as the library takes it from
 * chan_sock (dps_fifo_view): false when what the segment says does not fit in it. */
static bool fifo_of(struct fuzz_app *fa, uint16_t sock, bool tx, struct fifo *f)
{
	const struct chan_sock *ss = chan_sock_at(fa->base, &fa->lay, sock % fa->lay.max_socks);
	uint64_t pos_off = tx ? ss->tx_pos_off : ss->rx_pos_off, off = tx ? ss->tx_off : ss->rx_off;
	uint32_t size = tx ? ss->tx_size : ss->rx_size;
	const struct chan_layout *l = &fa->lay;
	if (!fifo_size_valid(size) || off < l->arenas_off || off > l->seg_size ||
	    size > l->seg_size - off || pos_off < l->arenas_off || pos_off > l->seg_size ||
	    sizeof(struct fifo_pos) > l->seg_size - pos_off)
		return false;
	return fifo_attach(f, fa->base + pos_off, fa->base + off, size) == 0;
}

static void app_write(struct fuzz_app *fa, const struct fuzz_proc *fp, uint16_t sock,
		      uint16_t len)
{
	static uint8_t buf[65536];
	struct fifo f;
	if (fifo_of(fa, sock, true, &f)) {
		memset(buf, 'w', len);
		fifo_enqueue(&f, buf, len);
	}
	cmd_put(fa, fp, sock, chan_cmd(CHAN_CMD_KICK, 0, sock));
}

static void app_read(struct fuzz_app *fa, const struct fuzz_proc *fp, uint16_t sock,
		     uint16_t len)
{
	struct fifo f;
	if (fifo_of(fa, sock, false, &f)) {
		uint32_t n = fifo_consume(&f, len);
		if (verbose)
			fprintf(stderr, "socket %u: read %u bytes\n", sock, n);
	}
	cmd_put(fa, fp, sock, chan_cmd(CHAN_CMD_KICK, 0, sock));
}

static void app_dgram(struct fuzz_app *fa, const struct fuzz_proc *fp, uint16_t sock,
		      uint16_t len, uint16_t lie, uint8_t dst, uint8_t flags)
{
	static uint8_t buf[sizeof(struct chan_udp_tx_hdr) + 65536];
	static const uint32_t dsts[4] = {0, PEER, ADDR, IP4(255, 255, 255, 255)};
	struct chan_udp_tx_hdr h = {.len = (uint32_t)(len ^ lie),
				    .raddr = inet_addr_v4(dsts[dst & 3]),
				    .rport = htons((uint16_t)(dst >> 2) + 5000u),
				    .flags = flags & 3, .laddr = inet_addr_v4(flags & 4 ? ADDR : 0),
				    .ttl = flags, .tos = (uint8_t)(flags << 2)};
	struct fifo f;
	if (fifo_of(fa, sock, true, &f)) {
		memcpy(buf, &h, sizeof(h));
		memset(buf + sizeof(h), 'd', len);
		fifo_enqueue(&f, buf, (uint32_t)sizeof(h) + len);
	}
	cmd_put(fa, fp, sock, chan_cmd(CHAN_CMD_KICK, 0, sock));
}

static void app_accept(struct fuzz_app *fa, const struct fuzz_proc *fp, uint16_t sock)
{
	const struct chan_sock *ss = chan_sock_at(fa->base, &fa->lay, sock % fa->lay.max_socks);
	uint64_t off = ss->acc_off;
	uint32_t mask = ss->acc_mask;
	if (off < fa->lay.arenas_off || mask > 4095 || ((mask + 1) & mask) != 0 ||
	    off > fa->lay.seg_size || chan_ring_bytes(mask + 1) > fa->lay.seg_size - off)
		return;
	uint64_t v;
	int corrupt = 0;
	if (chan_ring_get((struct chan_ring *)(fa->base + off), mask, &v, &corrupt))
		cmd_put(fa, fp, (uint32_t)v, chan_cmd(CHAN_CMD_CLAIM, 0, (uint32_t)v));
}

static void app_events(struct fuzz_app *fa, const struct fuzz_proc *fp, uint8_t w)
{
	struct chan_ring *r = chan_ev_ring(fa->base, &fa->lay, fp->proc, w % NB_WORKERS);
	uint64_t v;
	int corrupt = 0;
	while (chan_ring_get(r, fa->lay.ev_mask, &v, &corrupt))
		atomic_fetch_and(&chan_sock_at(fa->base, &fa->lay,
					       (uint32_t)v % fa->lay.max_socks)->queued,
				 ~(1ull << fp->proc));
}

/* --- the clock --- */

static void clock_advance(uint64_t ms, uint64_t step)
{
	for (uint64_t t = 0; t < ms; t += step)
		for (unsigned w = 0; w < NB_WORKERS; w++) {
			struct stack *s = workers[w].stack;
			s->now_us += step * 1000;
			stack_tick(s, s->now_us / 1000);
			stack_loopback_drain(s);
		}
}

static bool anything_left(void)
{
	for (unsigned w = 0; w < NB_WORKERS; w++)
		if (workers[w].stack->tcp->nconns != 0 || workers[w].stack->lo_count != 0)
			return true;
	return atomic_load(&ch->live_apps) != 0 || rte_mempool_in_use_count(pool) != pool_baseline;
}

/* Up to an hour of virtual time, while connections or packets are left: every
 * retransmission, FIN-WAIT-2 and TIME-WAIT expires, frames waiting for an ARP answer are
 * dropped, and segments go with their last blocks. */
static void settle(void)
{
	for (uint64_t ms = 0; ms < SETTLE_MS && anything_left(); ms += 10000)
		clock_advance(10000, 1000);
}

static void record(struct reader *r, uint8_t op)
{
	uint8_t ai = 0, pi = 0, b0 = 0, b1 = 0, b2 = 0;
	uint16_t s16 = 0, l16 = 0, x16 = 0;
	uint32_t v32 = 0;
	uint64_t v64 = 0;
	/* Records that act as a process of an application name it first. */
	bool as_proc = op != OP_ATTACH && op != OP_HELLO && op != OP_POLL && op != OP_CLOCK &&
		       op != OP_LIMIT;
	if (as_proc && (!take_u8(r, &ai) || !take_u8(r, &pi)))
		return;
	struct fuzz_app *fa = &apps[ai % FUZZ_APPS];
	struct fuzz_proc *fp = fa->live ? proc_of(fa, pi) : NULL;
	switch (op) {
	case OP_ATTACH:
		if (take_u8(r, &b0))
			app_attach(b0);
		return;
	case OP_HELLO:
		app_hello_raw(r);
		return;
	case OP_POLL:
		if (take_u8(r, &b0))
			worker_round(b0 % NB_WORKERS);
		return;
	case OP_CLOCK:
		if (take_u16(r, &l16))
			clock_advance(l16 % 4096, l16 % 4096 / 64 + 1);
		return;
	case OP_LIMIT:
		if (take_u8(r, &b0) && take_u32(r, &v32)) {
			enum chan_limit k = (enum chan_limit)(b0 % CHAN_LIMIT_COUNT);
			uint32_t most = k == CHAN_LIMIT_SOCKS_PER_APP ? MAX_SOCKS_RAISED
								    : limit_bounds.max[k];
			FUZZ_CHECK(chan_limit_set(ch, k, v32 % (most + 1u)) == 0);
		}
		return;
	case OP_JOIN:
		if (take_u8(r, &b0) && fa->live)
			app_join(fa, pi, b0);
		return;
	case OP_POKE:
		if (take_u8(r, &b0) && take_u16(r, &s16) && take_u8(r, &b1) && take_u32(r, &v32) &&
		    fa->live)
			poke(fa, b0, s16, b1, v32);
		return;
	default:
		break;
	}
	switch (op) {
	case OP_EXIT:
		if (fp != NULL)
			proc_exit(fa, fp);
		break;
	case OP_CMD:
		if (take_u8(r, &b0) && take_u64(r, &v64) && fp != NULL)
			cmd_put(fa, fp, b0, v64);
		break;
	case OP_CALL:
		if (take_u8(r, &b0) && take_u8(r, &b1) && take_u8(r, &b2) && fp != NULL)
			app_call(fa, fp, b0, b1, b2, r);
		break;
	case OP_WRITE:
		if (take_u16(r, &s16) && take_u16(r, &l16) && fp != NULL)
			app_write(fa, fp, s16, l16);
		break;
	case OP_READ:
		if (take_u16(r, &s16) && take_u16(r, &l16) && fp != NULL)
			app_read(fa, fp, s16, l16);
		break;
	case OP_DGRAM:
		if (take_u16(r, &s16) && take_u16(r, &l16) && take_u16(r, &x16) &&
		    take_u8(r, &b0) && take_u8(r, &b1) && fp != NULL)
			app_dgram(fa, fp, s16, l16, x16, b0, b1);
		break;
	case OP_ACCEPT:
		if (take_u16(r, &s16) && fp != NULL)
			app_accept(fa, fp, s16);
		break;
	case OP_EVENTS:
		if (take_u8(r, &b0) && fp != NULL)
			app_events(fa, fp, b0);
		break;
	}
}

static void check_all_gone(void)
{
	struct chan_server_stats srv;
	struct chan_worker_stats wk;
	chan_stats(ch, &srv, &wk);
	FUZZ_CHECK(TAILQ_EMPTY(&ch->apps) && ch->napps == 0);
	if (srv.live_apps != 0 || srv.live_socks != 0 || srv.arena_bytes != 0)
		fprintf(stderr, "left over: %lu applications, %lu sockets, %lu arena bytes\n",
			(unsigned long)srv.live_apps, (unsigned long)srv.live_socks,
			(unsigned long)srv.arena_bytes);
	FUZZ_CHECK(srv.live_apps == 0 && srv.live_socks == 0 && srv.arena_bytes == 0);
	for (unsigned i = 0; i < CHAN_MAX_APPS; i++)
		FUZZ_CHECK(atomic_load(&ch->users[i].refs) == 0);
	for (unsigned w = 0; w < NB_WORKERS; w++) {
		struct stack *s = workers[w].stack;
		FUZZ_CHECK(s->tcp->nconns == 0 && s->udp->nsocks == 0);
		FUZZ_CHECK(ch->cw[w].napps == 0 && ch->cw[w].nbinds == 0);
		FUZZ_CHECK(TAILQ_EMPTY(&ch->cw[w].accept_list) && TAILQ_EMPTY(&ch->cw[w].udp_tx_list));
	}
	FUZZ_CHECK(rte_mempool_in_use_count(pool) == pool_baseline);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = {.p = data, .left = size};
	uint8_t op;
	while (take_u8(&r, &op))
		record(&r, op % OP_COUNT);
	for (unsigned i = 0; i < FUZZ_APPS; i++)
		for (unsigned k = 0; k < FUZZ_PROCS && apps[i].live; k++)
			if (apps[i].procs[k].fd >= 0)
				proc_exit(&apps[i], &apps[i].procs[k]);
	for (unsigned w = 0; w < NB_WORKERS; w++)
		worker_round(w);
	if (verbose) {
		struct chan_server_stats srv;
		struct chan_worker_stats wk;
		chan_stats(ch, &srv, &wk);
		fprintf(stderr, "attaches %lu joins %lu refused %lu bad_msgs %lu | cmds %lu bad %lu "
			"calls %lu accepts %lu events %lu udp_tx %lu err %lu\n",
			(unsigned long)srv.attaches, (unsigned long)srv.joins,
			(unsigned long)srv.refused, (unsigned long)srv.bad_msgs,
			(unsigned long)wk.cmds, (unsigned long)wk.bad_cmds, (unsigned long)wk.calls,
			(unsigned long)wk.accepts, (unsigned long)wk.events, (unsigned long)wk.udp_tx,
			(unsigned long)wk.udp_tx_err);
	}
	settle();
	check_all_gone();
	for (unsigned k = 0; k < CHAN_LIMIT_COUNT; k++)
		FUZZ_CHECK(chan_limit_set(ch, (enum chan_limit)k, limits_default[k]) == 0);
	return 0;
}

static void fuzz_cleanup(void)
{
	chan_destroy(ch);
	for (unsigned w = 0; w < NB_WORKERS; w++) {
		stack_destroy(workers[w].stack);
		close(workers[w].wake_fd);
	}
	rte_mempool_free(pool);
	fuzz_eal_cleanup();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	verbose = getenv("FUZZ_CHAN_VERBOSE") != NULL;
	fuzz_eal_init("fuzz_chan");
	atexit(fuzz_cleanup);
	pool = rte_pktmbuf_pool_create("fuzz_chan_pool", POOL_MBUFS, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	FUZZ_CHECK(pool != NULL);
	for (unsigned w = 0; w < NB_WORKERS; w++) {
		struct stack_params p;
		inet_params_default(&p);
		p.id = w;
		p.pool = pool;
		p.ops.xmit = fuzz_xmit;
		struct stack *s = stack_create(&p);
		FUZZ_CHECK(s != NULL);
		FUZZ_CHECK(netcfg_iface_add(&s->cfg, 0, "port0", &mac_port, 1500) == 0);
		FUZZ_CHECK(stack_addr_add(s, 0, ADDR, 24, false) == 0);
		FUZZ_CHECK(neigh_add_static(s->neigh, 0, INET_ADDR_V4(PEER), &mac_peer) == 0);
		workers[w].index = w;
		workers[w].stack = s;
		workers[w].wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		FUZZ_CHECK(workers[w].wake_fd >= 0);
	}
	snprintf(sock_path, sizeof(sock_path), "/tmp/dps-fuzz-chan.%ld.sock", (long)getpid());
	struct chan_config cfg = {.max_socks = MAX_SOCKS, .arena_mb = ARENA_MB};
	char err[256];
	ch = chan_create(&cfg, workers, NB_WORKERS, sock_path, err, sizeof(err));
	if (ch == NULL) {
		fprintf(stderr, "chan_create: %s\n", err);
		abort();
	}
	/* Nobody connects there (the harness passes its connections to chan_hello): gone at
	 * once, so that a crashed run leaves nothing in /tmp. */
	unlink(sock_path);
	/* Segments for MAX_SOCKS sockets, not for the daemon's default 16384: runs stay fast. */
	FUZZ_CHECK(chan_limit_set(ch, CHAN_LIMIT_SOCKS_PER_APP, MAX_SOCKS) == 0);
	chan_limits_read(ch, limits_default, &limit_bounds);
	pool_baseline = rte_mempool_in_use_count(pool);
	return 0;
}
