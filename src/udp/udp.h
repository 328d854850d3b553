/* UDP (RFC 768, RFC 1122 §4.1; over IPv6, RFC 8200 §8) on one worker's stack: the calls a
 * socket owner (built-in service, the application channel) makes. All of them run on the
 * worker thread that owns the stack. Return values are 0 / a count, or -errno with the errno
 * Linux gives for the same call (IP_RECVERR is not implemented).
 *
 * One socket table serves both families: addresses are struct inet_addr (IPv4 as its mapped
 * form). A socket's family is its bound address's: an IPv4 address or 0.0.0.0 (mapped) makes
 * an AF_INET socket, :: or an IPv6 address an AF_INET6 one. A socket bound to :: hears IPv4
 * too (sources as mapped addresses) unless it is IPv6-only (RFC 3493 §5.3, IPV6_V6ONLY). The
 * *_inet calls are the family-neutral API; udp_bind, udp_connect and udp_sendmsg with
 * uint32_t addresses are IPv4 shorthands for the callers that have only IPv4. */
#ifndef DPS_UDP_UDP_H
#define DPS_UDP_UDP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack/sock.h"
#include "wire/inet_addr.h"

/* UDP as a registered protocol of a stack (src/stack/stack_proto.h). */
extern const struct stack_proto udp_proto;

struct stack;
struct udp_sock;

#define UDP_MAX_PAYLOAD 65507          /* 65535 - 20 (IPv4 header) - 8 (UDP header) */
#define UDP6_MAX_PAYLOAD 65527         /* 65535 (IPv6 payload length) - 8: no jumbograms */
#define UDP_RCVBUF_DEFAULT 212992      /* Linux net.core.rmem_default */
#define UDP_RCVBUF_MAX (16u << 20)     /* larger requests are clamped, as to rmem_max */
#define UDP_EPHEMERAL_LO 32768         /* Linux ip_local_port_range */
#define UDP_EPHEMERAL_HI 60999

/* A received datagram in the socket's rx FIFO is one record: this header, then len payload
 * bytes (no padding), so that any consumer of the FIFO — udp_recvfrom, or later the
 * application channel — reads datagrams with their boundaries and sources. */
struct udp_rx_hdr {
	uint32_t len;           /* payload bytes that follow */
	/* IPv4 datagrams' addresses, host order (0 for IPv6): the source; the local (or
	 * broadcast) address it was sent to (IP_PKTINFO); IP_PKTINFO's ipi_spec_dst, the
	 * address a reply would come from (Linux's fib_compute_spec_dst: daddr, or for a
	 * broadcast the arrival port's address). */
	uint32_t saddr, daddr, spec_dst;
	uint16_t sport;         /* source port, host order; 0 if the sender expects no reply */
	uint16_t flags;         /* UDP_RXF_* */
	uint16_t ifindex;       /* the port it arrived on (netcfg_ifindex): IP_PKTINFO */
	uint8_t ttl, tos;       /* TTL and TOS, or Hop Limit and Traffic Class */
	/* Either family (IPv4 mapped): the source and the destination (IPV6_PKTINFO's
	 * ipi6_addr). */
	struct inet_addr src, dst;
};
#define UDP_RXF_BCAST 0x0001    /* sent to a broadcast address */
#define UDP_RXF_V6 0x0002       /* came over IPv6 */

/* Binds a socket to laddr:lport. laddr 0 is every local address; otherwise it must be one of
 * ours or a broadcast address (-EADDRNOTAVAIL). lport 0 picks a free ephemeral port in
 * UDP_EPHEMERAL_LO..HI (-EADDRINUSE when none is left); with several workers a port this
 * worker owns, and a given port another worker owns is -EXDEV (steer.h). Without SO_REUSEADDR, as Linux,
 * -EADDRINUSE when laddr:lport is bound, when laddr is 0 and any address has lport bound, or
 * when laddr is specific and 0.0.0.0:lport is bound. rcvbuf bounds the receive FIFO (records
 * included; 0 = UDP_RCVBUF_DEFAULT, rounded up to a power of two). Datagrams are sent straight
 * from the caller's buffer, so there is no send FIFO (sk.tx is NULL). owner may be NULL.
 * -ENOBUFS when the socket table is full, -ENOMEM.
 * flags UDP_BIND_REUSEADDR (SO_REUSEADDR): the port may be shared with sockets bound the
 * same way; only the exact laddr:lport held by an unconnected one of them conflicts. A
 * connected socket leaves that place to the next bind (a server's socket per client beside
 * its listening socket, as iperf3 and DNS servers make), and takes it back when it
 * disconnects if it is free. */
