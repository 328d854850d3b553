/* Receiver out-of-order bookkeeping (tcp_ooo): merging, duplicates and D-SACK (RFC 2883),
 * capacity, advancing RCV.NXT, SACK block order (RFC 2018 §4), sequence wraparound, and a
 * randomised comparison against a byte bitmap. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>

#include "tcp/tcp_ooo.h"
#include "test_rand.h"

#define NXT 1000u

static int add(struct tcp_ooo *o, uint32_t rcv_nxt, uint32_t seq, uint32_t len)
{
	return tcp_ooo_add(o, rcv_nxt, seq, len, NULL, NULL);
}

static void assert_range(const struct tcp_ooo *o, unsigned i, uint32_t left, uint32_t right)
{
	assert_true(i < o->n);
	assert_int_equal(o->r[i].left, left);
	assert_int_equal(o->r[i].right, right);
}

/* --- adding --- */

static void test_ooo_init_is_empty(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_true(tcp_ooo_empty(&o));
	assert_int_equal(tcp_ooo_bytes(&o), 0);
	assert_int_equal(tcp_ooo_count(&o), 0);
}

static void test_ooo_add_single_range_returns_len(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, 1100, 100), 100);
	assert_false(tcp_ooo_empty(&o));
	assert_int_equal(tcp_ooo_bytes(&o), 100);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1100, 1200);
}

static void test_ooo_add_at_rcv_nxt_is_einval(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, NXT, 100), -EINVAL);
	assert_true(tcp_ooo_empty(&o));
}

static void test_ooo_add_below_rcv_nxt_is_einval(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, NXT - 50, 100), -EINVAL);
	assert_true(tcp_ooo_empty(&o));
}

static void test_ooo_add_zero_len_is_einval(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, 1100, 0), -EINVAL);
	assert_true(tcp_ooo_empty(&o));
}

static void test_ooo_add_end_beyond_2g_is_einval(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, NXT + 1, 0x7fffffffu), -EINVAL);
	assert_int_equal(add(&o, NXT, NXT + 0x40000000u, 0x40000000u), -EINVAL);
	assert_int_equal(add(&o, NXT, NXT + 1, 0x7ffffffeu), 0x7ffffffe);
}

static void test_ooo_add_error_leaves_dsack_outputs_alone(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d = { 7, 8 };
	bool has = true;

	tcp_ooo_init(&o);
	assert_int_equal(tcp_ooo_add(&o, NXT, NXT, 10, &d, &has), -EINVAL);
	assert_true(has);
	assert_int_equal(d.left, 7);
	assert_int_equal(d.right, 8);
}

static void test_ooo_add_disjoint_ranges_kept_sorted(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, NXT, 1500, 100), 100);
	assert_int_equal(add(&o, NXT, 1100, 100), 100);
	assert_int_equal(add(&o, NXT, 1300, 100), 100);
	assert_int_equal(tcp_ooo_count(&o), 3);
	assert_range(&o, 0, 1100, 1200);
	assert_range(&o, 1, 1300, 1400);
	assert_range(&o, 2, 1500, 1600);
	assert_int_equal(tcp_ooo_bytes(&o), 300);
}

static void test_ooo_add_adjacent_above_merges(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(add(&o, NXT, 1200, 50), 50);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1100, 1250);
}

static void test_ooo_add_adjacent_below_merges(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(add(&o, NXT, 1050, 50), 50);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1050, 1200);
}

static void test_ooo_add_filling_gap_merges_neighbours(void **state)
{
	struct tcp_ooo o;
	bool has = true;
	struct tcp_sack_block d;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1200, 100, &d, &has), 100);
	assert_false(has);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1100, 1400);
	assert_int_equal(tcp_ooo_bytes(&o), 300);
}

static void test_ooo_add_exact_duplicate_returns_zero_with_dsack(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1100, 100, &d, &has), 0);
	assert_true(has);
	assert_int_equal(d.left, 1100);
	assert_int_equal(d.right, 1200);
	assert_int_equal(tcp_ooo_bytes(&o), 100);
	assert_int_equal(tcp_ooo_count(&o), 1);
}

