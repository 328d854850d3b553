/* IPv6 output: the route and source decision, header construction, and hand-off to the
 * link layer (the neighbour cache for unicast, RFC 2464 §7's mapping for multicast). */
#include <errno.h>

#include "ip6.h"
#include "l2/link.h"
#include "stack/stack_internal.h"
#include "stack/tx_offload.h"
#include "wire/eth.h"

/* 65535 bytes of payload in pieces of 1232 (the minimum MTU's) make 54 fragments. */
#define IP6_MAX_FRAGMENTS 64

/* The route to d->dst, or NULL for a destination that needs none (link-local, multicast:
 * out of d->port as given). Sets *err when there is no usable route. */
static const struct route *ip6_route(struct stack *s, const struct ip6_out *d, int *err)
{
	*err = 0;
	if (d->on_link || ip6_is_link_local(&d->dst) || ip6_is_multicast(&d->dst)) {
		if (d->port >= NETCFG_MAX_PORTS || !s->cfg.ifaces[d->port].present)
			*err = -EHOSTUNREACH; /* a scoped address means nothing without its port */
		return NULL;
	}
	const struct route *r = route_lookup6(s->cfg.routes, &d->dst);
	if (r == NULL || r->type == ROUTE_BLACKHOLE)
		*err = -ENETUNREACH;
	else if (r->type == ROUTE_UNREACHABLE)
		*err = -EHOSTUNREACH;
	return r;
}

/* ip6_source_for with d's route r already looked up (ip6_route). */
static int ip6_source_by_route(struct stack *s, struct ip6_out *d, const struct route *r)
{
	if (r != NULL && d->port == NETCFG_PORT_ANY)
		d->port = r->port;
	if (!ip6_is_unspecified(&d->src) || d->from_unspecified)
		return 0;
	/* A route's source may be still tentative, or dadfailed (RFC 4862 §5.4). */
	struct ip6_addr rsrc = r != NULL && route_src_set(r) ? inet_addr_to_v6(&r->src)
							     : (struct ip6_addr){{0}};
	if (r != NULL && route_src_set(r) && r->port == d->port &&
	    netcfg6_local(&s->cfg, d->port, &rsrc) != NULL) {
		d->src = rsrc;
		return 0;
	}
	return netcfg6_source_for(&s->cfg, d->port, &d->dst, &d->src) ? 0 : -EADDRNOTAVAIL;
}

int ip6_source_for(struct stack *s, struct ip6_out *d)
{
	int err;
	const struct route *r = ip6_route(s, d, &err);
	return err != 0 ? err : ip6_source_by_route(s, d, r);
}

uint16_t ip6_route_mtu(const struct stack *s, const struct route *r, uint16_t port)
{
	uint16_t mtu = s->cfg.ifaces[port].mtu;
	uint16_t advertised = s->ip6->mtu[port]; /* a router's MTU option (RFC 4861 §6.3.4) */
	if (advertised != 0 && advertised < mtu)
		mtu = advertised;
	return r != NULL && r->mtu != 0 && r->mtu < mtu ? r->mtu : mtu;
}

uint32_t ip6_path_mtu(struct stack *s, const struct ip6_addr *dst, uint16_t port, bool *local)
{
	int err;
	struct ip6_out d = {.dst = *dst, .port = port};
	const struct route *r = ip6_route(s, &d, &err);
	*local = r != NULL && r->type == ROUTE_LOCAL;
	if (err != 0)
		return 0;
	return ip6_route_mtu(s, r, r != NULL ? r->port : port);
}

void ip6_link_send(struct stack *s, const struct ip6_out *out, const struct route *r,
		   struct rte_mbuf *m)
{
	stack_count(s, STACK_EV_IP6_TX);
	if (out->link_dst != NULL) {
		link_output_to(s, out->port, out->link_dst, ETH_TYPE_IPV6, m);
		return;
	}
	if (ip6_is_multicast(&out->dst)) {
		/* RFC 2464 §7: 33:33 and the group's last 32 bits. */
		const uint8_t *g = out->dst.b;
		struct eth_addr mac = {{0x33, 0x33, g[12], g[13], g[14], g[15]}};
		link_output_to(s, out->port, &mac, ETH_TYPE_IPV6, m);
		return;
	}
	struct inet_addr nh = r != NULL && r->type == ROUTE_GATEWAY ? r->gateway
								    : inet_addr_v6(&out->dst);
	link_output(s, out->port, &nh, m);
}

