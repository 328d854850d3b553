/* Sender SACK scoreboard (tcp_sack): taking ACKs with SACK blocks (RFC 2018), D-SACK
 * detection (RFC 2883 §4), bogus blocks, capacity, wraparound and clearing, with values
 * worked out by hand and a randomised comparison against a per-octet model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdbool.h>

#include "tcp/tcp_sack.h"
#include "tcp/tcp_seq.h"
#include "test_rand.h"

#define UNA 10000u
#define NXT 20000u
#define MSS 100u

#define BLOCKS(...) ((const struct tcp_sack_block[]){ __VA_ARGS__ })
#define NBLOCKS(...) (sizeof(BLOCKS(__VA_ARGS__)) / sizeof(struct tcp_sack_block))
/* One ACK with SACK blocks: UPD(sb, snd_una, ack, snd_nxt, res, {l, r}, ...). */
#define UPD(sb, una, ack, nxt, res, ...) \
	tcp_sb_update(sb, una, ack, nxt, BLOCKS(__VA_ARGS__), NBLOCKS(__VA_ARGS__), res)

static void assert_range(const struct tcp_scoreboard *sb, unsigned i, uint32_t left,
			 uint32_t right)
{
	assert_true(i < sb->n);
	assert_int_equal(sb->r[i].left, left);
	assert_int_equal(sb->r[i].right, right);
}

/* Whether octet seq lies in one of the board's ranges. */
static bool sacked_at(const struct tcp_scoreboard *sb, uint32_t seq)
{
	for (unsigned k = 0; k < sb->n; k++)
		if (seq_in(seq, sb->r[k].left, sb->r[k].right))
			return true;
	return false;
}

/* The right edge of the highest range in *right; false when the board is empty. */
static bool highest_right(const struct tcp_scoreboard *sb, uint32_t *right)
{
	if (sb->n == 0)
		return false;
	*right = sb->r[sb->n - 1].right;
	return true;
}

/* --- taking SACK blocks --- */

static void test_sb_init_is_empty(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t right = 7;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_count(&sb), 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0);
	assert_false(highest_right(&sb, &right));
	assert_int_equal(right, 7);
}

static void test_sb_single_hole_marks_block_sacked(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	uint32_t right;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10100, 10500 }), 400);
	assert_int_equal(res.newly_sacked, 400);
	assert_int_equal(res.ignored, 0);
	assert_int_equal(res.forgotten, 0);
	assert_false(res.dsack);
	assert_false(sacked_at(&sb, 10099));
	assert_true(sacked_at(&sb, 10100));
	assert_true(sacked_at(&sb, 10499));
	assert_false(sacked_at(&sb, 10500));
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 400);
	assert_true(highest_right(&sb, &right));
	assert_int_equal(right, 10500);
}

static void test_sb_multiple_holes_kept_as_separate_ranges(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, NULL, { 10700, 10800 }, { 10300, 10500 },
			     { 10100, 10200 }), 400);
	assert_int_equal(tcp_sb_count(&sb), 3);
	assert_range(&sb, 0, 10100, 10200);
	assert_range(&sb, 1, 10300, 10500);
	assert_range(&sb, 2, 10700, 10800);
}

static void test_sb_blocks_in_any_order_give_same_board(void **state)
{
	static const struct tcp_sack_block b[4] = {
		{ 10100, 10200 }, { 10300, 10400 }, { 10500, 10600 }, { 10700, 10800 },
	};
	struct tcp_scoreboard ref, sb;
	unsigned order[4] = { 0, 1, 2, 3 };

	tcp_sb_init(&ref);
	tcp_sb_update(&ref, UNA, UNA, NXT, b, 4, NULL);
	for (uint32_t seed = 1; seed < 30; seed++) {
		struct tcp_sack_block s[4];

		shuffle(order, 4, seed);
		for (unsigned i = 0; i < 4; i++)
			s[i] = b[order[i]];
		tcp_sb_init(&sb);
		assert_int_equal(tcp_sb_update(&sb, UNA, UNA, NXT, s, 4, NULL), 400);
		assert_memory_equal(&sb, &ref, sizeof(sb));
	}
}

