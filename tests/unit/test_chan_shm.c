/* The application channel's shared-memory pieces: the segment layout, the SPSC rings (also
 * against a hostile peer's positions), and a worker's arena allocator on a real memfd. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../src/chan/chan_arena.h"
#include "../../src/chan/chan_shm.h"

/* --- layout --- */

static void test_layout_regions_do_not_overlap(void **state)
{
	struct chan_layout l;
	chan_layout(&l, 3, 1024, 1u << 24);
	assert_true(l.socks_off >= sizeof(struct chan_seg_hdr));
	assert_true(l.rings_off >= l.socks_off + 1024 * sizeof(struct chan_sock));
	/* The last process's last worker's event ring ends before the arenas. */
	struct chan_ring *last = chan_ev_ring(NULL, &l, CHAN_MAX_PROCS - 1, 2);
	assert_true((uint64_t)(uintptr_t)last + chan_ring_bytes(1024) <= l.arenas_off);
	assert_int_equal(l.seg_size, l.arenas_off + 3 * (1u << 24));
	assert_int_equal(l.arenas_off % (1u << 21), 0);
}

static void test_layout_rings_are_distinct_per_process_and_worker(void **state)
{
	struct chan_layout l;
	chan_layout(&l, 2, 256, 1u << 20);
	uintptr_t a = (uintptr_t)chan_cmd_ring(NULL, &l, 0, 1);
	uintptr_t b = (uintptr_t)chan_cmd_ring(NULL, &l, 1, 0);
	uintptr_t e = (uintptr_t)chan_ev_ring(NULL, &l, 0, 1);
	assert_true(a != b && a != e);
	assert_true(e >= a + chan_ring_bytes(CHAN_CMD_RING));
	assert_int_equal(chan_sock_worker(&l, 5), 1);
	assert_int_equal(chan_sock_worker(&l, 6), 0);
}

static void test_chan_sock_is_cache_aligned(void **state)
{
	assert_int_equal(sizeof(struct chan_sock) % CHAN_ALIGN, 0);
	assert_int_equal(offsetof(struct chan_ring, tail) - offsetof(struct chan_ring, head),
			 CHAN_ALIGN);
}

/* --- rings --- */

static struct chan_ring *ring_new(uint32_t entries)
{
	size_t bytes = chan_align_up(chan_ring_bytes(entries), CHAN_ALIGN);
	struct chan_ring *r = aligned_alloc(CHAN_ALIGN, bytes);
	assert_non_null(r);
	memset(r, 0, bytes);
	return r;
}

static void test_ring_fifo_order_and_full(void **state)
{
	struct chan_ring *r = ring_new(8);
	for (uint64_t i = 0; i < 8; i++)
		assert_true(chan_ring_put(r, 7, i));
	assert_false(chan_ring_put(r, 7, 99));
	assert_int_equal(chan_ring_count(r), 8);
	uint64_t v;
	int corrupt = 0;
	for (uint64_t i = 0; i < 8; i++) {
		assert_true(chan_ring_get(r, 7, &v, &corrupt));
		assert_int_equal(v, i);
	}
	assert_false(chan_ring_get(r, 7, &v, &corrupt));
	assert_int_equal(corrupt, 0);
	free(r);
}

static void test_ring_wraps_positions_past_2_32(void **state)
{
	struct chan_ring *r = ring_new(4);
	atomic_store(&r->head, UINT32_MAX - 1);
	atomic_store(&r->tail, UINT32_MAX - 1);
	uint64_t v;
	int corrupt = 0;
	for (uint64_t i = 0; i < 10; i++) {
		assert_true(chan_ring_put(r, 3, i));
		assert_true(chan_ring_get(r, 3, &v, &corrupt));
		assert_int_equal(v, i);
	}
	free(r);
}

