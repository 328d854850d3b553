/* A received datagram's network header as the transports see it, whichever its family: IPv4
 * (ip4_deliver) and IPv6 (ip6_input) fill one of these, so that TCP and UDP demultiplex,
 * verify and answer with one code path (issue 17: dual stack). */
#ifndef DPS_STACK_INET_HDR_H
#define DPS_STACK_INET_HDR_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "netcfg.h"
#include "wire/inet_addr.h"

struct inet_hdr {
	struct inet_addr src, dst;  /* IPv4 as mapped addresses */
	uint32_t l4_off;            /* where the transport header starts in the mbuf: after the
				     * IPv4 header, or after IPv6's and its extension headers */
	uint32_t l4_len;            /* the transport header and payload */
	uint8_t tos;                /* IPv4's TOS or IPv6's Traffic Class: DSCP and ECN
				     * (RFC 2474, RFC 3168 §5, RFC 8200 §7) */
	uint8_t ttl;                /* TTL or Hop Limit */
	uint16_t port;              /* the port it arrived on: a link-local peer's scope */
	bool v6;
};

/* The scope a reply to h's source needs: its port for a link-local IPv6 peer (RFC 4007 §6),
 * else none (the route decides). */
static inline uint16_t inet_hdr_scope(const struct inet_hdr *h)
{
	return h->v6 && h->src.b[0] == 0xfe && (h->src.b[1] & 0xc0) == 0x80 ? h->port
									     : NETCFG_PORT_ANY;
}

/* The transport checksum of the len bytes at h->l4_off in m (a chain too: reassembled, or
 * looped back), pseudo-header included (RFC 793 §3.1, RFC 768, RFC 8200 §8.1): 0 when it
 * verifies. */
uint16_t inet_l4_checksum(const struct rte_mbuf *m, const struct inet_hdr *h, uint8_t proto,
			  uint32_t len);

#endif
