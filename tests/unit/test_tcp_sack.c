/* Sender SACK scoreboard (tcp_sack): taking ACKs with SACK blocks (RFC 2018), D-SACK
 * detection (RFC 2883 §4), bogus blocks, capacity, and RFC 6675 §4 IsLost, SetPipe and
 * NextSeg, with values worked out by hand and a randomised comparison against the RFC's
 * per-octet definitions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdbool.h>

#include "../../src/proto/tcp_sack.h"
#include "../../src/proto/tcp_seq.h"
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

/* --- taking SACK blocks --- */

static void test_sb_init_is_empty(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t right = 7;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_count(&sb), 0);
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 0);
	assert_false(tcp_sb_highest_sacked(&sb, &right));
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
	assert_false(tcp_sb_is_sacked(&sb, 10099));
	assert_true(tcp_sb_is_sacked(&sb, 10100));
	assert_true(tcp_sb_is_sacked(&sb, 10499));
	assert_false(tcp_sb_is_sacked(&sb, 10500));
	assert_int_equal(tcp_sb_sacked_bytes(&sb), 400);
	assert_true(tcp_sb_highest_sacked(&sb, &right));
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
	assert_false(tcp_sb_is_sacked(&sb, 10100));
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
	assert_true(tcp_sb_is_sacked(&sb, 10500));
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
	assert_false(tcp_sb_is_sacked(&sb, 10050));
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
	assert_false(tcp_sb_is_sacked(&sb, top));
	assert_true(tcp_sb_highest_sacked(&sb, &right));
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
	assert_false(tcp_sb_is_sacked(&sb, 19500));
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

/* --- IsLost (RFC 6675 §4) --- */

static void test_sb_is_lost_one_range_two_segments_not_lost(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10300 });
	/* exactly (DupThresh - 1) * SMSS above: not more */
	assert_false(tcp_sb_is_lost(&sb, UNA, MSS));
}

static void test_sb_is_lost_more_than_two_segments_lost(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10301 });
	assert_true(tcp_sb_is_lost(&sb, UNA, MSS));
	assert_true(tcp_sb_is_lost(&sb, 10099, MSS));
}

static void test_sb_is_lost_two_small_ranges_not_lost(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10110 }, { 10200, 10210 });
	assert_false(tcp_sb_is_lost(&sb, UNA, MSS));
}

static void test_sb_is_lost_three_small_ranges_lost(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10110 }, { 10200, 10210 }, { 10300, 10310 });
	assert_true(tcp_sb_is_lost(&sb, UNA, MSS));
	/* between the first and second range only two lie above */
	assert_false(tcp_sb_is_lost(&sb, 10150, MSS));
}

static void test_sb_is_lost_seq_inside_range_counts_only_octets_above(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10400 });
	assert_true(tcp_sb_is_lost(&sb, 10198, MSS));   /* 201 octets above */
	assert_false(tcp_sb_is_lost(&sb, 10199, MSS));  /* 200 */
	assert_false(tcp_sb_is_lost(&sb, 10399, MSS));  /* none */
}

static void test_sb_is_lost_range_whose_last_octet_is_seq_does_not_count(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 10110 }, { 10200, 10210 }, { 10300, 10310 });
	assert_true(tcp_sb_is_lost(&sb, 10108, MSS));   /* octet 10109 is above */
	assert_false(tcp_sb_is_lost(&sb, 10109, MSS));  /* two ranges above */
}

static void test_sb_is_lost_above_everything_is_false(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 11000 });
	assert_false(tcp_sb_is_lost(&sb, 11000, MSS));
	assert_false(tcp_sb_is_lost(&sb, 15000, MSS));
}

static void test_sb_is_lost_empty_board_is_false(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_false(tcp_sb_is_lost(&sb, UNA, MSS));
}

static void test_sb_is_lost_depends_on_smss(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, NXT, NULL, { 10100, 13100 });
	assert_true(tcp_sb_is_lost(&sb, UNA, 1460));    /* 3000 > 2920 */
	assert_false(tcp_sb_is_lost(&sb, UNA, 1500));   /* 3000 = 3000 */
}

/* --- SetPipe (RFC 6675 §4) --- */

static void test_sb_pipe_without_sack_is_the_flight(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA, MSS), 1000);
}

static void test_sb_pipe_empty_flight_is_zero(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_pipe(&sb, UNA, UNA, UNA, MSS), 0);
}

/* Ten segments of 100 in flight, [10000, 11000). Segments 1 and 4 lost, the rest SACKed:
 * each hole has 600 or more SACKed octets above it, so both are lost and nothing counts. */
static void test_sb_pipe_two_lost_segments_before_retransmission_is_zero(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 }, { 10100, 10300 });
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA, MSS), 0);
}

