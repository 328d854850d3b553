/* ip route add|del|show and ip -6 route add|del|show: iproute2's grammar over the master
 * table and every worker's copy, one parser for both families (the family comes from
 * `-6`, or from a prefix with a colon as iproute2 takes it). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "rtnl.h"
#include "stack/netcfg6.h"
#include "wire/ipv4.h"

/* The family's number in messages: "IPv4", "IPv6". */
static int family_version(bool v6)
{
	return v6 ? 6 : 4;
}

static int addr_parse(const char *s, bool v6, struct inet_addr *out, struct ctl_out *o)
{
	uint32_t a4;
	struct ip6_addr a6;
	if (v6 ? ip6_addr_parse(s, &a6) != 0 : ip4_addr_parse(s, &a4) != 0)
		return ctl_error(o, "'%s' is not an IPv%d address", s, family_version(v6));
	*out = v6 ? inet_addr_v6(&a6) : inet_addr_v4(a4);
	return 0;
}

/* PREFIX/LEN, an address (a host route) or `default`; host bits must be zero. */
static int prefix_parse(const char *s, bool v6, struct inet_addr *prefix, uint8_t *plen,
			struct ctl_out *o)
{
	if (strcmp(s, "default") == 0) {
		*prefix = v6 ? (struct inet_addr){{0}} : inet_addr_v4(0);
		*plen = 0;
		return 0;
	}
	uint32_t a4;
	struct ip6_addr a6;
	if (v6 ? ip6_prefix_parse(s, &a6, plen) != 0 : ip4_prefix_parse(s, &a4, plen) != 0)
		return ctl_error(o, "'%s' is not an IPv%d prefix", s, family_version(v6));
	if (v6 && ip6_is_v4mapped(&a6))
		return ctl_error(o, "'%s' is an IPv4-mapped prefix: route IPv4 with 'ip route'", s);
	*prefix = v6 ? inet_addr_v6(&a6) : inet_addr_v4(a4);
	if (!route_prefix_valid(prefix, *plen)) {
		if (v6)
			ip6_prefix_mask(&a6, *plen);
		struct inet_addr net = v6 ? inet_addr_v6(&a6) : inet_addr_v4(a4 & ip4_mask(*plen));
		char text[INET_ADDR_TEXT_LEN];
		return ctl_error(o, "'%s' has host bits set (did you mean %s/%u?)", s,
				 inet_addr_format(&net, text, sizeof(text)), *plen);
	}
	return 0;
}

static bool addr_is_unicast(const struct inet_addr *a)
{
	if (inet_addr_is_v4(a)) {
		uint32_t v = inet_addr_to_v4(a);
		return v != 0 && !ip4_is_multicast(v) && !ip4_is_limited_broadcast(v);
	}
	struct ip6_addr v = inet_addr_to_v6(a);
	return !ip6_is_multicast(&v) && !ip6_is_unspecified(&v);
}

/* A preferred source must be one of our addresses; an IPv6 one global (a link-local
 * source is chosen by scope, RFC 6724, never for a route). */
static int src_check(struct daemon *d, const struct inet_addr *src, const char *text,
		     struct ctl_out *o)
{
	if (inet_addr_is_v4(src)) {
		if (!netcfg_addr_is_local(&d->master, inet_addr_to_v4(src)))
			return ctl_error(o, "src %s is not one of our addresses", text);
		return 0;
	}
	struct ip6_addr a = inet_addr_to_v6(src);
	if (netcfg6_local(&d->master, NETCFG_PORT_ANY, &a) == NULL || ip6_is_link_local(&a))
		return ctl_error(o, "src %s is not one of our global addresses", text);
	return 0;
}

/* The options after the prefix: via GW, dev PORT, mtu N, src ADDR (none for the blackhole
 * and unreachable types). */
