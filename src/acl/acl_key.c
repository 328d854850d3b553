#include "acl_key.h"

#include <string.h>

#include "wire/tcp.h"

void acl_key_build(struct acl_key *k, const struct rte_mbuf *m, uint32_t l3_off,
		   const struct ip4_repr *ip, uint16_t dev)
{
	memset(k, 0, sizeof(*k));
	k->proto = ip->proto;
	k->src = rte_cpu_to_be_32(ip->src);
	k->dst = rte_cpu_to_be_32(ip->dst);
	k->dev = dev < ACL_KEY_DEV_NONE ? (uint8_t)dev : ACL_KEY_DEV_NONE;
	/* Only a first fragment (or a whole datagram) carries the transport header; as in
	 * iptables, rules on ports or flags never match later fragments. */
	if (ip->frag_off != 0 || (ip->proto != IP4_PROTO_TCP && ip->proto != IP4_PROTO_UDP))
		return;
	size_t need = ip->proto == IP4_PROTO_TCP ? TCP_OFF_FLAGS + 1 : 4;
	uint8_t copy[TCP_OFF_FLAGS + 1];
	/* Within the datagram (ip4_parse saw total_len bytes there), not Ethernet padding. */
	if (ip->total_len < ip->hdr_len + need)
		return;
	const uint8_t *l4 = rte_pktmbuf_read(m, l3_off + (uint32_t)ip->hdr_len, (uint32_t)need,
					     copy);
	if (l4 == NULL)
		return;
	/* Already big-endian, as rte_acl wants its input. */
	memcpy(&k->sport, l4 + TCP_OFF_SRC_PORT, 2);
	memcpy(&k->dport, l4 + TCP_OFF_DST_PORT, 2);
	if (ip->proto == IP4_PROTO_TCP)
		k->tcp_flags = l4[TCP_OFF_FLAGS];
	k->l4 = 1;
}
