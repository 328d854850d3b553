#include "port.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf_pool_ops.h>

#define PORT_RX_DESC 1024
#define PORT_TX_DESC 1024

/* rte_pktmbuf_init, and in IOVA-as-VA mode the buffer's IOVA, which a pool whose objects
 * need not be IOVA-contiguous leaves unknown (RTE_BAD_IOVA) while it is the address. */
static void port_mbuf_init(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	rte_pktmbuf_init(mp, arg, obj, idx);
	struct rte_mbuf *m = obj;
	if (rte_eal_iova_mode() == RTE_IOVA_VA)
		m->buf_iova = (rte_iova_t)(uintptr_t)m->buf_addr;
}

struct rte_mempool *port_pool_create(const char *name, unsigned n, unsigned cache, int socket)
{
	/* With IOVA as VA, a virtually contiguous buffer is contiguous for DMA too, so
	 * mbufs may cross page boundaries and are packed end to end. Besides saving the
	 * padding (with 4 KB pages DPDK otherwise puts one 2368-byte mbuf per page),
	 * net_af_xdp needs it: DPDK 22.11's PMD registers the pool's memory as its UMEM
	 * sized as n times the mbuf size, so mbufs placed beyond that were sent as invalid
	 * descriptors, which the kernel drops (tx_invalid): lost frames once traffic used
	 * enough of the pool (seen with two workers as retransmission timeouts). */
	unsigned flags = rte_eal_iova_mode() == RTE_IOVA_VA ? RTE_MEMPOOL_F_NO_IOVA_CONTIG : 0;
	struct rte_mempool *mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + RTE_MBUF_DEFAULT_BUF_SIZE, cache,
		sizeof(struct rte_pktmbuf_pool_private), socket, flags);
	if (mp == NULL)
		return NULL;
	struct rte_pktmbuf_pool_private priv = {.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE};
	int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL);
	if (rc == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = rte_mempool_populate_default(mp);
	}
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, port_mbuf_init, NULL);
	return mp;
}

bool port_devargs_is_pci(const char *devargs)
{
	unsigned a, b, c, d;
	char tail;
	return sscanf(devargs, "%x:%x:%x.%x%c", &a, &b, &c, &d, &tail) == 4 ||
	       sscanf(devargs, "%x:%x.%x%c", &a, &b, &c, &tail) == 3;
}

/* The ethdev name the EAL gives a device: the vdev's driver-and-index before the first comma,
 * or the PCI address. */
static int port_find_eth(const struct port *p, uint16_t *eth_port)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	size_t n = strcspn(p->devargs, ",");
	if (n >= sizeof(name))
		return -ENAMETOOLONG;
	memcpy(name, p->devargs, n);
	name[n] = '\0';
	if (rte_eth_dev_get_port_by_name(name, eth_port) == 0)
		return 0;
	/* PCI devices may be named with or without the domain. */
	if (port_devargs_is_pci(name)) {
		char full[RTE_ETH_NAME_MAX_LEN + 8];
		snprintf(full, sizeof(full), "0000:%s", name);
		if (rte_eth_dev_get_port_by_name(full, eth_port) == 0)
			return 0;
	}
	return -ENODEV;
}

/* The indirection table picks a queue from the hash's low bits as steer's table picks a
 * worker; queue i is worker i's. A device that refuses keeps its own table: the workers
 * then steer what lands on the wrong queue. */
static void port_set_reta(struct port *p, const struct rte_eth_dev_info *info,
			  const struct steer *steer)
{
	uint16_t size = info->reta_size;
	if (size == 0 || size % RTE_ETH_RETA_GROUP_SIZE != 0 || size > RTE_ETH_RSS_RETA_SIZE_512)
		return;
	struct rte_eth_rss_reta_entry64 reta[RTE_ETH_RSS_RETA_SIZE_512 / RTE_ETH_RETA_GROUP_SIZE];
	memset(reta, 0, sizeof(reta));
	for (uint16_t i = 0; i < size; i++) {
		struct rte_eth_rss_reta_entry64 *g = &reta[i / RTE_ETH_RETA_GROUP_SIZE];
		g->mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		g->reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			(uint16_t)(steer_of_hash(steer, i) % p->nb_queues);
	}
	p->hw_rss_reta = rte_eth_dev_rss_reta_update(p->eth_port, reta, size) == 0;
}

