/* The monitor's numbers: two `stats` replies of the daemon (JSON), taken an interval apart,
 * and the rates between them. The daemon keeps only counters; every rate is computed here,
 * over the interval the client measured. */
#ifndef DPS_TOOLS_MONITOR_RATES_H
#define DPS_TOOLS_MONITOR_RATES_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ctl_client.h"
#include "json_tree.h"

/* One `stats -j` reply, parsed (the tree points into body). */
struct mon_snap {
	char *body;
	struct json_tree tree;
	struct timespec mono;   /* when it arrived: CLOCK_MONOTONIC, for the interval */
	struct timespec wall;   /* and CLOCK_REALTIME, for the timestamp */
};

/* Asks the daemon at path for its counters. Returns 0, or -1 with the reason in err. */
int mon_snap_take(struct mon_snap *s, const char *path, char err[CTL_CLIENT_ERR_MAX]);
void mon_snap_free(struct mon_snap *s);

/* A named rate: a drop reason, or a port's loss counter. name points into a snapshot. */
struct mon_rate {
	const char *name;
	double per_s;
};

/* Non-zero rates only, so the screen stays readable. */
struct mon_rates {
	struct mon_rate *v;
	size_t n;
	double sum;
};

struct mon_traffic {
	double rx_pps, rx_bps, tx_pps, tx_bps;
};

struct mon_port_view {
	const char *name;
	struct mon_traffic traffic;
	struct mon_rates losses;   /* the port's loss counters (`link show`'s "lost:") */
};

struct mon_worker_view {
	uint64_t worker, lcore;
	struct mon_traffic traffic;
	/* The share of the loop's cycles spent in iterations that did work (worker.h
	 * busy_cycles), not of the CPU, which a busy-polling worker always fills. */
	double busy_pct;
	uint64_t tcp_established, tcp_conns, udp_socks;
	struct mon_rates drops;    /* the worker's stack's drops by reason */
	struct mon_rates losses;   /* what its loop lost besides (a peer's full ring) */
};

struct mon_view {
	double interval_s;
	struct timespec wall;
	struct mon_port_view *ports;
	size_t nb_ports;
	struct mon_worker_view *workers;
	size_t nb_workers;
	struct mon_rates drops;    /* every worker's drops by reason, summed */
};

/* The rates from prev to cur. The view points into cur, which must outlive it. Returns 0 or
 * -ENOMEM. */
int mon_view_build(struct mon_view *v, const struct mon_snap *prev, const struct mon_snap *cur);
void mon_view_free(struct mon_view *v);

#endif
