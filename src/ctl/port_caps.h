/* The capabilities a port's driver needs, checked before the EAL starts so that a missing
 * one is named instead of failing as "queue 0 setup: Invalid argument" or "no DPDK device".
 * Found by starting a port on a veth with each capability dropped (capsh --drop, Linux 6.1,
 * DPDK 22.11, libxdp 1.3):
 *   net_af_xdp     CAP_NET_RAW (the AF_XDP socket), CAP_NET_ADMIN (attaching the XDP
 *                  program), CAP_SYS_ADMIN (libxdp reads the program back by id), and
 *                  CAP_IPC_LOCK unless RLIMIT_MEMLOCK covers the pool (the UMEM is locked)
 *   net_af_packet  CAP_NET_RAW (the packet socket), CAP_NET_ADMIN (promiscuous mode, MAC)
 *   net_tap        CAP_NET_ADMIN (creating the tap, its kernel end's address)
 *   net_memif, net_vhost, net_virtio_user, net_ring: none (a unix socket the daemon may
 *                  create or open, or nothing outside the process)
 * CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE were not needed (setpriv --bounding-set with
 * exactly these, the same with one dropped: tests/integ/test_containers.py). */
#ifndef DPS_CTL_PORT_CAPS_H
#define DPS_CTL_PORT_CAPS_H

#include <stdint.h>

#include "config.h"

/* The capability bits (1 << CAP_x) that the ports of d need and that this process lacks in
 * its effective set, given caps (the effective set) and memlock (RLIMIT_MEMLOCK in bytes);
 * *port_index is the first port that needs one. Pure: unit-tested. */
uint64_t port_caps_missing(const struct daemon *d, uint64_t caps, uint64_t memlock,
			   unsigned *port_index);

/* Reports the missing capabilities of this process (config_error at the port's line);
 * returns 1 when some are missing, else 0. */
unsigned port_caps_check(const struct daemon *d, struct config *cfg);

#endif
