/* Building a packet from pieces of another: what fragmentation on output does in both
 * families (ip4_fragment.c, ip6_fragment.c). */
#ifndef DPS_STACK_MBUF_COPY_H
#define DPS_STACK_MBUF_COPY_H

#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>

/* A new mbuf (a chain when one segment cannot hold it) from pool holding hdr[0..hlen)
 * followed by src's bytes [src_off, src_off + len), with src's port and l3_len = hlen; NULL
 * when pool runs out. The caller makes sure hlen fits in one segment's room and the range
 * exists in src. */
struct rte_mbuf *mbuf_copy_behind(struct rte_mempool *pool, const uint8_t *hdr, size_t hlen,
				  const struct rte_mbuf *src, uint32_t src_off, uint32_t len);

#endif
