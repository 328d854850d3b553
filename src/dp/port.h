/* DPDK ports: probing a device named in the config, configuring one RX/TX queue pair per
 * worker (fewer if the device has fewer; every queue of a device whose queues exist before
 * they are configured), RSS across them with the stack's key, and checksum and
 * segmentation offloads (port_offload.h). */
#ifndef DPS_DP_PORT_H
#define DPS_DP_PORT_H

#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include <rte_ethdev.h>

#include "exception.h"
#include "stack/netcfg.h"
#include "stack/steer.h"
#include "stack/tx_offload.h"

#define PORT_DEVARGS_LEN 256

#define PORT_TX_BURST 32
#define PORT_AF_XDP_TX_BURST 16

/* Frames lost at a port as the layers below the stack know them, X(field, "description"):
 * the ethdev counters (rte_eth_stats); for net_af_xdp the kernel's statistics of the
 * port's AF_XDP sockets (XDP_STATISTICS: DPDK 22.11 puts only rx_dropped into imissed, so a
 * full RX ring is counted nowhere else); for net_af_packet the kernel's PACKET_STATISTICS
 * of its sockets (which DPDK 22.11 does not read at all); and for a port on a kernel
 * interface (net_af_xdp,
 * net_af_packet) that interface's own drop counters, which see the same frames from
 * below (a veth counts a failed XDP redirect into the socket as rx_dropped). */
#define PORT_DEV_COUNTER_LIST(X) \
	X(rx_missed,        "frames the device dropped on receive (imissed)") \
	X(rx_errors,        "erroneous frames received (ierrors)") \
	X(rx_nombuf,        "frames not received: no mbuf to receive into (rx_nombuf)") \
	X(tx_errors,        "frames the device failed to send (oerrors)") \
	X(xsk_rx_ring_full, "frames the kernel dropped: the AF_XDP socket's RX ring was full (not in rx_missed)") \
	X(xsk_rx_dropped,   "frames the kernel dropped for other reasons, e.g. the fill ring empty (in rx_missed)") \
	X(xsk_fill_empty,   "times the kernel found the AF_XDP fill ring empty") \
	X(xsk_rx_invalid,   "frames dropped: invalid AF_XDP RX descriptor") \
	X(xsk_tx_invalid,   "frames dropped: invalid AF_XDP TX descriptor") \
	X(packet_rx_dropped, "frames the kernel dropped: the AF_PACKET socket's RX ring was full (not in rx_missed)") \
	X(kernel_rx_dropped, "frames the kernel interface dropped on receive (the xsk_rx_* drops among them)") \
	X(kernel_tx_dropped, "frames the kernel interface dropped on transmit")

struct port_dev_counters {
#define PORT_DEV_FIELD(f, text) uint64_t f;
	PORT_DEV_COUNTER_LIST(PORT_DEV_FIELD)
#undef PORT_DEV_FIELD
	bool xsk;           /* the xsk_* counters are known */
	bool packet;        /* packet_rx_dropped is known */
	bool kernel;        /* the kernel_* counters are known */
};

/* The most queue pairs a port has (and AF_XDP sockets it watches). */
#define PORT_MAX_QUEUES 16

struct port {
	bool used;
	char name[NETCFG_NAME_LEN];     /* ours: "port0" */
	char devargs[PORT_DEVARGS_LEN]; /* vdev string or PCI address from the config */
	uint16_t eth_port;              /* DPDK port id */
	uint16_t nb_queues;             /* RX and TX queue pairs */
	uint16_t nb_workers;            /* RX queue i is polled by worker i % nb_workers, TX
					 * queue i (i < nb_workers) is worker i's */
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool rx_ip_cksum;               /* the NIC validates IPv4 header checksums */
	bool tx_multi_seg;              /* the PMD sends chained mbufs (else we linearize) */
	struct stack_tx_caps tx_caps;   /* TX offloads configured (port_offload.h) */
	bool tx_offload_off;            /* `link set PORT offload off`: the stacks compute all */
	bool gro;                       /* merge TCP segments per RX burst (src/dp/gro.h) */
	uint16_t tx_burst;              /* frames per TX burst (the TX buffer's size) */
	bool hw_rss;                    /* the device spreads flows over its queues by hash */
	bool hw_rss_reta;               /* ... with our key and table (steer.h) */
	char kernel_if[IF_NAMESIZE];    /* the kernel interface under the PMD, or "" */
	bool ring_paired;               /* a net_ring joined to port ring_peer (port_ring.h):
					 * made by dpstackd, not by the EAL */
	uint16_t ring_peer;
	unsigned nb_xsk;                /* net_af_xdp: its AF_XDP sockets (not ours to close) */
	int xsk_fd[PORT_MAX_QUEUES];
	uint64_t packet_drops;          /* net_af_packet: its sockets' drops so far (the kernel
					 * clears them as they are read); control thread only */
	struct exception_if kernel;     /* `kernel IFNAME`: the exception path, or unused */
};

/* The packet buffer pool every port receives into and the stacks send from: n mbufs of
 * RTE_MBUF_DEFAULT_BUF_SIZE, packed end to end where DMA allows. NULL with rte_errno. */
struct rte_mempool *port_pool_create(const char *name, unsigned n, unsigned cache, int socket);

/* True when devargs names a PCI device (DDDD:BB:DD.F or BB:DD.F) rather than a vdev. */
bool port_devargs_is_pci(const char *devargs);

/* After rte_eal_init: finds the ethdev the EAL created for p->devargs, configures it for
 * nb_workers workers drawing from pool: one queue pair each (capped by the device), or
 * every queue of net_af_xdp and net_af_packet, whose kernel sockets exist (and receive)
 * from the probe on, however many there are; with hardware RSS set up as steer says where
 * the device has it, and starts it. Returns 0 or -errno with a message in err. */
int port_start(struct port *p, uint16_t nb_workers, struct rte_mempool *pool,
	       const struct steer *steer, char *err, size_t errlen);
void port_stop(struct port *p);

/* Reads /sys/class/net/IFNAME/statistics/STAT: false when the interface is not in our
 * network namespace (or has no such counter). */
bool port_read_sys_u64(const char *ifname, const char *stat, uint64_t *v);

/* Fills c with what the device and the kernel know of p's lost frames (zeros where a
 * layer does not say). For the control thread only (it adds up counters the kernel clears
 * as they are read). */
void port_dev_counters_get(struct port *p, struct port_dev_counters *c);

#endif
