/* ip addr and ip route: iproute2's grammar over the master table and every worker's copy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "dhcp_run.h"
#include "ip6/ip6.h"
#include "rtnl.h"
#include "wire/ipv4.h"

struct addr_op {
	uint16_t port;
	uint32_t addr;
	uint8_t plen;
};

static int addr_add_master(struct netcfg *c, void *arg)
{
	struct addr_op *op = arg;
	return netcfg_addr_add(c, op->port, op->addr, op->plen);
}

static int addr_add_stack(struct stack *s, void *arg)
{
	struct addr_op *op = arg;
	/* One announcement per daemon is enough: worker 0 sends it. */
	return stack_addr_add(s, op->port, op->addr, op->plen, s->id == 0);
}

static int addr_del_master(struct netcfg *c, void *arg)
{
	struct addr_op *op = arg;
	return netcfg_addr_del(c, op->port, op->addr, op->plen);
}

static int addr_del_stack(struct stack *s, void *arg)
{
	struct addr_op *op = arg;
	return stack_addr_del(s, op->port, op->addr, op->plen);
}

int cmd_ip_addr_apply(struct daemon *d, bool add, uint16_t port, uint32_t addr, uint8_t plen)
{
	struct addr_op op = {.port = port, .addr = addr, .plen = plen};
	return add ? daemon_apply(d, addr_add_master, addr_add_stack, &op)
		   : daemon_apply(d, addr_del_master, addr_del_stack, &op);
}

/* ADDR/LEN dev PORT */
static int addr_parse(struct daemon *d, int argc, char **argv, struct addr_op *op,
		      struct ctl_out *o)
{
	if (argc != 3 || strcmp(argv[1], "dev") != 0)
		return -1;
	if (ip4_prefix_parse(argv[0], &op->addr, &op->plen) != 0)
		return ctl_error(o, "'%s' is not an IPv4 address with prefix length", argv[0]);
	return cmd_parse_port(d, argv[2], &op->port, o);
}

int cmd_addr_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc >= 1 && strchr(argv[0], ':') != NULL)
		return cmd_addr6_change(d, true, argc, argv, o);
	struct addr_op op;
	if (addr_parse(d, argc, argv, &op, o) != 0)
		return -1;
	int rc = cmd_ip_addr_apply(d, true, op.port, op.addr, op.plen);
	if (rc == -EINVAL)
		return ctl_error(o, "%s cannot be assigned to a host (network, broadcast, "
				    "multicast, loopback or reserved address)", argv[0]);
	if (rc != 0)
		return ctl_error(o, "ip addr add %s: %s", argv[0], cmd_strerror(-rc));
	return 0;
}

int cmd_addr_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc >= 1 && strchr(argv[0], ':') != NULL)
		return cmd_addr6_change(d, false, argc, argv, o);
	struct addr_op op;
	if (addr_parse(d, argc, argv, &op, o) != 0)
		return -1;
	/* A leased address given up by hand is released to its server, from the address. */
	if (dhcp_run_addr_del(d, op.port, op.addr))
		return 0;
	int rc = cmd_ip_addr_apply(d, false, op.port, op.addr, op.plen);
	if (rc != 0)
		return ctl_error(o, "ip addr del %s dev %s: %s", argv[0], argv[2],
				 cmd_strerror(-rc));
	return 0;
}

int cmd_addr_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	int only;
	if (cmd_parse_dev_filter(d, argc, argv, &only, o) != 0)
		return -1;
	if (o->json)
		json_arr_begin(o, NULL);
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct netcfg_iface *i = &d->master.ifaces[p];
		if (!i->present || (only >= 0 && only != p))
			continue;
		char mac[18];
		eth_addr_format(&i->mac, mac, sizeof(mac));
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "ifname", i->name);
			json_str(o, "address", mac);
			json_u64(o, "mtu", i->mtu);
			json_arr_begin(o, "addr_info");
		} else {
			ctl_printf(o, "%u: %s: mtu %u state %s\n    link/ether %s\n", p, i->name,
				   i->mtu, i->up ? "UP" : "DOWN", mac);
		}
		for (unsigned k = 0; k < NETCFG_MAX_ADDRS; k++) {
			const struct netcfg_addr *a = &d->master.addrs[k];
			if (!a->used || a->port != p)
				continue;
			char ip[16];
			ip4_addr_format(a->addr, ip, sizeof(ip));
			if (o->json) {
				json_obj_begin(o, NULL);
				json_str(o, "family", "inet");
				json_str(o, "local", ip);
				json_u64(o, "prefixlen", a->plen);
				if (a->synced)
					json_str(o, "origin", "kernel-sync");
				cmd_dhcp_addr_show(d, p, a->addr, o);
				json_obj_end(o);
			} else {
				ctl_printf(o, "    inet %s/%u%s", ip, a->plen, a->synced ? " synced" : "");
				cmd_dhcp_addr_show(d, p, a->addr, o);
				ctl_printf(o, "\n");
			}
		}
		cmd_addr6_show_port(d, p, o);
		if (o->json)
			json_arr_end(o);
		cmd_dhcp_port_show(d, p, o);
		if (o->json)
			json_obj_end(o);
	}
	if (o->json)
		json_arr_end(o);
	return 0;
}

