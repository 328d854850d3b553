/* A net_tap port's kernel end. DPDK 22.11's tap PMD gives the kernel interface it creates
 * the port's own MAC address, so every frame the kernel sends through it carries the
 * stack's address as its source and is dropped as looped back (eth.bad_src), and the
 * kernel drops the stack's frames as its own: a tap data port never worked. */
#ifndef DPS_DP_PORT_TAP_H
#define DPS_DP_PORT_TAP_H

#include <stddef.h>

#include <rte_ethdev.h>

/* Gives the kernel interface of tap device info (a started net_tap) a random locally
 * administered MAC address other than mac, the port's. Returns 0 or -errno with a message
 * in err. */
int port_tap_kernel_mac(const struct rte_eth_dev_info *info, const struct rte_ether_addr *mac,
			char *err, size_t errlen);

#endif
