#include "port.h"
#include "port_tap.h"
#include "port_offload.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

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
 * or the PCI address; a ring pair's, the id it was made with. */
static int port_find_eth(const struct port *p, uint16_t *eth_port)
{
	if (p->ring_paired) {
		*eth_port = p->eth_port;        /* made by port_ring_pair_create */
		return 0;
	}
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

/* Fills fds with the sockets of family domain the process has open; returns how many (up
 * to max). */
static unsigned port_socket_list(int domain_wanted, int *fds, unsigned max)
{
	DIR *dir = opendir("/proc/self/fd");
	if (dir == NULL)
		return 0;
	unsigned n = 0;
	struct dirent *e;
	while (n < max && (e = readdir(dir)) != NULL) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end != '\0' || end == e->d_name || fd == dirfd(dir))
			continue;
		int domain;
		socklen_t len = sizeof(domain);
		if (getsockopt((int)fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
		    domain == domain_wanted)
			fds[n++] = (int)fd;
	}
	closedir(dir);
	return n;
}

/* net_af_xdp opens one AF_XDP socket per queue while the port is set up, and neither DPDK
 * nor the kernel (no getsockname) says which socket is whose: the port's are the ones that
 * appeared meanwhile (ports start one after the other). */
static void port_xsk_note_new(struct port *p, const int *before, unsigned nb_before)
{
	int now[PORT_MAX_QUEUES * 8];
	unsigned n = port_socket_list(AF_XDP, now, RTE_DIM(now));
	p->nb_xsk = 0;
	for (unsigned i = 0; i < n && p->nb_xsk < PORT_MAX_QUEUES; i++) {
		bool old = false;
		for (unsigned k = 0; k < nb_before && !old; k++)
			old = before[k] == now[i];
		if (!old)
			p->xsk_fd[p->nb_xsk++] = now[i];
	}
}

/* The kernel interface a vdev sits on (net_af_xdp, net_af_packet: "iface=NAME"), or "". */
static void port_find_kernel_if(struct port *p)
{
	p->kernel_if[0] = '\0';
	if (strncmp(p->devargs, "net_af_xdp", 10) != 0 &&
	    strncmp(p->devargs, "net_af_packet", 13) != 0)
		return;
	const char *at = strstr(p->devargs, ",iface=");
	if (at == NULL)
		return;
	at += strlen(",iface=");
	size_t n = strcspn(at, ",");
	if (n == 0 || n >= sizeof(p->kernel_if))
		return;
	memcpy(p->kernel_if, at, n);
	p->kernel_if[n] = '\0';
}

