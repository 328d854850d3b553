/* IPv4 reassembly on real mbufs: orderings, the drop policy of ip4_frag.h, limits, expiry.
 * Every test starts and ends with the same number of mbufs in use. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "test_eal.h"
#include "test_rand.h"
#include "ip4/ip4_frag.h"
#include "../../src/wire/bytes.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/ipv4.h"

#define SRC_A 0x0a000001u  /* 10.0.0.1 */
#define SRC_B 0x0a000003u
#define DST_A 0x0a000002u
#define DST_B 0x0a000004u
#define COST TEST_POOL_DATA_ROOM  /* memory charged for a one-segment fragment */

static struct reass *r;
static unsigned baseline;
static uint8_t flat[IP4_MAX_LEN + 1];

/* One fragment to build: payload [off, off + len) of datagram pattern `seed`. */
struct frag {
	uint32_t src;
	uint32_t dst;
	uint16_t id;
	uint8_t proto;
	uint16_t off;
	uint16_t len;
	bool mf;
	bool df;
	uint8_t opt_len;     /* multiple of 4: router alert options */
	uint32_t seed;
	uint16_t seg_size;   /* 0: one segment, else segments of this many bytes */
};

static struct frag frag_of(uint16_t off, uint16_t len, bool mf)
{
	struct frag f = {
		.src = SRC_A, .dst = DST_A, .id = 0x1234, .proto = IP4_PROTO_UDP,
		.off = off, .len = len, .mf = mf, .seed = 1,
	};
	return f;
}

static uint8_t pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(i * 131u + (i >> 8) * 7u + seed * 29u + 3u);
}

/* Copies buf into a fresh mbuf chain of segments of seg bytes (0: one segment). */
static struct rte_mbuf *mbuf_from(const uint8_t *buf, uint32_t len, uint16_t seg)
{
	struct rte_mbuf *head = NULL;
	uint32_t pos = 0;

	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
		uint32_t n = seg ? RTE_MIN((uint32_t)seg, len - pos) : len;

		assert_non_null(m);
		memcpy(rte_pktmbuf_append(m, (uint16_t)n), buf + pos, n);
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
		pos += n;
	} while (pos < len);
	return head;
}

static struct rte_mbuf *build(const struct frag *f, struct ip4_repr *ip)
{
	uint8_t buf[IP4_HDR_MAX_LEN + 2048];
	size_t hl = IP4_HDR_MIN_LEN + f->opt_len, i;
	uint16_t total = (uint16_t)(hl + f->len);

	assert_true(hl + f->len <= sizeof(buf));
	memset(buf, 0, hl);
	buf[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | hl / 4);
	wire_put_be16(buf + IP4_OFF_TOTAL_LEN, total);
	wire_put_be16(buf + IP4_OFF_ID, f->id);
	wire_put_be16(buf + IP4_OFF_FRAG, (uint16_t)((f->df ? IP4_FLAG_DF : 0) |
						     (f->mf ? IP4_FLAG_MF : 0) | f->off / 8));
	buf[IP4_OFF_TTL] = 64;
	buf[IP4_OFF_PROTO] = f->proto;
	wire_put_be32(buf + IP4_OFF_SRC, f->src);
	wire_put_be32(buf + IP4_OFF_DST, f->dst);
	for (i = IP4_HDR_MIN_LEN; i < hl; i += 4) {
		buf[i] = IP4_OPT_RA;
		buf[i + 1] = 4;
	}
	wire_put_be16(buf + IP4_OFF_CSUM, wire_csum(buf, hl));
	for (i = 0; i < f->len; i++)
		buf[hl + i] = pattern(f->seed, f->off + (uint32_t)i);

	*ip = (struct ip4_repr){
		.hdr_len = hl, .total_len = total, .id = f->id, .df = f->df, .mf = f->mf,
		.frag_off = f->off, .ttl = 64, .proto = f->proto, .src = f->src, .dst = f->dst,
	};
	return mbuf_from(buf, total, f->seg_size);
}

static struct rte_mbuf *feed_at(uint64_t now, const struct frag *f, enum reass_verdict want)
{
	enum reass_verdict v = REASS_VERDICT_COUNT;
	struct ip4_repr ip;
	struct rte_mbuf *m = build(f, &ip), *out;

	out = ip4_reass_input(r, now, m, &ip, &v);
	if (v != want)
		fail_msg("fragment [%u, %u) mf %d: verdict \"%s\", want \"%s\"", f->off,
			 f->off + f->len, f->mf, reass_verdict_str(v),
			 reass_verdict_str(want));
	if (want == REASS_DONE)
		assert_non_null(out);
	else
		assert_null(out);
	return out;
}

static struct rte_mbuf *feed(const struct frag *f, enum reass_verdict want)
{
	return feed_at(0, f, want);
}

