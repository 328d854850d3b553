#include "icmp6.h"

#include <string.h>

#include "bytes.h"
#include "checksum.h"

enum wire_status icmp6_parse(const uint8_t *buf, size_t len, uint32_t pseudo, bool verify_csum,
			     struct icmp6_repr *out)
{
	if (len < ICMP6_HDR_LEN)
		return WIRE_TRUNCATED;
	if (verify_csum && wire_csum_finish(wire_csum_add(pseudo, buf, len)) != 0)
		return WIRE_BAD_CHECKSUM;
	*out = (struct icmp6_repr){
		.type = buf[ICMP6_OFF_TYPE],
		.code = buf[ICMP6_OFF_CODE],
		.rest = wire_get_be32(buf + ICMP6_OFF_REST),
		.payload_len = len - ICMP6_HDR_LEN,
	};
	return WIRE_OK;
}

size_t icmp6_build_header(uint8_t *buf, size_t cap, const struct icmp6_repr *repr)
{
	if (cap < ICMP6_HDR_LEN)
		return 0;
	buf[ICMP6_OFF_TYPE] = repr->type;
	buf[ICMP6_OFF_CODE] = repr->code;
	wire_put_be16(buf + ICMP6_OFF_CSUM, 0);
	wire_put_be32(buf + ICMP6_OFF_REST, repr->rest);
	return ICMP6_HDR_LEN;
}

/* The fixed part of each message before its options (RFC 4861 §4.1-§4.5). */
static size_t nd_fixed_len(uint8_t type)
{
	switch (type) {
	case ICMP6_ROUTER_SOLICIT:
		return 8;
	case ICMP6_ROUTER_ADVERT:
		return 16;
	case ICMP6_NEIGHBOR_SOLICIT:
	case ICMP6_NEIGHBOR_ADVERT:
		return 24;
	case ICMP6_REDIRECT:
		return 40;
	default:
		return 0;
	}
}

static void nd_take_prefix(const uint8_t *o, struct nd_repr *r)
{
	/* §4.6.2: length 4; a prefix length past 128 cannot be applied. */
	if (o[1] != 4 || o[2] > 128)
		return;
	if (r->nb_prefixes == ND_PREFIX_MAX) {
		r->prefixes_ignored++;
		return;
	}
	struct nd_prefix *p = &r->prefixes[r->nb_prefixes++];
	p->plen = o[2];
	p->flags = o[3];
	p->valid_lifetime = wire_get_be32(o + 4);
	p->preferred_lifetime = wire_get_be32(o + 8);
	memcpy(p->prefix.b, o + 16, 16);
}

/* RFC 4191 §2.2: the Prf bits 3-4 of the flags byte; 01 high, 11 low, and 00 as well as the
 * reserved 10 medium. */
static int8_t nd_router_pref(uint8_t flags)
{
	switch ((flags >> 3) & 3) {
	case 1:
		return 1;
	case 3:
		return -1;
	default:
		return 0;
	}
}

static enum wire_status nd_options(const uint8_t *o, size_t len, struct nd_repr *r)
{
	while (len > 0) {
		/* §4.6: every option has a length, in 8-byte units, that is not zero. */
		if (len < 2 || o[1] == 0 || (size_t)o[1] * 8 > len)
			return WIRE_BAD_OPTION;
		size_t olen = (size_t)o[1] * 8;
		switch (o[0]) {
		case ND_OPT_SOURCE_LLADDR:
			r->has_source_lladdr = true;
			memcpy(r->source_lladdr.b, o + 2, 6);
			break;
		case ND_OPT_TARGET_LLADDR:
			r->has_target_lladdr = true;
			memcpy(r->target_lladdr.b, o + 2, 6);
			break;
		case ND_OPT_PREFIX_INFO:
			nd_take_prefix(o, r);
			break;
		case ND_OPT_MTU:
			if (o[1] == 1)
				r->mtu = wire_get_be32(o + 4);
			break;
		default:
			break; /* §4.6: unknown options are skipped */
		}
		o += olen;
		len -= olen;
	}
	return WIRE_OK;
}

