/* UDP datagrams (RFC 768). */
#include "udp.h"

#include "bytes.h"
#include "checksum.h"
#include "ipv4.h"

enum wire_status udp_parse(const uint8_t *buf, size_t len, struct udp_repr *out)
{
	struct udp_repr r;

	if (len < UDP_HDR_LEN)
		return WIRE_TRUNCATED;
	r.length = wire_get_be16(buf + UDP_OFF_LEN);
	/* RFC 768: the length counts the header. Bytes past it are padding; fewer bytes mean a
	 * cut datagram. */
	if (r.length < UDP_HDR_LEN || r.length > len)
		return WIRE_BAD_LENGTH;
	r.src_port = wire_get_be16(buf + UDP_OFF_SRC_PORT);
	r.dst_port = wire_get_be16(buf + UDP_OFF_DST_PORT);
	r.checksum = wire_get_be16(buf + UDP_OFF_CSUM);
	r.payload_len = (size_t)r.length - UDP_HDR_LEN;

	/* Port 0 is reserved (IANA): nothing listens there. The source port may be 0 (RFC 768:
	 * "if not used, a value of zero is inserted"). */
	if (r.dst_port == 0)
		return WIRE_BAD_FIELD;

	*out = r;
	return WIRE_OK;
}

/* The unfolded sum of the pseudo-header, the header without its checksum field, and the
 * payload (RFC 768). len is 8..65535. */
static uint32_t udp_csum_sum(uint32_t src, uint32_t dst, const uint8_t *dgram, size_t len)
{
	uint32_t sum = wire_csum_pseudo4(src, dst, IP4_PROTO_UDP, (uint16_t)len);

	sum = wire_csum_add(sum, dgram, UDP_OFF_CSUM); /* even length: chunks may follow */
	return wire_csum_add(sum, dgram + UDP_HDR_LEN, len - UDP_HDR_LEN);
}

bool udp_checksum_ok(uint32_t src, uint32_t dst, const uint8_t *dgram, size_t len)
{
	uint16_t sent;
	uint32_t sum;

	if (len < UDP_HDR_LEN || len > UDP_MAX_LEN)
		return false;
	sent = wire_get_be16(dgram + UDP_OFF_CSUM);
	if (sent == UDP_CSUM_NONE)
		return true;
	/* Adding the transmitted checksum back gives the one's-complement zero when intact;
	 * a transmitted 0xffff (a computed 0, RFC 768) verifies the same way. */
	sum = udp_csum_sum(src, dst, dgram, len);
	return wire_csum_finish(wire_csum_add(sum, dgram + UDP_OFF_CSUM, 2)) == 0;
}

uint16_t udp_checksum(uint32_t src, uint32_t dst, const uint8_t *dgram, size_t len)
{
	uint16_t csum;

	if (len < UDP_HDR_LEN || len > UDP_MAX_LEN)
		return 0;
	csum = wire_csum_finish(udp_csum_sum(src, dst, dgram, len));
	/* RFC 768: "If the computed checksum is zero, it is transmitted as all ones". */
	return csum == 0 ? 0xffff : csum;
}

size_t udp_build(uint8_t *buf, size_t cap, const struct udp_repr *r)
{
	if (cap < UDP_HDR_LEN)
		return 0;
	wire_put_be16(buf + UDP_OFF_SRC_PORT, r->src_port);
	wire_put_be16(buf + UDP_OFF_DST_PORT, r->dst_port);
	wire_put_be16(buf + UDP_OFF_LEN, r->length);
	wire_put_be16(buf + UDP_OFF_CSUM, r->checksum);
	return UDP_HDR_LEN;
}
