#include "flow_match.h"

#include "wire/bytes.h"
#include "wire/eth.h"
#include "wire/ipv4.h"
#include "wire/ipv6.h"

/* The ports of the transport header at l4[0..avail) when proto has them. */
static void key_ports(struct flow_key *k, const uint8_t *l4, size_t avail)
{
	if ((k->proto == IP4_PROTO_TCP || k->proto == IP4_PROTO_UDP) && avail >= 4) {
		k->l4 = true;
		k->sport = wire_get_be16(l4);
		k->dport = wire_get_be16(l4 + 2);
	}
}

static void key_parse_ip4(const uint8_t *ip, size_t len, struct flow_key *k)
{
	if (len < IP4_HDR_MIN_LEN)
		return;
	size_t ihl = (size_t)(ip[IP4_OFF_VER_IHL] & 0xf) * 4;
	if ((ip[IP4_OFF_VER_IHL] >> 4) != 4 || ihl < IP4_HDR_MIN_LEN || ihl > len)
		return;
	k->ip = true;
	k->proto = ip[IP4_OFF_PROTO];
	k->src[FLOW_ADDR_WORDS - 1] = wire_get_be32(ip + IP4_OFF_SRC);
	k->dst[FLOW_ADDR_WORDS - 1] = wire_get_be32(ip + IP4_OFF_DST);
	/* Only the first fragment carries the ports (RFC 791): later ones match no port rule,
	 * as a NIC's flow table sees them. */
	if ((wire_get_be16(ip + IP4_OFF_FRAG) & 0x1fff) == 0)
		key_ports(k, ip + ihl, len - ihl);
}

static void key_parse_ip6(const uint8_t *ip, size_t len, struct flow_key *k)
{
	if (len < IP6_HDR_LEN || (ip[IP6_OFF_VTC_FLOW] >> 4) != 6)
		return;
	k->ip = true;
	k->proto = ip[IP6_OFF_NEXT_HEADER];
	for (unsigned i = 0; i < FLOW_ADDR_WORDS; i++) {
		k->src[i] = wire_get_be32(ip + IP6_OFF_SRC + 4 * i);
		k->dst[i] = wire_get_be32(ip + IP6_OFF_DST + 4 * i);
	}
	/* A fragment's or extension header's number is the proto, and there are no ports. */
	key_ports(k, ip + IP6_HDR_LEN, len - IP6_HDR_LEN);
}

void flow_key_parse(const uint8_t *frame, size_t len, uint16_t port, struct flow_key *k)
{
	*k = (struct flow_key){.port = port};
	if (len < ETH_HDR_LEN)
		return;
	k->ethertype = wire_get_be16(frame + ETH_OFF_TYPE);
	if (k->ethertype == ETH_TYPE_IPV4)
		key_parse_ip4(frame + ETH_HDR_LEN, len - ETH_HDR_LEN, k);
	else if (k->ethertype == ETH_TYPE_IPV6)
		key_parse_ip6(frame + ETH_HDR_LEN, len - ETH_HDR_LEN, k);
}

static uint32_t prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : ~0u << (32 - len);
}

/* A prefix of len bits over an address's words (IPv4's: the last word alone). */
static void prefix_words(const uint32_t *addr, unsigned words, uint8_t len, uint32_t *value,
			 uint32_t *mask)
{
	unsigned first = FLOW_ADDR_WORDS - words;
	for (unsigned i = 0; i < words; i++) {
		unsigned bits = len <= 32 * i ? 0 : len >= 32 * (i + 1) ? 32 : len - 32 * i;
		mask[first + i] = prefix_mask((uint8_t)bits);
		value[first + i] = addr[i] & mask[first + i];
	}
}

static void ip6_words(const struct ip6_addr *a, uint32_t *w)
{
	for (unsigned i = 0; i < FLOW_ADDR_WORDS; i++)
		w[i] = wire_get_be32(a->b + 4 * i);
}

void flow_test_compile(const struct flow_match *m, struct flow_test *t)
{
	bool ports = !(m->sport_lo == 0 && m->sport_hi == 65535 && m->dport_lo == 0 &&
		       m->dport_hi == 65535);
	*t = (struct flow_test){
		.sport_lo = m->sport_lo, .sport_span = (uint16_t)(m->sport_hi - m->sport_lo),
		.dport_lo = m->dport_lo, .dport_span = (uint16_t)(m->dport_hi - m->dport_lo),
		.port = m->dev == FLOW_ANY ? 0 : (uint16_t)m->dev,
		.port_mask = m->dev == FLOW_ANY ? 0 : 0xffff,
		.ethertype = m->ethertype == FLOW_ANY ? 0 : (uint16_t)m->ethertype,
		.ethertype_mask = m->ethertype == FLOW_ANY ? 0 : 0xffff,
		.proto = m->proto == FLOW_ANY ? 0 : (uint8_t)m->proto,
		.proto_mask = m->proto == FLOW_ANY ? 0 : 0xff,
		/* A key without IP has zero addresses and protocol: only a rule that asks for
		 * none of them may match it. */
		.need_ip = m->proto != FLOW_ANY || m->src_len != 0 || m->dst_len != 0,
		.need_l4 = ports,
	};
	if (m->ethertype == FLOW_ETHERTYPE_IPV6) {
		uint32_t src[FLOW_ADDR_WORDS], dst[FLOW_ADDR_WORDS];
		ip6_words(&m->src6, src);
		ip6_words(&m->dst6, dst);
		prefix_words(src, FLOW_ADDR_WORDS, m->src_len, t->src, t->src_mask);
		prefix_words(dst, FLOW_ADDR_WORDS, m->dst_len, t->dst, t->dst_mask);
	} else {
		prefix_words(&m->src, 1, m->src_len, t->src, t->src_mask);
		prefix_words(&m->dst, 1, m->dst_len, t->dst, t->dst_mask);
	}
}
