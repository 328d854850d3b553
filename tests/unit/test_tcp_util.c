#include "test_tcp_util.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "stack/netcfg6.h"

struct tp_owner tp_owner_rec;

static void tp_owner_notify(struct sock *sk, uint32_t events)
{
	tp_owner_rec.events |= events;
	tp_owner_rec.calls++;
	tp_owner_rec.last = sk;
}

const struct sock_owner tp_owner = {.notify = tp_owner_notify};

#ifdef TP_IPV6
static const struct inet_addr tp_local = {{0x20, 0x01, 0x0d, 0xb8, [15] = 2}};
static const struct inet_addr tp_peer = {{0x20, 0x01, 0x0d, 0xb8, [15] = 1}};
#else
static const struct inet_addr tp_local = {{[10] = 0xff, [11] = 0xff, 10, 0, 0, 2}};
static const struct inet_addr tp_peer = {{[10] = 0xff, [11] = 0xff, 10, 0, 0, 1}};
#endif

const struct inet_addr *tp_local_addr(void)
{
	return &tp_local;
}

const struct inet_addr *tp_peer_addr(void)
{
	return &tp_peer;
}

const struct inet_addr *tp_any_addr(void)
{
	static struct inet_addr any;
	any = inet_addr_any(!inet_addr_is_v4(&tp_local));
	return &any;
}

int tp_setup(void **state)
{
	memset(&tp_owner_rec, 0, sizeof(tp_owner_rec));
	int rc = ts_setup(state);
#ifdef TP_IPV6
	struct ip6_addr a = inet_addr_to_v6(&tp_local);
	assert_int_equal(netcfg6_addr_add(&ts_s->cfg, 0, &a, 64, 0), 0);
	assert_int_equal(neigh_add_static(ts_s->neigh, 0, &tp_peer, &ts_mac_a), 0);
#endif
	return rc;
}

int tp_teardown(void **state)
{
	return ts_teardown(state);
}

void tp_advance(uint64_t ms)
{
	for (uint64_t i = 0; i < ms; i++) {
		ts_s->now_us = (ts_s->now_ms + 1) * 1000;
		/* As a worker does: TCP's timers every millisecond, all of them every 10. */
		if ((ts_s->now_ms + 1) % 10 == 0)
			stack_tick(ts_s, ts_s->now_ms + 1);
		else
			stack_tick_transport(ts_s, ts_s->now_ms + 1);
	}
}

void tp_peer_init(struct tp_peer *p)
{
	*p = (struct tp_peer){.port = TP_PPORT, .snd_nxt = TP_PEER_ISN, .window = 65535,
			      .tsval = 5000};
}

struct tcp_options tp_linux_syn_opts(const struct tp_peer *p)
{
	return (struct tcp_options){
		.has_mss = true,
		.mss = 1460,
		.has_wscale = true,
		.wscale = 7,
		.sack_permitted = true,
		.has_timestamps = true,
		.tsval = p->tsval,
	};
}

void tp_send_at(struct tp_peer *p, uint32_t seq, uint32_t ack, uint8_t flags, const void *data,
		size_t len, const struct tcp_options *opts)
{
	static uint8_t seg[IP4_MAX_LEN];
	static uint8_t dgram[IP4_MAX_LEN];
	struct tcp_repr th = {
		.src_port = p->port,
		.dst_port = TP_LPORT,
		.seq = seq,
		.ack = ack,
		.flags = flags,
		.window = p->window,
	};
	if (opts != NULL) {
		th.options = *opts;
	} else if (p->ts) {
		th.options.has_timestamps = true;
		th.options.tsval = p->tsval;
		th.options.tsecr = p->tsecr;
	}
	size_t hl = tcp_build(seg, sizeof(seg), &th);
	assert_true(hl > 0);
	if (len > 0)
		memcpy(seg + hl, data, len);
	uint32_t sum = inet_addr_csum_pseudo(&tp_peer, &tp_local, IP4_PROTO_TCP,
					     (uint32_t)(hl + len));
	wire_put_be16(seg + TCP_OFF_CSUM, wire_csum_finish(wire_csum_add(sum, seg, hl + len)));
#ifdef TP_IPV6
	static uint8_t frame[ETH_HDR_LEN + IP4_MAX_LEN];
	struct ip6_repr ip6 = {.tclass = p->tos, .payload_len = (uint16_t)(hl + len),
			       .next_header = IP6_NH_TCP, .hop_limit = 64,
			       .src = inet_addr_to_v6(&tp_peer), .dst = inet_addr_to_v6(&tp_local)};
	assert_int_equal(ip6_build(dgram, sizeof(dgram), &ip6), IP6_HDR_LEN);
	memcpy(dgram + IP6_HDR_LEN, seg, hl + len);
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV6, dgram,
				 IP6_HDR_LEN + hl + len);
	ts_input_frame(0, frame, fl);
	return;
