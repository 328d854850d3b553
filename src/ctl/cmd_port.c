/* One port's counters, the same in `link show` and `stats`: what the stacks counted on it
 * (summed over the workers) and what the device and the kernel under it know of frames
 * lost there (port_dev_counters_get), so a frame lost at a port is a named counter in
 * both places. */
#include <inttypes.h>
#include <string.h>

#include "cmd.h"

void cmd_port_counters_add(struct stack_port_counters *sum, const struct stack_port_counters *c)
{
	sum->rx_packets += c->rx_packets;
	sum->rx_bytes += c->rx_bytes;
	sum->tx_packets += c->tx_packets;
	sum->tx_bytes += c->tx_bytes;
	sum->tx_dropped += c->tx_dropped;
	sum->to_kernel += c->to_kernel;
	sum->from_kernel += c->from_kernel;
	sum->kernel_dropped += c->kernel_dropped;
}

/* The exception path's side of port p (src/dp/exception.h): frames each way, frames lost
 * on the way to the kernel (its queue full, no mbuf for a copy) and what the kernel
 * interface's device says it could not send or receive. False when p has none. */
static bool port_kernel_get(struct daemon *d, uint16_t p, struct rte_eth_stats *st)
{
	const struct exception_if *k = &d->ports[p].kernel;
	memset(st, 0, sizeof(*st));
	if (!k->used)
		return false;
	rte_eth_stats_get(k->eth_port, st);
	return true;
}

void cmd_port_kernel_json(struct ctl_out *o, struct daemon *d, uint16_t p,
			  const struct stack_port_counters *sc)
{
	struct rte_eth_stats st;
	if (!port_kernel_get(d, p, &st))
		return;
	const struct exception_if *k = &d->ports[p].kernel;
	json_obj_begin(o, "kernel");
	json_str(o, "ifname", k->ifname);
	json_str(o, "device", k->vhost ? "virtio_user" : "tap");
	json_u64(o, "to_kernel", sc->to_kernel);
	json_u64(o, "from_kernel", sc->from_kernel);
	json_u64(o, "dropped", sc->kernel_dropped);
	json_u64(o, "device_tx_errors", st.oerrors);
	json_u64(o, "device_rx_missed", st.imissed);
	json_bool(o, "in_namespace", !d->follow.away[p]);
	uint64_t v;
	if (port_read_sys_u64(k->ifname, "tx_dropped", &v))
		json_u64(o, "linux_tx_dropped", v);
	json_obj_end(o);
}

void cmd_port_kernel_text(struct ctl_out *o, const char *indent, struct daemon *d, uint16_t p,
			  const struct stack_port_counters *sc)
{
	struct rte_eth_stats st;
	if (!port_kernel_get(d, p, &st))
		return;
	const struct exception_if *k = &d->ports[p].kernel;
	ctl_printf(o, "%skernel %s (%s): to %" PRIu64 ", from %" PRIu64 ", dropped %" PRIu64
		      ", device tx_errors %" PRIu64 ", rx_missed %" PRIu64,
		   indent, k->ifname, k->vhost ? "virtio_user" : "tap", sc->to_kernel,
		   sc->from_kernel, sc->kernel_dropped, st.oerrors, st.imissed);
	/* What Linux could not hand us (its queue to the device full): seen only while the
	 * interface is in the daemon's network namespace. */
	uint64_t v;
	if (port_read_sys_u64(k->ifname, "tx_dropped", &v))
		ctl_printf(o, ", linux tx_dropped %" PRIu64, v);
	/* Then it follows neither the port's MTU and carrier nor feeds the sync. */
	if (d->follow.away[p])
		ctl_printf(o, ", not in dpstackd's network namespace");
	ctl_printf(o, "\n");
}

void cmd_port_counters_get(struct daemon *d, uint16_t p, struct stack_port_counters *sc,
			   struct port_dev_counters *dc)
{
	memset(sc, 0, sizeof(*sc));
	for (unsigned w = 0; w < d->nb_workers; w++)
		cmd_port_counters_add(sc, &d->workers[w].stack->ports[p]);
	port_dev_counters_get(&d->ports[p], dc);
}

/* Whether the layer that fills counter name says anything on this port. */
static bool port_counter_known(const struct port_dev_counters *dc, const char *name)
{
	if (strncmp(name, "xsk_", 4) == 0)
		return dc->xsk;
	if (strncmp(name, "kernel_", 7) == 0)
		return dc->kernel;
	if (strncmp(name, "packet_", 7) == 0)
		return dc->packet;
	return true;
}

void cmd_port_losses_json(struct ctl_out *o, const struct stack_port_counters *sc,
			  const struct port_dev_counters *dc)
{
	json_u64(o, "tx_dropped", sc->tx_dropped);
#define PORT_DEV_JSON(f, text) \
	if (port_counter_known(dc, #f)) \
		json_u64(o, #f, dc->f);
	PORT_DEV_COUNTER_LIST(PORT_DEV_JSON)
#undef PORT_DEV_JSON
}

static void port_loss_item(struct ctl_out *o, const char *indent, unsigned *n, const char *name,
			   uint64_t v)
{
	if (*n != 0 && *n % 4 == 0)
		ctl_printf(o, ",\n%s      %s %" PRIu64, indent, name, v);
	else
		ctl_printf(o, "%s%s %" PRIu64, *n == 0 ? "" : ", ", name, v);
	++*n;
}

void cmd_port_losses_text(struct ctl_out *o, const char *indent,
			  const struct stack_port_counters *sc, const struct port_dev_counters *dc)
{
	unsigned n = 0;
	ctl_printf(o, "%slost: ", indent);
	port_loss_item(o, indent, &n, "tx_dropped", sc->tx_dropped);
#define PORT_DEV_TEXT(f, text) \
	if (port_counter_known(dc, #f)) \
		port_loss_item(o, indent, &n, #f, dc->f);
	PORT_DEV_COUNTER_LIST(PORT_DEV_TEXT)
#undef PORT_DEV_TEXT
	ctl_printf(o, "\n");
}
