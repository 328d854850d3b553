#include "port_offload.h"

#include <stdio.h>
#include <string.h>

/* An mbuf of the port pool carries RTE_MBUF_DEFAULT_DATAROOM bytes; a TSO segment needs
 * one per that much payload, plus the first, which also holds the headers. */
static uint32_t port_tso_max(const struct rte_eth_dev_info *info)
{
	uint32_t max = UINT16_MAX;
	uint16_t segs = info->tx_desc_lim.nb_seg_max;
	if (segs != 0 && segs < max / RTE_MBUF_DEFAULT_DATAROOM + 2)
		max = (uint32_t)(segs - 1) * RTE_MBUF_DEFAULT_DATAROOM;
	return max;
}

void port_offload_choose(const struct rte_eth_dev_info *info, struct rte_eth_conf *conf,
			 struct stack_tx_caps *caps)
{
	const uint64_t capa = info->tx_offload_capa;
	*caps = (struct stack_tx_caps){0};
	caps->ip4_cksum = capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
	caps->tcp_cksum = capa & RTE_ETH_TX_OFFLOAD_TCP_CKSUM;
	caps->udp_cksum = capa & RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	/* A TSO segment is a chain of mbufs, and its checksums are the port's too
	 * (RTE_MBUF_F_TX_TCP_SEG implies RTE_MBUF_F_TX_TCP_CKSUM). */
	if (capa & RTE_ETH_TX_OFFLOAD_TCP_TSO && capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS &&
	    caps->tcp_cksum)
		caps->tso_max = port_tso_max(info);
	conf->txmode.offloads |= (caps->ip4_cksum ? RTE_ETH_TX_OFFLOAD_IPV4_CKSUM : 0) |
				 (caps->tcp_cksum ? RTE_ETH_TX_OFFLOAD_TCP_CKSUM : 0) |
				 (caps->udp_cksum ? RTE_ETH_TX_OFFLOAD_UDP_CKSUM : 0) |
				 (caps->tso_max != 0 ? RTE_ETH_TX_OFFLOAD_TCP_TSO : 0);
}

void port_offload_format(const struct stack_tx_caps *caps, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", caps->ip4_cksum ? " ip4-csum" : "",
		 caps->tcp_cksum ? " tcp-csum" : "", caps->udp_cksum ? " udp-csum" : "",
		 caps->tso_max != 0 ? " tso" : "");
	if (buf[0] == '\0')
		snprintf(buf, len, " none");
	memmove(buf, buf + 1, strlen(buf)); /* the leading space */
}
