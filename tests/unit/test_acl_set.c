/* ACL rule sets on rte_acl (src/acl/acl_set.c, acl_key.c, acl_check.c) judging real mbufs
 * as the IPv4 hooks do: each field, priorities, hooks, input port, later fragments and cut
 * transport headers, per-worker hit counters, bursts against one-by-one, 10,000 rules; and
 * the control thread's table (acl_table.c): ids, deletes, hits kept across rebuilds. */
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
#include "../../src/acl/acl_table.h"
#include "../../src/wire/ipv4.h"
#include "../../src/wire/tcp.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define PEER IP(10, 0, 0, 1)
#define US IP(10, 0, 0, 2)

struct pkt {
	uint8_t proto;
	uint32_t src, dst;
	uint16_t sport, dport;
	uint8_t flags;
	uint16_t frag_off;      /* bytes */
	bool mf;
	size_t l4_len;          /* transport bytes present (0: a whole header) */
	uint16_t port;          /* input port */
};

/* A datagram in an mbuf, at its IP header as the hooks see it, parsed into ip. */
static struct rte_mbuf *make(const struct pkt *p, struct ip4_repr *ip)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(test_pool());
	assert_non_null(m);
	size_t l4_len = p->l4_len ? p->l4_len : (p->proto == 6 ? 20 : 8);
	uint8_t *b = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(20 + l4_len));
	assert_non_null(b);
	memset(b, 0, 20 + l4_len);
	struct ip4_repr r = {.total_len = (uint16_t)(20 + l4_len), .ttl = 64, .proto = p->proto,
			     .src = p->src, .dst = p->dst, .frag_off = p->frag_off, .mf = p->mf};
	assert_int_equal(ip4_build(b, 20, &r), 20);
	uint8_t *l4 = b + 20;
	if (l4_len >= 4) {
		l4[0] = (uint8_t)(p->sport >> 8);
		l4[1] = (uint8_t)p->sport;
		l4[2] = (uint8_t)(p->dport >> 8);
		l4[3] = (uint8_t)p->dport;
	}
	if (p->proto == 6 && l4_len > TCP_OFF_FLAGS)
		l4[TCP_OFF_FLAGS] = p->flags;
	m->port = p->port;
	assert_int_equal(ip4_parse(b, 20 + l4_len, true, ip), WIRE_OK);
	return m;
}

/* A set of the rules lines[0..n), ids 1..n, for workers workers. */
static struct acl_set *build(const char *const *lines, uint32_t n, unsigned workers)
{
	struct acl_rule rules[16];
	assert_true(n <= 16);
	for (uint32_t i = 0; i < n; i++)
		rules[i] = rule_of(lines[i], i + 1);
	char err[160] = "";
	struct acl_set *set = acl_set_build(rules, n, workers, err, sizeof(err));
	if (set == NULL)
		fail_msg("build: %s", err);
	return set;
}

/* The id of the rule set picks for p at hook (0: none), as the hook judges it. */
static uint32_t verdict_id(const struct acl_set *set, const struct pkt *p, uint8_t hook,
			   bool *denied)
{
	struct ip4_repr ip;
	struct rte_mbuf *m = make(p, &ip);
	struct acl_key key;
	const struct acl_key *k = &key;
	uint32_t slots[ACL_CATEGORIES];
	acl_key_build(&key, m, 0, &ip, m->port);
	acl_set_classify(set, &k, slots, 1);
	*denied = acl_ip4_denies(set, 0, hook, m, &ip);
	rte_pktmbuf_free(m);
	uint32_t slot = slots[acl_hook_category(hook)];
	return slot == ACL_NO_MATCH ? 0 : set->ids[slot];
}

static uint32_t match(const struct acl_set *set, const struct pkt *p, uint8_t hook)
{
	bool denied;
	return verdict_id(set, p, hook, &denied);
}

static const struct pkt tcp80 = {.proto = 6, .src = PEER, .dst = US, .sport = 40000,
				 .dport = 80, .flags = 0x02};

static void test_no_set_permits_everything(void **state)
{
	(void)state;
	struct ip4_repr ip;
	struct rte_mbuf *m = make(&tcp80, &ip);
	assert_false(acl_ip4_denies(NULL, 0, ACL_HOOK_INPUT, m, &ip));
	rte_pktmbuf_free(m);
}

