/* UDP output (RFC 768): the datagram built in an mbuf chain straight from the caller's
 * buffer, checksummed over the pseudo-header, and handed to IPv4, which fragments it when it
 * exceeds the route MTU (never DF), or to IPv6, which fragments it at the source when it
 * exceeds the path MTU (RFC 8200 §4.5, §5). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "ip6/ip6.h"
#include "udp_priv.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/udp.h"

/* Where a datagram goes: the source address, and for the limited broadcast (which no route
 * covers) the port it leaves by. */
struct udp_dest {
	uint32_t src;
	bool limited_bcast;
	uint16_t port;
};

/* The source a datagram asks for (either family; the wildcard: none): the per-datagram
 * option, else the socket's local address. */
static struct inet_addr udp_from(const struct udp_sock *u, const struct udp_send_opts *o)
{
	if (o != NULL && !inet_addr_is_any(&o->from))
		return o->from;
	if (o != NULL && o->src != 0)
		return inet_addr_v4(o->src);
	return u->sk.laddr;
}

static int udp_route(struct udp_sock *u, uint32_t dst, const struct udp_send_opts *o,
		     struct udp_dest *d)
{
	struct stack *s = u->s;
	const struct route *r;
	struct inet_addr from = udp_from(u, o);
	if (!inet_addr_is_v4(&from) && !inet_addr_is_any(&from))
		return -EINVAL; /* an IPv6 source for an IPv4 destination */
	uint32_t laddr = inet_addr_is_v4(&from) ? inet_addr_to_v4(&from) : 0;
	*d = (struct udp_dest){0};

	/* A socket bound to one of our addresses sends from it (RFC 1122 §4.1.3.4), one bound
	 * to a broadcast address from the route's choice. The address may have been removed
	 * since the bind. */
	if (laddr != 0 && !ip4_is_limited_broadcast(laddr)) {
		r = route_lookup4(s->cfg.routes, laddr);
		if (r == NULL || inet_addr_to_v4(&r->prefix) != laddr || r->plen != 32 ||
		    (r->type != ROUTE_LOCAL && r->type != ROUTE_BROADCAST))
			return -EADDRNOTAVAIL;
		if (r->type == ROUTE_LOCAL) {
			d->src = laddr;
			d->port = r->port;
		}
	}
	if (ip4_is_multicast(dst))
		return -ENETUNREACH; /* no multicast routing yet */
	r = route_lookup4(s->cfg.routes, dst);
	if (ip4_is_limited_broadcast(dst)) {
		/* RFC 919/922: to every host of the link, out of the bound address's port or
		 * else the port of the route that covers 255.255.255.255 (the default). */
		if (!(u->flags & UDPF_BROADCAST))
			return -EACCES;
		d->limited_bcast = true;
		if (o != NULL && o->bcast_on_port) {
			d->port = o->port;
			return 0;
		}
		if (d->src == 0) {
			if (r == NULL || r->type == ROUTE_BLACKHOLE || r->type == ROUTE_UNREACHABLE)
				return -ENETUNREACH;
			d->port = r->port;
			d->src = netcfg_route_source4(&s->cfg, r, dst);
		}
		return d->src != 0 ? 0 : -EADDRNOTAVAIL;
	}
	if (r == NULL || r->type == ROUTE_BLACKHOLE)
		return -ENETUNREACH;
	if (r->type == ROUTE_UNREACHABLE)
		return -EHOSTUNREACH;
	/* Linux: sending to a broadcast address needs SO_BROADCAST. */
	if (r->type == ROUTE_BROADCAST && !(u->flags & UDPF_BROADCAST))
		return -EACCES;
	if (d->src == 0)
		d->src = netcfg_route_source4(&s->cfg, r, dst);
	return d->src != 0 ? 0 : -EADDRNOTAVAIL;
}

/* The IPv6 route and source of a datagram to dst (scope: a link-local dst's port) into d:
 * 0 or -errno as udp_sendmsg_inet documents. */