static void test_sb_overlapping_blocks_count_each_octet_once(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, NULL, { 10300, 10600 }, { 10100, 10400 }), 500);
	assert_int_equal(tcp_sb_count(&sb), 1);
	assert_range(&sb, 0, 10100, 10600);
}

static void test_sb_adjacent_blocks_merge(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 });
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, NULL, { 10200, 10300 }), 100);
	assert_int_equal(tcp_sb_count(&sb), 1);
	assert_range(&sb, 0, 10100, 10300);
}

static void test_sb_block_bridging_ranges_merges_them(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 }, { 10300, 10400 }, { 10500, 10600 });
	/* the receiver's growing block now spans the first two ranges and the hole between */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10400 }), 100);
	assert_int_equal(tcp_sb_count(&sb), 2);
	assert_range(&sb, 0, 10100, 10400);
	assert_range(&sb, 1, 10500, 10600);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 400);
}

static void test_sb_repeated_block_is_not_newly_sacked(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 });
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10100, 10200 }), 0);
	assert_int_equal(res.ignored, 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 100);
}

static void test_sb_ack_advancing_past_ranges_forgets_them(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 }, { 10300, 10400 }, { 10500, 10600 });
	assert_int_equal(tcp_sb_update(&sb, UNA, 10400, NXT, NULL, 0, NULL), 0);
	assert_int_equal(tcp_sb_count(&sb), 1);
	assert_range(&sb, 0, 10500, 10600);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 100);
	assert_false(sacked_at(&sb, 10100));
}

static void test_sb_ack_into_range_trims_it(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10300 });
	tcp_sb_update(&sb, UNA, 10200, NXT, NULL, 0, NULL);
	assert_range(&sb, 0, 10200, 10300);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 100);
}

static void test_sb_ack_to_snd_nxt_empties_board(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10300 }, { 19000, NXT });
	tcp_sb_update(&sb, UNA, NXT, NXT, NULL, 0, NULL);
	assert_int_equal(tcp_sb_count(&sb), 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0);
}

static void test_sb_block_straddling_new_ack_counts_only_above(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* the first block is not below the ack (it starts at it); the second straddles it */
	assert_int_equal(UPD(&sb, UNA, 10200, NXT, &res, { 10500, 10600 }, { 10100, 10300 }),
			 200);
	assert_false(res.dsack);
	assert_int_equal(res.ignored, 0);
	assert_range(&sb, 0, 10200, 10300);
	assert_range(&sb, 1, 10500, 10600);
}

static void test_sb_later_block_below_ack_is_skipped_not_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, 10300, NXT, &res, { 10500, 10600 }, { 10100, 10200 }),
			 100);
	assert_false(res.dsack);
	assert_int_equal(res.ignored, 0);
	assert_int_equal(tcp_sb_count(&sb), 1);
}

static void test_sb_update_without_blocks_keeps_reneged_range(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10500, 10600 });
	/* RFC 2018 §8: the receiver may discard SACKed data; its later ACKs stop reporting it.
	 * The board keeps the range until the ack passes it or the caller clears it. */
	assert_int_equal(tcp_sb_update(&sb, UNA, 10100, NXT, NULL, 0, NULL), 0);
	assert_int_equal(UPD(&sb, 10100, 10100, NXT, NULL, { 10700, 10800 }), 100);
	assert_true(sacked_at(&sb, 10500));
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 200);
}

static void test_sb_result_may_be_null(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 }, { 10300, 10250 }),
			 100);
}

static void test_sb_result_identity_holds(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	uint32_t before;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10300 }, { 10500, 10600 });
	before = tcp_sb_sacked_bytes(&sb);
	/* ack takes 10100..10200 of SACKed data; the block adds 10300..10400 */
	UPD(&sb, UNA, 10200, NXT, &res, { 10200, 10400 });
	assert_int_equal(res.newly_sacked, 100);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), before - 100 + res.newly_sacked - res.forgotten);
}