/* Same, after retransmitting segment 1 (HighRxt + 1 = 10100): its 100 octets are lost
 * (no +1) and retransmitted (+1). After segment 4 too (10400): 200, the SACKed octets
 * between counting nothing. */
static void test_sb_pipe_retransmitted_lost_segments_count_once(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 }, { 10100, 10300 });
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, 10100, MSS), 100);
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, 10400, MSS), 200);
}

/* Segment 1 lost, only segments 2 and 3 SACKed so far: 200 octets above is not more than
 * 2 * SMSS, so segment 1 is not yet lost: pipe = 100 + 700 (segments 4..10). The SACK of
 * segment 4 makes it lost: pipe = 600 (segments 5..10). */
static void test_sb_pipe_hole_becomes_lost_with_third_sacked_segment(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10300 });
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA, MSS), 800);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10400 });
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA, MSS), 600);
}

/* SMSS 1000, 100-octet segments: SACKed [10100,10200), [10300,10400), [10500,10600).
 * Hole [10000,10100): three ranges above, lost. Hole [10200,10300): two ranges, 200 octets,
 * not lost. Hole [10400,10500): one. Above: [10600,11000). pipe = 0 + 100 + 100 + 400. */
static void test_sb_pipe_discontiguous_ranges_rule(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10200 }, { 10300, 10400 }, { 10500, 10600 });
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA, 1000), 600);
	/* retransmitting into the not-lost hole counts those octets twice */
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, 10250, 1000), 600 + 100 + 50);
}

static void test_sb_pipe_retransmitted_not_lost_counts_twice(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	/* RTO-style retransmission of data with no SACK at all */
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, 10300, MSS), 1000 + 300);
}

static void test_sb_pipe_high_rxt_below_snd_una_counts_nothing_extra(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, UNA - 500, MSS), 1000);
}

static void test_sb_pipe_high_rxt_beyond_snd_nxt_is_clamped(void **state)
{
	struct tcp_scoreboard sb;

	tcp_sb_init(&sb);
	assert_int_equal(tcp_sb_pipe(&sb, UNA, 11000, 12000, MSS), 2000);
}

/* --- NextSeg (RFC 6675 §4 rules 1 and 3) --- */

static void test_sb_next_seg_rule1_returns_first_lost_hole(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq = 0, len = 0;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 }, { 10100, 10300 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, false, &seq, &len));
	assert_int_equal(seq, 10000);
	assert_int_equal(len, 100);
}

static void test_sb_next_seg_after_first_retransmission_returns_second_hole(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq = 0, len = 0;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 }, { 10100, 10300 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, 10100, MSS, false, &seq, &len));
	assert_int_equal(seq, 10300);
	assert_int_equal(len, 100);
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, 10400, MSS, false, &seq, &len));
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, 10400, MSS, true, &seq, &len));
}

static void test_sb_next_seg_not_lost_needs_rule3(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq = 7, len = 7;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10300 });
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, false, &seq, &len));
	assert_int_equal(seq, 7);
	assert_int_equal(len, 7);
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, true, &seq, &len));
	assert_int_equal(seq, 10000);
	assert_int_equal(len, 100);
}

static void test_sb_next_seg_rule3_only_below_highest_sack(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10300 });
	/* above the highest SACK is rule 4 territory, the caller's */
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, 10100, MSS, true, &seq, &len));
}

static void test_sb_next_seg_starts_inside_hole_at_high_rxt(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10500, 11000 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, 10250, MSS, false, &seq, &len));
	assert_int_equal(seq, 10250);
	assert_int_equal(len, 100);
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, 10450, MSS, false, &seq, &len));
	assert_int_equal(seq, 10450);
	assert_int_equal(len, 50);      /* stops at the SACKed range */
}

static void test_sb_next_seg_high_rxt_inside_sacked_range_skips_it(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10100, 10200 }, { 10300, 10400 }, { 10500, 10600 },
	    { 10700, 11000 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, 10150, MSS, false, &seq, &len));
	assert_int_equal(seq, 10200);
	assert_int_equal(len, 100);
}

static void test_sb_next_seg_len_capped_at_smss(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10700, 11000 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, false, &seq, &len));
	assert_int_equal(seq, UNA);
	assert_int_equal(len, MSS);
}

static void test_sb_next_seg_high_rxt_below_snd_una_starts_at_snd_una(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 });
	assert_true(tcp_sb_next_seg(&sb, UNA, 11000, 9000, MSS, false, &seq, &len));
	assert_int_equal(seq, UNA);
}

static void test_sb_next_seg_without_sack_returns_false(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, false, &seq, &len));
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, UNA, MSS, true, &seq, &len));
}

