/* The daemon's clusters from start to stop (cmd_cluster.c). */
#ifndef DPS_CTL_CMD_CLUSTER_H
#define DPS_CTL_CMD_CLUSTER_H

#include <stddef.h>

#include "config.h"
#include "daemon.h"

/* Before the ports start: the cluster manager, and shared packet memory (d->port_pool[p])
 * for each port a `cluster add` line of the config names. Returns 0 or -1 with err. */
int cmd_cluster_start(struct daemon *d, const struct config *cfg, char *err, size_t errlen);
/* Once the workers run: the consumers' socket (DPSTACK_CLUSTER_SOCK), when a port has
 * shared memory. */
int cmd_cluster_listen(struct daemon *d, char *err, size_t errlen);
/* Before the workers stop: every consumer detached, every cluster deleted. */
void cmd_cluster_stop(struct daemon *d);
/* After the ports stopped: their shared memory. */
void cmd_cluster_free(struct daemon *d);

#endif