static void test_ring_tail_beyond_capacity_is_corrupt(void **state)
{
	/* A hostile producer claims more entries than the ring holds: the consumer refuses
	 * rather than read stale slots forever. */
	struct chan_ring *r = ring_new(4);
	atomic_store(&r->tail, 100);
	uint64_t v;
	int corrupt = 0;
	assert_false(chan_ring_get(r, 3, &v, &corrupt));
	assert_int_equal(corrupt, 1);
	free(r);
}

static void test_ring_head_ahead_of_tail_looks_full_to_producer(void **state)
{
	/* A hostile consumer moves head past tail: the producer sees no room, never writes
	 * outside the slots. */
	struct chan_ring *r = ring_new(4);
	atomic_store(&r->head, 50);
	assert_false(chan_ring_put(r, 3, 1));
	free(r);
}

static void test_cmd_encoding(void **state)
{
	uint64_t c = chan_cmd(CHAN_CMD_SHUTDOWN, 2, 0x12345678);
	assert_int_equal(c >> 56, CHAN_CMD_SHUTDOWN);
	assert_int_equal((c >> 32) & 0xffffff, 2);
	assert_int_equal((uint32_t)c, 0x12345678);
}

/* --- arena --- */

struct arena_fixture {
	int fd;
	char *base;
	size_t size;
	struct chan_arena a;
};

static int arena_setup(void **state)
{
	struct arena_fixture *f = calloc(1, sizeof(*f));
	f->size = 1u << 24;
	f->fd = memfd_create("test-arena", MFD_CLOEXEC);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, (off_t)f->size), 0);
	f->base = mmap(NULL, f->size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);
	assert_true(f->base != MAP_FAILED);
	chan_arena_init(&f->a, f->fd, f->base, 1u << 20, f->size - (1u << 20));
	*state = f;
	return 0;
}

static int arena_teardown(void **state)
{
	struct arena_fixture *f = *state;
	chan_arena_fini(&f->a);
	munmap(f->base, f->size);
	close(f->fd);
	free(f);
	return 0;
}

static void test_arena_blocks_are_aligned_disjoint_and_inside(void **state)
{
	struct arena_fixture *f = *state;
	char *p = chan_arena_alloc(&f->a, 200);
	char *q = chan_arena_alloc(&f->a, 5000);
	char *r = chan_arena_alloc(&f->a, 200);
	assert_non_null(p);
	assert_non_null(q);
	assert_non_null(r);
	assert_int_equal((uintptr_t)p % 4096, 0);
	/* Offsets in the segment are naturally aligned to the block size (mmap gives the
	 * segment itself only page alignment). */
	assert_int_equal((uintptr_t)(q - f->base) % 8192, 0);
	assert_true(p >= f->base + (1u << 20));
	assert_true(q + 8192 <= f->base + f->size);
	assert_true(p + 4096 <= q || q + 8192 <= p);
	assert_true(r != p);
	assert_int_equal(f->a.live_blocks, 3);
	assert_int_equal(f->a.live_bytes, 4096 + 8192 + 4096);
}

static void test_arena_small_requests_share_pages_of_slots(void **state)
{
	struct arena_fixture *f = *state;
	const unsigned per_page = 4096 / CHAN_ARENA_SLOT;
	char *s[4096 / CHAN_ARENA_SLOT + 1];
	for (unsigned i = 0; i <= per_page; i++) {
		s[i] = chan_arena_alloc(&f->a, CHAN_ARENA_SLOT);
		assert_non_null(s[i]);
		assert_int_equal((uintptr_t)(s[i] - f->base) % CHAN_ARENA_SLOT, 0);
		memset(s[i], (int)i, CHAN_ARENA_SLOT);
	}
	/* One page for the first 32, in order, at the arena's end; a second for the 33rd,
	 * below it. Blocks still start at the arena's start: no gap for the pages. */
	assert_ptr_equal(s[0] + 4096, f->base + f->size);
	assert_ptr_equal(s[per_page] + 4096, s[0]);
	char *block = chan_arena_alloc(&f->a, 1u << 18);
	assert_ptr_equal(block, f->base + (1u << 20));
	for (unsigned i = 1; i < per_page; i++)
		assert_ptr_equal(s[i], s[0] + i * CHAN_ARENA_SLOT);
	assert_int_equal(f->a.live_blocks, 3);
	assert_int_equal(f->a.live_bytes, 2 * 4096 + (1u << 18));
	/* Nothing written to a slot reached its neighbours. */
	for (unsigned i = 0; i <= per_page; i++)
		assert_int_equal((unsigned char)s[i][CHAN_ARENA_SLOT - 1], i);
	/* A freed slot is the next one handed out; its page stays. */
	chan_arena_free(&f->a, s[5], CHAN_ARENA_SLOT);
	assert_ptr_equal(chan_arena_alloc(&f->a, 64), s[5]);
	assert_int_equal(f->a.live_blocks, 3);
}

