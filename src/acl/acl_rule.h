/* One ACL rule as the operator wrote it: what it matches, what it does, where it applies.
 * Pure C (no DPDK): `acl add` parses its words into this, `acl show` prints it back, and the
 * unit tests check both without an EAL. */
#ifndef DPS_ACL_RULE_H
#define DPS_ACL_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/ipv6.h"

/* Where in the IP path a rule is looked at (bits of acl_rule.hooks). */
#define ACL_HOOK_INPUT   0x1   /* datagrams for our own addresses, after reassembly */
#define ACL_HOOK_FORWARD 0x2   /* datagrams routed through us to another host */
#define ACL_HOOK_ALL     (ACL_HOOK_INPUT | ACL_HOOK_FORWARD)

#define ACL_PRIO_DEFAULT 1000
#define ACL_PRIO_MAX     65535
#define ACL_PROTO_ANY    (-1)
#define ACL_DEV_ANY      (-1)

/* Which datagrams a rule judges: those of one family, or of both when it names no address
 * and no family, as a rule of an nftables `inet` table that matches no address does. */
#define ACL_FAMILY_ANY 0
#define ACL_FAMILY_IP4 4
#define ACL_FAMILY_IP6 6

struct acl_rule {
	uint32_t id;             /* given by the table at `acl add`, never reused */
	uint16_t prio;           /* lower first; equal priorities: the older rule first */
	bool deny;
	int16_t proto;           /* IP protocol number (IPv6: the upper layer after the
				  * extension headers), or ACL_PROTO_ANY */
	uint8_t family;          /* ACL_FAMILY_*: which addresses below are meant */
	uint32_t src, dst;       /* IPv4: host order, host bits clear */
	struct ip6_addr src6, dst6;    /* IPv6: host bits clear */
	uint8_t src_len, dst_len;      /* in the family's bits; 0: any */
	uint16_t sport_lo, sport_hi;   /* inclusive; 0-65535 when not given */
	uint16_t dport_lo, dport_hi;
	uint8_t flags_set;       /* TCP flags that must be set ... */
	uint8_t flags_mask;      /* ... among those examined (0: flags not matched) */
	int16_t dev;             /* input port index, or ACL_DEV_ANY */
	uint8_t hooks;           /* ACL_HOOK_* bits */
};

/* The order rules are judged in: lower prio first, then the older rule (lower id). Returns
 * <0, 0 or >0 as strcmp. */
int acl_rule_order(const struct acl_rule *a, const struct acl_rule *b);

/* Finds a port's index by its name: >= 0, or < 0 when no port has that name. */
typedef int acl_port_lookup(void *ctx, const char *name);

/* Parses the words of `acl add` (after "add"):
 *   [prio N] { permit | deny } [family { ipv4 | ipv6 }]
 *   [proto { tcp | udp | icmp | icmpv6 | N }] [src PREFIX] [dst PREFIX] [sport P[-P]] [dport P[-P]] [flags FLAGS[/MASK]] [dev PORT]
 *   [hook { input | forward }[,...]]
 * in any order after the action (prio too). PREFIXes are IPv4 or IPv6, both of one family,
 * which the rule then judges alone (family, when given, must agree); a rule with neither
 * judges both families. Ports need proto tcp or udp; flags need proto tcp. Returns 0, or -1
 * with a one-line message naming the word at fault in err. */
int acl_rule_parse(int argc, char **argv, acl_port_lookup *port_by_name, void *ctx,
		   struct acl_rule *out, char *err, size_t cap);

/* Writes the rule in the grammar acl_rule_parse reads (without prio, action or dev name:
 * only the match, "any" when it matches everything; "family" only when no prefix says it).
 * Returns buf. */
char *acl_rule_match_format(const struct acl_rule *r, char *buf, size_t cap);

/* The names of hooks ("input,forward") and TCP flags ("SYN,ACK") in r, into buf. */
char *acl_hooks_format(uint8_t hooks, char *buf, size_t cap);
char *acl_tcp_flags_format(uint8_t flags, char *buf, size_t cap);

#endif
