/* IPv4 fragmentation on real mbufs: sizes, headers and options (RFC 791), errors, and round
 * trips through reassembly. Every test starts and ends with the same number of mbufs in use. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <rte_mbuf.h>

#include "test_eal.h"
#include "test_rand.h"
#include "ip4/ip4_frag.h"
#include "../../src/wire/bytes.h"
#include "../../src/wire/checksum.h"
#include "../../src/wire/ipv4.h"

#define MAX_OUT 2048

static unsigned baseline;
static uint8_t src_flat[IP4_MAX_LEN];   /* the last datagram made */
static uint8_t flat[IP4_MAX_LEN];
static struct rte_mbuf *out[MAX_OUT];

/* Options: LSRR (copied, 7 bytes), RR (not copied, 11), RA (copied, 4), with NOPs and an EOL:
 * 24 bytes. Later fragments carry LSRR, RA, one EOL: 12 bytes. */
static const uint8_t opts_mixed[] = {
	IP4_OPT_NOP,
	IP4_OPT_LSRR, 7, 4, 192, 0, 2, 1,
	IP4_OPT_RR, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0,
	IP4_OPT_RA, 4, 0, 0,
	IP4_OPT_EOL,
};
static const uint8_t opts_mixed_copied[] = {
	IP4_OPT_LSRR, 7, 4, 192, 0, 2, 1,
	IP4_OPT_RA, 4, 0, 0,
	IP4_OPT_EOL,
};
/* Nothing copied: RR and timestamp, NOP-aligned. */
static const uint8_t opts_uncopied[] = {
	IP4_OPT_NOP, IP4_OPT_RR, 7, 4, 0, 0, 0, 0,
	IP4_OPT_TS, 4, 5, 0,
};

static uint8_t pattern(uint32_t seed, uint32_t i)
{
	return (uint8_t)(i * 167u + (i >> 9) * 13u + seed * 41u + 1u);
}

