/* IPv6 address autoconfiguration of the daemon's ports (src/addrconf): Duplicate Address
 * Detection of every address, SLAAC from Router Advertisements on ports with `ip -6 autoconf
 * on`, and MLD reports of the solicited-node groups, one state machine per port on the
 * control thread.
 *
 * Why the control thread: the outcome of DAD and SLAAC changes every worker's tables
 * (addresses, routes), which only the control thread can do; the timers are a second long;
 * and the news comes from any worker (the message reached whichever queue RSS chose).
 * Workers hand it over through one ring (several producers, src/ip6/ip6_ctl.c) and an
 * eventfd the control loop polls; what the machines send goes out through worker 0, which
 * has a TX queue on every port. */
#ifndef DPS_CTL_ADDRCONF_RUN_H
#define DPS_CTL_ADDRCONF_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "addrconf/addrconf.h"

struct daemon;
struct ctl_out;

/* Before the workers are launched: the inbox, each stack told of it, a machine per port,
 * and DAD of the addresses the ports have (their link-local ones). 0 or -errno. */
int addrconf_run_init(struct daemon *d);
void addrconf_run_fini(struct daemon *d);

/* The NETCFG6_* flags an address added by the user (or the kernel sync, flags given) starts
 * with: tentative while DAD is to run on it. */
uint8_t addrconf_run_add_flags(const struct daemon *d, uint16_t port, uint8_t flags);
/* An address was added to or removed from port through the ip commands. */
void addrconf_run_addr_added(struct daemon *d, uint16_t port, const struct ip6_addr *addr,
			     uint8_t plen, uint8_t flags);
void addrconf_run_addr_removed(struct daemon *d, uint16_t port, const struct ip6_addr *addr);
/* The machine's view of addr on port (lifetimes), or NULL. */
const struct addrconf_addr *addrconf_run_addr(const struct daemon *d, uint16_t port,
					      const struct ip6_addr *addr);
/* The machines' clock is the DHCP clients' (dhcp_run_now_ms, CLOCK_BOOTTIME: lifetimes run
 * on while a host sleeps). */

/* RFC 7217's secret for every port's stable identifiers formed from now on. */
void addrconf_run_set_secret(struct daemon *d, const uint8_t secret[ADDRCONF_SECRET_LEN]);

/* port's machine, or NULL (no such port, or no autoconfiguration: --check-config). */
struct addrconf_port *addrconf_run_port(const struct daemon *d, uint16_t port);

/* For the control loop, as dhcp_run.h: the descriptor, the longest sleep, the work. */
int addrconf_run_fd(const struct daemon *d);
int addrconf_run_timeout_ms(const struct daemon *d, int max_ms);
void addrconf_run_poll(struct daemon *d);

/* ip -6 autoconf [show] | ip -6 autoconf { on | off } dev PORT |
 * ip -6 dad-transmits N dev PORT | ip -6 addrgen { eui64 | stable-privacy } dev PORT |
 * ip -6 stable-secret SECRET (cmd_addrconf.c) */
int cmd_ip6_autoconf(struct daemon *d, int argc, char **argv, struct ctl_out *o);
int cmd_ip6_dad_transmits(struct daemon *d, int argc, char **argv, struct ctl_out *o);
int cmd_ip6_addrgen(struct daemon *d, int argc, char **argv, struct ctl_out *o);
int cmd_ip6_stable_secret(struct daemon *d, int argc, char **argv, struct ctl_out *o);

#endif
