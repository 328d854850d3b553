/* The dpstackd control protocol, spoken over the unix socket named by DPSTACK_CTL
 * (default DPSTACK_CTL_DEFAULT). One request per connection:
 *
 *   "dpstack-ctl 1 text\n" or "dpstack-ctl 1 json\n"   the greeting and the output format
 *   one line per command word, e.g. "ip\n" "addr\n" "show\n"
 *   an empty line
 *
 * The daemon answers "ok\n" followed by the output, or "error\n" followed by a one-line
 * message, and closes the connection. `capture` is the exception: after "ok\n" the connection
 * carries a pcapng stream until the capture ends; the client ends it early by shutting down
 * its sending side, and the stream then ends with an interface statistics block whose comment
 * sums it up. Words may not contain newlines; a request is at most
 * DPSTACK_CTL_MAX_REQUEST bytes and DPSTACK_CTL_MAX_WORDS words. */
#ifndef DPSTACK_CTL_H
#define DPSTACK_CTL_H

#define DPSTACK_CTL_DEFAULT "/run/dpstack/ctl.sock"
#define DPSTACK_CTL_ENV "DPSTACK_CTL"
#define DPSTACK_SOCK_DEFAULT "/run/dpstack/app.sock"
#define DPSTACK_SOCK_ENV "DPSTACK_SOCK"
#define DPSTACK_CTL_GREETING "dpstack-ctl 1"
#define DPSTACK_CTL_MAX_REQUEST 8192
#define DPSTACK_CTL_MAX_WORDS 64

#endif
