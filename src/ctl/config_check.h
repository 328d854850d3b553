/* `dpstackd --check-config FILE`, and running a config's commands for the daemon. */
#ifndef DPS_CTL_CONFIG_CHECK_H
#define DPS_CTL_CONFIG_CHECK_H

#include <stdbool.h>

#include "config.h"

/* Runs the config's commands in order, each error reported at its line (config_error).
 * Stops at the first failing one unless keep_going. Returns 0 when all succeeded. */
int config_run_commands(struct daemon *d, struct config *cfg, bool keep_going);

/* Checks path without touching a port: every line with the daemon's grammar, the start-up
 * checks of this machine (startup_check.h), then every command as a dry run (daemon.h) on
 * a master table of a minimal EAL without hugepages, ports or shared files. Errors go to
 * stderr as "FILE:LINE: reason", a summary to stdout when there were none. Returns 0 when
 * the config is good, -1 otherwise. */
int config_check(const char *path);

#endif
