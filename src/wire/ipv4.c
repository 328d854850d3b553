/* IPv4 headers (RFC 791), their options (RFC 791 §3.1, RFC 7126) and address text. */
#include "ipv4.h"

#include <errno.h>
#include <stdio.h>

#include "bytes.h"
#include "checksum.h"

#define IP4_VERSION 4
#define IP4_OPT_OFF_LEN 1 /* an option's length byte follows its type (RFC 791 §3.1) */
#define IP4_OPT_MIN_LEN 2 /* type and length bytes count in the length */

enum wire_status ip4_parse(const uint8_t *buf, size_t len, bool verify_csum,
			   struct ip4_repr *out)
{
	struct ip4_repr r;
	size_t payload_len;
	uint16_t frag;

	if (len < IP4_HDR_MIN_LEN)
		return WIRE_TRUNCATED;
	if (buf[IP4_OFF_VER_IHL] >> 4 != IP4_VERSION)
		return WIRE_BAD_VERSION;
	r.hdr_len = (size_t)(buf[IP4_OFF_VER_IHL] & 0x0f) * 4; /* IHL counts 32-bit words */
	if (r.hdr_len < IP4_HDR_MIN_LEN || r.hdr_len > len)
		return WIRE_BAD_HDR_LEN;
	r.total_len = wire_get_be16(buf + IP4_OFF_TOTAL_LEN);
	/* Bytes past total_len are link-layer padding; fewer bytes mean a cut datagram. */
	if (r.total_len < r.hdr_len || r.total_len > len)
		return WIRE_BAD_LENGTH;
	if (verify_csum && wire_csum(buf, r.hdr_len) != 0)
		return WIRE_BAD_CHECKSUM;

	r.tos = buf[IP4_OFF_TOS];
	r.id = wire_get_be16(buf + IP4_OFF_ID);
	frag = wire_get_be16(buf + IP4_OFF_FRAG);
	r.df = (frag & IP4_FLAG_DF) != 0;
	r.mf = (frag & IP4_FLAG_MF) != 0;
	r.frag_off = (uint16_t)((frag & IP4_FRAG_OFF_MASK) * 8); /* at most 65528 */
	r.ttl = buf[IP4_OFF_TTL];
	r.proto = buf[IP4_OFF_PROTO];
	r.src = wire_get_be32(buf + IP4_OFF_SRC);
	r.dst = wire_get_be32(buf + IP4_OFF_DST);

	/* RFC 791 §3.1: the reserved flag "must be zero". */
	if (frag & IP4_FLAG_RESERVED)
		return WIRE_BAD_FIELD;
	/* RFC 791: a datagram is at most 65535 bytes, so this fragment placed at its offset with
	 * its header must fit (the "ping of death" check). Later fragments repeat only the
	 * copied options (RFC 791 §3.2), so their headers are never longer than the first's
	 * and no datagram that reassembles within 65535 bytes is refused. */
	if ((size_t)r.frag_off + r.total_len > IP4_MAX_LEN)
		return WIRE_BAD_FIELD;
	/* RFC 791 §3.2: fragments are cut on 8-byte boundaries, so all but the last carry a
	 * multiple of 8 data bytes. */
	payload_len = r.total_len - r.hdr_len;
	if (r.mf && payload_len % 8 != 0)
		return WIRE_BAD_FIELD;
	/* RFC 1122 §3.2.1.3, RFC 1812 §5.3.7: no multicast, broadcast or loopback source. */
	if (ip4_is_multicast(r.src) || ip4_is_limited_broadcast(r.src) || ip4_is_loopback(r.src))
		return WIRE_BAD_FIELD;
	/* Nor one on network 0 ("this host on this network", RFC 1122 §3.2.1.3 (a), (b)): only
	 * a host learning its address sends from 0.0.0.0, and only to the limited broadcast
	 * (BOOTP and DHCP, RFC 2131 §4.1; Linux's ip_route_input_slow makes the same one
	 * exception). A SYN from 0.0.0.0 would leave a half-open connection, an echo request
	 * a reply to nobody. */
	if ((r.src >> 24) == 0 && !(r.src == 0 && ip4_is_limited_broadcast(r.dst)))
		return WIRE_BAD_FIELD;

	*out = r;
	return WIRE_OK;
}

enum wire_status ip4_options_check(const uint8_t *opts, size_t len, struct ip4_opts_info *out)
{
	struct ip4_opts_info info = { 0 };
	size_t i = 0;