static void test_each_field_matches_and_misses(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp dport 80",
		"deny proto udp sport 53",
		"deny src 192.0.2.0/24",
		"deny dst 198.51.100.7",
		"deny proto tcp sport 1000-1999",
		"permit proto 47",
	};
	struct acl_set *set = build(lines, 6, 1);
	bool denied;
	assert_int_equal(verdict_id(set, &tcp80, ACL_HOOK_INPUT, &denied), 1);
	assert_true(denied);
	struct pkt p = tcp80;
	p.dport = 81;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	p.proto = 17;                          /* UDP to 80: not the TCP rule */
	p.dport = 80;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	p.sport = 53;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 2);
	p = tcp80;
	p.dport = 81;
	p.src = IP(192, 0, 2, 200);
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 3);
	p.src = IP(192, 0, 3, 1);
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	p.dst = IP(198, 51, 100, 7);
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 4);
	p.dst = IP(198, 51, 100, 8);
	p.sport = 1000;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 5);
	p.sport = 1999;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 5);
	p.sport = 2000;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	p = (struct pkt){.proto = 47, .src = PEER, .dst = US};
	assert_int_equal(verdict_id(set, &p, ACL_HOOK_INPUT, &denied), 6);
	assert_false(denied);
	acl_set_free(set);
}

static void test_lower_prio_wins_then_older_rule(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"prio 200 deny src 10.0.0.0/24",
		"prio 100 permit src 10.0.0.1",
		"prio 100 deny src 10.0.0.1",      /* same prio, younger: never chosen */
	};
	struct acl_set *set = build(lines, 3, 1);
	bool denied;
	assert_int_equal(verdict_id(set, &tcp80, ACL_HOOK_INPUT, &denied), 2);
	assert_false(denied);
	struct pkt p = tcp80;
	p.src = IP(10, 0, 0, 9);
	assert_int_equal(verdict_id(set, &p, ACL_HOOK_INPUT, &denied), 1);
	assert_true(denied);
	acl_set_free(set);
}

static void test_hooks_and_input_port(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp hook forward",
		"deny proto udp dev port1 hook input",
	};
	struct acl_set *set = build(lines, 2, 1);
	assert_int_equal(match(set, &tcp80, ACL_HOOK_INPUT), 0);
	assert_int_equal(match(set, &tcp80, ACL_HOOK_FORWARD), 1);
	struct pkt p = {.proto = 17, .src = PEER, .dst = US, .sport = 1, .dport = 2, .port = 1};
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 2);
	assert_int_equal(match(set, &p, ACL_HOOK_FORWARD), 0);
	p.port = 0;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	p.port = RTE_MBUF_PORT_INVALID;       /* the stack's own loopback datagram */
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	acl_set_free(set);
}

static void test_tcp_flags_set_and_mask(void **state)
{
	(void)state;
	static const char *const lines[] = {"deny proto tcp flags SYN/SYN,ACK"};
	struct acl_set *set = build(lines, 1, 1);
	struct pkt p = tcp80;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 1);          /* SYN */
	p.flags = 0x12;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);          /* SYN+ACK */
	p.flags = 0x10;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);          /* ACK */
	p.flags = 0x02 | 0x08 | 0x01;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 1);          /* SYN+PSH+FIN */
	acl_set_free(set);
}

/* Ports and flags are not there to see: rules on them do not match, others still do. */
static void test_later_fragment_and_cut_header_match_no_port_rule(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp dport 80",
		"deny proto tcp flags SYN",
		"permit proto tcp",
	};
	struct acl_set *set = build(lines, 3, 1);
	struct pkt p = tcp80;
	p.frag_off = 1480;
	assert_int_equal(match(set, &p, ACL_HOOK_FORWARD), 3);
	p.frag_off = 0;
	p.mf = true;
	p.l4_len = 24;                        /* a first fragment carries the header */
	assert_int_equal(match(set, &p, ACL_HOOK_FORWARD), 1);
	p.mf = false;
	p.l4_len = 12;                        /* ports, no flags byte */
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 3);
	p.l4_len = 2;
	assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 3);
	acl_set_free(set);
}

static void test_hits_counted_per_worker_and_summed(void **state)
{
	(void)state;
	static const char *const lines[] = {"deny proto tcp", "permit proto udp"};
	struct acl_set *set = build(lines, 2, 3);
	struct ip4_repr ip;
	struct rte_mbuf *m = make(&tcp80, &ip);
	for (unsigned w = 0; w < 3; w++)
		for (unsigned i = 0; i <= w; i++)
			assert_true(acl_ip4_denies(set, w, ACL_HOOK_INPUT, m, &ip));
	assert_int_equal(set->hits[0 * set->stride + 0], 1);
	assert_int_equal(set->hits[1 * set->stride + 0], 2);
	assert_int_equal(set->hits[2 * set->stride + 0], 3);
	assert_int_equal(acl_set_hits(set, 0), 6);
	assert_int_equal(acl_set_hits(set, 1), 0);
	/* Each worker's row starts on a cache line of its own: no false sharing. */
	assert_int_equal(set->stride * sizeof(uint64_t) % RTE_CACHE_LINE_SIZE, 0);
	rte_pktmbuf_free(m);
	acl_set_free(set);
}