enum wire_status nd_parse(const uint8_t *msg, size_t len, const struct ip6_repr *ip,
			  struct nd_repr *out)
{
	uint8_t type = msg[ICMP6_OFF_TYPE];
	size_t fixed = nd_fixed_len(type);
	if (fixed == 0 || len < fixed)
		return WIRE_TRUNCATED;
	/* §6.1, §7.1: a packet that crossed a router arrives with a hop limit below 255. */
	if (ip->hop_limit != 255 || msg[ICMP6_OFF_CODE] != 0)
		return WIRE_BAD_FIELD;
	struct nd_repr r = {.type = type};
	switch (type) {
	case ICMP6_ROUTER_ADVERT:
		r.cur_hop_limit = msg[4];
		r.managed = msg[5] & 0x80;
		r.other = msg[5] & 0x40;
		r.router_pref = nd_router_pref(msg[5]);
		r.router_lifetime = wire_get_be16(msg + 6);
		r.reachable_ms = wire_get_be32(msg + 8);
		r.retrans_ms = wire_get_be32(msg + 12);
		break;
	case ICMP6_NEIGHBOR_ADVERT:
		r.router = msg[4] & 0x80;
		r.solicited = msg[4] & 0x40;
		r.override = msg[4] & 0x20;
		memcpy(r.target.b, msg + 8, 16);
		break;
	case ICMP6_NEIGHBOR_SOLICIT:
		memcpy(r.target.b, msg + 8, 16);
		break;
	case ICMP6_REDIRECT:
		memcpy(r.target.b, msg + 8, 16);
		memcpy(r.redirect_dst.b, msg + 24, 16);
		break;
	default:
		break;
	}
	enum wire_status st = nd_options(msg + fixed, len - fixed, &r);
	if (st != WIRE_OK)
		return st;
	bool from_unspecified = ip6_is_unspecified(&ip->src);
	switch (type) {
	case ICMP6_ROUTER_SOLICIT:
		if (from_unspecified && r.has_source_lladdr) /* §6.1.1 */
			return WIRE_BAD_FIELD;
		break;
	case ICMP6_ROUTER_ADVERT:
	case ICMP6_REDIRECT:
		/* §6.1.2, §8.1: routers speak from their link-local address. */
		if (!ip6_is_link_local(&ip->src))
			return WIRE_BAD_FIELD;
		/* §8.1: a Redirect's destination is not multicast, and its target is a
		 * router (link-local) or the destination itself, found on the link. */
		if (type == ICMP6_REDIRECT &&
		    (ip6_is_multicast(&r.redirect_dst) ||
		     (!ip6_is_link_local(&r.target) &&
		      !ip6_addr_equal(&r.target, &r.redirect_dst))))
			return WIRE_BAD_FIELD;
		break;
	case ICMP6_NEIGHBOR_SOLICIT: {
		/* §7.1.1: duplicate address detection asks from :: to the target's group. */
		struct ip6_addr group = ip6_solicited_node(&r.target);
		if (ip6_is_multicast(&r.target) ||
		    (from_unspecified &&
		     (!ip6_addr_equal(&ip->dst, &group) || r.has_source_lladdr)))
			return WIRE_BAD_FIELD;
		break;
	}
	case ICMP6_NEIGHBOR_ADVERT:
		/* §7.1.2 */
		if (ip6_is_multicast(&r.target) || (ip6_is_multicast(&ip->dst) && r.solicited))
			return WIRE_BAD_FIELD;
		break;
	default:
		break;
	}
	*out = r;
	return WIRE_OK;
}

size_t nd_build_lladdr_opt(uint8_t *buf, size_t cap, uint8_t type, const struct eth_addr *mac)
{
	if (cap < 8)
		return 0;
	buf[0] = type;
	buf[1] = 1;
	memcpy(buf + 2, mac->b, 6);
	return 8;
}
