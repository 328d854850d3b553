/* IPv6 in a stack instance: input (ip6_input.c), output (ip6_output.c), forwarding
 * (ip6_forward.c), ICMPv6 (ip6_icmp.c) and Neighbor Discovery (ip6_nd.c) on the neighbour
 * cache IPv4's ARP uses. */
#ifndef DPS_IP6_IP6_H
#define DPS_IP6_IP6_H

#include <stdbool.h>
#include <stdint.h>

#include "base/ratelimit.h"
#include "stack/netcfg6.h"
#include "stack/stack.h"
#include "wire/icmp6.h"
#include "wire/ipv6.h"
#include "wire/mld.h"

struct rte_ring;

/* IPv6 as a registered protocol: frames of its EtherType, its ICMPv6 error rate limit,
 * neighbour solicitations for the cache. */
extern const struct stack_proto ip6_proto;

/* What a worker hands the control thread's address configuration (src/ctl/addrconf_run.h):
 * the messages of Duplicate Address Detection, Router Discovery and MLD that it acts on. The
 * worker parses and validates; the event carries only the parsed form. */
enum ip6_ctl_kind {
	IP6_CTL_DAD_CONFLICT,   /* addr, tentative on port, is another node's (RFC 4862 §5.4.3-4) */
	IP6_CTL_RA,             /* a Router Advertisement from src on an autoconf port */
	IP6_CTL_MLD_QUERY,      /* an MLD query from src */
	IP6_CTL_REDIRECT,       /* a valid Redirect (in ra) from src, our first hop for its
				 * destination (RFC 4861 §8.1) */
};

struct ip6_ctl_event {
	uint32_t kind;          /* enum ip6_ctl_kind */
	uint16_t port;
	uint16_t pad;
	struct ip6_addr src;
	struct ip6_addr addr;   /* IP6_CTL_DAD_CONFLICT */
	struct mld_query query; /* IP6_CTL_MLD_QUERY */
	struct nd_repr ra;      /* IP6_CTL_RA, IP6_CTL_REDIRECT */
};

/* What IPv6 keeps per stack instance (stack.ip6). */
struct ip6_state {
	struct ratelimit icmp_errors; /* RFC 4443 §2.4(f) */
	struct reass *reass;          /* fragments of datagrams to us (ip6_reass.c) */
	/* The control thread's inbox (shared by every worker, several producers) and the
	 * eventfd rung when it was empty; NULL and -1 in unit tests and before the daemon
	 * sets them, when those messages are counted and passed to the kernel as before. */
	struct rte_ring *ctl;
	int ctl_fd;
	bool autoconf[NETCFG_MAX_PORTS];  /* Router Advertisements go to the control thread */
	uint8_t hop_limit[NETCFG_MAX_PORTS]; /* a router's Cur Hop Limit (RFC 4861 §6.3.4);
					      * 0: IP6_DEFAULT_HOP_LIMIT */
	uint16_t mtu[NETCFG_MAX_PORTS];   /* a router's MTU option; 0: the port's MTU */
};

/* Hands ev to the control thread. False (counted) when there is no inbox or it is full. */
bool ip6_ctl_post(struct stack *s, const struct ip6_ctl_event *ev);

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
	bool from_unspecified;   /* src stays :: (DAD probes, RFC 4862 §5.4.2; MLD and router
				  * solicitations before an address is ours) */
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

/* The MTU out of port along r (NULL: none): the route's when it has a smaller one. */
uint16_t ip6_route_mtu(const struct stack *s, const struct route *r, uint16_t port);
/* Hands the datagram m (at its IPv6 header, complete) to the link layer of out->port: to
 * out->link_dst when given, to a multicast group's MAC, else to the neighbour (r's gateway
 * when r is a GATEWAY route, else out->dst), resolved by Neighbor Discovery. */
void ip6_link_send(struct stack *s, const struct ip6_out *out, const struct route *r,
		   struct rte_mbuf *m);