	while (i < len) {
		uint8_t type = opts[i];
		size_t opt_len;

		if (type == IP4_OPT_EOL)
			break;      /* RFC 791: end of the option list; the rest is padding */
		if (type == IP4_OPT_NOP) {
			i++;        /* RFC 791: a single byte, used for alignment */
			continue;
		}
		/* Every other option is type, length, data; the length counts type and length
		 * (RFC 791 §3.1). i < len here, so len - i does not wrap. */
		if (len - i < IP4_OPT_MIN_LEN)
			return WIRE_BAD_OPTION;
		opt_len = opts[i + IP4_OPT_OFF_LEN];
		if (opt_len < IP4_OPT_MIN_LEN || opt_len > len - i)
			return WIRE_BAD_OPTION;

		switch (type) {
		case IP4_OPT_LSRR:
		case IP4_OPT_SSRR:
			info.source_route = true;
			break;
		case IP4_OPT_RR:
			info.record_route = true;
			break;
		case IP4_OPT_TS:
			info.timestamp = true;
			break;
		case IP4_OPT_RA:
			info.router_alert = true; /* RFC 2113 */
			break;
		default:
			info.unknown++;
			break;
		}
		i += opt_len;
	}
	*out = info;
	return WIRE_OK;
}

size_t ip4_build(uint8_t *buf, size_t cap, const struct ip4_repr *repr)
{
	uint16_t frag = (uint16_t)((repr->frag_off / 8) & IP4_FRAG_OFF_MASK);

	if (cap < IP4_HDR_MIN_LEN)
		return 0;
	if (repr->df)
		frag |= IP4_FLAG_DF;
	if (repr->mf)
		frag |= IP4_FLAG_MF;
	buf[IP4_OFF_VER_IHL] = IP4_VERSION << 4 | IP4_HDR_MIN_LEN / 4;
	buf[IP4_OFF_TOS] = repr->tos;
	wire_put_be16(buf + IP4_OFF_TOTAL_LEN, repr->total_len);
	wire_put_be16(buf + IP4_OFF_ID, repr->id);
	wire_put_be16(buf + IP4_OFF_FRAG, frag);
	buf[IP4_OFF_TTL] = repr->ttl;
	buf[IP4_OFF_PROTO] = repr->proto;
	wire_put_be16(buf + IP4_OFF_CSUM, 0);
	wire_put_be32(buf + IP4_OFF_SRC, repr->src);
	wire_put_be32(buf + IP4_OFF_DST, repr->dst);
	wire_put_be16(buf + IP4_OFF_CSUM, wire_csum(buf, IP4_HDR_MIN_LEN));
	return IP4_HDR_MIN_LEN;
}

char *ip4_addr_format(uint32_t addr, char *buf, size_t cap)
{
	snprintf(buf, cap, "%u.%u.%u.%u", addr >> 24, addr >> 16 & 0xff, addr >> 8 & 0xff,
		 addr & 0xff);
	return buf;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Parses a decimal number of 1..max_digits digits into *out; a leading zero is allowed only
 * in "0" itself, so that "010" cannot be mistaken for octal (as inet_aton reads it). Returns
 * the first byte after the number, or NULL. */
static const char *parse_decimal(const char *s, unsigned max_digits, unsigned *out)
{
	unsigned v = 0, n = 0;

	if (!is_digit(*s) || (s[0] == '0' && is_digit(s[1])))
		return NULL;
	while (is_digit(*s)) {
		if (++n > max_digits)
			return NULL;
		v = v * 10 + (unsigned)(*s - '0');
		s++;
	}
	*out = v;
	return s;
}

/* Parses the four parts of a dotted quad; returns the first byte after it, or NULL. */
static const char *parse_quad(const char *s, uint32_t *out)
{
	uint32_t addr = 0;
	int i;

	for (i = 0; i < 4; i++) {
		unsigned part;

		if (i > 0) {
			if (*s != '.')
				return NULL;
			s++;
		}
		s = parse_decimal(s, 3, &part);
		if (!s || part > 255)
			return NULL;
		addr = addr << 8 | part;
	}
	*out = addr;
	return s;
}

int ip4_addr_parse(const char *s, uint32_t *out)
{
	uint32_t addr;

	s = parse_quad(s, &addr);
	if (!s || *s != '\0')
		return -EINVAL;
	*out = addr;
	return 0;
}

int ip4_prefix_parse(const char *s, uint32_t *addr, uint8_t *plen)
{
	uint32_t a;
	unsigned n = 32;

	s = parse_quad(s, &a);
	if (!s)
		return -EINVAL;
	if (*s == '/') {
		s = parse_decimal(s + 1, 2, &n);
		if (!s || n > 32)
			return -EINVAL;
	}
	if (*s != '\0')
		return -EINVAL;
	*addr = a;
	*plen = (uint8_t)n;
	return 0;
}
