/* The test applications' one way in: ARGV0 NAME ARG..., NAME picked from a table that says
 * how many arguments it takes. Header only: the applications link nothing of each other's
 * (preload_surface is a plain program, the others link libdpstack). */
#ifndef DPS_TEST_APP_CMD_H
#define DPS_TEST_APP_CMD_H

#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct app_cmd {
	const char *name;
	int nargs;                      /* exactly this many after the name */
	int (*fn)(char **args);         /* args: those after the name */
};

/* Runs the command argv names and returns what it returns; 2, with usage on stderr, when
 * no entry of cmds[0..n) has that name and that many arguments. */
static inline int app_cmd_run(const struct app_cmd *cmds, size_t n, int argc, char **argv,
			      const char *usage)
{
	for (size_t i = 0; argc >= 2 && i < n; i++)
		if (strcmp(argv[1], cmds[i].name) == 0 && argc - 2 == cmds[i].nargs)
			return cmds[i].fn(argv + 2);
	fprintf(stderr, "usage: %s\n", usage);
	return 2;
}

#endif
