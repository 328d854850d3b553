/* Socket FIFO memory (sock.h): the heap, or the owner's allocator. A FIFO takes two blocks
 * of it: its positions (sizeof(struct fifo_pos)) and its data (exactly its size). */
#include <stdlib.h>

#include "sock.h"

static void *sock_mem_alloc(const struct sock_mem *mem, size_t bytes)
{
	/* aligned_alloc wants a multiple of the alignment: both sizes are whole cache lines. */
	return mem != NULL ? mem->alloc(mem->ctx, bytes) : aligned_alloc(FIFO_CACHE_LINE, bytes);
}

static void sock_mem_free(const struct sock_mem *mem, void *p, size_t bytes)
{
	if (mem != NULL)
		mem->free(mem->ctx, p, bytes);
	else
		free(p);
}

struct fifo *sock_fifo_alloc(const struct sock_mem *mem, uint32_t bytes, uint32_t min)
{
	uint32_t size = min < FIFO_SIZE_MIN ? FIFO_SIZE_MIN : min;
	while (size < bytes && size < FIFO_SIZE_MAX)
		size <<= 1;
	struct fifo *f = malloc(sizeof(*f));
	void *pos = f != NULL ? sock_mem_alloc(mem, sizeof(struct fifo_pos)) : NULL;
	void *data = pos != NULL ? sock_mem_alloc(mem, size) : NULL;
	if (data == NULL) {
		if (pos != NULL)
			sock_mem_free(mem, pos, sizeof(struct fifo_pos));
		free(f);
		return NULL;
	}
	fifo_init(f, pos, data, size);
	return f;
}

void sock_fifo_free(const struct sock_mem *mem, struct fifo *f)
{
	if (f == NULL)
		return;
	sock_mem_free(mem, f->data, f->size);
	sock_mem_free(mem, f->pos, sizeof(struct fifo_pos));
	free(f);
}
