/* The kernel sync (kernel_sync.h): its rtnetlink listener, the news it reads and the
 * rereads of the kernel's tables; addresses and routes are kernel_sync_addr.c and
 * kernel_sync_route.c. */
#include "kernel_sync_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cmd.h"
#include "rtnl.h"
#include "wire/ipv4.h"

#define SYNC_GROUPS (RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | \
		     RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE)
/* A full BGP table's worth of news between two reads of the control loop. */
#define SYNC_RCVBUF (16 << 20)
#define SYNC_BATCH 256                     /* datagrams read per wake-up */

int sync_port_of(const struct kernel_sync *s, unsigned ifindex)
{
	for (unsigned p = 0; p < NETCFG_MAX_PORTS && ifindex != 0; p++)
		if (s->ifindex[p] == ifindex)
			return (int)p;
	return -1;
}

static void sync_ifindex_refresh(struct daemon *d)
{
	for (unsigned p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct exception_if *k = &d->ports[p].kernel;
		d->sync.ifindex[p] = p < d->nb_ports && k->used ? if_nametoindex(k->ifname) : 0;
	}
}

void sync_ip_format(uint8_t family, const union sync_ip *ip, char *buf, size_t cap)
{
	if (family == AF_INET)
		ip4_addr_format(ip->v4, buf, cap);
	else
		ip6_addr_format(&ip->v6, buf, cap);
}

/* Reads an address attribute of family into ip (host order for IPv4). */
bool sync_ip_get(uint8_t family, const struct rtattr *a, union sync_ip *ip)
{
	size_t len = family == AF_INET ? 4 : 16;
	if (a == NULL || RTA_PAYLOAD(a) < len)
		return false;
	memcpy(ip, RTA_DATA(a), len);
	if (family == AF_INET)
		ip->v4 = ntohl(ip->v4);
	return true;
}

void sync_refused(struct daemon *d, const char *what, int rc)
{
	d->sync.c.refused++;
	snprintf(d->sync.last_refused, sizeof(d->sync.last_refused), "%s: %s", what,
		 cmd_strerror(-rc));
	fprintf(stderr, "dpstackd: sync: %s\n", d->sync.last_refused);
}
void *sync_grow(void *v, unsigned n, unsigned *cap, size_t elem)
{
	if (n < *cap)
		return v;
	unsigned ncap = *cap != 0 ? *cap * 2 : 64;
	void *nv = realloc(v, ncap * elem);
	if (nv != NULL)
		*cap = ncap;
	return nv;
}

static void sync_reread(struct daemon *d)
{
	d->sync.resync = false;
	d->sync.c.resyncs++;
	sync_ifindex_refresh(d);
	sync_reread_addrs(d);
	sync_reread_routes(d);
}

/* ---- news ---- */

static void sync_link_news(struct daemon *d, const struct nlmsghdr *h)
{
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifinfomsg)))
		return;
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	struct rtattr *tb[IFLA_MAX + 1];
	rtnl_attrs_parse(tb, IFLA_MAX, IFLA_RTA(ifi), (int)IFLA_PAYLOAD(h));
	bool ours = sync_port_of(&d->sync, (unsigned)ifi->ifi_index) >= 0;
	for (unsigned p = 0; p < d->nb_ports && !ours && tb[IFLA_IFNAME] != NULL; p++)
		ours = d->ports[p].kernel.used &&
		       strncmp(RTA_DATA(tb[IFLA_IFNAME]), d->ports[p].kernel.ifname,
			       RTA_PAYLOAD(tb[IFLA_IFNAME])) == 0;
	/* Down, gone, renamed or back: Linux flushes IPv4 routes unannounced. */
	if (ours)
		d->sync.resync = true;
}

static void sync_news(struct daemon *d, const struct nlmsghdr *h)
{
	struct sync_addr a;
	bool usable;
	switch (h->nlmsg_type) {
	case RTM_NEWLINK:
	case RTM_DELLINK:
		sync_link_news(d, h);
		break;
	case RTM_NEWADDR:
	case RTM_DELADDR:
		if (!sync_addr_parse(&d->sync, h, &a, &usable))
			break;
		if (h->nlmsg_type == RTM_DELADDR)
			sync_addr_del(d, &a);
		else if (usable)
			sync_addr_add(d, &a);
		break;
	case RTM_NEWROUTE:
	case RTM_DELROUTE:
		sync_route_news(d, h);
		break;
	default:
		break;
	}
}

int kernel_sync_start(struct daemon *d, char *err, size_t errlen)
{
	struct kernel_sync *s = &d->sync;
	if (s->fd < 0) {
		/* Listen first, then read the tables: nothing that happens between is lost
		 * (news of what the reread saw already changes nothing). */
		s->fd = rtnl_open(SYNC_GROUPS, SYNC_RCVBUF);
		s->req_fd = s->fd >= 0 ? rtnl_open(0, 0) : -1;
		if (s->req_fd < 0) {
			int rc = s->fd < 0 ? s->fd : s->req_fd;
			snprintf(err, errlen, "rtnetlink socket: %s", strerror(-rc));
			kernel_sync_stop(d);
			return rc;
		}
	}
	sync_reread(d);
	return 0;
}

void kernel_sync_stop(struct daemon *d)
{
	struct kernel_sync *s = &d->sync;
	if (s->fd >= 0)
		close(s->fd);
	if (s->req_fd >= 0)
		close(s->req_fd);
	s->fd = s->req_fd = -1;
	free(s->routes);
	s->routes = NULL;
	s->nb_routes = s->cap_routes = 0;
	s->resync = false;
}

void kernel_sync_input(struct daemon *d)
{
	struct kernel_sync *s = &d->sync;
	static char buf[RTNL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (unsigned i = 0; i < SYNC_BATCH && s->fd >= 0; i++) {
		ssize_t n = recv(s->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == ENOBUFS) {
			/* News were lost: only a reread knows what the kernel has now. */
			s->c.overruns++;
			s->resync = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		int len = (int)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			s->c.events++;
			sync_news(d, h);
		}
	}
	if (s->resync && s->fd >= 0)
		sync_reread(d);
}
