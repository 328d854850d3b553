/* What the cluster examples share: attach (with the reason on failure), stop on SIGINT,
 * SIGTERM or SIGPIPE, and the receive loop over bursts. */
#ifndef DPS_EXAMPLES_CONSUMER_LOOP_H
#define DPS_EXAMPLES_CONSUMER_LOOP_H

#include <dpstack/cluster.h>
#include <stdbool.h>
#include <stdint.h>

#define CONSUMER_BURST 64

/* Attaches as spec or exits 1 with the daemon's reason; installs the stop signals. */
struct dps_cluster *consumer_attach(const char *prog, const char *spec);

/* Calls on_burst for each burst until limit frames (0: no limit) or a stop signal; every
 * burst is released after on_burst. Returns 0, or 1 when the daemon let the consumer go. */
int consumer_run(struct dps_cluster *c, uint64_t limit,
		 bool (*on_burst)(void *ctx, const struct dps_cluster_frame *f, unsigned n),
		 void *ctx);

/* The whole life of a consumer that sends: attaches as spec (the handle in *handle, for
 * on_burst), runs, prints "LABEL N" with *count at the end, detaches. Returns as
 * consumer_run. */
int consumer_run_counted(const char *prog, const char *spec, uint64_t limit,
			 bool (*on_burst)(void *ctx, const struct dps_cluster_frame *f, unsigned n),
			 void *ctx, struct dps_cluster **handle, const char *label,
			 const uint64_t *count);

/* True once a stop signal came. */
bool consumer_stopping(void);

#endif