/* --- D-SACK (RFC 2883 §4) --- */

static void test_sb_dsack_below_ack_is_reported_not_sacked(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* a retransmission of 10000..10100 was needless: the ack covers it, the D-SACK says so */
	assert_int_equal(UPD(&sb, UNA, 10100, NXT, &res, { 10000, 10100 }), 0);
	assert_true(res.dsack);
	assert_int_equal(res.dsack_block.left, 10000);
	assert_int_equal(res.dsack_block.right, 10100);
	assert_int_equal(res.ignored, 0);
	assert_int_equal(tcp_sb_count(&sb), 0);
}

static void test_sb_dsack_below_snd_una_is_reported(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 9000, 9100 }, { 10500, 10600 }), 100);
	assert_true(res.dsack);
	assert_int_equal(res.dsack_block.left, 9000);
	assert_int_equal(res.ignored, 0);
	assert_int_equal(tcp_sb_count(&sb), 1);
	assert_range(&sb, 0, 10500, 10600);
}

static void test_sb_dsack_inside_second_block_is_reported(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10300 });
	/* RFC 2883 §4.2 style: 10200..10300 arrived twice, above the cumulative ack */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10200, 10300 }, { 10100, 10400 }),
			 100);
	assert_true(res.dsack);
	assert_int_equal(res.dsack_block.left, 10200);
	assert_int_equal(res.dsack_block.right, 10300);
	assert_range(&sb, 0, 10100, 10400);
}

static void test_sb_dsack_equal_to_second_block_is_reported(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, &res, { 10100, 10200 }, { 10100, 10200 });
	assert_true(res.dsack);
	assert_range(&sb, 0, 10100, 10200);
}

static void test_sb_first_block_overlapping_second_is_plain_sack(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10150, 10250 }, { 10100, 10200 }), 150);
	assert_false(res.dsack);
	assert_range(&sb, 0, 10100, 10250);
}

static void test_sb_first_block_inside_third_is_plain_sack(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* RFC 2883 §4 compares with the second block only */
	UPD(&sb, UNA, UNA, NXT, &res, { 10150, 10200 }, { 10500, 10600 }, { 10100, 10300 });
	assert_false(res.dsack);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 300);
}

static void test_sb_dsack_beyond_snd_nxt_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* starts below the ack, ends past anything sent */
	UPD(&sb, UNA, 10100, NXT, &res, { 10000, NXT + 1 }, { 10500, 10600 });
	assert_false(res.dsack);
	assert_int_equal(res.ignored, 1);
	assert_range(&sb, 0, 10500, 10600);
}

static void test_sb_dsack_reversed_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, &res, { 9100, 9000 });
	assert_false(res.dsack);
	assert_int_equal(res.ignored, 1);
}

static void test_sb_dsack_too_far_below_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	const uint32_t far = NXT - TCP_SB_DSACK_MAX_SPAN - 1;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, &res, { far, far + 100 });
	assert_false(res.dsack);
	assert_int_equal(res.ignored, 1);
	UPD(&sb, UNA, UNA, NXT, &res, { far + 1, far + 100 });
	assert_true(res.dsack);
}

/* --- bogus blocks --- */

static void test_sb_block_beyond_snd_nxt_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 19900, NXT + 1 }, { NXT, NXT + 100 },
			     { 10100, 10200 }), 100);
	assert_int_equal(res.ignored, 2);
	assert_int_equal(tcp_sb_count(&sb), 1);
}

static void test_sb_block_ending_at_snd_nxt_is_accepted(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 19900, NXT }), 100);
	assert_int_equal(res.ignored, 0);
}

static void test_sb_block_below_snd_una_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* not first, so not a D-SACK candidate: below SND.UNA means bogus */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10500, 10600 }, { 9900, 10100 }), 100);
	assert_int_equal(res.ignored, 1);
	assert_false(sacked_at(&sb, 10050));
}

static void test_sb_block_left_equal_right_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10500, 10500 }), 0);
	assert_int_equal(res.ignored, 1);
	assert_int_equal(tcp_sb_count(&sb), 0);
}

