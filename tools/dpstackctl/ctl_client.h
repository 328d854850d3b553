/* One request to dpstackd over its control socket (include/dpstack/ctl.h), for the one-shot
 * commands of dpstackctl and for the monitor, which asks again every interval. Errors are
 * written into the caller's buffer, not printed: the monitor restores the terminal first. */
#ifndef DPS_TOOLS_CTL_CLIENT_H
#define DPS_TOOLS_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#define CTL_CLIENT_ERR_MAX 256

/* Connects to path, sends the command words argv[0..argc) asking for JSON or text, and
 * returns the connected socket; a receive waits at most timeout_s seconds. -1 with the
 * reason in err when the daemon cannot be reached or the command is malformed. */
int ctl_client_send(const char *path, bool json, int argc, char *const argv[], int timeout_s,
		    char err[CTL_CLIENT_ERR_MAX]);

/* Reads the answer's status line: 1 "ok", 0 "error" (the body is the message), -1 none (the
 * daemon went away or timed out; the reason in err). */
int ctl_client_status(int fd, const char *path, char err[CTL_CLIENT_ERR_MAX]);

/* Reads the body until the daemon closes, into a malloc'd buffer of *len bytes plus a NUL.
 * Returns 0, or -1 with the reason in err. */
int ctl_client_body(int fd, char **body, size_t *len, char err[CTL_CLIENT_ERR_MAX]);

#endif