static int udp_route6(struct udp_sock *u, const struct inet_addr *dst, uint16_t scope,
		      const struct udp_send_opts *o, struct ip6_out *d)
{
	struct inet_addr from = udp_from(u, o);
	if (inet_addr_is_v4(&from))
		return -EINVAL; /* an IPv4 source for an IPv6 destination */
	*d = (struct ip6_out){.dst = inet_addr_to_v6(dst), .src = inet_addr_to_v6(&from),
			      .next_header = IP6_NH_UDP};
	if (ip6_is_multicast(&d->dst))
		return -ENETUNREACH; /* no multicast routing yet */
	d->port = ip6_is_link_local(&d->dst) ? scope : NETCFG_PORT_ANY;
	if (!ip6_is_unspecified(&d->src) && !netcfg_inet_is_local(&u->s->cfg, &from, d->port))
		return -EADDRNOTAVAIL; /* removed since the bind, or not ours */
	return ip6_source_for(u->s, d);
}

/* The datagram (header and len bytes of buf) as an mbuf chain with room for the IP and
 * Ethernet headers in front, its checksum partial. NULL when the pool runs dry (counted). */
static struct rte_mbuf *udp_build_mbuf(struct stack *s, const uint8_t *buf, size_t len,
				       uint16_t sport, const struct inet_addr *src,
				       const struct inet_addr *dst, uint16_t dport)
{
	uint32_t total = (uint32_t)(UDP_HDR_LEN + len);
	struct rte_mbuf *head = NULL;
	uint8_t *hdr = NULL;
	size_t done = 0;
	do {
		struct rte_mbuf *seg = rte_pktmbuf_alloc(s->pool);
		if (seg == NULL) {
			rte_pktmbuf_free(head);
			stack_drop_count(s, STACK_DROP_TX_NO_MBUF);
			return NULL;
		}
		uint32_t room = rte_pktmbuf_tailroom(seg);
		if (head == NULL) {
			hdr = (uint8_t *)rte_pktmbuf_append(seg, UDP_HDR_LEN);
			room -= UDP_HDR_LEN;
		}
		uint32_t n = len - done < room ? (uint32_t)(len - done) : room;
		if (n > 0)
			memcpy(rte_pktmbuf_append(seg, (uint16_t)n), buf + done, n);
		done += n;
		if (head == NULL) {
			head = seg;
		} else if (rte_pktmbuf_chain(head, seg) != 0) {
			rte_pktmbuf_free(seg);
			rte_pktmbuf_free(head);
			stack_drop_count(s, STACK_DROP_TX_NO_MBUF);
			return NULL;
		}
	} while (done < len);

	struct udp_repr r = {.src_port = sport, .dst_port = dport, .length = (uint16_t)total,
			     .checksum = UDP_CSUM_NONE};
	udp_build(hdr, UDP_HDR_LEN, &r);
	/* RFC 768 (RFC 8200 §8.1 over IPv6) over pseudo-header, header and data: the port or
	 * stack_xmit finishes it (tx_offload.h), and IP before it fragments the datagram. A
	 * sum of zero goes as 0xffff, so over IPv6 too the checksum is never absent. */
	tx_offload_l4_partial(head, hdr + UDP_OFF_CSUM,
			      inet_addr_csum_pseudo(src, dst, IP4_PROTO_UDP, total),
			      RTE_MBUF_F_TX_UDP_CKSUM, UDP_HDR_LEN, 0);
	return head;
}

/* ip4_output for the limited broadcast, which has no route: the header is built here and
 * the datagram leaves by a broadcast route to port made up for it. */
static int udp_output_limited_bcast(struct stack *s, struct rte_mbuf *m, uint32_t src,
				    uint16_t port, const struct sock_ip_opts *opts)
{
	const uint32_t dst = 0xffffffffu;
	struct route r = {.prefix = inet_addr_v4(dst), .plen = 32, .type = ROUTE_BROADCAST, .port = port};
	uint32_t len = rte_pktmbuf_pkt_len(m) + IP4_HDR_MIN_LEN;
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, IP4_HDR_MIN_LEN);
	if (h == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return -ENOBUFS;
	}
	struct ip4_repr ip = {
		.tos = opts->tos,
		.total_len = (uint16_t)len,
		.id = s->next_ip_id++,
		.ttl = opts->ttl != 0 ? opts->ttl : IP4_DEFAULT_TTL,
		.proto = IP4_PROTO_UDP,
		.src = src,
		.dst = dst,
	};
	ip4_build(h, IP4_HDR_MIN_LEN, &ip);
	m->l3_len = IP4_HDR_MIN_LEN;
	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	ip4_route_output(s, m, &r, dst, false);
	return 0;
}

