/* The DHCP clients of the daemon's ports (`ip addr dhcp dev PORT`): one state machine per
 * port (src/dhcp/dhcp_client.h) on the control thread, one UDP socket on port 68 for all of
 * them on the worker that owns that port, and their leases applied as the `ip addr`,
 * `ip route` and `link set mtu` commands apply configuration.
 *
 * Why the control thread: a lease changes every worker's tables, which only the control
 * thread can do (daemon_apply: worker_call on each, which a worker cannot make on itself);
 * the timers are seconds long, so the control loop's poll serves them; and the worker side
 * stays the stack's ordinary UDP socket, with two small additions: sending a broadcast from
 * 0.0.0.0 out of a given port (udp_send_opts.bcast_on_port), and a unicast answer to the
 * offered address delivered while the port's client runs (stack.dhcp_client). */
#ifndef DPS_CTL_DHCP_RUN_H
#define DPS_CTL_DHCP_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "dhcp/dhcp_client.h"

struct daemon;

/* Starts a client on port. 0, -EALREADY (one runs), -ENOMEM, or the socket's -errno. */
int dhcp_run_start(struct daemon *d, uint16_t port);
/* Stops it, releasing its lease (RFC 2131 §4.4.6). -ESRCH when none runs. */
int dhcp_run_stop(struct daemon *d, uint16_t port);
/* `ip addr del` of addr on port: true when a client held it, which then released it and
 * stopped, the address removed on the way (the same command, run by the client). */
bool dhcp_run_addr_del(struct daemon *d, uint16_t port, uint32_t addr);
/* The port's client, or NULL when none runs. */
const struct dhcp_client *dhcp_run_client(const struct daemon *d, uint16_t port);
/* The clients' clock (ms): lease times in `ip addr show` are relative to it. */
uint64_t dhcp_run_now_ms(void);

/* For the control loop: the descriptor that becomes readable when a message arrived (-1
 * with no client), the longest it may sleep (at most max_ms), and the work when either
 * happened. */
int dhcp_run_fd(const struct daemon *d);
int dhcp_run_timeout_ms(const struct daemon *d, int max_ms);
void dhcp_run_poll(struct daemon *d);
/* Releases every lease and closes the socket (the workers still run). */
void dhcp_run_fini(struct daemon *d);

#endif
