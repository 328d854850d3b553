/* Socket options of level IPPROTO_IPV6 on AF_INET6 sockets, checked and reported as Linux's
 * do_ipv6_setsockopt and do_ipv6_getsockopt (net/ipv6/ipv6_sockglue.c) do. The stack keeps
 * one hop limit and one traffic class per socket: IPV6_UNICAST_HOPS and IPV6_TCLASS set the
 * values IP_TTL and IP_TOS set (an AF_INET6 socket's IPv4 traffic, to mapped peers, uses them
 * too), and the worker writes them into each IPv6 header's hop limit and traffic class. */
#include <string.h>

#include "dps_priv.h"

#define DPS_IP6_DEFAULT_HOPS 64 /* net.ipv6.conf.all.hop_limit */
#define DPS_IP6_ECN_MASK 0x03   /* RFC 3168 §5: the low two bits of the traffic class */

int dps_set_ip6_level(struct dps_file *f, int name, const void *val, socklen_t len)
{
	if (f->family != AF_INET6)
		return -ENOPROTOOPT; /* Linux: IPv6's level is for AF_INET6 sockets */
	int v, rc;
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
	default:
		return -ENOPROTOOPT;
	}
}