static void test_ooo_add_duplicate_inside_range_reports_segment_part(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 300);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1200, 50, &d, &has), 0);
	assert_true(has);
	assert_int_equal(d.left, 1200);
	assert_int_equal(d.right, 1250);
	assert_range(&o, 0, 1100, 1400);
}

static void test_ooo_add_partial_overlap_returns_new_bytes_and_dsack(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1150, 100, &d, &has), 50);
	assert_true(has);
	assert_int_equal(d.left, 1150);
	assert_int_equal(d.right, 1200);
	assert_range(&o, 0, 1100, 1250);
	assert_int_equal(tcp_ooo_bytes(&o), 150);
}

static void test_ooo_add_covering_two_ranges_reports_first_duplicate(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	/* [1150, 1350): duplicates [1150, 1200) and [1300, 1350), new [1200, 1300). */
	assert_int_equal(tcp_ooo_add(&o, NXT, 1150, 200, &d, &has), 100);
	assert_true(has);
	assert_int_equal(d.left, 1150);
	assert_int_equal(d.right, 1200);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1100, 1400);
	assert_int_equal(tcp_ooo_bytes(&o), 300);
}

static void test_ooo_add_superset_counts_only_new_bytes(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1200, 50);
	add(&o, NXT, 1300, 50);
	add(&o, NXT, 1500, 10);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1100, 400, &d, &has), 300);
	assert_true(has);
	assert_int_equal(d.left, 1200);
	assert_int_equal(d.right, 1250);
	/* [1100, 1500) also touches [1500, 1510): one range */
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 1100, 1510);
	assert_int_equal(tcp_ooo_bytes(&o), 410);
}

static void test_ooo_add_touching_both_sides_merges_without_dsack(void **state)
{
	struct tcp_ooo o;
	bool has = true;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1400, 100);
	add(&o, NXT, 1600, 100);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1200, 200, NULL, &has), 200);
	assert_false(has);
	assert_int_equal(tcp_ooo_count(&o), 2);
	assert_range(&o, 0, 1100, 1500);
	assert_range(&o, 1, 1600, 1700);
}

static void test_ooo_add_new_range_clears_has_dsack(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d = { 1, 2 };
	bool has = true;

	tcp_ooo_init(&o);
	assert_int_equal(tcp_ooo_add(&o, NXT, 1100, 100, &d, &has), 100);
	assert_false(has);
	assert_int_equal(d.left, 1);
	assert_int_equal(d.right, 2);
}

static void test_ooo_add_duplicate_with_null_outputs_still_returns_zero(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(add(&o, NXT, 1100, 100), 0);
	assert_int_equal(tcp_ooo_bytes(&o), 100);
}

static void fill(struct tcp_ooo *o)
{
	tcp_ooo_init(o);
	for (uint32_t i = 0; i < TCP_OOO_MAX_RANGES; i++)
		assert_int_equal(add(o, NXT, NXT + 100 + i * 100, 10), 10);
	assert_int_equal(tcp_ooo_count(o), TCP_OOO_MAX_RANGES);
}

static void test_ooo_add_full_table_new_range_is_enospc_and_unchanged(void **state)
{
	struct tcp_ooo o, copy;
	bool has = true;

	fill(&o);
	copy = o;
	assert_int_equal(tcp_ooo_add(&o, NXT, NXT + 50, 10, NULL, &has), -ENOSPC);
	assert_int_equal(add(&o, NXT, NXT + 5000, 10), -ENOSPC);
	assert_int_equal(add(&o, NXT, NXT + 150, 10), -ENOSPC);
	assert_true(has);
	assert_memory_equal(&o, &copy, sizeof(o));
}

