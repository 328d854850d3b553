/* ICMP for IPv6 (RFC 4443) and Neighbor Discovery's messages (RFC 4861). */
#ifndef DPS_WIRE_ICMP6_H
#define DPS_WIRE_ICMP6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eth.h"
#include "ipv6.h"
#include "status.h"

#define ICMP6_HDR_LEN 8

#define ICMP6_OFF_TYPE 0
#define ICMP6_OFF_CODE 1
#define ICMP6_OFF_CSUM 2
#define ICMP6_OFF_REST 4

/* Error messages (types below 128, RFC 4443 §2.1). */
#define ICMP6_DEST_UNREACH 1
#define ICMP6_PACKET_TOO_BIG 2
#define ICMP6_TIME_EXCEEDED 3
#define ICMP6_PARAM_PROBLEM 4
/* Informational messages. */
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define ICMP6_MLD_QUERY 130
#define ICMP6_MLD_REPORT 131
#define ICMP6_MLD_DONE 132
#define ICMP6_ROUTER_SOLICIT 133
#define ICMP6_ROUTER_ADVERT 134
#define ICMP6_NEIGHBOR_SOLICIT 135
#define ICMP6_NEIGHBOR_ADVERT 136
#define ICMP6_REDIRECT 137
#define ICMP6_MLD2_REPORT 143

/* Destination-unreachable codes. */
#define ICMP6_UNREACH_NO_ROUTE 0
#define ICMP6_UNREACH_ADMIN 1
#define ICMP6_UNREACH_BEYOND_SCOPE 2
#define ICMP6_UNREACH_ADDR 3
#define ICMP6_UNREACH_PORT 4
/* Time-exceeded codes. */
#define ICMP6_TIMEX_HOP_LIMIT 0
#define ICMP6_TIMEX_REASS 1

/* The parsed 8-byte header, host order. */
struct icmp6_repr {
	uint8_t type;
	uint8_t code;
	uint32_t rest;       /* bytes 4..7: id<<16|seq for echo, MTU for packet too big,
			      * pointer for parameter problem */
	size_t payload_len;  /* bytes after the 8-byte header */
};

/* Parses an ICMPv6 message buf[0..len) (len = the upper-layer length). Rejects fewer than 8
 * bytes (TRUNCATED) and, when verify_csum, a checksum that does not verify with the
 * pseudo-header sum pseudo (wire_csum_pseudo6 with IP6_NH_ICMPV6 and len): BAD_CHECKSUM.
 * The checksum is mandatory in ICMPv6 (RFC 4443 §2.3). */
enum wire_status icmp6_parse(const uint8_t *buf, size_t len, uint32_t pseudo, bool verify_csum,
			     struct icmp6_repr *out);

/* Writes the 8-byte header with a zero checksum field: the caller adds the payload and
 * stores the checksum (with the pseudo-header) at ICMP6_OFF_CSUM. Returns 8, or 0 when cap
 * is too small. */
size_t icmp6_build_header(uint8_t *buf, size_t cap, const struct icmp6_repr *repr);

static inline bool icmp6_type_is_error(uint8_t type)
{
	return type < 128;
}

/* Neighbor Discovery option types (RFC 4861 §4.6). */
#define ND_OPT_SOURCE_LLADDR 1
#define ND_OPT_TARGET_LLADDR 2
#define ND_OPT_PREFIX_INFO 3
#define ND_OPT_REDIRECTED 4
#define ND_OPT_MTU 5

/* Prefix Information flags (§4.6.2). */
#define ND_PREFIX_ONLINK 0x80
#define ND_PREFIX_AUTO 0x40

#define ND_PREFIX_MAX 4 /* prefixes of one Router Advertisement kept by nd_parse */

struct nd_prefix {
	uint8_t plen;
	uint8_t flags;             /* ND_PREFIX_* */
	uint32_t valid_lifetime;   /* seconds; 0xffffffff is infinity */
	uint32_t preferred_lifetime;
	struct ip6_addr prefix;
};

/* A Neighbor Discovery message, host order. */
struct nd_repr {
	uint8_t type;
	struct ip6_addr target;    /* NS, NA, Redirect */
	struct ip6_addr redirect_dst; /* Redirect */
	/* NA flags (§4.4): router, solicited, override. */
	bool router, solicited, override;
	/* RA (§4.2). */
	uint8_t cur_hop_limit;
	bool managed, other;
	int8_t router_pref;        /* RFC 4191 §2.2 Default Router Preference: 1 high, 0
				    * medium (also the reserved value 10), -1 low */
	uint16_t router_lifetime;  /* seconds */
	uint32_t reachable_ms, retrans_ms;
	/* Options. */
	bool has_source_lladdr, has_target_lladdr;
	struct eth_addr source_lladdr, target_lladdr;
	uint32_t mtu;              /* 0: no MTU option */
	unsigned nb_prefixes;      /* kept in prefixes[], up to ND_PREFIX_MAX */
	unsigned prefixes_ignored; /* beyond ND_PREFIX_MAX */
	struct nd_prefix prefixes[ND_PREFIX_MAX];
};

/* Validates the Neighbor Discovery message msg[0..len) (an ICMPv6 message whose checksum
 * the caller verified) that arrived in the datagram ip, as RFC 4861 §6.1 and §7.1 ask:
 * hop limit 255 and code 0 (BAD_FIELD; a router or a neighbour off the link cannot forge
 * them), the type's fixed length (TRUNCATED), every option with a non-zero length within
 * the message (BAD_OPTION), a target that is not multicast (NS, NA), a Router Advertisement
 * from a link-local source, a solicitation from the unspecified address only towards a
 * solicited-node group and without a source link-layer address option, an advertisement to
 * a multicast group not marked solicited, a Redirect from a source that is not link-local,
 * to a multicast destination, or with a target neither link-local nor the destination
 * (§8.1) (BAD_FIELD). Unknown options are skipped
 * (§4.6). */
enum wire_status nd_parse(const uint8_t *msg, size_t len, const struct ip6_repr *ip,
			  struct nd_repr *out);

/* Appends the 8-byte link-layer address option of the given type (ND_OPT_*_LLADDR) at buf.
 * Returns 8, or 0 when cap is too small. */
size_t nd_build_lladdr_opt(uint8_t *buf, size_t cap, uint8_t type, const struct eth_addr *mac);

#endif
