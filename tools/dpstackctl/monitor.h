/* dpstackctl monitor [-j] [interval SEC] [count N]: the daemon's rates per port and worker,
 * refreshed every interval like top (a plain-ANSI screen, so it works over ssh; q or Ctrl-C
 * quits and gives the terminal back as it was, Ctrl-Z until fg), or with -j one JSON object per interval and
 * line. Exit status as dpstackctl's: 0, or 2 for a usage error or a daemon that went away. */
#ifndef DPS_TOOLS_MONITOR_H
#define DPS_TOOLS_MONITOR_H

#include <stdbool.h>

int monitor_main(const char *ctl_path, bool json, int argc, char **argv);

#endif
