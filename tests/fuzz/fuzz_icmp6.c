/* libFuzzer target: icmp6_parse, Neighbor Discovery validation and MLD queries on arbitrary
 * bytes. The
 * first 40 bytes are read as the IPv6 header the message came in (so that hop limit,
 * addresses and the pseudo-header sum vary too), the rest as the ICMPv6 message. Checks
 * what nd_parse promises: bounded prefix lists, the RFC 4861 rules it enforces hold for
 * every message it accepts, and a message that verifies with its checksum keeps verifying
 * once the checksum is recomputed. */
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "checksum.h"
#include "fuzz_check.h"
#include "icmp6.h"
#include "mld.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < IP6_HDR_LEN)
		return 0;
	struct ip6_repr ip = {
		.hop_limit = data[IP6_OFF_HOP_LIMIT],
		.next_header = IP6_NH_ICMPV6,
	};
	memcpy(ip.src.b, data + IP6_OFF_SRC, 16);
	memcpy(ip.dst.b, data + IP6_OFF_DST, 16);
	const uint8_t *msg = data + IP6_HDR_LEN;
	size_t len = size - IP6_HDR_LEN;
	uint32_t pseudo = wire_csum_pseudo6(ip.src.b, ip.dst.b, IP6_NH_ICMPV6, (uint32_t)len);

	struct icmp6_repr r;
	enum wire_status st = icmp6_parse(msg, len, pseudo, true, &r);
	enum wire_status plain = icmp6_parse(msg, len, pseudo, false, &r);
	FUZZ_CHECK(plain == WIRE_OK || plain == WIRE_TRUNCATED);
	FUZZ_CHECK(st == plain || st == WIRE_BAD_CHECKSUM);
	if (plain != WIRE_OK)
		return 0;
	FUZZ_CHECK(r.payload_len == len - ICMP6_HDR_LEN);

	struct nd_repr nd;
	if (nd_parse(msg, len, &ip, &nd) == WIRE_OK) {
		FUZZ_CHECK(ip.hop_limit == 255 && msg[ICMP6_OFF_CODE] == 0);
		FUZZ_CHECK(nd.nb_prefixes <= ND_PREFIX_MAX);
		for (unsigned i = 0; i < nd.nb_prefixes; i++)
			FUZZ_CHECK(nd.prefixes[i].plen <= 128);
		if (nd.type == ICMP6_NEIGHBOR_SOLICIT || nd.type == ICMP6_NEIGHBOR_ADVERT)
			FUZZ_CHECK(!ip6_is_multicast(&nd.target));
		if (nd.type == ICMP6_ROUTER_ADVERT || nd.type == ICMP6_REDIRECT)
			FUZZ_CHECK(ip6_is_link_local(&ip.src));
		FUZZ_CHECK(nd.router_pref >= -1 && nd.router_pref <= 1);
		/* RFC 4861 §8.1: a Redirect's target is a router's link-local address or the
		 * destination itself, which is never multicast. */
		if (nd.type == ICMP6_REDIRECT)
			FUZZ_CHECK(!ip6_is_multicast(&nd.redirect_dst) &&
				   (ip6_is_link_local(&nd.target) ||
				    ip6_addr_equal(&nd.target, &nd.redirect_dst)));
	}

	struct mld_query q;
	if (r.type == ICMP6_MLD_QUERY && mld_query_parse(msg, len, &ip, &q) == WIRE_OK) {
		FUZZ_CHECK(q.version == 1 ? len == MLD1_LEN : len >= MLD2_QUERY_MIN_LEN);
		FUZZ_CHECK(ip6_is_link_local(&ip.src));
		FUZZ_CHECK(ip6_is_unspecified(&q.group) || ip6_is_multicast(&q.group));
	}

	/* Recomputing the checksum makes any message verify. */
	uint8_t *copy = malloc(len);
	FUZZ_CHECK(copy != NULL);
	memcpy(copy, msg, len);
	wire_put_be16(copy + ICMP6_OFF_CSUM, 0);
	wire_put_be16(copy + ICMP6_OFF_CSUM, wire_csum_finish(wire_csum_add(pseudo, copy, len)));
	FUZZ_CHECK(icmp6_parse(copy, len, pseudo, true, &r) == WIRE_OK);
	free(copy);
	return 0;
}
