/* libFuzzer target: udp_parse on arbitrary IP payloads, udp_checksum_ok against a reference
 * sum over a spelled-out pseudo-header, then build → parse consistency and a fresh checksum
 * that must verify. The addresses are those of the seed captures (127.0.0.1 both ways), so
 * their checksums verify as sent. */
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "checksum.h"
#include "fuzz_check.h"
#include "ipv4.h"
#include "udp.h"

#define SRC 0x7f000001u
#define DST 0x7f000001u
#define PSEUDO_LEN 12

/* RFC 768's checksum the long way: pseudo-header bytes, then the datagram, in one buffer. */
static bool reference_ok(const uint8_t *dgram, size_t len)
{
	uint8_t *buf;
	bool ok;

	if (wire_get_be16(dgram + UDP_OFF_CSUM) == UDP_CSUM_NONE)
		return true;
	buf = malloc(PSEUDO_LEN + len);
	FUZZ_CHECK(buf != NULL);
	wire_put_be32(buf, SRC);
	wire_put_be32(buf + 4, DST);
	buf[8] = 0;
	buf[9] = IP4_PROTO_UDP;
	wire_put_be16(buf + 10, (uint16_t)len);
	memcpy(buf + PSEUDO_LEN, dgram, len);
	ok = wire_csum(buf, PSEUDO_LEN + len) == 0;
	free(buf);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum wire_status st, want = WIRE_OK;
	struct udp_repr r, r2;
	uint16_t length, csum;
	uint8_t *dgram;
	bool ok;

	st = udp_parse(data, size, &r);
	if (size < UDP_HDR_LEN) {
		FUZZ_CHECK(st == WIRE_TRUNCATED);
		FUZZ_CHECK(!udp_checksum_ok(SRC, DST, data, size));
		FUZZ_CHECK(udp_checksum(SRC, DST, data, size) == 0);
		return 0;
	}
	length = wire_get_be16(data + UDP_OFF_LEN);
	if (length < UDP_HDR_LEN || length > size)
		want = WIRE_BAD_LENGTH;
	else if (wire_get_be16(data + UDP_OFF_DST_PORT) == 0)
		want = WIRE_BAD_FIELD;
	FUZZ_CHECK(st == want);
	if (st != WIRE_OK)
		return 0;
	FUZZ_CHECK(r.length == length && r.length <= size);
	FUZZ_CHECK(r.payload_len == (size_t)r.length - UDP_HDR_LEN);
	FUZZ_CHECK(r.src_port == wire_get_be16(data + UDP_OFF_SRC_PORT));
	FUZZ_CHECK(r.dst_port == wire_get_be16(data + UDP_OFF_DST_PORT) && r.dst_port != 0);
	FUZZ_CHECK(r.checksum == wire_get_be16(data + UDP_OFF_CSUM));

	/* The datagram is r.length bytes; whatever follows is padding. */
	ok = udp_checksum_ok(SRC, DST, data, r.length);
	FUZZ_CHECK(ok == reference_ok(data, r.length));

	/* Rebuild: the header comes back byte for byte, a fresh checksum (never 0) verifies and
	 * equals the sent one whenever that verified. */
	dgram = malloc(r.length);
	FUZZ_CHECK(dgram != NULL);
	FUZZ_CHECK(udp_build(dgram, UDP_HDR_LEN - 1, &r) == 0);
	FUZZ_CHECK(udp_build(dgram, r.length, &r) == UDP_HDR_LEN);
	FUZZ_CHECK(memcmp(dgram, data, UDP_HDR_LEN) == 0);
	memcpy(dgram + UDP_HDR_LEN, data + UDP_HDR_LEN, r.payload_len);
	csum = udp_checksum(SRC, DST, dgram, r.length);
	FUZZ_CHECK(csum != UDP_CSUM_NONE);
	if (ok && r.checksum != UDP_CSUM_NONE)
		FUZZ_CHECK(csum == r.checksum);
	wire_put_be16(dgram + UDP_OFF_CSUM, csum);
	FUZZ_CHECK(udp_checksum_ok(SRC, DST, dgram, r.length));
	FUZZ_CHECK(reference_ok(dgram, r.length));
	FUZZ_CHECK(udp_parse(dgram, r.length, &r2) == WIRE_OK);
	FUZZ_CHECK(r2.src_port == r.src_port && r2.dst_port == r.dst_port &&
		   r2.length == r.length && r2.checksum == csum &&
		   r2.payload_len == r.payload_len);
	free(dgram);
	return 0;
}
