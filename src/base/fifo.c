/* The single-producer single-consumer byte FIFO (see fifo.h for the design).
 *
 * Memory ordering, in one place: the producer copies into data[] and then release-stores
 * tail; the consumer acquire-loads tail before copying out, so it sees those bytes. The
 * consumer copies out and then release-stores head; the producer acquire-loads head before
 * overwriting, so it never overwrites bytes still being read. A side reads its own position
 * relaxed: nobody else writes it. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "fifo.h"

bool fifo_size_valid(uint32_t size)
{
	return size >= FIFO_SIZE_MIN && size <= FIFO_SIZE_MAX && (size & (size - 1)) == 0;
}

int fifo_attach(struct fifo *f, void *pos, void *data, uint32_t size)
{
	if (f == NULL || pos == NULL || data == NULL || !fifo_size_valid(size))
		return -EINVAL;
	/* The cache-line split of head and tail, and UBSan, assume the declared alignment. */
	if ((uintptr_t)pos % _Alignof(struct fifo_pos) != 0)
		return -EINVAL;
	f->size = size;
	f->pos = pos;
	f->data = data;
	return 0;
}

int fifo_init(struct fifo *f, void *pos, void *data, uint32_t size)
{
	int rc = fifo_attach(f, pos, data, size);
	if (rc == 0) {
		atomic_init(&f->pos->head, 0);
		atomic_init(&f->pos->tail, 0);
	}
	return rc;
}

/* tail - head, clamped to size: corrupt positions (shared memory) must not produce counts
 * that reach outside data[]. Loads head first, so a consumer or producer calling this gets
 * the exact value for its side (its own position cannot move under it). */
static uint32_t fifo_span(const struct fifo *f)
{
	uint32_t head = atomic_load_explicit(&f->pos->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&f->pos->tail, memory_order_acquire);
	uint32_t used = tail - head;

	return used > f->size ? f->size : used;
}

uint32_t fifo_used(const struct fifo *f)
{
	return fifo_span(f);
}

uint32_t fifo_free(const struct fifo *f)
{
	return f->size - fifo_span(f);
}

/* Producer view: its own tail, and head acquired so the space it frees may be reused. */
static uint32_t fifo_prod_free(const struct fifo *f, uint32_t *tail)
{
	uint32_t head = atomic_load_explicit(&f->pos->head, memory_order_acquire);
	uint32_t used;

	*tail = atomic_load_explicit(&f->pos->tail, memory_order_relaxed);
	used = *tail - head;
	return used >= f->size ? 0 : f->size - used;
}

/* Consumer view: its own head, and tail acquired so the bytes published are visible. */
static uint32_t fifo_cons_used(const struct fifo *f, uint32_t *head)
{
	uint32_t tail = atomic_load_explicit(&f->pos->tail, memory_order_acquire);
	uint32_t used;

	*head = atomic_load_explicit(&f->pos->head, memory_order_relaxed);
	used = tail - *head;
	return used > f->size ? f->size : used;
}

/* Copies n <= size bytes into data[] at position pos, wrapping at the end. */
static void fifo_copy_in(struct fifo *f, uint32_t pos, const uint8_t *src, uint32_t n)
{
	uint32_t i = pos & (f->size - 1);
	uint32_t first = f->size - i < n ? f->size - i : n;

	if (first > 0)
		memcpy(f->data + i, src, first);
	if (n > first)
		memcpy(f->data, src + first, n - first);
}

/* Copies n <= size bytes out of data[] from position pos, wrapping at the end. */
static void fifo_copy_out(const struct fifo *f, uint32_t pos, uint8_t *dst, uint32_t n)
{
	uint32_t i = pos & (f->size - 1);
	uint32_t first = f->size - i < n ? f->size - i : n;

	if (first > 0)
		memcpy(dst, f->data + i, first);
	if (n > first)
		memcpy(dst + first, f->data, n - first);
}

/* Describes n <= size bytes from position pos as one or two slices. */
static unsigned fifo_slices(const struct fifo *f, uint32_t pos, uint32_t n,
			    struct fifo_slice s[2])
{
	/* The data belong to whichever side asked; const only marks that the view and the
	 * positions are not changed here. */
	uint8_t *data = f->data;
	uint32_t i = pos & (f->size - 1);
	uint32_t first = f->size - i < n ? f->size - i : n;

	s[0].base = NULL;
	s[0].len = 0;
	s[1].base = NULL;
	s[1].len = 0;
	if (n == 0)
		return 0;
	s[0].base = data + i;
	s[0].len = first;
	if (n == first)
		return 1;
	s[1].base = data;
	s[1].len = n - first;
	return 2;
}

uint32_t fifo_enqueue(struct fifo *f, const void *src, uint32_t len)
{
	uint32_t tail;
	uint32_t n = fifo_prod_free(f, &tail);

	if (n > len)
		n = len;
	if (n == 0)
		return 0;
	fifo_copy_in(f, tail, src, n);
	atomic_store_explicit(&f->pos->tail, tail + n, memory_order_release);
	return n;
}

int fifo_write_at(struct fifo *f, uint32_t offset, const void *src, uint32_t len)
{
	uint32_t tail;
	uint32_t room = fifo_prod_free(f, &tail);

	/* Compare before subtracting: offset + len could wrap around uint32_t. */
	if (offset > room || len > room - offset)
		return -ENOSPC;
	if (len > 0)
		fifo_copy_in(f, tail + offset, src, len);
	return 0;
}

uint32_t fifo_produce(struct fifo *f, uint32_t len)
{
	uint32_t tail;
	uint32_t n = fifo_prod_free(f, &tail);

	if (n > len)
		n = len;
	if (n > 0)
		atomic_store_explicit(&f->pos->tail, tail + n, memory_order_release);
	return n;
}

unsigned fifo_write_slices(struct fifo *f, uint32_t offset, uint32_t max,
			   struct fifo_slice s[2])
{
	uint32_t tail;
	uint32_t room = fifo_prod_free(f, &tail);
	uint32_t n = offset < room ? room - offset : 0;

	if (n > max)
		n = max;
	return fifo_slices(f, tail + offset, n, s);
}

uint32_t fifo_dequeue(struct fifo *f, void *dst, uint32_t len)
{
	uint32_t head;
	uint32_t n = fifo_cons_used(f, &head);

	if (n > len)
		n = len;
	if (n == 0)
		return 0;
	fifo_copy_out(f, head, dst, n);
	atomic_store_explicit(&f->pos->head, head + n, memory_order_release);
	return n;
}

uint32_t fifo_peek(const struct fifo *f, uint32_t offset, void *dst, uint32_t len)
{
	uint32_t head;
	uint32_t used = fifo_cons_used(f, &head);
	uint32_t n;

	if (offset >= used)
		return 0;
	n = used - offset;
	if (n > len)
		n = len;
	if (n > 0)
		fifo_copy_out(f, head + offset, dst, n);
	return n;
}

uint32_t fifo_consume(struct fifo *f, uint32_t len)
{
	uint32_t head;
	uint32_t n = fifo_cons_used(f, &head);

	if (n > len)
		n = len;
	if (n > 0)
		atomic_store_explicit(&f->pos->head, head + n, memory_order_release);
	return n;
}

unsigned fifo_read_slices(const struct fifo *f, uint32_t offset, uint32_t max,
			  struct fifo_slice s[2])
{
	uint32_t head;
	uint32_t used = fifo_cons_used(f, &head);
	uint32_t n = offset < used ? used - offset : 0;

	if (n > max)
		n = max;
	return fifo_slices(f, head + offset, n, s);
}
