#include "cmd.h"
#include "addrconf_run.h"
#include "cmd_words.h"
#include "wire/ipv4.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cmd {
	const char *words;      /* space-separated words that select the command */
	cmd_handler *fn;
	const char *usage;      /* NULL: an alias, not listed in help */
};

static const struct cmd cmds[] = {
	{"help", cmd_help, "help"},
	{"link show", cmd_link_show, "link show [PORT]"},
	{"link set", cmd_link_set, "link set PORT { mtu N | up | down | offload on|off | gro on|off | kernel IFNAME }"},
	{"link", cmd_link_show, NULL},
	{"ip addr add", cmd_addr_add, "ip addr add ADDR/LEN dev PORT (IPv4 or IPv6)"},
	{"ip addr del", cmd_addr_del, "ip addr del ADDR/LEN dev PORT (IPv4 or IPv6)"},
	{"ip addr show", cmd_addr_show, "ip addr show [dev PORT]"},
	{"ip addr dhcp", cmd_addr_dhcp,
	 "ip addr dhcp [del] dev PORT (a DHCP client: the lease's address, router and MTU)"},
	{"ip addr", cmd_addr_show, NULL},
	{"ip route add", cmd_route_add,
	 "ip route add { PREFIX | default } [via GW] [dev PORT] [mtu N] [src ADDR]"},
	{"ip route add blackhole", cmd_route_add, "ip route add { blackhole | unreachable } PREFIX"},
	{"ip route del", cmd_route_del, "ip route del { PREFIX | default }"},
	{"ip route show", cmd_route_show, "ip route show"},
	{"ip route", cmd_route_show, NULL},
	{"ip -6 route add", cmd_route6_add,
	 "ip -6 route add { PREFIX | default } [via GW] [dev PORT] [mtu N] [src ADDR]"},
	{"ip -6 route add blackhole", cmd_route6_add,
	 "ip -6 route add { blackhole | unreachable } PREFIX"},
	{"ip -6 route del", cmd_route6_del, "ip -6 route del { PREFIX | default }"},
	{"ip -6 route show", cmd_route6_show, "ip -6 route show"},
	{"ip -6 route", cmd_route6_show, NULL},
	{"ip -6 reassembly", cmd_ip6_reassembly, "ip -6 reassembly [timeout-ms N]"},
	{"ip -6 forwarding", cmd_ip6_forwarding, "ip -6 forwarding [on | off]"},
	{"ip -6 autoconf", cmd_ip6_autoconf,
	 "ip -6 autoconf [show] | ip -6 autoconf { on | off } dev PORT (SLAAC, RFC 4862)"},
	{"ip -6 dad-transmits", cmd_ip6_dad_transmits,
	 "ip -6 dad-transmits N dev PORT (duplicate address probes, 0 disables; default 1)"},
	{"ip -6 addrgen", cmd_ip6_addrgen,
	 "ip -6 addrgen { eui64 | stable-privacy } dev PORT (SLAAC identifiers; RFC 7217)"},
	{"ip -6 stable-secret", cmd_ip6_stable_secret,
	 "ip -6 stable-secret SECRET (128 bits as an IPv6 address: RFC 7217 secret_key)"},
	{"ip -6 addr show", cmd_addr_show, NULL},
	{"ip -6 addr", cmd_addr_show, NULL},
	{"ip -4 route", cmd_route_show, NULL},
	{"ip forwarding", cmd_ip_forwarding, "ip forwarding [on | off]"},
	{"ip reassembly", cmd_ip_reassembly, "ip reassembly [timeout-ms N]"},
	{"neigh show", cmd_neigh_show, "neigh show [dev PORT]"},
	{"neigh add", cmd_neigh_add, "neigh add ADDR lladdr MAC dev PORT"},
	{"neigh del", cmd_neigh_del, "neigh del ADDR dev PORT"},
	{"neigh flush", cmd_neigh_flush, "neigh flush [dev PORT]"},
	{"neigh params", cmd_neigh_params,
	 "neigh params [{ reachable-ms | delay-ms | retrans-ms | mcast-probes | ucast-probes | "
	 "failed-hold-ms | gc-stale-ms } VALUE]..."},
	{"neigh", cmd_neigh_show, NULL},
	{"stats", cmd_stats_show, "stats"},
	{"sync", cmd_sync, "sync [on | off | show]"},
	{"monitor", cmd_monitor, "monitor [-j] [interval SEC] [count N]"},
	{"lcore show", cmd_lcore_show, "lcore show"},
	{"lcore", cmd_lcore_show, NULL},
	{"sock show", cmd_sock_show, "sock show [tcp | udp]"},
	{"sock", cmd_sock_show, NULL},
	{"ping", cmd_ping,
	 "ping [-6] ADDR [dev PORT] [count N] [size BYTES] [interval-ms N] [timeout-ms N]"},
	{"service add", cmd_service_add,
	 "service add { echo | discard | chargen | http | iperf3 } { tcp | udp } PORT "
	 "[size BYTES] [backlog N]"},
	{"service del", cmd_service_del, "service del { tcp | udp } PORT"},
	{"service show", cmd_service_show, "service show"},
	{"service", cmd_service_show, NULL},
	{"tcp params", cmd_tcp_params,
	 "tcp params [{ syn-retries | synack-retries | retries | rto-min-ms | delack-ms | "
	 "fin-timeout-ms | time-wait-ms | syncookies | max-orphans } N]... "
	 "[cc { cubic | newreno | vegas | bbr }]"},
	{"capture", cmd_capture,
	 "capture PORT [filter EXPR] [count N] [snaplen N] [-w FILE | -] (pcapng; -w is "
	 "dpstackctl's)"},
	{"cluster add", cmd_cluster_add,
	 "cluster add NAME ports PORT[,PORT]... [hash { 5tuple | ip | mac | proto | custom PROG }] "
	 "[consumers N[,N]... [mode { balance | fanout }] [ring N]] [take { all | flow | rest }] "
	 "[bounce PORT [filter PROG]] (consumers attach as NAME@i or NAME@g:i)"},
	{"cluster del", cmd_cluster_del, "cluster del NAME"},
	{"cluster show", cmd_cluster_show, "cluster show"},
	{"cluster", cmd_cluster_show, NULL},
	{"acl add", cmd_acl_add,
	 "acl add [prio N] { permit | deny } [family { ipv4 | ipv6 }] "
	 "[proto { tcp | udp | icmp | icmpv6 | N }] [src PREFIX] [dst PREFIX] [sport P[-P]] "
	 "[dport P[-P]] [flags FLAGS[/MASK]] [dev PORT] [hook { input | forward }[,...]] "
	 "(IPv4 or IPv6 prefixes; without one, both families)"},
	{"acl del", cmd_acl_del, "acl del ID"},
	{"acl flush", cmd_acl_flush, "acl flush"},
	{"acl show", cmd_acl_show, "acl show"},
	{"acl", cmd_acl_show, NULL},
	{"flow add", cmd_flow_add,
	 "flow add [prio N] { drop | steer WORKER | kernel | cluster NAME } [dev PORT] "
	 "[ethertype { ipv4 | arp | ipv6 | N }] [proto { tcp | udp | icmp | icmpv6 | N }] "
	 "[src PREFIX] [dst PREFIX] [sport P[-P]] [dport P[-P]] (IPv4 or IPv6 prefixes)"},
	{"flow del", cmd_flow_del, "flow del ID"},
	{"flow show", cmd_flow_show, "flow show"},
	{"flow", cmd_flow_show, NULL},
	{"bypass add", cmd_bypass_add,
	 "bypass add [family { ipv4 | ipv6 }] [proto { tcp | udp | icmp | icmpv6 | N }] "
	 "[src PREFIX] [dst PREFIX] [sport P[-P]] [dport P[-P]] [flags FLAGS[/MASK]] [dev PORT] "
	 "(to the port's kernel interface)"},
	{"bypass del", cmd_bypass_del, "bypass del ID"},
	{"bypass show", cmd_bypass_show, "bypass show"},
	{"bypass", cmd_bypass_show, NULL},
	{"apps limits", cmd_apps_limits,
	 "apps limits [{ apps-per-user | socks-per-app | socks-per-user | listeners-per-user | "
	 "arena-mb-per-app | arena-mb-per-user | binds-per-app } N]..."},
};

