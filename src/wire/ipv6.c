#include "ipv6.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "bytes.h"

/* Parameter Problem codes (RFC 4443 §3.4, RFC 7112 §5). */
#define PROBLEM_FIELD 0
#define PROBLEM_NEXT_HEADER 1
#define PROBLEM_OPTION 2
#define PROBLEM_CHAIN 3

/* Options of Hop-by-Hop and Destination Options headers (RFC 8200 §4.2, RFC 2711). */
#define OPT_PAD1 0
#define OPT_PADN 1
#define OPT_ROUTER_ALERT 5
#define OPT_MAX_PADDING 7 /* RFC 4942 §2.1.9.5: more padding than an 8-byte header needs */

enum wire_status ip6_parse(const uint8_t *buf, size_t len, struct ip6_repr *out)
{
	if (len < IP6_HDR_LEN)
		return WIRE_TRUNCATED;
	uint32_t vtc_flow = wire_get_be32(buf + IP6_OFF_VTC_FLOW);
	if (vtc_flow >> 28 != 6)
		return WIRE_BAD_VERSION;
	uint16_t payload_len = wire_get_be16(buf + IP6_OFF_PAYLOAD_LEN);
	if (payload_len == 0 || (size_t)IP6_HDR_LEN + payload_len > len)
		return WIRE_BAD_LENGTH;
	struct ip6_repr r = {
		.tclass = (uint8_t)(vtc_flow >> 20),
		.flow = vtc_flow & 0xfffff,
		.payload_len = payload_len,
		.next_header = buf[IP6_OFF_NEXT_HEADER],
		.hop_limit = buf[IP6_OFF_HOP_LIMIT],
	};
	memcpy(r.src.b, buf + IP6_OFF_SRC, 16);
	memcpy(r.dst.b, buf + IP6_OFF_DST, 16);
	/* An IPv4-mapped source never appears on the wire (RFC 4291 §2.5.5.2; Linux's
	 * ip6_rcv_core drops it): accepted, it would pass for an IPv4 peer in the tables that
	 * key both families by one address (inet_addr.h). */
	if (ip6_is_multicast(&r.src) || ip6_is_loopback(&r.src) || ip6_is_v4mapped(&r.src) ||
	    ip6_is_unspecified(&r.dst))
		return WIRE_BAD_FIELD;
	*out = r;
	return WIRE_OK;
}

size_t ip6_build(uint8_t *buf, size_t cap, const struct ip6_repr *repr)
{
	if (cap < IP6_HDR_LEN)
		return 0;
	wire_put_be32(buf + IP6_OFF_VTC_FLOW,
		      6u << 28 | (uint32_t)repr->tclass << 20 | (repr->flow & 0xfffff));
	wire_put_be16(buf + IP6_OFF_PAYLOAD_LEN, repr->payload_len);
	buf[IP6_OFF_NEXT_HEADER] = repr->next_header;
	buf[IP6_OFF_HOP_LIMIT] = repr->hop_limit;
	memcpy(buf + IP6_OFF_SRC, repr->src.b, 16);
	memcpy(buf + IP6_OFF_DST, repr->dst.b, 16);
	return IP6_HDR_LEN;
}

static enum wire_status ext_problem(struct ip6_ext_info *out, enum wire_status st,
				    uint8_t code, size_t pointer, bool send_error)
{
	out->problem_code = code;
	out->problem_pointer = (uint32_t)pointer;
	out->send_error = send_error;
	return st;
}

