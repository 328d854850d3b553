/* What flow rules see of a frame and how they judge it (src/flow/flow_match.c, flow_set.c,
 * flow_table.c): the key read from Ethernet/IPv4/TCP/UDP bytes at every truncation and for
 * fragments, each match field, the first matching rule in priority order with hits counted
 * per worker, and the table's order, ids and counts kept across rebuilds. Pure C, no EAL. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/flow/flow_match.h"
#include "../../src/flow/flow_table.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define FRAME_LEN (14 + 20 + 8)

/* An Ethernet frame carrying IPv4 (IHL 5) from 10.0.0.1 to 10.0.0.2, proto, ports 1234 ->
 * 80, fragment field frag. Only the fields the key reads are set. */
static void make_frame(uint8_t *f, uint8_t proto, uint16_t frag)
{
	memset(f, 0, FRAME_LEN);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[6] = (uint8_t)(frag >> 8);
	ip[7] = (uint8_t)frag;
	ip[9] = proto;
	ip[12] = 10, ip[15] = 1;
	ip[16] = 10, ip[19] = 2;
	uint8_t *l4 = ip + 20;
	l4[0] = 1234 >> 8, l4[1] = 1234 & 0xff;
	l4[2] = 0, l4[3] = 80;
}

static void test_key_of_a_udp_frame(void **state)
{
	(void)state;
	uint8_t f[FRAME_LEN];
	make_frame(f, 17, 0);
	struct flow_key k;
	flow_key_parse(f, sizeof(f), 3, &k);
	assert_int_equal(k.port, 3);
	assert_int_equal(k.ethertype, 0x0800);
	assert_true(k.ip && k.l4);
	assert_int_equal(k.proto, 17);
	assert_int_equal(k.src[3], IP(10, 0, 0, 1));
	assert_int_equal(k.dst[3], IP(10, 0, 0, 2));
	assert_int_equal(k.sport, 1234);
	assert_int_equal(k.dport, 80);
}

static void test_key_at_every_truncation_reads_only_what_is_there(void **state)
{
	(void)state;
	uint8_t f[FRAME_LEN];
	make_frame(f, 6, 0);
	for (size_t len = 0; len <= sizeof(f); len++) {
		/* len bytes on the heap (one when none): ASan sees any read past them. */
		uint8_t *copy = malloc(len > 0 ? len : 1);
		assert_non_null(copy);
		memcpy(copy, f, len);
		struct flow_key k;
		flow_key_parse(copy, len, 0, &k);
		free(copy);
		assert_int_equal(k.ethertype, len >= 14 ? 0x0800 : 0);
		assert_int_equal(k.ip, len >= 14 + 20);
		assert_int_equal(k.l4, len >= 14 + 20 + 4);
	}
}

static void test_key_of_fragments_and_other_frames(void **state)
{
	(void)state;
	uint8_t f[FRAME_LEN];
	struct flow_key k;
	make_frame(f, 17, 0x2000);            /* MF, offset 0: the first fragment has ports */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(k.l4);
	make_frame(f, 17, 0x0010);            /* a later fragment: no ports */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(k.ip && !k.l4);
	make_frame(f, 1, 0);                  /* ICMP: no ports */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(k.ip && !k.l4);
	make_frame(f, 17, 0);
	f[14] = 0x46;                         /* IHL 6: the ports move 4 bytes on */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(k.l4);
	assert_int_equal(k.dport, 0);
	f[14] = 0x44;                         /* IHL 4: not a header */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_false(k.ip);
	f[14] = 0x65;                         /* version 6 behind an IPv4 EtherType */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_false(k.ip);
	f[12] = 0x08, f[13] = 0x06;           /* ARP */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_int_equal(k.ethertype, 0x0806);
	assert_false(k.ip);
}

static struct flow_rule rule(const char *line)
{
	static char copy[256];
	char *words[32];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok(copy, " "); w != NULL && n < 32; w = strtok(NULL, " "))
		words[n++] = w;
	struct flow_parse_env env = {.nb_workers = 2};
	struct flow_rule r;
	char err[200];
	if (flow_rule_parse(n, words, &env, &r, err, sizeof(err)) != 0)
		fail_msg("'%s': %s", line, err);
	return r;
}

static bool holds(const char *line, const struct flow_key *k)
{
	struct flow_rule r = rule(line);
	struct flow_test t;
	flow_test_compile(&r.m, &t);
	return flow_test_holds(&t, k);
}

