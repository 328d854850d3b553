/* libFuzzer target: ip6_parse and the extension-header walk on arbitrary bytes, then the
 * walk's promises (what it reports lies inside the datagram, a failure names a Parameter
 * Problem pointer inside it), build → parse consistency, and the address and prefix text
 * parsers on the same bytes read as a string (what parses formats to RFC 5952 text that
 * parses to the same address, and that text is a fixed point). */
#include <stdbool.h>
#include <string.h>

#include "fuzz_check.h"
#include "ipv6.h"

static void check_addr_text(const uint8_t *data, size_t size)
{
	char text[64], canonical[46], again[46];
	struct ip6_addr a, b;
	uint8_t plen;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (ip6_addr_parse(text, &a) == 0) {
		ip6_addr_format(&a, canonical, sizeof(canonical));
		FUZZ_CHECK(ip6_addr_parse(canonical, &b) == 0 && ip6_addr_equal(&a, &b));
		ip6_addr_format(&b, again, sizeof(again));
		FUZZ_CHECK(strcmp(canonical, again) == 0);
	}
	if (ip6_prefix_parse(text, &a, &plen) == 0) {
		FUZZ_CHECK(plen <= 128);
		ip6_prefix_mask(&a, plen);
		for (unsigned bit = plen; bit < 128; bit++)
			FUZZ_CHECK(!(a.b[bit / 8] & (0x80 >> (bit % 8))));
	}
}

static void check_walk(const uint8_t *pkt, size_t len, bool mcast)
{
	struct ip6_ext_info e;
	enum wire_status st = ip6_ext_walk(pkt, len, mcast, &e);

	FUZZ_CHECK(st < WIRE_STATUS_COUNT);
	FUZZ_CHECK(e.count <= IP6_EXT_MAX);
	if (st != WIRE_OK) {
		FUZZ_CHECK(e.problem_code <= 3);
		FUZZ_CHECK(e.problem_pointer < len);
		return;
	}
	FUZZ_CHECK(e.l4_off >= IP6_HDR_LEN && e.l4_off <= len);
	FUZZ_CHECK(e.proto_field_off < e.l4_off);
	FUZZ_CHECK(pkt[e.proto_field_off] == e.proto);
	if (e.has_frag) {
		FUZZ_CHECK(e.frag_hdr_off + 8 <= len);
		FUZZ_CHECK(e.frag.offset % 8 == 0);
		FUZZ_CHECK(e.unfrag_len + e.frag.offset + (len - e.frag_hdr_off - 8) <= 65535);
		FUZZ_CHECK(!e.frag.more || (len - e.frag_hdr_off - 8) % 8 == 0);
	}
	/* The walk stops at the upper layer, or after a fragment that is not the first. */
	bool extension = e.proto == IP6_NH_HOPOPTS || e.proto == IP6_NH_ROUTING ||
			 e.proto == IP6_NH_FRAGMENT || e.proto == IP6_NH_DSTOPTS;
	FUZZ_CHECK(!extension || (e.has_frag && e.frag.offset != 0));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ip6_repr r, r2;
	check_addr_text(data, size);

	enum wire_status st = ip6_parse(data, size, &r);
	FUZZ_CHECK(st < WIRE_STATUS_COUNT);
	FUZZ_CHECK(st != WIRE_BAD_CHECKSUM && st != WIRE_BAD_OPTION && st != WIRE_BAD_HDR_LEN);
	if (size < IP6_HDR_LEN)
		FUZZ_CHECK(st == WIRE_TRUNCATED);
	if (st != WIRE_OK)
		return 0;
	size_t len = IP6_HDR_LEN + r.payload_len;
	FUZZ_CHECK(r.payload_len != 0 && len <= size);
	FUZZ_CHECK(!ip6_is_multicast(&r.src) && !ip6_is_loopback(&r.src) &&
		   !ip6_is_unspecified(&r.dst));
	check_walk(data, len, ip6_is_multicast(&r.dst));

	uint8_t hdr[IP6_HDR_LEN];
	FUZZ_CHECK(ip6_build(hdr, sizeof(hdr), &r) == IP6_HDR_LEN);
	FUZZ_CHECK(memcmp(hdr, data, IP6_HDR_LEN) == 0);
	FUZZ_CHECK(ip6_parse(data, len, &r2) == WIRE_OK && r2.payload_len == r.payload_len);
	return 0;
}
