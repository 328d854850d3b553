/* ip addr for IPv6: iproute2's grammar (an address with a colon where cmd_ip.c takes one)
 * over the master table and every worker's copy. */
#include <errno.h>
#include <string.h>

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

int cmd_ip6_addr_apply(struct daemon *d, bool add, uint16_t port, const struct ip6_addr *addr,
		       uint8_t plen, uint8_t flags)
{
	struct addr6_op op = {.port = port, .addr = *addr, .plen = plen, .flags = flags};
	return daemon_apply_netcfg(d, add ? addr6_add_on : addr6_del_on, &op);
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

void cmd_addr6_show_port(struct daemon *d, uint16_t port, struct ctl_out *o)
{
	for (unsigned k = 0; k < NETCFG_MAX_ADDRS6; k++) {
		const struct netcfg_addr6 *a = &d->master.addrs6[k];
		if (!a->used || a->port != port)
			continue;
		char ip[48];
		ip6_addr_format(&a->addr, ip, sizeof(ip));
		const char *scope = ip6_is_link_local(&a->addr) ? "link" : "global";
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "family", "inet6");
			json_str(o, "local", ip);
			json_u64(o, "prefixlen", a->plen);
			json_str(o, "scope", scope);
			if (a->flags & NETCFG6_SYNCED)
				json_str(o, "origin", "kernel-sync");
			json_obj_end(o);
		} else {
			ctl_printf(o, "    inet6 %s/%u scope %s%s\n", ip, a->plen, scope,
				   a->flags & NETCFG6_SYNCED ? " synced" : "");
		}
	}
}
