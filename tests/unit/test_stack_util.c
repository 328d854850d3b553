/* See test_stack_util.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "test_eal.h"
#include "test_stack_util.h"
#include "inet/inet.h"

const struct eth_addr ts_mac_port[2] = {
	{{0x02, 0x00, 0x00, 0x00, 0x00, 0x00}},
	{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}},
};
const struct eth_addr ts_mac_a = {{0x02, 0xaa, 0x00, 0x00, 0x00, 0x01}};
const struct eth_addr ts_mac_b = {{0x02, 0xbb, 0x00, 0x00, 0x00, 0x01}};
const struct eth_addr ts_mac_other = {{0x02, 0xcc, 0x00, 0x00, 0x00, 0x01}};
const struct eth_addr ts_mac_zero;

struct stack *ts_s;
struct ts_frame ts_frames[TS_MAX_FRAMES];
unsigned ts_nframes;

static unsigned ts_baseline;

void ts_clear(void)
{
	ts_nframes = 0;
}

/* The capture: checks the mbuf, copies it out and frees it at once, so no test holds
 * mbufs of the stack. */
static void ts_xmit(void *ctx, uint16_t port, struct rte_mbuf *m)
{
	const char *why = NULL;
	(void)ctx;
	int bad = rte_mbuf_check(m, 1, &why);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	bool fits = ts_nframes < TS_MAX_FRAMES && len <= TS_FRAME_MAX;
	if (bad == 0 && fits) {
		struct ts_frame *f = &ts_frames[ts_nframes++];
		const void *p = rte_pktmbuf_read(m, 0, len, f->data);
		if (p != f->data)
			memcpy(f->data, p, len);
		f->port = port;
		f->len = len;
		f->nb_segs = m->nb_segs;
		f->ol_flags = m->ol_flags & RTE_MBUF_F_TX_OFFLOAD_MASK;
		f->tso_segsz = m->tso_segsz;
	}
	rte_pktmbuf_free(m);
	if (bad != 0)
		fail_msg("xmit: broken mbuf: %s", why);
	if (!fits)
		fail_msg("xmit: capture full or frame of %u bytes too long", len);
}

void ts_params(struct stack_params *p)
{
	inet_params_default(p);
	p->pool = test_pool();
	p->ops.xmit = ts_xmit;
	p->ops.ctx = NULL;
}

void ts_static_neigh(uint16_t port, uint32_t ip, const struct eth_addr *mac)
{
	assert_int_equal(neigh_add_static(ts_s->neigh, port, INET_ADDR_V4(ip), mac), 0);
}

static void ts_make(const struct stack_params *p, bool neighbours)
{
	ts_s = stack_create(p);
	assert_non_null(ts_s);
	assert_int_equal(netcfg_iface_add(&ts_s->cfg, 0, "port0", &ts_mac_port[0], TS_MTU), 0);
	assert_int_equal(netcfg_iface_add(&ts_s->cfg, 1, "port1", &ts_mac_port[1], TS_MTU), 0);
	assert_int_equal(stack_addr_add(ts_s, 0, TS_ADDR0, 24, false), 0);
	assert_int_equal(stack_addr_add(ts_s, 1, TS_ADDR1, 24, false), 0);
	if (neighbours) {
		ts_static_neigh(0, TS_HOST_A, &ts_mac_a);
		ts_static_neigh(1, TS_HOST_B, &ts_mac_b);
	}
	ts_clear();
}

static int ts_setup_common(bool neighbours)
{
	struct stack_params p;
	ts_baseline = test_pool_in_use();
	ts_params(&p);
	ts_make(&p, neighbours);
	return 0;
}

int ts_setup(void **state)
{
	(void)state;
	return ts_setup_common(true);
}

int ts_setup_bare(void **state)
{
	(void)state;
	return ts_setup_common(false);
}

void ts_restart(const struct stack_params *p, bool neighbours)
{
	stack_destroy(ts_s);
	ts_s = NULL;
	ts_make(p, neighbours);
}

