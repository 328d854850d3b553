/* The config file (DESIGN.md): `eal ARGS…`, `workers N|LIST`, `port add NAME DEVICE`,
 * `mbufs N`, `idle-sleep-us N`, then any dpstackctl command. Lines are split on white space;
 * `#` starts a comment. */
#ifndef DPS_CTL_CONFIG_H
#define DPS_CTL_CONFIG_H

#include <stddef.h>

#include "daemon.h"

#define CONFIG_MAX_WORDS 64

/* A command from the config, run once the ports and workers are up. */
struct config_cmd {
	unsigned lineno;
	int argc;
	char *argv[CONFIG_MAX_WORDS];
};

struct config {
	char *path;
	struct config_cmd *cmds;
	size_t nb_cmds;
};

/* Reads path, applies the start-up directives to d and keeps the commands in cfg. Returns 0,
 * or -1 with "FILE:LINE: message" in err; nothing is kept on error. */
int config_load(const char *path, struct daemon *d, struct config *cfg, char *err, size_t errlen);
void config_free(struct config *cfg, struct daemon *d);

/* Splits line in place on white space, stopping at '#'. Returns the word count, or -1 when
 * there are more than max words. */
int config_split(char *line, char **argv, int max);

#endif
