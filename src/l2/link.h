/* The link layer of a stack instance (link.c): Ethernet output through the neighbour cache,
 * and ARP (RFC 826) in and out. */
#ifndef DPS_L2_LINK_H
#define DPS_L2_LINK_H

#include <stdint.h>

#include "stack/stack.h"

/* ARP as a registered protocol: frames of its EtherType, the neighbour table's life and
 * timers, gratuitous announcements, flushes. */
extern const struct stack_proto arp_proto;

/* Sends m (data at the IPv4 or IPv6 header, nh's family) to next hop nh on port, resolving
 * its MAC first. */
void link_output(struct stack *s, uint16_t port, const struct inet_addr *nh,
		 struct rte_mbuf *m);
/* Sends m (data at the network header of ethertype) to the Ethernet address dst out of
 * port, without resolution: broadcasts and multicast groups. */
void link_output_to(struct stack *s, uint16_t port, const struct eth_addr *dst,
		    uint16_t ethertype, struct rte_mbuf *m);

#endif
