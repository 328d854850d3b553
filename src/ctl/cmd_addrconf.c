/* `ip -6 autoconf`, `ip -6 dad-transmits`, `ip -6 addrgen` and `ip -6 stable-secret`: the
 * switches of IPv6 autoconfiguration (addrconf_run.h), and its state with the Default Router
 * List and the redirected destinations. */
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

static const char *pref_str(int8_t pref)
{
	return pref > 0 ? "high" : pref < 0 ? "low" : "medium";
}

static uint64_t seconds_left(uint64_t until, uint64_t now)
{
	return until > now ? (until - now) / 1000 : 0;
}

/* The Default Router List, the chosen one marked, with what the neighbour caches said. */
static void autoconf_show_routers(const struct addrconf_port *p, uint64_t now,
				  struct ctl_out *o)
{
	if (o->json)
		json_arr_begin(o, "routers");
	for (unsigned i = 0; i < ADDRCONF_MAX_ROUTERS; i++) {
		const struct addrconf_router *r = &p->routers[i];
		if (!r->used)
			continue;
		char text[48];
		ip6_addr_format(&r->addr, text, sizeof(text));
		bool chosen = p->router_present && ip6_addr_equal(&p->router, &r->addr);
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "addr", text);
			json_u64(o, "lifetime_s", seconds_left(r->until, now));
			json_str(o, "preference", pref_str(r->pref));
			json_bool(o, "reachable", !r->unreachable);
			json_bool(o, "default", chosen);
			json_obj_end(o);
		} else {
			ctl_printf(o, "    router %s lifetime %llus preference %s%s%s\n", text,
				   (unsigned long long)seconds_left(r->until, now), pref_str(r->pref),
				   r->unreachable ? " unreachable" : "", chosen ? " default" : "");
		}
	}
	if (o->json)
		json_arr_end(o);
}

static void autoconf_show_redirects(const struct addrconf_port *p, uint64_t now,
				    struct ctl_out *o)
{
	if (o->json)
		json_arr_begin(o, "redirects");
	for (unsigned i = 0; i < ADDRCONF_MAX_REDIRECTS; i++) {
		const struct addrconf_redirect *r = &p->redirects[i];
		if (!r->used)
			continue;
		char dst[48], target[48], router[48];
		ip6_addr_format(&r->dst, dst, sizeof(dst));
		ip6_addr_format(&r->target, target, sizeof(target));
		ip6_addr_format(&r->router, router, sizeof(router));
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "dst", dst);
			json_str(o, "target", target);
			json_str(o, "router", router);
			json_u64(o, "lifetime_s", seconds_left(r->until, now));
			json_obj_end(o);
		} else {
			ctl_printf(o, "    redirect %s via %s from %s lifetime %llus\n", dst, target,
				   router, (unsigned long long)seconds_left(r->until, now));
		}
	}
	if (o->json)
		json_arr_end(o);
}

static void autoconf_show_port(struct daemon *d, const struct addrconf_port *p,
			       struct ctl_out *o)
{
	uint64_t now = dhcp_run_now_ms();
	char router[48] = "";
	if (p->router_present)
		ip6_addr_format(&p->router, router, sizeof(router));
	if (o->json) {
		json_obj_begin(o, NULL);
		json_str(o, "dev", d->master.ifaces[p->port].name);
		json_bool(o, "autoconf", p->autoconf);
		json_u64(o, "dad_transmits", p->dad_transmits);
		json_str(o, "addrgen", addrconf_addrgen_str(p->addrgen));
		if (p->router_present)
			json_str(o, "router", router);
		autoconf_show_routers(p, now, o);
		autoconf_show_redirects(p, now, o);
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
	ctl_printf(o, "%s: autoconf %s dad-transmits %u addrgen %s mld v%u",
		   d->master.ifaces[p->port].name, p->autoconf ? "on" : "off", p->dad_transmits,
		   addrconf_addrgen_str(p->addrgen), p->mld_version);
	if (p->router_present)
		ctl_printf(o, " router %s", router);
	if (p->mtu != 0)
		ctl_printf(o, " mtu %u", p->mtu);
	if (p->hop_limit != 0)
		ctl_printf(o, " hoplimit %u", p->hop_limit);
	ctl_printf(o, "\n");
	autoconf_show_routers(p, now, o);
	autoconf_show_redirects(p, now, o);
	ctl_printf(o, "   ");
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

/* ip -6 addrgen { eui64 | stable-privacy } dev PORT */
int cmd_ip6_addrgen(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	enum addrconf_addrgen mode;
	uint16_t port;
	if (argc != 3 || strcmp(argv[1], "dev") != 0)
		return -1;
	if (addrconf_addrgen_parse(argv[0], &mode) != 0)
		return ctl_error(o, "addrgen '%s': eui64 or stable-privacy", argv[0]);
	if (cmd_parse_port(d, argv[2], &port, o) != 0)
		return -1;
	struct addrconf_port *p = addrconf_run_port(d, port);
	if (p != NULL)
		addrconf_set_addrgen(p, mode, NULL, NULL);
	return 0;
}

/* ip -6 stable-secret SECRET: 128 bits written as an IPv6 address, as Linux's
 * net.ipv6.conf.*.stable_secret. */
int cmd_ip6_stable_secret(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct ip6_addr secret;
	if (argc != 1)
		return -1;
	if (ip6_addr_parse(argv[0], &secret) != 0)
		return ctl_error(o, "stable-secret '%s': 128 bits written as an IPv6 address "
				 "(e.g. 2b6d:6b0c:91f6:...)", argv[0]);
	addrconf_run_set_secret(d, secret.b);
	return 0;
}
