/* ICMP for IPv4 (RFC 792). */
#include "icmp4.h"

#include "bytes.h"
#include "checksum.h"

#define ICMP4_SOURCE_QUENCH 4 /* deprecated by RFC 6633, still an error message */

enum wire_status icmp4_parse(const uint8_t *buf, size_t len, bool verify_csum,
			     struct icmp4_repr *out)
{
	if (len < ICMP4_HDR_LEN)
		return WIRE_TRUNCATED;
	/* RFC 792: the checksum covers the whole message, starting with the type. */
	if (verify_csum && wire_csum(buf, len) != 0)
		return WIRE_BAD_CHECKSUM;
	out->type = buf[ICMP4_OFF_TYPE];
	out->code = buf[ICMP4_OFF_CODE];
	out->rest = wire_get_be32(buf + ICMP4_OFF_REST);
	out->payload_len = len - ICMP4_HDR_LEN;
	return WIRE_OK;
}

size_t icmp4_build_header(uint8_t *buf, size_t cap, const struct icmp4_repr *repr)
{
	if (cap < ICMP4_HDR_LEN)
		return 0;
	buf[ICMP4_OFF_TYPE] = repr->type;
	buf[ICMP4_OFF_CODE] = repr->code;
	wire_put_be16(buf + ICMP4_OFF_CSUM, 0);
	wire_put_be32(buf + ICMP4_OFF_REST, repr->rest);
	return ICMP4_HDR_LEN;
}

bool icmp4_type_is_error(uint8_t type)
{
	/* RFC 1122 §3.2.2: the error messages of RFC 792. */
	switch (type) {
	case ICMP4_DEST_UNREACH:
	case ICMP4_SOURCE_QUENCH:
	case ICMP4_REDIRECT:
	case ICMP4_TIME_EXCEEDED:
	case ICMP4_PARAM_PROBLEM:
		return true;
	default:
		return false;
	}
}