/* The options of a Hop-by-Hop or Destination Options header at pkt[off..off+hlen). */
static enum wire_status walk_options(const uint8_t *pkt, size_t off, size_t hlen,
				     bool hop_by_hop, bool to_multicast, struct ip6_ext_info *out)
{
	size_t end = off + hlen, padding = 0;
	for (size_t i = off + 2; i < end;) {
		uint8_t type = pkt[i];
		if (type == OPT_PAD1) {
			if (++padding > OPT_MAX_PADDING)
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i, false);
			i++;
			continue;
		}
		if (i + 2 > end || i + 2 + (size_t)pkt[i + 1] > end)
			return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i, false);
		size_t olen = pkt[i + 1];
		if (type == OPT_PADN) {
			padding += 2 + olen;
			if (padding > OPT_MAX_PADDING)
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i, false);
			/* RFC 4942 §2.1.9.5: padding that carries data is a covert channel. */
			for (size_t k = 0; k < olen; k++)
				if (pkt[i + 2 + k] != 0)
					return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i,
							   false);
			i += 2 + olen;
			continue;
		}
		padding = 0;
		if (type == OPT_ROUTER_ALERT && hop_by_hop) {
			if (olen != 2)
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_FIELD, i + 1, true);
			out->router_alert = true;
		} else {
			/* RFC 8200 §4.2: the two high-order bits of an unknown type say what to do:
			 * 00 skip, 01 discard, 10 discard and report, 11 report unless the
			 * destination was a multicast address. */
			switch (type >> 6) {
			case 0:
				break;
			case 1:
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i, false);
			case 2:
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i, true);
			default:
				return ext_problem(out, WIRE_BAD_OPTION, PROBLEM_OPTION, i,
						   !to_multicast);
			}
		}
		i += 2 + olen;
	}
	return WIRE_OK;
}

/* Minimum bytes of the upper-layer headers RFC 7112 wants whole in a first fragment. */
static size_t upper_layer_min(uint8_t proto)
{
	switch (proto) {
	case IP6_NH_TCP:
		return 20;
	case IP6_NH_UDP:
		return 8;
	case IP6_NH_ICMPV6:
		return 4;
	default:
		return 0;
	}
}

static bool is_extension(uint8_t nh)
{
	return nh == IP6_NH_HOPOPTS || nh == IP6_NH_ROUTING || nh == IP6_NH_FRAGMENT ||
	       nh == IP6_NH_DSTOPTS;
}

enum wire_status ip6_ext_walk(const uint8_t *pkt, size_t len, bool to_multicast,
			      struct ip6_ext_info *out)
{
	struct ip6_ext_info info = {.proto = pkt[IP6_OFF_NEXT_HEADER],
				    .proto_field_off = IP6_OFF_NEXT_HEADER};
	size_t off = IP6_HDR_LEN;
	enum wire_status st = WIRE_OK;
	/* In a first fragment a header cut short is RFC 7112's incomplete chain, reported. */
	bool first_fragment = false;
	while (is_extension(info.proto)) {
		uint8_t nh = info.proto;
		if (nh == IP6_NH_HOPOPTS && off != IP6_HDR_LEN) {
			st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_NEXT_HEADER,
					 info.proto_field_off, true);
			goto out;
		}
		if (info.count == IP6_EXT_MAX) {
			st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_NEXT_HEADER,
					 info.proto_field_off, false);
			goto out;
		}
		if (off + 8 > len) {
			st = ext_problem(&info, WIRE_BAD_HDR_LEN, PROBLEM_CHAIN, 0, first_fragment);
			goto out;
		}
		size_t hlen = nh == IP6_NH_FRAGMENT ? IP6_FRAG_HDR_LEN : 8 + 8 * (size_t)pkt[off + 1];
		if (off + hlen > len) {
			st = ext_problem(&info, WIRE_BAD_HDR_LEN, PROBLEM_CHAIN, 0, first_fragment);
			goto out;
		}
		info.count++;
		if (nh == IP6_NH_HOPOPTS || nh == IP6_NH_DSTOPTS) {
			st = walk_options(pkt, off, hlen, nh == IP6_NH_HOPOPTS, to_multicast, &info);
			if (st != WIRE_OK)
				goto out;
		} else if (nh == IP6_NH_ROUTING) {
			/* RFC 8200 §4.4: a routing header with no segments left is ignored; else
			 * the node must process its type, and none is processed here (type 0
			 * is deprecated, RFC 5095). */
			if (pkt[off + 3] != 0) {
				st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_FIELD, off + 2, true);
				goto out;
			}
		} else {
			if (info.has_frag) {
				st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_NEXT_HEADER,
						 info.proto_field_off, true);
				goto out;
			}
			uint16_t off_flags = wire_get_be16(pkt + off + 2);
			info.has_frag = true;
			info.frag_hdr_off = off;
			info.unfrag_len = off - IP6_HDR_LEN;
			info.frag = (struct ip6_frag_repr){.offset = off_flags & 0xfff8,
							   .more = off_flags & 1,
							   .id = wire_get_be32(pkt + off + 4)};
			size_t frag_data = len - off - hlen;
			/* RFC 8200 §4.5: a fragment with more to come carries a multiple of 8
			 * bytes, and no fragment reaches past a 65535-byte payload. */
			if (info.frag.more && frag_data % 8 != 0) {
				st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_FIELD,
						 IP6_OFF_PAYLOAD_LEN, true);
				goto out;
			}
			if (info.unfrag_len + info.frag.offset + frag_data > 65535) {
				st = ext_problem(&info, WIRE_BAD_FIELD, PROBLEM_FIELD, off + 2, true);
				goto out;
			}
			if (info.frag.offset != 0) {
				/* The rest of the chain is the first fragment's. */
				info.proto = pkt[off];
				info.proto_field_off = off;
				off += hlen;
				break;
			}
			first_fragment = info.frag.more;
		}
		info.proto = pkt[off];
		info.proto_field_off = off;
		off += hlen;
	}
	if (first_fragment && len - off < upper_layer_min(info.proto))
		st = ext_problem(&info, WIRE_BAD_HDR_LEN, PROBLEM_CHAIN, 0, true);
