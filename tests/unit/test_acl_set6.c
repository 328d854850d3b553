/* IPv6 in the ACL (src/acl/acl_key.c, acl_set.c, acl_check.c) and the bypass rules
 * (bypass_set.c): the key read from a real datagram (extension headers walked, first and
 * later fragments, transport headers cut short, a chain the walk refuses), prefixes on each
 * 32-bit word of an address, rules of both families against keys of both, hooks and hits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test_acl_rules.h"
#include "test_eal.h"
#include "../../src/acl/acl.h"
#include "../../src/acl/bypass_set.h"
#include "../../src/wire/ipv4.h"
#include "../../src/wire/ipv6.h"
#include "../../src/wire/tcp.h"

/* What goes between the fixed header and the transport header. */
enum ext_kind { EXT_NONE, EXT_HOP_DST, EXT_FRAG_FIRST, EXT_FRAG_LATER, EXT_HOP_TWICE };

struct pkt6 {
	const char *src, *dst;
	uint8_t proto;           /* the upper layer */
	uint16_t sport, dport;
	uint8_t flags;
	enum ext_kind ext;
	size_t l4_len;           /* transport bytes present (0: a whole header) */
	uint16_t port;
};

static struct ip6_addr addr(const char *text)
{
	struct ip6_addr a;
	assert_int_equal(ip6_addr_parse(text, &a), 0);
	return a;
}

/* Writes the extension headers of kind k at b (first Next Header in *nh, the last one's
 * pointing at proto); returns their length. */
static size_t put_ext(uint8_t *b, enum ext_kind k, uint8_t proto, uint8_t *nh)
{
	switch (k) {
	case EXT_HOP_DST:
		/* Hop-by-Hop then Destination Options, each 8 bytes of PadN. */
		*nh = IP6_NH_HOPOPTS;
		b[0] = IP6_NH_DSTOPTS;
		b[1] = 0;
		b[2] = 1;
		b[3] = 4;
		b[8] = proto;
		b[9] = 0;
		b[10] = 1;
		b[11] = 4;
		return 16;
	case EXT_FRAG_FIRST:
	case EXT_FRAG_LATER:
		*nh = IP6_NH_FRAGMENT;
		b[0] = proto;
		/* Offset 0 with M set, or offset 8 bytes (units of 8) and the last. */
		b[2] = 0;
		b[3] = k == EXT_FRAG_FIRST ? 1 : 8;
		b[7] = 42;
		return 8;
	case EXT_HOP_TWICE:
		/* Hop-by-Hop only first (RFC 8200 §4.1): the walk refuses the second. */
		*nh = IP6_NH_HOPOPTS;
		b[0] = IP6_NH_HOPOPTS;
		b[2] = 1;
		b[3] = 4;
		b[8] = proto;
		b[10] = 1;
		b[11] = 4;
		return 16;
	case EXT_NONE:
		break;
	}
	*nh = proto;
	return 0;
}

/* The datagram p in an mbuf, at its IPv6 header as the hooks see it, parsed into ip. */
static struct rte_mbuf *make6(const struct pkt6 *p, struct ip6_repr *ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	uint8_t buf[256] = {0};
	uint8_t nh;
	size_t ext_len = put_ext(buf + IP6_HDR_LEN, p->ext, p->proto, &nh);
	size_t l4_len = p->l4_len ? p->l4_len : (p->proto == IP6_NH_TCP ? 20 : 8);
	uint8_t *l4 = buf + IP6_HDR_LEN + ext_len;
	if (l4_len >= 4) {
		l4[0] = (uint8_t)(p->sport >> 8);
		l4[1] = (uint8_t)p->sport;
		l4[2] = (uint8_t)(p->dport >> 8);
		l4[3] = (uint8_t)p->dport;
	}
	if (p->proto == IP6_NH_TCP && l4_len > TCP_OFF_FLAGS)
		l4[TCP_OFF_FLAGS] = p->flags;
	struct ip6_repr r = {.payload_len = (uint16_t)(ext_len + l4_len), .next_header = nh,
			     .hop_limit = 64, .src = addr(p->src), .dst = addr(p->dst)};
	assert_int_equal(ip6_build(buf, sizeof(buf), &r), IP6_HDR_LEN);
	size_t len = IP6_HDR_LEN + ext_len + l4_len;
	memcpy(rte_pktmbuf_append(m, (uint16_t)len), buf, len);
	m->port = p->port;
	assert_int_equal(ip6_parse(buf, len, ip), WIRE_OK);
	return m;
}