static void test_ooo_add_full_table_merging_segment_is_accepted(void **state)
{
	struct tcp_ooo o;

	fill(&o);
	assert_int_equal(add(&o, NXT, NXT + 110, 90), 90);
	assert_int_equal(tcp_ooo_count(&o), TCP_OOO_MAX_RANGES - 1);
	assert_range(&o, 0, NXT + 100, NXT + 210);
	/* a slot is free again */
	assert_int_equal(add(&o, NXT, NXT + 50, 10), 10);
}

static void test_ooo_add_full_table_extending_segment_is_accepted(void **state)
{
	struct tcp_ooo o;

	fill(&o);
	assert_int_equal(add(&o, NXT, NXT + 110, 20), 20);
	assert_int_equal(tcp_ooo_count(&o), TCP_OOO_MAX_RANGES);
	assert_range(&o, 0, NXT + 100, NXT + 130);
}

static void test_ooo_add_full_table_duplicate_is_accepted(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;

	fill(&o);
	assert_int_equal(tcp_ooo_add(&o, NXT, NXT + 300, 10, &d, &has), 0);
	assert_true(has);
}

static void test_ooo_add_forgets_ranges_at_or_below_rcv_nxt(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	/* in-order data reached 1250 without tcp_ooo_advance */
	assert_int_equal(add(&o, 1200, 1500, 10), 10);
	assert_int_equal(tcp_ooo_count(&o), 2);
	assert_range(&o, 0, 1300, 1400);
	assert_int_equal(tcp_ooo_bytes(&o), 110);
}

static void test_ooo_add_trims_range_straddling_rcv_nxt(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(add(&o, 1150, 1300, 10), 10);
	assert_range(&o, 0, 1150, 1200);
	assert_int_equal(tcp_ooo_bytes(&o), 60);
}

/* --- advancing RCV.NXT --- */

static void test_ooo_advance_empty_returns_rcv_nxt(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	assert_int_equal(tcp_ooo_advance(&o, 1234), 1234);
}

static void test_ooo_advance_gap_remaining_returns_rcv_nxt(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1099), 1099);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_int_equal(tcp_ooo_bytes(&o), 100);
}

static void test_ooo_advance_reaching_range_returns_its_right_edge(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1100), 1200);
	assert_true(tcp_ooo_empty(&o));
	assert_int_equal(tcp_ooo_bytes(&o), 0);
}

static void test_ooo_advance_into_range_returns_its_right_edge(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1150), 1200);
	assert_true(tcp_ooo_empty(&o));
}

static void test_ooo_advance_past_ranges_forgets_them(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1500), 1500);
	assert_true(tcp_ooo_empty(&o));
	assert_int_equal(tcp_ooo_bytes(&o), 0);
}

static void test_ooo_advance_leaves_higher_ranges(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	add(&o, NXT, 1500, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1100), 1200);
	assert_int_equal(tcp_ooo_count(&o), 2);
	assert_range(&o, 0, 1300, 1400);
	assert_int_equal(tcp_ooo_bytes(&o), 200);
	/* the next hole is not filled: nothing more moves */
	assert_int_equal(tcp_ooo_advance(&o, 1200), 1200);
}

static void test_ooo_advance_past_first_into_second_returns_second_edge(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	assert_int_equal(tcp_ooo_advance(&o, 1300), 1400);
	assert_true(tcp_ooo_empty(&o));
}

/* --- SACK blocks --- */

static void test_ooo_sack_blocks_empty_without_dsack_is_zero(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];

	tcp_ooo_init(&o);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, TCP_SACK_MAX_BLOCKS), 0);
}

static void test_ooo_sack_blocks_most_recent_first(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];

	tcp_ooo_init(&o);
	add(&o, NXT, 1300, 100);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1500, 100);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, TCP_SACK_MAX_BLOCKS), 3);
	assert_int_equal(out[0].left, 1500);
	assert_int_equal(out[1].left, 1100);
	assert_int_equal(out[2].left, 1300);
	assert_int_equal(out[2].right, 1400);
}

