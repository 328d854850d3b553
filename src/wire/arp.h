/* ARP for IPv4 over Ethernet (RFC 826). */
#ifndef DPS_WIRE_ARP_H
#define DPS_WIRE_ARP_H

#include <stddef.h>
#include <stdint.h>

#include "eth.h"
#include "status.h"

#define ARP_LEN 28 /* Ethernet/IPv4 ARP body */

#define ARP_OFF_HTYPE 0
#define ARP_OFF_PTYPE 2
#define ARP_OFF_HLEN 4
#define ARP_OFF_PLEN 5
#define ARP_OFF_OP 6
#define ARP_OFF_SHA 8
#define ARP_OFF_SPA 14
#define ARP_OFF_THA 18
#define ARP_OFF_TPA 24

#define ARP_HTYPE_ETHER 1
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2

struct arp_repr {
	uint16_t op;        /* ARP_OP_REQUEST or ARP_OP_REPLY */
	struct eth_addr sha;
	uint32_t spa;       /* host order */
	struct eth_addr tha;
	uint32_t tpa;       /* host order */
};

/* Parses an ARP body (buf starts after the Ethernet header; trailing padding is ignored).
 * Rejects: fewer than ARP_LEN bytes (TRUNCATED); htype != Ethernet, ptype != IPv4, hlen != 6,
 * plen != 4, op other than request/reply, a multicast/broadcast sender hardware address
 * (BAD_FIELD). */
enum wire_status arp_parse(const uint8_t *buf, size_t len, struct arp_repr *out);

/* Writes the 28-byte body. Returns ARP_LEN, or 0 when cap is too small. */
size_t arp_build(uint8_t *buf, size_t cap, const struct arp_repr *repr);

#endif
