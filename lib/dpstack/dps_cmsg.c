/* Ancillary data of datagrams (cmsg(3)): the IP-level messages a UDP socket asked for with
 * IP_PKTINFO, IP_RECVTTL and IP_RECVTOS, written as Linux writes them (net/core/scm.c
 * put_cmsg, net/ipv4/ip_sockglue.c ip_cmsg_recv_offset), and those sendmsg is given, read as
 * ip_cmsg_send reads them. Pure: no socket, no segment. recvmsg's control buffer is the
 * application's (written through the fault-safe copies); sendmsg's is the library's copy. */
#include <errno.h>
#include <netinet/udp.h>
#include <string.h>

#include "dps_cmsg.h"
#include "dps_ucopy.h"

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
	/* The buffer is the application's: one that cannot be written takes nothing, silently,
	 * as put_cmsg's callers in Linux ignore its EFAULT. */
	if (dps_put_user(at, &h, sizeof(h)) < 0 ||
	    dps_put_user(at + CMSG_LEN(0), data, cmlen - CMSG_LEN(0)) < 0)
		return;
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

/* One IPPROTO_IP message of sendmsg (ip_cmsg_send's switch). */
static int dps_cmsg_ip_send(const struct cmsghdr *c, struct dps_cmsg_send *out)
{
	size_t dlen = c->cmsg_len - CMSG_LEN(0);
	const unsigned char *d = CMSG_DATA(c);
	int v;
	switch (c->cmsg_type) {
	case IP_PKTINFO: {
		struct in_pktinfo pi;
		if (c->cmsg_len != CMSG_LEN(sizeof(pi)))
			return -EINVAL;
		memcpy(&pi, d, sizeof(pi));
		out->pktinfo = true;
		out->spec_dst = pi.ipi_spec_dst.s_addr;
		out->ifindex = (unsigned)pi.ipi_ifindex;
		return 0;
	}
	case IP_TTL:
		if (c->cmsg_len != CMSG_LEN(sizeof(int)))
			return -EINVAL;
		memcpy(&v, d, sizeof(v));
		if (v < 1 || v > 255)
			return -EINVAL;
		out->ttl = true;
		out->ttl_v = (uint8_t)v;
		return 0;
	case IP_TOS:
		if (dlen == sizeof(int))
			memcpy(&v, d, sizeof(v));
		else if (dlen == 1)
			v = d[0];
		else
			return -EINVAL;
		if (v < 0 || v > 255)
			return -EINVAL;
		out->tos = true;
		out->tos_v = (uint8_t)v;
		return 0;
	default:
		return -EINVAL; /* IP_RETOPTS among them: no IP options here */
	}
}

int dps_cmsg_parse_send(const struct msghdr *msg, struct dps_cmsg_send *out)
{
	*out = (struct dps_cmsg_send){0};
	if (msg->msg_control == NULL || msg->msg_controllen < sizeof(struct cmsghdr))
		return 0;
	/* CMSG_NXTHDR reads each header inside the buffer; CMSG_OK is what Linux adds: the
	 * message's own length fits what is left of it. */
	for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)msg); c != NULL;
	     c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		size_t off = (size_t)((unsigned char *)c - (unsigned char *)msg->msg_control);
		if (c->cmsg_len < sizeof(struct cmsghdr) || c->cmsg_len > msg->msg_controllen - off)
			return -EINVAL;
		int rc = 0;
		if (c->cmsg_level == SOL_SOCKET || c->cmsg_level == SOL_UDP)
			rc = -EINVAL; /* SO_MARK, timestamps, UDP_SEGMENT: not on the stack */
		else if (c->cmsg_level == IPPROTO_IP)
			rc = dps_cmsg_ip_send(c, out);
		if (rc < 0)
			return rc;
	}
	return 0;
}