static void create(uint32_t timeout_ms, uint32_t max_bytes, uint32_t max_datagrams,
		   uint32_t max_frags)
{
	struct reass_params p;

	reass_params_default(&p);
	if (timeout_ms)
		p.timeout_ms = timeout_ms;
	if (max_bytes)
		p.max_bytes = max_bytes;
	if (max_datagrams)
		p.max_datagrams = max_datagrams;
	if (max_frags)
		p.max_frags = max_frags;
	r = reass_create(&p, SOCKET_ID_ANY);
	assert_non_null(r);
}

static struct reass_stats stats(void)
{
	struct reass_stats s;

	reass_stats_get(r, &s);
	return s;
}

/* Checks a reassembled datagram of template f (header, id, addresses, seed) with plen
 * payload bytes and hl header bytes, then frees it. */
static void check_and_free(struct rte_mbuf *m, const struct frag *f, uint32_t plen)
{
	size_t hl = IP4_HDR_MIN_LEN + f->opt_len;
	const void *p;
	const char *why = NULL;
	uint32_t i;

	assert_non_null(m);
	assert_int_equal(rte_mbuf_check(m, 1, &why), 0);
	assert_int_equal(rte_pktmbuf_pkt_len(m), hl + plen);
	p = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), flat);
	assert_non_null(p);
	if (p != flat)
		memcpy(flat, p, rte_pktmbuf_pkt_len(m));
	assert_int_equal(flat[IP4_OFF_VER_IHL], 0x40 | hl / 4);
	assert_int_equal(wire_get_be16(flat + IP4_OFF_TOTAL_LEN), hl + plen);
	assert_int_equal(wire_get_be16(flat + IP4_OFF_FRAG), f->df ? IP4_FLAG_DF : 0);
	assert_int_equal(wire_csum(flat, hl), 0);
	assert_int_equal(wire_get_be16(flat + IP4_OFF_ID), f->id);
	assert_int_equal(flat[IP4_OFF_PROTO], f->proto);
	assert_int_equal(wire_get_be32(flat + IP4_OFF_SRC), f->src);
	assert_int_equal(wire_get_be32(flat + IP4_OFF_DST), f->dst);
	for (i = 0; i < f->opt_len; i += 4)
		assert_int_equal(flat[IP4_HDR_MIN_LEN + i], IP4_OPT_RA);
	for (i = 0; i < plen; i++)
		if (flat[hl + i] != pattern(f->seed, i))
			fail_msg("payload byte %u: %#x, want %#x", i, flat[hl + i],
				 pattern(f->seed, i));
	rte_pktmbuf_free(m);
}

/* Splits plen bytes of template t into pieces of `chunk` bytes (the last one shorter), feeds
 * them in order[] (NULL: in order) and checks the result. */
static void reassemble(const struct frag *t, uint32_t plen, uint32_t chunk, const unsigned *order)
{
	unsigned n = (plen + chunk - 1) / chunk, i;
	struct rte_mbuf *out = NULL;

	for (i = 0; i < n; i++) {
		unsigned k = order ? order[i] : i;
		struct frag f = *t;

		f.off = (uint16_t)(k * chunk);
		f.len = (uint16_t)RTE_MIN(chunk, plen - k * chunk);
		f.mf = k + 1 < n;
		if (k > 0)
			f.opt_len = 0;  /* options travel in the first fragment */
		out = feed(&f, i + 1 < n ? REASS_HELD : REASS_DONE);
	}
	check_and_free(out, t, plen);
}

static int setup(void **state)
{
	baseline = test_pool_in_use();
	r = NULL;
	return 0;
}

static int teardown(void **state)
{
	reass_destroy(r);
	r = NULL;
	assert_int_equal(test_pool_in_use(), baseline);
	return 0;
}

/* ---- Orders ---- */

static void test_reass_two_frags_in_order_completes(void **state)
{
	struct frag t = frag_of(0, 0, false);

	create(0, 0, 0, 0);
	reassemble(&t, 1000, 504, NULL);
	assert_int_equal(stats().verdicts[REASS_HELD], 1);
	assert_int_equal(stats().verdicts[REASS_DONE], 1);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().bytes, 0);
}

