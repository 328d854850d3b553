/* ip addr for IPv6: iproute2's grammar (an address with a colon where cmd_ip.c takes one)
 * over the master table and every worker's copy. */
#include <errno.h>
#include <string.h>

#include "addrconf_run.h"
#include "cmd.h"
#include "dhcp_run.h"
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
	uint64_t now = dhcp_run_now_ms();
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