static void test_ooo_sack_blocks_duplicate_refreshes_recency(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	add(&o, NXT, 1100, 100);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, TCP_SACK_MAX_BLOCKS), 2);
	assert_int_equal(out[0].left, 1100);
	assert_int_equal(out[1].left, 1300);
}

static void test_ooo_sack_blocks_merged_range_is_most_recent(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1500, 100);
	add(&o, NXT, 1200, 50);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, TCP_SACK_MAX_BLOCKS), 2);
	assert_int_equal(out[0].left, 1100);
	assert_int_equal(out[0].right, 1250);
	assert_int_equal(out[1].left, 1500);
}

static void test_ooo_sack_blocks_dsack_first_then_its_range(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS], d;
	bool has = false;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 200);
	add(&o, NXT, 1500, 100);
	tcp_ooo_add(&o, NXT, 1150, 50, &d, &has);
	assert_true(has);
	assert_int_equal(tcp_ooo_sack_blocks(&o, &d, out, TCP_SACK_MAX_BLOCKS), 3);
	/* RFC 2883 §4: the D-SACK block, then the block that contains it */
	assert_int_equal(out[0].left, 1150);
	assert_int_equal(out[0].right, 1200);
	assert_int_equal(out[1].left, 1100);
	assert_int_equal(out[1].right, 1300);
	assert_int_equal(out[2].left, 1500);
}

static void test_ooo_sack_blocks_dsack_below_rcv_nxt_with_empty_queue(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];
	const struct tcp_sack_block d = { 500, 600 };

	tcp_ooo_init(&o);
	assert_int_equal(tcp_ooo_sack_blocks(&o, &d, out, TCP_SACK_MAX_BLOCKS), 1);
	assert_int_equal(out[0].left, 500);
	assert_int_equal(out[0].right, 600);
}

static void test_ooo_sack_blocks_limited_by_max(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];
	const struct tcp_sack_block d = { 500, 600 };

	tcp_ooo_init(&o);
	for (uint32_t i = 0; i < 6; i++)
		add(&o, NXT, 1100 + i * 100, 10);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, 3), 3);
	assert_int_equal(out[0].left, 1600);
	assert_int_equal(out[1].left, 1500);
	assert_int_equal(out[2].left, 1400);
	assert_int_equal(tcp_ooo_sack_blocks(&o, &d, out, 3), 3);
	assert_int_equal(out[0].left, 500);
	assert_int_equal(out[1].left, 1600);
	assert_int_equal(out[2].left, 1500);
}

static void test_ooo_sack_blocks_max_one_with_dsack_is_dsack_only(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[1];
	const struct tcp_sack_block d = { 500, 600 };

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 10);
	assert_int_equal(tcp_ooo_sack_blocks(&o, &d, out, 1), 1);
	assert_int_equal(out[0].left, 500);
}

static void test_ooo_sack_blocks_max_zero_writes_nothing(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[1] = { { 7, 8 } };
	const struct tcp_sack_block d = { 500, 600 };

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 10);
	assert_int_equal(tcp_ooo_sack_blocks(&o, &d, out, 0), 0);
	assert_int_equal(out[0].left, 7);
}

static void test_ooo_stamp_wrap_renumbers_keeping_order(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block out[TCP_SACK_MAX_BLOCKS];

	tcp_ooo_init(&o);
	o.clock = UINT32_MAX - 2;
	add(&o, NXT, 1300, 10);         /* stamp MAX-1 */
	add(&o, NXT, 1100, 10);         /* stamp MAX */
	add(&o, NXT, 1500, 10);         /* renumbered: 1300 -> 1, 1100 -> 2; this one 3 */
	add(&o, NXT, 1700, 10);
	assert_true(o.clock <= TCP_OOO_MAX_RANGES + 1);
	assert_int_equal(tcp_ooo_sack_blocks(&o, NULL, out, TCP_SACK_MAX_BLOCKS), 4);
	assert_int_equal(out[0].left, 1700);
	assert_int_equal(out[1].left, 1500);
	assert_int_equal(out[2].left, 1100);
	assert_int_equal(out[3].left, 1300);
}