static void test_reass_two_frags_reverse_order_completes(void **state)
{
	static const unsigned order[] = {1, 0};
	struct frag t = frag_of(0, 0, false);

	create(0, 0, 0, 0);
	reassemble(&t, 1000, 504, order);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_45_frags_in_order_completes(void **state)
{
	struct frag t = frag_of(0, 0, false);

	create(0, 0, 0, 0);
	reassemble(&t, 65000 - 20, 1472, NULL);  /* 44 x 1472 + 212 */
	assert_int_equal(stats().verdicts[REASS_HELD], 44);
}

static void test_reass_45_frags_reverse_order_completes(void **state)
{
	struct frag t = frag_of(0, 0, false);
	unsigned order[45], i;

	for (i = 0; i < 45; i++)
		order[i] = 44 - i;
	create(0, 0, 0, 0);
	reassemble(&t, 65000 - 20, 1472, order);
}

static void test_reass_45_frags_random_orders_complete(void **state)
{
	struct frag t = frag_of(0, 0, false);
	unsigned order[45], i, seed;

	create(0, 0, 0, 0);
	for (seed = 1; seed <= 20; seed++) {
		for (i = 0; i < 45; i++)
			order[i] = i;
		shuffle(order, 45, seed * 2654435761u);
		t.seed = seed;
		t.id = (uint16_t)seed;
		reassemble(&t, 65000 - 20, 1472, order);
	}
	assert_int_equal(stats().verdicts[REASS_DONE], 20);
	assert_int_equal(stats().datagrams, 0);
}

/* 64 fragments of random sizes (multiples of 8), random order, with options. */
static void test_reass_64_random_size_frags_random_order_complete(void **state)
{
	uint32_t seed;

	create(0, 0, 0, 64);
	for (seed = 1; seed <= 30; seed++) {
		uint16_t offs[64], lens[64];
		unsigned order[64], i;
		uint32_t s = seed * 0x9e3779b9u, pos = 0;
		struct rte_mbuf *out = NULL;
		struct frag t = frag_of(0, 0, false);

		for (i = 0; i < 64; i++) {
			offs[i] = (uint16_t)pos;
			lens[i] = (uint16_t)(8 * (1 + rnd(&s) % 120));
			if (i == 63)
				lens[i] = (uint16_t)(1 + rnd(&s) % 1000);  /* any length */
			pos += lens[i];
			order[i] = i;
		}
		shuffle(order, 64, s);
		t.seed = seed;
		t.id = (uint16_t)(seed * 7);
		t.opt_len = 8;
		for (i = 0; i < 64; i++) {
			struct frag f = t;
			unsigned k = order[i];

			f.off = offs[k];
			f.len = lens[k];
			f.mf = k != 63;
			f.opt_len = k == 0 ? 8 : 0;
			out = feed(&f, i < 63 ? REASS_HELD : REASS_DONE);
		}
		check_and_free(out, &t, pos);
	}
}

/* The first fragment's header (options, DF, l2/l3 lengths) is the result's. */
static void test_reass_first_frag_header_kept_and_rewritten(void **state)
{
	struct frag f0 = frag_of(0, 16, true), f1 = frag_of(16, 9, false);
	struct ip4_repr ip;
	enum reass_verdict v;
	struct rte_mbuf *m, *out;

	create(0, 0, 0, 0);
	f0.opt_len = 12;
	f0.df = true;
	f0.proto = f1.proto = IP4_PROTO_ICMP;
	feed(&f1, REASS_HELD);
	m = build(&f0, &ip);
	m->l2_len = 14;
	m->l3_len = 32;
	m->packet_type = RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_FRAG;
	out = ip4_reass_input(r, 0, m, &ip, &v);
	assert_int_equal(v, REASS_DONE);
	assert_ptr_equal(out, m);
	assert_int_equal(out->l2_len, 14);
	assert_int_equal(out->l3_len, 32);
	assert_int_equal(out->packet_type, RTE_PTYPE_L3_IPV4);
	assert_int_equal(out->nb_segs, 2);
	check_and_free(out, &f0, 25);
}

/* Segments of 10 bytes: headers straddle segments, in the first fragment too. */
static void test_reass_multiseg_frags_split_headers_complete(void **state)
{
	struct frag t = frag_of(0, 0, false);
	static const unsigned order[] = {2, 0, 3, 1};
	unsigned i;
	struct rte_mbuf *out = NULL;

	create(0, 0, 0, 0);
	t.seg_size = 10;
	t.opt_len = 4;
	for (i = 0; i < 4; i++) {
		struct frag f = t;

		f.off = (uint16_t)(order[i] * 96);
		f.len = order[i] == 3 ? 33 : 96;
		f.mf = order[i] != 3;
		f.opt_len = order[i] == 0 ? 4 : 0;
		out = feed(&f, i < 3 ? REASS_HELD : REASS_DONE);
	}
	check_and_free(out, &t, 3 * 96 + 33);
}

static void test_reass_same_id_other_src_dst_proto_kept_apart(void **state)
{
	struct frag t[4];
	unsigned i, k;
	struct rte_mbuf *out[4] = {NULL};

	create(0, 0, 0, 0);
	for (i = 0; i < 4; i++) {
		t[i] = frag_of(0, 0, false);
		t[i].seed = 10 + i;
	}
	t[1].src = SRC_B;
	t[2].dst = DST_B;
	t[3].proto = IP4_PROTO_TCP;
	/* Interleaved: piece k of every datagram before piece k + 1. */
	for (k = 0; k < 3; k++)
		for (i = 0; i < 4; i++) {
			struct frag f = t[i];

			f.off = (uint16_t)(k * 64);
			f.len = 64;
			f.mf = k < 2;
			out[i] = feed(&f, k < 2 ? REASS_HELD : REASS_DONE);
			assert_int_equal(stats().datagrams, k == 0 ? i + 1 : k == 1 ? 4 : 3 - i);
		}
	for (i = 0; i < 4; i++)
		check_and_free(out[i], &t[i], 192);
}

static void test_reass_after_done_same_key_starts_new_datagram(void **state)
{
	struct frag t = frag_of(0, 0, false), f = frag_of(0, 8, true);

	create(0, 0, 0, 0);
	reassemble(&t, 100, 48, NULL);
	feed(&f, REASS_HELD);
	assert_int_equal(stats().datagrams, 1);
}

/* ---- Duplicates and overlaps ---- */

static void test_reass_exact_duplicate_dropped_alone(void **state)
{
	struct frag a = frag_of(0, 16, true), b = frag_of(16, 16, true), c = frag_of(32, 5, false);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	feed(&b, REASS_HELD);
	feed(&b, REASS_DUPLICATE);
	feed(&a, REASS_DUPLICATE);
	assert_int_equal(stats().datagrams, 1);
	assert_int_equal(stats().bytes, 2 * COST);
	check_and_free(feed(&c, REASS_DONE), &a, 37);
	assert_int_equal(stats().verdicts[REASS_DUPLICATE], 2);
}

static void test_reass_duplicate_last_frag_dropped_alone(void **state)
{
	struct frag a = frag_of(0, 16, true), c = frag_of(32, 5, false), b = frag_of(16, 16, true);

	create(0, 0, 0, 0);
	feed(&c, REASS_HELD);
	feed(&a, REASS_HELD);
	feed(&c, REASS_DUPLICATE);
	check_and_free(feed(&b, REASS_DONE), &a, 37);
}

/* Held: [16, 40) with MF. The new fragment overlaps it as named. */
static void overlap_case(uint16_t off, uint16_t len)
{
	struct frag held = frag_of(16, 24, true), first = frag_of(0, 8, true);
	struct frag bad = frag_of(off, len, true), later = frag_of(40, 8, false);

	create(0, 0, 0, 0);
	feed(&held, REASS_HELD);
	feed(&bad, REASS_OVERLAP);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().bytes, 0);
	assert_int_equal(test_pool_in_use(), baseline);
	/* What follows starts a new datagram that cannot complete from the rest. */
	feed(&first, REASS_HELD);
	feed(&later, REASS_HELD);
	assert_int_equal(stats().datagrams, 1);
	assert_int_equal(stats().verdicts[REASS_OVERLAP], 1);
}

