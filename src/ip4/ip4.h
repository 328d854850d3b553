/* IPv4 in a stack instance: input (ip4_input.c), output (ip4_output.c), forwarding
 * (ip4_forward.c), ICMP (ip4_icmp.c), fragmentation and reassembly (ip4_frag.h). */
#ifndef DPS_IP4_IP4_H
#define DPS_IP4_IP4_H

#include <stdbool.h>
#include <stdint.h>

#include "ip4_frag.h"
#include "stack/stack.h"
#include "wire/ipv4.h"

/* IPv4 as a registered protocol: frames of its EtherType, the reassembly table, ICMP. */
extern const struct stack_proto ip4_proto;

/* m's data starts at the IPv4 header; how is STACK_IN_*. */
void ip4_input(struct stack *s, struct rte_mbuf *m, unsigned how);
/* Forwards a datagram not addressed to us along r, ip4_input's lookup of its destination
 * (NULL: no route). */
void ip4_forward(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip,
		 const struct route *r);
/* Prepends an IPv4 header to the transport payload m and sends it. src 0 picks the source
 * from the route; ttl 0 is the default (IP4_DEFAULT_TTL). Returns 0 or -errno
 * (EHOSTUNREACH/ENETUNREACH: no route; the packet is counted and freed in every case). */
int ip4_output(struct stack *s, struct rte_mbuf *m, uint8_t proto, uint32_t src, uint32_t dst,
	       uint8_t tos, uint8_t ttl, bool df);
/* Sends a datagram whose header is complete along route r to dst: fragments it or answers
 * frag-needed when it exceeds the route MTU. */
void ip4_route_output(struct stack *s, struct rte_mbuf *m, const struct route *r, uint32_t dst,
		      bool forwarded);

/* The Internet checksum of the len transport bytes at m's IPv4 payload with the pseudo-
 * header (RFC 768, RFC 9293 §3.1), across a chain of segments: 0 when it verifies, 1 when
 * the chain is shorter than len. */
uint16_t ip4_l4_checksum_chain(const struct rte_mbuf *m, const struct ip4_repr *ip,
			       uint8_t proto, uint32_t len);

/* Copies the reassembly table's drop counts into s->drops. */
void ip4_reass_sync_drops(struct stack *s);

/* ICMP (ip4_icmp.c). */
void icmp4_input(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip, bool bcast);
/* Answers the datagram orig (data at its IPv4 header) with an ICMP error, subject to the
 * RFC 1122 §3.2.2 suppression rules and the rate limit. info is the 32-bit "rest of header"
 * (next-hop MTU for frag-needed, pointer<<24 for parameter problem). Does not free orig. */
void icmp4_send_error(struct stack *s, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t info);

#endif