static int route_add_on(struct netcfg *c, void *arg)
{
	return netcfg_route_add(c, arg);
}

struct route_key {
	uint32_t prefix;
	uint8_t plen;
};

static int route_del_on(struct netcfg *c, void *arg)
{
	struct route_key *k = arg;
	return netcfg_route_del(c, k->prefix, k->plen);
}

static int route_parse_prefix(const char *s, uint32_t *prefix, uint8_t *plen, struct ctl_out *o)
{
	if (strcmp(s, "default") == 0) {
		*prefix = 0;
		*plen = 0;
		return 0;
	}
	if (ip4_prefix_parse(s, prefix, plen) != 0)
		return ctl_error(o, "'%s' is not an IPv4 prefix", s);
	if ((*prefix & ~ip4_mask(*plen)) != 0) {
		char net[16];
		ip4_addr_format(*prefix & ip4_mask(*plen), net, sizeof(net));
		return ctl_error(o, "'%s' has host bits set (did you mean %s/%u?)", s, net, *plen);
	}
	return 0;
}

int cmd_route_add(struct daemon *d, int argc, char **argv, struct ctl_out *o)
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
	if (strchr(argv[i], ':') != NULL) /* iproute2 takes the family from the prefix */
		return cmd_route6_add(d, argc, argv, o);
	if (route_parse_prefix(argv[i++], &r.prefix, &r.plen, o) != 0)
		return -1;
	bool special = r.type != ROUTE_CONNECTED;
	for (; i < argc; i += 2) {
		if (i + 1 >= argc || special)
			return -1;
		const char *key = argv[i], *val = argv[i + 1];
		uint32_t v;
		if (strcmp(key, "via") == 0) {
			if (ip4_addr_parse(val, &r.gateway) != 0)
				return ctl_error(o, "'%s' is not an IPv4 address", val);
			r.type = ROUTE_GATEWAY;
		} else if (strcmp(key, "dev") == 0) {
			if (cmd_parse_port(d, val, &r.port, o) != 0)
				return -1;
		} else if (strcmp(key, "mtu") == 0) {
			if (cmd_parse_u32(val, NETCFG_MIN_MTU, NETCFG_MAX_MTU, &v, "mtu", o) != 0)
				return -1;
			r.mtu = (uint16_t)v;
		} else if (strcmp(key, "src") == 0) {
			if (ip4_addr_parse(val, &r.src) != 0)
				return ctl_error(o, "'%s' is not an IPv4 address", val);
			if (!netcfg_addr_is_local(&d->master, r.src))
				return ctl_error(o, "src %s is not one of our addresses", val);
		} else {
			return ctl_error(o, "unknown route option '%s'", key);
		}
	}
	if (r.type == ROUTE_CONNECTED && r.port == NETCFG_PORT_ANY)
		return ctl_error(o, "a route needs 'via GW' or 'dev PORT'");
	int rc = daemon_apply_netcfg(d, route_add_on, &r);
	if (rc == -ENETUNREACH)
		return ctl_error(o, "ip route add: the gateway is not on a connected subnet%s",
				 r.port != NETCFG_PORT_ANY ? " of that port" : "");
	if (rc != 0)
		return ctl_error(o, "ip route add: %s", cmd_strerror(-rc));
	return 0;
}

int cmd_route_del(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 1)
		return -1;
	if (strchr(argv[0], ':') != NULL)
		return cmd_route6_del(d, argc, argv, o);
	struct route_key k;
	if (route_parse_prefix(argv[0], &k.prefix, &k.plen, o) != 0)
		return -1;
	int rc = daemon_apply_netcfg(d, route_del_on, &k);
	if (rc != 0)
		return ctl_error(o, "ip route del %s: %s", argv[0], cmd_strerror(-rc));
	return 0;
}

