#include "inet_addr.h"

#include <errno.h>

#include "checksum.h"
#include "ipv4.h"

char *inet_addr_format(const struct inet_addr *a, char *buf, size_t cap)
{
	if (inet_addr_is_v4(a))
		return ip4_addr_format(inet_addr_to_v4(a), buf, cap);
	struct ip6_addr v6 = inet_addr_to_v6(a);
	return ip6_addr_format(&v6, buf, cap);
}

int inet_addr_parse(const char *s, struct inet_addr *out)
{
	uint32_t v4;
	if (ip4_addr_parse(s, &v4) == 0) {
		*out = inet_addr_v4(v4);
		return 0;
	}
	struct ip6_addr v6;
	if (ip6_addr_parse(s, &v6) != 0)
		return -EINVAL;
	*out = inet_addr_v6(&v6);
	return 0;
}

uint32_t inet_addr_csum_pseudo(const struct inet_addr *src, const struct inet_addr *dst,
			       uint8_t proto, uint32_t len)
{
	if (inet_addr_is_v4(src))
		return wire_csum_pseudo4(inet_addr_to_v4(src), inet_addr_to_v4(dst), proto,
					 (uint16_t)len);
	return wire_csum_pseudo6(src->b, dst->b, proto, len);
}