static void test_reass_overlap_head_discards_datagram(void **state)
{
	overlap_case(8, 16);    /* [8, 24) */
}

static void test_reass_overlap_tail_discards_datagram(void **state)
{
	overlap_case(32, 16);   /* [32, 48) */
}

static void test_reass_overlap_contained_discards_datagram(void **state)
{
	overlap_case(24, 8);    /* [24, 32) */
}

static void test_reass_overlap_same_start_shorter_discards_datagram(void **state)
{
	overlap_case(16, 8);    /* [16, 24) */
}

static void test_reass_overlap_containing_discards_datagram(void **state)
{
	overlap_case(8, 40);    /* [8, 48) */
}

/* Overlapping two held fragments at once, between them. */
static void test_reass_overlap_spanning_two_frags_discards_datagram(void **state)
{
	struct frag a = frag_of(0, 16, true), b = frag_of(32, 16, true);
	struct frag bad = frag_of(8, 32, true);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	feed(&b, REASS_HELD);
	feed(&bad, REASS_OVERLAP);
	assert_int_equal(stats().datagrams, 0);
}

/* Same range, other MF bit: not an exact duplicate. */
static void test_reass_same_range_other_mf_discards_datagram(void **state)
{
	struct frag a = frag_of(16, 16, true), b = frag_of(16, 16, false);
	struct frag c = frag_of(64, 16, false), d = frag_of(64, 16, true);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	feed(&b, REASS_OVERLAP);
	feed(&c, REASS_HELD);
	feed(&d, REASS_OVERLAP);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().verdicts[REASS_OVERLAP], 2);
}

/* ---- Tiny fragments (RFC 1858) ---- */