bool port_read_sys_u64(const char *ifname, const char *stat, uint64_t *v)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", ifname, stat);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return false;
	bool ok = fscanf(f, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

/* net_af_packet's sockets are bound to the interface, which getsockname tells (unlike
 * AF_XDP's); their drops are read and cleared (PACKET_STATISTICS), so they add up in p. */
static void port_packet_drops(struct port *p)
{
	unsigned ifindex = if_nametoindex(p->kernel_if);
	int fds[64];
	unsigned n = ifindex != 0 ? port_socket_list(AF_PACKET, fds, RTE_DIM(fds)) : 0;
	for (unsigned i = 0; i < n; i++) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(sll);
		if (getsockname(fds[i], (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_ifindex != (int)ifindex)
			continue;
		struct tpacket_stats_v3 st; /* tp_drops where tpacket_stats has it */
		len = sizeof(st);
		memset(&st, 0, sizeof(st));
		if (getsockopt(fds[i], SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
			p->packet_drops += st.tp_drops;
	}
}

void port_dev_counters_get(struct port *p, struct port_dev_counters *c)
{
	memset(c, 0, sizeof(*c));
	if (!p->used)
		return;
	struct rte_eth_stats st;
	if (rte_eth_stats_get(p->eth_port, &st) == 0) {
		c->rx_missed = st.imissed;
		c->rx_errors = st.ierrors;
		c->rx_nombuf = st.rx_nombuf;
		c->tx_errors = st.oerrors;
	}
	for (unsigned i = 0; i < p->nb_xsk; i++) {
		struct xdp_statistics xs;
		socklen_t len = sizeof(xs);
		memset(&xs, 0, sizeof(xs));
		if (getsockopt(p->xsk_fd[i], SOL_XDP, XDP_STATISTICS, &xs, &len) != 0)
			continue;
		c->xsk = true;
		c->xsk_rx_dropped += xs.rx_dropped;
		c->xsk_rx_invalid += xs.rx_invalid_descs;
		c->xsk_tx_invalid += xs.tx_invalid_descs;
		/* Older kernels return only the first three fields. */
		if (len >= offsetof(struct xdp_statistics, rx_fill_ring_empty_descs))
			c->xsk_rx_ring_full += xs.rx_ring_full;
		if (len >= offsetof(struct xdp_statistics, tx_ring_empty_descs))
			c->xsk_fill_empty += xs.rx_fill_ring_empty_descs;
	}
	if (strncmp(p->devargs, "net_af_packet", 13) == 0 && p->kernel_if[0] != '\0') {
		port_packet_drops(p);
		c->packet = true;
		c->packet_rx_dropped = p->packet_drops;
	}
	if (p->kernel_if[0] != '\0')
		c->kernel = port_read_sys_u64(p->kernel_if, "rx_dropped", &c->kernel_rx_dropped) &&
			    port_read_sys_u64(p->kernel_if, "tx_dropped", &c->kernel_tx_dropped);
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

/* net_af_xdp and net_af_packet open their kernel sockets when the device is probed, one
 * per queue (queue_count, qpairs), and the kernel hands each socket its share of the
 * frames from then on (AF_XDP by the interface's RX queue, AF_PACKET's fanout by flow
 * hash): a queue nobody polls is a silent loss of its flows. */
static bool port_polls_every_queue(const char *driver)
{
	return strcmp(driver, "net_af_xdp") == 0 || strcmp(driver, "net_af_packet") == 0;
}

int port_start(struct port *p, uint16_t nb_workers, struct rte_mempool *pool,
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
	uint16_t q = port_polls_every_queue(info.driver_name) ? info.max_rx_queues : nb_workers;
	if (q > info.max_rx_queues)
		q = info.max_rx_queues;
	if (q > info.max_tx_queues)
		q = info.max_tx_queues;
	if (q == 0) {
		snprintf(err, errlen, "%s: device has no queues", p->name);
		return -EINVAL;
	}
	if (q > PORT_MAX_QUEUES) {
		snprintf(err, errlen, "%s: the device has %u queues, more than the %u a port "
				      "serves: ask it for fewer", p->name, q, PORT_MAX_QUEUES);
		return -EINVAL;
	}
	p->nb_queues = q;
	p->nb_workers = nb_workers;

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
	port_offload_choose(&info, &conf, &p->tx_caps);
	p->gro = true;
	rc = rte_eth_dev_configure(p->eth_port, q, q, &conf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: configure: %s", p->name, strerror(-rc));
		return rc;
	}
	int xsk_before[PORT_MAX_QUEUES * 8];
	unsigned nb_xsk_before = port_socket_list(AF_XDP, xsk_before, RTE_DIM(xsk_before));
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
	if (af_xdp)
		port_xsk_note_new(p, xsk_before, nb_xsk_before);
	port_find_kernel_if(p);
	if (p->hw_rss)
		port_set_reta(p, &info, steer);
	rte_eth_macaddr_get(p->eth_port, &p->mac);
	/* net_ring has no address (all zeros): both ends of a ring pair would then take
	 * each other's frames for their own looped back (eth.bad_src). */
	if (rte_is_zero_ether_addr(&p->mac)) {
		rte_eth_random_addr(p->mac.addr_bytes);
		rte_eth_dev_default_mac_addr_set(p->eth_port, &p->mac);
	}
	if (strcmp(info.driver_name, "net_tap") == 0) {
		char why[160];
		rc = port_tap_kernel_mac(&info, &p->mac, why, sizeof(why));
		if (rc < 0) {
			rte_eth_dev_stop(p->eth_port);
			snprintf(err, errlen, "%s: %s", p->name, why);
			return rc;
		}
	}
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