/* No command, or an alias given words its handler refused: blame the word no command
 * continues with ("unknown ip subcommand 'stats'"), not the first. */
static int cmd_blame(int argc, char **argv, struct ctl_out *out)
{
	const char *words[sizeof(cmds) / sizeof(cmds[0])];
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		words[i] = cmds[i].words;
	char msg[512];
	cmd_words_blame(words, sizeof(cmds) / sizeof(cmds[0]), argc, argv, msg, sizeof(msg));
	return ctl_error(out, "%s", msg);
}

int cmd_exec(struct daemon *d, int argc, char **argv, struct ctl_out *out)
{
	if (argc == 0)
		return ctl_error(out, "empty command (try 'help')");
	/* Longest match wins, so "ip route add blackhole" is not taken for "ip route add". */
	const struct cmd *best = NULL;
	int best_n = 0;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int n = cmd_words_match(cmds[i].words, argc, argv);
		if (n > best_n) {
			best = &cmds[i];
			best_n = n;
		}
	}
	if (best == NULL)
		return cmd_blame(argc, argv, out);
	if ((best->fn == cmd_route_add && best_n == 4) || (best->fn == cmd_route6_add && best_n == 5))
		best_n--; /* blackhole/unreachable is the route type, parsed by the handler */
	int rc = best->fn(d, argc - best_n, argv + best_n, out);
	if (rc != 0 && !out->failed) {
		if (best->usage == NULL && argc > best_n)
			cmd_blame(argc, argv, out);
		else
			ctl_error(out, "usage: %s", best->usage ? best->usage : best->words);
	}
	if (out->oom)
		return ctl_error(out, "out of memory");
	return rc != 0 ? -1 : 0;
}