#define UDP_BIND_REUSEADDR 0x1
/* udp_bind_inet: laddr of either family. An IPv6 address must be one of ours (a link-local
 * one on any port). The bind conflicts above hold within each family, and :: that is not
 * IPv6-only conflicts with IPv4's sockets on the port too (it takes their datagrams), as
 * Linux: 0.0.0.0:p and an IPv6-only [::]:p coexist.
 * flags UDP_BIND_V6ONLY (IPV6_V6ONLY): an AF_INET6 socket that never hears IPv4; -EINVAL
 * with an IPv4 (mapped) address. */
#define UDP_BIND_V6ONLY 0x2
int udp_bind_inet(struct stack *s, const struct inet_addr *laddr, uint16_t lport,
		  uint32_t rcvbuf, unsigned flags, const struct sock_owner *owner,
		  struct udp_sock **out);
int udp_bind(struct stack *s, uint32_t laddr, uint16_t lport, uint32_t rcvbuf, unsigned flags,
	     const struct sock_owner *owner, struct udp_sock **out);

/* connect(2): from now on only datagrams from raddr:rport are received and ICMP errors about
 * datagrams to it are reported (RFC 1122 §4.1.3.3), and udp_sendto with raddr 0 sends there.
 * A socket bound to 0.0.0.0 takes the source address of the route as its local address.
 * raddr 0 dissolves the association (AF_UNSPEC) and restores the bound address. -EINVAL for
 * rport 0, -EACCES for a broadcast peer without SO_BROADCAST, -ENETUNREACH/-EHOSTUNREACH
 * without a route. */
int udp_connect(struct udp_sock *u, uint32_t raddr, uint16_t rport);
/* Either family: raddr the wildcard (either family's) dissolves the association. An IPv6
 * peer needs an AF_INET6 socket (-EAFNOSUPPORT), an IPv4 (mapped) one an AF_INET socket or
 * one bound to :: that is not IPv6-only (-ENETUNREACH, as Linux). scope: the port a
 * link-local peer is on (sin6_scope_id), else NETCFG_PORT_ANY. */
int udp_connect_inet(struct udp_sock *u, const struct inet_addr *raddr, uint16_t rport,
		     uint16_t scope);

/* SO_BROADCAST: allows sending to (and connecting to) broadcast addresses. */
void udp_set_broadcast(struct udp_sock *u, bool on);
/* IP_TTL and IP_TOS: the datagrams sent from now on carry them. */
void udp_set_ip_opts(struct udp_sock *u, const struct sock_ip_opts *ip);
const struct sock_ip_opts *udp_get_ip_opts(const struct udp_sock *u);

/* Sends one datagram of len bytes to raddr:rport; raddr 0 = the connected peer
 * (-EDESTADDRREQ if none). Returns len. -EMSGSIZE above UDP_MAX_PAYLOAD (larger than the route
 * MTU is fragmented by IP, never DF); -EINVAL for rport 0; -EACCES for a broadcast
 * destination (the limited broadcast or a connected subnet's) without SO_BROADCAST;
 * -ENETUNREACH/-EHOSTUNREACH from routing (multicast is not routed yet: -ENETUNREACH);
 * -EADDRNOTAVAIL when the bound address is gone; -ENOBUFS when no mbuf is left. A datagram
 * to one of our own addresses is delivered without touching a port. */
ssize_t udp_sendto(struct udp_sock *u, const void *buf, size_t len, uint32_t raddr,
		   uint16_t rport);