/* --- wraparound of the sequence space --- */

static void test_ooo_wrap_ranges_across_zero_sorted(void **state)
{
	struct tcp_ooo o;
	const uint32_t nxt = 0xffffff00u;

	tcp_ooo_init(&o);
	assert_int_equal(add(&o, nxt, 0x00000100u, 0x10), 0x10);
	assert_int_equal(add(&o, nxt, 0xffffff80u, 0x10), 0x10);
	assert_int_equal(tcp_ooo_count(&o), 2);
	assert_range(&o, 0, 0xffffff80u, 0xffffff90u);
	assert_range(&o, 1, 0x00000100u, 0x00000110u);
}

static void test_ooo_wrap_segment_across_zero_merges(void **state)
{
	struct tcp_ooo o;
	const uint32_t nxt = 0xffffff00u;

	tcp_ooo_init(&o);
	add(&o, nxt, 0xffffffc0u, 0x40);        /* ends exactly at 0 */
	add(&o, nxt, 0x00000000u, 0x40);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_range(&o, 0, 0xffffffc0u, 0x40u);
	assert_int_equal(tcp_ooo_bytes(&o), 0x80);
	assert_int_equal(add(&o, nxt, 0xfffffff0u, 0x80), 0x30);
	assert_range(&o, 0, 0xffffffc0u, 0x70u);
}

static void test_ooo_wrap_dsack_across_zero(void **state)
{
	struct tcp_ooo o;
	struct tcp_sack_block d;
	bool has = false;
	const uint32_t nxt = 0xfffffff0u;

	tcp_ooo_init(&o);
	add(&o, nxt, 0xfffffff8u, 0x10);        /* [..ff8, 0x8) */
	/* [..ffc, 0xc): [..ffc, 0x8) held, [0x8, 0xc) new */
	assert_int_equal(tcp_ooo_add(&o, nxt, 0xfffffffcu, 0x10, &d, &has), 4);
	assert_true(has);
	assert_int_equal(d.left, 0xfffffffcu);
	assert_int_equal(d.right, 0x8u);
}

static void test_ooo_wrap_advance_across_zero(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, 0xffffff00u, 0x00000010u, 0x20);
	add(&o, 0xffffff00u, 0x00000100u, 0x20);
	assert_int_equal(tcp_ooo_advance(&o, 0xffffffffu), 0xffffffffu);
	assert_int_equal(tcp_ooo_advance(&o, 0x00000010u), 0x30u);
	assert_int_equal(tcp_ooo_count(&o), 1);
	assert_int_equal(tcp_ooo_advance(&o, 0x00000200u), 0x200u);
	assert_true(tcp_ooo_empty(&o));
}

static void test_ooo_clear_forgets_everything(void **state)
{
	struct tcp_ooo o;

	tcp_ooo_init(&o);
	add(&o, NXT, 1100, 100);
	add(&o, NXT, 1300, 100);
	tcp_ooo_clear(&o);
	assert_true(tcp_ooo_empty(&o));
	assert_int_equal(tcp_ooo_bytes(&o), 0);
	assert_int_equal(add(&o, NXT, 1100, 100), 100);
}

/* --- against a model: one flag per byte above a starting RCV.NXT near 2^32 --- */

#define MODEL_SPAN 65536u

struct model {
	uint32_t base;                  /* sequence number of bit 0 */
	uint32_t rcv_nxt;
	bool held[MODEL_SPAN];
};

static unsigned model_runs(const struct model *m)
{
	unsigned runs = 0;

	for (uint32_t i = m->rcv_nxt - m->base; i < MODEL_SPAN; i++)
		if (m->held[i] && (i == 0 || !m->held[i - 1]))
			runs++;
	return runs;
}

