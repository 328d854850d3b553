/* The config file (DESIGN.md): `eal ARGS…`, `workers N|LIST`, `port add NAME DEVICE`,
 * `mbufs N`, `idle-sleep-us N`, `tcp-listeners N`, `routes N`, then any dpstackctl
 * command. Lines are split on white space; `#` starts a comment. */
#ifndef DPS_CTL_CONFIG_H
#define DPS_CTL_CONFIG_H

#include <stddef.h>
#include <stdio.h>

#include "daemon.h"

#define CONFIG_MAX_WORDS 64

/* A command from the config, run once the ports and workers are up. */
struct config_cmd {
	unsigned lineno;
	int argc;
	char *argv[CONFIG_MAX_WORDS];
};

struct config {
	const char *path;
	struct config_cmd *cmds;
	size_t nb_cmds;
	/* Where the start-up directives were, for errors found once all are known. */
	unsigned eal_line, workers_line, mbufs_line;
	unsigned port_lines[NETCFG_MAX_PORTS];
	/* Errors go to errs as "<prefix>FILE:LINE: message", one a line. */
	FILE *errs;
	const char *prefix;
	unsigned nb_errors;
};

/* The settings of a config that says nothing: one worker, the default pool and tables. */
void config_defaults(struct daemon *d);

/* Reads path, applies the start-up directives to d and keeps the commands in cfg. Every line
 * is checked and every error reported (config_error). Returns 0, or -1 when there was an
 * error. What was read is kept either way: config_free() it. */
int config_load(const char *path, struct daemon *d, struct config *cfg, FILE *errs,
		const char *prefix);
void config_free(struct config *cfg, struct daemon *d);

/* Reports one error of the config at lineno (0: of the file as a whole) and counts it.
 * Returns -1. */
__attribute__((format(printf, 3, 4)))
int config_error(struct config *cfg, unsigned lineno, const char *fmt, ...);

/* A Linux interface name (dev_valid_name: 1 to IF_NAMESIZE-1 bytes, no '/', ':' or white
 * space, not "." or "..") that is also safe inside a devargs string (no ',' or '='): the
 * IFNAME of a port's kernel interface. */
bool config_kernel_ifname_valid(const char *name);

/* Splits line in place on white space, stopping at '#'. Returns the word count, or -1 when
 * there are more than max words. */
int config_split(char *line, char **argv, int max);

#endif
