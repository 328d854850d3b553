/* ip addr, ip forwarding and ip reassembly: iproute2's grammar over the master table and
 * every worker's copy. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "dhcp_run.h"
#include "ip6/ip6.h"
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