static int route_options_parse(struct daemon *d, bool v6, int argc, char **argv,
			       struct route *r, struct ctl_out *o)
{
	bool special = r->type != ROUTE_CONNECTED;
	uint32_t min_mtu = v6 ? IP6_MIN_MTU : NETCFG_MIN_MTU;
	for (int i = 0; i < argc; i += 2) {
		if (i + 1 >= argc || special)
			return -1;
		const char *key = argv[i], *val = argv[i + 1];
		uint32_t v;
		if (strcmp(key, "via") == 0) {
			if (addr_parse(val, v6, &r->gateway, o) != 0)
				return -1;
			if (!addr_is_unicast(&r->gateway))
				return ctl_error(o, "gateway %s is not a unicast address", val);
			r->type = ROUTE_GATEWAY;
		} else if (strcmp(key, "dev") == 0) {
			if (cmd_parse_port(d, val, &r->port, o) != 0)
				return -1;
		} else if (strcmp(key, "mtu") == 0) {
			if (cmd_parse_u32(val, min_mtu, NETCFG_MAX_MTU, &v, "mtu", o) != 0)
				return -1;
			r->mtu = (uint16_t)v;
		} else if (strcmp(key, "src") == 0) {
			if (addr_parse(val, v6, &r->src, o) != 0 || src_check(d, &r->src, val, o) != 0)
				return -1;
		} else {
			return ctl_error(o, "unknown route option '%s'", key);
		}
	}
	if (r->type == ROUTE_CONNECTED && r->port == NETCFG_PORT_ANY)
		return ctl_error(o, "a route needs 'via GW' or 'dev PORT'");
	return 0;
}

static int route_add_on(struct netcfg *c, void *arg)
{
	return netcfg_route_add(c, arg);
}

/* [blackhole | unreachable] PREFIX [options] */
static int route_change_add(struct daemon *d, bool v6, int argc, char **argv, struct ctl_out *o)
{
	struct route r = {.type = ROUTE_CONNECTED, .port = NETCFG_PORT_ANY};
	int i = 0;
	if (argc >= 1 && strcmp(argv[0], "blackhole") == 0) {
		r.type = ROUTE_BLACKHOLE;
		i++;
	} else if (argc >= 1 && strcmp(argv[0], "unreachable") == 0) {
		r.type = ROUTE_UNREACHABLE;
		i++;
	}
	if (i >= argc)
		return -1;
	v6 = v6 || strchr(argv[i], ':') != NULL;
	if (prefix_parse(argv[i], v6, &r.prefix, &r.plen, o) != 0 ||
	    route_options_parse(d, v6, argc - i - 1, argv + i + 1, &r, o) != 0)
		return -1;
	int rc = daemon_apply_netcfg(d, route_add_on, &r);
	if (rc == -ENETUNREACH) {
		struct ip6_addr gw = inet_addr_to_v6(&r.gateway);
		const char *hint = v6 && ip6_is_link_local(&gw) ? " (a link-local gateway needs "
								  "'dev PORT')"
				   : r.port != NETCFG_PORT_ANY ? " of that port" : "";
		return ctl_error(o, "ip route add: the gateway is not on a connected %s%s",
				 v6 ? "prefix" : "subnet", hint);
	}
	if (rc != 0)
		return ctl_error(o, "ip route add: %s", cmd_strerror(-rc));
	return 0;
}

struct route_key {
	struct inet_addr prefix;
	uint8_t plen;
};

static int route_del_on(struct netcfg *c, void *arg)
{
	struct route_key *k = arg;
	return netcfg_route_del(c, &k->prefix, k->plen);
}

static int route_change_del(struct daemon *d, bool v6, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 1)
		return -1;
	struct route_key k;
	if (prefix_parse(argv[0], v6 || strchr(argv[0], ':') != NULL, &k.prefix, &k.plen, o) != 0)
		return -1;
	int rc = daemon_apply_netcfg(d, route_del_on, &k);
	if (rc != 0)
		return ctl_error(o, "ip route del %s: %s", argv[0], cmd_strerror(-rc));
	return 0;
}