static void test_reass_tcp_offset_8_dropped_as_tiny(void **state)
{
	struct frag first = frag_of(0, 8, true), tiny = frag_of(8, 16, true);

	create(0, 0, 0, 0);
	first.proto = tiny.proto = IP4_PROTO_TCP;
	feed(&first, REASS_HELD);
	feed(&tiny, REASS_TINY);
	assert_int_equal(stats().datagrams, 1);   /* the datagram stays */
	assert_int_equal(stats().bytes, COST);
}

static void test_reass_udp_offset_8_held(void **state)
{
	struct frag first = frag_of(0, 8, true), second = frag_of(8, 16, false);

	create(0, 0, 0, 0);
	feed(&second, REASS_HELD);
	check_and_free(feed(&first, REASS_DONE), &first, 24);
}

static void test_reass_empty_first_frag_with_mf_dropped_as_tiny(void **state)
{
	struct frag f = frag_of(0, 0, true);

	create(0, 0, 0, 0);
	f.proto = IP4_PROTO_TCP;
	feed(&f, REASS_TINY);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().verdicts[REASS_TINY], 1);
}

/* Not a multiple of 8, so ip4_parse rejects it; reassembly also stands alone. */
static void test_reass_4_byte_first_frag_with_mf_dropped_as_tiny(void **state)
{
	struct frag f = frag_of(0, 4, true);

	create(0, 0, 0, 0);
	feed(&f, REASS_TINY);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_empty_last_frag_dropped_as_tiny(void **state)
{
	struct frag a = frag_of(0, 16, true), empty = frag_of(16, 0, false);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	feed(&empty, REASS_TINY);
	assert_int_equal(stats().datagrams, 1);
}

/* ip4_parse never yields this; a caller bug is dropped and counted, not trusted. */
static void test_reass_header_longer_than_total_dropped_as_tiny(void **state)
{
	struct frag f = frag_of(0, 16, true);
	enum reass_verdict v;
	struct ip4_repr ip;
	struct rte_mbuf *m = build(&f, &ip);

	create(0, 0, 0, 0);
	ip.hdr_len = 40;
	ip.total_len = 36;
	assert_null(ip4_reass_input(r, 0, m, &ip, &v));
	assert_int_equal(v, REASS_TINY);
	assert_int_equal(stats().datagrams, 0);
}

/* ---- Last fragment, size ---- */

static void test_reass_second_last_other_end_discards_datagram(void **state)
{
	struct frag a = frag_of(0, 16, true), last = frag_of(32, 16, false);
	struct frag last2 = frag_of(48, 8, false);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	feed(&last, REASS_HELD);
	feed(&last2, REASS_BAD_LAST);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().verdicts[REASS_BAD_LAST], 1);
}

static void test_reass_data_past_last_discards_datagram(void **state)
{
	struct frag last = frag_of(32, 16, false), past = frag_of(48, 16, true);

	create(0, 0, 0, 0);
	feed(&last, REASS_HELD);
	feed(&past, REASS_BAD_LAST);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_last_before_held_data_discards_datagram(void **state)
{
	struct frag past = frag_of(48, 16, true), last = frag_of(32, 16, false);

	create(0, 0, 0, 0);
	feed(&past, REASS_HELD);
	feed(&last, REASS_BAD_LAST);
	assert_int_equal(stats().datagrams, 0);
}

/* 20 + 65504 fits, but the first fragment's 60-byte header makes 65564. */
static void test_reass_first_header_makes_too_big_discards_datagram(void **state)
{
	struct frag first = frag_of(0, 8, true), last = frag_of(65480, 24, false);

	create(0, 0, 0, 0);
	first.opt_len = 40;
	feed(&first, REASS_HELD);
	feed(&last, REASS_TOO_BIG);
	assert_int_equal(stats().datagrams, 0);
	/* And the other way round. */
	feed(&last, REASS_HELD);
	feed(&first, REASS_TOO_BIG);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().verdicts[REASS_TOO_BIG], 2);
}

static void test_reass_lone_frag_past_65535_dropped_as_too_big(void **state)
{
	struct frag f = frag_of(65528, 16, false);

	create(0, 0, 0, 0);
	feed(&f, REASS_TOO_BIG);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_largest_datagram_65535_completes(void **state)
{
	struct frag t = frag_of(0, 0, false);

	create(0, 0, 0, 0);
	reassemble(&t, IP4_MAX_LEN - 20, 1480, NULL);
}

/* ---- Limits ---- */

static void test_reass_too_many_frags_discards_datagram(void **state)
{
	unsigned i;

	create(0, 0, 0, 4);
	for (i = 0; i < 4; i++) {
		struct frag f = frag_of((uint16_t)(i * 32), 16, true);

		feed(&f, REASS_HELD);
	}
	{
		struct frag f = frag_of(200, 16, true);

		feed(&f, REASS_TOO_MANY_FRAGS);
	}
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().bytes, 0);
}

