#include "kernel_sync.h"

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_addr.h>

#include "cmd.h"
#include "rtnl.h"
#include "stack/netcfg6.h"
#include "wire/ipv4.h"

#define SYNC_GROUPS (RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | \
		     RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE)
/* A full BGP table's worth of news between two reads of the control loop. */
#define SYNC_RCVBUF (16 << 20)
#define SYNC_BATCH 256                     /* datagrams read per wake-up */
#define SYNC_MAX_ROUTES (ROUTE_MAX + ROUTE6_MAX)

union sync_ip {
	uint32_t v4;              /* host order */
	struct ip6_addr v6;
};

/* A kernel route on a kernel interface: its key is (family, dst, plen, metric). */
struct sync_route {
	uint8_t family;
	uint8_t plen;
	uint8_t proto;            /* rtm_protocol */
	bool has_gw;
	bool refused;             /* the stack refused it: counted and logged once */
	bool conflict;            /* a user's route is there: counted once */
	uint16_t port;
	uint16_t mtu;
	uint32_t metric;
	union sync_ip dst, gw, src; /* src all zero: no prefsrc */
};

/* A usable address of a kernel interface. */
struct sync_addr {
	uint8_t family;
	uint8_t plen;
	uint16_t port;
	union sync_ip ip;
};

struct sync_addrs {
	struct sync_addr *v;
	unsigned n, cap;
};

static int sync_port_of(const struct kernel_sync *s, unsigned ifindex)
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

static void sync_ip_format(uint8_t family, const union sync_ip *ip, char *buf, size_t cap)
{
	if (family == AF_INET)
		ip4_addr_format(ip->v4, buf, cap);
	else
		ip6_addr_format(&ip->v6, buf, cap);
}

/* Reads an address attribute of family into ip (host order for IPv4). */
static bool sync_ip_get(uint8_t family, const struct rtattr *a, union sync_ip *ip)
{
	size_t len = family == AF_INET ? 4 : 16;
	if (a == NULL || RTA_PAYLOAD(a) < len)
		return false;
	memcpy(ip, RTA_DATA(a), len);
	if (family == AF_INET)
		ip->v4 = ntohl(ip->v4);
	return true;
}

static void sync_refused(struct daemon *d, const char *what, int rc)
{
	d->sync.c.refused++;
	snprintf(d->sync.last_refused, sizeof(d->sync.last_refused), "%s: %s", what,
		 cmd_strerror(-rc));
	fprintf(stderr, "dpstackd: sync: %s\n", d->sync.last_refused);
}

/* ---- addresses ---- */

static struct netcfg_addr *sync_master_addr4(struct netcfg *c, uint32_t addr)
{
	for (unsigned i = 0; i < NETCFG_MAX_ADDRS; i++)
		if (c->addrs[i].used && c->addrs[i].addr == addr)
			return &c->addrs[i];
	return NULL;
}

/* The message's address when it is one of a kernel interface the sync mirrors: *usable
 * false while the kernel still checks it (tentative) or found it duplicate. */
