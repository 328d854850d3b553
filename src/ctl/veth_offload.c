#include "veth_offload.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

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

static int ethtool(const char *ifname, void *cmd)
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

static bool is_veth(const char *ifname)
{
	struct ethtool_drvinfo info = {.cmd = ETHTOOL_GDRVINFO};
	return ethtool(ifname, &info) == 0 && strcmp(info.driver, "veth") == 0;
}

/* The other end of veth ifname: its name when it is in this namespace (its iflink points
 * back at ifname), "" otherwise; its ifindex in *peer_index either way. */
static void veth_peer(const char *ifname, char peer[IF_NAMESIZE], int *peer_index)
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

/* Whether port p sits on a veth; then its kernel end's name (empty when that end is in
 * another namespace) and index. */
static bool port_veth_peer(const struct port *p, char peer[IF_NAMESIZE], int *peer_index)
{
	if (p->kernel_if[0] == '\0' || !is_veth(p->kernel_if))
		return false;
	veth_peer(p->kernel_if, peer, peer_index);
	return true;
}

void veth_offload_check_ports(struct veth_offload_watch *w, const struct daemon *d)
{
	for (unsigned i = 0; i < d->nb_ports; i++) {
		const struct port *p = &d->ports[i];
		char peer[IF_NAMESIZE];
		int peer_index;
		if (!port_veth_peer(p, peer, &peer_index))
			continue;
		struct ethtool_value tx = {.cmd = ETHTOOL_GTXCSUM};
		if (peer[0] == '\0' || ethtool(peer, &tx) != 0 || tx.data == 0)
			continue;
		w->warned = true;
		fprintf(stderr, "dpstackd: port %s: %s, the kernel end of veth %s, has TX "
				"checksum offload on: its TCP and UDP frames arrive with partial "
				"checksums, which the stack drops; run 'ethtool -K %s tx off'\n",
			p->name, peer, p->kernel_if, peer);
	}
}

void veth_offload_tick(struct veth_offload_watch *w, const struct daemon *d)
{
	if (w->warned || d->dry_run || !d->workers_running)
		return;
	uint64_t bad = 0;
	for (unsigned i = 0; i < d->nb_workers; i++) {
		const struct stack *s = d->workers[i].stack;
		bad += s->drops[STACK_DROP_TCP_BAD_CHECKSUM] + s->drops[STACK_DROP_UDP_BAD_CHECKSUM];
	}
	if (bad == 0)
		return;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		const struct port *p = &d->ports[i];
		char peer[IF_NAMESIZE];
		int peer_index;
		if (!port_veth_peer(p, peer, &peer_index))
			continue;
		fprintf(stderr, "dpstackd: %lu TCP/UDP segment(s) dropped for a bad checksum; "
				"port %s is on veth %s, whose kernel end ", (unsigned long)bad,
			p->name, p->kernel_if);
		if (peer[0] != '\0')
			fprintf(stderr, "%s may have TX checksum offload on (partial checksums): "
					"run 'ethtool -K %s tx off'\n", peer, peer);
		else
			fprintf(stderr, "(ifindex %d in another network namespace) may have TX "
					"checksum offload on (partial checksums): run 'ethtool -K "
					"<that interface> tx off' in its namespace\n", peer_index);
	}
	w->warned = true;
}