static void test_reass_max_frags_exactly_completes(void **state)
{
	struct frag t = frag_of(0, 0, false);

	create(0, 0, 0, 4);
	reassemble(&t, 100, 32, NULL);
}

static void test_reass_bytes_counts_buf_len_of_every_segment(void **state)
{
	struct frag a = frag_of(0, 16, true), b = frag_of(64, 100, true);

	create(0, 0, 0, 0);
	feed(&a, REASS_HELD);
	assert_int_equal(stats().bytes, COST);
	b.seg_size = 50;  /* 120 bytes in 3 segments */
	feed(&b, REASS_HELD);
	assert_int_equal(stats().bytes, 4 * COST);
}

/* Room for two fragments; the third of the only datagram cannot be held. */
static void test_reass_memory_full_own_datagram_drops_fragment(void **state)
{
	struct frag a = frag_of(0, 16, true), b = frag_of(16, 16, true), c = frag_of(32, 8, false);

	create(0, 2 * COST + 100, 0, 0);
	feed(&a, REASS_HELD);
	feed(&b, REASS_HELD);
	feed(&c, REASS_NO_MEMORY);
	assert_int_equal(stats().datagrams, 1);
	assert_int_equal(stats().bytes, 2 * COST);
	assert_int_equal(stats().verdicts[REASS_NO_MEMORY], 1);
}

static void test_reass_fragment_larger_than_limit_dropped(void **state)
{
	struct frag a = frag_of(0, 16, true);

	create(0, COST - 1, 0, 0);
	feed(&a, REASS_NO_MEMORY);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_memory_full_evicts_oldest_datagram(void **state)
{
	struct frag a1 = frag_of(0, 16, true), a2 = frag_of(32, 16, true);
	struct frag b1 = frag_of(0, 16, true), b2 = frag_of(16, 8, false);
	struct frag c1 = frag_of(0, 16, true), c2 = frag_of(16, 8, false);

	b1.id = b2.id = 2;
	c1.id = c2.id = 3;
	create(0, 3 * COST + 100, 0, 0);
	feed_at(0, &a1, REASS_HELD);
	feed_at(1, &a2, REASS_HELD);
	feed_at(2, &b1, REASS_HELD);
	feed_at(3, &c1, REASS_HELD);    /* evicts A (2 fragments), not B */
	assert_int_equal(stats().datagrams, 2);
	assert_int_equal(stats().bytes, 2 * COST);
	assert_int_equal(stats().verdicts[REASS_NO_MEMORY], 1);
	assert_int_equal(stats().verdicts[REASS_TIMEOUT], 0);
	check_and_free(feed_at(4, &b2, REASS_DONE), &b1, 24);
	check_and_free(feed_at(5, &c2, REASS_DONE), &c1, 24);
}

/* The oldest is expired: evicting it counts as a timeout. Its own datagram is never evicted
 * to make room for a fragment. */
static void test_reass_memory_full_evicts_expired_as_timeout(void **state)
{
	struct frag a = frag_of(0, 16, true);
	struct frag b1 = frag_of(0, 16, true), b2 = frag_of(16, 16, true), b3 = frag_of(32, 8, false);

	b1.id = b2.id = b3.id = 2;
	create(1000, 2 * COST + 100, 0, 0);
	feed_at(0, &a, REASS_HELD);
	feed_at(500, &b1, REASS_HELD);
	feed_at(1200, &b2, REASS_HELD);   /* A has expired: evicted */
	assert_int_equal(stats().verdicts[REASS_TIMEOUT], 1);
	assert_int_equal(stats().verdicts[REASS_NO_MEMORY], 0);
	assert_int_equal(stats().datagrams, 1);
	feed_at(1300, &b3, REASS_NO_MEMORY);  /* only B left: B is kept, b3 dropped */
	assert_int_equal(stats().datagrams, 1);
	assert_int_equal(stats().bytes, 2 * COST);
}

/* A's own fragment needs room while A is the oldest: B goes, A stays and completes. */
static void test_reass_memory_full_keeps_own_oldest_datagram(void **state)
{
	struct frag a1 = frag_of(0, 16, true), a2 = frag_of(16, 8, false);
	struct frag b1 = frag_of(0, 16, true), b2 = frag_of(32, 16, true);

	b1.id = b2.id = 2;
	create(0, 3 * COST + 100, 0, 0);
	feed_at(0, &a1, REASS_HELD);
	feed_at(1, &b1, REASS_HELD);
	feed_at(2, &b2, REASS_HELD);
	check_and_free(feed_at(3, &a2, REASS_DONE), &a1, 24);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().bytes, 0);
	assert_int_equal(stats().verdicts[REASS_NO_MEMORY], 1);
}

