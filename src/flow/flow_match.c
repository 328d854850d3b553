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