out:
	info.l4_off = off;
	*out = info;
	return st;
}

bool ip6_is_unspecified(const struct ip6_addr *a)
{
	static const struct ip6_addr zero;
	return ip6_addr_equal(a, &zero);
}

bool ip6_is_loopback(const struct ip6_addr *a)
{
	static const struct ip6_addr one = {.b = {[15] = 1}};
	return ip6_addr_equal(a, &one);
}

bool ip6_is_v4mapped(const struct ip6_addr *a)
{
	static const uint8_t prefix[12] = {[10] = 0xff, [11] = 0xff};
	return memcmp(a->b, prefix, sizeof(prefix)) == 0;
}

struct ip6_addr ip6_solicited_node(const struct ip6_addr *a)
{
	struct ip6_addr g = {.b = {0xff, 0x02, [11] = 0x01, [12] = 0xff}};
	memcpy(g.b + 13, a->b + 13, 3);
	return g;
}

void ip6_set_eui64(struct ip6_addr *a, const uint8_t mac[6])
{
	const uint8_t iid[8] = {mac[0] ^ 0x02, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]};
	memcpy(a->b + 8, iid, sizeof(iid));
}

char *ip6_addr_format(const struct ip6_addr *a, char *buf, size_t cap)
{
	uint16_t g[8];
	for (unsigned i = 0; i < 8; i++)
		g[i] = wire_get_be16(a->b + 2 * i);
	if (ip6_is_v4mapped(a)) {
		snprintf(buf, cap, "::ffff:%u.%u.%u.%u", a->b[12], a->b[13], a->b[14], a->b[15]);
		return buf;
	}
	/* RFC 5952 §4.2: the longest run of zero groups, two or more, the first on a tie. */
	int best = -1, best_len = 1;
	for (int i = 0; i < 8;) {
		int j = i;
		while (j < 8 && g[j] == 0)
			j++;
		if (j - i > best_len) {
			best = i;
			best_len = j - i;
		}
		i = j > i ? j : i + 1;
	}
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < 8 && n < cap; i++) {
		if (i == best) {
			n += (size_t)snprintf(buf + n, cap - n, "::");
			i += best_len - 1;
			continue;
		}
		bool after_gap = i > 0 && i == best + best_len;
		n += (size_t)snprintf(buf + n, cap - n, "%s%x", i == 0 || after_gap ? "" : ":",
				      g[i]);
	}
	return buf;
}