/* Copies buf into a fresh chain of seg-byte segments (0: as few as the pool allows). */
static struct rte_mbuf *mbuf_from(struct rte_mempool *mp, const uint8_t *buf, uint32_t len,
				  uint32_t seg)
{
	struct rte_mbuf *head = NULL;
	uint32_t pos = 0;

	if (seg == 0)
		seg = rte_pktmbuf_data_room_size(mp) - RTE_PKTMBUF_HEADROOM;
	do {
		struct rte_mbuf *m = rte_pktmbuf_alloc(mp);
		uint32_t n = RTE_MIN(seg, len - pos);

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

/* Linear copy of m into buf; returns its length. */
static uint32_t flatten(const struct rte_mbuf *m, uint8_t *buf)
{
	const char *why = NULL;
	const void *p;

	assert_int_equal(rte_mbuf_check(m, 1, &why), 0);
	p = rte_pktmbuf_read(m, 0, rte_pktmbuf_pkt_len(m), buf);
	assert_non_null(p);
	if (p != buf)
		memcpy(buf, p, rte_pktmbuf_pkt_len(m));
	return rte_pktmbuf_pkt_len(m);
}

/* A datagram in src_flat and in a new mbuf chain: header with opts (length multiple of 4),
 * fragment field `frag`, plen pattern bytes. */
static struct rte_mbuf *make(const uint8_t *opts, size_t opt_len, uint32_t plen, uint32_t seed,
			     uint16_t frag, uint32_t seg)
{
	size_t hl = IP4_HDR_MIN_LEN + opt_len;
	uint32_t i;

	assert_true(opt_len % 4 == 0 && hl <= IP4_HDR_MAX_LEN && hl + plen <= IP4_MAX_LEN);
	memset(src_flat, 0, IP4_HDR_MIN_LEN);
	src_flat[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | hl / 4);
	src_flat[IP4_OFF_TOS] = 0xb8;
	wire_put_be16(src_flat + IP4_OFF_TOTAL_LEN, (uint16_t)(hl + plen));
	wire_put_be16(src_flat + IP4_OFF_ID, (uint16_t)(0xbe00 + seed));
	wire_put_be16(src_flat + IP4_OFF_FRAG, frag);
	src_flat[IP4_OFF_TTL] = 63;
	src_flat[IP4_OFF_PROTO] = IP4_PROTO_UDP;
	wire_put_be32(src_flat + IP4_OFF_SRC, 0xc0a80001u);
	wire_put_be32(src_flat + IP4_OFF_DST, 0xc0a80002u);
	if (opt_len)
		memcpy(src_flat + IP4_HDR_MIN_LEN, opts, opt_len);
	wire_put_be16(src_flat + IP4_OFF_CSUM, wire_csum(src_flat, hl));
	for (i = 0; i < plen; i++)
		src_flat[hl + i] = pattern(seed, i);
	return mbuf_from(test_pool(), src_flat, (uint32_t)(hl + plen), seg);
}

static void free_out(int n)
{
	int i;

	for (i = 0; i < n; i++)
		rte_pktmbuf_free(out[i]);
}

/* Checks out[0..n) against the datagram in src_flat: each at most mtu bytes, a valid header
 * (the first the source's, later ones the fixed part plus later_opts), consecutive offsets from
 * the source's, MF on all but the last (which keeps the source's MF), payload bytes. */
static void check_frags(int n, uint16_t mtu, const uint8_t *later_opts, size_t later_opt_len)
{
	size_t hl = (size_t)(src_flat[0] & 0x0f) * 4;
	uint32_t total = wire_get_be16(src_flat + IP4_OFF_TOTAL_LEN), plen = total - (uint32_t)hl;
	uint16_t src_frag = wire_get_be16(src_flat + IP4_OFF_FRAG);
	uint32_t pos = 0;
	int k;

	assert_true(n >= 1);
	for (k = 0; k < n; k++) {
		uint32_t len = flatten(out[k], flat);
		size_t fhl = k == 0 ? hl : IP4_HDR_MIN_LEN + later_opt_len;
		uint16_t frag = wire_get_be16(flat + IP4_OFF_FRAG);
		bool mf = k + 1 < n || (src_frag & IP4_FLAG_MF);
		uint32_t fplen = len - (uint32_t)fhl;
		struct ip4_repr ip;

		assert_true(len <= mtu || n == 1);
		assert_int_equal(ip4_parse(flat, len, true, &ip), WIRE_OK);
		assert_int_equal(ip.hdr_len, fhl);
		assert_int_equal(out[k]->l3_len, fhl);
		assert_int_equal(wire_get_be16(flat + IP4_OFF_TOTAL_LEN), len);
		assert_int_equal(wire_csum(flat, fhl), 0);
		/* Fields other than length, fragment and checksum are the source's. */
		assert_memory_equal(flat + IP4_OFF_TOS, src_flat + IP4_OFF_TOS, 1);
		assert_memory_equal(flat + IP4_OFF_ID, src_flat + IP4_OFF_ID, 2);
		assert_memory_equal(flat + IP4_OFF_TTL, src_flat + IP4_OFF_TTL, 2);
		assert_memory_equal(flat + IP4_OFF_SRC, src_flat + IP4_OFF_SRC, 8);
		if (k == 0)
			assert_memory_equal(flat + IP4_HDR_MIN_LEN, src_flat + IP4_HDR_MIN_LEN,
					    hl - IP4_HDR_MIN_LEN);
		else if (later_opt_len)
			assert_memory_equal(flat + IP4_HDR_MIN_LEN, later_opts, later_opt_len);
		assert_int_equal(frag & (IP4_FLAG_DF | IP4_FLAG_RESERVED),
				 src_frag & (IP4_FLAG_DF | IP4_FLAG_RESERVED));
		assert_int_equal(!!(frag & IP4_FLAG_MF), mf);
		assert_int_equal((frag & IP4_FRAG_OFF_MASK) * 8,
				 (src_frag & IP4_FRAG_OFF_MASK) * 8 + pos);
		if (k + 1 < n)
			assert_int_equal(fplen % 8, 0);
		assert_true(pos + fplen <= plen);
		assert_memory_equal(flat + fhl, src_flat + hl + pos, fplen);
		pos += fplen;
	}
	assert_int_equal(pos, plen);
}

/* Feeds out[0..n) in a random order to a fresh reassembler; the result must equal src_flat
 * byte for byte (source fragment field 0 without DF). */
static void reassemble_and_compare(int n, uint32_t seed)
{
	struct reass_params p;
	struct reass *r;
	struct rte_mbuf *done = NULL;
	unsigned order[MAX_OUT];
	uint32_t total = wire_get_be16(src_flat + IP4_OFF_TOTAL_LEN);
	int i;

	reass_params_default(&p);
	p.max_frags = MAX_OUT;
	p.max_bytes = 256u << 20;
	p.max_datagrams = 1;
	r = reass_create(&p, SOCKET_ID_ANY);
	assert_non_null(r);
	for (i = 0; i < n; i++)
		order[i] = (unsigned)i;
	shuffle(order, (unsigned)n, seed);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = out[order[i]];
		uint32_t len = flatten(m, flat);
		enum reass_verdict v;
		struct ip4_repr ip;

		assert_int_equal(ip4_parse(flat, len, true, &ip), WIRE_OK);
		done = ip4_reass_input(r, 0, m, &ip, &v);
		assert_int_equal(v, i + 1 < n ? REASS_HELD : REASS_DONE);
	}
	assert_non_null(done);
	assert_int_equal(flatten(done, flat), total);
	assert_memory_equal(flat, src_flat, total);
	rte_pktmbuf_free(done);
	reass_destroy(r);
}

static int setup(void **state)
{
	baseline = test_pool_in_use();
	return 0;
}

static int teardown(void **state)
{
	assert_int_equal(test_pool_in_use(), baseline);
	return 0;
}

/* ---- Sizes ---- */

static void test_fragment_fits_mtu_returns_one_copy(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 1480, 1, 0, 0);
	int n = ip4_fragment(m, 1500, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 1);
	assert_ptr_not_equal(out[0], m);
	assert_int_equal(flatten(out[0], flat), 1500);
	assert_memory_equal(flat, src_flat, 1500);
	assert_int_equal(test_pool_in_use(), baseline + 1);  /* m was freed */
	free_out(n);
}