static void test_sb_block_reversed_is_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10600, 10500 }), 0);
	assert_int_equal(res.ignored, 1);
}

static void test_sb_huge_blocks_are_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* wrapping the whole space, 2^31 long, and everything but the flight */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10500, 10400 }, { UNA, UNA + 0x80000000u },
			     { NXT, UNA }, { 0, 0xffffffffu }), 0);
	assert_int_equal(res.ignored, 4);
	assert_int_equal(tcp_sb_count(&sb), 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0);
}

static void test_sb_block_at_snd_una_is_accepted(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	/* odd (the receiver should have acked it) but within what was sent */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10500, 10600 }, { UNA, 10100 }), 200);
	assert_int_equal(res.ignored, 0);
}

static void test_sb_valid_and_bogus_mixed_keep_valid_ones(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 10100, 10200 }, { 30000, 30100 },
			     { 10300, 10400 }, { 10450, 10450 }), 200);
	assert_int_equal(res.ignored, 2);
	assert_int_equal(tcp_sb_count(&sb), 2);
}

/* --- capacity --- */

static void fill(struct tcp_scoreboard *sb)
{
	tcp_sb_init(sb);
	for (uint32_t i = 0; i < TCP_SB_MAX_RANGES; i++)
		assert_int_equal(UPD(sb, UNA, UNA, NXT, NULL,
				     { UNA + 200 + i * 200, UNA + 300 + i * 200 }), 100);
	assert_int_equal(tcp_sb_count(sb), TCP_SB_MAX_RANGES);
}

static void test_sb_capacity_full_new_highest_block_is_dropped(void **state)
{
	struct tcp_scoreboard sb, copy;
	struct tcp_sb_result res;

	fill(&sb);
	copy = sb;
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 19000, 19100 }), 0);
	assert_int_equal(res.forgotten, 0);
	assert_memory_equal(&sb, &copy, sizeof(sb));
}

static void test_sb_capacity_full_lower_block_drops_highest_range(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	const uint32_t top = UNA + 200 + (TCP_SB_MAX_RANGES - 1) * 200;
	uint32_t right;

	fill(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { UNA + 50, UNA + 100 }), 50);
	assert_int_equal(res.forgotten, 100);
	assert_int_equal(tcp_sb_count(&sb), TCP_SB_MAX_RANGES);
	assert_range(&sb, 0, UNA + 50, UNA + 100);
	assert_false(sacked_at(&sb, top));
	assert_true(highest_right(&sb, &right));
	assert_int_equal(right, top - 100);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), (TCP_SB_MAX_RANGES - 1) * 100 + 50);
}

static void test_sb_capacity_full_merging_block_is_accepted(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;

	fill(&sb);
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { UNA + 300, UNA + 400 }), 100);
	assert_int_equal(res.forgotten, 0);
	assert_int_equal(tcp_sb_count(&sb), TCP_SB_MAX_RANGES - 1);
	assert_range(&sb, 0, UNA + 200, UNA + 500);
	/* and a slot is free for the block that did not fit before */
	assert_int_equal(UPD(&sb, UNA, UNA, NXT, &res, { 19000, 19100 }), 100);
	assert_int_equal(tcp_sb_count(&sb), TCP_SB_MAX_RANGES);
}

static void test_sb_capacity_block_dropped_and_range_forgotten_in_one_ack(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	uint32_t before;

	fill(&sb);
	before = tcp_sb_sacked_bytes(&sb);
	/* the first block takes a new slot (the top range goes), the second is the new top:
	 * it has no room left and is dropped itself */
	UPD(&sb, UNA, UNA, NXT, &res, { UNA + 50, UNA + 100 }, { 19500, 19600 });
	assert_int_equal(res.newly_sacked, 50);
	assert_int_equal(res.forgotten, 100);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), before + 50 - 100);
	assert_false(sacked_at(&sb, 19500));
}

