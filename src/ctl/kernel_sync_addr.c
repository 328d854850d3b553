/* The kernel sync's addresses (kernel_sync.h): a kernel interface's usable addresses on
 * its port, through `ip addr add|del`'s own calls, marked as mirrored. */
#include "kernel_sync_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/if_addr.h>

#include "cmd.h"
#include "rtnl.h"
#include "stack/netcfg6.h"

struct sync_addrs {
	struct sync_addr *v;
	unsigned n, cap;
};

static struct netcfg_addr *sync_master_addr4(struct netcfg *c, uint32_t addr)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		if (c->addrs[i].used && c->addrs[i].addr == addr)
			return &c->addrs[i];
	return NULL;
}

/* The message's address when it is one of a kernel interface the sync mirrors: *usable
 * false while the kernel still checks it (tentative) or found it duplicate. */
bool sync_addr_parse(const struct kernel_sync *s, const struct nlmsghdr *h,
			    struct sync_addr *a, bool *usable)
{
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct ifaddrmsg)))
		return false;
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	int port = sync_port_of(s, ifa->ifa_index);
	if (port < 0 || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return false;
	struct rtattr *tb[IFA_MAX + 1];
	rtnl_attrs_parse(tb, IFA_MAX, IFA_RTA(ifa), (int)IFA_PAYLOAD(h));
	memset(a, 0, sizeof(*a));
	a->family = ifa->ifa_family;
	a->plen = ifa->ifa_prefixlen;
	a->port = (uint16_t)port;
	/* IFA_LOCAL is the interface's own address; IFA_ADDRESS the peer's on a
	 * point-to-point link (rtnetlink(7)), the same on Ethernet. */
	const struct rtattr *at = a->family == AF_INET && tb[IFA_LOCAL] ? tb[IFA_LOCAL]
									 : tb[IFA_ADDRESS];
	if (!sync_ip_get(a->family, at, &a->ip))
		return false;
	if (a->family == AF_INET6 && ip6_is_link_local(&a->ip.v6))
		return false;
	uint32_t flags = rtnl_attr_u32(tb[IFA_FLAGS], ifa->ifa_flags);
	*usable = !(flags & (IFA_F_TENTATIVE | IFA_F_DADFAILED));
	return true;
}

void sync_addr_add(struct daemon *d, const struct sync_addr *a)
{
	struct kernel_sync *s = &d->sync;
	char ip[48], what[96];
	sync_ip_format(a->family, &a->ip, ip, sizeof(ip));
	snprintf(what, sizeof(what), "address %s/%u on %s", ip, a->plen,
		 d->ports[a->port].kernel.ifname);
	int rc;
	if (a->family == AF_INET) {
		const struct netcfg_addr *cur = sync_master_addr4(&d->master, a->ip.v4);
		if (cur != NULL) {
			/* The same address set on both sides is the exception path's design. */
			s->c.conflicts += cur->port != a->port || cur->plen != a->plen;
			return;
		}
		rc = cmd_ip_addr_apply(d, true, a->port, a->ip.v4, a->plen);
		struct netcfg_addr *added = sync_master_addr4(&d->master, a->ip.v4);
		if (rc == 0 && added != NULL)
			added->synced = true;
	} else {
		const struct netcfg_addr6 *cur = netcfg6_local(&d->master, NETCFG_PORT_ANY,
							      &a->ip.v6);
		if (cur != NULL) {
			s->c.conflicts += cur->port != a->port || cur->plen != a->plen;
			return;
		}
		rc = cmd_ip6_addr_apply(d, true, a->port, &a->ip.v6, a->plen, NETCFG6_SYNCED);
	}
	if (rc != 0) {
		sync_refused(d, what, rc);
		return;
	}
	s->c.addrs_added++;
	sync_routes_retry(d); /* a gateway may be on a connected subnet now */
}

void sync_addr_del(struct daemon *d, const struct sync_addr *a)
{
	int rc = -ENOENT;
	if (a->family == AF_INET) {
		const struct netcfg_addr *cur = sync_master_addr4(&d->master, a->ip.v4);
		if (cur != NULL && cur->synced && cur->port == a->port && cur->plen == a->plen)
			rc = cmd_ip_addr_apply(d, false, a->port, a->ip.v4, a->plen);
		/* Linux flushes the routes that needed the address without a word. */
		d->sync.resync = true;
	} else {
		const struct netcfg_addr6 *cur = netcfg6_local(&d->master, a->port, &a->ip.v6);
		if (cur != NULL && (cur->flags & NETCFG6_SYNCED) && cur->plen == a->plen)
			rc = cmd_ip6_addr_apply(d, false, a->port, &a->ip.v6, a->plen, 0);
	}
	if (rc == 0)
		d->sync.c.addrs_removed++;
}

/* ---- routes ---- */

static void sync_addr_collect(const struct nlmsghdr *h, void *arg)
{
	void **ctx = arg;
	struct daemon *d = ctx[0];
	struct sync_addrs *list = ctx[1];
	struct sync_addr a;
	bool usable;
	if (!sync_addr_parse(&d->sync, h, &a, &usable) || !usable)
		return;
	struct sync_addr *v = sync_grow(list->v, list->n, &list->cap, sizeof(a));
	if (v == NULL)
		return; /* the reread misses it; its news, when it changes, does not */
	list->v = v;
	list->v[list->n++] = a;
}

static bool sync_addrs_have(const struct sync_addrs *list, uint8_t family, uint16_t port,
			    const union sync_ip *ip, uint8_t plen)
{
	union sync_ip key = {0};
	if (family == AF_INET)
		key.v4 = ip->v4;
	else
		key.v6 = ip->v6;
	for (unsigned i = 0; i < list->n; i++) {
		const struct sync_addr *a = &list->v[i];
		if (a->family == family && a->port == port && a->plen == plen &&
		    memcmp(&a->ip, &key, sizeof(key)) == 0)
			return true;
	}
	return false;
}

void sync_reread_addrs(struct daemon *d)
{
	struct sync_addrs list = {0};
	void *ctx[] = {d, &list};
	if (rtnl_dump(d->sync.req_fd, RTM_GETADDR, AF_UNSPEC, sync_addr_collect, ctx) != 0) {
		free(list.v);
		d->sync.resync = true; /* next news tries again */
		return;
	}
	for (unsigned i = 0; i < list.n; i++)
		sync_addr_add(d, &list.v[i]);
	/* What was mirrored and the kernel no longer has. */
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++) {
		const struct netcfg_addr *a = &d->master.addrs[i];
		struct sync_addr gone = {.family = AF_INET, .port = a->port, .plen = a->plen,
					 .ip.v4 = a->addr};
		if (a->used && a->synced &&
		    !sync_addrs_have(&list, AF_INET, a->port, &gone.ip, a->plen))
			sync_addr_del(d, &gone);
	}
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS6; i++) {
		const struct netcfg_addr6 *a = &d->master.addrs6[i];
		struct sync_addr gone = {.family = AF_INET6, .port = a->port, .plen = a->plen,
					 .ip.v6 = a->addr};
		if (a->used && (a->flags & NETCFG6_SYNCED) &&
		    !sync_addrs_have(&list, AF_INET6, a->port, &gone.ip, a->plen))
			sync_addr_del(d, &gone);
	}
	free(list.v);
}