static void test_reass_max_datagrams_evicts_oldest(void **state)
{
	struct frag f[3];
	unsigned i;

	create(0, 0, 2, 0);
	for (i = 0; i < 3; i++) {
		f[i] = frag_of(0, 16, true);
		f[i].id = (uint16_t)(100 + i);
		feed_at(i, &f[i], REASS_HELD);
	}
	assert_int_equal(stats().datagrams, 2);
	assert_int_equal(stats().bytes, 2 * COST);
	assert_int_equal(stats().verdicts[REASS_NO_MEMORY], 1);
	/* Datagrams 101 and 102 are still there, 100 is gone. */
	for (i = 1; i < 3; i++) {
		struct frag last = frag_of(16, 4, false);

		last.id = f[i].id;
		check_and_free(feed_at(10, &last, REASS_DONE), &f[i], 20);
	}
	{
		struct frag last = frag_of(16, 4, false);

		last.id = 100;
		feed_at(10, &last, REASS_HELD);
	}
}

/* ---- Expiry ---- */

static unsigned timeouts;
static uint16_t timeout_id;

static void on_timeout(void *arg, const struct rte_mbuf *first)
{
	uint8_t hdr[IP4_HDR_MIN_LEN];
	const uint8_t *p = rte_pktmbuf_read(first, 0, sizeof(hdr), hdr);

	assert_ptr_equal(arg, &timeouts);
	assert_non_null(p);
	assert_int_equal(wire_get_be16(p + IP4_OFF_FRAG) & IP4_FRAG_OFF_MASK, 0);
	timeout_id = wire_get_be16(p + IP4_OFF_ID);
	timeouts++;
}

static void test_reass_timeout_with_first_frag_calls_callback(void **state)
{
	struct frag a = frag_of(0, 16, true), b = frag_of(32, 16, true);

	timeouts = 0;
	create(1000, 0, 0, 0);
	feed_at(100, &b, REASS_HELD);
	feed_at(900, &a, REASS_HELD);
	assert_int_equal(reass_expire(r, 1099, on_timeout, &timeouts), 0);
	assert_int_equal(stats().datagrams, 1);
	/* The clock runs from the first arrival (100), not the latest (900). */
	assert_int_equal(reass_expire(r, 1100, on_timeout, &timeouts), 1);
	assert_int_equal(timeouts, 1);
	assert_int_equal(timeout_id, 0x1234);
	assert_int_equal(stats().datagrams, 0);
	assert_int_equal(stats().bytes, 0);
	assert_int_equal(stats().verdicts[REASS_TIMEOUT], 1);
}

static void test_reass_timeout_without_first_frag_skips_callback(void **state)
{
	struct frag b = frag_of(32, 16, true), c = frag_of(48, 16, false);

	timeouts = 0;
	create(1000, 0, 0, 0);
	feed_at(0, &b, REASS_HELD);
	feed_at(0, &c, REASS_HELD);
	assert_int_equal(reass_expire(r, 5000, on_timeout, &timeouts), 1);
	assert_int_equal(timeouts, 0);
	assert_int_equal(stats().datagrams, 0);
}

static void test_reass_expire_drops_only_old_datagrams_in_order(void **state)
{
	unsigned i;

	timeouts = 0;
	create(1000, 0, 0, 0);
	for (i = 0; i < 5; i++) {
		struct frag f = frag_of(0, 16, true);

		f.id = (uint16_t)i;
		feed_at(i * 100, &f, REASS_HELD);
	}
	assert_int_equal(reass_expire(r, 1250, on_timeout, &timeouts), 3);
	assert_int_equal(timeout_id, 2);
	assert_int_equal(stats().datagrams, 2);
	assert_int_equal(reass_expire(r, 1250, NULL, NULL), 0);
	/* A clock that went back expires nothing. */
	assert_int_equal(reass_expire(r, 10, NULL, NULL), 0);
	assert_int_equal(reass_expire(r, 100000, NULL, NULL), 2);
	assert_int_equal(timeouts, 3);
}

/* ---- Lifetime, params, names ---- */

static void test_reass_destroy_with_held_frags_frees_mbufs(void **state)
{
	unsigned i;

	create(0, 0, 0, 0);
	for (i = 0; i < 10; i++) {
		struct frag f = frag_of((uint16_t)(i % 3 * 16), 16, true);

		f.id = (uint16_t)(i / 3);
		f.seg_size = 8;
		feed(&f, REASS_HELD);
	}
	assert_int_equal(stats().datagrams, 4);
	assert_true(test_pool_in_use() > baseline);
	reass_destroy(r);
	r = NULL;
	assert_int_equal(test_pool_in_use(), baseline);
	reass_destroy(NULL);
}

