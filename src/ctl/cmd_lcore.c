/* lcore show: which core each worker runs on, which queue it polls and sends on for each
 * port (or which worker sends for it), and how each port's flows reach their owners. */
#include <inttypes.h>

#include "cmd.h"

static const char *port_steering(const struct port *p)
{
	if (p->hw_rss_reta)
		return "hardware RSS (the stack's key and table)";
	if (p->hw_rss)
		return "hardware RSS (device table), then software";
	return "software";
}

int cmd_lcore_show(struct daemon *d, int argc, char **argv, struct ctl_out *o)
{
	(void)argv;
	if (argc != 0)
		return -1;
	if (d->dry_run)
		return 0;
	if (o->json) {
		json_obj_begin(o, NULL);
		json_arr_begin(o, "workers");
	} else {
		ctl_printf(o, "worker lcore  port       rx queue  tx\n");
	}
	for (unsigned w = 0; w < d->nb_workers; w++) {
		const struct worker *wk = &d->workers[w];
		if (o->json) {
			json_obj_begin(o, NULL);
			json_u64(o, "worker", w);
			json_u64(o, "lcore", wk->lcore);
			json_arr_begin(o, "ports");
		}
		for (uint16_t p = 0; p < d->nb_ports; p++) {
			const struct port *dp = &d->ports[p];
			if (!dp->used)
				continue;
			bool own = wk->tx_via[p] < 0;
			if (o->json) {
				json_obj_begin(o, NULL);
				json_str(o, "port", dp->name);
				if (own) {
					json_u64(o, "rx_queue", wk->txq[p]);
					json_u64(o, "tx_queue", wk->txq[p]);
				} else {
					json_u64(o, "tx_via_worker", (uint64_t)wk->tx_via[p]);
				}
				json_obj_end(o);
				continue;
			}
			if (own)
				ctl_printf(o, "%6u %5u  %-10s %8u  queue %u\n", w, wk->lcore, dp->name,
					   wk->txq[p], wk->txq[p]);
			else
				ctl_printf(o, "%6u %5u  %-10s %8s  via worker %d\n", w, wk->lcore,
					   dp->name, "-", wk->tx_via[p]);
		}
		if (o->json) {
			json_arr_end(o);
			json_obj_end(o);
		}
	}
	if (o->json) {
		json_arr_end(o);
		json_arr_begin(o, "ports");
	} else {
		ctl_printf(o, "\nport       queues  steering\n");
	}
	for (uint16_t p = 0; p < d->nb_ports; p++) {
		const struct port *dp = &d->ports[p];
		if (!dp->used)
			continue;
		const char *how = d->nb_workers > 1 ? port_steering(dp) : "one worker";
		if (o->json) {
			json_obj_begin(o, NULL);
			json_str(o, "port", dp->name);
			json_u64(o, "queues", dp->nb_queues);
			json_str(o, "steering", how);
			json_obj_end(o);
		} else {
			ctl_printf(o, "%-10s %6u  %s\n", dp->name, dp->nb_queues, how);
		}
	}
	if (o->json) {
		json_arr_end(o);
		json_obj_end(o);
	}
	return 0;
}