static bool sync_addr_parse(const struct kernel_sync *s, const struct nlmsghdr *h,
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

static void sync_routes_retry(struct daemon *d);

static void sync_addr_add(struct daemon *d, const struct sync_addr *a)
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

static void sync_addr_del(struct daemon *d, const struct sync_addr *a)
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

static bool sync_same_prefix(const struct sync_route *a, const struct sync_route *b)
{
	return a->family == b->family && a->plen == b->plen &&
	       memcmp(&a->dst, &b->dst, sizeof(a->dst)) == 0;
}

static struct sync_route *sync_route_find(struct kernel_sync *s, const struct sync_route *key)
{
	for (unsigned i = 0; i < s->nb_routes; i++)
		if (sync_same_prefix(&s->routes[i], key) && s->routes[i].metric == key->metric)
			return &s->routes[i];
	return NULL;
}

static void sync_route_forget(struct kernel_sync *s, const struct sync_route *key)
{
	struct sync_route *r = sync_route_find(s, key);
	if (r != NULL)
		*r = s->routes[--s->nb_routes];
}

static bool sync_route_keep(struct daemon *d, const struct sync_route *nr)
{
	struct kernel_sync *s = &d->sync;
	struct sync_route *r = sync_route_find(s, nr);
	if (r != NULL) {
		*r = *nr;
		return true;
	}
	if (s->nb_routes == s->cap_routes) {
		unsigned cap = s->cap_routes != 0 ? s->cap_routes * 2 : 64;
		struct sync_route *v = s->nb_routes < SYNC_MAX_ROUTES
					       ? realloc(s->routes, cap * sizeof(*v)) : NULL;
		if (v == NULL) {
			sync_refused(d, "route beyond the sync's table", -ENOSPC);
			return false;
		}
		s->routes = v;
		s->cap_routes = cap;
	}
	s->routes[s->nb_routes++] = *nr;
	return true;
}

/* Of the kernel's routes to key's prefix, the one with the lowest metric (Linux's choice). */
static struct sync_route *sync_route_best(struct kernel_sync *s, const struct sync_route *key)
{
	struct sync_route *best = NULL;
	for (unsigned i = 0; i < s->nb_routes; i++)
		if (sync_same_prefix(&s->routes[i], key) &&
		    (best == NULL || s->routes[i].metric < best->metric))
			best = &s->routes[i];
	return best;
}

/* Reads a route message: false when it is none the sync follows at all (another table,
 * source or TOS routing, a cached clone); else the key in r and *ours when the stack
 * should mirror it (a unicast route, not the kernel's own, through a kernel interface). */
static bool sync_route_parse(const struct kernel_sync *s, const struct nlmsghdr *h,
			     struct sync_route *r, bool *ours)
{
	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct rtmsg)))
		return false;
	struct rtmsg *rtm = NLMSG_DATA(h);
	if (rtm->rtm_family != AF_INET && rtm->rtm_family != AF_INET6)
		return false;
	struct rtattr *tb[RTA_MAX + 1];
	rtnl_attrs_parse(tb, RTA_MAX, RTM_RTA(rtm), (int)RTM_PAYLOAD(h));
	if (rtnl_attr_u32(tb[RTA_TABLE], rtm->rtm_table) != RT_TABLE_MAIN ||
	    rtm->rtm_src_len != 0 || rtm->rtm_tos != 0 || (rtm->rtm_flags & RTM_F_CLONED))
		return false;
	memset(r, 0, sizeof(*r));
	r->family = rtm->rtm_family;
	r->plen = rtm->rtm_dst_len;
	r->proto = rtm->rtm_protocol;
	r->metric = rtnl_attr_u32(tb[RTA_PRIORITY], 0);
	if (r->plen > (r->family == AF_INET ? 32 : 128) ||
	    (tb[RTA_DST] != NULL && !sync_ip_get(r->family, tb[RTA_DST], &r->dst)))
		return false;
	*ours = false;
	if (rtm->rtm_type != RTN_UNICAST || rtm->rtm_protocol == RTPROT_KERNEL)
		return true;
	unsigned oif = rtnl_attr_u32(tb[RTA_OIF], 0);
	const struct rtattr *gw = tb[RTA_GATEWAY];
	if (oif == 0 && tb[RTA_MULTIPATH] != NULL) {
		/* The stack has one next hop per prefix: the first on a kernel interface. */
		int len = (int)RTA_PAYLOAD(tb[RTA_MULTIPATH]);
		for (struct rtnexthop *nh = RTA_DATA(tb[RTA_MULTIPATH]); RTNH_OK(nh, len);
		     len -= (int)RTNH_ALIGN(nh->rtnh_len), nh = RTNH_NEXT(nh)) {
			if (sync_port_of(s, (unsigned)nh->rtnh_ifindex) < 0)
				continue;
			struct rtattr *nt[RTA_MAX + 1];
			rtnl_attrs_parse(nt, RTA_MAX, RTNH_DATA(nh),
					 nh->rtnh_len - (int)sizeof(*nh));
			oif = (unsigned)nh->rtnh_ifindex;
			gw = nt[RTA_GATEWAY];
			break;
		}
	}
	int port = sync_port_of(s, oif);
	if (port < 0)
		return true;
	r->port = (uint16_t)port;
	r->has_gw = sync_ip_get(r->family, gw, &r->gw);
	(void)sync_ip_get(r->family, tb[RTA_PREFSRC], &r->src);
	if (tb[RTA_METRICS] != NULL) {
		struct rtattr *mx[RTAX_MAX + 1];
		rtnl_attrs_parse(mx, RTAX_MAX, RTA_DATA(tb[RTA_METRICS]),
				 (int)RTA_PAYLOAD(tb[RTA_METRICS]));
		uint32_t mtu = rtnl_attr_u32(mx[RTAX_MTU], 0);
		r->mtu = mtu <= NETCFG_MAX_MTU ? (uint16_t)mtu : 0;
	}
	*ours = true;
	return true;
}

