/* The SPSC byte FIFO: sizes and alignment, data of exactly the FIFO's size, full and empty, wrap-around at every position (and
 * across the 2^32 wrap of the positions), peek and slices at offsets, out-of-order writes past
 * the tail published later, clamping against corrupt positions, a randomized run against a
 * byte-by-byte reference, and two threads moving 64 MB through a small FIFO. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/fifo.h"
#include "test_rand.h"

/* The byte at stream position i: not periodic in 256, so a misplaced chunk shows. */
static uint8_t pat(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ i >> 8);
}

static void fill_pat(uint8_t *buf, uint64_t from, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		buf[k] = pat(from + k);
}

static bool check_pat(const uint8_t *buf, uint64_t from, uint32_t n)
{
	for (uint32_t k = 0; k < n; k++)
		if (buf[k] != pat(from + k))
			return false;
	return true;
}

/* The data in a block of exactly size bytes (ASan sees any access past it), the positions
 * in one of their own, as the application channel's arena gives them. */
static struct fifo *fifo_new(uint32_t size)
{
	struct fifo *f = malloc(sizeof(*f));
	void *pos = aligned_alloc(FIFO_CACHE_LINE, sizeof(struct fifo_pos));
	void *data = malloc(size);

	assert_true(fifo_size_valid(size));
	assert_non_null(f);
	assert_non_null(pos);
	assert_non_null(data);
	/* Garbage everywhere: nothing may depend on it being zero. */
	memset(pos, 0xa5, sizeof(struct fifo_pos));
	memset(data, 0xa5, size);
	assert_int_equal(fifo_init(f, pos, data, size), 0);
	return f;
}

static void fifo_del(struct fifo *f)
{
	free(f->pos);
	free(f->data);
	free(f);
}

/* Positions and a byte of data: enough for the init tests, which never touch data. */
static struct fifo_pos pos_mem;
static uint8_t data_mem[1];

/* Moves both positions to pos (as if pos bytes had gone through), FIFO empty. */
static void set_positions(struct fifo *f, uint32_t pos)
{
	atomic_store(&f->pos->head, pos);
	atomic_store(&f->pos->tail, pos);
}

/* --- sizes, init --- */

static void test_fifo_size_valid_only_powers_of_two_in_range(void **state)
{
	assert_true(fifo_size_valid(64));
	assert_true(fifo_size_valid(4096));
	assert_true(fifo_size_valid(1u << 30));
	assert_false(fifo_size_valid(0));
	assert_false(fifo_size_valid(32));
	assert_false(fifo_size_valid(100));
	assert_false(fifo_size_valid(1u << 31));
	assert_false(fifo_size_valid(UINT32_MAX));
}

static void test_fifo_init_non_power_of_two_returns_einval(void **state)
{
	static struct fifo hdr;

	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 96), -EINVAL);
	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 4095), -EINVAL);
	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 4097), -EINVAL);
}

static void test_fifo_init_too_small_returns_einval(void **state)
{
	static struct fifo hdr;

	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 0), -EINVAL);
	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 1), -EINVAL);
	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 32), -EINVAL);
}

static void test_fifo_init_too_large_returns_einval(void **state)
{
	static struct fifo hdr;

	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 1u << 31), -EINVAL);
}

static void test_fifo_init_min_and_max_sizes_succeed(void **state)
{
	/* init writes only the positions, so they alone show the limits are accepted. */
	static struct fifo hdr;

	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 64), 0);
	assert_int_equal(hdr.size, 64);
	assert_int_equal(fifo_init(&hdr, &pos_mem, data_mem, 1u << 30), 0);
	assert_int_equal(hdr.size, 1u << 30);
}

static void test_fifo_init_null_returns_einval(void **state)
{
	assert_int_equal(fifo_init(NULL, &pos_mem, data_mem, 64), -EINVAL);
	static struct fifo hdr;

	assert_int_equal(fifo_init(&hdr, NULL, data_mem, 64), -EINVAL);
	assert_int_equal(fifo_init(&hdr, &pos_mem, NULL, 64), -EINVAL);
}

static void test_fifo_init_misaligned_positions_return_einval(void **state)
{
	uint8_t *mem = aligned_alloc(FIFO_CACHE_LINE, 2 * sizeof(struct fifo_pos));

	assert_non_null(mem);
	struct fifo f;

	assert_int_equal(fifo_init(&f, mem + 8, data_mem, 64), -EINVAL);
	free(mem);
}

static void test_fifo_init_gives_empty_fifo(void **state)
{
	struct fifo *f = fifo_new(256);

	assert_int_equal(fifo_used(f), 0);
	assert_int_equal(fifo_free(f), 256);
	fifo_del(f);
}

