/* Entry points between the layers of one stack instance. Not for use outside src/proto. */
#ifndef DPS_STACK_STACK_INTERNAL_H
#define DPS_STACK_STACK_INTERNAL_H

#include "stack.h"
#include "wire/ipv4.h"

/* Link layer (link.c): ARP in and out, and the neighbour table's callbacks. */
void arp_input(struct stack *s, uint16_t port, struct rte_mbuf *m);
void arp_announce(struct stack *s, uint16_t port, uint32_t addr);
extern const struct neigh_ops stack_neigh_ops;
/* Sends m (data at the IPv4 header) to next hop nh on port, resolving its MAC first. */
void link_output(struct stack *s, uint16_t port, uint32_t nh, struct rte_mbuf *m);
/* Sends m (data at the IPv4 header) to the Ethernet broadcast address out of port. */
void link_output_broadcast(struct stack *s, uint16_t port, struct rte_mbuf *m);

/* IPv4 (ip4_input.c, ip4_output.c, ip4_forward.c). m's data starts at the IPv4 header.
 * link_bcast: the frame was sent to an Ethernet broadcast or multicast address. */
/* How a datagram reached ip4_input. */
#define IP4_IN_LINK_BCAST 0x1 /* in a link-layer broadcast/multicast frame */
#define IP4_IN_LOOPBACK 0x2   /* sent by this stack to one of its own addresses */
void ip4_input(struct stack *s, struct rte_mbuf *m, unsigned how);
/* Forwards a datagram not addressed to us along r, ip4_input's lookup of its destination
 * (NULL: no route). */
void ip4_forward(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip,
		 const struct route *r);
/* Prepends an IPv4 header to the transport payload m and sends it. src 0 picks the source
 * from the route; ttl 0 is the default (IP4_DEFAULT_TTL). Returns 0 or -errno (EHOSTUNREACH/ENETUNREACH: no route; the packet is
 * counted and freed in every case). */
int ip4_output(struct stack *s, struct rte_mbuf *m, uint8_t proto, uint32_t src, uint32_t dst,
	       uint8_t tos, uint8_t ttl, bool df);
/* Sends a datagram whose header is complete along route r to dst: fragments it or answers
 * frag-needed when it exceeds the route MTU. */
void ip4_route_output(struct stack *s, struct rte_mbuf *m, const struct route *r, uint32_t dst,
		      bool forwarded);

/* The Internet checksum of the len transport bytes at m's IPv4 payload with the pseudo-
 * header (RFC 768, RFC 9293 §3.1), across a chain of segments: 0 when it verifies, 1 when
 * the chain is shorter than len. */
uint16_t stack_l4_checksum_chain(const struct rte_mbuf *m, const struct ip4_repr *ip,
				 uint8_t proto, uint32_t len);

/* Datagrams to our own addresses wait here until stack_loopback_drain (stack.c). */
void stack_loopback_queue(struct stack *s, struct rte_mbuf *m);
/* Drops the queued datagrams whose payload is lent by owner (tcp_seg_lend): the memory
 * they point into is about to go. */
void stack_loopback_forget(struct stack *s, const struct rte_mbuf_ext_shared_info *owner);
/* Whether a segment of m points into memory lent by a socket (an external buffer). */
bool stack_mbuf_borrows(const struct rte_mbuf *m, const struct rte_mbuf_ext_shared_info *owner);

/* Copies the reassembly table's drop counts into s->drops (stack.c). */
void stack_reass_sync_drops(struct stack *s);

/* ICMP (icmp4.c). */
void icmp4_input(struct stack *s, struct rte_mbuf *m, const struct ip4_repr *ip, bool bcast);
/* Answers the datagram orig (data at its IPv4 header) with an ICMP error, subject to the
 * RFC 1122 §3.2.2 suppression rules and the rate limit. info is the 32-bit "rest of header"
 * (next-hop MTU for frag-needed, pointer<<24 for parameter problem). Does not free orig. */
void icmp4_send_error(struct stack *s, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t info);

#endif
