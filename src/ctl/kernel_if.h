/* What the kernel says of the interface under a port (net_af_xdp, net_af_packet, net_tap):
 * its driver, its queues and channels, the other end of a veth. Control thread and start-up
 * only (ioctl and sysfs reads). */
#ifndef DPS_CTL_KERNEL_IF_H
#define DPS_CTL_KERNEL_IF_H

#include <net/if.h>
#include <stdbool.h>

/* SIOCETHTOOL with cmd (a struct ethtool_* whose first field is the command) on ifname.
 * Returns 0 or -1 with errno. */
int kernel_if_ethtool(const char *ifname, void *cmd);

bool kernel_if_is_veth(const char *ifname);

/* The RX queues the interface has in use (its /sys/class/net/IF/queues/rx-N), 0 when it
 * does not exist. */
unsigned kernel_if_rx_queues(const char *ifname);

/* Its combined channels (ETHTOOL_GCHANNELS), 0 when the driver has none (a veth counts
 * RX and TX channels apart). */
unsigned kernel_if_combined_channels(const char *ifname);

/* The other end of veth ifname: its name when it is in this namespace (its iflink points
 * back at ifname), "" otherwise; its ifindex in *peer_index either way. */
void kernel_if_veth_peer(const char *ifname, char peer[IF_NAMESIZE], int *peer_index);

#endif
