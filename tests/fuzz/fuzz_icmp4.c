/* libFuzzer target: icmp4_parse on arbitrary messages (with and without the checksum), then
 * build → parse consistency, and the quoted datagram of error messages. */
#include <string.h>

#include "bytes.h"
#include "checksum.h"
#include "fuzz_check.h"
#include "icmp4.h"
#include "ipv4.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct icmp4_repr r, rv, r2;
	enum wire_status st, stv;
	struct ip4_repr inner;
	uint8_t *msg;

	st = icmp4_parse(data, size, false, &r);
	stv = icmp4_parse(data, size, true, &rv);
	if (size < ICMP4_HDR_LEN) {
		FUZZ_CHECK(st == WIRE_TRUNCATED && stv == WIRE_TRUNCATED);
		return 0;
	}
	FUZZ_CHECK(st == WIRE_OK);
	FUZZ_CHECK(stv == WIRE_OK || stv == WIRE_BAD_CHECKSUM);
	FUZZ_CHECK(r.payload_len == size - ICMP4_HDR_LEN);
	if (stv == WIRE_OK)
		FUZZ_CHECK(rv.type == r.type && rv.code == r.code && rv.rest == r.rest &&
			   rv.payload_len == r.payload_len);

	/* Rebuild with a fresh checksum: it must verify and reproduce every other byte. */
	msg = malloc(size);
	FUZZ_CHECK(msg != NULL);
	FUZZ_CHECK(icmp4_build_header(msg, ICMP4_HDR_LEN - 1, &r) == 0);
	FUZZ_CHECK(icmp4_build_header(msg, size, &r) == ICMP4_HDR_LEN);
	FUZZ_CHECK(wire_get_be16(msg + ICMP4_OFF_CSUM) == 0);
	memcpy(msg + ICMP4_HDR_LEN, data + ICMP4_HDR_LEN, size - ICMP4_HDR_LEN);
	wire_put_be16(msg + ICMP4_OFF_CSUM, wire_csum(msg, size));
	FUZZ_CHECK(icmp4_parse(msg, size, true, &r2) == WIRE_OK);
	FUZZ_CHECK(r2.type == r.type && r2.code == r.code && r2.rest == r.rest &&
		   r2.payload_len == r.payload_len);
	FUZZ_CHECK(memcmp(msg, data, ICMP4_OFF_CSUM) == 0);
	FUZZ_CHECK(memcmp(msg + ICMP4_OFF_REST, data + ICMP4_OFF_REST,
			  size - ICMP4_OFF_REST) == 0);
	if (stv == WIRE_OK) {
		/* Both checksums verify: equal, or the two one's-complement zeros (0 and 0xffff). */
		uint16_t a = wire_get_be16(msg + ICMP4_OFF_CSUM);
		uint16_t b = wire_get_be16(data + ICMP4_OFF_CSUM);

		FUZZ_CHECK(a == b || (a == 0 && b == 0xffff) || (a == 0xffff && b == 0));
	}
	free(msg);

	/* An error quotes the offending datagram: the IPv4 parser must cope with any quote. */
	if (icmp4_type_is_error(r.type)) {
		enum wire_status ist = ip4_parse(data + ICMP4_HDR_LEN, r.payload_len, true, &inner);

		FUZZ_CHECK(ist < WIRE_STATUS_COUNT);
		if (ist == WIRE_OK)
			FUZZ_CHECK(inner.total_len <= r.payload_len);
	}
	return 0;
}
