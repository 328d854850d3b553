/* The kernel end of a veth with TX checksum offload on. The kernel then leaves TCP and UDP
 * checksums partial (CHECKSUM_PARTIAL: only the pseudo-header sum is filled in, for the
 * hardware that a veth does not have) and a frame that reaches net_af_xdp or net_af_packet
 * on the other end carries that partial sum: the stack drops every segment as
 * tcp.bad_checksum and a TCP client hangs. The fix is `ethtool -K <kernel end> tx off`.
 * At start, a port on a veth whose other end is in this network namespace is checked
 * (ETHTOOL_GTXCSUM); an other end in another namespace cannot be asked, so the control
 * thread watches the checksum drops and warns at the first. */
#ifndef DPS_CTL_VETH_OFFLOAD_H
#define DPS_CTL_VETH_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

struct daemon;

struct veth_offload_watch {
	bool warned;                    /* once per daemon: the fix does not change */
};

/* Warns for each port whose veth peer is here and has TX checksum offload on (then the
 * watch need not warn again). */
void veth_offload_check_ports(struct veth_offload_watch *w, const struct daemon *d);

/* Warns once when the workers have dropped TCP or UDP segments for their checksum and a
 * port is on a veth (control thread, each second). */
void veth_offload_tick(struct veth_offload_watch *w, const struct daemon *d);

#endif