int cmd_help(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	if (argc != 0)
		return -1;
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmds[i].usage != NULL)
			ctl_printf(o, "%s\n", cmds[i].usage);
	return 0;
}

/* The monitor is dpstackctl's loop over `stats -j` (tools/dpstackctl/monitor.c); listed
 * here so that `help` shows it, answered here when a client sends it as one command. */
int cmd_monitor(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	return ctl_error(o, "'monitor' runs in dpstackctl: dpstackctl monitor [-j] [interval SEC] "
			    "[count N]");
}

int cmd_parse_port(struct daemon *d, const char *name, uint16_t *port, struct ctl_out *o)
{
	int p = netcfg_iface_by_name(&d->master, name);
	if (p < 0)
		return ctl_error(o, "no port named '%s'", name);
	*port = (uint16_t)p;
	return 0;
}

int cmd_parse_dev_filter(struct daemon *d, int argc, char **argv, int *port, struct ctl_out *o)
{
	*port = -1;
	if (argc == 0)
		return 0;
	if (argc != 2 || strcmp(argv[0], "dev") != 0)
		return -1;
	uint16_t p = 0;
	if (cmd_parse_port(d, argv[1], &p, o) != 0)
		return -1;
	*port = p;
	return 0;
}

int cmd_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out, const char *what,
		  struct ctl_out *o)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno != 0 || v < min || v > max)
		return ctl_error(o, "%s must be a number from %u to %u, not '%s'", what, min, max,
				 s);
	*out = (uint32_t)v;
	return 0;
}

uint64_t cmd_drop_total(const struct daemon *d, enum stack_drop reason)
{
	uint64_t sum = 0;
	for (unsigned w = 0; w < d->nb_workers; w++)
		if (d->workers[w].stack != NULL)        /* none in a dry run (--check-config) */
			sum += d->workers[w].stack->drops[reason];
	return sum;
}

/* "ADDR/LEN" under key. */
static void json_prefix_text(struct ctl_out *o, const char *key, const char *addr, uint8_t len)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%s/%u", addr, len);
	json_str(o, key, buf);
}

void cmd_json_prefix(struct ctl_out *o, const char *key, uint32_t addr, uint8_t len)
{
	char text[16];
	if (len != 0)
		json_prefix_text(o, key, ip4_addr_format(addr, text, sizeof(text)), len);
}

void cmd_json_prefix6(struct ctl_out *o, const char *key, const struct ip6_addr *addr,
		      uint8_t len)
{
	char text[48];
	if (len != 0)
		json_prefix_text(o, key, ip6_addr_format(addr, text, sizeof(text)), len);
}

const char *cmd_strerror(int err)
{
	switch (err) {
	case EEXIST: return "already exists";
	case ENOENT:
	case ESRCH: return "no such entry";
	case EADDRNOTAVAIL: return "address not configured on that port";
	case ENETUNREACH: return "network unreachable (no route)";
	case ENODEV: return "no such port";
	case ENOSPC: return "table full";
	case EINVAL: return "invalid value";
	case EPERM: return "not permitted";
	default: return strerror(err);
	}
}
