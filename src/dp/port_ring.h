/* Two ports of one daemon joined by a ring pair: what one sends, the other receives. DPDK's
 * net_ring vdev cannot be given a peer (its `nodeaction=` rings carry a port's TX back to its
 * own RX, or to whichever port attached to the same ring reads first), so a pair is made
 * here, after the EAL starts, with rte_eth_from_rings: per queue, one ring each way.
 * `port add b net_ring1,peer=a` in the config (config.c pairs the two ports). */
#ifndef DPS_DP_PORT_RING_H
#define DPS_DP_PORT_RING_H

#include <stddef.h>

#include "port.h"

#define PORT_RING_SIZE 1024

/* Creates the ethdevs of a and b joined by nb_queues rings each way and notes their ids
 * in a->eth_port and b->eth_port. Returns 0 or -errno with a message in err. */
int port_ring_pair_create(struct port *a, struct port *b, unsigned nb_queues, char *err,
			  size_t errlen);

#endif