int port_start(struct port *p, uint16_t nb_queues, struct rte_mempool *pool,
	       const struct steer *steer, char *err, size_t errlen)
{
	int rc = port_find_eth(p, &p->eth_port);
	if (rc < 0) {
		snprintf(err, errlen, "no DPDK device for '%s' (did the EAL probe it?)",
			 p->devargs);
		return rc;
	}
	struct rte_eth_dev_info info;
	rc = rte_eth_dev_info_get(p->eth_port, &info);
	if (rc < 0) {
		snprintf(err, errlen, "%s: device info: %s", p->name, strerror(-rc));
		return rc;
	}
	uint16_t q = nb_queues;
	if (q > info.max_rx_queues)
		q = info.max_rx_queues;
	if (q > info.max_tx_queues)
		q = info.max_tx_queues;
	if (q == 0) {
		snprintf(err, errlen, "%s: device has no queues", p->name);
		return -EINVAL;
	}
	p->nb_queues = q;

	struct rte_eth_conf conf = {0};
	/* Hardware RSS with the stack's own key, so that the NIC's choice of queue agrees with
	 * the worker that owns the flow (steer.h); where it does not, workers steer. */
	uint8_t key[TOEPLITZ_KEY_LEN];
	memcpy(key, toeplitz_symmetric_key, sizeof(key));
	p->hw_rss = q > 1 && info.flow_type_rss_offloads != 0;
	if (p->hw_rss) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
		if (info.hash_key_size == TOEPLITZ_KEY_LEN) {
			conf.rx_adv_conf.rss_conf.rss_key = key;
			conf.rx_adv_conf.rss_conf.rss_key_len = TOEPLITZ_KEY_LEN;
		}
	}
	p->rx_ip_cksum = (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM) != 0;
	if (p->rx_ip_cksum)
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_IPV4_CKSUM;
	p->tx_multi_seg = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	/* net_af_xdp kicks the kernel once per burst, and the kernel's copy-mode AF_XDP
	 * transmit takes a bounded batch per kick (16 on older kernels): larger bursts leave
	 * frames in the TX ring, counted as sent, until some later burst, or never when the
	 * traffic stops (seen as lost ARP requests and stalled connections). */
	bool af_xdp = strcmp(info.driver_name, "net_af_xdp") == 0;
	p->tx_burst = af_xdp ? PORT_AF_XDP_TX_BURST : PORT_TX_BURST;
	if (p->tx_multi_seg)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(p->eth_port, q, q, &conf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: configure: %s", p->name, strerror(-rc));
		return rc;
	}
	uint16_t rxd = PORT_RX_DESC, txd = PORT_TX_DESC;
	rte_eth_dev_adjust_nb_rx_tx_desc(p->eth_port, &rxd, &txd);
	int socket = rte_eth_dev_socket_id(p->eth_port);
	for (uint16_t i = 0; i < q; i++) {
		rc = rte_eth_rx_queue_setup(p->eth_port, i, rxd, socket, NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(p->eth_port, i, txd, socket, NULL);
		if (rc < 0) {
			snprintf(err, errlen, "%s: queue %u setup: %s", p->name, i, strerror(-rc));
			return rc;
		}
	}
	rc = rte_eth_dev_start(p->eth_port);
	if (rc < 0) {
		snprintf(err, errlen, "%s: start: %s", p->name, strerror(-rc));
		return rc;
	}
	if (p->hw_rss)
		port_set_reta(p, &info, steer);
	rte_eth_macaddr_get(p->eth_port, &p->mac);
	if (rte_eth_dev_get_mtu(p->eth_port, &p->mtu) != 0 || p->mtu < NETCFG_MIN_MTU)
		p->mtu = RTE_ETHER_MTU;
	p->used = true;
	return 0;
}

void port_stop(struct port *p)
{
	if (!p->used)
		return;
	rte_eth_dev_stop(p->eth_port);
	rte_eth_dev_close(p->eth_port);
	p->used = false;
}