static void test_fifo_positions_sit_on_separate_cache_lines(void **state)
{
	size_t h = offsetof(struct fifo_pos, head), t = offsetof(struct fifo_pos, tail);

	assert_true(h / FIFO_CACHE_LINE != t / FIFO_CACHE_LINE);
	assert_int_equal(sizeof(struct fifo_pos), 2 * FIFO_CACHE_LINE);
}

static void test_fifo_full_and_wrapped_stays_inside_size_bytes_of_data(void **state)
{
	/* Every byte of a malloc'ed block of exactly size bytes, and none past it (ASan). */
	struct fifo *f = fifo_new(64);
	uint8_t in[64], out[64];

	set_positions(f, 40);
	fill_pat(in, 0, sizeof(in));
	assert_int_equal(fifo_enqueue(f, in, sizeof(in)), 64);
	assert_int_equal(fifo_free(f), 0);
	assert_int_equal(fifo_dequeue(f, out, sizeof(out)), 64);
	assert_true(check_pat(out, 0, 64));
	fifo_del(f);
}

/* --- enqueue, dequeue, full, empty --- */

static void test_fifo_enqueue_into_empty_returns_len(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[10];

	fill_pat(in, 0, sizeof(in));
	assert_int_equal(fifo_enqueue(f, in, sizeof(in)), 10);
	assert_int_equal(fifo_used(f), 10);
	assert_int_equal(fifo_free(f), 54);
	fifo_del(f);
}

static void test_fifo_enqueue_more_than_free_copies_only_free(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[100], out[100];

	fill_pat(in, 0, sizeof(in));
	assert_int_equal(fifo_enqueue(f, in, 100), 64);
	assert_int_equal(fifo_free(f), 0);
	assert_int_equal(fifo_dequeue(f, out, 100), 64);
	assert_memory_equal(out, in, 64);
	fifo_del(f);
}

static void test_fifo_enqueue_into_full_returns_zero(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64] = { 0 };

	assert_int_equal(fifo_enqueue(f, in, 64), 64);
	assert_int_equal(fifo_enqueue(f, in, 1), 0);
	assert_int_equal(fifo_used(f), 64);
	fifo_del(f);
}

static void test_fifo_enqueue_zero_len_changes_nothing(void **state)
{
	struct fifo *f = fifo_new(64);

	assert_int_equal(fifo_enqueue(f, NULL, 0), 0);
	assert_int_equal(fifo_used(f), 0);
	fifo_del(f);
}

static void test_fifo_dequeue_from_empty_returns_zero(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t out[8];

	assert_int_equal(fifo_dequeue(f, out, sizeof(out)), 0);
	fifo_del(f);
}

static void test_fifo_dequeue_more_than_used_returns_used(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[20], out[64];

	fill_pat(in, 0, sizeof(in));
	fifo_enqueue(f, in, 20);
	assert_int_equal(fifo_dequeue(f, out, 64), 20);
	assert_memory_equal(out, in, 20);
	assert_int_equal(fifo_used(f), 0);
	fifo_del(f);
}

static void test_fifo_dequeue_in_pieces_keeps_order(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[50], out[50];

	fill_pat(in, 0, sizeof(in));
	fifo_enqueue(f, in, 50);
	assert_int_equal(fifo_dequeue(f, out, 7), 7);
	assert_int_equal(fifo_dequeue(f, out + 7, 30), 30);
	assert_int_equal(fifo_dequeue(f, out + 37, 13), 13);
	assert_memory_equal(out, in, 50);
	fifo_del(f);
}

static void test_fifo_used_plus_free_is_size_throughout(void **state)
{
	struct fifo *f = fifo_new(128);
	uint8_t buf[128];
	uint32_t seed = 99;

	memset(buf, 0, sizeof(buf));
	for (unsigned i = 0; i < 1000; i++) {
		if (rnd(&seed) % 2)
			fifo_enqueue(f, buf, rnd(&seed) % 129);
		else
			fifo_dequeue(f, buf, rnd(&seed) % 129);
		assert_int_equal(fifo_used(f) + fifo_free(f), 128);
	}
	fifo_del(f);
}

/* Every start position, every length: the copy that straddles the end of data[] comes out
 * whole and in order, for enqueue/dequeue and for peek. */
static void test_fifo_wraparound_every_start_every_len_round_trips(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64], out[64];

	for (uint32_t start = 0; start < 64; start++) {
		for (uint32_t len = 1; len <= 64; len++) {
			set_positions(f, start);
			fill_pat(in, start * 100 + len, len);
			assert_int_equal(fifo_enqueue(f, in, len), len);
			assert_int_equal(fifo_used(f), len);
			memset(out, 0, sizeof(out));
			assert_int_equal(fifo_peek(f, 0, out, len), len);
			assert_memory_equal(out, in, len);
			memset(out, 0, sizeof(out));
			assert_int_equal(fifo_dequeue(f, out, len), len);
			assert_memory_equal(out, in, len);
			assert_int_equal(fifo_used(f), 0);
		}
	}
	fifo_del(f);
}