/* Reads 1-4 hex digits at *s into *group; advances *s. */
static bool parse_group(const char **s, uint16_t *group)
{
	unsigned v = 0, digits = 0;
	const char *p = *s;
	for (; digits < 5; p++, digits++) {
		int d = *p >= '0' && *p <= '9'   ? *p - '0'
			: *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
			: *p >= 'A' && *p <= 'F' ? *p - 'A' + 10
						 : -1;
		if (d < 0)
			break;
		v = v << 4 | (unsigned)d;
	}
	if (digits == 0 || digits > 4)
		return false;
	*group = (uint16_t)v;
	*s = p;
	return true;
}

/* A strict dotted quad at s (to the end of the string) into four bytes. */
static bool parse_dotted_tail(const char *s, uint8_t out[4])
{
	for (unsigned i = 0; i < 4; i++) {
		if (*s < '0' || *s > '9')
			return false;
		unsigned v = 0, digits = 0;
		for (; *s >= '0' && *s <= '9'; s++, digits++)
			v = v * 10 + (unsigned)(*s - '0');
		if (digits > 3 || v > 255 || (digits > 1 && s[-(int)digits] == '0'))
			return false;
		out[i] = (uint8_t)v;
		if (i < 3 && *s++ != '.')
			return false;
	}
	return *s == '\0';
}

int ip6_addr_parse(const char *s, struct ip6_addr *out)
{
	uint16_t g[8];
	int n = 0, gap = -1;
	if (s[0] == ':') {
		if (s[1] != ':')
			return -EINVAL;
		gap = 0;
		s += 2;
	}
	while (*s != '\0') {
		if (n == 8)
			return -EINVAL;
		/* A dotted quad ends the address and counts as two groups. */
		if (strchr(s, '.') != NULL && strchr(s, ':') == NULL) {
			uint8_t v4[4];
			if (n > 6 || !parse_dotted_tail(s, v4))
				return -EINVAL;
			g[n++] = (uint16_t)(v4[0] << 8 | v4[1]);
			g[n++] = (uint16_t)(v4[2] << 8 | v4[3]);
			break;
		}
		if (!parse_group(&s, &g[n++]))
			return -EINVAL;
		if (*s == ':') {
			s++;
			if (*s == ':') {
				if (gap >= 0)
					return -EINVAL;
				gap = n;
				s++;
			} else if (*s == '\0') {
				return -EINVAL; /* a trailing single colon */
			}
		} else if (*s != '\0') {
			return -EINVAL;
		}
	}
	if ((gap < 0 && n != 8) || (gap >= 0 && n > 7))
		return -EINVAL;
	struct ip6_addr a = {{0}};
	int tail = gap < 0 ? 0 : n - gap;
	for (int i = 0; i < n - tail; i++)
		wire_put_be16(a.b + 2 * i, g[i]);
	for (int i = 0; i < tail; i++)
		wire_put_be16(a.b + 2 * (8 - tail + i), g[gap + i]);
	*out = a;
	return 0;
}

int ip6_prefix_parse(const char *s, struct ip6_addr *addr, uint8_t *plen)
{
	char text[64];
	const char *slash = strchr(s, '/');
	size_t alen = slash != NULL ? (size_t)(slash - s) : strlen(s);
	if (alen >= sizeof(text))
		return -EINVAL;
	memcpy(text, s, alen);
	text[alen] = '\0';
	unsigned n = 128;
	if (slash != NULL) {
		const char *p = slash + 1;
		if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0') || strlen(p) > 3)
			return -EINVAL;
		char *end;
		n = (unsigned)strtoul(p, &end, 10);
		if (*end != '\0' || n > 128)
			return -EINVAL;
	}
	if (ip6_addr_parse(text, addr) != 0)
		return -EINVAL;
	*plen = (uint8_t)n;
	return 0;
}

void ip6_prefix_mask(struct ip6_addr *a, uint8_t plen)
{
	for (unsigned i = 0; i < 16; i++) {
		unsigned keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		a->b[i] &= (uint8_t)(0xff00 >> keep);
	}
}
