/* A byte FIFO with one producer and one consumer, lock-free, behind TCP and UDP socket
 * buffers.
 *
 * Why this shape:
 *  - The shared parts hold no pointers, so that the same bytes can sit in a memfd segment
 *    mapped at different addresses by the stack and by an application process. They are
 *    two: the positions (struct fifo_pos, two cache lines) and the data (exactly size
 *    bytes), in memory the caller provides, each where it likes. Kept apart, the data of a
 *    power-of-two FIFO is a power-of-two block: an allocator of power-of-two blocks (the
 *    application channel's arena) gives it no more than its size, where positions in front
 *    of the data made every FIFO take a block twice its size.
 *  - The size is in neither: each side keeps the size it trusts in its own struct fifo, so
 *    a peer that scribbles on shared memory cannot widen the indexing.
 *  - head (consumer) and tail (producer) are free-running uint32_t positions, masked with
 *    size - 1 only to index data[]: used = tail - head holds across the 2^32 wrap, and a full
 *    FIFO is told from an empty one without wasting a byte.
 *  - Each side writes only its own position, with a release store after touching data[],
 *    and reads the other's with an acquire load before touching data[] (C11 §5.1.2.4): that
 *    is the whole synchronisation, no locks, no read-modify-write. head and tail sit on
 *    separate cache lines so the two sides do not bounce one line between cores.
 *  - TCP needs more than enqueue/dequeue. The receive side writes out-of-order segments past
 *    the tail (fifo_write_at) and publishes them once the hole fills (fifo_produce); the send
 *    side keeps unacknowledged bytes, re-reads them at an offset from the head for
 *    retransmission (fifo_peek, fifo_read_slices) and drops them when acknowledged
 *    (fifo_consume). The slice calls give zero-copy access to at most two contiguous runs
 *    (before and after the wrap).
 *
 * Threading contract: producer calls (enqueue, write_at, produce, write_slices, fifo_free)
 * from one thread at a time, consumer calls (dequeue, peek, consume, read_slices, fifo_used)
 * from one thread at a time; the two sides may run concurrently. fifo_init must complete
 * before either side starts; the other side then takes its view with fifo_attach, of the
 * same positions and data.
 *
 * Robustness against a peer that scribbles on the positions (the shared-memory case): every
 * count is clamped so that a corrupt head or tail can garble data but never make a call
 * touch memory outside data[size]. */
#ifndef DPS_BASE_FIFO_H
#define DPS_BASE_FIFO_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIFO_CACHE_LINE 64
#define FIFO_SIZE_MIN 64u
#define FIFO_SIZE_MAX (1u << 30)

/* Cross-process use needs address-free atomics, which the C standard guarantees only for
 * lock-free ones (C11 §7.17.5 note). */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "fifo positions need lock-free 32-bit atomics");

/* The positions the two sides share; the data are elsewhere. */
struct fifo_pos {
	_Alignas(FIFO_CACHE_LINE) _Atomic uint32_t head;  /* consumer position */
	_Alignas(FIFO_CACHE_LINE) _Atomic uint32_t tail;  /* producer position */
};

/* One side's view of a FIFO. */
struct fifo {
	uint32_t size;                          /* power of two, FIFO_SIZE_MIN..FIFO_SIZE_MAX */
	struct fifo_pos *pos;
	uint8_t *data;                          /* size bytes */
};

/* A contiguous run of bytes inside a FIFO's data[]. */
struct fifo_slice {
	uint8_t *base;
	uint32_t len;
};

/* Whether size is a FIFO's: a power of two in FIFO_SIZE_MIN..FIFO_SIZE_MAX. The data then
 * take exactly size bytes, the positions sizeof(struct fifo_pos). */
bool fifo_size_valid(uint32_t size);

/* Makes f a view of an empty FIFO of size bytes, with its positions at pos and its data at
 * data. Returns 0, or -EINVAL if size is not valid, or f, pos or data is NULL, or pos is not
 * FIFO_CACHE_LINE-aligned (the data need no alignment). */
int fifo_init(struct fifo *f, void *pos, void *data, uint32_t size);
/* The same view of a FIFO someone else initialised (positions untouched). */
int fifo_attach(struct fifo *f, void *pos, void *data, uint32_t size);

/* Bytes readable now. Exact for the consumer; for anyone else a snapshot. */
uint32_t fifo_used(const struct fifo *f);

/* Bytes writable now. Exact for the producer; for anyone else a snapshot. */
uint32_t fifo_free(const struct fifo *f);

/* --- producer side --- */

/* Copies min(len, free) bytes to the tail and publishes them. Returns the count copied. */
uint32_t fifo_enqueue(struct fifo *f, const void *src, uint32_t len);

/* Copies len bytes to tail + offset without publishing them (out-of-order data). Returns 0,
 * or -ENOSPC if offset + len exceeds the free space (nothing is written then). */
int fifo_write_at(struct fifo *f, uint32_t offset, const void *src, uint32_t len);

/* Publishes len bytes already written at the tail (by fifo_write_at or through
 * fifo_write_slices). len is clamped to the free space; returns the count published. */
uint32_t fifo_produce(struct fifo *f, uint32_t len);

/* Describes up to max writable bytes starting at tail + offset as at most two slices (the
 * second after the wrap). Returns the number of non-empty slices (0, 1 or 2); unused slices
 * are set to { NULL, 0 }. Nothing is published: call fifo_produce afterwards. */
unsigned fifo_write_slices(struct fifo *f, uint32_t offset, uint32_t max,
			   struct fifo_slice s[2]);

/* --- consumer side --- */

/* Copies min(len, used) bytes from the head and consumes them. Returns the count copied. */
uint32_t fifo_dequeue(struct fifo *f, void *dst, uint32_t len);

/* Copies up to len bytes starting at head + offset without consuming them. Returns the count
 * copied: 0 if offset >= used. */
uint32_t fifo_peek(const struct fifo *f, uint32_t offset, void *dst, uint32_t len);

/* Drops len bytes at the head (acknowledged or read in place). len is clamped to the used
 * space; returns the count dropped. */
uint32_t fifo_consume(struct fifo *f, uint32_t len);

/* Describes up to max readable bytes starting at head + offset as at most two slices.
 * Returns the number of non-empty slices (0, 1 or 2); unused slices are { NULL, 0 }. The
 * bytes stay valid until the consumer consumes them. The slices point into f's data (not
 * const: the socket layer may hand them to a NIC or to writev). */
unsigned fifo_read_slices(const struct fifo *f, uint32_t offset, uint32_t max,
			  struct fifo_slice s[2]);

#endif
