/* The control socket: one request per connection (include/dpstack/ctl.h), served by the
 * control thread between other work, so a command never races another. */
#ifndef DPS_CTL_SERVER_H
#define DPS_CTL_SERVER_H

#include <stddef.h>

#include "daemon.h"

/* Creates (with its directory) and listens on path. Refuses when another daemon answers
 * there; removes a stale socket file. Returns the listening fd or -1 with err set. */
int ctl_server_open(const char *path, char *err, size_t errlen);
/* Accepts one connection on fd and serves its request. */
void ctl_server_serve_one(struct daemon *d, int fd);
void ctl_server_close(int fd, const char *path);

/* Parses a request buffer (exposed for tests). Returns the word count, or -1 with a message
 * in err. argv points into buf, which is modified. */
int ctl_request_parse(char *buf, size_t len, bool *json, char **argv, int max, char *err,
		      size_t errlen);

#endif