static struct acl_key6 key_of(const struct pkt6 *p)
{
	struct ip6_repr ip;
	struct rte_mbuf *m = make6(p, &ip);
	struct acl_key6 k;
	acl_key6_build(&k, m, &ip, NULL, m->port);
	rte_pktmbuf_free(m);
	return k;
}

#define PEER "2001:db8:1::1"
#define US "2001:db8:2::2"

static void test_key_after_extension_headers(void **state)
{
	(void)state;
	struct pkt6 p = {PEER, US, IP6_NH_TCP, 40000, 22, 0x02, EXT_HOP_DST, 0, 3};
	struct acl_key6 k = key_of(&p);
	struct ip6_addr src = addr(PEER), dst = addr(US);
	assert_int_equal(k.proto, IP6_NH_TCP);
	assert_memory_equal(k.src, src.b, 16);
	assert_memory_equal(k.dst, dst.b, 16);
	assert_int_equal(k.l4, 1);
	assert_int_equal(rte_be_to_cpu_16(k.sport), 40000);
	assert_int_equal(rte_be_to_cpu_16(k.dport), 22);
	assert_int_equal(k.tcp_flags, 0x02);
	assert_int_equal(k.dev, 3);
}

static void test_key_first_fragment_has_ports_later_none(void **state)
{
	(void)state;
	struct pkt6 p = {PEER, US, IP6_NH_UDP, 53, 5353, 0, EXT_FRAG_FIRST, 0, 0};
	struct acl_key6 k = key_of(&p);
	assert_int_equal(k.proto, IP6_NH_UDP);
	assert_int_equal(k.l4, 1);
	assert_int_equal(rte_be_to_cpu_16(k.dport), 5353);
	p.ext = EXT_FRAG_LATER;
	k = key_of(&p);
	assert_int_equal(k.proto, IP6_NH_UDP);   /* the fragment header names it */
	assert_int_equal(k.l4, 0);
	assert_int_equal(k.sport, 0);
	assert_int_equal(k.dport, 0);
}

static void test_key_cut_transport_and_refused_chain_have_no_ports(void **state)
{
	(void)state;
	/* A TCP header cut before its flags, a UDP one before its ports. */
	struct pkt6 p = {PEER, US, IP6_NH_TCP, 1, 2, 0x12, EXT_NONE, TCP_OFF_FLAGS, 0};
	assert_int_equal(key_of(&p).l4, 0);
	p = (struct pkt6){PEER, US, IP6_NH_UDP, 1, 2, 0, EXT_HOP_DST, 3, 0};
	assert_int_equal(key_of(&p).l4, 0);
	assert_int_equal(key_of(&p).proto, IP6_NH_UDP);
	/* The walk stops at the second Hop-by-Hop header: its number, no ports. */
	p = (struct pkt6){PEER, US, IP6_NH_TCP, 1, 2, 0, EXT_HOP_TWICE, 0, 0};
	struct acl_key6 k = key_of(&p);
	assert_int_equal(k.proto, IP6_NH_HOPOPTS);
	assert_int_equal(k.l4, 0);
}

static struct acl_set *build(const char *const *lines, uint32_t n)
{
	struct acl_rule rules[16];
	assert_true(n <= 16);
	for (uint32_t i = 0; i < n; i++)
		rules[i] = rule_of(lines[i], i + 1);
	char err[160] = "";
	struct acl_set *set = acl_set_build(rules, n, 2, err, sizeof(err));
	if (set == NULL)
		fail_msg("build: %s", err);
	return set;
}

/* The id of the rule that judges p at hook (0: none), and whether the hook denies it. */
static uint32_t judge6(const struct acl_set *set, const struct pkt6 *p, uint8_t hook,
		       bool *denied)
{
	struct ip6_repr ip;
	struct rte_mbuf *m = make6(p, &ip);
	struct acl_key6 key;
	uint32_t slots[ACL_CATEGORIES];
	acl_key6_build(&key, m, &ip, NULL, m->port);
	acl_set_classify6(set, &key, slots);
	*denied = acl_ip6_denies(set, 0, hook, m, &ip, NULL);
	rte_pktmbuf_free(m);
	uint32_t slot = slots[acl_hook_category(hook)];
	return slot == ACL_NO_MATCH ? 0 : set->ids[slot];
}

