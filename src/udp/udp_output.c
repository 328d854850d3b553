/* UDP output (RFC 768): the datagram built in an mbuf chain straight from the caller's
 * buffer, checksummed over the pseudo-header, and handed to IPv4, which fragments it when it
 * exceeds the route MTU (never DF). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

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

static int udp_route(struct udp_sock *u, uint32_t dst, const struct udp_send_opts *o,
		     struct udp_dest *d)
{
	struct stack *s = u->s;
	const struct route *r;
	uint32_t laddr = o != NULL && o->src != 0 ? o->src : inet_addr_to_v4(&u->sk.laddr);
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

/* The datagram (header and len bytes of buf) as an mbuf chain with room for the IPv4 and
 * Ethernet headers in front, its checksum partial. NULL when the pool runs dry (counted). */
static struct rte_mbuf *udp_build_mbuf(struct stack *s, const uint8_t *buf, size_t len,
				       uint16_t sport, uint32_t src, uint32_t dst,
				       uint16_t dport)
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
	/* RFC 768 over pseudo-header, header and data: the port or stack_xmit finishes it
	 * (tx_offload.h), and IPv4 before it fragments the datagram. */
	tx_offload_l4_partial(head, hdr + UDP_OFF_CSUM,
			      wire_csum_pseudo4(src, dst, IP4_PROTO_UDP, (uint16_t)total),
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
	struct stack *s = u->s;
	if (raddr == 0) {
		if (!(u->flags & UDPF_CONNECTED))
			return -EDESTADDRREQ;
		raddr = inet_addr_to_v4(&u->sk.raddr);
		rport = u->sk.rport;
	} else if (rport == 0) {
		return -EINVAL;
	}
	if (len > UDP_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (len > 0 && buf == NULL)
		return -EFAULT;
	struct udp_dest d;
	int rc = udp_route(u, raddr, o, &d);
	if (rc < 0)
		return rc;
	const struct sock_ip_opts *ip = o != NULL && o->ip != NULL ? o->ip : &u->ip;
	struct rte_mbuf *m = udp_build_mbuf(s, buf, len, u->sk.lport, d.src, raddr, rport);
	if (m == NULL)
		return -ENOBUFS;
	/* A datagram to ourselves comes back through udp_input before ip4_output returns: the
	 * owners it wakes (this one included, who may close u) are called afterwards. */
	s->udp->depth++;
	if (d.limited_bcast)
		rc = udp_output_limited_bcast(s, m, d.src, d.port, ip);
	else
		rc = ip4_output(s, m, IP4_PROTO_UDP, d.src, raddr, ip->tos, ip->ttl, false);
	if (rc == 0) {
		u->datagrams_out++;
		u->bytes_out += len;
		stack_count(s, STACK_EV_UDP_OUT_DATAGRAMS);
	}
	s->udp->depth--;
	udp_deliver_events(s);
	return rc < 0 ? rc : (ssize_t)len;
}
