/* ip addr and ip route for IPv6: iproute2's grammar (`ip -6 route`, or an address with a
 * colon where cmd_ip.c takes one) over the master table and every worker's copy. */
#include <errno.h>
#include <string.h>

#include "addrconf_run.h"
#include "cmd.h"
#include "stack/netcfg6.h"

struct addr6_op {
	uint16_t port;
	struct ip6_addr addr;
	uint8_t plen;
	uint8_t flags;
};

static int addr6_add_on(struct netcfg *c, void *arg)
{
	struct addr6_op *op = arg;
	return netcfg6_addr_add(c, op->port, &op->addr, op->plen, op->flags);
}

static int addr6_del_on(struct netcfg *c, void *arg)
{
	struct addr6_op *op = arg;
	return netcfg6_addr_del(c, op->port, &op->addr, op->plen);
}

int cmd_ip6_addr_tables(struct daemon *d, bool add, uint16_t port, const struct ip6_addr *addr,
			uint8_t plen, uint8_t flags)
{
	struct addr6_op op = {.port = port, .addr = *addr, .plen = plen, .flags = flags};
	return daemon_apply_netcfg(d, add ? addr6_add_on : addr6_del_on, &op);
}

int cmd_ip6_addr_apply(struct daemon *d, bool add, uint16_t port, const struct ip6_addr *addr,
		       uint8_t plen, uint8_t flags)
{
	if (add)
		flags = addrconf_run_add_flags(d, port, flags);
	int rc = cmd_ip6_addr_tables(d, add, port, addr, plen, flags);
	if (rc == 0 && add)
		addrconf_run_addr_added(d, port, addr, plen, flags);
	else if (rc == 0)
		addrconf_run_addr_removed(d, port, addr);
	return rc;
}

/* ADDR/LEN dev PORT */
int cmd_addr6_change(struct daemon *d, bool add, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 3 || strcmp(argv[1], "dev") != 0)
		return -1;
	struct addr6_op op = {0};
	if (ip6_prefix_parse(argv[0], &op.addr, &op.plen) != 0 || strchr(argv[0], '/') == NULL)
		return ctl_error(o, "'%s' is not an IPv6 address with prefix length", argv[0]);
	if (cmd_parse_port(d, argv[2], &op.port, o) != 0)
		return -1;
	int rc = cmd_ip6_addr_apply(d, add, op.port, &op.addr, op.plen, 0);
	if (rc == -EINVAL)
		return ctl_error(o, "%s cannot be assigned to a port (multicast, unspecified, "
				    "loopback or IPv4-mapped address, or prefix length 0)", argv[0]);
	if (rc != 0)
		return ctl_error(o, "ip addr %s %s dev %s: %s", add ? "add" : "del", argv[0],
				 argv[2], cmd_strerror(-rc));
	return 0;
}

/* The DAD state iproute2 prints (tentative, dadfailed, deprecated; nothing when
 * preferred). */
static const char *addr6_state(uint8_t flags)
{
	if (flags & NETCFG6_DADFAILED)
		return "dadfailed";
	if (flags & NETCFG6_TENTATIVE)
		return "tentative";
	return flags & NETCFG6_DEPRECATED ? "deprecated" : NULL;
}

/* Seconds left of a lifetime end, as iproute2's valid_lft/preferred_lft. */
static void addr6_lifetime(struct ctl_out *o, const char *key, uint64_t until, uint64_t now)
{
	if (until == ADDRCONF_NEVER) {
		if (o->json)
			json_str(o, key, "forever");
		else
			ctl_printf(o, " %s forever", key);
		return;
	}
	uint64_t s = until > now ? (until - now) / 1000 : 0;
	if (o->json)
		json_u64(o, key, s);
	else
		ctl_printf(o, " %s %llusec", key, (unsigned long long)s);
}

