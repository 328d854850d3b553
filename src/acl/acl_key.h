/* What an ACL looks at in a datagram, laid out for rte_acl: fields in network byte order at
 * fixed offsets, grouped in the 4-byte words rte_acl's trie walks (rte_acl.h: the first
 * field is one byte, then groups of 4 consecutive bytes). A key is built from the parsed
 * header, so IP options and chained mbufs never reach the classifier. The hook is not in
 * the key: each hook is an rte_acl category, so one classification answers for all. */
#ifndef DPS_ACL_KEY_H
#define DPS_ACL_KEY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "wire/ipv4.h"
#include "wire/ipv6.h"

#define ACL_KEY_DEV_NONE 0xff    /* not from a port (the stack's own loopback datagrams) */

struct acl_key {
	uint8_t proto;
	uint8_t unused[3];
	uint32_t src;            /* big-endian */
	uint32_t dst;
	uint16_t sport;          /* big-endian; 0 unless l4 */
	uint16_t dport;
	uint8_t tcp_flags;       /* 0 unless TCP and l4 */
	uint8_t dev;             /* input port index, or ACL_KEY_DEV_NONE */
	uint8_t l4;              /* 1: the transport header's ports (and flags) are present,
				  * 0: a later fragment or a header cut short */
	uint8_t unused2;         /* 0: completes the last 4-byte word rte_acl reads */
};

/* The key of the datagram whose IP header is at byte l3_off of m, parsed into ip, received
 * on port dev (our port index; anything above 254: none). */
void acl_key_build(struct acl_key *k, const struct rte_mbuf *m, uint32_t l3_off,
		   const struct ip4_repr *ip, uint16_t dev);

/* The same for IPv6 (the layout of DPDK's l3fwd-acl: each 128-bit address as four 32-bit
 * words, a field each). proto is the upper layer the extension header walk reached (a
 * chain it could not walk leaves the header it stopped at, and no ports). */
struct acl_key6 {
	uint8_t proto;
	uint8_t unused[3];
	uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport;          /* big-endian; 0 unless l4 */
	uint16_t dport;
	uint8_t tcp_flags;
	uint8_t dev;
	uint8_t l4;              /* 1: ports present; 0: a later fragment, a header cut short,
				  * or an extension header chain not walked */
	uint8_t unused2;
};

/* The key of the IPv6 datagram at the data of m (contiguous up to its upper-layer header,
 * as the stack holds it), parsed into ip, its extension headers walked into ext (NULL: not
 * walked here, walked now), received on port dev. */
void acl_key6_build(struct acl_key6 *k, const struct rte_mbuf *m, const struct ip6_repr *ip,
		    const struct ip6_ext_info *ext, uint16_t dev);

#endif
