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

static inline bool flow_prefix_holds(uint32_t addr, uint32_t prefix, uint8_t len)
{
	return len == 0 || ((addr ^ prefix) >> (32 - len)) == 0;
}

static inline bool flow_match_holds(const struct flow_match *m, const struct flow_key *k)
{
	if ((m->dev != FLOW_ANY && m->dev != k->port) ||
	    (m->ethertype != FLOW_ANY && m->ethertype != k->ethertype))
		return false;
	if (m->proto == FLOW_ANY && m->src_len == 0 && m->dst_len == 0)
		return true;         /* no IP match (ports need proto, flow_rule_parse) */
	if (!k->ip4 || (m->proto != FLOW_ANY && m->proto != k->proto) ||
	    !flow_prefix_holds(k->src, m->src, m->src_len) ||
	    !flow_prefix_holds(k->dst, m->dst, m->dst_len))
		return false;
	bool any_ports = m->sport_lo == 0 && m->sport_hi == 65535 && m->dport_lo == 0 &&
			 m->dport_hi == 65535;
	return any_ports || (k->l4 && k->sport >= m->sport_lo && k->sport <= m->sport_hi &&
			     k->dport >= m->dport_lo && k->dport <= m->dport_hi);
}

#endif
