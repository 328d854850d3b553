#include "kernel_follow.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "daemon.h"
#include "rtnl.h"

void kernel_follow_port(struct daemon *d, uint16_t p)
{
	struct kernel_follow *f = &d->follow;
	const struct exception_if *k = &d->ports[p].kernel;
	if (d->dry_run || p >= d->nb_ports || !k->used)
		return;
	/* Looked for each time: the kernel side may move it to another namespace and back. */
	f->away[p] = if_nametoindex(k->ifname) == 0;
	if (f->away[p]) {
		/* Whatever comes back under that name gets both again. */
		f->mtu[p] = 0;
		f->carrier[p] = -1;
		return;
	}
	struct rte_eth_link link = {0};
	rte_eth_link_get_nowait(d->ports[p].eth_port, &link);
	bool carrier = d->master.ifaces[p].up && link.link_status == RTE_ETH_LINK_UP;
	uint16_t mtu = d->master.ifaces[p].mtu;
	if (f->mtu[p] == mtu && f->carrier[p] == carrier)
		return;
	int rc = rtnl_link_set(k->ifname, f->mtu[p] != mtu ? mtu : 0, f->carrier[p] != carrier,
			       carrier);
	if (rc == -ENODEV) /* gone between the two looks: the next one sees it so */
		return;
	/* Said once per change, not at every look. */
	if (rc != 0)
		fprintf(stderr, "dpstackd: kernel interface %s: MTU %u, carrier %s: %s\n", k->ifname,
			mtu, carrier ? "on" : "off", strerror(-rc));
	f->mtu[p] = mtu;
	f->carrier[p] = carrier;
}

void kernel_follow_tick(struct daemon *d)
{
	for (uint16_t p = 0; p < d->nb_ports; p++)
		kernel_follow_port(d, p);
}
