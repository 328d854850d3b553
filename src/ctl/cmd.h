/* Control commands: one grammar for the config file and dpstackctl (DESIGN.md). */
#ifndef DPS_CTL_CMD_H
#define DPS_CTL_CMD_H

#include "ctl_out.h"
#include "daemon.h"

/* Runs one command (argv = its words). Returns 0, or -1 with the error message in out. A
 * failed command changes nothing. */
int cmd_exec(struct daemon *d, int argc, char **argv, struct ctl_out *out);

/* Handlers get the words after the command's own words. */
typedef int cmd_handler(struct daemon *d, int argc, char **argv, struct ctl_out *o);

cmd_handler cmd_help;
cmd_handler cmd_monitor;
cmd_handler cmd_link_show, cmd_link_set;
/* `link set PORT kernel IFNAME` (cmd_kernel_if.c). */
int cmd_kernel_if_add(struct daemon *d, uint16_t p, const char *ifname, struct ctl_out *o);
cmd_handler cmd_addr_add, cmd_addr_del, cmd_addr_show;
/* DHCP (cmd_dhcp.c): `ip addr dhcp [del] dev PORT`; in `ip addr show`, what a lease adds to
 * the address it holds (inside its line or JSON object) and the port's client. */
cmd_handler cmd_addr_dhcp;
void cmd_dhcp_addr_show(struct daemon *d, uint16_t port, uint32_t addr, struct ctl_out *o);
void cmd_dhcp_port_show(struct daemon *d, uint16_t port, struct ctl_out *o);
cmd_handler cmd_ip_forwarding, cmd_ip6_forwarding, cmd_ip_reassembly, cmd_ip6_reassembly;
/* Routes of both families (cmd_route.c): `ip route ...` and `ip -6 route ...`. */
cmd_handler cmd_route_add, cmd_route_del, cmd_route_show;
cmd_handler cmd_route6_add, cmd_route6_del, cmd_route6_show;
/* IPv6 addresses (cmd_ip6.c): what cmd_ip.c hands over when an address has a colon. */
int cmd_addr6_change(struct daemon *d, bool add, int argc, char **argv, struct ctl_out *o);
/* The changes `ip addr add|del` makes, for the kernel sync (kernel_sync.c) as for the
 * command: the master copy, then every worker's. Return 0 or the master's -errno. */
int cmd_ip_addr_apply(struct daemon *d, bool add, uint16_t port, uint32_t addr, uint8_t plen);
/* The tables alone (every worker's and the master), without address autoconfiguration
 * hearing of it: what that autoconfiguration's own changes use. */
int cmd_ip6_addr_tables(struct daemon *d, bool add, uint16_t port, const struct ip6_addr *addr,
			uint8_t plen, uint8_t flags);
int cmd_ip6_addr_apply(struct daemon *d, bool add, uint16_t port, const struct ip6_addr *addr,
		       uint8_t plen, uint8_t flags);
/* The inet6 lines (or JSON addr_info objects) of port's addresses in `ip addr show`. */
void cmd_addr6_show_port(struct daemon *d, uint16_t port, struct ctl_out *o);

cmd_handler cmd_neigh_show, cmd_neigh_add, cmd_neigh_del, cmd_neigh_flush, cmd_neigh_params;
cmd_handler cmd_stats_show;
cmd_handler cmd_sync;
cmd_handler cmd_lcore_show;
cmd_handler cmd_sock_show;
cmd_handler cmd_ping;
cmd_handler cmd_service_add, cmd_service_del, cmd_service_show;
cmd_handler cmd_tcp_params;
cmd_handler cmd_apps_limits;
cmd_handler cmd_capture;
cmd_handler cmd_cluster_add, cmd_cluster_del, cmd_cluster_show;

/* The captures' counters in `stats`; and their end before the workers stop. */
void cmd_capture_stats(struct daemon *d, struct ctl_out *o);
void cmd_capture_fini(struct daemon *d);

cmd_handler cmd_acl_add, cmd_acl_del, cmd_acl_flush, cmd_acl_show;

/* ACL changes made by the config file are published together once it has run (one build
 * of the rule set); from then on each change is published at once. */
int cmd_acl_start(struct daemon *d, struct ctl_out *o);
/* Frees the rules and the set in use, once the workers have stopped. */
void cmd_acl_fini(struct daemon *d);
/* What an ACL (or bypass) rule matches, as JSON fields of the open object. */
void cmd_acl_match_json(struct daemon *d, struct ctl_out *o, const struct acl_rule *r);

cmd_handler cmd_bypass_add, cmd_bypass_del, cmd_bypass_show;
/* Frees the bypass rules' set (the workers have stopped). */
void cmd_bypass_fini(struct daemon *d);

cmd_handler cmd_flow_add, cmd_flow_del, cmd_flow_show;
/* Takes the flow rules out of the ports' hardware and frees them (workers stopped, ports
 * not yet). */
void cmd_flow_fini(struct daemon *d);
/* The ids of the flow rules that send to cluster name, as "3, 5" in buf; how many. */
unsigned cmd_flow_rules_of_cluster(const struct daemon *d, const char *name, char *buf,
				   size_t cap);

/* The applications' limits and each user's use (in `stats` and `apps limits`). */
void cmd_apps_limits_out(struct daemon *d, struct ctl_out *o);

/* One port's counters (cmd_port.c): the stacks' on it and what its device and the kernel
 * under it know of lost frames; printed alike by `link show` and `stats`. */
void cmd_port_counters_add(struct stack_port_counters *sum, const struct stack_port_counters *c);
void cmd_port_counters_get(struct daemon *d, uint16_t p, struct stack_port_counters *sc,
			   struct port_dev_counters *dc);
/* The port's kernel interface, if it has one: its name, frames each way, drops. */
void cmd_port_kernel_json(struct ctl_out *o, struct daemon *d, uint16_t p,
			  const struct stack_port_counters *sc);
void cmd_port_kernel_text(struct ctl_out *o, const char *indent, struct daemon *d, uint16_t p,
			  const struct stack_port_counters *sc);
void cmd_port_losses_json(struct ctl_out *o, const struct stack_port_counters *sc,
			  const struct port_dev_counters *dc);
/* One "lost: name value, ..." line (wrapped), each line starting with indent. */
void cmd_port_losses_text(struct ctl_out *o, const char *indent,
			  const struct stack_port_counters *sc, const struct port_dev_counters *dc);

/* Stops every built-in service on every worker (before the workers stop). */
void cmd_service_fini(struct daemon *d);

/* Argument helpers shared by the handlers: each returns 0, or -1 after ctl_error. */
int cmd_parse_port(struct daemon *d, const char *name, uint16_t *port, struct ctl_out *o);
/* An optional "dev PORT" filter: no words gives *port = -1 (every port). */
int cmd_parse_dev_filter(struct daemon *d, int argc, char **argv, int *port, struct ctl_out *o);
int cmd_parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out, const char *what,
		  struct ctl_out *o);
/* A drop reason's count summed over the workers (0 in a dry run, which has none). */
uint64_t cmd_drop_total(const struct daemon *d, enum stack_drop reason);
/* "key": "A.B.C.D/LEN" in a JSON object; nothing for the prefix that matches all (len 0). */
void cmd_json_prefix(struct ctl_out *o, const char *key, uint32_t addr, uint8_t len);
void cmd_json_prefix6(struct ctl_out *o, const char *key, const struct ip6_addr *addr,
		      uint8_t len);
/* Human-readable errno for command errors ("File exists" is not what a user wants). */
const char *cmd_strerror(int err);

#endif
