/* Ancillary data of received datagrams (cmsg(3)): the IP-level messages a UDP socket asked for
 * with IP_PKTINFO, IP_RECVTTL and IP_RECVTOS, written as Linux writes them (net/core/scm.c
 * put_cmsg, net/ipv4/ip_sockglue.c ip_cmsg_recv_offset). Pure: no socket, no segment. */
#include <string.h>

#include "dps_cmsg.h"

/* One message into the rest of msg's control buffer. Linux's put_cmsg: no room for even a
 * header sets MSG_CTRUNC and writes nothing; a message that does not fit whole is cut to the
 * room left (its cmsg_len says so) with MSG_CTRUNC; each one takes CMSG_SPACE bytes or the
 * rest of the buffer. */
static void dps_cmsg_put(struct msghdr *msg, size_t *used, int level, int type,
			 const void *data, size_t len)
{
	size_t left = msg->msg_controllen - *used;
	if (msg->msg_control == NULL || left < sizeof(struct cmsghdr)) {
		msg->msg_flags |= MSG_CTRUNC;
		return;
	}
	size_t cmlen = CMSG_LEN(len);
	if (left < cmlen) {
		msg->msg_flags |= MSG_CTRUNC;
		cmlen = left;
	}
	struct cmsghdr h = {.cmsg_len = cmlen, .cmsg_level = level, .cmsg_type = type};
	unsigned char *at = (unsigned char *)msg->msg_control + *used;
	memcpy(at, &h, sizeof(h));
	memcpy(at + CMSG_LEN(0), data, cmlen - CMSG_LEN(0));
	size_t space = CMSG_SPACE(len);
	*used += space < left ? space : left;
}

void dps_cmsg_ip(struct msghdr *msg, unsigned want, const struct dps_cmsg_ip_info *in)
{
	size_t used = 0;
	if (want & DPS_CMSG_PKTINFO) {
		struct in_pktinfo pi = {
			.ipi_ifindex = (int)in->ifindex,
			.ipi_spec_dst.s_addr = in->spec_dst,
			.ipi_addr.s_addr = in->daddr,
		};
		dps_cmsg_put(msg, &used, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	}
	if (want & DPS_CMSG_TTL) {
		int ttl = in->ttl; /* Linux gives an int here ... */
		dps_cmsg_put(msg, &used, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	}
	if (want & DPS_CMSG_TOS) /* ... and the header's byte here */
		dps_cmsg_put(msg, &used, IPPROTO_IP, IP_TOS, &in->tos, sizeof(in->tos));
	msg->msg_controllen = used;
}