static void test_sb_next_seg_zero_smss_returns_false(void **state)
{
	struct tcp_scoreboard sb;
	uint32_t seq, len;

	tcp_sb_init(&sb);
	UPD(&sb, UNA, UNA, 11000, NULL, { 10400, 11000 });
	assert_false(tcp_sb_next_seg(&sb, UNA, 11000, UNA, 0, true, &seq, &len));
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
	assert_true(tcp_sb_is_sacked(&sb, 0xffffffffu));
	assert_true(tcp_sb_is_sacked(&sb, 0));
	assert_false(tcp_sb_is_sacked(&sb, 0x40));
	assert_true(tcp_sb_highest_sacked(&sb, &right));
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

static void test_sb_wrap_pipe_and_next_seg_across_zero(void **state)
{
	struct tcp_scoreboard sb;
	const uint32_t una = 0xffffff80u, nxt = una + 1000;    /* 10 segments of 100 */
	uint32_t seq, len;

	tcp_sb_init(&sb);
	/* segments 1 and 4 lost, as in the SetPipe examples above, shifted across zero:
	 * holes [una, 0xffffffe4) and [0xac, 0x110) */
	UPD(&sb, una, una, nxt, NULL, { 0xffffffe4u, 0xacu }, { 0x110u, nxt });
	assert_int_equal(tcp_sb_pipe(&sb, una, nxt, una, 100), 0);
	assert_true(tcp_sb_next_seg(&sb, una, nxt, una, 100, false, &seq, &len));
	assert_int_equal(seq, una);
	assert_int_equal(len, 100);
	assert_true(tcp_sb_next_seg(&sb, una, nxt, 0xffffffe4u, 100, false, &seq, &len));
	assert_int_equal(seq, 0xac);
	assert_int_equal(len, 100);
	assert_int_equal(tcp_sb_pipe(&sb, una, nxt, 0xffffffe4u, 100), 100);
	assert_int_equal(tcp_sb_pipe(&sb, una, nxt, 0x110, 100), 200);
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
	assert_false(tcp_sb_highest_sacked(&sb, &right));
	assert_false(tcp_sb_is_sacked(&sb, 10100));
}

/* --- against the RFC's per-octet definitions, over a flight that crosses 2^32 --- */

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

/* IsLost per octet, straight from RFC 6675 §4. */
static bool model_is_lost(const struct model *m, uint32_t s, uint32_t smss)
{
	uint32_t bytes = 0;
	unsigned runs = 0;

	for (uint32_t i = off_of(m, s) + 1; i < off_of(m, m->nxt); i++) {
		if (!m->sacked[i])
			continue;
		bytes++;
		if (i == off_of(m, s) + 1 || !m->sacked[i - 1])
			runs++;
	}
	return runs >= TCP_SB_DUPTHRESH || bytes > (TCP_SB_DUPTHRESH - 1) * smss;
}

/* SetPipe per octet, RFC 6675 §4, with IsLost's two counts kept from the top down: a run of
 * SACKed octets has an octet above s once its top octet is above s. */
static uint32_t model_pipe(const struct model *m, uint32_t high_rxt, uint32_t smss)
{
	uint32_t pipe = 0, bytes = 0;
	unsigned runs = 0;

	for (uint32_t s = m->nxt; s-- != m->una;) {
		uint32_t t = off_of(m, s) + 1;  /* the octet just above s */

		if (s + 1 != m->nxt && m->sacked[t]) {
			bytes++;
			if (t + 1 == off_of(m, m->nxt) || !m->sacked[t + 1])
				runs++;
		}
		if (m->sacked[off_of(m, s)])
			continue;
		if (!(runs >= TCP_SB_DUPTHRESH || bytes > (TCP_SB_DUPTHRESH - 1) * smss))
			pipe++;
		if (seq_lt(s, high_rxt))
			pipe++;
	}
	return pipe;
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

static void test_sb_random_matches_per_octet_definitions(void **state)
{
	static struct model m;
	struct tcp_scoreboard sb;
	uint32_t seed = 0x9e3779b9u;
	unsigned dsacks = 0, ignored = 0, lost = 0, rule1 = 0;

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
		uint32_t newly = 0, smss = 20 + rnd(&seed) % 120;
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

		/* the queries, at a few places */
		for (int q = 0; q < 8; q++) {
			uint32_t flight2 = m.nxt - m.una;
			uint32_t hr = m.una + (flight2 ? rnd(&seed) % (flight2 + 1) : 0);
			uint32_t s = m.una + (flight2 ? rnd(&seed) % flight2 : 0);
			uint32_t seq = 0, len = 0, exp_seq, hi = 0;
			bool found = false, got;

			if (flight2 == 0)
				break;
			assert_int_equal(tcp_sb_is_sacked(&sb, s), m.sacked[off_of(&m, s)]);
			assert_int_equal(tcp_sb_is_lost(&sb, s, smss), model_is_lost(&m, s, smss));
			lost += model_is_lost(&m, s, smss);
			assert_int_equal(tcp_sb_pipe(&sb, m.una, m.nxt, hr, smss),
					 model_pipe(&m, hr, smss));

			/* NextSeg: lowest unSACKed octet >= hr below the highest SACKed one */
			if (tcp_sb_highest_sacked(&sb, &hi)) {
				for (exp_seq = hr; seq_lt(exp_seq, hi); exp_seq++) {
					if (!m.sacked[off_of(&m, exp_seq)]) {
						found = true;
						break;
					}
				}
			}
			got = tcp_sb_next_seg(&sb, m.una, m.nxt, hr, smss, true, &seq, &len);
			assert_int_equal(got, found);
			if (found) {
				uint32_t e = exp_seq;

				assert_int_equal(seq, exp_seq);
				while (e != exp_seq + smss && !m.sacked[off_of(&m, e)])
					e++;
				assert_int_equal(len, e - exp_seq);
				got = tcp_sb_next_seg(&sb, m.una, m.nxt, hr, smss, false, &seq,
						      &len);
				assert_int_equal(got, model_is_lost(&m, exp_seq, smss));
				rule1 += got;
			}
		}

		/* more data goes out */
		if (rnd(&seed) % 3 == 0)
			m.nxt += GRAIN * (1 + rnd(&seed) % 6);
	}
	/* the run covers every path */
	assert_true(seq_gt(m.una, 0) && seq_lt(m.una, 0x80000000u));
	assert_true(dsacks > 100);
	assert_true(ignored > 100);
	assert_true(lost > 100);
	assert_true(rule1 > 100);
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
		cmocka_unit_test(test_sb_is_lost_one_range_two_segments_not_lost),
		cmocka_unit_test(test_sb_is_lost_more_than_two_segments_lost),
		cmocka_unit_test(test_sb_is_lost_two_small_ranges_not_lost),
		cmocka_unit_test(test_sb_is_lost_three_small_ranges_lost),
		cmocka_unit_test(test_sb_is_lost_seq_inside_range_counts_only_octets_above),
		cmocka_unit_test(test_sb_is_lost_range_whose_last_octet_is_seq_does_not_count),
		cmocka_unit_test(test_sb_is_lost_above_everything_is_false),
		cmocka_unit_test(test_sb_is_lost_empty_board_is_false),
		cmocka_unit_test(test_sb_is_lost_depends_on_smss),
		cmocka_unit_test(test_sb_pipe_without_sack_is_the_flight),
		cmocka_unit_test(test_sb_pipe_empty_flight_is_zero),
		cmocka_unit_test(test_sb_pipe_two_lost_segments_before_retransmission_is_zero),
		cmocka_unit_test(test_sb_pipe_retransmitted_lost_segments_count_once),
		cmocka_unit_test(test_sb_pipe_hole_becomes_lost_with_third_sacked_segment),
		cmocka_unit_test(test_sb_pipe_discontiguous_ranges_rule),
		cmocka_unit_test(test_sb_pipe_retransmitted_not_lost_counts_twice),
		cmocka_unit_test(test_sb_pipe_high_rxt_below_snd_una_counts_nothing_extra),
		cmocka_unit_test(test_sb_pipe_high_rxt_beyond_snd_nxt_is_clamped),
		cmocka_unit_test(test_sb_next_seg_rule1_returns_first_lost_hole),
		cmocka_unit_test(test_sb_next_seg_after_first_retransmission_returns_second_hole),
		cmocka_unit_test(test_sb_next_seg_not_lost_needs_rule3),
		cmocka_unit_test(test_sb_next_seg_rule3_only_below_highest_sack),
		cmocka_unit_test(test_sb_next_seg_starts_inside_hole_at_high_rxt),
		cmocka_unit_test(test_sb_next_seg_high_rxt_inside_sacked_range_skips_it),
		cmocka_unit_test(test_sb_next_seg_len_capped_at_smss),
		cmocka_unit_test(test_sb_next_seg_high_rxt_below_snd_una_starts_at_snd_una),
		cmocka_unit_test(test_sb_next_seg_without_sack_returns_false),
		cmocka_unit_test(test_sb_next_seg_zero_smss_returns_false),
		cmocka_unit_test(test_sb_wrap_blocks_across_zero),
		cmocka_unit_test(test_sb_wrap_bogus_blocks_across_zero_are_ignored),
		cmocka_unit_test(test_sb_wrap_dsack_below_ack_across_zero),
		cmocka_unit_test(test_sb_wrap_pipe_and_next_seg_across_zero),
		cmocka_unit_test(test_sb_clear_forgets_everything),
		cmocka_unit_test(test_sb_random_matches_per_octet_definitions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
