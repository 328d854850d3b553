/* IPv4 fragmentation on output (RFC 791 §3.2 "An Example Fragmentation Procedure").
 *
 * Every fragment is a fresh copy: header, then a payload slice read with rte_pktmbuf_read, so
 * the source may have any number of segments and is not modified until everything succeeded.
 * A fragment longer than the pool's data room is itself a chain of segments.
 *
 * The first fragment carries the source header unchanged but for length, fragment field and
 * checksum. Later ones carry the fixed 20 bytes plus only the options whose copied flag (bit 7
 * of the type) is set, in their order, then EOL bytes up to a multiple of 4 (RFC 791 pads the
 * header with zeros; NOPs are not copied, as their copied flag is clear). If the source is
 * itself a fragment, offsets continue from its offset and the last piece keeps its MF.
 * New mbufs get l3_len set to their header length and the source's port; other metadata stays
 * as rte_pktmbuf_alloc leaves it (no offload flags: the checksum is computed here). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "ip4_frag.h"
#include "stack/mbuf_copy.h"
#include "wire/bytes.h"
#include "wire/checksum.h"

#define IP4_OPT_COPIED 0x80

/* Builds the header of non-first fragments from the source header src[0..hlen): the fixed
 * part and the copied options, padded. Returns its length, or 0 for malformed options. */
static size_t frag_later_header(const uint8_t *src, size_t hlen, uint8_t *out)
{
	size_t i = IP4_HDR_MIN_LEN, n = IP4_HDR_MIN_LEN;

	memcpy(out, src, IP4_HDR_MIN_LEN);
	while (i < hlen) {
		uint8_t type = src[i];
		size_t len;

		if (type == IP4_OPT_EOL)
			break;
		if (type == IP4_OPT_NOP) {
			i++;
			continue;
		}
		if (hlen - i < 2)
			return 0;
		len = src[i + 1];
		if (len < 2 || len > hlen - i)
			return 0;
		if (type & IP4_OPT_COPIED) {
			memcpy(out + n, src + i, len);
			n += len;
		}
		i += len;
	}
	while (n % 4 != 0)
		out[n++] = IP4_OPT_EOL;
	out[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | n / 4);
	return n;
}

/* Sets length, fragment field and checksum of the header at the start of f. */
static void frag_finish_header(struct rte_mbuf *f, size_t hlen, uint32_t plen, uint16_t frag)
{
	uint8_t *h = rte_pktmbuf_mtod(f, uint8_t *);

	wire_put_be16(h + IP4_OFF_TOTAL_LEN, (uint16_t)(hlen + plen));
	wire_put_be16(h + IP4_OFF_FRAG, frag);
	wire_put_be16(h + IP4_OFF_CSUM, 0);
	wire_put_be16(h + IP4_OFF_CSUM, wire_csum(h, hlen));
}

int ip4_fragment(struct rte_mbuf *m, uint16_t mtu, struct rte_mempool *pool,
		 struct rte_mbuf **out, unsigned max_out)
{
	uint8_t first[IP4_HDR_MAX_LEN], later[IP4_HDR_MAX_LEN];
	size_t hlen, hlen2;
	uint32_t total, plen, base, first_plen, later_plen, pos;
	uint16_t field, keep_flags;
	const uint8_t *p;
	unsigned n, k;

	if (m == NULL || pool == NULL || (out == NULL && max_out > 0))
		return -EINVAL;
	if (rte_pktmbuf_pkt_len(m) < IP4_HDR_MIN_LEN)
		return -EINVAL;
	p = rte_pktmbuf_read(m, 0, 1, first);
	hlen = (size_t)(p[0] & 0x0f) * 4;
	if (p[0] >> 4 != 4 || hlen < IP4_HDR_MIN_LEN || hlen > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	p = rte_pktmbuf_read(m, 0, (uint32_t)hlen, first);
	if (p != first)
		memcpy(first, p, hlen);
	total = wire_get_be16(first + IP4_OFF_TOTAL_LEN);
	if (total < hlen || total > rte_pktmbuf_pkt_len(m))
		return -EINVAL;
	plen = total - (uint32_t)hlen;
	field = wire_get_be16(first + IP4_OFF_FRAG);
	base = (uint32_t)(field & IP4_FRAG_OFF_MASK) * 8;
	if (base + plen > IP4_MAX_LEN)
		return -EINVAL;
	keep_flags = field & (uint16_t)~(IP4_FLAG_MF | IP4_FRAG_OFF_MASK);
	hlen2 = frag_later_header(first, hlen, later);
	if (hlen2 == 0)
		return -EINVAL;
	/* Each fragment's header must fit in its first segment. */
	if (rte_pktmbuf_data_room_size(pool) < RTE_PKTMBUF_HEADROOM + hlen)
		return -EINVAL;

	if (total <= mtu) {
		n = 1;
		first_plen = later_plen = plen;
	} else {
		if ((field & IP4_FLAG_DF) || mtu < hlen + 8)
			return -EMSGSIZE;
		first_plen = (uint32_t)(mtu - hlen) & ~7u;
		later_plen = (uint32_t)(mtu - hlen2) & ~7u;  /* >= first_plen: hlen2 <= hlen */
		n = 1 + (plen - first_plen + later_plen - 1) / later_plen;
	}
	if (n > max_out)
		return -EMSGSIZE;

	pos = 0;
	for (k = 0; k < n; k++) {
		const uint8_t *h = k == 0 ? first : later;
		size_t hl = k == 0 ? hlen : hlen2;
		uint32_t len = RTE_MIN(k == 0 ? first_plen : later_plen, plen - pos);
		bool more = k + 1 < n || (field & IP4_FLAG_MF);

		out[k] = mbuf_copy_behind(pool, h, hl, m, (uint32_t)hlen + pos, len);
		if (out[k] == NULL) {
			while (k-- > 0) {
				rte_pktmbuf_free(out[k]);
				out[k] = NULL;
			}
			return -ENOBUFS;
		}
		frag_finish_header(out[k], hl, len,
				   (uint16_t)(keep_flags | (more ? IP4_FLAG_MF : 0) |
					      (base + pos) / 8));
		pos += len;
	}
	rte_pktmbuf_free(m);
	return (int)n;
}
