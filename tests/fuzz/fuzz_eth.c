/* libFuzzer target: eth_parse on arbitrary frames, then build → parse consistency; and the
 * MAC address text parser on the same bytes read as a string. */
#include <string.h>

#include "eth.h"
#include "fuzz_check.h"

static void check_addr_text(const uint8_t *data, size_t size)
{
	char text[32], again[18];
	struct eth_addr a, b;
	size_t n = size < sizeof(text) - 1 ? size : sizeof(text) - 1;

	memcpy(text, data, n);
	text[n] = '\0';
	if (eth_addr_parse(text, &a) != 0)
		return;
	/* An accepted string is 6 groups of 1-2 digits: 11..17 characters. */
	FUZZ_CHECK(strlen(text) >= 11 && strlen(text) <= 17);
	eth_addr_format(&a, again, sizeof(again));
	FUZZ_CHECK(strlen(again) == 17);
	FUZZ_CHECK(eth_addr_parse(again, &b) == 0);
	FUZZ_CHECK(eth_addr_equal(&a, &b));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eth_repr r, r2;
	enum wire_status st;
	uint8_t *frame;
	size_t payload;

	check_addr_text(data, size);

	st = eth_parse(data, size, &r);
	FUZZ_CHECK(st < WIRE_STATUS_COUNT);
	FUZZ_CHECK(wire_status_str(st) != NULL);
	if (size < ETH_HDR_LEN)
		FUZZ_CHECK(st == WIRE_TRUNCATED);
	if (st != WIRE_OK)
		return 0;

	FUZZ_CHECK(r.hdr_len == (r.vlan_tagged ? ETH_HDR_LEN + ETH_VLAN_TAG_LEN : ETH_HDR_LEN));
	FUZZ_CHECK(r.hdr_len <= size);
	FUZZ_CHECK(r.ethertype >= ETH_TYPE_MIN);
	FUZZ_CHECK(r.ethertype != ETH_TYPE_VLAN && r.ethertype != ETH_TYPE_QINQ);

	/* Rebuild untagged with the same payload and parse again. */
	payload = size - r.hdr_len;
	frame = malloc(ETH_HDR_LEN + payload);
	FUZZ_CHECK(frame != NULL);
	FUZZ_CHECK(eth_build(frame, ETH_HDR_LEN - 1, &r) == 0);
	FUZZ_CHECK(eth_build(frame, ETH_HDR_LEN + payload, &r) == ETH_HDR_LEN);
	memcpy(frame + ETH_HDR_LEN, data + r.hdr_len, payload);
	FUZZ_CHECK(eth_parse(frame, ETH_HDR_LEN + payload, &r2) == WIRE_OK);
	FUZZ_CHECK(eth_addr_equal(&r.dst, &r2.dst));
	FUZZ_CHECK(eth_addr_equal(&r.src, &r2.src));
	FUZZ_CHECK(r.ethertype == r2.ethertype);
	FUZZ_CHECK(!r2.vlan_tagged && r2.hdr_len == ETH_HDR_LEN);
	if (!r.vlan_tagged)
		FUZZ_CHECK(memcmp(frame, data, ETH_HDR_LEN) == 0);
	free(frame);

	/* The address helpers agree with each other. */
	FUZZ_CHECK(!eth_addr_is_broadcast(&r.dst) || eth_addr_is_multicast(&r.dst));
	FUZZ_CHECK(eth_addr_is_zero(&r.src) == eth_addr_equal(&r.src, &(struct eth_addr){ { 0 } }));
	return 0;
}
