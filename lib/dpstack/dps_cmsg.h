/* Ancillary data of datagrams (dps_cmsg.c). */
#ifndef DPS_LIB_CMSG_H
#define DPS_LIB_CMSG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Which messages a socket asked for (one mask for both levels). */
#define DPS_CMSG_PKTINFO 0x1            /* IP_PKTINFO */
#define DPS_CMSG_TTL 0x2                /* IP_RECVTTL */
#define DPS_CMSG_TOS 0x4                /* IP_RECVTOS */
#define DPS_CMSG6_PKTINFO 0x10          /* IPV6_RECVPKTINFO (RFC 3542 §6.1) */
#define DPS_CMSG6_HOPLIMIT 0x20         /* IPV6_RECVHOPLIMIT (§6.3) */
#define DPS_CMSG6_TCLASS 0x40           /* IPV6_RECVTCLASS (§6.5) */
#define DPS_CMSG6_2292PKTINFO 0x80      /* IPV6_2292PKTINFO (RFC 2292's IPV6_PKTINFO) */
#define DPS_CMSG6_2292HOPLIMIT 0x100    /* IPV6_2292HOPLIMIT */

/* What they report about one datagram; addresses in network order. */
struct dps_cmsg_ip_info {
	bool v6;                        /* came over IPv6 (else IPv4) */
	unsigned ifindex;
	uint32_t spec_dst, daddr;       /* IPv4 */
	struct in6_addr dst6;           /* IPv6: the destination */
	uint8_t ttl, tos;               /* or hop limit and traffic class */
};

/* Which path a datagram takes, which decides the control messages sendmsg reads (Linux:
 * ip_cmsg_send for IPv4, with IPV6_PKTINFO when the socket is AF_INET6; else
 * ip6_datagram_send_ctl). */
enum dps_cmsg_path {
	DPS_CMSG_PATH_IP,               /* an AF_INET socket */
	DPS_CMSG_PATH_MAPPED,           /* an AF_INET6 socket sending to an IPv4 peer */
	DPS_CMSG_PATH_IP6,              /* an AF_INET6 socket sending to an IPv6 peer */
};

/* What sendmsg's control messages ask of one datagram. */
struct dps_cmsg_send {
	bool pktinfo, ttl, tos;         /* which were given (ttl, tos: and not -1) */
	uint32_t spec_dst;              /* IP_PKTINFO (or a mapped IPV6_PKTINFO): the source,
					 * network order (0: any) */
	struct in6_addr src6;           /* IPV6_PKTINFO: the source (::: any) */
	unsigned ifindex;               /* either PKTINFO: the interface (0: any) */
	uint8_t ttl_v, tos_v;           /* TTL or hop limit, TOS or traffic class */
};

/* Reads msg's control messages for path as Linux does for UDP: -EINVAL for a message that
 * does not fit its buffer, a bad length or value, a type of the path's level the stack does
 * not take (IP_RETOPTS, IPV6_HOPOPTS, ...; on the mapped path IPV6_PKTINFO with an address
 * that is not mapped), and (not supported here) any SOL_SOCKET or SOL_UDP message; levels
 * the path does not read are skipped. 0 otherwise. */
int dps_cmsg_parse_send(const struct msghdr *msg, enum dps_cmsg_path path,
			struct dps_cmsg_send *out);

/* Writes the messages of want that apply to the datagram into msg's control buffer, in
 * Linux's order, and sets msg_controllen to the bytes used (0 when none); MSG_CTRUNC in
 * msg_flags when they did not all fit. */
void dps_cmsg_recv(struct msghdr *msg, unsigned want, const struct dps_cmsg_ip_info *in);

#endif