int ts_teardown(void **state)
{
	(void)state;
	stack_destroy(ts_s);
	ts_s = NULL;
	ts_clear();
	unsigned in_use = test_pool_in_use();
	if (in_use != ts_baseline)
		fail_msg("mbuf leak: %u in use, %u before the test", in_use, ts_baseline);
	return 0;
}

void ts_advance(uint64_t ms)
{
	uint64_t t = ts_s->now_ms, end = t + ms;
	while (t < end) {
		t = t + 100 < end ? t + 100 : end;
		stack_tick(ts_s, t);
	}
}

/* --- building --- */

uint8_t ts_pattern(size_t i)
{
	return (uint8_t)(i * 7u + (i >> 8) * 3u + 1u);
}

struct ts_ip ts_ip_of(uint32_t src, uint32_t dst, uint8_t proto)
{
	struct ts_ip ip = {.src = src, .dst = dst, .id = 0x1234, .ttl = 64, .proto = proto};
	return ip;
}

void ts_ip_fix_csum(uint8_t *dgram)
{
	size_t hl = (size_t)(dgram[IP4_OFF_VER_IHL] & 0xf) * 4;
	wire_put_be16(dgram + IP4_OFF_CSUM, 0);
	wire_put_be16(dgram + IP4_OFF_CSUM, wire_csum(dgram, hl));
}

size_t ts_ip_build(uint8_t *buf, size_t cap, const struct ts_ip *ip)
{
	size_t hl = IP4_HDR_MIN_LEN + ip->opt_len, total = hl + ip->len;
	assert_true(ip->opt_len % 4 == 0 && hl <= IP4_HDR_MAX_LEN);
	assert_true(total <= cap);
	memset(buf, 0, IP4_HDR_MIN_LEN);
	buf[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | hl / 4);
	buf[IP4_OFF_TOS] = ip->tos;
	wire_put_be16(buf + IP4_OFF_TOTAL_LEN, (uint16_t)total);
	wire_put_be16(buf + IP4_OFF_ID, ip->id);
	wire_put_be16(buf + IP4_OFF_FRAG, (uint16_t)((ip->df ? IP4_FLAG_DF : 0) |
						     (ip->mf ? IP4_FLAG_MF : 0) |
						     ip->frag_off / 8));
	buf[IP4_OFF_TTL] = ip->ttl;
	buf[IP4_OFF_PROTO] = ip->proto;
	wire_put_be32(buf + IP4_OFF_SRC, ip->src);
	wire_put_be32(buf + IP4_OFF_DST, ip->dst);
	if (ip->opt_len > 0)
		memcpy(buf + IP4_HDR_MIN_LEN, ip->opts, ip->opt_len);
	if (ip->len > 0)
		memcpy(buf + hl, ip->payload, ip->len);
	ts_ip_fix_csum(buf);
	return total;
}

size_t ts_icmp_build(uint8_t *buf, size_t cap, uint8_t type, uint8_t code, uint32_t rest,
		     const uint8_t *payload, size_t len)
{
	struct icmp4_repr ic = {.type = type, .code = code, .rest = rest};
	assert_true(ICMP4_HDR_LEN + len <= cap);
	assert_int_equal(icmp4_build_header(buf, cap, &ic), ICMP4_HDR_LEN);
	if (len > 0)
		memcpy(buf + ICMP4_HDR_LEN, payload, len);
	wire_put_be16(buf + ICMP4_OFF_CSUM, wire_csum(buf, ICMP4_HDR_LEN + len));
	return ICMP4_HDR_LEN + len;
}

size_t ts_echo_build(uint8_t *buf, size_t cap, uint8_t type, uint16_t id, uint16_t seq,
		     size_t len)
{
	static uint8_t payload[IP4_MAX_LEN];
	for (size_t i = 0; i < len; i++)
		payload[i] = ts_pattern(i);
	return ts_icmp_build(buf, cap, type, 0, (uint32_t)id << 16 | seq, payload, len);
}