ssize_t udp_sendto(struct udp_sock *u, const void *buf, size_t len, uint32_t raddr,
		   uint16_t rport)
{
	return udp_sendmsg(u, buf, len, raddr, rport, NULL);
}

ssize_t udp_sendmsg(struct udp_sock *u, const void *buf, size_t len, uint32_t raddr,
		    uint16_t rport, const struct udp_send_opts *o)
{
	return udp_sendmsg_inet(u, buf, len, raddr == 0 ? NULL : INET_ADDR_V4(raddr), rport, o);
}

/* IPv4's route, header and output of the datagram m to dst (ttl, tos from ip). */
static int udp_output4(struct udp_sock *u, struct rte_mbuf *m, uint32_t dst,
		       const struct udp_dest *d, const struct sock_ip_opts *ip)
{
	if (d->limited_bcast)
		return udp_output_limited_bcast(u->s, m, d->src, d->port, ip);
	return ip4_output(u->s, m, IP4_PROTO_UDP, d->src, dst, ip->tos, ip->ttl, false);
}

ssize_t udp_sendmsg_inet(struct udp_sock *u, const void *buf, size_t len,
			 const struct inet_addr *raddr, uint16_t rport,
			 const struct udp_send_opts *o)
{
	struct stack *s = u->s;
	uint16_t scope = o != NULL && o->scoped ? o->port : NETCFG_PORT_ANY;
	if (raddr == NULL || inet_addr_is_any(raddr)) {
		if (!(u->flags & UDPF_CONNECTED))
			return -EDESTADDRREQ;
		raddr = &u->sk.raddr;
		rport = u->sk.rport;
		scope = u->sk.scope;
	} else if (rport == 0) {
		return -EINVAL;
	}
	bool v4 = inet_addr_is_v4(raddr);
	if (v4 && (u->flags & UDPF_V6) && !udp_addr_hears(&u->bound_laddr, u->sk.v6only, UDP_FAM_V4))
		return -ENETUNREACH; /* Linux: IPv6-only, or bound to an IPv6 address */
	if (!v4 && !(u->flags & UDPF_V6))
		return -EAFNOSUPPORT;
	if (len > (v4 ? UDP_MAX_PAYLOAD : UDP6_MAX_PAYLOAD))
		return -EMSGSIZE;
	if (len > 0 && buf == NULL)
		return -EFAULT;
	struct udp_dest d4 = {0};
	struct ip6_out d6 = {0};
	int rc = v4 ? udp_route(u, inet_addr_to_v4(raddr), o, &d4)
		    : udp_route6(u, raddr, scope, o, &d6);
	if (rc < 0)
		return rc;
	const struct sock_ip_opts *ip = o != NULL && o->ip != NULL ? o->ip : &u->ip;
	struct inet_addr src = v4 ? inet_addr_v4(d4.src) : inet_addr_v6(&d6.src);
	struct rte_mbuf *m = udp_build_mbuf(s, buf, len, u->sk.lport, &src, raddr, rport);
	if (m == NULL)
		return -ENOBUFS;
	/* A datagram to ourselves comes back through udp_input before the output returns: the
	 * owners it wakes (this one included, who may close u) are called afterwards. */
	s->udp->depth++;
	if (v4) {
		rc = udp_output4(u, m, inet_addr_to_v4(raddr), &d4, ip);
	} else {
		d6.tclass = ip->tos;
		d6.hop_limit = ip->ttl;
		/* A connected socket's path MTU from Packet Too Big (RFC 8201 §4). */
		if ((u->flags & UDPF_CONNECTED) && inet_addr_equal(raddr, &u->sk.raddr))
			d6.mtu = u->pmtu;
		rc = ip6_output(s, m, &d6);
	}
	if (rc == 0) {
		u->datagrams_out++;
		u->bytes_out += len;
		stack_count(s, v4 ? STACK_EV_UDP_OUT_DATAGRAMS : STACK_EV_UDP6_OUT_DATAGRAMS);
	}
	s->udp->depth--;
	udp_deliver_events(s);
	return rc < 0 ? rc : (ssize_t)len;
}
