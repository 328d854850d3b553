/* Software GRO: in-order TCP segments of one flow in one RX burst merged into one segment
 * before the stack sees them, so that the stack's per-segment work (parsing, lookup, ACK
 * decision, wake-up of the reader) is paid once per burst and flow instead of once per
 * frame. Like Linux's GRO, it only merges what the receiver would treat the same way as
 * the separate segments: IPv4 without options or fragments, or IPv6 without extension
 * headers, for one of our own addresses (a datagram we route keeps its wire size), TCP with
 * only ACK (PSH ends a merge), each next segment exactly at the sequence where the one
 * before ended, with the same Ethernet header, ACK, window, TOS and TTL (IPv6: Traffic
 * Class, Flow Label and Hop Limit), options (timestamps included), and valid checksums:
 * the merged segment is marked checksum-good (RTE_MBUF_F_RX_*_CKSUM_GOOD), since no sum
 * covers it. Both families count in gro.merged.
 * Everything else passes untouched and in order; the order of one flow's segments never
 * changes, since a segment of the flow that cannot join ends the merge.
 *
 * DPDK's librte_gro (22.11) does not fit: it merges no segment with PSH, wants packet_type
 * and header lengths filled in by the PMD, and returns the packets it could not merge
 * after the merged ones, which reorders a flow whose burst held a PSH segment. */
#ifndef DPS_DP_GRO_H
#define DPS_DP_GRO_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "stack/stack.h"

/* Merges what it can of the n frames of pkts (received on port, Ethernet headers in
 * front), compacting pkts in order. Returns the frames left; s->events[STACK_EV_GRO_*]
 * counts the merges. */
uint16_t gro_burst(struct stack *s, struct rte_mbuf **pkts, uint16_t n);

#endif
