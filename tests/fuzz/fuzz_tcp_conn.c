/* libFuzzer target: TCP connections driven by sequences of peer segments, clock steps and
 * owner calls (lwIP's test/fuzz idea, aimed at the state machine). Each input starts with a
 * listener on :80 (backlog 2, so the SYN-cookie path is reachable; on ::, so it takes both
 * families) and an active open from 10.0.0.2:6000 to the peer 10.0.0.1:5000. The peer remembers the last segment the
 * stack sent on each of its four ports, so fuzzed sequence and acknowledgement numbers are
 * offsets from what a real peer would send, and deep states are reachable.
 *
 * Records (until the input ends):
 *   0 SEG   who:u8 flags:u8 dseq:be16 dack:be16 window:be16 tos:u8 optlen:u8 opts[optlen]
 *           len:be16 — the peer on port (who & 3: 5000 is the active open's peer, 40000-
 *           40002 talk to the listener) sends flags with seq = its next seq + (int16)dseq
 *           and ack = the stack's last seq+len + (int16)dack; len bytes of payload (≤ 1460).
 *           With dseq 0 the peer's next seq advances. who & 4: over IPv6, from
 *           2001:db8::1 to 2001:db8::2 (issue 17), otherwise over IPv4.
 *   1 CLOCK ms:be16 — advance the virtual clock by ms % 4096, in at most 64 ticks.
 *   2 APP   what:u8 arg:be16 — accept, send arg bytes, read up to arg bytes, shutdown
 *           (arg & 3), close, or connect again, on owned connection (arg >> 8) & 3.
 *   3 SACK  who:u8 dack:be16 n:u8 then n (at most 4) times back:be16 len:be16 — the peer
 *           on port (who & 3) sends a pure ACK (ack as for SEG) with SACK blocks
 *           [stack's last seq+len - back, + len): loss recovery (RACK, PRR, the sent map)
 *           sees holes, D-SACKs and bogus blocks where a real receiver would put them.
 * After every record each connection's sent map must agree with its sequence space (it
 * covers [SND.UNA, SND.MAX) and its SACKed, lost and in-flight bytes add up to that).
 * After each input every owned socket is closed, the clock runs for an hour of virtual time
 * (every retransmission, FIN-WAIT-2 and TIME-WAIT expires), and the harness aborts unless the
 * stack holds no connection and every mbuf is back in the pool. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "fuzz_check.h"
#include "fuzz_eal.h"
#include "stack/stack.h"
#include "tcp/tcp.h"
#include "tcp/tcp_priv.h"
#include "../../src/wire/bytes.h"
#include "../../src/wire/eth.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/ipv4.h"
#include "../../src/wire/ipv6.h"
#include "../../src/wire/tcp.h"
#include "inet/inet.h"
#include "stack/netcfg6.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

#define IP4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define ADDR IP4(10, 0, 0, 2)
#define PEER IP4(10, 0, 0, 1)
#define POOL_MBUFS 1023u
static const struct inet_addr addr6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
static const struct inet_addr peer6 = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
#define MAX_OWNED 4
#define SETTLE_MS (3600u * 1000u)

enum { OP_SEG, OP_CLOCK, OP_APP, OP_SACK, OP_COUNT };
enum { APP_ACCEPT, APP_SEND, APP_RECV, APP_SHUTDOWN, APP_CLOSE, APP_CONNECT, APP_COUNT };

static const struct eth_addr mac_port = {{0x02, 0x00, 0x00, 0x00, 0x00, 0x00}};
static const struct eth_addr mac_peer = {{0x02, 0xaa, 0x00, 0x00, 0x00, 0x01}};
static const uint16_t peer_ports[4] = {5000, 40000, 40001, 40002};

static struct rte_mempool *pool;
static struct stack *stk;
static unsigned pool_baseline;

/* What the peer on each port last heard, and its own next sequence number. */
struct peer_view {
	uint32_t stack_next;    /* the stack's last seq + its length */
	uint32_t my_next;
	uint32_t tsval;
};
static struct peer_view views[4];
static struct tcp_conn *listener;
static struct tcp_conn *owned[MAX_OWNED];

static void fuzz_notify(struct sock *sk, uint32_t events)
{
	(void)sk;
	(void)events;
}

static const struct sock_owner owner = {.notify = fuzz_notify};

static int view_of_port(uint16_t port)
{
	for (int i = 0; i < 4; i++)
		if (peer_ports[i] == port)
			return i;
	return -1;
}

