/* DPDK ports: probing a device named in the config, configuring one RX/TX queue pair per
 * worker (fewer if the device has fewer), RSS across them with the stack's key, and checksum offloads. */
#ifndef DPS_DP_PORT_H
#define DPS_DP_PORT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>

#include "../proto/netcfg.h"
#include "../proto/steer.h"

#define PORT_DEVARGS_LEN 256

#define PORT_TX_BURST 32
#define PORT_AF_XDP_TX_BURST 16

struct port {
	bool used;
	char name[NETCFG_NAME_LEN];     /* ours: "port0" */
	char devargs[PORT_DEVARGS_LEN]; /* vdev string or PCI address from the config */
	uint16_t eth_port;              /* DPDK port id */
	uint16_t nb_queues;             /* RX and TX queue pairs */
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool rx_ip_cksum;               /* the NIC validates IPv4 header checksums */
	bool tx_multi_seg;              /* the PMD sends chained mbufs (else we linearize) */
	uint16_t tx_burst;              /* frames per TX burst (the TX buffer's size) */
	bool hw_rss;                    /* the device spreads flows over its queues by hash */
	bool hw_rss_reta;               /* ... with our key and table (steer.h) */
};

/* The packet buffer pool every port receives into and the stacks send from: n mbufs of
 * RTE_MBUF_DEFAULT_BUF_SIZE, packed end to end where DMA allows. NULL with rte_errno. */
struct rte_mempool *port_pool_create(const char *name, unsigned n, unsigned cache, int socket);

/* True when devargs names a PCI device (DDDD:BB:DD.F or BB:DD.F) rather than a vdev. */
bool port_devargs_is_pci(const char *devargs);

/* After rte_eal_init: finds the ethdev the EAL created for p->devargs, configures it with
 * nb_queues queue pairs (capped by the device) drawing from pool, with hardware RSS set
 * up as steer says where the device has it, and starts it.
 * Returns 0 or -errno with a message in err. */
int port_start(struct port *p, uint16_t nb_queues, struct rte_mempool *pool,
	       const struct steer *steer, char *err, size_t errlen);
void port_stop(struct port *p);

#endif
