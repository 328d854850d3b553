/* ARP for IPv4 over Ethernet (RFC 826). */
#include "arp.h"

#include <string.h>

#include "bytes.h"

#define ARP_PTYPE_IPV4 ETH_TYPE_IPV4 /* RFC 826: the protocol type is an EtherType */
#define ARP_PLEN_IPV4 4

enum wire_status arp_parse(const uint8_t *buf, size_t len, struct arp_repr *out)
{
	struct arp_repr r;

	if (len < ARP_LEN)
		return WIRE_TRUNCATED;
	if (wire_get_be16(buf + ARP_OFF_HTYPE) != ARP_HTYPE_ETHER ||
	    wire_get_be16(buf + ARP_OFF_PTYPE) != ARP_PTYPE_IPV4 ||
	    buf[ARP_OFF_HLEN] != ETH_ADDR_LEN || buf[ARP_OFF_PLEN] != ARP_PLEN_IPV4)
		return WIRE_BAD_FIELD;
	r.op = wire_get_be16(buf + ARP_OFF_OP);
	if (r.op != ARP_OP_REQUEST && r.op != ARP_OP_REPLY)
		return WIRE_BAD_FIELD;
	memcpy(r.sha.b, buf + ARP_OFF_SHA, ETH_ADDR_LEN);
	/* No station owns a group address: such a sender would poison the neighbour cache. */
	if (eth_addr_is_multicast(&r.sha))
		return WIRE_BAD_FIELD;
	r.spa = wire_get_be32(buf + ARP_OFF_SPA);
	memcpy(r.tha.b, buf + ARP_OFF_THA, ETH_ADDR_LEN);
	r.tpa = wire_get_be32(buf + ARP_OFF_TPA);
	*out = r;
	return WIRE_OK;
}

size_t arp_build(uint8_t *buf, size_t cap, const struct arp_repr *repr)
{
	if (cap < ARP_LEN)
		return 0;
	wire_put_be16(buf + ARP_OFF_HTYPE, ARP_HTYPE_ETHER);
	wire_put_be16(buf + ARP_OFF_PTYPE, ARP_PTYPE_IPV4);
	buf[ARP_OFF_HLEN] = ETH_ADDR_LEN;
	buf[ARP_OFF_PLEN] = ARP_PLEN_IPV4;
	wire_put_be16(buf + ARP_OFF_OP, repr->op);
	memcpy(buf + ARP_OFF_SHA, repr->sha.b, ETH_ADDR_LEN);
	wire_put_be32(buf + ARP_OFF_SPA, repr->spa);
	memcpy(buf + ARP_OFF_THA, repr->tha.b, ETH_ADDR_LEN);
	wire_put_be32(buf + ARP_OFF_TPA, repr->tpa);
	return ARP_LEN;
}
