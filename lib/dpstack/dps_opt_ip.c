/* Socket options of level IPPROTO_IP, checked and reported as Linux's do_ip_setsockopt and
 * do_ip_getsockopt (net/ipv4/ip_sockglue.c) do. IP_TTL and IP_TOS go to the worker, whose
 * TCP and UDP output put them in every IPv4 header; IP_PKTINFO, IP_RECVTTL and IP_RECVTOS
 * are the library's own (recvmsg writes the messages from the datagram's record); IP_RECVERR
 * is kept and read back, but the stack has no error queue (MSG_ERRQUEUE finds it empty).
 * IP_MTU_DISCOVER and IP_BIND_ADDRESS_NO_PORT are checked and read back only: the stack
 * sends TCP with DF and UDP without whatever the mode, and picks a TCP port at listen or
 * connect anyway. */
#include <string.h>

#include "dps_cmsg.h"
#include "dps_priv.h"

#define DPS_IP_DEFAULT_TTL 64   /* net.ipv4.ip_default_ttl */
#define DPS_IP_ECN_MASK 0x03    /* RFC 3168: the low two bits of the TOS byte */
#define DPS_PMTUDISC_MAX 5      /* IP_PMTUDISC_OMIT */

/* Linux reads an int when there are four bytes, else one byte, else takes 0. */
int dps_ip_int_arg(const void *val, socklen_t len, int *out)
{
	*out = 0;
	if (len >= sizeof(int))
		return dps_get_user(out, val, sizeof(int));
	unsigned char c = 0;
	int rc = len >= 1 ? dps_get_user(&c, val, 1) : 0;
	*out = c;
	return rc;
}

static int dps_ip_cmsg_flag(int name)
{
	switch (name) {
	case IP_PKTINFO: return DPS_CMSG_PKTINFO;
	case IP_RECVTTL: return DPS_CMSG_TTL;
	case IP_RECVTOS: return DPS_CMSG_TOS;
	default: return 0;
	}
}

int dps_set_ip_level(struct dps_file *f, int name, const void *val, socklen_t len)
{
	int v, rc, flag;
	switch (name) {
	case IP_TTL:
		if (len < 1)
			return -EINVAL;
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		if (v != -1 && (v < 1 || v > 255))
			return -EINVAL;
		f->opts.ttl = v == -1 ? 0 : (uint8_t)v; /* -1: back to the default */
		return dps_setopt_live(f, CHAN_OPT_TTL, f->opts.ttl);
	case IP_TOS:
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		/* __ip_sock_set_tos: a stream's ECN bits are TCP's own (RFC 3168 §6.1). */
		if (f->kind == DPS_TCP || f->kind == DPS_LISTEN)
			v &= ~DPS_IP_ECN_MASK;
		f->opts.tos = (uint8_t)v;
		return dps_setopt_live(f, CHAN_OPT_TOS, f->opts.tos);
	case IP_PKTINFO:
	case IP_RECVTTL:
	case IP_RECVTOS:
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		flag = dps_ip_cmsg_flag(name);
		f->ip.cmsgs = v != 0 ? f->ip.cmsgs | (unsigned)flag : f->ip.cmsgs & ~(unsigned)flag;
		return 0;
	case IP_RECVERR:
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		f->ip.recverr = v != 0;
		return 0;
	case IP_MTU_DISCOVER:
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		if (v < 0 || v > DPS_PMTUDISC_MAX)
			return -EINVAL;
		f->ip.pmtudisc = (uint8_t)(v + 1);
		return 0;
	case IP_BIND_ADDRESS_NO_PORT:
		if ((rc = dps_ip_int_arg(val, len, &v)) < 0)
			return rc;
		f->ip.bind_no_port = v != 0;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

/* do_ip_getsockopt's answer: one byte when asked for less than an int and the value fits,
 * else min(len, sizeof(int)) bytes of the int (len is the library's copy, val the
 * application's buffer). */
int dps_ip_put_int(void *val, socklen_t *len, int v)
{
	if ((int)*len < 0)
		return -EINVAL;
	if (*len > 0 && *len < sizeof(int) && v >= 0 && v <= 255) {
		unsigned char c = (unsigned char)v;
		if (dps_put_user(val, &c, 1) < 0)
			return -EFAULT;
		*len = 1;
		return 0;
	}
	socklen_t n = *len < sizeof(int) ? *len : sizeof(int);
	if (dps_put_user(val, &v, n) < 0)
		return -EFAULT;
	*len = n;
	return 0;
}

int dps_get_ip_level(struct dps_file *f, int name, void *val, socklen_t *len)
{
	switch (name) {
	case IP_TTL:
		return dps_ip_put_int(val, len, f->opts.ttl != 0 ? f->opts.ttl : DPS_IP_DEFAULT_TTL);
	case IP_TOS:
		return dps_ip_put_int(val, len, f->opts.tos);
	case IP_PKTINFO:
	case IP_RECVTTL:
	case IP_RECVTOS:
		return dps_ip_put_int(val, len, (f->ip.cmsgs & (unsigned)dps_ip_cmsg_flag(name)) != 0);
	case IP_RECVERR:
		return dps_ip_put_int(val, len, f->ip.recverr);
	case IP_MTU_DISCOVER: /* IP_PMTUDISC_WANT unless set (net.ipv4.ip_no_pmtu_disc 0) */
		return dps_ip_put_int(val, len, f->ip.pmtudisc ? f->ip.pmtudisc - 1 : 1);
	case IP_BIND_ADDRESS_NO_PORT:
		return dps_ip_put_int(val, len, f->ip.bind_no_port);
	default:
		return -ENOPROTOOPT;
	}
}
