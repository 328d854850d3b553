/* What TCP input (tcp_input.c) and ACK processing (tcp_ack.c) share: the segment being
 * processed. Not for use outside src/tcp. */
#ifndef DPS_TCP_TCP_INPUT_H
#define DPS_TCP_TCP_INPUT_H

#include "tcp_priv.h"

/* One received segment, parsed and checked. Its payload is in the mbuf m from offset
 * pay_off on: in one piece (payload) when m is one segment, else across the chain (a
 * reassembled datagram, or a 64 KB segment over our own loopback). */
struct tcp_seg {
	struct tcp_repr th;
	const struct inet_hdr *ip;
	const struct rte_mbuf *m;
	uint32_t pay_off;
	const uint8_t *payload;        /* NULL when the payload spans several mbufs */
	uint32_t len;          /* payload bytes */
	uint8_t ecn;           /* the IP header's ECN field */
};

static inline bool tcp_fin_acked(const struct tcp_conn *c)
{
	return c->flags & TCPF_FIN_SENT && c->snd_una == c->snd_max;
}

/* RFC 9293 §3.10.7.4 "fifth, check the ACK field" in a synchronized state: SYN-RECEIVED
 * completes, the send window and SND.UNA move, loss recovery and congestion control hear of
 * what was delivered, and the closing states advance. Returns false when the segment is
 * done (answered, or the connection gone). */
bool tcp_ack_input(struct tcp_conn *c, const struct tcp_seg *g);

#endif
