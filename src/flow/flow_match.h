/* What a flow rule looks at in a received frame (its key), and the match itself. Pure C over
 * the frame's bytes: the worker extracts the key once per frame and judges it against the
 * rules in order (flow_set.h); unit tests feed it frames without DPDK. */
#ifndef DPS_FLOW_MATCH_H
#define DPS_FLOW_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow_rule.h"

/* An address as four 32-bit words in host order: IPv4 in the last, IPv6 whole. */
#define FLOW_ADDR_WORDS 4

struct flow_key {
	uint16_t port;
	uint16_t ethertype;         /* the Ethernet header's type field, as sent */
	bool ip;                    /* an IP header of that EtherType (IPv4 or IPv6) is present
				     * (the fields below are set) */
	bool l4;                    /* ... with TCP or UDP ports (first fragment or whole) */
	uint8_t proto;              /* IPv6: the fixed header's Next Header */
	uint32_t src[FLOW_ADDR_WORDS], dst[FLOW_ADDR_WORDS];
	uint16_t sport, dport;
};

/* Reads the key of the Ethernet frame frame[0..len) received on port. Never reads past len;
 * what is too short or neither IPv4 nor IPv6 leaves ip (or l4) false, so that IP matches
 * fail on it (the stack then counts and drops what is malformed). IPv6 is read as a NIC's
 * flow table reads it: ports only when TCP or UDP follows the fixed header. */
void flow_key_parse(const uint8_t *frame, size_t len, uint16_t port, struct flow_key *k);

/* A rule's match compiled for the walk: every field a compare of the key against a value
 * under a mask, or a range as one unsigned compare, combined with & rather than a branch
 * per field. What a field of struct flow_match means is in flow_test_compile. */
struct flow_test {
	uint32_t src[FLOW_ADDR_WORDS], src_mask[FLOW_ADDR_WORDS];
	uint32_t dst[FLOW_ADDR_WORDS], dst_mask[FLOW_ADDR_WORDS];
	uint16_t sport_lo, sport_span;      /* sport - sport_lo <= sport_span */
	uint16_t dport_lo, dport_span;
	uint16_t port, port_mask;           /* 0xffff: this port only; 0: any */
	uint16_t ethertype, ethertype_mask;
	uint8_t proto, proto_mask;
	bool need_ip, need_l4;
};

void flow_test_compile(const struct flow_match *m, struct flow_test *t);

static inline bool flow_test_holds(const struct flow_test *t, const struct flow_key *k)
{
	uint32_t addr_diff = 0;
	for (unsigned i = 0; i < FLOW_ADDR_WORDS; i++)
		addr_diff |= ((k->src[i] ^ t->src[i]) & t->src_mask[i]) |
			     ((k->dst[i] ^ t->dst[i]) & t->dst_mask[i]);
	/* need_ip with the EtherType compared: an IP header of the rule's family. */
	return (((k->port ^ t->port) & t->port_mask) == 0) &
	       (((k->ethertype ^ t->ethertype) & t->ethertype_mask) == 0) &
	       (k->ip | !t->need_ip) & (k->l4 | !t->need_l4) &
	       (((k->proto ^ t->proto) & t->proto_mask) == 0) & (addr_diff == 0) &
	       ((uint16_t)(k->sport - t->sport_lo) <= t->sport_span) &
	       ((uint16_t)(k->dport - t->dport_lo) <= t->dport_span);
}

#endif
