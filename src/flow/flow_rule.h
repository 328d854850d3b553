/* One flow filter rule as the operator wrote it (`flow add`): what it matches — input port,
 * EtherType, and for IPv4 or IPv6 the protocol, source and destination prefixes and port
 * ranges —
 * and the one thing done with the frames it matches. Pure C (no DPDK): the CLI parses into
 * this, `flow show` prints it back, and unit tests and the fuzzer check both without an EAL. */
#ifndef DPS_FLOW_RULE_H
#define DPS_FLOW_RULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/ipv6.h"

/* The actions, with their names in the grammar (one list, so the parser, `flow show` and the
 * packet path never drift). kernel hands the frame to its port's kernel interface
 * (src/stack/exception.h); cluster hands it to the consumers of a distribution cluster that
 * takes flow (docs/CLUSTERS.md), which the daemon keeps while a rule names it. The verdicts
 * are carried out in one place (src/dp/worker_flow.c). */
#define FLOW_ACTIONS(X) \
	X(DROP, "drop") \
	X(STEER, "steer") \
	X(KERNEL, "kernel") \
	X(CLUSTER, "cluster")

enum flow_action {
#define FLOW_ACTION_ENUM(e, name) FLOW_ACT_##e,
	FLOW_ACTIONS(FLOW_ACTION_ENUM)
#undef FLOW_ACTION_ENUM
	FLOW_ACT_COUNT
};

const char *flow_action_name(enum flow_action a);

#define FLOW_PRIO_DEFAULT 1000
#define FLOW_PRIO_MAX 65535
#define FLOW_ANY (-1)               /* dev, ethertype, proto: not matched */
#define FLOW_ETHERTYPE_IPV4 0x0800
#define FLOW_ETHERTYPE_IPV6 0x86dd
#define FLOW_NAME_LEN 32            /* a cluster's name, with its NUL */

/* What a rule matches: every field given must hold (an empty match takes every frame). */
struct flow_match {
	int32_t dev;                /* input port index, or FLOW_ANY */
	int32_t ethertype;          /* the frame's EtherType field, or FLOW_ANY; IPv4 or IPv6
				     * whenever an IP field is matched, and the family of the
				     * fields below */
	int16_t proto;              /* the IP header's protocol (IPv6: its Next Header, as a
				     * NIC's flow table reads it), or FLOW_ANY */
	uint8_t src_len, dst_len;   /* 0: any */
	uint32_t src, dst;          /* IPv4: host order, host bits clear */
	struct ip6_addr src6, dst6; /* IPv6: host bits clear */
	uint16_t sport_lo, sport_hi;        /* inclusive; 0-65535: any */
	uint16_t dport_lo, dport_hi;
};

struct flow_rule {
	uint32_t id;                /* given by the table at `flow add`, never reused */
	uint16_t prio;              /* lower first; equal priorities: the older rule first */
	enum flow_action action;
	uint16_t worker;            /* steer: the worker index */
	char cluster[FLOW_NAME_LEN]; /* cluster: its name */
	uint16_t cluster_slot;      /* cluster: where the daemon keeps it (set by its check) */
	struct flow_match m;
};

/* The order rules are judged in: lower prio first, then the older rule (lower id). Returns
 * <0, 0 or >0 as strcmp. */
int flow_rule_order(const struct flow_rule *a, const struct flow_rule *b);

/* What the parser needs to know of the daemon. */
struct flow_parse_env {
	int (*port_by_name)(void *ctx, const char *name);  /* >= 0, or < 0: no such port */
	void *ctx;
	unsigned nb_workers;        /* steer WORKER must be below it */
};

/* Parses the words of `flow add` (after "add"):
 *   [prio N] { drop | steer WORKER | kernel | cluster NAME } [dev PORT]
 *   [ethertype { ipv4 | arp | ipv6 | N }] [proto { tcp | udp | icmp | N }] [src PREFIX]
 *   [dst PREFIX] [sport P[-P]] [dport P[-P]]
 * the matches in any order after the action (prio too). Ports need proto tcp or udp; IP
 * matches need ethertype ipv4 or ipv6: an IPv6 prefix implies ipv6, otherwise ipv4 is
 * implied when none is given. Returns 0, or -1 with a one-line message naming the word at
 * fault in err. */
int flow_rule_parse(int argc, char **argv, const struct flow_parse_env *env,
		    struct flow_rule *out, char *err, size_t cap);

/* Writes the match in the grammar flow_rule_parse reads, without dev (whose name the
 * daemon knows): "any" when it matches everything. Returns buf. */
char *flow_match_format(const struct flow_match *m, char *buf, size_t cap);

/* Writes the action as the grammar spells it ("drop", "steer 1", "cluster web"). */
char *flow_action_format(const struct flow_rule *r, char *buf, size_t cap);

#endif