static void test_reass_create_bad_params_fails_einval(void **state)
{
	struct reass_params p, bad;

	reass_params_default(&p);
	assert_int_equal(p.timeout_ms, 30000);
	assert_int_equal(p.max_bytes, 4u << 20);
	assert_int_equal(p.max_datagrams, 1024);
	assert_int_equal(p.max_frags, 64);
	rte_errno = 0;
	assert_null(reass_create(NULL, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);
	bad = p;
	bad.timeout_ms = 0;
	assert_null(reass_create(&bad, SOCKET_ID_ANY));
	bad = p;
	bad.max_bytes = 0;
	assert_null(reass_create(&bad, SOCKET_ID_ANY));
	bad = p;
	bad.max_datagrams = 0;
	assert_null(reass_create(&bad, SOCKET_ID_ANY));
	bad = p;
	bad.max_frags = 1;
	assert_null(reass_create(&bad, SOCKET_ID_ANY));
	bad.max_frags = 8193;
	rte_errno = 0;
	assert_null(reass_create(&bad, SOCKET_ID_ANY));
	assert_int_equal(rte_errno, EINVAL);
}

static void test_reass_verdict_str_names_every_verdict(void **state)
{
	unsigned i, j;

	for (i = 0; i < REASS_VERDICT_COUNT; i++) {
		const char *s = reass_verdict_str((enum reass_verdict)i);

		assert_non_null(s);
		assert_true(strlen(s) > 0);
		for (j = 0; j < i; j++)
			assert_string_not_equal(s,
				reass_verdict_str((enum reass_verdict)j));
	}
	assert_string_equal(reass_verdict_str(REASS_VERDICT_COUNT), "unknown verdict");
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_reass_two_frags_in_order_completes),
		T(test_reass_two_frags_reverse_order_completes),
		T(test_reass_45_frags_in_order_completes),
		T(test_reass_45_frags_reverse_order_completes),
		T(test_reass_45_frags_random_orders_complete),
		T(test_reass_64_random_size_frags_random_order_complete),
		T(test_reass_first_frag_header_kept_and_rewritten),
		T(test_reass_multiseg_frags_split_headers_complete),
		T(test_reass_same_id_other_src_dst_proto_kept_apart),
		T(test_reass_after_done_same_key_starts_new_datagram),
		T(test_reass_exact_duplicate_dropped_alone),
		T(test_reass_duplicate_last_frag_dropped_alone),
		T(test_reass_overlap_head_discards_datagram),
		T(test_reass_overlap_tail_discards_datagram),
		T(test_reass_overlap_contained_discards_datagram),
		T(test_reass_overlap_same_start_shorter_discards_datagram),
		T(test_reass_overlap_containing_discards_datagram),
		T(test_reass_overlap_spanning_two_frags_discards_datagram),
		T(test_reass_same_range_other_mf_discards_datagram),
		T(test_reass_tcp_offset_8_dropped_as_tiny),
		T(test_reass_udp_offset_8_held),
		T(test_reass_empty_first_frag_with_mf_dropped_as_tiny),
		T(test_reass_4_byte_first_frag_with_mf_dropped_as_tiny),
		T(test_reass_empty_last_frag_dropped_as_tiny),
		T(test_reass_header_longer_than_total_dropped_as_tiny),
		T(test_reass_second_last_other_end_discards_datagram),
		T(test_reass_data_past_last_discards_datagram),
		T(test_reass_last_before_held_data_discards_datagram),
		T(test_reass_first_header_makes_too_big_discards_datagram),
		T(test_reass_lone_frag_past_65535_dropped_as_too_big),
		T(test_reass_largest_datagram_65535_completes),
		T(test_reass_too_many_frags_discards_datagram),
		T(test_reass_max_frags_exactly_completes),
		T(test_reass_bytes_counts_buf_len_of_every_segment),
		T(test_reass_memory_full_own_datagram_drops_fragment),
		T(test_reass_fragment_larger_than_limit_dropped),
		T(test_reass_memory_full_evicts_oldest_datagram),
		T(test_reass_memory_full_evicts_expired_as_timeout),
		T(test_reass_memory_full_keeps_own_oldest_datagram),
		T(test_reass_max_datagrams_evicts_oldest),
		T(test_reass_timeout_with_first_frag_calls_callback),
		T(test_reass_timeout_without_first_frag_skips_callback),
		T(test_reass_expire_drops_only_old_datagrams_in_order),
		T(test_reass_destroy_with_held_frags_frees_mbufs),
		T(test_reass_create_bad_params_fails_einval),
		T(test_reass_verdict_str_names_every_verdict),
	};

	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
