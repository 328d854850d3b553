/* UDP internals shared by udp*.c. Not for use outside src/udp. */
#ifndef DPS_UDP_UDP_PRIV_H
#define DPS_UDP_UDP_PRIV_H

#include <sys/queue.h>

#include <rte_mbuf.h>

#include "ip4/ip4.h"
#include "stack/inet_hdr.h"
#include "stack/stack_internal.h"
#include "udp.h"

#define UDP_SOCK_MAX 16384     /* sockets per worker (the tables' capacity) */

/* Per-socket flags. */
#define UDPF_BROADCAST 0x01    /* SO_BROADCAST */
#define UDPF_CONNECTED 0x02    /* in the 4-tuple table */
#define UDPF_NOTIFY_Q 0x04     /* on udp_stack.notify_q */
#define UDPF_REUSEADDR 0x08    /* UDP_BIND_REUSEADDR */
#define UDPF_IN_BINDS 0x10     /* holds its (bound laddr, lport) in the bind table */
#define UDPF_V6 0x20           /* AF_INET6: bound to :: or an IPv6 address */
#define UDPF_V6ONLY 0x40       /* IPV6_V6ONLY: an AF_INET6 socket that never hears IPv4 */

struct udp_sock {
	struct sock sk;                /* laddr: bound, or the source chosen by connect */
	struct stack *s;
	struct inet_addr bound_laddr;  /* as bound: the key in the bind table */
	uint32_t flags;
	uint16_t pmtu;                 /* a connected IPv6 socket's path MTU from Packet Too
					* Big (RFC 8201 §4); 0: the route's */
	struct sock_ip_opts ip;        /* IP_TTL, IP_TOS of the datagrams it sends */
	uint32_t pending_events;       /* SOCK_EV_* waiting on notify_q */
	TAILQ_ENTRY(udp_sock) all_link;
	TAILQ_ENTRY(udp_sock) notify_link;
	uint64_t datagrams_in, datagrams_out, bytes_in, bytes_out, rcvbuf_drops;
};

/* Which families' addresses a socket on a port may receive: port_binds' first index. */
enum udp_fam { UDP_FAM_V4, UDP_FAM_V6, UDP_FAM_COUNT };

/* Whether a socket bound to laddr (v6only: IPV6_V6ONLY) receives fam's datagrams: IPv4 an
 * IPv4 socket's, or one bound to :: that is not IPv6-only (RFC 3493 §5.3). */
static inline bool udp_addr_hears(const struct inet_addr *laddr, bool v6only, enum udp_fam fam)
{
	if (fam == UDP_FAM_V6)
		return !inet_addr_is_v4(laddr);
	static const struct inet_addr any6;
	return inet_addr_is_v4(laddr) || (inet_addr_equal(laddr, &any6) && !v6only);
}

/* Per-stack UDP state (one per worker). Demultiplexing (RFC 1122 §4.1.3.5 leaves it to the
 * host; this is Linux's order without SO_REUSEADDR): the exact 4-tuple of a connected socket,
 * then the bind table by (destination, port), then by the family's wildcard (0.0.0.0 for
 * IPv4, then :: when that hears IPv4 too). */
struct udp_stack {
	struct rte_hash *conns;        /* (laddr, raddr, lport, rport) → connected udp_sock */
	struct rte_hash *binds;        /* (bound laddr, lport) → udp_sock (UDPF_IN_BINDS) */
	TAILQ_HEAD(, udp_sock) all;
	TAILQ_HEAD(, udp_sock) notify_q;
	unsigned nsocks;
	unsigned depth;                /* > 0: inside a delivery or a send; notify later */
	uint16_t next_ephemeral;
	/* Sockets bound per port that hear a family's datagrams (:: without V6ONLY counts in
	 * both), any address, connected or not: the wildcards' bind conflicts. */
	uint16_t port_binds[UDP_FAM_COUNT][65536];
};


/* udp.c: tables and owner notification. */
struct udp_sock *udp_lookup_conn(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
				 const struct inet_addr *raddr, uint16_t rport);
struct udp_sock *udp_lookup_bind(struct stack *s, const struct inet_addr *laddr, uint16_t lport);
/* The unconnected socket bound to the wildcard that hears a datagram of dst's family, or
 * NULL: 0.0.0.0, else :: without V6ONLY for IPv4; :: for IPv6. */
struct udp_sock *udp_lookup_wildcard(struct stack *s, const struct inet_addr *dst, uint16_t lport);
/* Queues events for u's owner; udp_deliver_events calls the owners once no delivery or send
 * is in progress, so an owner that sends from notify (a loopback echo) never recurses. */
void udp_notify(struct udp_sock *u, uint32_t events);
void udp_deliver_events(struct stack *s);

/* udp_input.c: a datagram for us (m's data at the IP header, reassembled; ip either
 * family's). bcast: sent to a broadcast (or multicast) address. Takes m. */
void udp_input(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *ip, bool bcast);
/* An ICMP error quoting one of our datagrams: quoted_ip is its validated IPv4 header, l4 the
 * quoted bytes after it (l4_len >= 8: the UDP header). */
void udp_icmp_error(struct stack *s, const struct ip4_repr *quoted_ip, const uint8_t *l4,
		    size_t l4_len, uint8_t type, uint8_t code, uint32_t info);
/* The same for an ICMPv6 error (quoted: the addresses of our quoted IPv6 datagram). */
void udp_icmp6_error(struct stack *s, const struct inet_hdr *quoted, const uint8_t *l4,
		     size_t l4_len, uint8_t type, uint8_t code, uint32_t info);

#endif