static void test_fifo_positions_across_uint32_wrap_round_trip(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64], out[64];
	uint64_t sent = 0, got = 0;

	set_positions(f, UINT32_MAX - 100);
	/* 300 bytes in 40-byte steps: the positions wrap past 2^32 on the way. */
	while (got < 300) {
		uint32_t n;

		fill_pat(in, sent, 40);
		sent += fifo_enqueue(f, in, 40);
		assert_true(fifo_used(f) <= 64);
		n = fifo_dequeue(f, out, 25);
		assert_true(check_pat(out, got, n));
		got += n;
	}
	assert_true(atomic_load(&f->pos->head) < 1000);
	fifo_del(f);
}

static void test_fifo_full_at_uint32_wrap_reports_full(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64] = { 0 };

	set_positions(f, UINT32_MAX - 10);
	assert_int_equal(fifo_enqueue(f, in, 64), 64);
	assert_int_equal(fifo_used(f), 64);
	assert_int_equal(fifo_free(f), 0);
	assert_int_equal(fifo_enqueue(f, in, 1), 0);
	fifo_del(f);
}

/* --- peek, consume --- */

static void test_fifo_peek_does_not_consume(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[16], out[16];

	fill_pat(in, 0, 16);
	fifo_enqueue(f, in, 16);
	assert_int_equal(fifo_peek(f, 0, out, 16), 16);
	assert_int_equal(fifo_peek(f, 0, out, 16), 16);
	assert_int_equal(fifo_used(f), 16);
	assert_memory_equal(out, in, 16);
	fifo_del(f);
}

static void test_fifo_peek_at_offset_returns_bytes_from_there(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[40], out[40];

	fill_pat(in, 0, 40);
	fifo_enqueue(f, in, 40);
	assert_int_equal(fifo_peek(f, 13, out, 10), 10);
	assert_memory_equal(out, in + 13, 10);
	fifo_del(f);
}

static void test_fifo_peek_len_clamped_to_bytes_after_offset(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[40], out[64];

	fill_pat(in, 0, 40);
	fifo_enqueue(f, in, 40);
	assert_int_equal(fifo_peek(f, 30, out, 64), 10);
	assert_memory_equal(out, in + 30, 10);
	fifo_del(f);
}

static void test_fifo_peek_offset_at_or_beyond_used_returns_zero(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[40] = { 0 }, out[8];

	fifo_enqueue(f, in, 40);
	assert_int_equal(fifo_peek(f, 40, out, 8), 0);
	assert_int_equal(fifo_peek(f, 41, out, 8), 0);
	assert_int_equal(fifo_peek(f, UINT32_MAX, out, 8), 0);
	fifo_del(f);
}

static void test_fifo_peek_offset_across_wrap_returns_contiguous_copy(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64], out[64];

	set_positions(f, 40);
	fill_pat(in, 7, 64);
	fifo_enqueue(f, in, 64);
	/* Offset 20 starts at index 60: 4 bytes before the end of data[], the rest after. */
	assert_int_equal(fifo_peek(f, 20, out, 30), 30);
	assert_memory_equal(out, in + 20, 30);
	fifo_del(f);
}

static void test_fifo_consume_drops_from_head(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[30], out[30];

	fill_pat(in, 0, 30);
	fifo_enqueue(f, in, 30);
	assert_int_equal(fifo_consume(f, 12), 12);
	assert_int_equal(fifo_used(f), 18);
	assert_int_equal(fifo_dequeue(f, out, 30), 18);
	assert_memory_equal(out, in + 12, 18);
	fifo_del(f);
}

static void test_fifo_consume_more_than_used_clamps(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[30] = { 0 };

	fifo_enqueue(f, in, 30);
	assert_int_equal(fifo_consume(f, 31), 30);
	assert_int_equal(fifo_used(f), 0);
	assert_int_equal(fifo_consume(f, 5), 0);
	assert_int_equal(fifo_free(f), 64);
	fifo_del(f);
}

/* The send side: bytes stay until acknowledged, retransmissions peek at offsets. */
static void test_fifo_send_side_peek_unacked_then_consume_on_ack(void **state)
{
	struct fifo *f = fifo_new(256);
	uint8_t in[200], out[200];

	fill_pat(in, 0, 200);
	fifo_enqueue(f, in, 200);
	assert_int_equal(fifo_peek(f, 0, out, 100), 100);     /* first transmission */
	assert_int_equal(fifo_peek(f, 100, out + 100, 100), 100);
	assert_memory_equal(out, in, 200);
	assert_int_equal(fifo_consume(f, 60), 60);              /* ACK of 60 */
	assert_int_equal(fifo_peek(f, 0, out, 40), 40);       /* retransmit the next 40 */
	assert_memory_equal(out, in + 60, 40);
	assert_int_equal(fifo_free(f), 256 - 140);
	fifo_del(f);
}