static void model_check(const struct model *m, const struct tcp_ooo *o)
{
	uint32_t bytes = 0;
	unsigned k = 0;

	for (uint32_t i = m->rcv_nxt - m->base; i < MODEL_SPAN; i++) {
		if (!m->held[i])
			continue;
		bytes++;
		if (i == 0 || !m->held[i - 1]) {
			uint32_t e = i;

			while (e < MODEL_SPAN && m->held[e])
				e++;
			assert_range(o, k, m->base + i, m->base + e);
			k++;
		}
	}
	assert_int_equal(k, o->n);
	assert_int_equal(bytes, tcp_ooo_bytes(o));
}

static void test_ooo_random_matches_byte_model(void **state)
{
	static struct model m;
	struct tcp_ooo o;
	uint32_t seed = 0x1234567u;
	unsigned full = 0, dups = 0, drains = 0, steps = 0;

	memset(&m, 0, sizeof(m));
	m.base = 0xfffff000u;
	m.rcv_nxt = m.base;
	tcp_ooo_init(&o);
	for (int step = 0; step < 4000 && m.rcv_nxt - m.base < MODEL_SPAN - 1600; step++) {
		uint32_t r = rnd(&seed);

		if (r % 8 == 0) {
			/* in-order segment: RCV.NXT moves, then the queue may drain */
			uint32_t n = 1 + rnd(&seed) % 40;
			uint32_t nxt = m.rcv_nxt + n;

			for (uint32_t i = m.rcv_nxt - m.base; i < nxt - m.base; i++)
				m.held[i] = false;
			if (m.held[nxt - m.base]) {
				uint32_t e = nxt - m.base;

				while (m.held[e]) {
					m.held[e] = false;
					e++;
				}
				drains++;
				assert_int_equal(tcp_ooo_advance(&o, nxt), m.base + e);
				m.rcv_nxt = m.base + e;
			} else {
				assert_int_equal(tcp_ooo_advance(&o, nxt), nxt);
				m.rcv_nxt = nxt;
			}
		} else {
			uint32_t off = 1 + rnd(&seed) % 1500;
			uint32_t len = 1 + rnd(&seed) % (r % 3 ? 12 : 60);
			uint32_t i0 = m.rcv_nxt - m.base + off;
			uint32_t fresh = 0, dl = 0, dr = 0;
			bool dup = false, saved[60];
			struct tcp_sack_block d = { 0, 0 };
			bool has = false;
			int ret;

			for (uint32_t i = 0; i < len; i++) {
				saved[i] = m.held[i0 + i];
				if (!saved[i])
					fresh++;
			}
			/* RFC 2883 §4 as tcp_ooo reports it: the first duplicate run */
			for (uint32_t i = 0; i < len; i++) {
				if (!saved[i])
					continue;
				dup = true;
				dl = i0 + i;
				while (i < len && saved[i])
					i++;
				dr = i0 + i;
				break;
			}
			for (uint32_t i = 0; i < len; i++)
				m.held[i0 + i] = true;
			ret = tcp_ooo_add(&o, m.rcv_nxt, m.base + i0, len, &d, &has);
			if (model_runs(&m) > TCP_OOO_MAX_RANGES) {
				assert_int_equal(ret, -ENOSPC);
				full++;
				for (uint32_t i = 0; i < len; i++)
					m.held[i0 + i] = saved[i];
			} else {
				assert_int_equal(ret, (int)fresh);
				assert_int_equal(has, dup);
				dups += dup;
				if (dup) {
					assert_int_equal(d.left, m.base + dl);
					assert_int_equal(d.right, m.base + dr);
				}
			}
		}
		model_check(&m, &o);
		steps++;
	}
	/* the run covers every path */
	assert_true(steps > 1000);
	assert_true(full > 10);
	assert_true(dups > 10);
	assert_true(drains > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ooo_init_is_empty),
		cmocka_unit_test(test_ooo_add_single_range_returns_len),
		cmocka_unit_test(test_ooo_add_at_rcv_nxt_is_einval),
		cmocka_unit_test(test_ooo_add_below_rcv_nxt_is_einval),
		cmocka_unit_test(test_ooo_add_zero_len_is_einval),
		cmocka_unit_test(test_ooo_add_end_beyond_2g_is_einval),
		cmocka_unit_test(test_ooo_add_error_leaves_dsack_outputs_alone),
		cmocka_unit_test(test_ooo_add_disjoint_ranges_kept_sorted),
		cmocka_unit_test(test_ooo_add_adjacent_above_merges),
		cmocka_unit_test(test_ooo_add_adjacent_below_merges),
		cmocka_unit_test(test_ooo_add_filling_gap_merges_neighbours),
		cmocka_unit_test(test_ooo_add_exact_duplicate_returns_zero_with_dsack),
		cmocka_unit_test(test_ooo_add_duplicate_inside_range_reports_segment_part),
		cmocka_unit_test(test_ooo_add_partial_overlap_returns_new_bytes_and_dsack),
		cmocka_unit_test(test_ooo_add_covering_two_ranges_reports_first_duplicate),
		cmocka_unit_test(test_ooo_add_superset_counts_only_new_bytes),
		cmocka_unit_test(test_ooo_add_touching_both_sides_merges_without_dsack),
		cmocka_unit_test(test_ooo_add_new_range_clears_has_dsack),
		cmocka_unit_test(test_ooo_add_duplicate_with_null_outputs_still_returns_zero),
		cmocka_unit_test(test_ooo_add_full_table_new_range_is_enospc_and_unchanged),
		cmocka_unit_test(test_ooo_add_full_table_merging_segment_is_accepted),
		cmocka_unit_test(test_ooo_add_full_table_extending_segment_is_accepted),
		cmocka_unit_test(test_ooo_add_full_table_duplicate_is_accepted),
		cmocka_unit_test(test_ooo_add_forgets_ranges_at_or_below_rcv_nxt),
		cmocka_unit_test(test_ooo_add_trims_range_straddling_rcv_nxt),
		cmocka_unit_test(test_ooo_advance_empty_returns_rcv_nxt),
		cmocka_unit_test(test_ooo_advance_gap_remaining_returns_rcv_nxt),
		cmocka_unit_test(test_ooo_advance_reaching_range_returns_its_right_edge),
		cmocka_unit_test(test_ooo_advance_into_range_returns_its_right_edge),
		cmocka_unit_test(test_ooo_advance_past_ranges_forgets_them),
		cmocka_unit_test(test_ooo_advance_leaves_higher_ranges),
		cmocka_unit_test(test_ooo_advance_past_first_into_second_returns_second_edge),
		cmocka_unit_test(test_ooo_sack_blocks_empty_without_dsack_is_zero),
		cmocka_unit_test(test_ooo_sack_blocks_most_recent_first),
		cmocka_unit_test(test_ooo_sack_blocks_duplicate_refreshes_recency),
		cmocka_unit_test(test_ooo_sack_blocks_merged_range_is_most_recent),
		cmocka_unit_test(test_ooo_sack_blocks_dsack_first_then_its_range),
		cmocka_unit_test(test_ooo_sack_blocks_dsack_below_rcv_nxt_with_empty_queue),
		cmocka_unit_test(test_ooo_sack_blocks_limited_by_max),
		cmocka_unit_test(test_ooo_sack_blocks_max_one_with_dsack_is_dsack_only),
		cmocka_unit_test(test_ooo_sack_blocks_max_zero_writes_nothing),
		cmocka_unit_test(test_ooo_stamp_wrap_renumbers_keeping_order),
		cmocka_unit_test(test_ooo_wrap_ranges_across_zero_sorted),
		cmocka_unit_test(test_ooo_wrap_segment_across_zero_merges),
		cmocka_unit_test(test_ooo_wrap_dsack_across_zero),
		cmocka_unit_test(test_ooo_wrap_advance_across_zero),
		cmocka_unit_test(test_ooo_clear_forgets_everything),
		cmocka_unit_test(test_ooo_random_matches_byte_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