static void test_fragment_4000_bytes_mtu_1500_gives_1480_1480_1020(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 3980, 2, 0, 0);
	int n, k;

	m->port = 3;
	n = ip4_fragment(m, 1500, test_pool(), out, MAX_OUT);
	assert_int_equal(n, 3);
	for (k = 0; k < n; k++) {
		assert_int_equal(out[k]->port, 3);
		assert_int_equal(out[k]->ol_flags, 0);
	}
	check_frags(n, 1500, NULL, 0);
	assert_int_equal(rte_pktmbuf_pkt_len(out[0]), 1500);
	assert_int_equal(rte_pktmbuf_pkt_len(out[1]), 1500);
	assert_int_equal(rte_pktmbuf_pkt_len(out[2]), 20 + 1020);
	free_out(n);
}

/* mtu - 20 = 1001 is rounded down to 1000 payload bytes per fragment. */
static void test_fragment_odd_mtu_rounds_payload_down_to_8(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 2500, 3, 0, 0);
	int n = ip4_fragment(m, 1021, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 3);
	check_frags(n, 1021, NULL, 0);
	assert_int_equal(rte_pktmbuf_pkt_len(out[0]), 1020);
	assert_int_equal(rte_pktmbuf_pkt_len(out[2]), 20 + 500);
	free_out(n);
}

static void test_fragment_65000_bytes_mtu_1492_gives_45_frags_round_trip(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 65000 - 20, 4, 0, 0);
	int n = ip4_fragment(m, 1492, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 45);
	check_frags(n, 1492, NULL, 0);
	reassemble_and_compare(n, 4);
}

static void test_fragment_mtu_header_plus_8_gives_8_byte_frags(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 100, 5, 0, 0);
	int n = ip4_fragment(m, 28, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 13);
	check_frags(n, 28, NULL, 0);
	reassemble_and_compare(n, 5);
}

