/* Checksum and segmentation offloads on transmit (DPDK's TX offloads, rte_mbuf_core.h).
 *
 * The model is Linux's CHECKSUM_PARTIAL: a transport whose segment leaves through a port
 * stores only the pseudo-header sum in its checksum field and marks the mbuf
 * (tx_offload_l4_partial). Whatever the frame meets later finishes the sum: the port, when
 * it computes that checksum (stack_tx_offload_apply, for the caps the worker gave the
 * stack), or software at the last moment it can: before IPv4 fragments the datagram
 * (ip4_route_output) and at the port that cannot (stack_tx_offload_apply again). So the
 * software cost stays what it was, one pass over the bytes, and moves to the port where
 * there is one. Nothing here knows the address family: the transport passes its
 * pseudo-header sum (wire_csum_pseudo4 or wire_csum_pseudo6) and the network layer sets
 * RTE_MBUF_F_TX_IPV4 or RTE_MBUF_F_TX_IPV6 and l3_len, so IPv6 reuses these calls.
 *
 * Forwarded datagrams carry none of these flags: they keep their incremental checksum
 * update (RFC 1624) and leave as they are. */
#ifndef DPS_STACK_TX_OFFLOAD_H
#define DPS_STACK_TX_OFFLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

/* What one port computes for the frames the stack sends through it. All false: software. */
struct stack_tx_caps {
	bool ip4_cksum;      /* RTE_ETH_TX_OFFLOAD_IPV4_CKSUM */
	bool tcp_cksum;      /* RTE_ETH_TX_OFFLOAD_TCP_CKSUM */
	bool udp_cksum;      /* RTE_ETH_TX_OFFLOAD_UDP_CKSUM */
	uint32_t tso_max;    /* RTE_ETH_TX_OFFLOAD_TCP_TSO: the most TCP payload one segment
			      * handed to the port may carry; 0 without TSO */
};

/* The TX offload flags tx_offload_l4_partial sets (TSO implies the TCP checksum). */
#define TX_OFFLOAD_L4_FLAGS (RTE_MBUF_F_TX_L4_MASK | RTE_MBUF_F_TX_TCP_SEG)

/* Marks m, whose transport header of hdr_len bytes has its checksum field at csum, as
 * carrying a partial checksum: stores pseudo (the pseudo-header's running sum) folded into
 * csum and sets ol_flags and l4_len. l4_flag is RTE_MBUF_F_TX_TCP_CKSUM or
 * RTE_MBUF_F_TX_UDP_CKSUM; a non-zero tso_segsz also asks the port to cut the segment into
 * segments of that much payload (RTE_MBUF_F_TX_TCP_SEG). As DPDK requires, pseudo covers
 * the length for a checksum and leaves it out for TSO (rte_ipv4_phdr_cksum). */
void tx_offload_l4_partial(struct rte_mbuf *m, uint8_t *csum, uint32_t pseudo,
			   uint64_t l4_flag, uint16_t hdr_len, uint16_t tso_segsz);

/* Finishes in software the partial checksum of m's transport header, which starts l4_off
 * bytes into m, and clears the request. */
void tx_offload_l4_finish(struct rte_mbuf *m, uint32_t l4_off);

/* At the port, with m a whole frame (l2_len and l3_len set): hands the port what caps says
 * it computes, and finishes the rest in software; the IPv4 header checksum is left to the
 * port where it offers it. False when m asks for TSO that the port lacks (the segment was
 * built for another port; the caller drops it). */
bool tx_offload_apply(const struct stack_tx_caps *caps, struct rte_mbuf *m);

#endif
