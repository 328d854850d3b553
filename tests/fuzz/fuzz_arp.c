/* libFuzzer target: arp_parse on arbitrary bodies, then build → parse consistency. */
#include <string.h>

#include "arp.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arp_repr r, r2;
	enum wire_status st;
	uint8_t body[ARP_LEN];

	st = arp_parse(data, size, &r);
	FUZZ_CHECK(st == WIRE_OK || st == WIRE_TRUNCATED || st == WIRE_BAD_FIELD);
	FUZZ_CHECK((size < ARP_LEN) == (st == WIRE_TRUNCATED));
	if (st != WIRE_OK)
		return 0;

	FUZZ_CHECK(r.op == ARP_OP_REQUEST || r.op == ARP_OP_REPLY);
	FUZZ_CHECK(!eth_addr_is_multicast(&r.sha));

	/* Every byte of an accepted body is either fixed or a field: the rebuild is identical. */
	FUZZ_CHECK(arp_build(body, ARP_LEN - 1, &r) == 0);
	FUZZ_CHECK(arp_build(body, sizeof(body), &r) == ARP_LEN);
	FUZZ_CHECK(memcmp(body, data, ARP_LEN) == 0);
	FUZZ_CHECK(arp_parse(body, sizeof(body), &r2) == WIRE_OK);
	FUZZ_CHECK(r.op == r2.op && r.spa == r2.spa && r.tpa == r2.tpa);
	FUZZ_CHECK(eth_addr_equal(&r.sha, &r2.sha) && eth_addr_equal(&r.tha, &r2.tha));
	return 0;
}
