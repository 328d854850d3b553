#include "match_words.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire/ipv4.h"

bool match_num(const char *s, unsigned long max, unsigned long *out)
{
	if (s[0] < '0' || s[0] > '9')
		return false;
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (*end != '\0' || errno != 0 || v > max)
		return false;
	*out = v;
	return true;
}

int match_proto(const char *key, const char *val, int16_t *proto, char *err, size_t cap)
{
	unsigned long v;
	if (strcmp(val, "tcp") == 0)
		v = MATCH_PROTO_TCP;
	else if (strcmp(val, "udp") == 0)
		v = MATCH_PROTO_UDP;
	else if (strcmp(val, "icmp") == 0)
		v = MATCH_PROTO_ICMP;
	else if (strcmp(val, "icmpv6") == 0)
		v = MATCH_PROTO_ICMPV6;
	else if (!match_num(val, 255, &v)) {
		snprintf(err, cap, "%s must be tcp, udp, icmp, icmpv6 or a number from 0 to 255, "
			 "not '%s'", key, val);
		return -1;
	}
	*proto = (int16_t)v;
	return 0;
}

int match_prefix(const char *key, const char *val, uint32_t *addr, uint8_t *len, char *err,
		 size_t cap)
{
	if (ip4_prefix_parse(val, addr, len) != 0) {
		snprintf(err, cap, "%s '%s' is not an IPv4 address or ADDR/LEN prefix", key, val);
		return -1;
	}
	if ((*addr & ~ip4_mask(*len)) != 0) {
		char net[16];
		ip4_addr_format(*addr & ip4_mask(*len), net, sizeof(net));
		snprintf(err, cap, "%s '%s' has host bits set (did you mean %s/%u?)", key, val, net,
			 *len);
		return -1;
	}
	return 0;
}

static int match_prefix6(const char *key, const char *val, struct ip6_addr *addr, uint8_t *len,
			 char *err, size_t cap)
{
	if (ip6_prefix_parse(val, addr, len) != 0) {
		snprintf(err, cap, "%s '%s' is not an IPv6 address or ADDR/LEN prefix", key, val);
		return -1;
	}
	struct ip6_addr net = *addr;
	ip6_prefix_mask(&net, *len);
	if (!ip6_addr_equal(&net, addr)) {
		char text[48];
		snprintf(err, cap, "%s '%s' has host bits set (did you mean %s/%u?)", key, val,
			 ip6_addr_format(&net, text, sizeof(text)), *len);
		return -1;
	}
	return 0;
}

int match_prefix_inet(const char *key, const char *val, uint8_t *family, uint32_t *addr4,
		      struct ip6_addr *addr6, uint8_t *len, char *err, size_t cap)
{
	/* Every IPv6 text form has a colon (RFC 4291 §2.2), no IPv4 one does. */
	if (strchr(val, ':') != NULL) {
		*family = 6;
		return match_prefix6(key, val, addr6, len, err, cap);
	}
	*family = 4;
	if (ip4_prefix_parse(val, addr4, len) != 0) {
		snprintf(err, cap, "%s '%s' is not an IPv4 or IPv6 address or ADDR/LEN prefix", key,
			 val);
		return -1;
	}
	return match_prefix(key, val, addr4, len, err, cap);
}

int match_port_range(const char *key, const char *val, uint16_t *lo, uint16_t *hi, char *err,
		     size_t cap)
{
	char first[8];
	const char *dash = strchr(val, '-');
	size_t n = dash != NULL ? (size_t)(dash - val) : strlen(val);
	unsigned long a, b;
	if (n >= sizeof(first))
		goto bad;
	memcpy(first, val, n);
	first[n] = '\0';
	if (!match_num(first, 65535, &a))
		goto bad;
	b = a;
	if (dash != NULL && !match_num(dash + 1, 65535, &b))
		goto bad;
	if (a > b) {
		snprintf(err, cap, "%s range '%s' is reversed (did you mean %lu-%lu?)", key, val,
			 b, a);
		return -1;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
bad:
	snprintf(err, cap, "%s '%s' is not a port or PORT-PORT range of 0 to 65535", key, val);
	return -1;
}

size_t match_append(char *buf, size_t cap, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + (len < cap ? len : cap), len < cap ? cap - len : 0, fmt, ap);
	va_end(ap);
	return len + (n > 0 ? (size_t)n : 0);
}

size_t match_append_proto(char *buf, size_t cap, size_t len, int16_t proto)
{
	switch (proto) {
	case MATCH_PROTO_TCP: return match_append(buf, cap, len, " proto tcp");
	case MATCH_PROTO_UDP: return match_append(buf, cap, len, " proto udp");
	case MATCH_PROTO_ICMP: return match_append(buf, cap, len, " proto icmp");
	case MATCH_PROTO_ICMPV6: return match_append(buf, cap, len, " proto icmpv6");
	default: return proto < 0 ? len : match_append(buf, cap, len, " proto %d", proto);
	}
}

size_t match_append_prefix(char *buf, size_t cap, size_t len, const char *key, uint32_t addr,
			   uint8_t plen)
{
	char a[16];
	if (plen == 0)
		return len;
	return match_append(buf, cap, len, " %s %s/%u", key, ip4_addr_format(addr, a, sizeof(a)),
			    plen);
}

size_t match_append_prefix6(char *buf, size_t cap, size_t len, const char *key,
			    const struct ip6_addr *addr, uint8_t plen)
{
	char a[48];
	if (plen == 0)
		return len;
	return match_append(buf, cap, len, " %s %s/%u", key, ip6_addr_format(addr, a, sizeof(a)),
			    plen);
}

size_t match_append_ports(char *buf, size_t cap, size_t len, const char *key, uint16_t lo,
			  uint16_t hi)
{
	if (lo == 0 && hi == 65535)
		return len;
	if (lo == hi)
		return match_append(buf, cap, len, " %s %u", key, lo);
	return match_append(buf, cap, len, " %s %u-%u", key, lo, hi);
}
