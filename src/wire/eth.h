/* Ethernet II frames with at most one 802.1Q / 802.1ad tag (IEEE 802.3, 802.1Q). */
#ifndef DPS_WIRE_ETH_H
#define DPS_WIRE_ETH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define ETH_ADDR_LEN 6
#define ETH_HDR_LEN 14
#define ETH_VLAN_TAG_LEN 4
#define ETH_MIN_FRAME_LEN 60 /* without FCS: shorter frames are padded on output */

/* Field offsets inside the untagged header. */
#define ETH_OFF_DST 0
#define ETH_OFF_SRC 6
#define ETH_OFF_TYPE 12

#define ETH_TYPE_IPV4 0x0800
#define ETH_TYPE_ARP 0x0806
#define ETH_TYPE_IPV6 0x86dd
#define ETH_TYPE_VLAN 0x8100
#define ETH_TYPE_QINQ 0x88a8
#define ETH_TYPE_MIN 0x0600 /* smaller values are 802.3 lengths, not EtherTypes */

struct eth_addr {
	uint8_t b[ETH_ADDR_LEN];
};

/* The parsed header. */
struct eth_repr {
	struct eth_addr dst;
	struct eth_addr src;
	uint16_t ethertype;   /* of the payload, after any tag */
	bool vlan_tagged;     /* one 802.1Q/802.1ad tag was present */
	uint16_t vlan_tci;    /* the tag's TCI when vlan_tagged */
	size_t hdr_len;       /* bytes before the payload: 14 or 18 */
};

/* Parses buf[0..len). Rejects: fewer bytes than the header (TRUNCATED), an 802.3 length field
 * instead of an EtherType and a second stacked tag (BAD_FIELD). Reads nothing past len. */
enum wire_status eth_parse(const uint8_t *buf, size_t len, struct eth_repr *out);

/* Writes an untagged header (repr->vlan_tagged is ignored) into buf. Returns ETH_HDR_LEN, or
 * 0 when cap is too small. */
size_t eth_build(uint8_t *buf, size_t cap, const struct eth_repr *repr);

bool eth_addr_is_broadcast(const struct eth_addr *a);
bool eth_addr_is_multicast(const struct eth_addr *a); /* group bit; includes broadcast */
bool eth_addr_is_zero(const struct eth_addr *a);
bool eth_addr_equal(const struct eth_addr *a, const struct eth_addr *b);

/* "aa:bb:cc:dd:ee:ff" into buf (at least 18 bytes). Returns buf. */
char *eth_addr_format(const struct eth_addr *a, char *buf, size_t cap);
/* Parses "aa:bb:cc:dd:ee:ff" (hex digits, either case, exactly 6 groups of 1-2 digits).
 * Returns 0 or -EINVAL. */
int eth_addr_parse(const char *s, struct eth_addr *out);

extern const struct eth_addr eth_addr_broadcast;

#endif
