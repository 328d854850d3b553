#include "mld.h"

#include <string.h>

#include "bytes.h"
#include "icmp6.h"

/* RFC 3810 §5.1.3: codes from 32768 on are a floating-point value. */
static uint32_t mld2_max_resp_ms(uint16_t code)
{
	if (code < 32768)
		return code;
	uint32_t mant = code & 0x0fff, exp = (code >> 12) & 0x7;
	return (mant | 0x1000) << (exp + 3);
}

enum wire_status mld_query_parse(const uint8_t *msg, size_t len, const struct ip6_repr *ip,
				 struct mld_query *out)
{
	if (len < MLD1_LEN || (len > MLD1_LEN && len < MLD2_QUERY_MIN_LEN))
		return WIRE_TRUNCATED;
	struct mld_query q = {.version = len == MLD1_LEN ? 1 : 2};
	memcpy(q.group.b, msg + 8, 16);
	uint16_t code = wire_get_be16(msg + 4);
	if (q.version == 1) {
		q.max_resp_ms = code;
	} else {
		size_t sources = wire_get_be16(msg + 26);
		if (sources > (len - MLD2_QUERY_MIN_LEN) / 16)
			return WIRE_TRUNCATED;
		q.max_resp_ms = mld2_max_resp_ms(code);
	}
	static const struct ip6_addr all_nodes = {.b = {0xff, 0x02, [15] = 1}};
	bool general = ip6_is_unspecified(&q.group);
	if (!ip6_is_link_local(&ip->src) || (!general && !ip6_is_multicast(&q.group)) ||
	    !(ip6_addr_equal(&ip->dst, &all_nodes) ||
	      (!general && ip6_addr_equal(&ip->dst, &q.group))))
		return WIRE_BAD_FIELD;
	*out = q;
	return WIRE_OK;
}

size_t mld2_build_report(uint8_t *buf, size_t cap, uint8_t rtype, const struct ip6_addr *groups,
			 unsigned n)
{
	size_t len = ICMP6_HDR_LEN + (size_t)n * MLD2_RECORD_LEN;
	if (cap < len || n > UINT16_MAX)
		return 0;
	memset(buf, 0, len);
	buf[ICMP6_OFF_TYPE] = ICMP6_MLD2_REPORT;
	wire_put_be16(buf + 6, (uint16_t)n);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *r = buf + ICMP6_HDR_LEN + (size_t)i * MLD2_RECORD_LEN;
		r[0] = rtype;
		memcpy(r + 4, groups[i].b, 16);
	}
	return len;
}

size_t mld1_build(uint8_t *buf, size_t cap, uint8_t type, const struct ip6_addr *group)
{
	if (cap < MLD1_LEN)
		return 0;
	memset(buf, 0, MLD1_LEN);
	buf[ICMP6_OFF_TYPE] = type;
	memcpy(buf + 8, group->b, 16);
	return MLD1_LEN;
}

void mld_build_hbh(uint8_t buf[MLD_HBH_LEN])
{
	/* Next header, length 0 (8 bytes), Router Alert (type 5, length 2, value 0), PadN. */
	static const uint8_t hbh[MLD_HBH_LEN] = {IP6_NH_ICMPV6, 0, 5, 2, 0, 0, 1, 0};
	memcpy(buf, hbh, MLD_HBH_LEN);
}
