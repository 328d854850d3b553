#include "acl_key.h"

#include <string.h>

#include "wire/tcp.h"

/* The ports (and TCP flags) of the transport header at l4_off of m, within avail bytes;
 * leaves the key's l4 clear when they are not all there. */
static void key_read_ports(const struct rte_mbuf *m, uint32_t l4_off, size_t avail,
			   uint8_t proto, uint16_t *sport, uint16_t *dport, uint8_t *flags,
			   uint8_t *l4_present)
{
	if (proto != IP4_PROTO_TCP && proto != IP4_PROTO_UDP)
		return;
	size_t need = proto == IP4_PROTO_TCP ? TCP_OFF_FLAGS + 1 : 4;
	uint8_t copy[TCP_OFF_FLAGS + 1];
	/* Within the datagram, not Ethernet padding. */
	if (avail < need)
		return;
	const uint8_t *l4 = rte_pktmbuf_read(m, l4_off, (uint32_t)need, copy);
	if (l4 == NULL)
		return;
	/* Already big-endian, as rte_acl wants its input. */
	memcpy(sport, l4 + TCP_OFF_SRC_PORT, 2);
	memcpy(dport, l4 + TCP_OFF_DST_PORT, 2);
	if (proto == IP4_PROTO_TCP)
		*flags = l4[TCP_OFF_FLAGS];
	*l4_present = 1;
}

void acl_key_build(struct acl_key *k, const struct rte_mbuf *m, uint32_t l3_off,
		   const struct ip4_repr *ip, uint16_t dev)
{
	memset(k, 0, sizeof(*k));
	k->proto = ip->proto;
	k->src = rte_cpu_to_be_32(ip->src);
	k->dst = rte_cpu_to_be_32(ip->dst);
	k->dev = dev < ACL_KEY_DEV_NONE ? (uint8_t)dev : ACL_KEY_DEV_NONE;
	/* Only a first fragment (or a whole datagram) carries the transport header; as in
	 * iptables, rules on ports or flags never match later fragments. ip4_parse saw
	 * total_len bytes. */
	if (ip->frag_off != 0 || ip->total_len < ip->hdr_len)
		return;
	key_read_ports(m, l3_off + (uint32_t)ip->hdr_len, ip->total_len - ip->hdr_len, ip->proto,
		       &k->sport, &k->dport, &k->tcp_flags, &k->l4);
}

void acl_key6_build(struct acl_key6 *k, const struct rte_mbuf *m, const struct ip6_repr *ip,
		    const struct ip6_ext_info *ext, uint16_t dev)
{
	memset(k, 0, sizeof(*k));
	memcpy(k->src, ip->src.b, 16);
	memcpy(k->dst, ip->dst.b, 16);
	k->dev = dev < ACL_KEY_DEV_NONE ? (uint8_t)dev : ACL_KEY_DEV_NONE;
	size_t len = RTE_MIN((size_t)IP6_HDR_LEN + ip->payload_len,
			     (size_t)rte_pktmbuf_data_len(m));
	struct ip6_ext_info walked;
	if (ext == NULL) {
		/* A forwarded datagram: its chain is walked for the ACL alone. One the walk
		 * refuses is judged by its addresses and the header the walk stopped at. */
		if (ip6_ext_walk(rte_pktmbuf_mtod(m, const uint8_t *), len, false, &walked) !=
		    WIRE_OK) {
			k->proto = walked.proto;
			return;
		}
		ext = &walked;
	}
	k->proto = ext->proto;
	/* A later fragment has no transport header (RFC 8200 §4.5): as for IPv4, port and flag
	 * rules never match it. */
	if (ext->has_frag && ext->frag.offset != 0)
		return;
	size_t total = (size_t)IP6_HDR_LEN + ip->payload_len;
	if (ext->l4_off > total)
		return;
	key_read_ports(m, (uint32_t)ext->l4_off, total - ext->l4_off, ext->proto, &k->sport,
		       &k->dport, &k->tcp_flags, &k->l4);
}
