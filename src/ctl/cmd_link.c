/* link show / link set: the ports, their DPDK devices and their state. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "cmd.h"
#include "cmd_offload.h"

/* The driver's extended statistics beyond the basic ones (rte_eth_stats and their
 * per-queue split, shown above): in JSON all of them, as text the non-zero ones. */
static bool link_xstat_is_basic(const char *name)
{
	static const char *const basic[] = {"rx_good_packets", "tx_good_packets",
					     "rx_good_bytes", "tx_good_bytes", "rx_missed_errors",
					     "rx_errors", "tx_errors", "rx_mbuf_allocation_errors"};
	for (size_t i = 0; i < RTE_DIM(basic); i++)
		if (strcmp(name, basic[i]) == 0)
			return true;
	unsigned q;
	char what[16], tail;
	return (sscanf(name, "rx_q%u_%15[a-z]%c", &q, what, &tail) == 2 ||
		sscanf(name, "tx_q%u_%15[a-z]%c", &q, what, &tail) == 2) &&
	       (strcmp(what, "packets") == 0 || strcmp(what, "bytes") == 0 ||
		strcmp(what, "errors") == 0);
}

#define LINK_XSTATS_MAX 256

static void link_xstats(struct ctl_out *o, uint16_t eth_port)
{
	static struct rte_eth_xstat_name names[LINK_XSTATS_MAX];
	static struct rte_eth_xstat vals[LINK_XSTATS_MAX];
	int n = rte_eth_xstats_get_names(eth_port, names, LINK_XSTATS_MAX);
	int m = n > 0 && n <= LINK_XSTATS_MAX ? rte_eth_xstats_get(eth_port, vals, (unsigned)n)
					      : 0;
	if (m != n)
		m = 0;
	if (o->json)
		json_obj_begin(o, "xstats");
	bool any = false;
	for (int i = 0; i < m; i++) {
		if (vals[i].id >= (uint64_t)n)
			continue;
		const char *name = names[vals[i].id].name;
		if (o->json) {
			json_u64(o, name, vals[i].value);
		} else if (vals[i].value != 0 && !link_xstat_is_basic(name)) {
			ctl_printf(o, "%s%s %" PRIu64, any ? ", " : "    xstats: ", name,
				   vals[i].value);
			any = true;
		}
	}
	if (o->json)
		json_obj_end(o);
	else if (any)
		ctl_printf(o, "\n");
}