/* The stack's route for kernel route k. */
static struct route sync_route4(const struct daemon *d, const struct sync_route *k)
{
	struct route r = {.prefix = k->dst.v4, .plen = k->plen, .port = k->port,
			  .type = k->has_gw ? ROUTE_GATEWAY : ROUTE_CONNECTED, .gateway = k->gw.v4,
			  .mtu = k->mtu, .synced = true, .proto = k->proto};
	if (netcfg_addr_is_local(&d->master, k->src.v4))
		r.src = k->src.v4;
	return r;
}

static struct route6 sync_route6(const struct daemon *d, const struct sync_route *k)
{
	struct route6 r = {.prefix = k->dst.v6, .plen = k->plen, .port = k->port,
			   .type = k->has_gw ? ROUTE_GATEWAY : ROUTE_CONNECTED,
			   .gateway = k->gw.v6, .mtu = k->mtu, .synced = true, .proto = k->proto};
	if (netcfg6_local(&d->master, NETCFG_PORT_ANY, &k->src.v6) != NULL &&
	    !ip6_is_link_local(&k->src.v6))
		r.src = k->src.v6;
	return r;
}

/* One change of a prefix, made on the master and then on each worker in one call, so a
 * worker forwarding between bursts sees the old route or the new one, never neither. */
struct sync_change {
	uint8_t family;
	bool had, add;
	struct route old4, new4;
	struct route6 old6, new6;
};

static int sync_change_on(struct netcfg *c, void *arg)
{
	const struct sync_change *ch = arg;
	int rc = 0;
	if (ch->family == AF_INET) {
		if (ch->had && netcfg_route_del(c, ch->old4.prefix, ch->old4.plen) != 0)
			return -ESRCH;
		if (ch->add && (rc = netcfg_route_add(c, &ch->new4)) != 0 && ch->had)
			(void)netcfg_route_add(c, &ch->old4); /* as it was */
	} else {
		if (ch->had && netcfg6_route_del(c, &ch->old6.prefix, ch->old6.plen) != 0)
			return -ESRCH;
		if (ch->add && (rc = netcfg6_route_add(c, &ch->new6)) != 0 && ch->had)
			(void)netcfg6_route_add(c, &ch->old6);
	}
	return rc;
}

static bool sync_route4_equal(const struct route *a, const struct route *b)
{
	return a->type == b->type && a->port == b->port && a->gateway == b->gateway &&
	       a->src == b->src && a->mtu == b->mtu && a->proto == b->proto;
}

static bool sync_route6_equal(const struct route6 *a, const struct route6 *b)
{
	return a->type == b->type && a->port == b->port &&
	       ip6_addr_equal(&a->gateway, &b->gateway) && ip6_addr_equal(&a->src, &b->src) &&
	       a->mtu == b->mtu && a->proto == b->proto;
}

static void sync_route_describe(const struct daemon *d, const struct sync_route *k, char *buf,
				size_t cap)
{
	char dst[48], gw[48] = "";
	sync_ip_format(k->family, &k->dst, dst, sizeof(dst));
	if (k->has_gw) {
		strcpy(gw, " via ");
		sync_ip_format(k->family, &k->gw, gw + 5, sizeof(gw) - 5);
	}
	snprintf(buf, cap, "route %s/%u%s dev %s", dst, k->plen, gw,
		 d->ports[k->port].kernel.ifname);
}

/* Makes the stack's route to key's prefix what the kernel's best route there says: added,
 * replaced, removed or left (a route of the stack's user is there). */
static void sync_prefix(struct daemon *d, const struct sync_route *key)
{
	struct kernel_sync *s = &d->sync;
	struct sync_route *best = sync_route_best(s, key);
	struct sync_change ch = {.family = key->family, .add = best != NULL};
	bool user = false, same = false;
	if (key->family == AF_INET) {
		const struct route *cur = route_find(d->master.routes, key->dst.v4, key->plen);
		if (best != NULL)
			ch.new4 = sync_route4(d, best);
		if (cur != NULL) {
			ch.had = true;
			ch.old4 = *cur;
			user = !cur->synced;
			same = best != NULL && sync_route4_equal(cur, &ch.new4);
		}
	} else {
		const struct route6 *cur = route6_find(d->master.routes6, &key->dst.v6, key->plen);
		if (best != NULL)
			ch.new6 = sync_route6(d, best);
		if (cur != NULL) {
			ch.had = true;
			ch.old6 = *cur;
			user = !cur->synced;
			same = best != NULL && sync_route6_equal(cur, &ch.new6);
		}
	}
	if (user) {
		if (best != NULL && !best->conflict)
			s->c.conflicts++;
		if (best != NULL)
			best->conflict = true;
		return;
	}
	if (same || (!ch.had && !ch.add))
		return;
	int rc = daemon_apply_netcfg(d, sync_change_on, &ch);
	if (rc != 0) {
		if (best != NULL && !best->refused) {
			char what[160];
			sync_route_describe(d, best, what, sizeof(what));
			sync_refused(d, what, rc);
			best->refused = true;
		}
		return;
	}
	if (best != NULL)
		best->refused = best->conflict = false;
	if (!ch.had)
		s->c.routes_added++;
	else if (ch.add)
		s->c.routes_replaced++;
	else
		s->c.routes_removed++;
}

