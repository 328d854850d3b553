/* Ancillary data of received datagrams (dps_cmsg.c). */
#ifndef DPS_LIB_CMSG_H
#define DPS_LIB_CMSG_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Which messages a socket asked for, in Linux's order of delivery. */
#define DPS_CMSG_PKTINFO 0x1    /* IP_PKTINFO */
#define DPS_CMSG_TTL 0x2        /* IP_RECVTTL */
#define DPS_CMSG_TOS 0x4        /* IP_RECVTOS */

/* What they report about one datagram; addresses in network order. */
struct dps_cmsg_ip_info {
	unsigned ifindex;
	uint32_t spec_dst, daddr;
	uint8_t ttl, tos;
};

/* What sendmsg's control messages ask of one datagram. */
struct dps_cmsg_send {
	bool pktinfo, ttl, tos;         /* which were given */
	uint32_t spec_dst;              /* IP_PKTINFO: the source, network order (0: any) */
	unsigned ifindex;               /* IP_PKTINFO: the interface (0: any) */
	uint8_t ttl_v, tos_v;
};

/* Reads msg's control messages as Linux's ip_cmsg_send does for UDP: -EINVAL for a message
 * that does not fit its buffer, a bad length or value, an IPPROTO_IP type other than
 * IP_PKTINFO, IP_TTL, IP_TOS, and (not supported here) any SOL_SOCKET or SOL_UDP message;
 * other levels are skipped. 0 otherwise. */
int dps_cmsg_parse_send(const struct msghdr *msg, struct dps_cmsg_send *out);

/* Writes the messages of want into msg's control buffer and sets msg_controllen to the bytes
 * used (0 when want is empty); MSG_CTRUNC in msg_flags when they did not all fit. */
void dps_cmsg_ip(struct msghdr *msg, unsigned want, const struct dps_cmsg_ip_info *in);

#endif