static void test_fragment_mtu_below_header_plus_8_returns_emsgsize(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 100, 6, 0, 0);

	assert_int_equal(ip4_fragment(m, 27, test_pool(), out, MAX_OUT), -EMSGSIZE);
	assert_int_equal(flatten(m, flat), 120);
	assert_memory_equal(flat, src_flat, 120);
	rte_pktmbuf_free(m);
	/* With 24 bytes of options the first fragment needs 52. */
	m = make(opts_mixed, sizeof(opts_mixed), 100, 6, 0, 0);
	assert_int_equal(ip4_fragment(m, 51, test_pool(), out, MAX_OUT), -EMSGSIZE);
	rte_pktmbuf_free(m);
}

static void test_fragment_more_than_max_out_returns_emsgsize_source_untouched(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 3000, 7, 0, 0);

	assert_int_equal(ip4_fragment(m, 1500, test_pool(), out, 2), -EMSGSIZE);
	assert_int_equal(ip4_fragment(m, 1500, test_pool(), out, 0), -EMSGSIZE);
	assert_int_equal(flatten(m, flat), 3020);
	assert_memory_equal(flat, src_flat, 3020);
	assert_int_equal(test_pool_in_use(), baseline + 2);
	assert_int_equal(ip4_fragment(m, 1500, test_pool(), out, 3), 3);
	free_out(3);
}

/* mtu 9000 with 2 KiB mbufs: each fragment is a chain. */
static void test_fragment_mtu_above_mbuf_room_chains_segments(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 30000, 8, 0, 0);
	int n = ip4_fragment(m, 9000, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 4);
	assert_true(out[0]->nb_segs >= 5);
	check_frags(n, 9000, NULL, 0);
	reassemble_and_compare(n, 8);
}

/* ---- Header fields ---- */

static void test_fragment_df_too_big_returns_emsgsize_source_untouched(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 2000, 9, IP4_FLAG_DF, 0);

	assert_int_equal(ip4_fragment(m, 1500, test_pool(), out, MAX_OUT), -EMSGSIZE);
	assert_int_equal(flatten(m, flat), 2020);
	assert_memory_equal(flat, src_flat, 2020);
	rte_pktmbuf_free(m);
}

static void test_fragment_df_fits_returns_copy_with_df(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 1000, 10, IP4_FLAG_DF, 0);
	int n = ip4_fragment(m, 1500, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 1);
	check_frags(n, 1500, NULL, 0);
	free_out(n);
}

/* A middle fragment (MF, offset 800) split again: offsets continue, all keep MF. */
static void test_fragment_of_middle_fragment_keeps_offset_and_mf(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 1600, 11, IP4_FLAG_MF | 100, 0);
	int n = ip4_fragment(m, 596, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 3);
	check_frags(n, 596, NULL, 0);
	free_out(n);
}

/* A last fragment split again: only the last piece has MF clear. */
static void test_fragment_of_last_fragment_clears_mf_on_last_piece(void **state)
{
	struct rte_mbuf *m = make(NULL, 0, 1601, 12, 100, 0);
	int n = ip4_fragment(m, 596, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 3);
	check_frags(n, 596, NULL, 0);
	free_out(n);
}

static void test_fragment_options_copied_per_copy_flag(void **state)
{
	struct rte_mbuf *m = make(opts_mixed, sizeof(opts_mixed), 3000, 13, 0, 0);
	int n = ip4_fragment(m, 1044, test_pool(), out, MAX_OUT);

	/* First: 1044 - 44 = 1000 payload; later: 1044 - 32 = 1012 -> 1008. */
	assert_int_equal(n, 3);
	check_frags(n, 1044, opts_mixed_copied, sizeof(opts_mixed_copied));
	assert_int_equal(rte_pktmbuf_pkt_len(out[0]), 44 + 1000);
	assert_int_equal(rte_pktmbuf_pkt_len(out[1]), 32 + 1008);
	assert_int_equal(rte_pktmbuf_pkt_len(out[2]), 32 + 992);
	reassemble_and_compare(n, 13);
}

