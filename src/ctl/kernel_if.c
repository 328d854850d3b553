#include "kernel_if.h"

#include <dirent.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static bool read_sys_int(const char *ifname, const char *attr, int *v)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%s/%s", ifname, attr);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return false;
	bool ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok;
}

int kernel_if_ethtool(const char *ifname, void *cmd)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct ifreq ifr = {.ifr_data = cmd};
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	int rc = ioctl(fd, SIOCETHTOOL, &ifr);
	close(fd);
	return rc;
}

bool kernel_if_is_veth(const char *ifname)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	return kernel_if_ethtool(ifname, &info) == 0 && strcmp(info.driver, "veth") == 0;
}

unsigned kernel_if_rx_queues(const char *ifname)
{
	char path[128];
	snprintf(path, sizeof(path), "/sys/class/net/%s/queues", ifname);
	DIR *dir = opendir(path);
	if (dir == NULL)
		return 0;
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(dir)) != NULL)
		n += strncmp(e->d_name, "rx-", 3) == 0;
	closedir(dir);
	return n;
}

unsigned kernel_if_combined_channels(const char *ifname)
{
	struct ethtool_channels ch = {.cmd = ETHTOOL_GCHANNELS};
	return kernel_if_ethtool(ifname, &ch) == 0 ? ch.combined_count : 0;
}

void kernel_if_veth_peer(const char *ifname, char peer[IF_NAMESIZE], int *peer_index)
{
	int index = 0, back = 0;
	peer[0] = '\0';
	*peer_index = 0;
	if (!read_sys_int(ifname, "ifindex", &index) || !read_sys_int(ifname, "iflink", peer_index))
		return;
	char name[IF_NAMESIZE];
	if (if_indextoname((unsigned)*peer_index, name) != NULL &&
	    read_sys_int(name, "iflink", &back) && back == index)
		memcpy(peer, name, IF_NAMESIZE);
}
