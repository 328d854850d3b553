/* IPv6 in a stack instance: input (ip6_input.c), output (ip6_output.c), ICMPv6
 * (ip6_icmp.c) and Neighbor Discovery (ip6_nd.c) on the neighbour cache IPv4's ARP uses. */
#ifndef DPS_IP6_IP6_H
#define DPS_IP6_IP6_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ratelimit.h"
#include "stack/netcfg6.h"
#include "stack/stack.h"
#include "wire/ipv6.h"

/* IPv6 as a registered protocol: frames of its EtherType, its ICMPv6 error rate limit,
 * neighbour solicitations for the cache. */
extern const struct stack_proto ip6_proto;

/* What IPv6 keeps per stack instance (stack.ip6). */
struct ip6_state {
	struct ratelimit icmp_errors; /* RFC 4443 §2.4(f) */
	struct reass *reass;          /* fragments of datagrams to us (ip6_reass.c) */
};

/* m's data starts at the IPv6 header; how is STACK_IN_*. */
void ip6_input(struct stack *s, struct rte_mbuf *m, unsigned how);

/* Where ip6_output sends a datagram. */
struct ip6_out {
	struct ip6_addr dst;
	struct ip6_addr src;     /* unspecified: chosen (route, then RFC 6724) */
	uint16_t port;           /* NETCFG_PORT_ANY: from the route; a link-local or
				  * multicast destination needs it */
	bool on_link;            /* dst is a neighbour on port: no route (Neighbor
				  * Discovery's own messages, RFC 4861 §7.2.4) */
	const struct eth_addr *link_dst; /* when set: sent to this MAC, not resolved */
	uint8_t next_header;
	uint8_t tclass;
	uint8_t hop_limit;       /* 0: IP6_DEFAULT_HOP_LIMIT */
	uint16_t mtu;            /* 0: the route's; else a path MTU the sender learnt from
				  * Packet Too Big (RFC 8201 §4), used when smaller */
};

/* Prepends an IPv6 header to the upper-layer payload m (whose checksum the caller has
 * filled in: it needs the source, so pass one or call ip6_source_for first) and sends it.
 * Returns 0 or -errno (ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL, EMSGSIZE, ENOBUFS); m is
 * counted and freed in every case. */
int ip6_output(struct stack *s, struct rte_mbuf *m, const struct ip6_out *d);
/* Fills d->src (and d->port when it is NETCFG_PORT_ANY) as ip6_output will: 0, or
 * -ENETUNREACH/-EHOSTUNREACH (no usable route), -EADDRNOTAVAIL (no address to send from). */
int ip6_source_for(struct stack *s, struct ip6_out *d);

/* Reassembly (ip6_reass.c): the table, its timer, and one fragment of a datagram to us (m
 * at its IPv6 header, ip and ext its validated header and walk). Returns the whole datagram
 * (a chain, its fragment header gone, payload length rewritten) when this fragment
 * completed it, else NULL (held or dropped, counted). */
int ip6_reass_init(struct stack *s, const struct stack_params *p);
void ip6_reass_tick(struct stack *s);
struct rte_mbuf *ip6_reass_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
				 const struct ip6_ext_info *ext);

/* Fragmentation of our own datagram m (at its IPv6 header, any number of segments) into
 * fragments of at most mtu bytes (RFC 8200 §4.5), freshly allocated: stored in out[], their
 * number returned; -ENOBUFS or -EMSGSIZE (more than max_out). m is the caller's either
 * way. */
int ip6_fragment(struct stack *s, const struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		 unsigned max_out);

/* What a transport sizes its segments by: the MTU towards dst (its route's, else its port's;
 * port names it for a link-local destination) and whether dst is one of our addresses
 * (local: the datagram never meets a port). 0 when there is no route. */
uint32_t ip6_path_mtu(struct stack *s, const struct ip6_addr *dst, uint16_t port, bool *local);

/* ICMPv6 (ip6_icmp.c). msg_off: where the message starts in m (after extension headers). */
void icmp6_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, size_t msg_off,
		 unsigned how);
/* Answers orig (data at its IPv6 header) with an ICMPv6 error, subject to RFC 4443 §2.4(e)
 * and the rate limit; info is the 32-bit field after the checksum (MTU, pointer). Does not
 * free orig. */
void icmp6_send_error(struct stack *s, const struct rte_mbuf *orig, uint8_t type, uint8_t code,
		      uint32_t info);
/* The transport of the datagram an ICMPv6 error quotes (q[0..len), its IPv6 header on):
 * our own TCP and UDP datagrams carry no extension header but the Fragment header of one we
 * fragmented (RFC 8200 §4.5), whose first fragment has the transport header after it. Its
 * Next Header into *nh and where its header starts into *l4_off; false when len holds no
 * IPv6 header. */
bool icmp6_quoted_transport(const uint8_t *q, size_t len, uint8_t *nh, size_t *l4_off);
/* Completes the checksum of the ICMPv6 message m (data at it, checksum field zero) from
 * d's addresses. */
void icmp6_fill_checksum(struct rte_mbuf *m, const struct ip6_out *d);

/* Neighbor Discovery (ip6_nd.c): a validated NS, NA, RS, RA or Redirect in m at msg_off. */
void nd_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, size_t msg_off);
/* Solicits target's link-layer address on port: to its solicited-node group when dst is
 * NULL, else to dst (RFC 4861 §7.2.2). */
void nd_solicit(struct stack *s, uint16_t port, const struct inet_addr *target,
		const struct eth_addr *dst);

#endif