size_t ts_echo_dgram(uint8_t *buf, size_t cap, uint32_t src, uint32_t dst, uint16_t id,
		     uint16_t seq, size_t len)
{
	static uint8_t icmp[IP4_MAX_LEN];
	struct ts_ip ip = ts_ip_of(src, dst, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, id, seq, len);
	return ts_ip_build(buf, cap, &ip);
}

size_t ts_eth_build(uint8_t *buf, const struct eth_addr *dst, const struct eth_addr *src,
		    uint16_t type, const uint8_t *payload, size_t len)
{
	struct eth_repr eth = {.dst = *dst, .src = *src, .ethertype = type};
	assert_int_equal(eth_build(buf, ETH_HDR_LEN, &eth), ETH_HDR_LEN);
	if (len > 0)
		memcpy(buf + ETH_HDR_LEN, payload, len);
	return ETH_HDR_LEN + len;
}

struct rte_mbuf *ts_mbuf(const uint8_t *buf, size_t len, size_t seg)
{
	struct rte_mbuf *head = NULL;
	size_t pos = 0;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
		assert_non_null(m);
		size_t n = len - pos;
		size_t room = rte_pktmbuf_tailroom(m);
		if (seg != 0 && n > seg)
			n = seg;
		if (n > room)
			n = room;
		char *d = rte_pktmbuf_append(m, (uint16_t)n);
		assert_non_null(d);
		memcpy(d, buf + pos, n);
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
		pos += n;
	} while (pos < len);
	return head;
}

void ts_input_frame(uint16_t port, const uint8_t *frame, size_t len)
{
	stack_input(ts_s, port, ts_mbuf(frame, len, 0));
}

void ts_input_ip(uint16_t port, const uint8_t *dgram, size_t len)
{
	static uint8_t frame[ETH_HDR_LEN + IP4_MAX_LEN];
	const struct eth_addr *src = port == 1 ? &ts_mac_b : &ts_mac_a;
	size_t n = ts_eth_build(frame, &ts_mac_port[port & 1], src, ETH_TYPE_IPV4, dgram, len);
	ts_input_frame(port, frame, n);
}

void ts_send(uint16_t port, const struct ts_ip *ip)
{
	static uint8_t dgram[IP4_MAX_LEN];
	size_t n = ts_ip_build(dgram, sizeof(dgram), ip);
	ts_input_ip(port, dgram, n);
}

void ts_input_arp(uint16_t port, const struct eth_addr *eth_dst, const struct arp_repr *arp)
{
	uint8_t body[ETH_MIN_FRAME_LEN - ETH_HDR_LEN] = {0};
	uint8_t frame[ETH_MIN_FRAME_LEN];
	assert_int_equal(arp_build(body, sizeof(body), arp), ARP_LEN);
	size_t n = ts_eth_build(frame, eth_dst, &arp->sha, ETH_TYPE_ARP, body, sizeof(body));
	ts_input_frame(port, frame, n);
}

unsigned ts_fragment(const uint8_t *dgram, size_t len, size_t frag_payload,
		     struct ts_blob *out, unsigned max)
{
	size_t hl = (size_t)(dgram[IP4_OFF_VER_IHL] & 0xf) * 4;
	uint16_t field = wire_get_be16(dgram + IP4_OFF_FRAG);
	size_t base = (size_t)(field & IP4_FRAG_OFF_MASK) * 8, pos = 0;
	unsigned n = 0;
	assert_true(frag_payload % 8 == 0 && frag_payload > 0);
	while (pos < len - hl) {
		size_t chunk = len - hl - pos < frag_payload ? len - hl - pos : frag_payload;
		bool last = pos + chunk == len - hl;
		size_t h = n == 0 ? hl : IP4_HDR_MIN_LEN;
		assert_true(n < max);
		struct ts_blob *b = &out[n++];
		memcpy(b->data, dgram, h);
		b->data[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | h / 4);
		memcpy(b->data + h, dgram + hl + pos, chunk);
		b->len = h + chunk;
		wire_put_be16(b->data + IP4_OFF_TOTAL_LEN, (uint16_t)b->len);
		uint16_t f = (uint16_t)((field & IP4_FLAG_DF) |
					(!last || (field & IP4_FLAG_MF) ? IP4_FLAG_MF : 0) |
					(base + pos) / 8);
		wire_put_be16(b->data + IP4_OFF_FRAG, f);
		ts_ip_fix_csum(b->data);
		pos += chunk;
	}
	return n;
}