static void test_fragment_no_option_copied_later_header_20_bytes(void **state)
{
	struct rte_mbuf *m = make(opts_uncopied, sizeof(opts_uncopied), 3000, 14, 0, 0);
	int n = ip4_fragment(m, 1500, test_pool(), out, MAX_OUT);

	assert_int_equal(n, 3);
	check_frags(n, 1500, NULL, 0);
	reassemble_and_compare(n, 14);
}

/* The copied options exactly fill 40 bytes: no padding needed. */
static void test_fragment_40_bytes_copied_options_need_no_padding(void **state)
{
	uint8_t opts[40];
	int n;
	struct rte_mbuf *m;

	opts[0] = IP4_OPT_LSRR;
	opts[1] = 39;
	opts[2] = 4;
	memset(opts + 3, 0x11, 36);
	opts[39] = IP4_OPT_EOL;
	m = make(opts, sizeof(opts), 500, 15, 0, 0);
	n = ip4_fragment(m, 300, test_pool(), out, MAX_OUT);
	assert_int_equal(n, 3);
	check_frags(n, 300, opts, 40);
	reassemble_and_compare(n, 15);
}

static void test_fragment_bad_header_returns_einval(void **state)
{
	static const uint8_t bad_opt_len[] = {IP4_OPT_RA, 1, 0, 0};
	static const uint8_t opt_past_end[] = {IP4_OPT_NOP, IP4_OPT_LSRR, 7, 4};
	struct rte_mbuf *m;

	m = make(bad_opt_len, sizeof(bad_opt_len), 2000, 16, 0, 0);
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_free(m);
	m = make(opt_past_end, sizeof(opt_past_end), 2000, 16, 0, 0);
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_free(m);

	m = make(NULL, 0, 2000, 16, 0, 0);
	rte_pktmbuf_mtod(m, uint8_t *)[0] = 0x65;             /* version 6 */
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_mtod(m, uint8_t *)[0] = 0x44;             /* IHL 4 */
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_mtod(m, uint8_t *)[0] = 0x45;
	wire_put_be16(rte_pktmbuf_mtod(m, uint8_t *) + IP4_OFF_TOTAL_LEN, 2021);  /* > pkt_len */
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	wire_put_be16(rte_pktmbuf_mtod(m, uint8_t *) + IP4_OFF_TOTAL_LEN, 19);   /* < header */
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_trim(m, 2020 - 19);                                  /* 19 bytes */
	assert_int_equal(ip4_fragment(m, 1000, test_pool(), out, MAX_OUT), -EINVAL);
	rte_pktmbuf_free(m);
}

/* ---- Segments, pools ---- */

/* Source in 7-byte segments: the header and payload straddle segment boundaries. */
static void test_fragment_multiseg_source_matches(void **state)
{
	struct rte_mbuf *m = make(opts_mixed, sizeof(opts_mixed), 5000, 17, 0, 7);
	int n;

	assert_true(m->nb_segs > 700);
	n = ip4_fragment(m, 1500, test_pool(), out, MAX_OUT);
	assert_int_equal(n, 4);
	check_frags(n, 1500, opts_mixed_copied, sizeof(opts_mixed_copied));
	reassemble_and_compare(n, 17);
}

static void exhaust_case(uint16_t mtu, uint32_t plen, unsigned pool_size)
{
	struct rte_mempool *small = rte_pktmbuf_pool_create("frag_small", pool_size, 0, 0,
							    TEST_POOL_DATA_ROOM, SOCKET_ID_ANY);
	struct rte_mbuf *m = make(NULL, 0, plen, 18, 0, 0);
	uint16_t segs = m->nb_segs;

	assert_non_null(small);
	memset(out, 0, sizeof(out));
	assert_int_equal(ip4_fragment(m, mtu, small, out, MAX_OUT), -ENOBUFS);
	assert_int_equal(rte_mempool_in_use_count(small), 0);
	assert_int_equal(m->nb_segs, segs);
	assert_int_equal(flatten(m, flat), 20 + plen);
	assert_memory_equal(flat, src_flat, 20 + plen);
	assert_null(out[0]);
	rte_pktmbuf_free(m);
	rte_mempool_free(small);
}

