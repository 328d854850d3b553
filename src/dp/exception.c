#include "exception.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>


#define EXCEPTION_DESC 1024
#define EXCEPTION_VHOST_NET "/dev/vhost-net"

/* SIOCSIFHWADDR / SIOCSIFFLAGS on the Linux side: the tap PMD gives its interface the MAC
 * of the devargs, but virtio-user's vhost backend makes a tap with a random one. */
static int exception_kernel_setup(const char *ifname, const struct rte_ether_addr *mac)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int rc = 0;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) == 0 &&
	    memcmp(ifr.ifr_hwaddr.sa_data, mac->addr_bytes, RTE_ETHER_ADDR_LEN) != 0) {
		ifr.ifr_hwaddr.sa_family = 1; /* ARPHRD_ETHER */
		memcpy(ifr.ifr_hwaddr.sa_data, mac->addr_bytes, RTE_ETHER_ADDR_LEN);
		if (ioctl(fd, SIOCSIFHWADDR, &ifr) != 0)
			rc = -errno;
	}
	if (rc == 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && !(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) != 0)
			rc = -errno;
	}
	close(fd);
	return rc;
}

static int exception_if_configure(struct exception_if *k, uint16_t nb_queues,
				  struct rte_mempool *pool, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(k->eth_port, &info);
	if (rc < 0) {
		snprintf(err, errlen, "kernel interface %s: device info: %s", k->ifname,
			 strerror(-rc));
		return rc;
	}
	uint16_t dev_max = RTE_MIN(info.max_rx_queues, info.max_tx_queues);
	uint16_t q = RTE_MIN(nb_queues, dev_max);
	if (q == 0) {
		snprintf(err, errlen, "kernel interface %s: device has no queues", k->ifname);
		return -EINVAL;
	}
	struct rte_eth_conf conf = {0};
	k->tx_multi_seg = (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) != 0;
	if (k->tx_multi_seg)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	rc = rte_eth_dev_configure(k->eth_port, q, q, &conf);
	uint16_t rxd = EXCEPTION_DESC, txd = EXCEPTION_DESC;
	if (rc == 0)
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(k->eth_port, &rxd, &txd);
	int socket = rte_eth_dev_socket_id(k->eth_port);
	for (uint16_t i = 0; rc == 0 && i < q; i++) {
		rc = rte_eth_rx_queue_setup(k->eth_port, i, rxd, socket, NULL, pool);
		if (rc == 0)
			rc = rte_eth_tx_queue_setup(k->eth_port, i, txd, socket, NULL);
	}
	if (rc == 0)
		rc = rte_eth_dev_start(k->eth_port);
	if (rc < 0) {
		snprintf(err, errlen, "kernel interface %s: %s", k->ifname, strerror(-rc));
		return rc;
	}
	k->nb_queues = q;
	return 0;
}

int exception_if_start(struct exception_if *k, unsigned port_index,
		       const struct rte_ether_addr *mac, uint16_t nb_queues,
		       struct rte_mempool *pool, char *err, size_t errlen)
{
	char mac_text[RTE_ETHER_ADDR_FMT_SIZE];
	rte_ether_format_addr(mac_text, sizeof(mac_text), mac);
	char args[160];
	/* vhost-net where the kernel has it: its own thread moves the frames, with no signal
	 * per packet (DPDK's virtio_user guide, "as exception path"). */
	k->vhost = access(EXCEPTION_VHOST_NET, R_OK | W_OK) == 0;
	if (k->vhost) {
		snprintf(k->vdev, sizeof(k->vdev), "net_virtio_user_exc%u", port_index);
		snprintf(args, sizeof(args), "path=%s,iface=%s,queues=%u,queue_size=%u,mac=%s",
			 EXCEPTION_VHOST_NET, k->ifname, nb_queues, EXCEPTION_DESC, mac_text);
	} else {
		snprintf(k->vdev, sizeof(k->vdev), "net_tap_exc%u", port_index);
		snprintf(args, sizeof(args), "iface=%s,mac=%s", k->ifname, mac_text);
	}
	if (if_nametoindex(k->ifname) != 0) {
		snprintf(err, errlen, "kernel interface %s: an interface of that name exists",
			 k->ifname);
		return -EEXIST;
	}
	int rc = rte_vdev_init(k->vdev, args);
	if (rc < 0 || rte_eth_dev_get_port_by_name(k->vdev, &k->eth_port) != 0) {
		snprintf(err, errlen, "kernel interface %s: cannot create %s,%s (%s)", k->ifname,
			 k->vdev, args, strerror(rc < 0 ? -rc : ENODEV));
		if (rc == 0)
			rte_vdev_uninit(k->vdev);
		return rc < 0 ? rc : -ENODEV;
	}
	k->used = true;
	rc = exception_if_configure(k, nb_queues, pool, err, errlen);
	if (rc == 0 && (rc = exception_kernel_setup(k->ifname, mac)) != 0)
		snprintf(err, errlen, "kernel interface %s: MAC or link: %s", k->ifname,
			 strerror(-rc));
	if (rc != 0)
		exception_if_stop(k);
	return rc;
}

void exception_if_stop(struct exception_if *k)
{
	if (!k->used)
		return;
	rte_eth_dev_stop(k->eth_port);
	/* The driver's remove closes the device: the Linux interface goes with its file. */
	rte_vdev_uninit(k->vdev);
	k->used = false;
}