/* --- write_at, produce --- */

static void test_fifo_write_at_beyond_tail_invisible_until_produce(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[30], out[30];

	fill_pat(in, 0, 30);
	assert_int_equal(fifo_write_at(f, 10, in + 10, 20), 0);
	assert_int_equal(fifo_used(f), 0);
	assert_int_equal(fifo_dequeue(f, out, 30), 0);
	assert_int_equal(fifo_free(f), 64);
	fifo_del(f);
}

static void test_fifo_write_at_hole_filled_then_produce_publishes_in_order(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[50], out[50];

	fill_pat(in, 0, 50);
	/* Segments arrive 3, 1, 2 (out of order), then the stream is published at once. */
	assert_int_equal(fifo_write_at(f, 30, in + 30, 20), 0);
	assert_int_equal(fifo_write_at(f, 0, in, 10), 0);
	assert_int_equal(fifo_write_at(f, 10, in + 10, 20), 0);
	assert_int_equal(fifo_produce(f, 50), 50);
	assert_int_equal(fifo_used(f), 50);
	assert_int_equal(fifo_dequeue(f, out, 50), 50);
	assert_memory_equal(out, in, 50);
	fifo_del(f);
}

static void test_fifo_write_at_partial_produce_keeps_rest_for_later(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[40], out[40];

	fill_pat(in, 0, 40);
	fifo_write_at(f, 0, in, 40);
	assert_int_equal(fifo_produce(f, 15), 15);
	assert_int_equal(fifo_dequeue(f, out, 40), 15);
	/* The rest is still right after the new tail. */
	assert_int_equal(fifo_produce(f, 25), 25);
	assert_int_equal(fifo_dequeue(f, out + 15, 40), 25);
	assert_memory_equal(out, in, 40);
	fifo_del(f);
}

static void test_fifo_write_at_exactly_free_space_succeeds(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64] = { 0 };

	fifo_enqueue(f, in, 20);
	assert_int_equal(fifo_write_at(f, 4, in, 40), 0);
	assert_int_equal(fifo_write_at(f, 44, in, 0), 0);
	fifo_del(f);
}

static void test_fifo_write_at_past_free_returns_enospc_writes_nothing(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64], zero[64] = { 0 }, out[64];

	fill_pat(in, 0, 64);
	fifo_write_at(f, 0, zero, 64);
	assert_int_equal(fifo_write_at(f, 30, in, 35), -ENOSPC);
	assert_int_equal(fifo_write_at(f, 65, in, 0), -ENOSPC);
	fifo_produce(f, 64);
	fifo_dequeue(f, out, 64);
	assert_memory_equal(out, zero, 64);
	fifo_del(f);
}

static void test_fifo_write_at_offset_plus_len_overflow_returns_enospc(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[8] = { 0 };

	assert_int_equal(fifo_write_at(f, UINT32_MAX, in, 2), -ENOSPC);
	assert_int_equal(fifo_write_at(f, 2, in, UINT32_MAX), -ENOSPC);
	fifo_del(f);
}

static void test_fifo_write_at_when_full_returns_enospc(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[64] = { 0 };

	fifo_enqueue(f, in, 64);
	assert_int_equal(fifo_write_at(f, 0, in, 1), -ENOSPC);
	assert_int_equal(fifo_write_at(f, 0, in, 0), 0);
	fifo_del(f);
}

static void test_fifo_write_at_across_wrap_round_trips(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[60], out[60];

	set_positions(f, 50);
	fill_pat(in, 3, 60);
	/* Offset 10 starts at index 60: the write straddles the end of data[]. */
	assert_int_equal(fifo_write_at(f, 10, in + 10, 50), 0);
	assert_int_equal(fifo_write_at(f, 0, in, 10), 0);
	assert_int_equal(fifo_produce(f, 60), 60);
	assert_int_equal(fifo_dequeue(f, out, 60), 60);
	assert_memory_equal(out, in, 60);
	fifo_del(f);
}

static void test_fifo_produce_more_than_free_clamps(void **state)
{
	struct fifo *f = fifo_new(64);
	uint8_t in[10] = { 0 };

	fifo_enqueue(f, in, 10);
	assert_int_equal(fifo_produce(f, 100), 54);
	assert_int_equal(fifo_used(f), 64);
	assert_int_equal(fifo_produce(f, 1), 0);
	fifo_del(f);
}

/* --- slices --- */

static void test_fifo_read_slices_empty_returns_zero_slices(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2] = { { (uint8_t *)1, 9 }, { (uint8_t *)1, 9 } };

	assert_int_equal(fifo_read_slices(f, 0, 64, s), 0);
	assert_null(s[0].base);
	assert_int_equal(s[0].len, 0);
	assert_null(s[1].base);
	assert_int_equal(s[1].len, 0);
	fifo_del(f);
}

