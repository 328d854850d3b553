/* The kernel interface of a port: the device of the exception path (src/stack/exception.h).
 *
 * A port with `kernel IFNAME` gets a second DPDK device whose other end is a Linux network
 * interface named IFNAME, carrying the port's own MAC address (one MAC on both sides, so the
 * peer's frames are the kernel's as they are and the kernel's leave as the port's):
 * virtio-user on the kernel's vhost-net where /dev/vhost-net exists (the kernel moves the
 * frames in its own thread), else a tap device (DPDK 22.11's tap PMD reads only after a
 * SIGIO, which bounds kernel → port traffic; README gives the figure). It is made after the
 * EAL started (rte_vdev_init: it needs the port's MAC, known once the port started) and
 * removed with the port, taking the Linux interface with it.
 *
 * It has one queue pair per worker where the device allows (fewer: workers beyond send
 * through a peer, as on a port). Each worker polls its RX queue in its loop, beside the
 * port's, and sends what the kernel wrote out of the port; frames for the kernel go into
 * its TX queue: nothing is shared, nothing locked. */
#ifndef DPS_DP_EXCEPTION_H
#define DPS_DP_EXCEPTION_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#define EXCEPTION_VDEV_LEN 64

struct exception_if {
	char ifname[IF_NAMESIZE];       /* the Linux interface; "" when the port has none */
	char vdev[EXCEPTION_VDEV_LEN];  /* the DPDK device's name */
	bool vhost;                     /* virtio-user on vhost-net, else tap */
	bool used;                      /* started */
	uint16_t eth_port;
	uint16_t nb_queues;
	bool tx_multi_seg;
};

/* Makes and starts the kernel interface k->ifname for port index port_index with MAC mac,
 * with up to nb_queues queue pairs receiving into pool. Returns 0 or -errno with a message
 * in err. */
int exception_if_start(struct exception_if *k, unsigned port_index,
		       const struct rte_ether_addr *mac, uint16_t nb_queues,
		       struct rte_mempool *pool, char *err, size_t errlen);
/* Stops the device and removes it, and with it the Linux interface. */
void exception_if_stop(struct exception_if *k);

#endif