void cmd_route_print(struct ctl_out *o, const struct route_print *p)
{
	/* A synced route carries the kernel route's protocol, by iproute2's name for it. */
	char proto[16];
	const char *name = rtnl_proto_name(p->proto);
	if (name != NULL)
		snprintf(proto, sizeof(proto), "%s", name);
	else
		snprintf(proto, sizeof(proto), "%u", p->proto);
	char dst[64];
	if (p->plen == 0)
		snprintf(dst, sizeof(dst), "default");
	else if (p->plen == p->host_plen)
		snprintf(dst, sizeof(dst), "%s", p->prefix);
	else
		snprintf(dst, sizeof(dst), "%s/%u", p->prefix, p->plen);
	bool has_dev = p->type != ROUTE_BLACKHOLE && p->type != ROUTE_UNREACHABLE;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "type", route_type_str(p->type));
		json_str(o, "dst", dst);
		if (p->type == ROUTE_GATEWAY)
			json_str(o, "gateway", p->gateway);
		if (has_dev)
			json_str(o, "dev", p->dev);
		if (p->from_addr)
			json_str(o, "protocol", "kernel"); /* iproute2's name: made by an address */
		else if (p->synced || p->proto != 0) /* a user's is 0; an RA's "ra" */
			json_str(o, "protocol", proto);
		if (p->synced) /* the user's routes have neither, an address's proto kernel */
			json_str(o, "origin", "kernel-sync");
		if (p->src != NULL)
			json_str(o, "prefsrc", p->src);
		if (p->mtu != 0)
			json_u64(o, "mtu", p->mtu);
		json_obj_end(o);
		return;
	}
	switch (p->type) {
	case ROUTE_LOCAL:
	case ROUTE_BROADCAST:
	case ROUTE_BLACKHOLE:
	case ROUTE_UNREACHABLE:
		ctl_printf(o, "%s %s", route_type_str(p->type), dst);
		break;
	case ROUTE_GATEWAY:
		ctl_printf(o, "%s via %s", dst, p->gateway);
		break;
	default:
		ctl_printf(o, "%s", dst);
		break;
	}
	if (has_dev)
		ctl_printf(o, " dev %s", p->dev);
	if (p->from_addr)
		ctl_printf(o, " proto kernel");
	else if (p->synced || p->proto != 0)
		ctl_printf(o, " proto %s", proto);
	if (p->type == ROUTE_CONNECTED)
		ctl_printf(o, " scope link");
	if (p->src != NULL)
		ctl_printf(o, " src %s", p->src);
	if (p->mtu != 0)
		ctl_printf(o, " mtu %u", p->mtu);
	ctl_printf(o, "\n");
}

static int route_show_one(const struct route *r, void *arg)
{
	struct daemon *d = ((void **)arg)[0];
	struct ctl_out *o = ((void **)arg)[1];
	char prefix[16], gw[16], src[16];
	ip4_addr_format(r->prefix, prefix, sizeof(prefix));
	ip4_addr_format(r->gateway, gw, sizeof(gw));
	ip4_addr_format(r->src, src, sizeof(src));
	struct route_print p = {.type = r->type, .prefix = prefix, .plen = r->plen,
				.host_plen = 32, .gateway = gw,
				.dev = d->master.ifaces[r->port].name, .from_addr = r->from_addr,
				.synced = r->synced, .proto = r->proto,
				.src = r->src != 0 ? src : NULL, .mtu = r->mtu};
	cmd_route_print(o, &p);
	return 0;
}

int cmd_route_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	void *ctx[] = {d, o};
	if (o->json)
		json_arr_begin(o, NULL);
	route_walk(d->master.routes, route_show_one, ctx);
	if (o->json)
		json_arr_end(o);
	return 0;
}

static int forwarding_on(struct netcfg *c, void *arg)
{
	c->forwarding = *(bool *)arg;
	return 0;
}

/* ip forwarding [on | off]: router (default) or host. */
int cmd_ip_forwarding(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc == 0) {
		if (o->json) {
			json_obj_begin(o, NULL);
			json_bool(o, "forwarding", d->master.forwarding);
			json_obj_end(o);
		} else {
			ctl_printf(o, "forwarding %s\n", d->master.forwarding ? "on" : "off");
		}
		return 0;
	}
	if (argc != 1 || (strcmp(argv[0], "on") != 0 && strcmp(argv[0], "off") != 0))
		return -1;
	bool on = strcmp(argv[0], "on") == 0;
	return daemon_apply_netcfg(d, forwarding_on, &on);
}

/* A stack's reassembly table of one family. */
static struct reass *reass_of(const struct stack *s, bool v6)
{
	return v6 ? s->ip6->reass : s->reass;
}

struct reass_timeout_arg {
	uint32_t ms;
	bool v6;
};

static int reass_timeout_on_stack(struct stack *s, void *arg)
{
	const struct reass_timeout_arg *a = arg;
	return reass_set_timeout(reass_of(s, a->v6), a->ms);
}

/* ip [-6] reassembly [timeout-ms N]: show or set a family's reassembly timeout (RFC 791
 * suggests a 15 s lower bound for its timer, RFC 8200 §4.5 gives IPv6 60 s; Linux uses 30 s
 * and 60 s, our defaults). */
static int reassembly(struct daemon *d, int argc, char **argv, struct ctl_out *o, bool v6)
{
	if (argc == 0 && d->dry_run)
		return 0;
	if (argc == 0) {
		uint32_t ms = reass_timeout(reass_of(d->workers[0].stack, v6));
		if (o->json) {
			json_obj_begin(o, NULL);
			json_u64(o, "timeout-ms", ms);
			json_obj_end(o);
		} else {
			ctl_printf(o, "timeout-ms %u\n", ms);
		}
		return 0;
	}
	struct reass_timeout_arg a = {.v6 = v6};
	if (argc != 2 || strcmp(argv[0], "timeout-ms") != 0)
		return -1;
	if (cmd_parse_u32(argv[1], 1, 3600000, &a.ms, "timeout-ms", o) != 0)
		return -1;
	return daemon_each_worker(d, reass_timeout_on_stack, &a);
}

int cmd_ip_reassembly(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return reassembly(d, argc, argv, o, false);
}

int cmd_ip6_reassembly(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return reassembly(d, argc, argv, o, true);
}