#endif
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_TCP);
	ip.payload = seg;
	ip.len = hl + len;
	ip.tos = p->tos;
	ip.df = true;
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	ts_input_ip(0, dgram, n);
}

void tp_send(struct tp_peer *p, uint8_t flags, const void *data, size_t len,
	     const struct tcp_options *opts)
{
	tp_send_at(p, p->snd_nxt, p->rcv_nxt, flags, data, len, opts);
	p->snd_nxt += (uint32_t)len + !!(flags & TCP_FLAG_SYN) + !!(flags & TCP_FLAG_FIN);
}

#ifdef TP_IPV6
/* Frame i as a TCP segment in IPv6 from the stack's address to the peer's. */
static void tp_parse6(unsigned i, struct tp_seg *g)
{
	struct ip6_repr ip;
	const uint8_t *l4 = ts_expect_ip6(i, 0, &ts_mac_a, &ip);
	assert_int_equal(ip.next_header, IP6_NH_TCP);
	assert_memory_equal(ip.src.b, tp_local.b, 16);
	assert_memory_equal(ip.dst.b, tp_peer.b, 16);
	uint32_t sum = inet_addr_csum_pseudo(&tp_local, &tp_peer, IP4_PROTO_TCP, ip.payload_len);
	assert_int_equal(wire_csum_finish(wire_csum_add(sum, l4, ip.payload_len)), 0);
	assert_int_equal(tcp_parse(l4, ip.payload_len, &g->th), WIRE_OK);
	/* IPv6 is never fragmented on the way (RFC 8200 §5): what DF says in IPv4. */
	g->ip = (struct ip4_repr){.tos = ip.tclass, .ttl = ip.hop_limit, .proto = IP4_PROTO_TCP,
				  .df = true};
	g->len = (uint32_t)(ip.payload_len - g->th.hdr_len);
	memcpy(g->data, l4 + g->th.hdr_len, g->len);
}
#endif

unsigned tp_collect(struct tp_seg *out, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < ts_nframes; i++) {
#ifdef TP_IPV6
		assert_true(n < max);
		tp_parse6(i, &out[n++]);
		continue;
#endif
		struct ts_pkt pkt;
		ts_expect_ip(i, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_TCP, &pkt);
		assert_int_equal(tcp_checksum(TS_ADDR0, TS_HOST_A, pkt.l4, pkt.l4_len), 0);
		assert_true(n < max);
		struct tp_seg *g = &out[n++];
		assert_int_equal(tcp_parse(pkt.l4, pkt.l4_len, &g->th), WIRE_OK);
		g->ip = pkt.ip;
		g->len = (uint32_t)(pkt.l4_len - g->th.hdr_len);
		memcpy(g->data, pkt.l4 + g->th.hdr_len, g->len);
	}
	ts_clear();
	return n;
}

void tp_expect_one(struct tp_seg *seg)
{
	static struct tp_seg segs[TS_MAX_FRAMES];
	unsigned n = tp_collect(segs, TS_MAX_FRAMES);
	assert_int_equal(n, 1);
	*seg = segs[0];
}

void tp_expect_none(void)
{
	assert_int_equal(ts_nframes, 0);
}