/* One rte_acl_classify call over a burst gives what one-by-one calls give. */
static void test_burst_equals_one_by_one(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp dport 1-100",
		"prio 5 permit src 10.0.0.0/30",
		"deny proto udp dport 50-60 hook forward",
		"deny dst 10.0.0.128/25",
	};
	struct acl_set *set = build(lines, 4, 1);
	enum { N = 64 };
	struct acl_key keys[N];
	const struct acl_key *kp[N];
	uint32_t burst[N * ACL_CATEGORIES], single[ACL_CATEGORIES];
	for (unsigned i = 0; i < N; i++) {
		struct pkt p = {.proto = i % 2 ? 6 : 17, .src = IP(10, 0, 0, i % 8),
				.dst = IP(10, 0, 0, 100 + i), .sport = 7, .dport = (uint16_t)(i * 3)};
		struct ip4_repr ip;
		struct rte_mbuf *m = make(&p, &ip);
		acl_key_build(&keys[i], m, 0, &ip, m->port);
		kp[i] = &keys[i];
		rte_pktmbuf_free(m);
	}
	acl_set_classify(set, kp, burst, N);
	unsigned matched = 0;
	for (unsigned i = 0; i < N; i++) {
		acl_set_classify(set, &kp[i], single, 1);
		assert_memory_equal(&burst[i * ACL_CATEGORIES], single, sizeof(single));
		matched += single[0] != ACL_NO_MATCH;
	}
	assert_true(matched > 0 && matched < N);
	acl_set_free(set);
}

/* The frame of p as it arrives: an Ethernet header first. */
static struct rte_mbuf *make_frame(const struct pkt *p)
{
	struct ip4_repr ip;
	struct rte_mbuf *m = make(p, &ip);
	uint8_t *eth = (uint8_t *)rte_pktmbuf_prepend(m, 14);
	assert_non_null(eth);
	memset(eth, 0, 14);
	eth[12] = 0x08;                       /* IPv4 */
	return m;
}

/* The worker's RX burst is classified in one call; each hook then finds its datagram's
 * verdict there (the search moves on), and a datagram that was not in the burst, or was
 * changed since, is classified alone: the same verdicts either way. */
static void test_rx_burst_verdicts_found_by_the_hooks(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp dport 80 hook input",
		"deny proto udp hook forward",
		"permit proto tcp",
	};
	struct acl_set *set = build(lines, 3, 2);
	struct pkt udp = {.proto = 17, .src = PEER, .dst = US, .sport = 5, .dport = 6};
	struct rte_mbuf *frames[4] = {make_frame(&tcp80), make_frame(&udp), make_frame(&tcp80),
				      make_frame(&udp)};
	rte_pktmbuf_mtod(frames[3], uint8_t *)[12] = 0x86;      /* not IPv4: left out */
	acl_rx_burst(set, 1, 0, frames, 4);
	struct acl_burst *b = &set->bursts[1];
	assert_int_equal(b->n, 3);
	assert_int_equal(b->next, 0);
	struct ip4_repr ip;
	for (unsigned i = 0; i < 3; i++)
		rte_pktmbuf_adj(frames[i], 14);
	assert_int_equal(ip4_parse(rte_pktmbuf_mtod(frames[0], uint8_t *), 40, false, &ip),
			 WIRE_OK);
	assert_true(acl_ip4_denies(set, 1, ACL_HOOK_INPUT, frames[0], &ip));
	assert_int_equal(b->next, 1);
	assert_int_equal(ip4_parse(rte_pktmbuf_mtod(frames[1], uint8_t *), 28, false, &ip),
			 WIRE_OK);
	assert_false(acl_ip4_denies(set, 1, ACL_HOOK_INPUT, frames[1], &ip));
	assert_int_equal(b->next, 2);
	/* The third frame comes to the forward hook from another port: not the burst's key. */
	frames[2]->port = 3;
	assert_int_equal(ip4_parse(rte_pktmbuf_mtod(frames[2], uint8_t *), 40, false, &ip),
			 WIRE_OK);
	assert_false(acl_ip4_denies(set, 1, ACL_HOOK_FORWARD, frames[2], &ip));
	assert_int_equal(b->next, 2);
	assert_int_equal(acl_set_hits(set, 0), 1);
	assert_int_equal(acl_set_hits(set, 1), 0);
	assert_int_equal(acl_set_hits(set, 2), 1);
	/* Worker 0's burst is its own. */
	assert_int_equal(set->bursts[0].n, 0);
	for (unsigned i = 0; i < 4; i++)
		rte_pktmbuf_free(frames[i]);
	acl_set_free(set);
}