/* What one datagram asks beyond its socket's settings: sendmsg's control messages. */
struct udp_send_opts {
	uint32_t src;                   /* host order, one of ours (IP_PKTINFO's ipi_spec_dst);
					 * 0: the socket's choice. Not ours: -EADDRNOTAVAIL */
	/* The same for either family (IPV6_PKTINFO's ipi6_addr); the wildcard: src decides. */
	struct inet_addr from;
	/* scoped: port names the port a link-local IPv6 destination is on (sin6_scope_id);
	 * without it such a destination is -EHOSTUNREACH (the connected peer's is known). */
	bool scoped;
	const struct sock_ip_opts *ip;  /* IP_TTL, IP_TOS; NULL: the socket's */
	/* For the limited broadcast: leave by port (SO_BINDTODEVICE's part) and, with src 0,
	 * from 0.0.0.0, as a host without an address does while it asks for one (RFC 2131
	 * §4.1; RFC 1122 §3.2.1.3 allows that source then only). */
	bool bcast_on_port;
	uint16_t port;          /* for bcast_on_port and scoped */
};

/* udp_sendto with per-datagram options (o may be NULL). */
ssize_t udp_sendmsg(struct udp_sock *u, const void *buf, size_t len, uint32_t raddr,
		    uint16_t rport, const struct udp_send_opts *o);
/* Either family; raddr NULL = the connected peer. IPv6: up to UDP6_MAX_PAYLOAD, fragmented
 * by the source above the path MTU (RFC 8200 §4.5: the route's, or what a Packet Too Big
 * taught a connected socket); the checksum is never left out (§8.1). An IPv6 destination
 * from an AF_INET socket is -EAFNOSUPPORT, an IPv4 one from an IPv6-only socket or one
 * bound to an IPv6 address -ENETUNREACH. */
ssize_t udp_sendmsg_inet(struct udp_sock *u, const void *buf, size_t len,
			 const struct inet_addr *raddr, uint16_t rport,
			 const struct udp_send_opts *o);

/* recvfrom(2): one datagram per call. Copies min(len, its size) bytes to buf and returns that
 * count; *trunc (if not NULL) tells whether the datagram was larger, the rest being discarded
 * (MSG_TRUNC). raddr/rport (if not NULL) get its source. -EAGAIN when none is queued. A
 * pending error (sk.error, set from an ICMP error on a connected socket: ECONNREFUSED for
 * port or protocol unreachable, ENETUNREACH, EHOSTUNREACH, EMSGSIZE for frag-needed …) is
 * returned once as -errno before any datagram, as Linux does. -EIO if the FIFO holds a
 * corrupt record (it is emptied). */
ssize_t udp_recvfrom(struct udp_sock *u, void *buf, size_t len, struct inet_addr *raddr,
		     uint16_t *rport, bool *trunc);

/* recvmsg(2) with IP_PKTINFO's facts: like udp_recvfrom, with the datagram's whole record
 * header (source, destination, arrival port) in *hdr. */
ssize_t udp_recvmsg(struct udp_sock *u, void *buf, size_t len, struct udp_rx_hdr *hdr,
		    bool *trunc);

/* close(2): unbinds and frees the socket and its queued datagrams at once; u must not be used
 * afterwards. Safe from inside the owner's notify. */
void udp_close(struct udp_sock *u);

struct sock *udp_sock(struct udp_sock *u);

/* What `sock show` reports about one socket. */
struct udp_sock_info {
	uint32_t laddr, raddr;          /* IPv4 shorthand: laddr 0: every address (or IPv6);
					 * raddr 0: not connected (or IPv6) */
	struct inet_addr local, remote; /* either family; remote the wildcard: not connected */
	uint16_t lport, rport;
	bool v6;                        /* an AF_INET6 socket */
	bool v6only;                    /* IPV6_V6ONLY */
	uint32_t rx_queued;             /* bytes in the receive FIFO, record headers included */
	uint32_t rcvbuf;                /* receive FIFO size */
	bool broadcast;                 /* SO_BROADCAST */
	int error;                      /* pending error, not cleared */
	uint64_t datagrams_in, datagrams_out;
	uint64_t bytes_in, bytes_out;   /* payload bytes */
	uint64_t rcvbuf_drops;          /* datagrams dropped: receive FIFO full */
};

void udp_sock_info(const struct udp_sock *u, struct udp_sock_info *out);

/* UDP sockets the stack holds now. Another thread may read it, as it reads counters: an
 * aligned load that may be a moment old. */
unsigned udp_sock_count(const struct stack *s);

/* Calls fn for every UDP socket of the stack; stops when fn returns non-zero and returns
 * that. fn may close the socket it is given. */
int udp_walk(struct stack *s, int (*fn)(const struct udp_sock *u, void *arg), void *arg);

#endif
