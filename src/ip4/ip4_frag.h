/* IPv4 fragmentation on output (RFC 791 §3.2) and the IPv4 side of reassembly on input (the
 * table itself, shared with IPv6, is stack/reass.h). */
#ifndef DPS_IP4_IP4_FRAG_H
#define DPS_IP4_IP4_FRAG_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "stack/reass.h"
#include "wire/ipv4.h"

/* Takes one IPv4 fragment into r (stack/reass.h): m's data starts at the IPv4 header, m is
 * trimmed to ip->total_len and ip is its validated header (ip->mf or ip->frag_off non-zero).
 * Always takes ownership of m. Returns the reassembled datagram when this fragment completed
 * it (DONE): a chain whose data starts at the first fragment's header, with total length,
 * fragment field and header checksum rewritten. Otherwise NULL, with *verdict. */
struct rte_mbuf *ip4_reass_input(struct reass *r, uint64_t now_ms, struct rte_mbuf *m,
				 const struct ip4_repr *ip, enum reass_verdict *verdict);

/* Splits the datagram m (data at an IPv4 header without DF, any number of segments) into
 * fragments of at most mtu bytes each, freshly allocated from pool: each carries a copy of the
 * header (options other than those with the copy flag are kept only in the first, RFC 791),
 * payload in multiples of 8, MF and offset set, checksum computed. A datagram that already
 * fits is copied into one fragment. On success frees m, stores the fragments in out[0..n) and
 * returns n. Returns -EMSGSIZE when more than max_out fragments would be needed, mtu cannot
 * carry 8 payload bytes, or DF is set and m exceeds mtu; -ENOBUFS when pool is empty; -EINVAL
 * when m does not start with a well-formed header (version, IHL, total length within pkt_len,
 * option lengths) or pool's data room cannot hold it; m is untouched on error. */
int ip4_fragment(struct rte_mbuf *m, uint16_t mtu, struct rte_mempool *pool,
		 struct rte_mbuf **out, unsigned max_out);

#endif