/* One route as `ip route show` prints it: iproute2's words, or a JSON object. */
static void route_print(struct ctl_out *o, const struct route *r, const char *dev)
{
	char prefix[INET_ADDR_TEXT_LEN], gw[INET_ADDR_TEXT_LEN], src[INET_ADDR_TEXT_LEN];
	char dst[INET_ADDR_TEXT_LEN + 4];
	inet_addr_format(&r->prefix, prefix, sizeof(prefix));
	if (r->plen == 0)
		snprintf(dst, sizeof(dst), "default");
	else if (r->plen == route_host_plen(&r->prefix))
		snprintf(dst, sizeof(dst), "%s", prefix);
	else
		snprintf(dst, sizeof(dst), "%s/%u", prefix, r->plen);
	inet_addr_format(&r->gateway, gw, sizeof(gw));
	bool has_src = route_src_set(r);
	if (has_src)
		inet_addr_format(&r->src, src, sizeof(src));
	bool has_dev = r->type != ROUTE_BLACKHOLE && r->type != ROUTE_UNREACHABLE;
	/* A synced route carries the kernel route's protocol, by iproute2's name for it; one
	 * learnt from a Router Advertisement is "ra" (src/ctl/addrconf_run.c). */
	char proto[16];
	const char *name = rtnl_proto_name(r->proto);
	if (name != NULL)
		snprintf(proto, sizeof(proto), "%s", name);
	else
		snprintf(proto, sizeof(proto), "%u", r->proto);
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "type", route_type_str(r->type));
		json_str(o, "dst", dst);
		if (r->type == ROUTE_GATEWAY)
			json_str(o, "gateway", gw);
		if (has_dev)
			json_str(o, "dev", dev);
		if (r->from_addr)
			json_str(o, "protocol", "kernel"); /* iproute2's name: made by an address */
		else if (r->synced || r->proto != 0) /* a user's is 0; an RA's "ra" */
			json_str(o, "protocol", proto);
		if (r->synced) /* the user's routes have neither, an address's proto kernel */
			json_str(o, "origin", "kernel-sync");
		if (has_src)
			json_str(o, "prefsrc", src);
		if (r->mtu != 0)
			json_u64(o, "mtu", r->mtu);
		json_obj_end(o);
		return;
	}
	switch (r->type) {
	case ROUTE_LOCAL:
	case ROUTE_BROADCAST:
	case ROUTE_BLACKHOLE:
	case ROUTE_UNREACHABLE:
		ctl_printf(o, "%s %s", route_type_str(r->type), dst);
		break;
	case ROUTE_GATEWAY:
		ctl_printf(o, "%s via %s", dst, gw);
		break;
	default:
		ctl_printf(o, "%s", dst);
		break;
	}
	if (has_dev)
		ctl_printf(o, " dev %s", dev);
	if (r->from_addr)
		ctl_printf(o, " proto kernel");
	else if (r->synced || r->proto != 0)
		ctl_printf(o, " proto %s", proto);
	if (r->type == ROUTE_CONNECTED)
		ctl_printf(o, " scope link");
	if (has_src)
		ctl_printf(o, " src %s", src);
	if (r->mtu != 0)
		ctl_printf(o, " mtu %u", r->mtu);
	ctl_printf(o, "\n");
}

struct route_show {
	struct daemon *d;
	struct ctl_out *o;
	bool v6;
};

static int route_show_one(const struct route *r, void *arg)
{
	struct route_show *sh = arg;
	if (route_is_v4(r) == !sh->v6)
		route_print(sh->o, r, sh->d->master.ifaces[r->port].name);
	return 0;
}

static int route_show(struct daemon *d, bool v6, int argc, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	struct route_show sh = {.d = d, .o = o, .v6 = v6};
	if (o->json)
		json_arr_begin(o, NULL);
	route_walk(d->master.routes, route_show_one, &sh);
	if (o->json)
		json_arr_end(o);
	return 0;
}

int cmd_route_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_change_add(d, false, argc, argv, o);
}

int cmd_route6_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_change_add(d, true, argc, argv, o);
}

int cmd_route_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_change_del(d, false, argc, argv, o);
}

int cmd_route6_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_change_del(d, true, argc, argv, o);
}

int cmd_route_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_show(d, false, argc, o);
}

int cmd_route6_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return route_show(d, true, argc, o);
}
