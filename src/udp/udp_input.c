/* UDP input (RFC 768, RFC 1122 §4.1.3; over IPv6 RFC 8200 §8.1): checks in the STYLE.md
 * order, demultiplexing, the receive FIFO, port unreachable (ICMP or ICMPv6); and ICMP and
 * ICMPv6 errors for connected sockets (§4.1.3.3). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "udp_priv.h"
#include "stack/exception.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "ip6/ip6.h"
#include "wire/icmp4.h"
#include "wire/icmp6.h"
#include "wire/udp.h"

static enum stack_drop udp_parse_drop(enum wire_status st)
{
	switch (st) {
	case WIRE_TRUNCATED:
		return STACK_DROP_UDP_TRUNCATED;
	case WIRE_BAD_FIELD:
		return STACK_DROP_UDP_BAD_PORT;
	default:
		return STACK_DROP_UDP_BAD_LENGTH;
	}
}

/* The checksum over the pseudo-header and the u->length bytes of the datagram at the IP
 * payload of m, which may be a chain (reassembled, or looped back). A NIC's verdict is
 * trusted: ip4_deliver clears it for reassembled datagrams, whose first fragment's flags say
 * nothing about the whole. */
static bool udp_checksum_verified(const struct rte_mbuf *m, const struct inet_hdr *ip,
				  const struct udp_repr *u)
{
	uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		return true;
	if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return false;
	return inet_l4_checksum(m, ip, IP4_PROTO_UDP, u->length) == 0;
}

/* RFC 768: a zero checksum means the sender computed none; over IPv4 RFC 1122 §4.1.3.4 lets
 * us accept it, as every stack does (counted, so its use can be seen). Over IPv6 it is
 * mandatory (RFC 8200 §8.1: a zero checksum is discarded; RFC 6935's tunnel exception is not
 * taken). False when m was dropped. */
static bool udp_checksum_accept(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *ip,
				const struct udp_repr *uh)
{
	if (uh->checksum == UDP_CSUM_NONE) {
		if (ip->v6) {
			stack_drop(s, STACK_DROP_UDP6_ZERO_CHECKSUM, m);
			return false;
		}
		stack_count(s, STACK_EV_UDP_ZERO_CHECKSUM);
		return true;
	}
	if (!udp_checksum_verified(m, ip, uh)) {
		stack_drop(s, STACK_DROP_UDP_BAD_CHECKSUM, m);
		return false;
	}
	return true;
}

/* Linux's order without SO_REUSEADDR: the connected socket with this exact 4-tuple, else the
 * socket bound to the destination address, else the one bound to the family's wildcard
 * (udp_lookup_wildcard: an IPv4 datagram prefers 0.0.0.0 to ::, as Linux scores a socket of
 * its own family higher). A connected socket hears only its peer, so a bound socket that is
 * connected is no match. Broadcasts go to sockets bound to the broadcast address or to the
 * wildcard. */
static struct udp_sock *udp_demux(struct stack *s, const struct inet_hdr *h,
				  const struct udp_repr *uh, bool bcast)
{
	struct udp_sock *u;
	if (!bcast) {
		u = udp_lookup_conn(s, &h->dst, uh->dst_port, &h->src, uh->src_port);
		if (u != NULL)
			return u;
	}
	u = udp_lookup_bind(s, &h->dst, uh->dst_port);
	if (u == NULL)
		u = udp_lookup_wildcard(s, &h->dst, uh->dst_port);
	return u != NULL && !(u->flags & UDPF_CONNECTED) ? u : NULL;
}

/* Appends the datagram as one record (header, payload) to u's receive FIFO, published at
 * once, or drops it whole when it does not fit (Linux's RcvbufErrors). Takes m. */
