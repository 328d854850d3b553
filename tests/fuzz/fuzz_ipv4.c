/* libFuzzer target: ip4_parse (with and without the checksum) and the options walker on
 * arbitrary bytes, then build → parse consistency, an RFC 1624 TTL update, and the address
 * and prefix text parsers on the same bytes read as a string. */
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "checksum.h"
#include "fuzz_check.h"
#include "ipv4.h"

/* Strict dotted quads have one spelling (no leading zeros, no signs, no spaces), so whatever
 * the parsers accept must format back to exactly the input. */
static void check_addr_text(const uint8_t *data, size_t size)
{
	char text[40], again[40], addr_text[16];
	uint32_t a;
	uint8_t plen;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (ip4_addr_parse(text, &a) == 0) {
		ip4_addr_format(a, again, sizeof(again));
		FUZZ_CHECK(strcmp(text, again) == 0);
	}
	if (ip4_prefix_parse(text, &a, &plen) == 0) {
		FUZZ_CHECK(plen <= 32);
		ip4_addr_format(a, addr_text, sizeof(addr_text));
		if (strchr(text, '/'))
			snprintf(again, sizeof(again), "%s/%u", addr_text, plen);
		else
			snprintf(again, sizeof(again), "%s", addr_text);
		FUZZ_CHECK(strcmp(text, again) == 0);
	}
}

static void check_options(const uint8_t *opts, size_t len)
{
	struct ip4_opts_info info;
	enum wire_status st = ip4_options_check(opts, len, &info);

	FUZZ_CHECK(st == WIRE_OK || st == WIRE_BAD_OPTION);
	if (st == WIRE_OK)
		FUZZ_CHECK(info.unknown <= len / 2); /* each unknown option takes >= 2 bytes */
	if (len == 0)
		FUZZ_CHECK(st == WIRE_OK);
}

static bool same_fields(const struct ip4_repr *a, const struct ip4_repr *b)
{
	return a->tos == b->tos && a->id == b->id && a->df == b->df && a->mf == b->mf &&
	       a->frag_off == b->frag_off && a->ttl == b->ttl && a->proto == b->proto &&
	       a->src == b->src && a->dst == b->dst;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ip4_repr r, rv, r2;
	enum wire_status st, stv;
	size_t payload;
	uint8_t *pkt;

	check_addr_text(data, size);
	check_options(data, size < IP4_HDR_MAX_LEN ? size : IP4_HDR_MAX_LEN);

	st = ip4_parse(data, size, false, &r);
	stv = ip4_parse(data, size, true, &rv);
	FUZZ_CHECK(st < WIRE_STATUS_COUNT && stv < WIRE_STATUS_COUNT);
	FUZZ_CHECK(st != WIRE_BAD_CHECKSUM && st != WIRE_BAD_OPTION);
	/* The checksum sits between the length checks and the semantic ones. */
	if (st == WIRE_TRUNCATED || st == WIRE_BAD_VERSION || st == WIRE_BAD_HDR_LEN ||
	    st == WIRE_BAD_LENGTH)
		FUZZ_CHECK(stv == st);
	else
		FUZZ_CHECK(stv == st || stv == WIRE_BAD_CHECKSUM);
	if (size < IP4_HDR_MIN_LEN)
		FUZZ_CHECK(st == WIRE_TRUNCATED);
	if (st != WIRE_OK)
		return 0;

	FUZZ_CHECK(r.hdr_len >= IP4_HDR_MIN_LEN && r.hdr_len <= IP4_HDR_MAX_LEN);
	FUZZ_CHECK(r.hdr_len % 4 == 0);
	FUZZ_CHECK(r.hdr_len <= r.total_len && r.total_len <= size);
	FUZZ_CHECK(r.frag_off % 8 == 0);
	FUZZ_CHECK((size_t)r.frag_off + r.total_len <= IP4_MAX_LEN);
	payload = r.total_len - r.hdr_len;
	FUZZ_CHECK(!r.mf || payload % 8 == 0);
	FUZZ_CHECK(!ip4_is_multicast(r.src) && !ip4_is_limited_broadcast(r.src) &&
		   !ip4_is_loopback(r.src));
	if (stv == WIRE_OK)
		FUZZ_CHECK(same_fields(&r, &rv) && rv.hdr_len == r.hdr_len &&
			   rv.total_len == r.total_len);

	check_options(data + IP4_HDR_MIN_LEN, r.hdr_len - IP4_HDR_MIN_LEN);

	/* Rebuild without options around the same payload: it must parse, checksum included. */
	r2 = r;
	r2.total_len = (uint16_t)(IP4_HDR_MIN_LEN + payload);
	pkt = malloc(r2.total_len);
	FUZZ_CHECK(pkt != NULL);
	FUZZ_CHECK(ip4_build(pkt, IP4_HDR_MIN_LEN - 1, &r2) == 0);
	FUZZ_CHECK(ip4_build(pkt, r2.total_len, &r2) == IP4_HDR_MIN_LEN);
	memcpy(pkt + IP4_HDR_MIN_LEN, data + r.hdr_len, payload);
	FUZZ_CHECK(ip4_parse(pkt, r2.total_len, true, &rv) == WIRE_OK);
	FUZZ_CHECK(same_fields(&r, &rv));
	FUZZ_CHECK(rv.hdr_len == IP4_HDR_MIN_LEN && rv.total_len == r2.total_len);
	if (r.hdr_len == IP4_HDR_MIN_LEN) {
		/* Same bytes but the checksum (which the input may have wrong). */
		FUZZ_CHECK(memcmp(pkt, data, IP4_OFF_CSUM) == 0);
		FUZZ_CHECK(memcmp(pkt + IP4_OFF_SRC, data + IP4_OFF_SRC, 8) == 0);
	}
	free(pkt);

	/* Forwarding: an RFC 1624 update of a valid header keeps it valid. */
	if (stv == WIRE_OK && r.ttl > 0) {
		uint8_t hdr[IP4_HDR_MAX_LEN];
		uint16_t old_word, csum;

		memcpy(hdr, data, r.hdr_len);
		old_word = wire_get_be16(hdr + IP4_OFF_TTL);
		hdr[IP4_OFF_TTL]--;
		csum = wire_csum_update16(wire_get_be16(hdr + IP4_OFF_CSUM), old_word,
					  wire_get_be16(hdr + IP4_OFF_TTL));
		wire_put_be16(hdr + IP4_OFF_CSUM, csum);
		FUZZ_CHECK(wire_csum(hdr, r.hdr_len) == 0);
	}
	return 0;
}
