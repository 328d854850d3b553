/* Ancillary data of received datagrams (dps_cmsg.c). */
#ifndef DPS_LIB_CMSG_H
#define DPS_LIB_CMSG_H

#include <netinet/in.h>
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

/* Writes the messages of want into msg's control buffer and sets msg_controllen to the bytes
 * used (0 when want is empty); MSG_CTRUNC in msg_flags when they did not all fit. */
void dps_cmsg_ip(struct msghdr *msg, unsigned want, const struct dps_cmsg_ip_info *in);

#endif