static void udp_enqueue(struct stack *s, struct udp_sock *u, struct rte_mbuf *m,
			const struct inet_hdr *ip, const struct udp_repr *uh, bool bcast)
{
	struct fifo *f = u->sk.rx;
	struct udp_rx_hdr h = {
		.len = (uint32_t)uh->payload_len,
		.sport = uh->src_port,
		.flags = (uint16_t)((bcast ? UDP_RXF_BCAST : 0) | (ip->v6 ? UDP_RXF_V6 : 0)),
		.ifindex = (uint16_t)netcfg_ifindex(m->port),
		.ttl = ip->ttl,
		.tos = ip->tos,
		.src = ip->src,
		.dst = ip->dst,
	};
	if (!ip->v6) {
		h.saddr = inet_addr_to_v4(&ip->src);
		h.daddr = inet_addr_to_v4(&ip->dst);
		h.spec_dst = bcast ? netcfg_source_for(&s->cfg, m->port, h.saddr) : h.daddr;
	}
	uint32_t need = (uint32_t)sizeof(h) + h.len;
	if (fifo_free(f) < need) {
		u->rcvbuf_drops++;
		stack_drop(s, STACK_DROP_UDP_RCVBUF_ERRORS, m);
		return;
	}
	fifo_write_at(f, 0, &h, sizeof(h));
	struct fifo_slice sl[2];
	unsigned n = fifo_write_slices(f, sizeof(h), h.len, sl);
	uint32_t off = ip->l4_off + UDP_HDR_LEN, copied = 0;
	for (unsigned i = 0; i < n; i++) {
		/* Bounded by the mbuf: NULL if the chain were shorter than udp_parse saw. */
		const void *p = rte_pktmbuf_read(m, off, sl[i].len, sl[i].base);
		if (p == NULL)
			break;
		if (p != sl[i].base)
			memcpy(sl[i].base, p, sl[i].len);
		off += sl[i].len;
		copied += sl[i].len;
	}
	if (copied != h.len) {
		stack_drop(s, STACK_DROP_UDP_TRUNCATED, m);
		return;
	}
	fifo_produce(f, need);
	u->datagrams_in++;
	u->bytes_in += h.len;
	stack_count(s, ip->v6 ? STACK_EV_UDP6_IN_DATAGRAMS : STACK_EV_UDP_IN_DATAGRAMS);
	rte_pktmbuf_free(m);
	udp_notify(u, SOCK_EV_IN);
	udp_deliver_events(s);
}

void udp_input(struct stack *s, struct rte_mbuf *m, const struct inet_hdr *ip, bool bcast)
{
	uint32_t l4_len = ip->l4_len;
	uint8_t copy[UDP_HDR_LEN];
	const uint8_t *h = NULL;
	if (l4_len >= UDP_HDR_LEN)
		h = rte_pktmbuf_read(m, ip->l4_off, UDP_HDR_LEN, copy);
	/* udp_parse reads the 8 header bytes only and compares the length field with l4_len,
	 * so a header copied out of a chain stands for the whole datagram. */
	struct udp_repr uh;
	enum wire_status st = h == NULL ? WIRE_TRUNCATED : udp_parse(h, l4_len, &uh);
	if (st != WIRE_OK) {
		stack_drop(s, udp_parse_drop(st), m);
		return;
	}
	if (!udp_checksum_accept(s, m, ip, &uh))
		return;
	struct udp_sock *u = udp_demux(s, ip, &uh, bcast);
	if (u != NULL) {
		udp_enqueue(s, u, m, ip, &uh, bcast);
		return;
	}
	if (stack_exception(s, m, STACK_EV_KERNEL_UDP))
		return;
	if (bcast) {
		/* RFC 1122 §4.1.3.1 / §3.2.2, RFC 4443 §2.4(e.3): never an ICMP error about a
		 * broadcast or a multicast. */
		stack_drop(s, STACK_DROP_UDP_IGNORED_BCAST, m);
		return;
	}
	/* RFC 1122 §4.1.3.1, RFC 4443 §3.1 (code 4): port unreachable when no socket has the
	 * port; each family's error rate limit applies. */
	if (ip->v6)
		icmp6_send_error(s, m, ICMP6_DEST_UNREACH, ICMP6_UNREACH_PORT, 0);
	else
		icmp4_send_error(s, m, ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0);
	stack_drop(s, ip->v6 ? STACK_DROP_UDP6_NO_PORT : STACK_DROP_UDP_NO_PORT, m);
}

/* The errno an ICMP error becomes, as Linux's icmp_err_convert — except protocol
 * unreachable, which is ECONNREFUSED like port unreachable (as the BSDs map it): either way
 * nothing at the peer takes the datagram. */