static uint32_t id6(const struct acl_set *set, const char *src, const char *dst, uint8_t proto,
		    uint16_t dport)
{
	struct pkt6 p = {src, dst, proto, 40000, dport, 0x10, EXT_NONE, 0, 0};
	bool denied;
	return judge6(set, &p, ACL_HOOK_INPUT, &denied);
}

/* Prefix lengths that end inside each 32-bit word, and across a word boundary. */
static void test_prefixes_on_every_word(void **state)
{
	(void)state;
	static const char *const rules[] = {
		"deny src 2001:db8:1:2:3:4:5:6",           /* 1: /128, the last word */
		"deny src 2001:db8:1:2::/70",              /* 2: in the third word */
		"deny src 2001:db8:1::/48",                /* 3: in the second */
		"deny src 2001:d00::/24",                  /* 4: in the first */
		"deny dst 2001:db8:8000::/33",             /* 5: a bit past the first word */
	};
	struct acl_set *set = build(rules, 5);
	assert_int_equal(id6(set, "2001:db8:1:2:3:4:5:6", US, 6, 1), 1);
	assert_int_equal(id6(set, "2001:db8:1:2:3:4:5:7", US, 6, 1), 2);
	assert_int_equal(id6(set, "2001:db8:1:2:0400::1", US, 6, 1), 3); /* bit 70 differs */
	assert_int_equal(id6(set, "2001:db8:1:3::1", US, 6, 1), 3);
	assert_int_equal(id6(set, "2001:db8:2::1", US, 6, 1), 4);
	assert_int_equal(id6(set, "2001:dff::1", US, 6, 1), 4);
	assert_int_equal(id6(set, "2001:e00::1", "2001:db8:8000::1", 6, 1), 5);
	assert_int_equal(id6(set, "2001:e00::1", "2001:db8:7fff::1", 6, 1), 0);
	acl_set_free(set);
}

/* A rule of both families judges both; a rule of one family never the other's. */
static void test_families_kept_apart_and_both_families_rule(void **state)
{
	(void)state;
	static const char *const rules[] = {
		"deny src 10.0.0.0/8",                     /* 1: IPv4 */
		"deny family ipv6 proto udp",              /* 2: IPv6, no address */
		"permit proto tcp dport 22",               /* 3: both */
		"deny src ::/0 proto tcp",                 /* 4: every IPv6 TCP datagram */
	};
	struct acl_set *set = build(rules, 4);
	assert_non_null(set->ctx);
	assert_non_null(set->ctx6);
	assert_int_equal(id6(set, PEER, US, IP6_NH_UDP, 53), 2);
	assert_int_equal(id6(set, PEER, US, IP6_NH_TCP, 22), 3);
	assert_int_equal(id6(set, PEER, US, IP6_NH_TCP, 80), 4);
	assert_int_equal(id6(set, PEER, US, IP6_NH_ICMPV6, 0), 0);
	/* The IPv4 side: rule 1 and 3, never 2 or 4. */
	struct acl_key k4 = {.proto = 6, .src = rte_cpu_to_be_32(0x0a000001),
			     .dst = rte_cpu_to_be_32(0xc0000201), .dport = rte_cpu_to_be_16(80),
			     .l4 = 1};
	const struct acl_key *kp = &k4;
	uint32_t slots[ACL_CATEGORIES];
	acl_set_classify(set, &kp, slots, 1);
	assert_int_equal(set->ids[slots[0]], 1);
	k4.src = rte_cpu_to_be_32(0xc0000202);
	acl_set_classify(set, &kp, slots, 1);
	assert_int_equal(slots[0], ACL_NO_MATCH);
	k4.dport = rte_cpu_to_be_16(22);
	acl_set_classify(set, &kp, slots, 1);
	assert_int_equal(set->ids[slots[0]], 3);
	acl_set_free(set);
}

/* Only IPv4 rules: no IPv6 context, every IPv6 datagram passes; and the reverse. */
static void test_one_family_only_leaves_the_other_unjudged(void **state)
{
	(void)state;
	static const char *const v4[] = {"deny src 0.0.0.0/0"};
	struct acl_set *set = build(v4, 1);
	assert_null(set->ctx6);
	assert_int_equal(id6(set, PEER, US, IP6_NH_TCP, 1), 0);
	acl_set_free(set);
	static const char *const v6[] = {"deny dst 2001:db8:2::/64"};
	set = build(v6, 1);
	assert_null(set->ctx);
	struct acl_key k4 = {.proto = 6};
	const struct acl_key *kp = &k4;
	uint32_t slots[ACL_CATEGORIES];
	acl_set_classify(set, &kp, slots, 1);
	assert_int_equal(slots[0], ACL_NO_MATCH);
	assert_int_equal(id6(set, PEER, US, IP6_NH_TCP, 1), 1);
	acl_set_free(set);
}

