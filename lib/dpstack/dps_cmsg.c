/* Ancillary data of datagrams (cmsg(3)): the messages a UDP socket asked for with
 * IP_PKTINFO, IP_RECVTTL, IP_RECVTOS and their IPv6 kin of RFC 3542 (IPV6_RECVPKTINFO,
 * IPV6_RECVHOPLIMIT, IPV6_RECVTCLASS, and RFC 2292's IPV6_2292PKTINFO/HOPLIMIT), written as
 * Linux writes them (net/core/scm.c put_cmsg, net/ipv4/ip_sockglue.c ip_cmsg_recv_offset,
 * net/ipv6/datagram.c ip6_datagram_recv_common_ctl and _specific_ctl), and those sendmsg is
 * given, read as ip_cmsg_send and ip6_datagram_send_ctl read them. Pure: no socket, no
 * segment. recvmsg's control buffer is the application's (written through the fault-safe
 * copies); sendmsg's is the library's copy. */
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

static void dps_cmsg_put_int(struct msghdr *msg, size_t *used, int level, int type, int v)
{
	dps_cmsg_put(msg, used, level, type, &v, sizeof(v));
}

static void dps_cmsg_put_pktinfo6(struct msghdr *msg, size_t *used, int type,
				  const struct in6_addr *addr, unsigned ifindex)
{
	struct in6_pktinfo pi = {.ipi6_addr = *addr, .ipi6_ifindex = ifindex};
	dps_cmsg_put(msg, used, IPPROTO_IPV6, type, &pi, sizeof(pi));
}

/* IPv4's messages (ip_cmsg_recv_offset's order). */
static void dps_cmsg_recv_ip(struct msghdr *msg, size_t *used, unsigned want,
			     const struct dps_cmsg_ip_info *in)
{
	if (want & DPS_CMSG_PKTINFO) {
		struct in_pktinfo pi = {
			.ipi_ifindex = (int)in->ifindex,
			.ipi_spec_dst.s_addr = in->spec_dst,
			.ipi_addr.s_addr = in->daddr,
		};
		dps_cmsg_put(msg, used, IPPROTO_IP, IP_PKTINFO, &pi, sizeof(pi));
	}
	if (want & DPS_CMSG_TTL) /* Linux gives an int here ... */
		dps_cmsg_put_int(msg, used, IPPROTO_IP, IP_TTL, in->ttl);
	if (want & DPS_CMSG_TOS) /* ... and the header's byte here */
		dps_cmsg_put(msg, used, IPPROTO_IP, IP_TOS, &in->tos, sizeof(in->tos));
}

/* IPv6's own (ip6_datagram_recv_specific_ctl's order; ints, RFC 3542 §6.3 and §6.5). */
static void dps_cmsg_recv_ip6(struct msghdr *msg, size_t *used, unsigned want,
			      const struct dps_cmsg_ip_info *in)
{
	if (want & DPS_CMSG6_HOPLIMIT)
		dps_cmsg_put_int(msg, used, IPPROTO_IPV6, IPV6_HOPLIMIT, in->ttl);
	if (want & DPS_CMSG6_TCLASS)
		dps_cmsg_put_int(msg, used, IPPROTO_IPV6, IPV6_TCLASS, in->tos);
	if (want & DPS_CMSG6_2292PKTINFO)
		dps_cmsg_put_pktinfo6(msg, used, IPV6_2292PKTINFO, &in->dst6, in->ifindex);
	if (want & DPS_CMSG6_2292HOPLIMIT)
		dps_cmsg_put_int(msg, used, IPPROTO_IPV6, IPV6_2292HOPLIMIT, in->ttl);
}