static void test_fifo_read_slices_contiguous_returns_one(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[30];

	fill_pat(in, 0, 30);
	fifo_enqueue(f, in, 30);
	assert_int_equal(fifo_read_slices(f, 0, 64, s), 1);
	assert_int_equal(s[0].len, 30);
	assert_memory_equal(s[0].base, in, 30);
	assert_int_equal(s[1].len, 0);
	assert_null(s[1].base);
	fifo_del(f);
}

static void test_fifo_read_slices_across_wrap_returns_two(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[40];

	set_positions(f, 50);
	fill_pat(in, 0, 40);
	fifo_enqueue(f, in, 40);
	assert_int_equal(fifo_read_slices(f, 0, 64, s), 2);
	assert_ptr_equal(s[0].base, f->data + 50);
	assert_int_equal(s[0].len, 14);
	assert_ptr_equal(s[1].base, f->data);
	assert_int_equal(s[1].len, 26);
	assert_memory_equal(s[0].base, in, 14);
	assert_memory_equal(s[1].base, in + 14, 26);
	fifo_del(f);
}

static void test_fifo_read_slices_ending_exactly_at_end_returns_one(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[14] = { 0 };

	set_positions(f, 50);
	fifo_enqueue(f, in, 14);
	assert_int_equal(fifo_read_slices(f, 0, 64, s), 1);
	assert_int_equal(s[0].len, 14);
	fifo_del(f);
}

static void test_fifo_read_slices_offset_and_max_limit_range(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[40];

	set_positions(f, 50);
	fill_pat(in, 0, 40);
	fifo_enqueue(f, in, 40);
	/* Offset 20 is past the wrap: one slice, limited by max. */
	assert_int_equal(fifo_read_slices(f, 20, 5, s), 1);
	assert_ptr_equal(s[0].base, f->data + 6);
	assert_int_equal(s[0].len, 5);
	assert_memory_equal(s[0].base, in + 20, 5);
	/* Offset 10, max 10: 4 bytes before the wrap, 6 after. */
	assert_int_equal(fifo_read_slices(f, 10, 10, s), 2);
	assert_int_equal(s[0].len, 4);
	assert_int_equal(s[1].len, 6);
	assert_memory_equal(s[0].base, in + 10, 4);
	assert_memory_equal(s[1].base, in + 14, 6);
	fifo_del(f);
}

static void test_fifo_read_slices_offset_at_used_returns_zero(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[40] = { 0 };

	fifo_enqueue(f, in, 40);
	assert_int_equal(fifo_read_slices(f, 40, 64, s), 0);
	assert_int_equal(fifo_read_slices(f, UINT32_MAX, 64, s), 0);
	assert_int_equal(fifo_read_slices(f, 0, 0, s), 0);
	fifo_del(f);
}

static void test_fifo_write_slices_when_full_returns_zero(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[64] = { 0 };

	fifo_enqueue(f, in, 64);
	assert_int_equal(fifo_write_slices(f, 0, 64, s), 0);
	assert_int_equal(s[0].len, 0);
	fifo_del(f);
}

static void test_fifo_write_slices_across_wrap_then_produce_round_trips(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t out[64];

	set_positions(f, 40);
	assert_int_equal(fifo_write_slices(f, 0, 1000, s), 2);
	assert_int_equal(s[0].len, 24);
	assert_int_equal(s[1].len, 40);
	fill_pat(s[0].base, 0, s[0].len);
	fill_pat(s[1].base, s[0].len, s[1].len);
	assert_int_equal(fifo_used(f), 0);
	assert_int_equal(fifo_produce(f, 64), 64);
	assert_int_equal(fifo_dequeue(f, out, 64), 64);
	assert_true(check_pat(out, 0, 64));
	fifo_del(f);
}

static void test_fifo_write_slices_offset_skips_reserved_bytes(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t in[64], out[64];

	fill_pat(in, 0, 64);
	assert_int_equal(fifo_write_slices(f, 16, 8, s), 1);
	assert_ptr_equal(s[0].base, f->data + 16);
	assert_int_equal(s[0].len, 8);
	memcpy(s[0].base, in + 16, 8);
	fifo_write_at(f, 0, in, 16);
	fifo_produce(f, 24);
	assert_int_equal(fifo_dequeue(f, out, 64), 24);
	assert_memory_equal(out, in, 24);
	assert_int_equal(fifo_write_slices(f, 64, 1, s), 0);
	fifo_del(f);
}

/* --- a peer that corrupts the header (shared memory) --- */

