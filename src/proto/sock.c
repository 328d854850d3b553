/* Socket FIFO memory (sock.h): the heap, or the owner's allocator. */
#include <stdlib.h>

#include "sock.h"

static size_t sock_fifo_bytes(uint32_t size)
{
	/* aligned_alloc wants a multiple of the alignment: the header is whole cache lines. */
	return (fifo_footprint(size) + FIFO_CACHE_LINE - 1) & ~(size_t)(FIFO_CACHE_LINE - 1);
}

struct fifo *sock_fifo_alloc(const struct sock_mem *mem, uint32_t bytes, uint32_t min)
{
	uint32_t size = min < FIFO_SIZE_MIN ? FIFO_SIZE_MIN : min;
	while (size < bytes && size < FIFO_SIZE_MAX)
		size <<= 1;
	size_t footprint = sock_fifo_bytes(size);
	struct fifo *f = malloc(sizeof(*f));
	if (f == NULL)
		return NULL;
	void *shm = mem != NULL ? mem->alloc(mem->ctx, footprint)
				    : aligned_alloc(FIFO_CACHE_LINE, footprint);
	if (shm == NULL) {
		free(f);
		return NULL;
	}
	fifo_init(f, shm, size);
	return f;
}

void sock_fifo_free(const struct sock_mem *mem, struct fifo *f)
{
	if (f == NULL)
		return;
	if (mem != NULL)
		mem->free(mem->ctx, f->shm, sock_fifo_bytes(f->size));
	else
		free(f->shm);
	free(f);
}