void cmd_addr6_show_port(struct daemon *d, uint16_t port, struct ctl_out *o)
{
	uint64_t now = addrconf_run_now_ms();
	for (unsigned k = 0; k < NETCFG_MAX_ADDRS6; k++) {
		const struct netcfg_addr6 *a = &d->master.addrs6[k];
		if (!a->used || a->port != port)
			continue;
		char ip[48];
		ip6_addr_format(&a->addr, ip, sizeof(ip));
		const char *scope = ip6_is_link_local(&a->addr) ? "link" : "global";
		const char *state = addr6_state(a->flags);
		const struct addrconf_addr *ac =
			a->flags & NETCFG6_SLAAC ? addrconf_run_addr(d, port, &a->addr) : NULL;
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "family", "inet6");
			json_str(o, "local", ip);
			json_u64(o, "prefixlen", a->plen);
			json_str(o, "scope", scope);
			if (a->flags & NETCFG6_SYNCED)
				json_str(o, "origin", "kernel-sync");
			if (a->flags & NETCFG6_SLAAC)
				json_str(o, "origin", "slaac");
			json_str(o, "state", state != NULL ? state : "preferred");
		} else {
			ctl_printf(o, "    inet6 %s/%u scope %s%s%s%s%s", ip, a->plen, scope,
				   a->flags & NETCFG6_SYNCED ? " synced" : "",
				   a->flags & NETCFG6_SLAAC ? " dynamic" : "",
				   state != NULL ? " " : "", state != NULL ? state : "");
		}
		if (ac != NULL) {
			addr6_lifetime(o, "valid_lft", ac->valid_until, now);
			addr6_lifetime(o, "preferred_lft", ac->preferred_until, now);
		}
		if (o->json)
			json_obj_end(o);
		else
			ctl_printf(o, "\n");
	}
}

static int route6_parse_prefix(const char *s, struct ip6_addr *prefix, uint8_t *plen,
			       struct ctl_out *o)
{
	if (strcmp(s, "default") == 0) {
		*prefix = (struct ip6_addr){{0}};
		*plen = 0;
		return 0;
	}
	if (ip6_prefix_parse(s, prefix, plen) != 0)
		return ctl_error(o, "'%s' is not an IPv6 prefix", s);
	struct ip6_addr net = *prefix;
	ip6_prefix_mask(&net, *plen);
	if (!ip6_addr_equal(&net, prefix)) {
		char text[48];
		ip6_addr_format(&net, text, sizeof(text));
		return ctl_error(o, "'%s' has host bits set (did you mean %s/%u?)", s, text, *plen);
	}
	return 0;
}

static int route6_add_on(struct netcfg *c, void *arg)
{
	return netcfg6_route_add(c, arg);
}

int cmd_route6_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct route6 r = {.type = ROUTE_CONNECTED, .port = NETCFG_PORT_ANY};
	int i = 0;
	if (argc >= 1 && strcmp(argv[0], "blackhole") == 0) {
		r.type = ROUTE_BLACKHOLE;
		i++;
	} else if (argc >= 1 && strcmp(argv[0], "unreachable") == 0) {
		r.type = ROUTE_UNREACHABLE;
		i++;
	}
	if (i >= argc || route6_parse_prefix(argv[i++], &r.prefix, &r.plen, o) != 0)
		return -1;
	bool special = r.type != ROUTE_CONNECTED;
	for (; i < argc; i += 2) {
		if (i + 1 >= argc || special)
			return -1;
		const char *key = argv[i], *val = argv[i + 1];
		uint32_t v;
		if (strcmp(key, "via") == 0) {
			if (ip6_addr_parse(val, &r.gateway) != 0)
				return ctl_error(o, "'%s' is not an IPv6 address", val);
			if (ip6_is_multicast(&r.gateway) || ip6_is_unspecified(&r.gateway))
				return ctl_error(o, "gateway %s is not a unicast address", val);
			r.type = ROUTE_GATEWAY;
		} else if (strcmp(key, "dev") == 0) {
			if (cmd_parse_port(d, val, &r.port, o) != 0)
				return -1;
		} else if (strcmp(key, "mtu") == 0) {
			if (cmd_parse_u32(val, IP6_MIN_MTU, NETCFG_MAX_MTU, &v, "mtu", o) != 0)
				return -1;
			r.mtu = (uint16_t)v;
		} else if (strcmp(key, "src") == 0) {
			if (ip6_addr_parse(val, &r.src) != 0)
				return ctl_error(o, "'%s' is not an IPv6 address", val);
			const struct netcfg_addr6 *a =
				netcfg6_local(&d->master, NETCFG_PORT_ANY, &r.src);
			if (a == NULL || ip6_is_link_local(&r.src))
				return ctl_error(o, "src %s is not one of our global addresses", val);
		} else {
			return ctl_error(o, "unknown route option '%s'", key);
		}
	}
	if (r.type == ROUTE_CONNECTED && r.port == NETCFG_PORT_ANY)
		return ctl_error(o, "a route needs 'via GW' or 'dev PORT'");
	int rc = daemon_apply_netcfg(d, route6_add_on, &r);
	if (rc == -ENETUNREACH)
		return ctl_error(o, "ip route add: the gateway is not on a connected prefix%s",
				 ip6_is_link_local(&r.gateway) ? " (a link-local gateway needs "
								 "'dev PORT')" : "");
	if (rc != 0)
		return ctl_error(o, "ip route add: %s", cmd_strerror(-rc));
	return 0;
}

