/* IPv4 output: header construction for our own datagrams, the MTU decision (fragment, or
 * frag-needed for DF, RFC 1191), and hand-off to the link layer. */
#include <errno.h>

#include "ip4.h"
#include "l2/link.h"
#include "stack/stack_internal.h"
#include "wire/bytes.h"
#include "wire/icmp4.h"

/* Enough for a 65535-byte datagram at MTU >= 576 (RFC 791's minimum reassembly size);
 * bigger datagrams over smaller MTUs are counted as ip.frag_failed. */
#define IP4_MAX_FRAGS 128

static void link_output_route(struct stack *s, struct rte_mbuf *m, const struct route *r,
			      uint32_t dst)
{
	stack_count(s, STACK_EV_IP_TX);
	if (r->type == ROUTE_LOCAL) {
		/* To ourselves: turn around without touching a port, but later (stack_loopback_
		 * drain), never from inside the sender: a TCP connection whose segment reaches
		 * its peer on this stack must not see the answer before its own send returns. */
		m->port = r->port; /* as if received there */
		stack_loopback_queue(s, m);
		return;
	}
	if (r->type == ROUTE_BROADCAST) {
		/* A directed broadcast of a connected subnet: no neighbour owns it (RFC 919). */
		link_output_to(s, r->port, &eth_addr_broadcast, ETH_TYPE_IPV4, m);
		return;
	}
	link_output(s, r->port, INET_ADDR_V4(r->type == ROUTE_GATEWAY ? route_gateway4(r) : dst), m);
}

/* A broadcast we originate reaches our own sockets too, whole, before it is fragmented for
 * the wire, as Linux's ip_mc_output loops a copy back (RFC 1122 §3.3.6 lets a host receive
 * its own broadcasts). Without an mbuf for the copy only the local delivery is lost. */
static void ip4_loop_broadcast_back(struct stack *s, const struct rte_mbuf *m, uint16_t port)
{
	struct rte_mbuf *copy = rte_pktmbuf_copy(m, s->pool, 0, UINT32_MAX);
	if (copy == NULL) {
		stack_drop_count(s, STACK_DROP_TX_NO_MBUF);
		return;
	}
	copy->port = port; /* as if received there */
	stack_loopback_queue(s, copy);
}

void ip4_route_output(struct stack *s, struct rte_mbuf *m, const struct route *r, uint32_t dst,
		      bool forwarded)
{
	if (r->type == ROUTE_BROADCAST && !forwarded)
		ip4_loop_broadcast_back(s, m, r->port);
	uint16_t mtu = netcfg_route_mtu(&s->cfg, r);
	/* A TSO segment fits when the segments the port cuts from it do. */
	uint32_t len = m->ol_flags & RTE_MBUF_F_TX_TCP_SEG
			       ? (uint32_t)m->l3_len + m->l4_len + m->tso_segsz
			       : rte_pktmbuf_pkt_len(m);
	if (r->type == ROUTE_LOCAL || len <= mtu) {
		link_output_route(s, m, r, dst);
		return;
	}
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	if (wire_get_be16(h + IP4_OFF_FRAG) & IP4_FLAG_DF) {
		/* RFC 1191 §4: tell the sender the next-hop MTU. Our own DF datagrams are sized
		 * by their transport, so a local one this large is only counted. */
		if (forwarded)
			icmp4_send_error(s, m, ICMP4_DEST_UNREACH, ICMP4_UNREACH_FRAG_NEEDED, mtu);
		stack_drop(s, STACK_DROP_IP_FRAG_NEEDED, m);
		return;
	}
	/* A port would sum each fragment alone: the transport's checksum is finished here. */
	if (m->ol_flags & TX_OFFLOAD_L4_FLAGS)
		tx_offload_l4_finish(m, m->l3_len);
	struct rte_mbuf *frags[IP4_MAX_FRAGS];
	int n = ip4_fragment(m, mtu, s->pool, frags, IP4_MAX_FRAGS);
	if (n < 0) {
		stack_drop(s, STACK_DROP_IP_FRAG_FAILED, m);
		return;
	}
	stack_count(s, STACK_EV_IP_FRAGMENTED);
	s->events[STACK_EV_IP_FRAGS_CREATED] += (uint64_t)n;
	for (int i = 0; i < n; i++)
		link_output_route(s, frags[i], r, dst); /* m is freed: fragments carry its port */
}

int ip4_output(struct stack *s, struct rte_mbuf *m, uint8_t proto, uint32_t src, uint32_t dst,
	       uint8_t tos, uint8_t ttl, bool df)
{
	const struct route *r = route_lookup4(s->cfg.routes, dst);
	if (r == NULL || r->type == ROUTE_BLACKHOLE || r->type == ROUTE_UNREACHABLE) {
		stack_drop(s, STACK_DROP_IP_NO_ROUTE, m);
		return r != NULL && r->type == ROUTE_UNREACHABLE ? -EHOSTUNREACH : -ENETUNREACH;
	}
	if (src == 0)
		src = netcfg_route_source4(&s->cfg, r, dst);
	if (src == 0) {
		/* RFC 1122 §3.2.1.3: 0.0.0.0 is a source only while a host learns its address
		 * (DHCP, which sends to the limited broadcast without this path). */
		stack_drop(s, STACK_DROP_IP_NO_SOURCE, m);
		return -EADDRNOTAVAIL;
	}
	uint32_t len = rte_pktmbuf_pkt_len(m) + IP4_HDR_MIN_LEN;
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, IP4_HDR_MIN_LEN);
	if (h == NULL || len > IP4_MAX_LEN) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return h == NULL ? -ENOBUFS : -EMSGSIZE;
	}
	struct ip4_repr ip = {
		.tos = tos,
		.total_len = (uint16_t)len,
		.id = s->next_ip_id++,
		.df = df,
		.ttl = ttl != 0 ? ttl : IP4_DEFAULT_TTL,
		.proto = proto,
		.src = src,
		.dst = dst,
	};
	ip4_build(h, IP4_HDR_MIN_LEN, &ip);
	m->l3_len = IP4_HDR_MIN_LEN;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4; /* ours: the port may compute its checksum */
	ip4_route_output(s, m, r, dst, false);
	return 0;
}
