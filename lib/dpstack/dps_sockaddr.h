/* Socket addresses of both families (struct sockaddr_in, sockaddr_in6) and the channel's
 * form of them (wire/inet_addr.h: IPv4 as its mapped IPv6 address), with Linux's checks.
 * Pure: no channel, no state. */
#ifndef DPS_SOCKADDR_H
#define DPS_SOCKADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "wire/inet_addr.h"

/* One end of a socket as the channel carries it. */
struct dps_ep {
	struct inet_addr addr;          /* IPv4 as ::ffff:a.b.c.d */
	uint16_t port;                  /* network order */
	uint32_t scope;                 /* interface index of a link-local addr, else 0 */
};

/* An address given to a socket of family (AF_INET or AF_INET6), already copied in
 * (dps_addr_in): 0, -EAFNOSUPPORT (another family), -EINVAL (too short; an IPv6 link-local
 * address without sin6_scope_id, RFC 4007 §6). An AF_INET6 socket may name an IPv4 peer by
 * its mapped address; whether it may (IPV6_V6ONLY) is the caller's to check. */
int dps_ep_in(int family, const struct sockaddr *sa, socklen_t len, struct dps_ep *out);
/* ep as a socket of family shows it (getsockname, accept, recvfrom): an AF_INET6 socket
 * shows IPv4 peers as mapped addresses (RFC 3493 §3.7). Returns the length written. */
socklen_t dps_ep_out(int family, const struct dps_ep *ep, struct sockaddr_storage *out);
/* The wildcard of family, port 0: an unbound socket's name. */
struct dps_ep dps_ep_any(int family);

#endif
