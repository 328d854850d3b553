#include "cmd_offload.h"

#include <string.h>

#include "dp/port_offload.h"

struct offload_op {
	uint16_t port;
	struct stack_tx_caps caps;   /* what the stacks may leave to the port from now on */
	bool gro;
};

static int offload_on_stack(struct stack *s, void *arg)
{
	const struct offload_op *op = arg;
	s->tx_caps[op->port] = op->caps;
	s->rx_gro[op->port] = op->gro;
	return 0;
}

int cmd_offload_set(struct daemon *d, uint16_t port, const char *what, const char *value,
		    struct ctl_out *o)
{
	bool offload = strcmp(what, "offload") == 0;
	if ((!offload && strcmp(what, "gro") != 0) ||
	    (strcmp(value, "on") != 0 && strcmp(value, "off") != 0))
		return -1;
	bool on = strcmp(value, "on") == 0;
	struct port *p = &d->ports[port];
	if (d->dry_run)
		return 0;
	if (offload)
		p->tx_offload_off = !on;
	else
		p->gro = on;
	/* The device keeps its offloads configured (changing them would mean stopping it):
	 * the stacks stop or resume asking for them, frame by frame. */
	struct offload_op op = {.port = port, .gro = p->gro};
	if (!p->tx_offload_off)
		op.caps = p->tx_caps;
	(void)o;
	return daemon_each_worker(d, offload_on_stack, &op) == 0 ? 0 : -1;
}

void cmd_offload_json(struct ctl_out *o, const struct port *p)
{
	json_obj_begin(o, "offloads");
	json_bool(o, "tx_ip4_checksum", p->tx_caps.ip4_cksum);
	json_bool(o, "tx_tcp_checksum", p->tx_caps.tcp_cksum);
	json_bool(o, "tx_udp_checksum", p->tx_caps.udp_cksum);
	json_bool(o, "tso", p->tx_caps.tso_max != 0);
	json_u64(o, "tso_max", p->tx_caps.tso_max);
	json_bool(o, "tx_in_use", !p->tx_offload_off);
	json_bool(o, "rx_ip4_checksum", p->rx_ip_cksum);
	json_bool(o, "gro", p->gro);
	json_obj_end(o);
}

void cmd_offload_text(struct ctl_out *o, const struct port *p)
{
	char tx[64];
	port_offload_format(&p->tx_caps, tx, sizeof(tx));
	ctl_printf(o, "    offload tx: %s%s  rx: %s  gro %s\n", tx,
		   p->tx_offload_off ? " (off: link set)" : "",
		   p->rx_ip_cksum ? "ip4-csum" : "none", p->gro ? "on" : "off");
}
