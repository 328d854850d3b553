#include "veth_offload.h"

#include <linux/ethtool.h>
#include <net/if.h>
#include <stdio.h>

#include "daemon.h"
#include "kernel_if.h"

/* Whether port p sits on a veth; then its kernel end's name (empty when that end is in
 * another namespace) and index. */
static bool port_veth_peer(const struct port *p, char peer[IF_NAMESIZE], int *peer_index)
{
	if (p->kernel_if[0] == '\0' || !kernel_if_is_veth(p->kernel_if))
		return false;
	kernel_if_veth_peer(p->kernel_if, peer, peer_index);
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
		if (peer[0] == '\0' || kernel_if_ethtool(peer, &tx) != 0 || tx.data == 0)
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
