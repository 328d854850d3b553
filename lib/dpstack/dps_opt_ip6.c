/* Socket options of level IPPROTO_IPV6 on AF_INET6 sockets, checked and reported as Linux's
 * do_ipv6_setsockopt and do_ipv6_getsockopt (net/ipv6/ipv6_sockglue.c) do. The stack keeps
 * one hop limit and one traffic class per socket: IPV6_UNICAST_HOPS and IPV6_TCLASS set the
 * values IP_TTL and IP_TOS set (an AF_INET6 socket's IPv4 traffic, to mapped peers, uses them
 * too), and the worker writes them into each IPv6 header's hop limit and traffic class.
 * IPV6_RECVPKTINFO, IPV6_RECVHOPLIMIT, IPV6_RECVTCLASS and RFC 2292's IPV6_2292PKTINFO and
 * IPV6_2292HOPLIMIT are the library's own: recvmsg writes the messages from the datagram's
 * record (dps_cmsg.c). The sticky IPV6_PKTINFO (RFC 3542 §6.1) is checked and taken
 * without effect: Linux's UDP never sends from its address (measured on 6.x), and its
 * interface would only force the route's, where the stack routes by destination (as it
 * does with IP_PKTINFO's ipi_ifindex). Multicast (IPV6_JOIN_GROUP,
 * IPV6_MULTICAST_HOPS, ...) is ENOPROTOOPT, as IPv4's IP_ADD_MEMBERSHIP here: the stack
 * delivers no multicast to applications. */
#include <string.h>

#include "dps_cmsg.h"
#include "dps_priv.h"

#define DPS_IP6_DEFAULT_HOPS 64 /* net.ipv6.conf.all.hop_limit */
#define DPS_IP6_ECN_MASK 0x03   /* RFC 3168 §5: the low two bits of the traffic class */

static unsigned dps_ip6_cmsg_flag(int name)
{
	switch (name) {
	case IPV6_RECVPKTINFO: return DPS_CMSG6_PKTINFO;
	case IPV6_RECVHOPLIMIT: return DPS_CMSG6_HOPLIMIT;
	case IPV6_RECVTCLASS: return DPS_CMSG6_TCLASS;
	case IPV6_2292PKTINFO: return DPS_CMSG6_2292PKTINFO;
	case IPV6_2292HOPLIMIT: return DPS_CMSG6_2292HOPLIMIT;
	default: return 0;
	}
}

/* The sticky IPV6_PKTINFO: a whole struct in6_pktinfo (more is ignored, less EINVAL). */
static int dps_ip6_sticky_pktinfo(const void *val, socklen_t len)
{
	struct in6_pktinfo pi;
	if (len < sizeof(pi))
		return -EINVAL;
	return dps_get_user(&pi, val, sizeof(pi)) < 0 ? -EFAULT : 0;
}

int dps_set_ip6_level(struct dps_file *f, int name, const void *val, socklen_t len)
{
	if (f->family != AF_INET6)
		return -ENOPROTOOPT; /* Linux: IPv6's level is for AF_INET6 sockets */
	if (name == IPV6_PKTINFO)
		return dps_ip6_sticky_pktinfo(val, len);
	int v, rc;
	unsigned flag;
	/* Every option here takes an int (Linux: EINVAL when shorter). */
	if (len < sizeof(int))
		return -EINVAL;
	if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
		return rc;
	switch (name) {
	case IPV6_V6ONLY:
		/* Only before the socket has a port (inet_num): the binding decided it. */
		if (f->bound || f->nsocks > 0)
			return -EINVAL;
		f->v6only = v != 0;
		return 0;
	case IPV6_UNICAST_HOPS:
		if (v < -1 || v > 255)
			return -EINVAL;
		/* -1 is the default; so is 0, a hop limit the stack does not send. */
		f->opts.ttl = v <= 0 ? 0 : (uint8_t)v;
		return dps_setopt_live(f, CHAN_OPT_TTL, f->opts.ttl);
	case IPV6_TCLASS:
		if (v < -1 || v > 255)
			return -EINVAL;
		v = v == -1 ? 0 : v;
		/* A stream's ECN bits are TCP's own (RFC 3168 §6.1), as for IP_TOS. */
		if (f->kind == DPS_TCP || f->kind == DPS_LISTEN)
			v &= ~DPS_IP6_ECN_MASK;
		f->opts.tos = (uint8_t)v;
		return dps_setopt_live(f, CHAN_OPT_TOS, f->opts.tos);
	case IPV6_RECVPKTINFO:
	case IPV6_RECVHOPLIMIT:
	case IPV6_RECVTCLASS:
	case IPV6_2292PKTINFO:
	case IPV6_2292HOPLIMIT:
		flag = dps_ip6_cmsg_flag(name);
		f->ip.cmsgs = v != 0 ? f->ip.cmsgs | flag : f->ip.cmsgs & ~flag;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

int dps_get_ip6_level(struct dps_file *f, int name, void *val, socklen_t *len)
{
	if (f->family != AF_INET6)
		return -ENOPROTOOPT;
	switch (name) {
	case IPV6_V6ONLY:
		return dps_ip_put_int(val, len, f->v6only);
	case IPV6_UNICAST_HOPS:
		return dps_ip_put_int(val, len, f->opts.ttl != 0 ? f->opts.ttl : DPS_IP6_DEFAULT_HOPS);
	case IPV6_TCLASS:
		return dps_ip_put_int(val, len, f->opts.tos);
	case IPV6_RECVPKTINFO:
	case IPV6_RECVHOPLIMIT:
	case IPV6_RECVTCLASS:
	case IPV6_2292PKTINFO:
	case IPV6_2292HOPLIMIT:
		return dps_ip_put_int(val, len, (f->ip.cmsgs & dps_ip6_cmsg_flag(name)) != 0);
	default: /* IPV6_PKTINFO among them: Linux does not read it back */
		return -ENOPROTOOPT;
	}
}
