/* lcore show: which core each worker runs on, which queues it polls and sends on for each
 * port (or which worker sends for it), and how each port's flows reach their owners. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* The RX queues of port p that worker w polls, as "0,2" (JSON: an array under key). */
static void lcore_rx_queues(const struct worker *w, uint16_t p, struct ctl_out *o,
			    char *text, size_t len)
{
	text[0] = '\0';
	if (o->json)
		json_arr_begin(o, "rx_queues");
	for (unsigned i = 0; i < w->nb_rxq; i++) {
		if (w->rxq[i].port != p)
			continue;
		if (o->json) {
			json_u64(o, NULL, w->rxq[i].queue);
			continue;
		}
		size_t n = strlen(text);
		snprintf(text + n, len - n, "%s%u", n == 0 ? "" : ",", w->rxq[i].queue);
	}
	if (o->json)
		json_arr_end(o);
}

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
		ctl_printf(o, "worker lcore  port       rx queues  tx\n");
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
			char rx[PORT_MAX_QUEUES * 4];
			if (o->json) {
				json_obj_begin(o, NULL);
				json_str(o, "port", dp->name);
				if (own) {
					/* rx_queue: the first, as before ports had more queues
					 * than workers. */
					json_u64(o, "rx_queue", wk->txq[p]);
					lcore_rx_queues(wk, p, o, rx, sizeof(rx));
					json_u64(o, "tx_queue", wk->txq[p]);
				} else {
					json_u64(o, "tx_via_worker", (uint64_t)wk->tx_via[p]);
				}
				json_obj_end(o);
				continue;
			}
			lcore_rx_queues(wk, p, o, rx, sizeof(rx));
			if (own)
				ctl_printf(o, "%6u %5u  %-10s %9s  queue %u\n", w, wk->lcore, dp->name,
					   rx, wk->txq[p]);
			else
				ctl_printf(o, "%6u %5u  %-10s %9s  via worker %d\n", w, wk->lcore,
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