/* 10,000 rules: each packet finds its own rule among them. */
static void test_ten_thousand_rules(void **state)
{
	(void)state;
	enum { N = 10000 };
	struct acl_rule *rules = calloc(N, sizeof(*rules));
	assert_non_null(rules);
	for (uint32_t i = 0; i < N; i++) {
		rules[i] = rule_of("deny family ipv4 proto udp dport 5", i + 1);
		rules[i].src = IP(172, 16, i / 250, i % 250);
		rules[i].src_len = 32;
		rules[i].dport_lo = rules[i].dport_hi = (uint16_t)(1024 + i);
	}
	char err[160] = "";
	struct acl_set *set = acl_set_build(rules, N, 1, err, sizeof(err));
	if (set == NULL)
		fail_msg("%s", err);
	for (uint32_t i = 0; i < N; i += 997) {
		struct pkt p = {.proto = 17, .src = IP(172, 16, i / 250, i % 250), .dst = US,
				.sport = 9, .dport = (uint16_t)(1024 + i)};
		assert_int_equal(match(set, &p, ACL_HOOK_INPUT), i + 1);
		p.dport++;
		assert_int_equal(match(set, &p, ACL_HOOK_INPUT), 0);
	}
	acl_set_free(set);
	free(rules);
}

/* The table: ids never reused, hits kept across rebuilds, a deleted rule's hits gone. */
static void test_table_keeps_hits_across_rebuilds(void **state)
{
	(void)state;
	struct acl_table t = {0};
	struct acl_rule a = rule_of("deny proto tcp", 0), b = rule_of("permit proto udp", 0);
	assert_int_equal(acl_table_append(&t, &a), 0);
	assert_int_equal(acl_table_append(&t, &b), 0);
	assert_int_equal(a.id, 1);
	assert_int_equal(b.id, 2);
	char err[160];
	struct acl_set *set;
	assert_int_equal(acl_table_build(&t, UINT32_MAX, 2, &set, err, sizeof(err)), 0);
	t.set = set;
	struct ip4_repr ip;
	struct rte_mbuf *m = make(&tcp80, &ip);
	assert_true(acl_ip4_denies(t.set, 1, ACL_HOOK_INPUT, m, &ip));
	assert_true(acl_ip4_denies(t.set, 0, ACL_HOOK_INPUT, m, &ip));
	assert_int_equal(acl_table_hits(&t, 0), 2);
	/* A new rule, a new set: the old set's hits move into the table. */
	struct acl_rule c = rule_of("deny proto icmp", 0);
	assert_int_equal(acl_table_append(&t, &c), 0);
	assert_int_equal(acl_table_build(&t, UINT32_MAX, 2, &set, err, sizeof(err)), 0);
	struct acl_set *old = t.set;
	t.set = set;
	acl_table_retire(&t, old);
	assert_int_equal(acl_table_hits(&t, 0), 2);
	assert_true(acl_ip4_denies(t.set, 0, ACL_HOOK_INPUT, m, &ip));
	assert_int_equal(acl_table_hits(&t, 0), 3);
	/* Deleting rule 1: the set without it, then the table without it. */
	int i = acl_table_find(&t, 1);
	assert_int_equal(i, 0);
	assert_int_equal(acl_table_build(&t, (uint32_t)i, 2, &set, err, sizeof(err)), 0);
	old = t.set;
	t.set = set;
	acl_table_retire(&t, old);
	acl_table_remove(&t, (uint32_t)i);
	assert_int_equal(acl_table_find(&t, 1), -1);
	assert_int_equal(acl_table_find(&t, 3), 1);
	assert_false(acl_ip4_denies(t.set, 0, ACL_HOOK_INPUT, m, &ip));
	assert_int_equal(acl_table_hits(&t, 0), 0);
	/* Ids go on from the highest ever given. */
	struct acl_rule d = rule_of("deny", 0);
	assert_int_equal(acl_table_append(&t, &d), 0);
	assert_int_equal(d.id, 4);
	acl_table_drop_last(&t);
	/* No rule left: no set. */
	t.nb_rules = 0;
	assert_int_equal(acl_table_build(&t, UINT32_MAX, 2, &set, err, sizeof(err)), 0);
	assert_null(set);
	rte_pktmbuf_free(m);
	acl_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
		T(test_no_set_permits_everything),
		T(test_each_field_matches_and_misses),
		T(test_lower_prio_wins_then_older_rule),
		T(test_hooks_and_input_port),
		T(test_tcp_flags_set_and_mask),
		T(test_later_fragment_and_cut_header_match_no_port_rule),
		T(test_hits_counted_per_worker_and_summed),
		T(test_burst_equals_one_by_one),
		T(test_rx_burst_verdicts_found_by_the_hooks),
		T(test_ten_thousand_rules),
		T(test_table_keeps_hits_across_rebuilds),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
