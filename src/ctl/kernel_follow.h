/* A port's kernel interface follows the port (src/dp/exception.h): the port's MTU becomes
 * the interface's, and its carrier says whether the port can carry frames (the port's link
 * is up and `link set PORT up`), as a NIC's driver reports its PHY. So the kernel's side
 * (a routing daemon's hello timers, a DHCP client, path MTU) sees the link the stack sees:
 * BIRD notices a port going down as it would on a real interface. The interface's own
 * administrative state stays its user's (`ip link set dps0 up|down`): setting it from the
 * stack would flush the kernel's routes there. Control thread only, by rtnetlink; an
 * interface moved out of dpstackd's network namespace is left alone (`link show` says
 * so). */
#ifndef DPS_CTL_KERNEL_FOLLOW_H
#define DPS_CTL_KERNEL_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "stack/netcfg.h"

struct kernel_follow {
	uint16_t mtu[NETCFG_MAX_PORTS];    /* what was set; 0: nothing yet */
	int8_t carrier[NETCFG_MAX_PORTS];  /* what was set; -1: nothing yet */
	bool away[NETCFG_MAX_PORTS];       /* the interface is not in this namespace */
};

struct daemon;

static inline void kernel_follow_init(struct kernel_follow *f)
{
	memset(f, 0, sizeof(*f));
	memset(f->carrier, -1, sizeof(f->carrier));
}
/* Gives port p's kernel interface (if it has one) the port's MTU and carrier, where they
 * changed since the last time. */
void kernel_follow_port(struct daemon *d, uint16_t p);
/* kernel_follow_port for every port: the control loop's periodic look, which catches the
 * links of the ports changing. */
void kernel_follow_tick(struct daemon *d);

#endif
