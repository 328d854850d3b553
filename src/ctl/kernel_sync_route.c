/* The kernel sync's routes (kernel_sync.h): the kernel's routes out of the kernel
 * interfaces, kept by (family, prefix, length, metric), and the best of each prefix made
 * the stack's route through `ip route add|del`'s own calls. */
#include "kernel_sync_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "rtnl.h"
#include "stack/netcfg6.h"


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
	/* The kernel's routes beyond what the stack's table holds could never be mirrored. */
	struct sync_route *v = s->nb_routes < route_capacity(d->master.routes)
				       ? sync_grow(s->routes, s->nb_routes, &s->cap_routes, sizeof(*nr))
				       : NULL;
	if (v == NULL) {
		sync_refused(d, "route beyond the sync's table", -ENOSPC);
		return false;
	}
	s->routes = v;
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

static struct inet_addr sync_inet(uint8_t family, const union sync_ip *ip)
{
	return family == AF_INET ? inet_addr_v4(ip->v4) : inet_addr_v6(&ip->v6);
}

/* True when kernel route k's preferred source can be the stack's: one of its addresses,
 * and for IPv6 a global one (a link-local source is chosen by scope, RFC 6724). */
static bool sync_src_usable(const struct daemon *d, const struct sync_route *k)
{
	if (k->family == AF_INET)
		return netcfg_addr_is_local(&d->master, k->src.v4);
	return netcfg6_local(&d->master, NETCFG_PORT_ANY, &k->src.v6) != NULL &&
	       !ip6_is_link_local(&k->src.v6);
}

/* The stack's route for kernel route k. */
static struct route sync_route_of(const struct daemon *d, const struct sync_route *k)
{
	struct route r = {.prefix = sync_inet(k->family, &k->dst), .plen = k->plen,
			  .port = k->port, .type = k->has_gw ? ROUTE_GATEWAY : ROUTE_CONNECTED,
			  .mtu = k->mtu, .synced = true, .proto = k->proto};
	if (k->has_gw)
		r.gateway = sync_inet(k->family, &k->gw);
	if (sync_src_usable(d, k))
		r.src = sync_inet(k->family, &k->src);
	return r;
}

/* One change of a prefix, made on the master and then on each worker in one call, so a
 * worker forwarding between bursts sees the old route or the new one, never neither. */
struct sync_change {
	bool had, add;
	struct route old, new;
};

static int sync_change_on(struct netcfg *c, void *arg)
{
	const struct sync_change *ch = arg;
	int rc = 0;
	if (ch->had && netcfg_route_del(c, &ch->old.prefix, ch->old.plen) != 0)
		return -ESRCH;
	if (ch->add && (rc = netcfg_route_add(c, &ch->new)) != 0 && ch->had)
		(void)netcfg_route_add(c, &ch->old); /* as it was */
	return rc;
}

static bool sync_route_equal(const struct route *a, const struct route *b)
{
	return a->type == b->type && a->port == b->port &&
	       inet_addr_equal(&a->gateway, &b->gateway) && inet_addr_equal(&a->src, &b->src) &&
	       a->mtu == b->mtu;
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
	struct sync_change ch = {.add = best != NULL};
	bool user = false, path = false, same = false; /* path: same but for the protocol */
	struct inet_addr prefix = sync_inet(key->family, &key->dst);
	const struct route *cur = route_find(d->master.routes, &prefix, key->plen);
	if (best != NULL)
		ch.new = sync_route_of(d, best);
	if (cur != NULL) {
		ch.had = true;
		ch.old = *cur;
		user = !cur->synced;
		path = best != NULL && sync_route_equal(cur, &ch.new);
		same = path && cur->proto == ch.new.proto;
	}
	if (user) {
		/* The user's route where the kernel has the same is the design, no conflict. */
		if (best != NULL && !best->conflict && !path)
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

void sync_routes_retry(struct daemon *d)
{
	for (unsigned i = 0; i < d->sync.nb_routes; i++)
		if (d->sync.routes[i].refused)
			sync_prefix(d, &d->sync.routes[i]);
}

void sync_route_news(struct daemon *d, const struct nlmsghdr *h)
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
	struct sync_route *v = sync_grow(k->v, k->n, &k->cap, sizeof(*r));
	if (v == NULL)
		return -ENOMEM;
	k->v = v;
	k->v[k->n++] = *r;
	return 0;
}

static int sync_collect(const struct route *r, void *arg)
{
	struct sync_route k;
	memset(&k, 0, sizeof(k)); /* keys compare as bytes */
	k.plen = r->plen;
	if (route_is_v4(r)) {
		k.family = AF_INET;
		k.dst.v4 = inet_addr_to_v4(&r->prefix);
	} else {
		k.family = AF_INET6;
		k.dst.v6 = inet_addr_to_v6(&r->prefix);
	}
	return r->synced ? sync_key_push(arg, &k) : 0;
}

void sync_reread_routes(struct daemon *d)
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
	route_walk(d->master.routes, sync_collect, &keys);
	for (unsigned i = 0; i < keys.n; i++)
		if (sync_route_best(s, &keys.v[i]) == NULL)
			sync_prefix(d, &keys.v[i]);
	free(keys.v);
}