/* A STACK_IN_* bit of IPv6's own: the datagram was judged by the input filters on the
 * worker that received it, then steered to the worker that owns its flow, whose ip6_input
 * takes it again; judged once, it is counted once. */
#define IP6_IN_FILTERED 0x100

/* The ACL and bypass rules (ip6_filter.c) at input (ip6's datagram to us, whole, its
 * extension headers walked into ext; how its STACK_IN_* bits) and forward. True when m was
 * taken: dropped (counted acl6.denied) or handed to the kernel interface (kernel.bypass6). */
bool ip6_filter_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		      const struct ip6_ext_info *ext, unsigned how);
bool ip6_filter_forward(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip);

/* Forwarding (ip6_forward.c): the datagram m (at its IPv6 header, validated into ip),
 * received on m->port (how: STACK_IN_*) for a unicast address not ours, sent on as a
 * router does, or answered with an ICMPv6 error and dropped, counted either way. */
void ip6_forward(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip, unsigned how);

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
/* Learns what addr's owner said its MAC is (flags NEIGH_F_*), telling the other workers:
 * neigh_learn's result. */
int nd_learn(struct stack *s, uint16_t port, const struct ip6_addr *addr,
	     const struct eth_addr *mac, unsigned flags);
/* Sends the Neighbor Discovery message m (data at its ICMPv6 header, checksum zero) to d
 * with hop limit 255 on the link, counted ev. 0 or -errno (m consumed either way). */
int nd_send(struct stack *s, struct rte_mbuf *m, struct ip6_out *d, enum stack_event ev);
/* A Redirect that passed nd_parse (ip6_redirect.c). */
void nd_redirect_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		       const struct nd_repr *nd);
/* As a router, about to send the transit packet m (ip) back out the port it came in on
 * by route r: tells its sender of the better first hop (RFC 4861 §8.2) when it is a
 * neighbour there, under the ICMPv6 error rate limit. m is left as it was. */
void nd_redirect_send(struct stack *s, const struct rte_mbuf *m, const struct ip6_repr *ip,
		      const struct route *r);
/* Solicits target's link-layer address on port: to its solicited-node group when dst is
 * NULL, else to dst (RFC 4861 §7.2.2). */
void nd_solicit(struct stack *s, uint16_t port, const struct inet_addr *target,
		const struct eth_addr *dst);
/* A Duplicate Address Detection probe for the tentative target: a solicitation from ::
 * without a link-layer address option to target's solicited-node group (RFC 4862
 * §5.4.2). Returns 0 or -errno. */
int nd_dad_probe(struct stack *s, uint16_t port, const struct ip6_addr *target);
/* A Router Solicitation to all-routers (RFC 4861 §6.3.7), from the port's link-local
 * address with our MAC, or from :: without it while none is usable (§4.1). */
int nd_router_solicit(struct stack *s, uint16_t port);

/* MLD (ip6_mld.c). A validated query m (msg_off: the message) goes to the control thread. */
void mld_query_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		     size_t msg_off);
/* Sends, out of port, an MLD message about groups[0..n): version 2 one report of n records
 * of type rtype (MLD2_*) to all-MLDv2-routers; version 1 a report (join) to each group, or a
 * done (rtype MLD2_CHANGE_TO_INCLUDE, a leave) to all-routers. Hop limit 1 with the Router
 * Alert option, from the port's link-local address or :: (RFC 3810 §5, §5.2.13). Returns 0
 * or -errno. */
int mld_send(struct stack *s, uint16_t port, unsigned version, uint8_t rtype,
	     const struct ip6_addr *groups, unsigned n);

/* `dpstackctl ping` over ICMPv6 (ip6_icmp.c): an echo request of size payload bytes to dst
 * (port names a link-local destination's port), s->ping armed for its reply. Returns 0 or
 * -errno. */
int icmp6_ping_send(struct stack *s, const struct ip6_addr *dst, uint16_t port, uint16_t id,
		    uint16_t seq, uint32_t size);

#endif
