/* `ip -6 autoconf` and `ip -6 dad-transmits`: the per-port switches of IPv6
 * autoconfiguration (addrconf_run.h) and its state. */
#include <string.h>

#include "addrconf_run.h"
#include "cmd.h"
#include "dhcp_run.h"
#include "ip6/ip6.h"

struct autoconf_op {
	uint16_t port;
	bool on;
};

static int autoconf_on_worker(struct stack *s, void *arg)
{
	const struct autoconf_op *op = arg;
	s->ip6->autoconf[op->port] = op->on;
	return 0;
}

static void autoconf_show_port(struct daemon *d, const struct addrconf_port *p,
			       struct ctl_out *o)
{
	uint64_t now = dhcp_run_now_ms();
	char router[48] = "";
	if (p->router_present)
		ip6_addr_format(&p->router, router, sizeof(router));
	uint64_t router_left_s = p->router_present && p->router_until > now
					 ? (p->router_until - now) / 1000 : 0;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "dev", d->master.ifaces[p->port].name);
		json_bool(o, "autoconf", p->autoconf);
		json_u64(o, "dad_transmits", p->dad_transmits);
		if (p->router_present) {
			json_str(o, "router", router);
			json_u64(o, "router_lifetime_s", router_left_s);
		}
		json_u64(o, "mtu", p->mtu);
		json_u64(o, "hop_limit", p->hop_limit);
		json_u64(o, "mld_version", p->mld_version);
		json_obj_begin(o, "counters");
		for (unsigned c = 0; c < ADDRCONF_C_COUNT; c++)
			json_u64(o, addrconf_counter_str(c), p->counters[c]);
		json_obj_end(o);
		json_obj_end(o);
		return;
	}
	ctl_printf(o, "%s: autoconf %s dad-transmits %u mld v%u", d->master.ifaces[p->port].name,
		   p->autoconf ? "on" : "off", p->dad_transmits, p->mld_version);
	if (p->router_present)
		ctl_printf(o, " router %s lifetime %llus", router,
			   (unsigned long long)router_left_s);
	if (p->mtu != 0)
		ctl_printf(o, " mtu %u", p->mtu);
	if (p->hop_limit != 0)
		ctl_printf(o, " hoplimit %u", p->hop_limit);
	ctl_printf(o, "\n   ");
	for (unsigned c = 0; c < ADDRCONF_C_COUNT; c++)
		ctl_printf(o, " %s %llu", addrconf_counter_str(c),
			   (unsigned long long)p->counters[c]);
	ctl_printf(o, "\n");
}

/* ip -6 autoconf [show] | ip -6 autoconf { on | off } dev PORT */
int cmd_ip6_autoconf(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc == 0 || (argc == 1 && strcmp(argv[0], "show") == 0)) {
		if (d->dry_run)
			return 0;
		if (o->json)
			json_arr_begin(o, NULL);
		for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++)
			if (addrconf_run_port(d, p) != NULL)
				autoconf_show_port(d, addrconf_run_port(d, p), o);
		if (o->json)
			json_arr_end(o);
		return 0;
	}
	if (argc != 3 || (strcmp(argv[0], "on") != 0 && strcmp(argv[0], "off") != 0) ||
	    strcmp(argv[1], "dev") != 0)
		return -1;
	struct autoconf_op op = {.on = strcmp(argv[0], "on") == 0};
	if (cmd_parse_port(d, argv[2], &op.port, o) != 0)
		return -1;
	struct addrconf_port *p = addrconf_run_port(d, op.port);
	if (d->dry_run || p == NULL)
		return 0;
	/* Workers hand advertisements over only once the machine wants them. */
	addrconf_set_autoconf(p, dhcp_run_now_ms(), op.on);
	return daemon_each_worker(d, autoconf_on_worker, &op);
}

/* ip -6 dad-transmits N dev PORT */
int cmd_ip6_dad_transmits(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 3 || strcmp(argv[1], "dev") != 0)
		return -1;
	uint32_t n;
	uint16_t port;
	if (cmd_parse_u32(argv[0], 0, ADDRCONF_MAX_DAD_TRANSMITS, &n, "dad-transmits", o) != 0 ||
	    cmd_parse_port(d, argv[2], &port, o) != 0)
		return -1;
	struct addrconf_port *p = addrconf_run_port(d, port);
	if (p != NULL)
		addrconf_set_dad_transmits(p, dhcp_run_now_ms(), (uint8_t)n);
	return 0;
}