static void test_each_match_field(void **state)
{
	(void)state;
	uint8_t f[FRAME_LEN];
	make_frame(f, 6, 0);
	struct flow_key k;
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(holds("drop", &k));
	assert_true(holds("drop ethertype ipv4", &k));
	assert_false(holds("drop ethertype arp", &k));
	assert_true(holds("drop proto tcp", &k));
	assert_false(holds("drop proto udp", &k));
	assert_true(holds("drop src 10.0.0.0/8 dst 10.0.0.2", &k));
	assert_false(holds("drop src 10.0.0.2", &k));
	assert_true(holds("drop src 0.0.0.0/0", &k));
	assert_true(holds("drop proto tcp sport 1000-2000 dport 80", &k));
	assert_false(holds("drop proto tcp sport 1235-2000", &k));
	assert_false(holds("drop proto tcp dport 81", &k));
	k.port = 1;
	struct flow_rule r = rule("drop");
	struct flow_test t;
	r.m.dev = 0;
	flow_test_compile(&r.m, &t);
	assert_false(flow_test_holds(&t, &k));
	r.m.dev = 1;
	flow_test_compile(&r.m, &t);
	assert_true(flow_test_holds(&t, &k));
	/* A later fragment matches a protocol rule, not a port rule. */
	make_frame(f, 6, 0x0010);
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(holds("drop proto tcp", &k));
	assert_false(holds("drop proto tcp dport 80", &k));
	assert_true(holds("drop proto tcp dport 0-65535", &k));
}

#define FRAME6_LEN (14 + 40 + 8)

/* An Ethernet frame carrying IPv6 from 2001:db8:1::1 to 2001:db8:2::2 with Next Header nh,
 * ports 1234 -> 80 after the fixed header. */
static void make_frame6(uint8_t *f, uint8_t nh)
{
	memset(f, 0, FRAME6_LEN);
	f[12] = 0x86, f[13] = 0xdd;
	uint8_t *ip = f + 14;
	ip[0] = 0x60;
	ip[5] = 8;
	ip[6] = nh;
	ip[8] = 0x20, ip[9] = 0x01, ip[10] = 0x0d, ip[11] = 0xb8, ip[13] = 1, ip[23] = 1;
	ip[24] = 0x20, ip[25] = 0x01, ip[26] = 0x0d, ip[27] = 0xb8, ip[29] = 2, ip[39] = 2;
	uint8_t *l4 = ip + 40;
	l4[0] = 1234 >> 8, l4[1] = 1234 & 0xff;
	l4[2] = 0, l4[3] = 80;
}

static void test_key_of_ipv6_frames_at_every_truncation(void **state)
{
	(void)state;
	uint8_t f[FRAME6_LEN];
	make_frame6(f, 6);
	struct flow_key k;
	flow_key_parse(f, sizeof(f), 2, &k);
	assert_true(k.ip && k.l4);
	assert_int_equal(k.proto, 6);
	assert_int_equal(k.src[0], 0x20010db8);
	assert_int_equal(k.src[1], 0x00010000);
	assert_int_equal(k.src[3], 1);
	assert_int_equal(k.dst[1], 0x00020000);
	assert_int_equal(k.dst[3], 2);
	assert_int_equal(k.sport, 1234);
	assert_int_equal(k.dport, 80);
	for (size_t len = 0; len < sizeof(f); len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, f, len);
		flow_key_parse(cut, len, 0, &k);
		assert_int_equal(k.ip, len >= 14 + 40);
		assert_int_equal(k.l4, len >= 14 + 40 + 4);
		free(cut);
	}
	/* A fragment header first: its number, no ports (as a NIC reads the header). */
	make_frame6(f, 44);
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(k.ip && !k.l4);
	assert_int_equal(k.proto, 44);
	/* Version 4 in an IPv6 EtherType: no IP key. */
	make_frame6(f, 6);
	f[14] = 0x40;
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_false(k.ip);
}

static void test_ipv6_match_fields_and_families_apart(void **state)
{
	(void)state;
	uint8_t f[FRAME6_LEN];
	make_frame6(f, 6);
	struct flow_key k;
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_true(holds("drop", &k));
	assert_true(holds("drop ethertype ipv6", &k));
	assert_true(holds("drop ethertype ipv6 proto tcp dport 80", &k));
	assert_false(holds("drop proto tcp dport 80", &k));      /* IPv4 implied */
	assert_true(holds("drop src 2001:db8:1::/48 dst 2001:db8:2::2", &k));
	assert_true(holds("drop src 2001:db8::/32 proto tcp sport 1234", &k));
	assert_false(holds("drop src 2001:db8:1::2", &k));
	assert_false(holds("drop dst 2001:db8:3::/48", &k));
	assert_true(holds("drop dst 2001:db8:2::2/127", &k));
	assert_true(holds("drop dst 2001:db8:2::/126", &k));
	assert_false(holds("drop dst 2001:db8:2::4/126", &k));
	assert_false(holds("drop dst 2001:db8:2::/128", &k));
	assert_true(holds("drop src ::/0", &k));
	assert_false(holds("drop src 0.0.0.0/0", &k));
	/* The IPv4 frame from 10.0.0.1 meets none of the IPv6 rules. */
	uint8_t f4[FRAME_LEN];
	make_frame(f4, 6, 0);
	flow_key_parse(f4, sizeof(f4), 0, &k);
	assert_false(holds("drop src ::/0", &k));
	assert_false(holds("drop ethertype ipv6 proto tcp", &k));
	assert_true(holds("drop src 10.0.0.1", &k));
}