static void test_sb_capacity_ack_frees_slots(void **state)
{
	struct tcp_scoreboard sb;

	fill(&sb);
	tcp_sb_update(&sb, UNA, UNA + 600, NXT, NULL, 0, NULL);
	assert_int_equal(tcp_sb_count(&sb), TCP_SB_MAX_RANGES - 2);
	assert_int_equal(UPD(&sb, UNA, UNA + 600, NXT, NULL, { 19000, 19100 }, { 19500, 19600 }),
			 200);
	assert_int_equal(tcp_sb_count(&sb), TCP_SB_MAX_RANGES);
}

/* --- wraparound, clearing --- */

static void test_sb_wrap_blocks_across_zero(void **state)
{
	struct tcp_scoreboard sb;
	const uint32_t una = 0xfffffe00u, nxt = 0x00000400u;
	uint32_t right;

	tcp_sb_init(&sb);
	assert_int_equal(UPD(&sb, una, una, nxt, NULL, { 0x100, 0x200 }, { 0xffffff00u, 0x40 }),
			 0x140 + 0x100);
	assert_int_equal(tcp_sb_count(&sb), 2);
	assert_range(&sb, 0, 0xffffff00u, 0x40);
	assert_range(&sb, 1, 0x100, 0x200);
	assert_true(sacked_at(&sb, 0xffffffffu));
	assert_true(sacked_at(&sb, 0));
	assert_false(sacked_at(&sb, 0x40));
	assert_true(highest_right(&sb, &right));
	assert_int_equal(right, 0x200);
	/* the ack passes zero */
	tcp_sb_update(&sb, una, 0x20, nxt, NULL, 0, NULL);
	assert_range(&sb, 0, 0x20, 0x40);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0x20 + 0x100);
}

static void test_sb_wrap_bogus_blocks_across_zero_are_ignored(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	const uint32_t una = 0xfffffe00u, nxt = 0x00000400u;

	tcp_sb_init(&sb);
	UPD(&sb, una, una, nxt, &res, { 0x100, 0x200 }, { 0x300, 0x500 }, { 0xfffffd00u, 0x10 });
	assert_int_equal(res.ignored, 2);
	assert_int_equal(tcp_sb_count(&sb), 1);
}

static void test_sb_wrap_dsack_below_ack_across_zero(void **state)
{
	struct tcp_scoreboard sb;
	struct tcp_sb_result res;
	const uint32_t una = 0xffffff00u, nxt = 0x00000400u;

	tcp_sb_init(&sb);
	UPD(&sb, una, 0x80, nxt, &res, { 0xfffffff0u, 0x10 });
	assert_true(res.dsack);
	assert_int_equal(res.dsack_block.left, 0xfffffff0u);
	assert_int_equal(res.dsack_block.right, 0x10);
	assert_int_equal(tcp_sb_count(&sb), 0);
}

static void test_sb_clear_forgets_everything(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t right;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10200 }, { 10300, 10400 });
	tcp_sb_clear(&sb);
	assert_int_equal(tcp_sb_count(&sb), 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0);
	assert_false(highest_right(&sb, &right));
	assert_false(sacked_at(&sb, 10100));
}

/* --- against a per-octet model, over a flight that crosses 2^32 --- */

#define SPAN 65536u
#define GRAIN 50u                       /* block edges: at most SPAN / GRAIN / 2 ranges */

struct model {
	uint32_t base;                  /* sequence number of octet 0 */
	uint32_t una, nxt;
	bool sacked[SPAN];
};

static uint32_t off_of(const struct model *m, uint32_t seq)
{
	return seq - m->base;
}

static void model_check(const struct model *m, const struct tcp_scoreboard *sb)
{
	uint32_t bytes = 0;
	unsigned k = 0;

	for (uint32_t i = off_of(m, m->una); i < off_of(m, m->nxt); i++) {
		if (!m->sacked[i])
			continue;
		bytes++;
		if (i == off_of(m, m->una) || !m->sacked[i - 1]) {
			uint32_t e = i;

			while (m->sacked[e])
				e++;
			assert_range(sb, k, m->base + i, m->base + e);
			k++;
		}
	}
	assert_int_equal(k, sb->n);
	assert_int_equal(bytes, tcp_sb_sacked_bytes(sb));
}