struct tcp_conn *tp_listen(unsigned backlog)
{
	struct tcp_sockopts o;
	tcp_sockopts_default(&o);
	struct tcp_conn *l;
	struct inet_addr any = inet_addr_any(!inet_addr_is_v4(&tp_local));
	assert_int_equal(tcp_listen(ts_s, &any, TP_LPORT, backlog, &o, &tp_owner, &l), 0);
	return l;
}

/* The peer takes note of what the stack's segment says. */
static void tp_peer_learn(struct tp_peer *p, const struct tp_seg *g)
{
	p->rcv_nxt = g->th.seq + g->len + !!(g->th.flags & TCP_FLAG_SYN) +
		     !!(g->th.flags & TCP_FLAG_FIN);
	if (g->th.options.has_timestamps)
		p->tsecr = g->th.options.tsval;
}

struct tcp_conn *tp_open_passive_opts(struct tp_peer *p, const struct tcp_options *syn_opts)
{
	struct tcp_conn *l = tp_listen(16);
	struct tcp_options none = {0};
	p->ts = syn_opts != NULL && syn_opts->has_timestamps;
	tp_send(p, TCP_FLAG_SYN, NULL, 0, syn_opts != NULL ? syn_opts : &none);
	struct tp_seg g;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_SYN | TCP_FLAG_ACK);
	tp_peer_learn(p, &g);
	if (syn_opts != NULL && syn_opts->has_wscale)
		p->wscale = syn_opts->wscale;
	tp_send(p, TCP_FLAG_ACK, NULL, 0, NULL);
	tp_expect_none();
	struct tcp_conn *c = tcp_accept(l, &tp_owner);
	assert_non_null(c);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	return c;
}

struct tcp_conn *tp_open_passive(struct tp_peer *p)
{
	struct tcp_options o = tp_linux_syn_opts(p);
	return tp_open_passive_opts(p, &o);
}

struct tcp_conn *tp_connect(const struct tcp_sockopts *o, uint16_t pport, struct tp_seg *syn)
{
	struct tcp_sockopts def;
	if (o == NULL) {
		tcp_sockopts_default(&def);
		o = &def;
	}
	struct tcp_conn *c;
	struct inet_addr any = inet_addr_any(!inet_addr_is_v4(&tp_local));
	assert_int_equal(tcp_connect(ts_s, &any, TP_LPORT, &tp_peer, pport, o, &tp_owner, &c), 0);
	tp_expect_one(syn);
	return c;
}

struct tcp_conn *tp_open_active(struct tp_peer *p, const struct tcp_options *syn_opts)
{
	struct tp_seg g;
	struct tcp_conn *c = tp_connect(NULL, p->port, &g);
	assert_int_equal(g.th.flags & (TCP_FLAG_SYN | TCP_FLAG_ACK), TCP_FLAG_SYN);
	tp_peer_learn(p, &g);
	struct tcp_options none = {0};
	p->ts = syn_opts != NULL && syn_opts->has_timestamps && g.th.options.has_timestamps;
	if (syn_opts != NULL && syn_opts->has_timestamps) {
		struct tcp_options so = *syn_opts;
		so.tsecr = g.th.options.tsval;
		tp_send(p, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, &so);
	} else {
		tp_send(p, TCP_FLAG_SYN | TCP_FLAG_ACK, NULL, 0, syn_opts != NULL ? syn_opts : &none);
	}
	if (syn_opts != NULL && syn_opts->has_wscale)
		p->wscale = syn_opts->wscale;
	tp_expect_one(&g);
	assert_int_equal(g.th.flags, TCP_FLAG_ACK);
	tp_peer_learn(p, &g);
	assert_int_equal(tcp_conn_state(c), TCP_ESTABLISHED);
	return c;
}

void tp_quickack_spent(struct tcp_conn *c)
{
	c->flags |= TCPF_DATA_SEEN;
	c->quickacks = 0;
	c->rcv_data_ms = ts_s->now_ms;
}