/* Hooks, ports, flags and the input port as for IPv4; the denied count per rule. */
static void test_hooks_ports_and_hits(void **state)
{
	(void)state;
	static const char *const rules[] = {
		"prio 10 permit src 2001:db8:1::/48 proto tcp dport 22 hook input",
		"deny src 2001:db8:1::/48 hook input,forward",
		"deny dst 2001:db8:9::/48 proto tcp flags SYN/SYN,ACK dev port1 hook forward",
	};
	struct acl_set *set = build(rules, 3);
	bool denied;
	struct pkt6 ssh = {PEER, US, IP6_NH_TCP, 40000, 22, 0x02, EXT_NONE, 0, 0};
	assert_int_equal(judge6(set, &ssh, ACL_HOOK_INPUT, &denied), 1);
	assert_false(denied);
	assert_int_equal(judge6(set, &ssh, ACL_HOOK_FORWARD, &denied), 2);
	assert_true(denied);
	struct pkt6 syn = {"2001:db8:5::1", "2001:db8:9::1", IP6_NH_TCP, 1, 80, 0x02, EXT_NONE,
			   0, 1};
	assert_int_equal(judge6(set, &syn, ACL_HOOK_FORWARD, &denied), 3);
	assert_true(denied);
	assert_int_equal(judge6(set, &syn, ACL_HOOK_INPUT, &denied), 0);
	assert_false(denied);
	syn.flags = 0x12;                        /* SYN,ACK */
	assert_int_equal(judge6(set, &syn, ACL_HOOK_FORWARD, &denied), 0);
	syn.flags = 0x02;
	syn.port = 0;
	assert_int_equal(judge6(set, &syn, ACL_HOOK_FORWARD, &denied), 0);
	/* A later fragment carries no ports: the port rule passes it by. */
	ssh.ext = EXT_FRAG_LATER;
	assert_int_equal(judge6(set, &ssh, ACL_HOOK_INPUT, &denied), 2);
	assert_int_equal(acl_set_hits(set, 0), 1);
	assert_int_equal(acl_set_hits(set, 1), 2);
	assert_int_equal(acl_set_hits(set, 2), 1);
	acl_set_free(set);
}

static void test_bypass_rules_match_their_family(void **state)
{
	(void)state;
	struct acl_rule v6 = rule_of("permit src 2001:db8:1::/48 proto tcp dport 179", 1);
	struct acl_rule both = rule_of("permit proto udp dport 520-521", 2);
	struct acl_rule v4 = rule_of("permit dst 0.0.0.0/0", 3);
	struct pkt6 bgp = {PEER, US, IP6_NH_TCP, 40000, 179, 0x02, EXT_HOP_DST, 0, 0};
	struct acl_key6 k = key_of(&bgp);
	assert_true(bypass_rule_matches6(&v6, &k));
	assert_false(bypass_rule_matches6(&both, &k));
	assert_false(bypass_rule_matches6(&v4, &k));
	bgp.src = "2001:db8:2::1";
	k = key_of(&bgp);
	assert_false(bypass_rule_matches6(&v6, &k));
	struct pkt6 rip = {"fe80::1", "ff02::9", IP6_NH_UDP, 521, 521, 0, EXT_NONE, 0, 0};
	k = key_of(&rip);
	assert_true(bypass_rule_matches6(&both, &k));
	rip.ext = EXT_FRAG_LATER;
	k = key_of(&rip);
	assert_false(bypass_rule_matches6(&both, &k));
	struct acl_key k4 = {.proto = 17, .sport = rte_cpu_to_be_16(520),
			     .dport = rte_cpu_to_be_16(520), .l4 = 1};
	assert_true(bypass_rule_matches(&both, &k4));
	assert_true(bypass_rule_matches(&v4, &k4));
	assert_false(bypass_rule_matches(&v6, &k4));
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
		T(test_key_after_extension_headers),
		T(test_key_first_fragment_has_ports_later_none),
		T(test_key_cut_transport_and_refused_chain_have_no_ports),
		T(test_prefixes_on_every_word),
		T(test_families_kept_apart_and_both_families_rule),
		T(test_one_family_only_leaves_the_other_unjudged),
		T(test_hooks_ports_and_hits),
		T(test_bypass_rules_match_their_family),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