static void test_arena_reuses_freed_blocks_of_the_same_size(void **state)
{
	struct arena_fixture *f = *state;
	char *p = chan_arena_alloc(&f->a, 3000);
	chan_arena_free(&f->a, p, 3000);
	assert_int_equal(f->a.live_blocks, 0);
	assert_ptr_equal(chan_arena_alloc(&f->a, 4096), p);
}

static void test_arena_refuses_what_does_not_fit(void **state)
{
	struct arena_fixture *f = *state;
	assert_null(chan_arena_alloc(&f->a, f->size));
	/* Fill it with 1 MiB blocks until it refuses: never past the end. */
	unsigned n = 0;
	char *p;
	while ((p = chan_arena_alloc(&f->a, 1u << 20)) != NULL) {
		assert_true(p + (1u << 20) <= f->base + f->size);
		n++;
	}
	assert_int_equal(n, 15);
}

static void test_arena_punches_freed_memory_beyond_the_kept_ones(void **state)
{
	/* Blocks freed past CHAN_ARENA_KEEP go back to the system: they read as zeros. */
	struct arena_fixture *f = *state;
	char *blocks[CHAN_ARENA_KEEP + 1];
	for (unsigned i = 0; i <= CHAN_ARENA_KEEP; i++) {
		blocks[i] = chan_arena_alloc(&f->a, 4096);
		memset(blocks[i], 0x5a, 4096);
	}
	for (unsigned i = 0; i <= CHAN_ARENA_KEEP; i++)
		chan_arena_free(&f->a, blocks[i], 4096);
	assert_int_equal((unsigned char)blocks[CHAN_ARENA_KEEP][0], 0);
	assert_int_equal((unsigned char)blocks[0][0], 0x5a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_regions_do_not_overlap),
		cmocka_unit_test(test_layout_rings_are_distinct_per_process_and_worker),
		cmocka_unit_test(test_chan_sock_is_cache_aligned),
		cmocka_unit_test(test_ring_fifo_order_and_full),
		cmocka_unit_test(test_ring_wraps_positions_past_2_32),
		cmocka_unit_test(test_ring_tail_beyond_capacity_is_corrupt),
		cmocka_unit_test(test_ring_head_ahead_of_tail_looks_full_to_producer),
		cmocka_unit_test(test_cmd_encoding),
		cmocka_unit_test_setup_teardown(test_arena_blocks_are_aligned_disjoint_and_inside,
						arena_setup, arena_teardown),
		cmocka_unit_test_setup_teardown(test_arena_small_requests_share_pages_of_slots,
						arena_setup, arena_teardown),
		cmocka_unit_test_setup_teardown(test_arena_reuses_freed_blocks_of_the_same_size,
						arena_setup, arena_teardown),
		cmocka_unit_test_setup_teardown(test_arena_refuses_what_does_not_fit, arena_setup,
						arena_teardown),
		cmocka_unit_test_setup_teardown(test_arena_punches_freed_memory_beyond_the_kept_ones,
						arena_setup, arena_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
