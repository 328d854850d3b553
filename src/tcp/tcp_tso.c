/* TSO sizing: how much new data one segment handed to the port may carry. Where the route's
 * port cuts TCP segments itself (RTE_ETH_TX_OFFLOAD_TCP_TSO, tx_offload.h), the stack builds
 * one segment of several MSS and pays its per-segment work (header, options, route, the
 * hand-off to the port) once; the port sends MSS-sized segments with the same header, so
 * the peer sees exactly what it would have without TSO. TCP's accounting stays per MSS:
 * tcp_send_segment_tso records each MSS of a TSO segment in the sent map, so SACK, RACK,
 * retransmissions (always one MSS) and PRR never see the difference. */
#include "tcp_priv.h"
#include "wire/ipv4.h"

/* The largest TSO payload that still fits an IPv4 datagram's 16-bit length with the
 * longest TCP header; an IPv6 payload length (RFC 8200 §3), which leaves the fixed header
 * out, holds it too, so one bound serves both families. */
#define TCP_TSO_PAYLOAD_MAX (IP4_MAX_LEN - IP4_HDR_MIN_LEN - TCP_HDR_MAX_LEN)
/* A paced connection's segment is what the pacing rate sends in about 1 ms (Linux's
 * tcp_tso_autosize with sk_pacing_shift 10): a bigger one would leave as one burst. */
#define TCP_TSO_PACE_DIV 1000

uint32_t tcp_tso_max(const struct tcp_conn *c, uint32_t mss)
{
	/* Either family: our segments carry no IPv6 extension headers (ip6_output writes the
	 * fixed header alone), which is what a port's TSO for IPv6 can cut. A link-local peer
	 * has no route to name its port: its segments stay MSS-sized. */
	const struct route *r = route_lookup(c->s->cfg.routes, &c->sk.raddr);
	if (r == NULL || (r->type != ROUTE_CONNECTED && r->type != ROUTE_GATEWAY))
		return mss; /* ours (loopback segments are up to 64 KB anyway) or no way out */
	uint64_t max = c->s->tx_caps[r->port].tso_max;
	if (max > TCP_TSO_PAYLOAD_MAX)
		max = TCP_TSO_PAYLOAD_MAX;
	if (c->cc.pacing_rate != 0 && max > c->cc.pacing_rate / TCP_TSO_PACE_DIV)
		max = c->cc.pacing_rate / TCP_TSO_PACE_DIV;
	if (max < 2 * (uint64_t)mss)
		return mss;
	return (uint32_t)(max - max % mss);
}