/* Every frame the stack sends: checked as a peer would, then noted and freed. */
static void fuzz_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	(void)ctx;
	(void)port;
	FUZZ_CHECK(m->nb_segs == 1);
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = rte_pktmbuf_data_len(m);
	struct eth_repr eth;
	FUZZ_CHECK(eth_parse(f, len, &eth) == WIRE_OK);
	const uint8_t *l3 = f + ETH_HDR_LEN, *l4 = NULL;
	size_t l4_len = 0;
	if (eth.ethertype == ETH_TYPE_IPV4) {
		struct ip4_repr ip;
		FUZZ_CHECK(ip4_parse(l3, len - ETH_HDR_LEN, true, &ip) == WIRE_OK);
		if (ip.proto == IP4_PROTO_TCP) {
			l4 = l3 + ip.hdr_len;
			l4_len = ip.total_len - ip.hdr_len;
			FUZZ_CHECK(tcp_checksum(ip.src, ip.dst, l4, l4_len) == 0);
		}
	} else if (eth.ethertype == ETH_TYPE_IPV6) {
		struct ip6_repr ip;
		FUZZ_CHECK(ip6_parse(l3, len - ETH_HDR_LEN, &ip) == WIRE_OK);
		if (ip.next_header == IP6_NH_TCP) {
			l4 = l3 + IP6_HDR_LEN;
			l4_len = ip.payload_len;
			uint32_t sum = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_TCP,
							 (uint32_t)l4_len);
			FUZZ_CHECK(wire_csum_finish(wire_csum_add(sum, l4, l4_len)) == 0);
		}
	}
	if (l4 != NULL) {
		struct tcp_repr th;
		FUZZ_CHECK(tcp_parse(l4, l4_len, &th) == WIRE_OK);
		int v = view_of_port(th.dst_port);
		if (v >= 0 && !(th.flags & TCP_FLAG_RST)) {
			views[v].stack_next = th.seq + (uint32_t)(l4_len - th.hdr_len) +
					      !!(th.flags & TCP_FLAG_SYN) + !!(th.flags & TCP_FLAG_FIN);
			if (th.options.has_timestamps)
				views[v].tsval = th.options.tsval;
		}
	}
	rte_pktmbuf_free(m);
}

static void feed_segment(unsigned who, bool v6, uint8_t flags, int16_t dseq, int16_t dack,
			 uint16_t window, uint8_t tos, const uint8_t *opts, size_t optlen,
			 uint16_t paylen)
{
	static uint8_t frame[ETH_HDR_LEN + IP6_HDR_LEN + TCP_HDR_MAX_LEN + 1500];
	struct peer_view *v = &views[who];
	uint16_t sport = peer_ports[who];
	uint16_t dport = who == 0 ? 6000 : 80;
	uint8_t *ip = frame + ETH_HDR_LEN;
	size_t ip_len = v6 ? IP6_HDR_LEN : IP4_HDR_MIN_LEN;
	uint8_t *th = ip + ip_len;
	size_t hdr = TCP_HDR_MIN_LEN + ((optlen + 3) & ~(size_t)3);
	if (paylen > 1460)
		paylen = 1460;
	memset(th, 0, hdr);
	wire_put_be16(th + TCP_OFF_SRC_PORT, sport);
	wire_put_be16(th + TCP_OFF_DST_PORT, dport);
	wire_put_be32(th + TCP_OFF_SEQ, v->my_next + (uint32_t)(int32_t)dseq);
	wire_put_be32(th + TCP_OFF_ACK, v->stack_next + (uint32_t)(int32_t)dack);
	th[TCP_OFF_DATA_OFF] = (uint8_t)((hdr / 4) << 4);
	th[TCP_OFF_FLAGS] = flags;
	wire_put_be16(th + TCP_OFF_WINDOW, window);
	memcpy(th + TCP_HDR_MIN_LEN, opts, optlen);
	for (size_t i = 0; i < paylen; i++)
		th[hdr + i] = (uint8_t)i;
	const struct inet_addr src = v6 ? peer6 : inet_addr_v4(PEER);
	const struct inet_addr dst = v6 ? addr6 : inet_addr_v4(ADDR);
	uint32_t sum = inet_addr_csum_pseudo(&src, &dst, IP4_PROTO_TCP, (uint32_t)(hdr + paylen));
	wire_put_be16(th + TCP_OFF_CSUM, wire_csum_finish(wire_csum_add(sum, th, hdr + paylen)));
	if (v6) {
		struct ip6_repr r = {.tclass = tos, .payload_len = (uint16_t)(hdr + paylen),
				     .next_header = IP6_NH_TCP, .hop_limit = 64,
				     .src = inet_addr_to_v6(&src), .dst = inet_addr_to_v6(&dst)};
		FUZZ_CHECK(ip6_build(ip, IP6_HDR_LEN, &r) == IP6_HDR_LEN);
	} else {
		struct ip4_repr r = {.tos = tos,
				     .total_len = (uint16_t)(IP4_HDR_MIN_LEN + hdr + paylen),
				     .id = 1, .df = true, .ttl = 64, .proto = IP4_PROTO_TCP,
				     .src = PEER, .dst = ADDR, .hdr_len = IP4_HDR_MIN_LEN};
		FUZZ_CHECK(ip4_build(ip, IP4_HDR_MIN_LEN, &r) == IP4_HDR_MIN_LEN);
	}
	struct eth_repr e = {.dst = mac_port, .src = mac_peer,
			     .ethertype = v6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4};
	eth_build(frame, ETH_HDR_LEN, &e);
	size_t flen = ETH_HDR_LEN + ip_len + hdr + paylen;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	if (m == NULL)
		return;
	memcpy(rte_pktmbuf_append(m, (uint16_t)flen), frame, flen);
	if (dseq == 0)
		v->my_next += paylen + !!(flags & TCP_FLAG_SYN) + !!(flags & TCP_FLAG_FIN);
	stack_input(stk, 0, m);
}

