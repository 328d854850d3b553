/* What a flow rule looks at in a received frame (its key), and the match itself. Pure C over
 * the frame's bytes: the worker extracts the key once per frame and judges it against the
 * rules in order (flow_set.h); unit tests feed it frames without DPDK. */
#ifndef DPS_FLOW_MATCH_H
#define DPS_FLOW_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flow_rule.h"

struct flow_key {
	uint16_t port;
	uint16_t ethertype;         /* the Ethernet header's type field, as sent */
	bool ip4;                   /* an IPv4 header is present (the fields below are set) */
	bool l4;                    /* ... with TCP or UDP ports (first fragment or whole) */
	uint8_t proto;
	uint32_t src, dst;          /* host order */
	uint16_t sport, dport;
};

/* Reads the key of the Ethernet frame frame[0..len) received on port. Never reads past len;
 * what is too short or not IPv4 leaves ip4 (or l4) false, so that IP matches fail on it
 * (the stack then counts and drops what is malformed). */
void flow_key_parse(const uint8_t *frame, size_t len, uint16_t port, struct flow_key *k);

/* A rule's match compiled for the walk: every field a compare of the key against a value
 * under a mask, or a range as one unsigned compare, combined with & rather than a branch
 * per field. What a field of struct flow_match means is in flow_test_compile. */
struct flow_test {
	uint32_t src, src_mask, dst, dst_mask;
	uint16_t sport_lo, sport_span;      /* sport - sport_lo <= sport_span */
	uint16_t dport_lo, dport_span;
	uint16_t port, port_mask;           /* 0xffff: this port only; 0: any */
	uint16_t ethertype, ethertype_mask;
	uint8_t proto, proto_mask;
	bool need_ip4, need_l4;
};

void flow_test_compile(const struct flow_match *m, struct flow_test *t);

static inline bool flow_test_holds(const struct flow_test *t, const struct flow_key *k)
{
	return (((k->port ^ t->port) & t->port_mask) == 0) &
	       (((k->ethertype ^ t->ethertype) & t->ethertype_mask) == 0) &
	       (k->ip4 | !t->need_ip4) & (k->l4 | !t->need_l4) &
	       (((k->proto ^ t->proto) & t->proto_mask) == 0) &
	       (((k->src ^ t->src) & t->src_mask) == 0) &
	       (((k->dst ^ t->dst) & t->dst_mask) == 0) &
	       ((uint16_t)(k->sport - t->sport_lo) <= t->sport_span) &
	       ((uint16_t)(k->dport - t->dport_lo) <= t->dport_span);
}

#endif