static void test_fifo_corrupt_positions_keep_counts_within_size(void **state)
{
	struct fifo *f = fifo_new(64);
	struct fifo_slice s[2];
	uint8_t big[256];

	atomic_store(&f->pos->head, 1000);
	atomic_store(&f->pos->tail, 1000 + 5 * 64);   /* claims 320 bytes used */
	assert_int_equal(fifo_used(f), 64);
	assert_int_equal(fifo_free(f), 0);
	assert_int_equal(fifo_enqueue(f, big, 256), 0);
	assert_int_equal(fifo_write_at(f, 0, big, 1), -ENOSPC);
	assert_int_equal(fifo_peek(f, 0, big, 256), 64);
	fifo_read_slices(f, 0, 256, s);
	assert_true(s[0].len + s[1].len <= 64);
	assert_int_equal(fifo_dequeue(f, big, 256), 64);

	atomic_store(&f->pos->head, 1000);
	atomic_store(&f->pos->tail, 900);             /* tail behind head */
	assert_true(fifo_used(f) <= 64);
	assert_int_equal(fifo_produce(f, 256), 0);
	fifo_write_slices(f, 0, 256, s);
	assert_true(s[0].len + s[1].len <= 64);
	fifo_del(f);
}

/* --- randomized against a reference --- */

/* The reference: the same ring kept byte by byte with 64-bit positions. */
struct ref {
	uint32_t size;
	uint64_t head, tail;
	uint8_t mem[1024];
};

static uint8_t *ref_at(struct ref *r, uint64_t pos)
{
	return &r->mem[pos % r->size];
}