void dps_cmsg_recv(struct msghdr *msg, unsigned want, const struct dps_cmsg_ip_info *in)
{
	size_t used = 0;
	/* IPV6_PKTINFO comes first and for either family: an IPv4 datagram's destination as a
	 * mapped address (ip6_datagram_recv_common_ctl). Then an IPv4 datagram gets the IP
	 * level's messages only, an IPv6 one IPv6's only (udpv6_recvmsg). */
	if (want & DPS_CMSG6_PKTINFO) {
		struct in6_addr dst = in->dst6;
		if (!in->v6) {
			static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
			memcpy(dst.s6_addr, mapped, sizeof(mapped));
			memcpy(dst.s6_addr + 12, &in->daddr, 4);
		}
		dps_cmsg_put_pktinfo6(msg, &used, IPV6_PKTINFO, &dst, in->ifindex);
	}
	if (in->v6)
		dps_cmsg_recv_ip6(msg, &used, want, in);
	else
		dps_cmsg_recv_ip(msg, &used, want, in);
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

/* IPV6_PKTINFO's data (ip6_datagram_send_ctl: at least a struct in6_pktinfo). */
static int dps_cmsg_pktinfo6(const struct cmsghdr *c, struct in6_pktinfo *pi)
{
	if (c->cmsg_len < CMSG_LEN(sizeof(*pi)))
		return -EINVAL;
	memcpy(pi, CMSG_DATA(c), sizeof(*pi));
	return 0;
}

/* IPV6_HOPLIMIT's and IPV6_TCLASS's int: -1 (the socket's) to 255. 1 when given, 0 for -1. */
static int dps_cmsg_int6(const struct cmsghdr *c, uint8_t *out)
{
	int v;
	if (c->cmsg_len != CMSG_LEN(sizeof(v)))
		return -EINVAL;
	memcpy(&v, CMSG_DATA(c), sizeof(v));
	if (v < -1 || v > 255)
		return -EINVAL;
	*out = v < 0 ? 0 : (uint8_t)v;
	return v >= 0;
}

/* One IPPROTO_IPV6 message for an IPv6 peer (ip6_datagram_send_ctl's switch). */
static int dps_cmsg_ip6_send(const struct cmsghdr *c, struct dps_cmsg_send *out)
{
	struct in6_pktinfo pi;
	int rc;
	switch (c->cmsg_type) {
	case IPV6_PKTINFO:
	case IPV6_2292PKTINFO:
		if ((rc = dps_cmsg_pktinfo6(c, &pi)) < 0)
			return rc;
		out->pktinfo = true;
		out->src6 = pi.ipi6_addr;
		out->ifindex = pi.ipi6_ifindex;
		return 0;
	case IPV6_HOPLIMIT:
	case IPV6_2292HOPLIMIT:
		if ((rc = dps_cmsg_int6(c, &out->ttl_v)) < 0)
			return rc;
		out->ttl = rc == 1;
		return 0;
	case IPV6_TCLASS:
		if ((rc = dps_cmsg_int6(c, &out->tos_v)) < 0)
			return rc;
		out->tos = rc == 1;
		return 0;
	default:
		return -EINVAL; /* extension headers, flow labels, IPV6_DONTFRAG: not here */
	}
}

/* An AF_INET6 socket's datagram to an IPv4 peer: of IPv6's level only IPV6_PKTINFO, whose
 * address must be mapped (ip_cmsg_send with allow_ipv6). */
static int dps_cmsg_mapped_send(const struct cmsghdr *c, struct dps_cmsg_send *out)
{
	if (c->cmsg_type != IPV6_PKTINFO)
		return 0;
	struct in6_pktinfo pi;
	int rc = dps_cmsg_pktinfo6(c, &pi);
	if (rc < 0)
		return rc;
	if (!IN6_IS_ADDR_V4MAPPED(&pi.ipi6_addr))
		return -EINVAL;
	out->pktinfo = true;
	memcpy(&out->spec_dst, pi.ipi6_addr.s6_addr + 12, 4);
	if (pi.ipi6_ifindex != 0)
		out->ifindex = pi.ipi6_ifindex;
	return 0;
}

int dps_cmsg_parse_send(const struct msghdr *msg, enum dps_cmsg_path path,
			struct dps_cmsg_send *out)
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
		else if (c->cmsg_level == IPPROTO_IP && path != DPS_CMSG_PATH_IP6)
			rc = dps_cmsg_ip_send(c, out);
		else if (c->cmsg_level == IPPROTO_IPV6 && path == DPS_CMSG_PATH_IP6)
			rc = dps_cmsg_ip6_send(c, out);
		else if (c->cmsg_level == IPPROTO_IPV6 && path == DPS_CMSG_PATH_MAPPED)
			rc = dps_cmsg_mapped_send(c, out);
		if (rc < 0)
			return rc;
	}
	return 0;
}
