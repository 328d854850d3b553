#include "port_queues.h"

#include <stdio.h>
#include <string.h>

#include "dp/port_devargs.h"
#include "kernel_if.h"

/* What makes the interface deliver on queue 0 alone, which one AF_XDP socket serves. */
static void one_queue_fix(const char *ifname, const struct port_queues_if *k, char *fix,
			  size_t len)
{
	if (!k->veth) {
		snprintf(fix, len, "make it receive on one queue: 'ethtool -L %s combined 1' (or "
				   "'rx 1' where the driver counts RX channels apart)", ifname);
		return;
	}
	/* A veth receives on the queue its other end sent from, and refuses an XDP program
	 * while that end has more TX queues than it has RX queues. */
	bool here = k->veth_peer[0] != '\0';
	snprintf(fix, len, "a veth gives DPDK 22.11's net_af_xdp one queue: run 'ethtool -L %s "
			   "tx 1' (%s) and 'ethtool -L %s rx 1', or create the pair with one "
			   "queue each (ip link add's default)", here ? k->veth_peer : "PEER",
		 here ? "the veth's other end" : "PEER: the veth's other end, in its namespace",
		 ifname);
}

int port_queues_plan(char *devargs, size_t len, const char *ifname,
		     const struct port_queues_if *k, char *err, size_t errlen)
{
	unsigned n = k->rx_queues;
	unsigned start = 0, count = 1;
	bool has_start = port_devargs_uint(devargs, "start_queue", &start);
	bool has_count = port_devargs_uint(devargs, "queue_count", &count);
	if (n <= 1)
		return 0;       /* one queue, or no interface (the PMD names that) */
	if (!has_start && !has_count && k->combined >= n) {
		if (n > PORT_MAX_QUEUES) {
			snprintf(err, errlen, "interface %s has %u RX queues, more than the %u a "
					      "port serves: reduce them, e.g. 'ethtool -L %s combined "
					      "N' with N the number of workers", ifname, n,
				 PORT_MAX_QUEUES, ifname);
			return -1;
		}
		char v[12];
		snprintf(v, sizeof(v), "%u", n);
		if (port_devargs_append(devargs, len, "queue_count", v) != 0) {
			snprintf(err, errlen, "device string too long to add queue_count=%u", n);
			return -1;
		}
		return 0;
	}
	if (start == 0 && count >= n)
		return 0;
	char fix[320];
	if (k->combined >= n)
		snprintf(fix, sizeof(fix), "leave out queue_count and start_queue (dpstackd then "
					   "serves all %u), or reduce the queues with 'ethtool -L %s "
					   "combined N' and give queue_count=N", n, ifname);
	else
		one_queue_fix(ifname, k, fix, sizeof(fix));
	char served[32];
	if (count == 1)
		snprintf(served, sizeof(served), "queue %u", start);
	else
		snprintf(served, sizeof(served), "queues %u-%u", start, start + count - 1);
	snprintf(err, errlen, "interface %s receives on %u RX queues but this port serves %s: "
			      "frames on the others would reach the kernel, not the stack; %s",
		 ifname, n, served, fix);
	return -1;
}

unsigned port_queues_check(struct daemon *d, struct config *cfg)
{
	unsigned errors = 0;
	for (unsigned i = 0; i < d->nb_ports; i++) {
		struct port *p = &d->ports[i];
		char ifname[IF_NAMESIZE], err[640];
		if (!port_devargs_driver_is(p->devargs, "net_af_xdp") ||
		    !port_devargs_value(p->devargs, "iface", ifname, sizeof(ifname)))
			continue;
		struct port_queues_if k = {.rx_queues = kernel_if_rx_queues(ifname),
					   .combined = kernel_if_combined_channels(ifname),
					   .veth = kernel_if_is_veth(ifname)};
		if (k.veth) {
			int peer_index;
			kernel_if_veth_peer(ifname, k.veth_peer, &peer_index);
		}
		if (port_queues_plan(p->devargs, sizeof(p->devargs), ifname, &k, err,
				     sizeof(err)) != 0) {
			config_error(cfg, cfg->port_lines[i], "port %s: %s", p->name, err);
			errors++;
		}
	}
	return errors;
}
