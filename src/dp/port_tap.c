#include "port_tap.h"

#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

int port_tap_kernel_mac(const struct rte_eth_dev_info *info, const struct rte_ether_addr *mac,
			char *err, size_t errlen)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	if (info->if_index == 0 || if_indextoname(info->if_index, ifr.ifr_name) == NULL) {
		snprintf(err, errlen, "the tap's kernel interface (ifindex %u) is gone",
			 info->if_index);
		return -ENODEV;
	}
	struct rte_ether_addr kmac;
	do
		rte_eth_random_addr(kmac.addr_bytes);
	while (rte_is_same_ether_addr(&kmac, mac));
	ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
	memcpy(ifr.ifr_hwaddr.sa_data, kmac.addr_bytes, RTE_ETHER_ADDR_LEN);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rc = fd >= 0 && ioctl(fd, SIOCSIFHWADDR, &ifr) == 0 ? 0 : -errno;
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		snprintf(err, errlen, "cannot give the tap's kernel interface %s an address of "
				      "its own: %s", ifr.ifr_name, strerror(-rc));
	return rc;
}