/* Our datagram m is larger than the path's MTU: the source fragments it (RFC 8200 §4.5). */
static int ip6_send_fragments(struct stack *s, const struct ip6_out *out,
			      const struct route *r, struct rte_mbuf *m, uint16_t mtu)
{
	/* A port would sum each fragment alone: the transport's checksum is finished here. */
	if (m->ol_flags & TX_OFFLOAD_L4_FLAGS)
		tx_offload_l4_finish(m, m->l3_len);
	struct rte_mbuf *frags[IP6_MAX_FRAGMENTS];
	int n = ip6_fragment(s, m, mtu, frags, IP6_MAX_FRAGMENTS);
	if (n < 0) {
		stack_drop(s, STACK_DROP_IP6_FRAG_FAILED, m);
		return n;
	}
	rte_pktmbuf_free(m);
	stack_count(s, STACK_EV_IP6_FRAGMENTED);
	for (int k = 0; k < n; k++) {
		stack_count(s, STACK_EV_IP6_FRAGS_CREATED);
		ip6_link_send(s, out, r, frags[k]);
	}
	return 0;
}

/* RFC 4861 §6.3.4: a router's Cur Hop Limit, where one said it, else ours. */
static uint8_t ip6_default_hop_limit(const struct stack *s, uint16_t port)
{
	uint8_t h = port < NETCFG_MAX_PORTS ? s->ip6->hop_limit[port] : 0;
	return h != 0 ? h : IP6_DEFAULT_HOP_LIMIT;
}

int ip6_output(struct stack *s, struct rte_mbuf *m, const struct ip6_out *d)
{
	int err;
	const struct route *r = ip6_route(s, d, &err);
	struct ip6_out out = *d;
	if (err == 0)
		err = ip6_source_by_route(s, &out, r); /* one route lookup per datagram */
	if (err != 0) {
		stack_drop(s, STACK_DROP_IP6_NO_ROUTE, m);
		return err;
	}
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, IP6_HDR_LEN);
	if (h == NULL || len > UINT16_MAX) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return h == NULL ? -ENOBUFS : -EMSGSIZE;
	}
	struct ip6_repr ip = {
		.tclass = out.tclass,
		.payload_len = (uint16_t)len,
		.next_header = out.next_header,
		.hop_limit = out.hop_limit != 0 ? out.hop_limit : ip6_default_hop_limit(s, out.port),
		.src = out.src,
		.dst = out.dst,
	};
	ip6_build(h, IP6_HDR_LEN, &ip);
	m->l3_len = IP6_HDR_LEN;
	if (m->ol_flags & RTE_MBUF_F_TX_L4_MASK)
		m->ol_flags |= RTE_MBUF_F_TX_IPV6; /* a transport left its checksum to the port */
	if (r != NULL && r->type == ROUTE_LOCAL) {
		stack_count(s, STACK_EV_IP6_TX);
		m->port = r->port; /* as if received there; see ip4_output.c */
		stack_loopback_queue(s, m);
		return 0;
	}
	uint16_t mtu = ip6_route_mtu(s, r, out.port);
	if (out.mtu != 0 && out.mtu < mtu)
		mtu = out.mtu;
	/* A TSO segment fits when the segments the port cuts from it do. */
	uint32_t wire_len = m->ol_flags & RTE_MBUF_F_TX_TCP_SEG
				    ? (uint32_t)m->l3_len + m->l4_len + m->tso_segsz
				    : IP6_HDR_LEN + len;
	if (wire_len <= mtu) {
		ip6_link_send(s, &out, r, m);
		return 0;
	}
	return ip6_send_fragments(s, &out, r, m, mtu);
}