static void run_random_model(uint32_t size, uint32_t start, uint32_t seed)
{
	struct fifo *f = fifo_new(size);
	struct ref r = { .size = size, .head = start, .tail = start };
	uint8_t buf[2048], exp[2048];

	assert_true(size <= sizeof(r.mem));
	set_positions(f, start);
	memset(f->data, 0, size);

	for (unsigned op = 0; op < 20000; op++) {
		uint32_t used = (uint32_t)(r.tail - r.head), room = size - used;
		uint32_t len = rnd(&seed) % (size + size / 2 + 1);
		uint32_t off = rnd(&seed) % (size + 8);
		struct fifo_slice s[2];
		uint32_t n;

		switch (rnd(&seed) % 9) {
		case 0: /* enqueue */
			for (uint32_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd(&seed);
			n = len < room ? len : room;
			assert_int_equal(fifo_enqueue(f, buf, len), n);
			for (uint32_t k = 0; k < n; k++)
				*ref_at(&r, r.tail + k) = buf[k];
			r.tail += n;
			break;
		case 1: /* dequeue */
			n = len < used ? len : used;
			for (uint32_t k = 0; k < n; k++)
				exp[k] = *ref_at(&r, r.head + k);
			assert_int_equal(fifo_dequeue(f, buf, len), n);
			assert_memory_equal(buf, exp, n);
			r.head += n;
			break;
		case 2: /* peek at an offset */
			n = off < used ? used - off : 0;
			n = len < n ? len : n;
			for (uint32_t k = 0; k < n; k++)
				exp[k] = *ref_at(&r, r.head + off + k);
			assert_int_equal(fifo_peek(f, off, buf, len), n);
			assert_memory_equal(buf, exp, n);
			break;
		case 3: /* consume */
			n = len < used ? len : used;
			assert_int_equal(fifo_consume(f, len), n);
			r.head += n;
			break;
		case 4: /* write at an offset past the tail */
			len %= 64;
			for (uint32_t k = 0; k < len; k++)
				buf[k] = (uint8_t)rnd(&seed);
			if (off > room || len > room - off) {
				assert_int_equal(fifo_write_at(f, off, buf, len), -ENOSPC);
				break;
			}
			assert_int_equal(fifo_write_at(f, off, buf, len), 0);
			for (uint32_t k = 0; k < len; k++)
				*ref_at(&r, r.tail + off + k) = buf[k];
			break;
		case 5: /* produce */
			n = len < room ? len : room;
			assert_int_equal(fifo_produce(f, len), n);
			r.tail += n;
			break;
		case 6: /* read slices */
			n = off < used ? used - off : 0;
			n = len < n ? len : n;
			fifo_read_slices(f, off, len, s);
			assert_int_equal(s[0].len + s[1].len, n);
			for (uint32_t k = 0; k < n; k++) {
				uint8_t b = k < s[0].len ? s[0].base[k] : s[1].base[k - s[0].len];

				assert_int_equal(b, *ref_at(&r, r.head + off + k));
			}
			break;
		case 7: /* write slices, then maybe publish */
			n = off < room ? room - off : 0;
			n = len < n ? len : n;
			fifo_write_slices(f, off, len, s);
			assert_int_equal(s[0].len + s[1].len, n);
			for (uint32_t k = 0; k < n; k++) {
				uint8_t b = (uint8_t)rnd(&seed);

				if (k < s[0].len)
					s[0].base[k] = b;
				else
					s[1].base[k - s[0].len] = b;
				*ref_at(&r, r.tail + off + k) = b;
			}
			break;
		default: /* counts */
			break;
		}
		used = (uint32_t)(r.tail - r.head);
		assert_int_equal(fifo_used(f), used);
		assert_int_equal(fifo_free(f), size - used);
		assert_int_equal(atomic_load(&f->pos->head), (uint32_t)r.head);
		assert_int_equal(atomic_load(&f->pos->tail), (uint32_t)r.tail);
	}
	fifo_del(f);
}

static void test_fifo_random_ops_match_reference(void **state)
{
	run_random_model(256, 0, 0x1234abcd);
}

static void test_fifo_random_ops_smallest_size_match_reference(void **state)
{
	run_random_model(64, 17, 0x600d5eed);
}

static void test_fifo_random_ops_across_uint32_wrap_match_reference(void **state)
{
	/* 20000 ops move far more than 2^32 - start bytes: the positions wrap mid-run. */
	run_random_model(1024, UINT32_MAX - 3000, 0xdeadbeef);
}

/* --- two threads --- */

#define STRESS_BYTES (64u << 20)

struct stress {
	struct fifo *f;
	uint64_t mismatches;          /* consumer: bytes off the pattern */
	uint64_t errors;              /* producer: calls that failed with room available */
	uint64_t received;
};

/* Producer: the pattern stream, through enqueue, write_at + produce and write_slices. No
 * cmocka asserts off the main thread (they longjmp): failures are counted instead. */
static void *stress_producer(void *arg)
{
	struct stress *st = arg;
	uint8_t buf[1500];
	uint64_t sent = 0;
	uint32_t seed = 0x51ed;

	while (sent < STRESS_BYTES) {
		uint32_t len = 1 + rnd(&seed) % sizeof(buf);
		uint32_t n = 0;

		if (len > STRESS_BYTES - sent)
			len = (uint32_t)(STRESS_BYTES - sent);
		switch (rnd(&seed) % 3) {
		case 0:
			fill_pat(buf, sent, len);
			n = fifo_enqueue(st->f, buf, len);
			break;
		case 1: {
			uint32_t room = fifo_free(st->f);

			n = len < room ? len : room;
			if (n == 0)
				break;
			/* The second half first, as out-of-order data would arrive. */
			fill_pat(buf, sent, n);
			st->errors += fifo_write_at(st->f, n / 2, buf + n / 2, n - n / 2) != 0;
			st->errors += fifo_write_at(st->f, 0, buf, n / 2) != 0;
			st->errors += fifo_produce(st->f, n) != n;
			break;
		}
		default: {
			struct fifo_slice s[2];

			fifo_write_slices(st->f, 0, len, s);
			fill_pat(s[0].base, sent, s[0].len);
			fill_pat(s[1].base, sent + s[0].len, s[1].len);
			n = fifo_produce(st->f, s[0].len + s[1].len);
			break;
		}
		}
		sent += n;
		if (n == 0)
			sched_yield();
	}
	return NULL;
}

/* Consumer: checks every byte against the pattern, through dequeue, peek + consume and
 * read slices. */
static void *stress_consumer(void *arg)
{
	struct stress *st = arg;
	uint8_t buf[1500];
	uint64_t got = 0;
	uint32_t seed = 0xc0de;

	while (got < STRESS_BYTES) {
		uint32_t len = 1 + rnd(&seed) % sizeof(buf);
		uint32_t n;

		switch (rnd(&seed) % 3) {
		case 0:
			n = fifo_dequeue(st->f, buf, len);
			st->mismatches += !check_pat(buf, got, n);
			break;
		case 1:
			n = fifo_peek(st->f, 0, buf, len);
			st->mismatches += !check_pat(buf, got, n);
			fifo_consume(st->f, n);
			break;
		default: {
			struct fifo_slice s[2];

			fifo_read_slices(st->f, 0, len, s);
			st->mismatches += !check_pat(s[0].base, got, s[0].len);
			st->mismatches += !check_pat(s[1].base, got + s[0].len, s[1].len);
			n = fifo_consume(st->f, s[0].len + s[1].len);
			break;
		}
		}
		got += n;
		if (n == 0)
			sched_yield();
	}
	st->received = got;
	return NULL;
}

static void test_fifo_two_threads_move_64mb_in_order(void **state)
{
	struct stress st = { .f = fifo_new(4096) };
	pthread_t prod, cons;

	assert_int_equal(pthread_create(&cons, NULL, stress_consumer, &st), 0);
	assert_int_equal(pthread_create(&prod, NULL, stress_producer, &st), 0);
	assert_int_equal(pthread_join(prod, NULL), 0);
	assert_int_equal(pthread_join(cons, NULL), 0);
	assert_int_equal(st.mismatches, 0);
	assert_int_equal(st.errors, 0);
	assert_int_equal(st.received, STRESS_BYTES);
	assert_int_equal(fifo_used(st.f), 0);
	fifo_del(st.f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_size_valid_only_powers_of_two_in_range),
		cmocka_unit_test(test_fifo_init_non_power_of_two_returns_einval),
		cmocka_unit_test(test_fifo_init_too_small_returns_einval),
		cmocka_unit_test(test_fifo_init_too_large_returns_einval),
		cmocka_unit_test(test_fifo_init_min_and_max_sizes_succeed),
		cmocka_unit_test(test_fifo_init_null_returns_einval),
		cmocka_unit_test(test_fifo_init_misaligned_positions_return_einval),
		cmocka_unit_test(test_fifo_init_gives_empty_fifo),
		cmocka_unit_test(test_fifo_positions_sit_on_separate_cache_lines),
		cmocka_unit_test(test_fifo_full_and_wrapped_stays_inside_size_bytes_of_data),
		cmocka_unit_test(test_fifo_enqueue_into_empty_returns_len),
		cmocka_unit_test(test_fifo_enqueue_more_than_free_copies_only_free),
		cmocka_unit_test(test_fifo_enqueue_into_full_returns_zero),
		cmocka_unit_test(test_fifo_enqueue_zero_len_changes_nothing),
		cmocka_unit_test(test_fifo_dequeue_from_empty_returns_zero),
		cmocka_unit_test(test_fifo_dequeue_more_than_used_returns_used),
		cmocka_unit_test(test_fifo_dequeue_in_pieces_keeps_order),
		cmocka_unit_test(test_fifo_used_plus_free_is_size_throughout),
		cmocka_unit_test(test_fifo_wraparound_every_start_every_len_round_trips),
		cmocka_unit_test(test_fifo_positions_across_uint32_wrap_round_trip),
		cmocka_unit_test(test_fifo_full_at_uint32_wrap_reports_full),
		cmocka_unit_test(test_fifo_peek_does_not_consume),
		cmocka_unit_test(test_fifo_peek_at_offset_returns_bytes_from_there),
		cmocka_unit_test(test_fifo_peek_len_clamped_to_bytes_after_offset),
		cmocka_unit_test(test_fifo_peek_offset_at_or_beyond_used_returns_zero),
		cmocka_unit_test(test_fifo_peek_offset_across_wrap_returns_contiguous_copy),
		cmocka_unit_test(test_fifo_consume_drops_from_head),
		cmocka_unit_test(test_fifo_consume_more_than_used_clamps),
		cmocka_unit_test(test_fifo_send_side_peek_unacked_then_consume_on_ack),
		cmocka_unit_test(test_fifo_write_at_beyond_tail_invisible_until_produce),
		cmocka_unit_test(test_fifo_write_at_hole_filled_then_produce_publishes_in_order),
		cmocka_unit_test(test_fifo_write_at_partial_produce_keeps_rest_for_later),
		cmocka_unit_test(test_fifo_write_at_exactly_free_space_succeeds),
		cmocka_unit_test(test_fifo_write_at_past_free_returns_enospc_writes_nothing),
		cmocka_unit_test(test_fifo_write_at_offset_plus_len_overflow_returns_enospc),
		cmocka_unit_test(test_fifo_write_at_when_full_returns_enospc),
		cmocka_unit_test(test_fifo_write_at_across_wrap_round_trips),
		cmocka_unit_test(test_fifo_produce_more_than_free_clamps),
		cmocka_unit_test(test_fifo_read_slices_empty_returns_zero_slices),
		cmocka_unit_test(test_fifo_read_slices_contiguous_returns_one),
		cmocka_unit_test(test_fifo_read_slices_across_wrap_returns_two),
		cmocka_unit_test(test_fifo_read_slices_ending_exactly_at_end_returns_one),
		cmocka_unit_test(test_fifo_read_slices_offset_and_max_limit_range),
		cmocka_unit_test(test_fifo_read_slices_offset_at_used_returns_zero),
		cmocka_unit_test(test_fifo_write_slices_when_full_returns_zero),
		cmocka_unit_test(test_fifo_write_slices_across_wrap_then_produce_round_trips),
		cmocka_unit_test(test_fifo_write_slices_offset_skips_reserved_bytes),
		cmocka_unit_test(test_fifo_corrupt_positions_keep_counts_within_size),
		cmocka_unit_test(test_fifo_random_ops_match_reference),
		cmocka_unit_test(test_fifo_random_ops_smallest_size_match_reference),
		cmocka_unit_test(test_fifo_random_ops_across_uint32_wrap_match_reference),
		cmocka_unit_test(test_fifo_two_threads_move_64mb_in_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