struct route6_key {
	struct ip6_addr prefix;
	uint8_t plen;
};

static int route6_del_on(struct netcfg *c, void *arg)
{
	struct route6_key *k = arg;
	return netcfg6_route_del(c, &k->prefix, k->plen);
}

/* rtm_protocol's RTPROT_RA: what Linux marks a route learnt from an advertisement with. */
#define ROUTE6_PROTO_RA 9

int cmd_route6_ra(struct daemon *d, uint16_t port, const struct ip6_addr *gw, bool present)
{
	struct route6 r = {.type = ROUTE_GATEWAY, .gateway = *gw, .port = port,
			   .proto = ROUTE6_PROTO_RA};
	if (present)
		return daemon_apply_netcfg(d, route6_add_on, &r);
	/* Only the route the advertisement made: an operator's default stays. */
	const struct route6 *cur = route6_find(d->master.routes6, &r.prefix, 0);
	if (cur == NULL || cur->proto != ROUTE6_PROTO_RA || !ip6_addr_equal(&cur->gateway, gw) ||
	    cur->port != port)
		return -ESRCH;
	struct route6_key k = {.plen = 0};
	return daemon_apply_netcfg(d, route6_del_on, &k);
}

int cmd_route6_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 1)
		return -1;
	struct route6_key k;
	if (route6_parse_prefix(argv[0], &k.prefix, &k.plen, o) != 0)
		return -1;
	int rc = daemon_apply_netcfg(d, route6_del_on, &k);
	if (rc != 0)
		return ctl_error(o, "ip route del %s: %s", argv[0], cmd_strerror(-rc));
	return 0;
}

static int route6_show_one(const struct route6 *r, void *arg)
{
	struct daemon *d = ((void **)arg)[0];
	struct ctl_out *o = ((void **)arg)[1];
	char prefix[48], gw[48], src[48];
	ip6_addr_format(&r->prefix, prefix, sizeof(prefix));
	ip6_addr_format(&r->gateway, gw, sizeof(gw));
	ip6_addr_format(&r->src, src, sizeof(src));
	struct route_print p = {.type = r->type, .prefix = prefix, .plen = r->plen,
				.host_plen = 128, .gateway = gw,
				.dev = d->master.ifaces[r->port].name, .from_addr = r->from_addr,
				.synced = r->synced, .proto = r->proto,
				.src = ip6_is_unspecified(&r->src) ? NULL : src, .mtu = r->mtu};
	cmd_route_print(o, &p);
	return 0;
}

int cmd_route6_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	void *ctx[] = {d, o};
	if (o->json)
		json_arr_begin(o, NULL);
	route6_walk(d->master.routes6, route6_show_one, ctx);
	if (o->json)
		json_arr_end(o);
	return 0;
}
