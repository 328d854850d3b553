#include "flow_match.h"

#include "wire/bytes.h"
#include "wire/eth.h"
#include "wire/ipv4.h"

void flow_key_parse(const uint8_t *frame, size_t len, uint16_t port, struct flow_key *k)
{
	*k = (struct flow_key){.port = port};
	if (len < ETH_HDR_LEN)
		return;
	k->ethertype = wire_get_be16(frame + ETH_OFF_TYPE);
	if (k->ethertype != ETH_TYPE_IPV4 || len < ETH_HDR_LEN + IP4_HDR_MIN_LEN)
		return;
	const uint8_t *ip = frame + ETH_HDR_LEN;
	size_t ihl = (size_t)(ip[IP4_OFF_VER_IHL] & 0xf) * 4;
	if ((ip[IP4_OFF_VER_IHL] >> 4) != 4 || ihl < IP4_HDR_MIN_LEN ||
	    ihl > len - ETH_HDR_LEN)
		return;
	k->ip4 = true;
	k->proto = ip[IP4_OFF_PROTO];
	k->src = wire_get_be32(ip + IP4_OFF_SRC);
	k->dst = wire_get_be32(ip + IP4_OFF_DST);
	/* Only the first fragment carries the ports (RFC 791): later ones match no port rule,
	 * as a NIC's flow table sees them. */
	bool first = (wire_get_be16(ip + IP4_OFF_FRAG) & 0x1fff) == 0;
	if ((k->proto == IP4_PROTO_TCP || k->proto == IP4_PROTO_UDP) && first &&
	    len - ETH_HDR_LEN - ihl >= 4) {
		k->l4 = true;
		k->sport = wire_get_be16(ip + ihl);
		k->dport = wire_get_be16(ip + ihl + 2);
	}
}

static uint32_t prefix_mask(uint8_t len)
{
	return len == 0 ? 0 : ~0u << (32 - len);
}

void flow_test_compile(const struct flow_match *m, struct flow_test *t)
{
	bool ports = !(m->sport_lo == 0 && m->sport_hi == 65535 && m->dport_lo == 0 &&
		       m->dport_hi == 65535);
	*t = (struct flow_test){
		.src = m->src, .src_mask = prefix_mask(m->src_len),
		.dst = m->dst, .dst_mask = prefix_mask(m->dst_len),
		.sport_lo = m->sport_lo, .sport_span = (uint16_t)(m->sport_hi - m->sport_lo),
		.dport_lo = m->dport_lo, .dport_span = (uint16_t)(m->dport_hi - m->dport_lo),
		.port = m->dev == FLOW_ANY ? 0 : (uint16_t)m->dev,
		.port_mask = m->dev == FLOW_ANY ? 0 : 0xffff,
		.ethertype = m->ethertype == FLOW_ANY ? 0 : (uint16_t)m->ethertype,
		.ethertype_mask = m->ethertype == FLOW_ANY ? 0 : 0xffff,
		.proto = m->proto == FLOW_ANY ? 0 : (uint8_t)m->proto,
		.proto_mask = m->proto == FLOW_ANY ? 0 : 0xff,
		/* A key without IPv4 has zero addresses and protocol: only a rule that asks for
		 * none of them may match it. */
		.need_ip4 = m->proto != FLOW_ANY || m->src_len != 0 || m->dst_len != 0,
		.need_l4 = ports,
	};
}