/* --- parsing --- */

const uint8_t *ts_expect_ip6(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			     struct ip6_repr *ip)
{
	assert_true(i < ts_nframes);
	const struct ts_frame *f = &ts_frames[i];
	struct eth_repr eth;
	assert_int_equal(f->port, port);
	assert_int_equal(eth_parse(f->data, f->len, &eth), WIRE_OK);
	assert_int_equal(eth.ethertype, ETH_TYPE_IPV6);
	assert_memory_equal(&eth.dst, eth_dst, sizeof(*eth_dst));
	assert_int_equal(ip6_parse(f->data + ETH_HDR_LEN, f->len - ETH_HDR_LEN, ip), WIRE_OK);
	return f->data + ETH_HDR_LEN + IP6_HDR_LEN;
}

void ts_parse(unsigned i, struct ts_pkt *p)
{
	assert_true(i < ts_nframes);
	const struct ts_frame *f = &ts_frames[i];
	memset(p, 0, sizeof(*p));
	p->f = f;
	assert_true(f->port < 2);
	assert_true(f->len >= ETH_MIN_FRAME_LEN);
	assert_int_equal(eth_parse(f->data, f->len, &p->eth), WIRE_OK);
	assert_false(p->eth.vlan_tagged);
	assert_memory_equal(p->eth.src.b, ts_mac_port[f->port].b, ETH_ADDR_LEN);
	const uint8_t *l3 = f->data + ETH_HDR_LEN;
	size_t l3_len = f->len - ETH_HDR_LEN, used;
	if (p->eth.ethertype == ETH_TYPE_ARP) {
		p->is_arp = true;
		assert_int_equal(arp_parse(l3, l3_len, &p->arp), WIRE_OK);
		used = ARP_LEN;
	} else {
		assert_int_equal(p->eth.ethertype, ETH_TYPE_IPV4);
		p->is_ip = true;
		assert_int_equal(ip4_parse(l3, l3_len, true, &p->ip), WIRE_OK);
		p->l3 = l3;
		p->l4 = l3 + p->ip.hdr_len;
		p->l4_len = p->ip.total_len - p->ip.hdr_len;
		used = p->ip.total_len;
		if (p->ip.proto == IP4_PROTO_ICMP && !p->ip.mf && p->ip.frag_off == 0) {
			p->is_icmp = true;
			assert_int_equal(icmp4_parse(p->l4, p->l4_len, true, &p->icmp), WIRE_OK);
			p->icmp_data = p->l4 + ICMP4_HDR_LEN;
		}
	}
	/* Nothing but zero padding up to the Ethernet minimum. */
	size_t want = ETH_HDR_LEN + used < ETH_MIN_FRAME_LEN ? ETH_MIN_FRAME_LEN
							     : ETH_HDR_LEN + used;
	assert_int_equal(f->len, want);
	for (size_t k = ETH_HDR_LEN + used; k < f->len; k++)
		assert_int_equal(f->data[k], 0);
}

void ts_expect_arp(unsigned i, uint16_t port, uint16_t op, const struct eth_addr *eth_dst,
		   uint32_t spa, const struct eth_addr *tha, uint32_t tpa)
{
	struct ts_pkt p;
	ts_parse(i, &p);
	assert_true(p.is_arp);
	assert_int_equal(p.f->port, port);
	assert_memory_equal(p.eth.dst.b, eth_dst->b, ETH_ADDR_LEN);
	assert_int_equal(p.arp.op, op);
	assert_memory_equal(p.arp.sha.b, ts_mac_port[port].b, ETH_ADDR_LEN);
	assert_int_equal(p.arp.spa, spa);
	assert_memory_equal(p.arp.tha.b, tha->b, ETH_ADDR_LEN);
	assert_int_equal(p.arp.tpa, tpa);
}

