/* The protocol registration table of a stack instance. Each protocol module describes what it
 * brings in one struct stack_proto; the stack calls up through these descriptors (frames by
 * EtherType, datagrams by IP protocol number, timers, configuration news), so that src/stack
 * depends on no protocol and a protocol reaches the ones above it (IPv4 → TCP/UDP) only
 * through the table. The list a stack runs is stack_params.protos; src/inet/inet.c assembles
 * the Internet suite. Every hook is optional (NULL). */
#ifndef DPS_STACK_STACK_PROTO_H
#define DPS_STACK_STACK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct eth_addr;
struct inet_addr;
struct rte_mbuf;
struct stack;
struct stack_params;
struct ip4_repr;
struct inet_hdr;

/* How a datagram reached a network layer's input. */
#define STACK_IN_LINK_BCAST 0x1 /* in a link-layer broadcast/multicast frame */
#define STACK_IN_LOOPBACK 0x2   /* sent by this stack to one of its own addresses */

#define STACK_PROTO_MAX 8

struct stack_proto {
	const char *name;
	/* Creates the module's state in s: 0 or -errno. fini undoes it, in the reverse order of
	 * the list, also when this module's own init or a later one's failed (so it accepts
	 * whatever init left). */
	int (*init)(struct stack *s, const struct stack_params *p);
	void (*fini)(struct stack *s);

	/* Link layer demultiplexing: frames of this EtherType (0: none), data at the network
	 * header, m->port set; how is STACK_IN_*. Always takes ownership of m. */
	uint16_t ethertype;
	void (*input)(struct stack *s, struct rte_mbuf *m, unsigned how);
	/* The neighbour cache gave up on next hop resolution for m (data at the network
	 * header, still the caller's): tell its sender (RFC 1812 §4.3.3.1). */
	void (*host_unreachable)(struct stack *s, const struct rte_mbuf *m);
	/* Asks for the link-layer address of addr, an address of this network layer that is
	 * not IPv4 (ARP asks for those: src/l2/link.c), out of port: to everyone when dst is
	 * NULL, else to *dst (RFC 4861 §7.2.2 solicitations). */
	void (*neigh_solicit)(struct stack *s, uint16_t port, const struct inet_addr *addr,
			      const struct eth_addr *dst);

	/* Transport demultiplexing, both families: datagrams of this IP protocol / IPv6 Next
	 * Header number (0: none), h their network header (its addresses, where the transport
	 * header starts), bcast when sent to a broadcast or multicast address. Always takes
	 * ownership of m. */
	uint8_t ip_proto;
	void (*l4_input)(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *h, bool bcast);
	/* An ICMP error (type, code, info: RFC 792's "rest of header") quoting one of our
	 * datagrams of this protocol: quoted_ip its header, l4 the first l4_len bytes after it. */
	void (*ip4_icmp_error)(struct stack *s, const struct ip4_repr *quoted_ip, const uint8_t *l4,
			       size_t l4_len, uint8_t type, uint8_t code, uint32_t info);

	/* The same for an ICMPv6 error (RFC 4443 §2.4(b)): quoted the addresses of the quoted
	 * IPv6 datagram, l4 the first l4_len bytes of its upper-layer header on, info the
	 * 32-bit field after the checksum (Packet Too Big's MTU). */
	void (*ip6_icmp_error)(struct stack *s, const struct inet_hdr *quoted, const uint8_t *l4,
			       size_t l4_len, uint8_t type, uint8_t code, uint32_t info);

	/* Timers: tick at every stack_tick (every few ms: whole-table walks), tick_transport
	 * at every stack_tick_transport (every ms: delayed ACKs, RTOs). */
	void (*tick)(struct stack *s);
	void (*tick_transport)(struct stack *s);

	/* Configuration news: addr was added on port and should be announced; port went down
	 * or lost its last address, so what was learnt about its neighbours goes. */
	void (*addr_announce)(struct stack *s, uint16_t port, uint32_t addr);
	void (*port_forget)(struct stack *s, uint16_t port);
};

/* The registered protocol for EtherType type, or NULL. */
const struct stack_proto *stack_proto_by_ethertype(const struct stack *s, uint16_t type);

#endif
