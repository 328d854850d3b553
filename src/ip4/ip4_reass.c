/* The IPv4 side of reassembly: a fragment described to the shared table (stack/reass.h),
 * and the header of the datagram it completes rewritten (RFC 791 §3.2). */
#include "ip4_frag.h"

#include "wire/bytes.h"
#include "wire/checksum.h"

/* Copies buf[0..len) into m's data at off, across segments; the range exists. */
static void ip4_reass_write(struct rte_mbuf *m, uint32_t off, const uint8_t *buf, uint32_t len)
{
	for (; m != NULL && len > 0; m = m->next) {
		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		uint32_t n = RTE_MIN(len, (uint32_t)m->data_len - off);
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, off), buf, n);
		buf += n;
		len -= n;
		off = 0;
	}
}

/* The whole datagram's total length, no fragment field but DF, and the checksum. */
static void ip4_reass_fix_header(struct rte_mbuf *head)
{
	uint8_t copy[IP4_HDR_MAX_LEN];
	uint32_t hlen = (uint32_t)(*rte_pktmbuf_mtod(head, const uint8_t *) & 0xf) * 4;
	/* The header is almost always in the first segment; else edit a copy, write it back. */
	const uint8_t *ro = rte_pktmbuf_read(head, 0, hlen, copy);
	uint8_t *hdr = ro == copy ? copy : rte_pktmbuf_mtod(head, uint8_t *);
	wire_put_be16(hdr + IP4_OFF_TOTAL_LEN, (uint16_t)rte_pktmbuf_pkt_len(head));
	wire_put_be16(hdr + IP4_OFF_FRAG,
		      (uint16_t)(wire_get_be16(hdr + IP4_OFF_FRAG) & IP4_FLAG_DF));
	wire_put_be16(hdr + IP4_OFF_CSUM, 0);
	wire_put_be16(hdr + IP4_OFF_CSUM, wire_csum(hdr, hlen));
	if (hdr == copy)
		ip4_reass_write(head, 0, copy, hlen);
}

struct rte_mbuf *ip4_reass_input(struct reass *r, uint64_t now_ms, struct rte_mbuf *m,
				 const struct ip4_repr *ip, enum reass_verdict *verdict)
{
	/* A header ip4_parse would not pass (a caller bug) makes an empty piece: TINY. */
	bool sane = ip->hdr_len >= IP4_HDR_MIN_LEN && ip->hdr_len <= IP4_HDR_MAX_LEN &&
		    ip->total_len >= ip->hdr_len;
	struct reass_piece p = {
		.src = inet_addr_v4(ip->src), .dst = inet_addr_v4(ip->dst), .id = ip->id,
		.proto = ip->proto, .last = !ip->mf, .off = ip->frag_off,
		.plen = sane ? ip->total_len - (uint32_t)ip->hdr_len : 0,
		.hdr_len = ip->hdr_len, .size_hdr = ip->hdr_len, .size_hdr_min = IP4_HDR_MIN_LEN};
	struct rte_mbuf *done = reass_input(r, now_ms, m, &p, verdict);
	if (done != NULL)
		ip4_reass_fix_header(done);
	return done;
}