static void clock_advance(uint64_t ms, uint64_t step)
{
	for (uint64_t t = 0; t < ms; t += step) {
		stk->now_us += step * 1000;
		stack_tick_transport(stk, stk->now_us / 1000);
	}
}

static void app_op(uint8_t what, uint16_t arg)
{
	static uint8_t buf[65536];
	unsigned i = (arg >> 8) & (MAX_OWNED - 1);
	struct tcp_conn *c = owned[i];
	switch (what % APP_COUNT) {
	case APP_ACCEPT:
		if (c == NULL)
			owned[i] = tcp_accept(listener, &owner);
		break;
	case APP_SEND:
		if (c != NULL) {
			for (size_t k = 0; k < arg; k++)
				buf[k] = (uint8_t)k;
			(void)tcp_send(c, buf, arg);
		}
		break;
	case APP_RECV:
		if (c != NULL)
			(void)tcp_recv(c, buf, arg);
		break;
	case APP_SHUTDOWN:
		if (c != NULL)
			(void)tcp_shutdown(c, arg & 3);
		break;
	case APP_CLOSE:
		if (c != NULL) {
			tcp_close(c);
			owned[i] = NULL;
		}
		break;
	case APP_CONNECT:
		if (c == NULL) {
			struct tcp_sockopts o;
			tcp_sockopts_default(&o);
			o.ecn = arg & 1;
			o.nodelay = arg & 2;
			views[0] = (struct peer_view){.my_next = views[0].my_next + 100000};
			if (tcp_connect(stk, INET_ADDR_V4(0), 6000, INET_ADDR_V4(PEER), 5000, &o,
				&owner, &owned[i]) != 0)
				owned[i] = NULL;
		}
		break;
	}
}

/* A pure ACK with SACK blocks given back from what the peer last heard (OP_SACK). */
static void feed_sack(unsigned who, int16_t dack, const uint8_t *blocks, unsigned n)
{
	uint8_t opts[2 + 2 + 8 * 4] = {1, 1, 5, (uint8_t)(2 + 8 * n)}; /* NOP NOP SACK len */
	uint32_t top = views[who].stack_next;
	for (unsigned k = 0; k < n; k++) {
		uint32_t left = top - wire_get_be16(blocks + 4 * k);
		wire_put_be32(opts + 4 + 8 * k, left);
		wire_put_be32(opts + 8 + 8 * k, left + wire_get_be16(blocks + 4 * k + 2));
	}
	feed_segment(who, false, TCP_FLAG_ACK, 0, dack, 65535, 0, opts, 4 + 8 * n, 0);
}

/* The sent map covers [SND.UNA, SND.MAX), and its states add up (tcp_sentmap.h). */
static int check_sentmap(const struct tcp_conn *c, void *arg)
{
	(void)arg;
	const struct tcp_sentmap *sm = &c->sm;
	if (sm->r == NULL)
		return 0;
	if (sm->n == 0) {
		FUZZ_CHECK(sm->in_flight == 0 && sm->lost == 0 && sm->sacked == 0);
		return 0;
	}
	uint32_t head = tcp_sm_at(sm, 0)->seq;
	FUZZ_CHECK(head == c->snd_una);
	FUZZ_CHECK(tcp_sm_top(sm) == c->snd_max);
	FUZZ_CHECK(sm->sacked + sm->lost + sm->in_flight == c->snd_max - head);
	FUZZ_CHECK(sm->retrans <= sm->in_flight);
	return 0;
}