static void test_set_first_match_decides_and_counts_per_worker(void **state)
{
	(void)state;
	struct flow_table t = {0};
	struct flow_rule rules[] = {rule("prio 200 drop proto tcp"),
				    rule("prio 100 steer 1 proto tcp dport 80"),
				    rule("prio 200 steer 0 proto tcp")};
	for (int i = 0; i < 3; i++)
		assert_true(flow_table_insert(&t, &rules[i]) >= 0);
	assert_int_equal(t.e[0].r.id, 2);    /* the lowest prio first ... */
	assert_int_equal(t.e[1].r.id, 1);    /* ... then the older of equal ones */
	assert_int_equal(t.e[2].r.id, 3);
	struct flow_set *set;
	assert_int_equal(flow_table_build(&t, 2, &set), 0);
	t.set = set;
	uint8_t f[FRAME_LEN];
	make_frame(f, 6, 0);
	struct flow_key k;
	flow_key_parse(f, sizeof(f), 0, &k);
	const struct flow_entry *e = flow_set_judge(set, 1, &k);
	assert_non_null(e);
	assert_int_equal(e->id, 2);
	assert_int_equal(e->action, FLOW_ACT_STEER);
	assert_int_equal(e->worker, 1);
	f[14 + 23] = 81;                     /* another port: the drop, older than rule 3 */
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_int_equal(flow_set_judge(set, 0, &k)->id, 1);
	assert_int_equal(flow_set_judge(set, 1, &k)->id, 1);
	make_frame(f, 17, 0);
	flow_key_parse(f, sizeof(f), 0, &k);
	assert_null(flow_set_judge(set, 0, &k));
	assert_int_equal(flow_table_sw_hits(&t, 0), 1);
	assert_int_equal(flow_table_sw_hits(&t, 1), 2);
	assert_int_equal(flow_table_sw_hits(&t, 2), 0);

	/* Rule 2 goes: the new set starts counting from zero, the table keeps what the old one
	 * counted for the rules that stay. */
	flow_table_remove(&t, 0);
	struct flow_set *old = t.set;
	assert_int_equal(flow_table_build(&t, 2, &t.set), 0);
	flow_table_retire(&t, old);
	assert_int_equal(flow_table_sw_hits(&t, 0), 2);
	assert_int_equal(t.e[0].r.id, 1);
	struct flow_rule again = rule("drop");
	assert_int_equal(flow_table_insert(&t, &again), 2);
	assert_int_equal(again.id, 4);       /* ids are never reused */
	assert_int_equal(flow_table_find(&t, 2), -1);
	assert_int_equal(flow_table_find(&t, 4), 2);
	flow_table_fini(&t);
}

static void test_table_holds_at_most_flow_max_rules(void **state)
{
	(void)state;
	struct flow_table t = {0};
	for (int i = 0; i < FLOW_MAX_RULES; i++) {
		struct flow_rule r = rule("drop proto udp");
		assert_true(flow_table_insert(&t, &r) >= 0);
	}
	struct flow_rule r = rule("drop");
	assert_int_equal(flow_table_insert(&t, &r), -ENOSPC);
	struct flow_set *set;
	assert_int_equal(flow_table_build(&t, 1, &set), 0);
	assert_int_equal(set->nb, FLOW_MAX_RULES);
	flow_set_free(set);
	flow_table_fini(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_of_a_udp_frame),
		cmocka_unit_test(test_key_at_every_truncation_reads_only_what_is_there),
		cmocka_unit_test(test_key_of_fragments_and_other_frames),
		cmocka_unit_test(test_each_match_field),
		cmocka_unit_test(test_key_of_ipv6_frames_at_every_truncation),
		cmocka_unit_test(test_ipv6_match_fields_and_families_apart),
		cmocka_unit_test(test_set_first_match_decides_and_counts_per_worker),
		cmocka_unit_test(test_table_holds_at_most_flow_max_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