static void test_sb_random_matches_per_octet_model(void **state)
{
	static struct model m;
	struct tcp_scoreboard sb;
	uint32_t seed = 0x9e3779b9u;
	unsigned dsacks = 0, ignored = 0;

	memset(&m, 0, sizeof(m));
	m.base = 0xfffff000u;
	m.una = m.base;
	m.nxt = m.base + 600;
	tcp_sb_init(&sb);
	for (int step = 0; step < 3000 && off_of(&m, m.nxt) < SPAN - 400; step++) {
		struct tcp_sack_block b[TCP_SACK_MAX_BLOCKS];
		unsigned nb = rnd(&seed) % (TCP_SACK_MAX_BLOCKS + 1);
		uint32_t flight = m.nxt - m.una;
		uint32_t ack = m.una;
		/* all edges stay on a GRAIN grid: at most flight / GRAIN / 2 ranges, so no drops */
		if (rnd(&seed) % 4 == 0)
			ack += GRAIN * (rnd(&seed) % (flight / GRAIN / 2 + 1));
		uint32_t newly = 0;
		struct tcp_sb_result res;
		bool want_dsack = false;

		/* blocks: GRAIN-aligned inside the flight, sometimes bogus or a D-SACK */
		for (unsigned i = 0; i < nb; i++) {
			uint32_t a = rnd(&seed) % (flight / GRAIN + 1);
			uint32_t n = 1 + rnd(&seed) % 4;
			uint32_t kind = rnd(&seed) % 10;

			b[i].left = m.una + a * GRAIN;
			b[i].right = b[i].left + n * GRAIN;
			if (kind == 0) {
				b[i].right = b[i].left;                 /* empty */
			} else if (kind == 1) {
				b[i].right = m.nxt + GRAIN;             /* past what was sent */
			} else if (kind == 2 && i > 0) {
				b[i].left = m.una - GRAIN;              /* below SND.UNA */
				b[i].right = m.una;
			} else if (seq_gt(b[i].right, m.nxt)) {
				b[i].right = m.nxt;
			}
		}
		/* D-SACKs: data below the ack (or below SND.UNA), or a copy of the second block */
		if (nb > 0 && rnd(&seed) % 5 == 0) {
			b[0].left = ack - GRAIN;
			b[0].right = ack;
		} else if (nb > 1 && rnd(&seed) % 4 == 0) {
			b[0] = b[1];
		}
		if (nb > 0 && seq_lt(b[0].left, ack) && seq_lt(b[0].left, b[0].right) &&
		    seq_le(b[0].right, m.nxt))
			want_dsack = true;
		if (nb > 1 && seq_ge(b[0].left, ack) && seq_lt(b[0].left, b[0].right) &&
		    seq_le(b[0].right, m.nxt) && seq_ge(b[0].left, m.una) &&
		    seq_lt(b[1].left, b[1].right) && seq_ge(b[1].left, m.una) &&
		    seq_le(b[1].right, m.nxt) && seq_ge(b[0].left, b[1].left) &&
		    seq_le(b[0].right, b[1].right))
			want_dsack = true;

		/* the model: ack first, then every valid non-D-SACK block */
		for (uint32_t s = m.una; s != ack; s++)
			m.sacked[off_of(&m, s)] = false;
		for (unsigned i = want_dsack ? 1 : 0; i < nb; i++) {
			if (!seq_lt(b[i].left, b[i].right) || seq_lt(b[i].left, m.una) ||
			    seq_gt(b[i].right, m.nxt))
				continue;
			for (uint32_t s = seq_max(b[i].left, ack); seq_lt(s, b[i].right); s++) {
				if (!m.sacked[off_of(&m, s)])
					newly++;
				m.sacked[off_of(&m, s)] = true;
			}
		}

		assert_int_equal(tcp_sb_update(&sb, m.una, ack, m.nxt, b, nb, &res), newly);
		assert_int_equal(res.dsack, want_dsack);
		assert_int_equal(res.forgotten, 0);
		dsacks += res.dsack;
		ignored += res.ignored;
		m.una = ack;
		model_check(&m, &sb);

		/* more data goes out */
		if (rnd(&seed) % 3 == 0)
			m.nxt += GRAIN * (1 + rnd(&seed) % 6);
	}
	/* the run covers every path */
	assert_true(seq_gt(m.una, 0) && seq_lt(m.una, 0x80000000u));
	assert_true(dsacks > 100);
	assert_true(ignored > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sb_init_is_empty),
		cmocka_unit_test(test_sb_single_hole_marks_block_sacked),
		cmocka_unit_test(test_sb_multiple_holes_kept_as_separate_ranges),
		cmocka_unit_test(test_sb_blocks_in_any_order_give_same_board),
		cmocka_unit_test(test_sb_overlapping_blocks_count_each_octet_once),
		cmocka_unit_test(test_sb_adjacent_blocks_merge),
		cmocka_unit_test(test_sb_block_bridging_ranges_merges_them),
		cmocka_unit_test(test_sb_repeated_block_is_not_newly_sacked),
		cmocka_unit_test(test_sb_ack_advancing_past_ranges_forgets_them),
		cmocka_unit_test(test_sb_ack_into_range_trims_it),
		cmocka_unit_test(test_sb_ack_to_snd_nxt_empties_board),
		cmocka_unit_test(test_sb_block_straddling_new_ack_counts_only_above),
		cmocka_unit_test(test_sb_later_block_below_ack_is_skipped_not_ignored),
		cmocka_unit_test(test_sb_update_without_blocks_keeps_reneged_range),
		cmocka_unit_test(test_sb_result_may_be_null),
		cmocka_unit_test(test_sb_result_identity_holds),
		cmocka_unit_test(test_sb_dsack_below_ack_is_reported_not_sacked),
		cmocka_unit_test(test_sb_dsack_below_snd_una_is_reported),
		cmocka_unit_test(test_sb_dsack_inside_second_block_is_reported),
		cmocka_unit_test(test_sb_dsack_equal_to_second_block_is_reported),
		cmocka_unit_test(test_sb_first_block_overlapping_second_is_plain_sack),
		cmocka_unit_test(test_sb_first_block_inside_third_is_plain_sack),
		cmocka_unit_test(test_sb_dsack_beyond_snd_nxt_is_ignored),
		cmocka_unit_test(test_sb_dsack_reversed_is_ignored),
		cmocka_unit_test(test_sb_dsack_too_far_below_is_ignored),
		cmocka_unit_test(test_sb_block_beyond_snd_nxt_is_ignored),
		cmocka_unit_test(test_sb_block_ending_at_snd_nxt_is_accepted),
		cmocka_unit_test(test_sb_block_below_snd_una_is_ignored),
		cmocka_unit_test(test_sb_block_left_equal_right_is_ignored),
		cmocka_unit_test(test_sb_block_reversed_is_ignored),
		cmocka_unit_test(test_sb_huge_blocks_are_ignored),
		cmocka_unit_test(test_sb_block_at_snd_una_is_accepted),
		cmocka_unit_test(test_sb_valid_and_bogus_mixed_keep_valid_ones),
		cmocka_unit_test(test_sb_capacity_full_new_highest_block_is_dropped),
		cmocka_unit_test(test_sb_capacity_full_lower_block_drops_highest_range),
		cmocka_unit_test(test_sb_capacity_full_merging_block_is_accepted),
		cmocka_unit_test(test_sb_capacity_block_dropped_and_range_forgotten_in_one_ack),
		cmocka_unit_test(test_sb_capacity_ack_frees_slots),
		cmocka_unit_test(test_sb_wrap_blocks_across_zero),
		cmocka_unit_test(test_sb_wrap_bogus_blocks_across_zero_are_ignored),
		cmocka_unit_test(test_sb_wrap_dsack_below_ack_across_zero),
		cmocka_unit_test(test_sb_clear_forgets_everything),
		cmocka_unit_test(test_sb_random_matches_per_octet_model),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