/* What a connection that outlived the settle time looked like: the clue to the bug. */
static int print_leftover(const struct tcp_conn *c, void *arg)
{
	(void)arg;
	fprintf(stderr, "left over: %s flags %#x snd_una %u snd_nxt %u snd_max %u snd_wnd %u "
		"unsent %u rcv_nxt %u timers rtx %d delack %d keep %d retries %u probes %u\n",
		tcp_state_name(c->state), c->flags, c->snd_una, c->snd_nxt, c->snd_max, c->snd_wnd,
		tcp_unsent(c), c->rcv_nxt, tcp_timer_armed(c, TCP_T_RTX),
		tcp_timer_armed(c, TCP_T_DELACK), tcp_timer_armed(c, TCP_T_KEEP), c->retries,
		c->probes);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	o.rcvbuf = 8192; /* small windows: zero-window and trimming paths */
	o.sndbuf = 8192;
	memset(views, 0, sizeof(views));
	memset(owned, 0, sizeof(owned));
	for (unsigned i = 0; i < 4; i++)
		views[i].my_next = 1000u * (i + 1);
	struct inet_addr any = inet_addr_any(true);
	FUZZ_CHECK(tcp_listen(stk, &any, 80, 2, &o, &owner, &listener) == 0);
	FUZZ_CHECK(tcp_connect(stk, INET_ADDR_V4(0), 6000, INET_ADDR_V4(PEER), 5000, &o, &owner,
		&owned[0]) == 0);

	size_t at = 0;
	while (at < size) {
		uint8_t op = data[at++];
		switch (op % OP_COUNT) {
		case OP_SEG: {
			if (size - at < 10)
				goto done;
			const uint8_t *r = data + at;
			size_t optlen = r[9] > 40 ? 40 : r[9];
			at += 10;
			if (size - at < optlen + 2)
				goto done;
			const uint8_t *opts = data + at;
			at += optlen;
			uint16_t paylen = wire_get_be16(data + at);
			at += 2;
			feed_segment(r[0] & 3, r[0] & 4, r[1], (int16_t)wire_get_be16(r + 2),
				     (int16_t)wire_get_be16(r + 4), wire_get_be16(r + 6), r[8],
				     opts, optlen, paylen);
			break;
		}
		case OP_CLOCK:
			if (size - at < 2)
				goto done;
			/* At most 64 ticks per record: fine steps for short waits (delayed ACK,
			 * RTO), coarse ones for long waits, and the fuzzer stays fast. */
			{
				uint64_t ms = wire_get_be16(data + at) % 4096;
				clock_advance(ms, ms / 64 + 1);
			}
			at += 2;
			break;
		case OP_APP:
			if (size - at < 3)
				goto done;
			app_op(data[at], wire_get_be16(data + at + 1));
			at += 3;
			break;
		case OP_SACK: {
			if (size - at < 4)
				goto done;
			unsigned n = data[at + 3] % 5;
			if (size - at < 4 + 4 * (size_t)n)
				goto done;
			feed_sack(data[at] & 3, (int16_t)wire_get_be16(data + at + 1), data + at + 4,
				  n);
			at += 4 + 4 * (size_t)n;
			break;
		}
		}
		tcp_walk(stk, check_sentmap, NULL);
	}
done:
	for (unsigned i = 0; i < MAX_OWNED; i++)
		if (owned[i] != NULL)
			tcp_close(owned[i]);
	tcp_close(listener);
	clock_advance(SETTLE_MS, 1000);
	if (stk->tcp->nconns != 0)
		tcp_walk(stk, print_leftover, NULL);
	FUZZ_CHECK(stk->tcp->nconns == 0);
	FUZZ_CHECK(rte_mempool_in_use_count(pool) == pool_baseline);
	return 0;
}

static void fuzz_cleanup(void)
{
	stack_destroy(stk);
	rte_mempool_free(pool);
	fuzz_eal_cleanup();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_eal_init("fuzz_tcp_conn");
	atexit(fuzz_cleanup);
	pool = rte_pktmbuf_pool_create("fuzz_tcp_pool", POOL_MBUFS, 0, 0,
				       RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	FUZZ_CHECK(pool != NULL);
	struct stack_params p;
	inet_params_default(&p);
	p.pool = pool;
	p.ops.xmit = fuzz_xmit;
	stk = stack_create(&p);
	FUZZ_CHECK(stk != NULL);
	FUZZ_CHECK(netcfg_iface_add(&stk->cfg, 0, "port0", &mac_port, 1500) == 0);
	FUZZ_CHECK(stack_addr_add(stk, 0, ADDR, 24, false) == 0);
	FUZZ_CHECK(neigh_add_static(stk->neigh, 0, INET_ADDR_V4(PEER), &mac_peer) == 0);
	struct ip6_addr a6 = inet_addr_to_v6(&addr6);
	FUZZ_CHECK(netcfg6_addr_add(&stk->cfg, 0, &a6, 64, 0) == 0);
	FUZZ_CHECK(neigh_add_static(stk->neigh, 0, &peer6, &mac_peer) == 0);
	pool_baseline = rte_mempool_in_use_count(pool);
	return 0;
}