static void test_fragment_pool_exhausted_returns_enobufs_source_untouched(void **state)
{
	exhaust_case(1500, 20000, 8);   /* 14 fragments wanted */
}

/* The pool runs dry inside the second fragment's segment chain. */
static void test_fragment_pool_exhausted_mid_chain_returns_enobufs(void **state)
{
	exhaust_case(9000, 30000, 8);   /* 5 segments per fragment */
}

/* ---- Round trips ---- */

static void test_fragment_random_sizes_and_mtus_round_trip(void **state)
{
	static const struct {
		const uint8_t *opts, *copied;
		size_t len, copied_len;
	} hdrs[] = {
		{NULL, NULL, 0, 0},
		{opts_mixed, opts_mixed_copied, sizeof(opts_mixed), sizeof(opts_mixed_copied)},
		{opts_uncopied, NULL, sizeof(opts_uncopied), 0},
	};
	uint32_t s = 0x12345678u, iter;

	for (iter = 0; iter < 300; iter++) {
		unsigned h = rnd(&s) % 3;
		size_t hl = IP4_HDR_MIN_LEN + hdrs[h].len;
		uint16_t mtu = (uint16_t)(68 + rnd(&s) % (9001 - 68));
		uint32_t per = ((uint32_t)mtu - (uint32_t)hl) & ~7u;
		uint32_t cap = RTE_MIN((uint32_t)(IP4_MAX_LEN - hl), per * 400);
		uint32_t plen = rnd(&s) % (cap + 1);
		uint32_t seg = rnd(&s) % 4 == 0 ? 100 + rnd(&s) % 1900 : 0;
		struct rte_mbuf *m = make(hdrs[h].opts, hdrs[h].len, plen, iter, 0, seg);
		int n = ip4_fragment(m, mtu, test_pool(), out, MAX_OUT);

		if (n < 0)
			fail_msg("iteration %u: plen %u mtu %u: %d", iter, plen, mtu, n);
		check_frags(n, mtu, hdrs[h].copied, hdrs[h].copied_len);
		if (n == 1) {
			assert_int_equal(flatten(out[0], flat), hl + plen);
			assert_memory_equal(flat, src_flat, hl + plen);
			free_out(n);
		} else {
			reassemble_and_compare(n, s);
		}
		assert_int_equal(test_pool_in_use(), baseline);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_fragment_fits_mtu_returns_one_copy),
		T(test_fragment_4000_bytes_mtu_1500_gives_1480_1480_1020),
		T(test_fragment_odd_mtu_rounds_payload_down_to_8),
		T(test_fragment_65000_bytes_mtu_1492_gives_45_frags_round_trip),
		T(test_fragment_mtu_header_plus_8_gives_8_byte_frags),
		T(test_fragment_mtu_below_header_plus_8_returns_emsgsize),
		T(test_fragment_more_than_max_out_returns_emsgsize_source_untouched),
		T(test_fragment_mtu_above_mbuf_room_chains_segments),
		T(test_fragment_df_too_big_returns_emsgsize_source_untouched),
		T(test_fragment_df_fits_returns_copy_with_df),
		T(test_fragment_of_middle_fragment_keeps_offset_and_mf),
		T(test_fragment_of_last_fragment_clears_mf_on_last_piece),
		T(test_fragment_options_copied_per_copy_flag),
		T(test_fragment_no_option_copied_later_header_20_bytes),
		T(test_fragment_40_bytes_copied_options_need_no_padding),
		T(test_fragment_bad_header_returns_einval),
		T(test_fragment_multiseg_source_matches),
		T(test_fragment_pool_exhausted_returns_enobufs_source_untouched),
		T(test_fragment_pool_exhausted_mid_chain_returns_enobufs),
		T(test_fragment_random_sizes_and_mtus_round_trip),
	};

	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
