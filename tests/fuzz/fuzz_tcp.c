/* libFuzzer target: tcp_parse and the options walker on arbitrary bytes, then build → parse
 * consistency (options in Linux's layout, SACK blocks limited to what fits) and the checksum
 * of the rebuilt segment. */
#include <stdbool.h>
#include <string.h>

#include "bytes.h"
#include "checksum.h"
#include "fuzz_check.h"
#include "tcp.h"

#define SRC_ADDR 0xc0000202u
#define DST_ADDR 0xc0000201u

static void check_options(const uint8_t *opts, size_t len)
{
	struct tcp_options o;
	enum wire_status st = tcp_options_parse(opts, len, &o);

	FUZZ_CHECK(st == WIRE_OK || st == WIRE_BAD_OPTION);
	if (len == 0)
		FUZZ_CHECK(st == WIRE_OK);
	if (st != WIRE_OK)
		return;
	FUZZ_CHECK(o.sack_count <= TCP_SACK_MAX_BLOCKS);
	FUZZ_CHECK(!o.has_wscale || o.wscale <= TCP_WSCALE_MAX);
	/* A SACK option of n blocks takes 2 + 8n bytes of the area. */
	FUZZ_CHECK((size_t)o.sack_count * TCP_OPT_SACK_BLOCK_LEN + TCP_OPT_SACK_BASE_LEN <=
		   len || o.sack_count == 0);
}

/* b was built from a and parsed back: equal, but for SACK blocks that did not fit. */
static bool same_options(const struct tcp_options *a, const struct tcp_options *b,
			 size_t built_len)
{
	uint8_t i;

	if (a->has_mss != b->has_mss || (a->has_mss && a->mss != b->mss))
		return false;
	if (a->has_wscale != b->has_wscale || (a->has_wscale && a->wscale != b->wscale))
		return false;
	if (a->sack_permitted != b->sack_permitted || a->has_timestamps != b->has_timestamps)
		return false;
	if (a->has_timestamps && (a->tsval != b->tsval || a->tsecr != b->tsecr))
		return false;
	if (b->sack_count > a->sack_count)
		return false;
	if (b->sack_count < a->sack_count &&
	    built_len + TCP_OPT_SACK_BLOCK_LEN <= TCP_HDR_MAX_LEN)
		return false;       /* a block was left out although it fitted */
	for (i = 0; i < b->sack_count; i++)
		if (a->sack_blocks[i].left != b->sack_blocks[i].left ||
		    a->sack_blocks[i].right != b->sack_blocks[i].right)
			return false;
	return true;
}

static bool same_fields(const struct tcp_repr *a, const struct tcp_repr *b)
{
	return a->src_port == b->src_port && a->dst_port == b->dst_port && a->seq == b->seq &&
	       a->ack == b->ack && a->flags == b->flags && a->window == b->window &&
	       a->urgent == b->urgent;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tcp_repr r, r2;
	enum wire_status st;
	size_t payload, n;
	uint8_t *seg;

	check_options(data, size < TCP_OPTS_MAX_LEN + 8 ? size : TCP_OPTS_MAX_LEN + 8);

	st = tcp_parse(data, size, &r);
	FUZZ_CHECK(st < WIRE_STATUS_COUNT);
	FUZZ_CHECK(st != WIRE_BAD_VERSION && st != WIRE_BAD_LENGTH && st != WIRE_BAD_CHECKSUM);
	if (size < TCP_HDR_MIN_LEN)
		FUZZ_CHECK(st == WIRE_TRUNCATED);
	if (st != WIRE_OK)
		return 0;

	FUZZ_CHECK(r.hdr_len >= TCP_HDR_MIN_LEN && r.hdr_len <= TCP_HDR_MAX_LEN);
	FUZZ_CHECK(r.hdr_len % 4 == 0 && r.hdr_len <= size);
	FUZZ_CHECK(r.src_port != 0 && r.dst_port != 0);
	FUZZ_CHECK(r.flags == data[TCP_OFF_FLAGS]);
	FUZZ_CHECK(r.options.sack_count <= TCP_SACK_MAX_BLOCKS);
	FUZZ_CHECK(!r.options.has_wscale || r.options.wscale <= TCP_WSCALE_MAX);
	check_options(data + TCP_HDR_MIN_LEN, r.hdr_len - TCP_HDR_MIN_LEN);

	/* Rebuild around the same payload: it must parse to the same segment, and its checksum
	 * must verify. */
	payload = size - r.hdr_len;
	seg = malloc(TCP_HDR_MAX_LEN + payload);
	FUZZ_CHECK(seg != NULL);
	n = tcp_build(seg, TCP_HDR_MAX_LEN + payload, &r);
	FUZZ_CHECK(n >= TCP_HDR_MIN_LEN && n <= TCP_HDR_MAX_LEN && n % 4 == 0);
	FUZZ_CHECK(tcp_build(seg, n - 1, &r) == 0);
	FUZZ_CHECK(wire_get_be16(seg + TCP_OFF_CSUM) == 0);
	memcpy(seg + n, data + r.hdr_len, payload);
	if (n + payload <= 65535) {
		wire_put_be16(seg + TCP_OFF_CSUM, tcp_checksum(SRC_ADDR, DST_ADDR, seg,
								n + payload));
		FUZZ_CHECK(tcp_checksum(SRC_ADDR, DST_ADDR, seg, n + payload) == 0);
	}
	FUZZ_CHECK(tcp_parse(seg, n + payload, &r2) == WIRE_OK);
	FUZZ_CHECK(r2.hdr_len == n);
	FUZZ_CHECK(same_fields(&r, &r2));
	FUZZ_CHECK(same_options(&r.options, &r2.options, n));
	FUZZ_CHECK(memcmp(seg + n, data + r.hdr_len, payload) == 0);
	if (r.hdr_len == TCP_HDR_MIN_LEN) {
		/* No options: the same bytes but the checksum and the reserved bits. */
		FUZZ_CHECK(n == TCP_HDR_MIN_LEN);
		FUZZ_CHECK(memcmp(seg, data, TCP_OFF_DATA_OFF) == 0);
		FUZZ_CHECK(memcmp(seg + TCP_OFF_FLAGS, data + TCP_OFF_FLAGS, 3) == 0);
		FUZZ_CHECK(memcmp(seg + TCP_OFF_URGENT, data + TCP_OFF_URGENT, 2) == 0);
	}
	free(seg);
	return 0;
}