static void sync_routes_retry(struct daemon *d)
{
	for (unsigned i = 0; i < d->sync.nb_routes; i++)
		if (d->sync.routes[i].refused)
			sync_prefix(d, &d->sync.routes[i]);
}

static void sync_route_news(struct daemon *d, const struct nlmsghdr *h)
{
	struct sync_route r;
	bool ours;
	if (!sync_route_parse(&d->sync, h, &r, &ours))
		return;
	if (h->nlmsg_type == RTM_NEWROUTE && ours) {
		struct sync_route *old = sync_route_find(&d->sync, &r);
		if (old != NULL) { /* a replaced route is judged afresh */
			r.refused = false;
			r.conflict = old->conflict;
		}
		if (!sync_route_keep(d, &r))
			return;
	} else {
		sync_route_forget(&d->sync, &r);
	}
	sync_prefix(d, &r);
}

/* ---- rereading the kernel's tables ---- */

static void sync_addr_collect(const struct nlmsghdr *h, void *arg)
{
	void **ctx = arg;
	struct daemon *d = ctx[0];
	struct sync_addrs *list = ctx[1];
	struct sync_addr a;
	bool usable;
	if (!sync_addr_parse(&d->sync, h, &a, &usable) || !usable)
		return;
	if (list->n == list->cap) {
		unsigned cap = list->cap != 0 ? list->cap * 2 : 16;
		struct sync_addr *v = realloc(list->v, cap * sizeof(*v));
		if (v == NULL)
			return;
		list->v = v;
		list->cap = cap;
	}
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

static void sync_reread_addrs(struct daemon *d)
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

static void sync_route_collect(const struct nlmsghdr *h, void *arg)
{
	struct daemon *d = arg;
	struct sync_route r;
	bool ours;
	if (sync_route_parse(&d->sync, h, &r, &ours) && ours)
		(void)sync_route_keep(d, &r);
}

struct sync_keys {
	struct sync_route *v;
	unsigned n, cap;
};

static int sync_key_push(struct sync_keys *k, const struct sync_route *r)
{
	if (k->n == k->cap) {
		unsigned cap = k->cap != 0 ? k->cap * 2 : 64;
		struct sync_route *v = realloc(k->v, cap * sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n++] = *r;
	return 0;
}

static int sync_collect4(const struct route *r, void *arg)
{
	struct sync_route k;
	memset(&k, 0, sizeof(k)); /* keys compare as bytes */
	k.family = AF_INET;
	k.plen = r->plen;
	k.dst.v4 = r->prefix;
	return r->synced ? sync_key_push(arg, &k) : 0;
}

static int sync_collect6(const struct route6 *r, void *arg)
{
	struct sync_route k;
	memset(&k, 0, sizeof(k));
	k.family = AF_INET6;
	k.plen = r->plen;
	k.dst.v6 = r->prefix;
	return r->synced ? sync_key_push(arg, &k) : 0;
}

static void sync_reread_routes(struct daemon *d)
{
	struct kernel_sync *s = &d->sync;
	s->nb_routes = 0;
	if (rtnl_dump(s->req_fd, RTM_GETROUTE, AF_UNSPEC, sync_route_collect, d) != 0) {
		s->resync = true;
		return;
	}
	for (unsigned i = 0; i < s->nb_routes; i++)
		sync_prefix(d, &s->routes[i]);
	/* The stack's mirrored routes the kernel no longer has: their prefix has no best. */
	struct sync_keys keys = {0};
	route_walk(d->master.routes, sync_collect4, &keys);
	route6_walk(d->master.routes6, sync_collect6, &keys);
	for (unsigned i = 0; i < keys.n; i++)
		if (sync_route_best(s, &keys.v[i]) == NULL)
			sync_prefix(d, &keys.v[i]);
	free(keys.v);
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
