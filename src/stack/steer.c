#include "steer.h"

#include "wire/bytes.h"
#include "wire/icmp4.h"

void steer_init(struct steer *st, unsigned nb_workers)
{
	st->nb_workers = nb_workers == 0 ? 1 : nb_workers;
	for (unsigned i = 0; i < STEER_TABLE_SIZE; i++)
		st->table[i] = (uint8_t)(i % st->nb_workers);
	toeplitz_init(&st->hash, toeplitz_symmetric_key);
}

unsigned steer_tcp_owner(const struct steer *st, uint32_t src, uint32_t dst, uint16_t sport,
			 uint16_t dport)
{
	return steer_of_hash(st, toeplitz_ipv4_l4(&st->hash, src, dst, sport, dport));
}

unsigned steer_tcp_owner_inet(const struct steer *st, const struct inet_addr *src,
			      const struct inet_addr *dst, uint16_t sport, uint16_t dport)
{
	if (inet_addr_is_v4(src))
		return steer_tcp_owner(st, inet_addr_to_v4(src), inet_addr_to_v4(dst), sport, dport);
	return steer_of_hash(st, toeplitz_ipv6_l4(&st->hash, src->b, dst->b, sport, dport));
}

unsigned steer_udp_owner(const struct steer *st, uint16_t lport)
{
	return st->table[lport % STEER_TABLE_SIZE];
}

unsigned steer_frag_owner(const struct steer *st, uint32_t src, uint32_t dst)
{
	return steer_of_hash(st, toeplitz_ipv4(&st->hash, src, dst));
}

/* The flow an ICMP error quotes: the header of a datagram we sent and its first 8 payload
 * bytes (RFC 792), so its source is ours. Too short or not TCP/UDP: STEER_ANY. */
static unsigned steer_icmp_error_owner(const struct steer *st, const uint8_t *icmp, uint32_t len)
{
	if (len < ICMP4_HDR_LEN + IP4_HDR_MIN_LEN)
		return STEER_ANY;
	uint8_t type = icmp[ICMP4_OFF_TYPE];
	if (type != ICMP4_DEST_UNREACH && type != ICMP4_TIME_EXCEEDED &&
	    type != ICMP4_PARAM_PROBLEM)
		return STEER_ANY;
	const uint8_t *in = icmp + ICMP4_HDR_LEN;
	uint32_t in_len = len - ICMP4_HDR_LEN;
	uint32_t ihl = (uint32_t)(in[0] & 0xf) * 4;
	if ((in[0] >> 4) != 4 || ihl < IP4_HDR_MIN_LEN || in_len < ihl + 4)
		return STEER_ANY;
	uint32_t src = wire_get_be32(in + 12), dst = wire_get_be32(in + 16);
	uint16_t sport = wire_get_be16(in + ihl), dport = wire_get_be16(in + ihl + 2);
	switch (in[9]) {
	case IP4_PROTO_TCP:
		return steer_tcp_owner(st, dst, src, dport, sport);
	case IP4_PROTO_UDP:
		return steer_udp_owner(st, sport);
	default:
		return STEER_ANY;
	}
}

unsigned steer_datagram_owner(const struct steer *st, const struct ip4_repr *ip,
			      const uint8_t *l4, uint32_t l4_len)
{
	switch (ip->proto) {
	case IP4_PROTO_TCP:
		return l4_len < 4 ? STEER_ANY
				  : steer_tcp_owner(st, ip->src, ip->dst, wire_get_be16(l4),
						    wire_get_be16(l4 + 2));
	case IP4_PROTO_UDP:
		return l4_len < 4 ? STEER_ANY : steer_udp_owner(st, wire_get_be16(l4 + 2));
	case IP4_PROTO_ICMP:
		return steer_icmp_error_owner(st, l4, l4_len);
	default:
		return STEER_ANY;
	}
}
