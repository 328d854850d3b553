/* Fragmentation of our own datagrams (RFC 8200 §4.5): only a source fragments in IPv6, and
 * the stack's only source headers are the fixed header, so the unfragmentable part is those
 * 40 bytes and every fragment is [header | fragment header | a piece of the payload]. */
#include <errno.h>

#include <rte_random.h>

#include "ip6.h"
#include "stack/mbuf_copy.h"
#include "wire/bytes.h"

int ip6_fragment(struct stack *s, const struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		 unsigned max_out)
{
	uint8_t hdr[IP6_HDR_LEN + IP6_FRAG_HDR_LEN];
	const uint8_t *h = rte_pktmbuf_read(m, 0, IP6_HDR_LEN, hdr);
	if (h != hdr)
		memcpy(hdr, h, IP6_HDR_LEN);
	const uint32_t payload = rte_pktmbuf_pkt_len(m) - IP6_HDR_LEN;
	/* Every piece but the last a multiple of 8 bytes (RFC 8200 §4.5), in one mbuf's room. */
	uint32_t room = rte_pktmbuf_data_room_size(s->pool) - RTE_PKTMBUF_HEADROOM;
	uint32_t piece = ((RTE_MIN((uint32_t)mtu, room) - sizeof(hdr)) & ~7u);
	unsigned n = (payload + piece - 1) / piece;
	if (n > max_out)
		return -EMSGSIZE;
	/* RFC 7739: an identification nobody can predict. */
	const uint32_t id = (uint32_t)rte_rand();
	uint8_t *frag = hdr + IP6_HDR_LEN;
	frag[0] = hdr[IP6_OFF_NEXT_HEADER];
	frag[1] = 0;
	hdr[IP6_OFF_NEXT_HEADER] = IP6_NH_FRAGMENT;
	wire_put_be32(frag + 4, id);
	for (unsigned k = 0; k < n; k++) {
		uint32_t off = k * piece, len = RTE_MIN(piece, payload - off);
		wire_put_be16(hdr + IP6_OFF_PAYLOAD_LEN, (uint16_t)(IP6_FRAG_HDR_LEN + len));
		wire_put_be16(frag + 2, (uint16_t)(off | (k + 1 < n ? 1 : 0))); /* M flag: bit 0 */
		out[k] = mbuf_copy_behind(s->pool, hdr, sizeof(hdr), m, IP6_HDR_LEN + off, len);
		if (out[k] == NULL) {
			rte_pktmbuf_free_bulk(out, k);
			return -ENOBUFS;
		}
	}
	return (int)n;
}