int cmd_link_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	int only = -1;
	if (argc == 1) {
		uint16_t p;
		if (cmd_parse_port(d, argv[0], &p, o) != 0)
			return -1;
		only = p;
	} else if (argc != 0) {
		return -1;
	}
	if (d->dry_run)
		return 0;
	if (o->json)
		json_arr_begin(o, NULL);
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct netcfg_iface *i = &d->master.ifaces[p];
		const struct port *dp = &d->ports[p];
		if (!i->present || (only >= 0 && only != p))
			continue;
		struct rte_eth_link link = {0};
		rte_eth_link_get_nowait(dp->eth_port, &link);
		struct rte_eth_stats st = {0};
		rte_eth_stats_get(dp->eth_port, &st);
		struct stack_port_counters sc;
		struct port_dev_counters dc;
		cmd_port_counters_get(d, p, &sc, &dc);
		char mac[18];
		eth_addr_format(&i->mac, mac, sizeof(mac));
		if (o->json) {
			json_obj_begin(o, NULL);
			json_u64(o, "ifindex", netcfg_ifindex(p));
			json_str(o, "ifname", i->name);
			json_str(o, "device", dp->devargs);
			json_u64(o, "dpdk_port", dp->eth_port);
			json_str(o, "address", mac);
			json_u64(o, "mtu", i->mtu);
			json_bool(o, "admin_up", i->up);
			json_bool(o, "link_up", link.link_status == RTE_ETH_LINK_UP);
			json_u64(o, "speed_mbps", link.link_speed);
			json_u64(o, "queues", dp->nb_queues);
			json_bool(o, "rx_ip_checksum_offload", dp->rx_ip_cksum);
			cmd_offload_json(o, dp);
			json_obj_begin(o, "stats");
			json_u64(o, "rx_packets", st.ipackets);
			json_u64(o, "rx_bytes", st.ibytes);
			json_u64(o, "rx_missed", st.imissed);
			json_u64(o, "rx_errors", st.ierrors);
			json_u64(o, "rx_nombuf", st.rx_nombuf);
			json_u64(o, "tx_packets", st.opackets);
			json_u64(o, "tx_bytes", st.obytes);
			json_u64(o, "tx_errors", st.oerrors);
			/* Every frame lost at the port, by who counted it (cmd_port.c). */
			json_obj_begin(o, "lost");
			cmd_port_losses_json(o, &sc, &dc);
			json_obj_end(o);
			link_xstats(o, dp->eth_port);
			json_obj_end(o);
			cmd_port_kernel_json(o, d, p, &sc);
			json_obj_end(o);
			continue;
		}
		ctl_printf(o, "%u: %s: <%s> mtu %u link %s %u Mbps queues %u\n", netcfg_ifindex(p),
			   i->name, i->up ? "UP" : "DOWN", i->mtu,
			   link.link_status == RTE_ETH_LINK_UP ? "up" : "down", link.link_speed,
			   dp->nb_queues);
		ctl_printf(o, "    link/ether %s device %s (dpdk port %u)\n", mac, dp->devargs,
			   dp->eth_port);
		ctl_printf(o, "    RX: %" PRIu64 " packets %" PRIu64 " bytes %" PRIu64
			      " missed %" PRIu64 " errors %" PRIu64 " nombuf\n",
			   st.ipackets, st.ibytes, st.imissed, st.ierrors, st.rx_nombuf);
		ctl_printf(o, "    TX: %" PRIu64 " packets %" PRIu64 " bytes %" PRIu64 " errors\n",
			   st.opackets, st.obytes, st.oerrors);
		cmd_offload_text(o, dp);
		cmd_port_losses_text(o, "    ", &sc, &dc);
		cmd_port_kernel_text(o, "    ", d, p, &sc);
		link_xstats(o, dp->eth_port);
	}
	if (o->json)
		json_arr_end(o);
	return 0;
}

struct link_op {
	uint16_t port;
	uint16_t mtu;
	bool up;
};

static int link_mtu_on(struct netcfg *c, void *arg)
{
	struct link_op *op = arg;
	return netcfg_iface_set_mtu(c, op->port, op->mtu);
}

static int link_up_master(struct netcfg *c, void *arg)
{
	struct link_op *op = arg;
	return netcfg_iface_set_up(c, op->port, op->up);
}

static int link_up_stack(struct stack *s, void *arg)
{
	struct link_op *op = arg;
	return stack_iface_set_up(s, op->port, op->up);
}

int cmd_link_set(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	struct link_op op;
	if (argc < 2 || cmd_parse_port(d, argv[0], &op.port, o) != 0)
		return -1;
	if (argc == 3 && strcmp(argv[1], "mtu") == 0) {
		uint32_t mtu;
		if (cmd_parse_u32(argv[2], NETCFG_MIN_MTU, NETCFG_MAX_MTU, &mtu, "mtu", o) != 0)
			return -1;
		op.mtu = (uint16_t)mtu;
		/* The device must take it first: it sizes its receive buffers by it. */
		int rc = d->dry_run ? 0 : rte_eth_dev_set_mtu(d->ports[op.port].eth_port, op.mtu);
		if (rc != 0)
			return ctl_error(o, "link set %s mtu %u: the device refused: %s", argv[0],
					 op.mtu, strerror(-rc));
		d->ports[op.port].mtu = op.mtu;
		if (daemon_apply_netcfg(d, link_mtu_on, &op) != 0)
			return -1;
		kernel_follow_port(d, op.port);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "kernel") == 0)
		return cmd_kernel_if_add(d, op.port, argv[2], o);
	if (argc == 3 && (strcmp(argv[1], "offload") == 0 || strcmp(argv[1], "gro") == 0))
		return cmd_offload_set(d, op.port, argv[1], argv[2], o);
	if (argc == 2 && (strcmp(argv[1], "up") == 0 || strcmp(argv[1], "down") == 0)) {
		op.up = strcmp(argv[1], "up") == 0;
		if (daemon_apply(d, link_up_master, link_up_stack, &op) != 0)
			return -1;
		kernel_follow_port(d, op.port);
		return 0;
	}
	return -1;
}
