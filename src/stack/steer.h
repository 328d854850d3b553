/* Which worker owns a flow (DESIGN.md: packets of one flow always reach the same worker).
 *
 * A flow's owner is a function of the flow alone, known to every worker and to the
 * application channel, so that:
 *  - a worker that receives a datagram it does not own (the port could not steer it: no
 *    hardware RSS, fewer queues than workers, or a PMD that spreads by its own hash) hands
 *    it to the owner over a ring (software RSS);
 *  - an active open picks a source port whose flow the opening worker owns;
 *  - a port that hashes in hardware is given the same key and table, so that it agrees.
 *
 * TCP: the Toeplitz hash of the 4-tuple as it arrives (source, destination, source port,
 * destination port), with the symmetric key, indexes a 128-entry table of workers, exactly
 * as a NIC's RSS indirection table (RETA) picks a queue. UDP: the local port alone, so
 * that a socket bound to a port, which receives from any peer, lives on one worker.
 * Fragments: the addresses' hash (the ports are only in the first fragment), so that every
 * fragment of a datagram meets at one worker, which reassembles it and then hands the
 * datagram to its owner. ICMP errors: the owner of the flow they quote (RFC 792), so they
 * reach the socket. Everything else (ARP, ICMP echo, forwarding) any worker handles. */
#ifndef DPS_STACK_STEER_H
#define DPS_STACK_STEER_H

#include <stdint.h>

#include "wire/inet_addr.h"
#include "wire/ipv4.h"
#include "wire/toeplitz.h"

#define STEER_TABLE_SIZE 128 /* a power of two; NICs' RETA sizes are multiples of it */
#define STEER_ANY UINT32_MAX /* any worker may handle it */

struct steer {
	unsigned nb_workers;
	uint8_t table[STEER_TABLE_SIZE];
	struct toeplitz hash;
};

/* Spreads the table's entries round-robin over nb_workers (1..255). */
void steer_init(struct steer *st, unsigned nb_workers);

static inline unsigned steer_of_hash(const struct steer *st, uint32_t hash)
{
	return st->table[hash & (STEER_TABLE_SIZE - 1)];
}

/* A TCP segment from src:sport to dst:dport (as it arrives: remote first). */
unsigned steer_tcp_owner(const struct steer *st, uint32_t src, uint32_t dst, uint16_t sport,
			 uint16_t dport);
/* The same for either family (addresses as inet_addr.h has them): IPv4 as above, IPv6 by
 * the Toeplitz hash of its 36-byte tuple, as a NIC's RSS hashes TCP over IPv6. */
unsigned steer_tcp_owner_inet(const struct steer *st, const struct inet_addr *src,
			      const struct inet_addr *dst, uint16_t sport, uint16_t dport);
/* A UDP datagram to local port lport. */
unsigned steer_udp_owner(const struct steer *st, uint16_t lport);
/* A fragment from src to dst, before reassembly. */
unsigned steer_frag_owner(const struct steer *st, uint32_t src, uint32_t dst);
/* A whole datagram (header ip, l4[0..l4_len) the first bytes of its payload, all of them or
 * at least STEER_L4_BYTES), or STEER_ANY. */
#define STEER_L4_BYTES (8 + 60 + 4) /* an ICMP error quoting a header and its ports */
unsigned steer_datagram_owner(const struct steer *st, const struct ip4_repr *ip,
			      const uint8_t *l4, uint32_t l4_len);

#endif