static int udp_icmp_errno(uint8_t type, uint8_t code)
{
	static const int unreach[16] = {
		[ICMP4_UNREACH_NET] = ENETUNREACH,
		[ICMP4_UNREACH_HOST] = EHOSTUNREACH,
		[ICMP4_UNREACH_PROTO] = ECONNREFUSED,
		[ICMP4_UNREACH_PORT] = ECONNREFUSED,
		[ICMP4_UNREACH_FRAG_NEEDED] = EMSGSIZE,
		[5] = EOPNOTSUPP,       /* source route failed */
		[6] = ENETUNREACH,      /* destination network unknown */
		[7] = EHOSTDOWN,        /* destination host unknown */
		[8] = ENONET,           /* source host isolated */
		[9] = ENETUNREACH,      /* network administratively prohibited */
		[10] = EHOSTUNREACH,    /* host administratively prohibited */
		[11] = ENETUNREACH,     /* network unreachable for TOS */
		[12] = EHOSTUNREACH,    /* host unreachable for TOS */
		[ICMP4_UNREACH_ADMIN] = EHOSTUNREACH,
		[14] = EHOSTUNREACH,    /* host precedence violation */
		[15] = EHOSTUNREACH,    /* precedence cutoff */
	};
	if (type == ICMP4_DEST_UNREACH)
		return code < 16 ? unreach[code] : EHOSTUNREACH;
	if (type == ICMP4_PARAM_PROBLEM)
		return EPROTO;
	return EHOSTUNREACH; /* time exceeded */
}

/* RFC 1122 §4.1.3.3: UDP passes ICMP errors to the application. Like Linux without
 * IP_RECVERR, only a connected socket is told — an unconnected one could not tell which of
 * its peers the error was about — through sk.error, which the next udp_recvfrom returns.
 * src, dst: the quoted datagram's addresses (ours first). The socket found is returned. */
static struct udp_sock *udp_icmp_report(struct stack *s, const struct inet_addr *src,
					const struct inet_addr *dst, const uint8_t *l4,
					size_t l4_len, int err)
{
	if (l4_len < UDP_HDR_LEN)
		return NULL;
	uint16_t sport = wire_get_be16(l4 + UDP_OFF_SRC_PORT);
	uint16_t dport = wire_get_be16(l4 + UDP_OFF_DST_PORT);
	struct udp_sock *u = udp_lookup_conn(s, src, sport, dst, dport);
	if (u == NULL) {
		stack_count(s, STACK_EV_UDP_ICMP_UNMATCHED);
		return NULL;
	}
	stack_count(s, STACK_EV_UDP_ICMP_ERRORS);
	u->sk.error = err;
	udp_notify(u, SOCK_EV_ERR);
	udp_deliver_events(s);
	return u;
}

void udp_icmp_error(struct stack *s, const struct ip4_repr *quoted_ip, const uint8_t *l4,
		    size_t l4_len, uint8_t type, uint8_t code, uint32_t info)
{
	(void)info; /* no path MTU to lower: our datagrams are sent without DF */
	udp_icmp_report(s, INET_ADDR_V4(quoted_ip->src), INET_ADDR_V4(quoted_ip->dst), l4, l4_len,
			udp_icmp_errno(type, code));
}

/* The errno an ICMPv6 error becomes, as Linux's icmpv6_err_convert. */
static int udp_icmp6_errno(uint8_t type, uint8_t code)
{
	static const int unreach[] = {
		[ICMP6_UNREACH_NO_ROUTE] = ENETUNREACH,
		[ICMP6_UNREACH_ADMIN] = EACCES,
		[2] = EHOSTUNREACH,     /* beyond the scope of the source address */
		[ICMP6_UNREACH_ADDR] = EHOSTUNREACH,
		[ICMP6_UNREACH_PORT] = ECONNREFUSED,
		[5] = EACCES,           /* source address failed ingress/egress policy */
		[6] = EACCES,           /* reject route to destination */
	};
	switch (type) {
	case ICMP6_DEST_UNREACH:
		return code < sizeof(unreach) / sizeof(unreach[0]) ? unreach[code] : EPROTO;
	case ICMP6_PACKET_TOO_BIG:
		return EMSGSIZE;
	case ICMP6_PARAM_PROBLEM:
		return EPROTO;
	default:
		return EHOSTUNREACH; /* time exceeded */
	}
}

void udp_icmp6_error(struct stack *s, const struct inet_hdr *quoted, const uint8_t *l4,
		     size_t l4_len, uint8_t type, uint8_t code, uint32_t info)
{
	struct udp_sock *u = udp_icmp_report(s, &quoted->src, &quoted->dst, l4, l4_len,
					     udp_icmp6_errno(type, code));
	/* RFC 8201 §4: the path MTU the connected socket's next datagrams are fragmented to,
	 * never below the IPv6 minimum (§5.2 leaves the rest of a lie harmless); a larger
	 * value than the path's now never raises it (§4: only decreases are taken). */
	if (u != NULL && type == ICMP6_PACKET_TOO_BIG) {
		uint32_t mtu = info < IP6_MIN_MTU ? IP6_MIN_MTU : info;
		if (u->pmtu == 0 || mtu < u->pmtu)
			u->pmtu = (uint16_t)RTE_MIN(mtu, (uint32_t)UINT16_MAX);
	}
}