void ts_expect_ip(unsigned i, uint16_t port, const struct eth_addr *eth_dst, uint32_t src,
		  uint32_t dst, uint8_t proto, struct ts_pkt *out)
{
	struct ts_pkt p;
	ts_parse(i, &p);
	assert_true(p.is_ip);
	assert_int_equal(p.f->port, port);
	assert_memory_equal(p.eth.dst.b, eth_dst->b, ETH_ADDR_LEN);
	assert_int_equal(p.ip.src, src);
	assert_int_equal(p.ip.dst, dst);
	assert_int_equal(p.ip.proto, proto);
	if (out != NULL)
		*out = p;
}

void ts_expect_icmp_error(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			  uint32_t src, uint32_t dst, uint8_t type, uint8_t code, uint32_t rest,
			  const uint8_t *orig, size_t orig_len)
{
	struct ts_pkt p;
	ts_expect_ip(i, port, eth_dst, src, dst, IP4_PROTO_ICMP, &p);
	assert_true(p.is_icmp);
	assert_int_equal(p.ip.hdr_len, IP4_HDR_MIN_LEN);
	assert_int_equal(p.ip.tos, 0xc0);
	assert_int_equal(p.ip.ttl, IP4_DEFAULT_TTL);
	assert_false(p.ip.df);
	assert_int_equal(p.icmp.type, type);
	assert_int_equal(p.icmp.code, code);
	assert_int_equal(p.icmp.rest, rest);
	size_t quote = orig_len < TS_ICMP_ERR_QUOTE_MAX ? orig_len : TS_ICMP_ERR_QUOTE_MAX;
	assert_int_equal(p.icmp.payload_len, quote);
	assert_memory_equal(p.icmp_data, orig, quote);
}

size_t ts_reassemble(unsigned first, unsigned n, uint16_t mtu, uint8_t *out, size_t cap,
		     struct ip4_repr *first_hdr)
{
	size_t pos = 0;
	struct ts_pkt p0;
	for (unsigned k = 0; k < n; k++) {
		struct ts_pkt p;
		ts_parse(first + k, &p);
		assert_true(p.is_ip);
		assert_true(p.ip.total_len <= mtu);
		if (k == 0)
			p0 = p;
		assert_int_equal(p.f->port, p0.f->port);
		assert_memory_equal(p.eth.dst.b, p0.eth.dst.b, ETH_ADDR_LEN);
		assert_int_equal(p.ip.id, p0.ip.id);
		assert_int_equal(p.ip.src, p0.ip.src);
		assert_int_equal(p.ip.dst, p0.ip.dst);
		assert_int_equal(p.ip.proto, p0.ip.proto);
		assert_int_equal(p.ip.ttl, p0.ip.ttl);
		assert_int_equal(p.ip.frag_off, pos);
		assert_int_equal(p.ip.mf, k + 1 < n);
		if (k + 1 < n)
			assert_int_equal(p.l4_len % 8, 0);
		assert_true(pos + p.l4_len <= cap);
		memcpy(out + pos, p.l4, p.l4_len);
		pos += p.l4_len;
	}
	if (first_hdr != NULL)
		*first_hdr = p0.ip;
	return pos;
}

/* --- counters --- */

void ts_expect_drop(enum stack_drop d, uint64_t n)
{
	for (unsigned k = 0; k < STACK_DROP_COUNT; k++) {
		uint64_t want = k == (unsigned)d ? n : 0;
		if (ts_s->drops[k] != want)
			fail_msg("drop counter %s is %llu, expected %llu", stack_drop_info[k].name,
				 (unsigned long long)ts_s->drops[k], (unsigned long long)want);
	}
}

void ts_expect_no_drops(void)
{
	for (unsigned k = 0; k < STACK_DROP_COUNT; k++)
		if (ts_s->drops[k] != 0)
			fail_msg("drop counter %s is %llu, expected 0", stack_drop_info[k].name,
				 (unsigned long long)ts_s->drops[k]);
}
