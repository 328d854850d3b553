/* The flow rule grammar (src/flow/flow_rule.c): every field and action parsed into the rule,
 * defaults, the text `flow show` prints read back into the same match, and each bad input
 * refused with a message that names the word at fault. Pure C, no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/flow/flow_rule.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define MAX_WORDS 32

/* Ports "port0" and "port1" exist. */
static int port_by_name(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "port0") == 0)
		return 0;
	return strcmp(name, "port1") == 0 ? 1 : -1;
}

static const struct flow_parse_env two_workers = {.port_by_name = port_by_name,
						  .nb_workers = 2};

/* Splits line at blanks (in place) and parses it; err gets the message. */
static int parse_line(const char *line, struct flow_rule *r, char *err, size_t cap)
{
	static char copy[512];
	char *words[MAX_WORDS];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok(copy, " "); w != NULL && n < MAX_WORDS; w = strtok(NULL, " "))
		words[n++] = w;
	return flow_rule_parse(n, words, &two_workers, r, err, cap);
}

static struct flow_rule parse_ok(const char *line)
{
	struct flow_rule r;
	char err[256] = "";
	if (parse_line(line, &r, err, sizeof(err)) != 0)
		fail_msg("'%s' refused: %s", line, err);
	return r;
}

static void test_drop_alone_matches_every_frame(void **state)
{
	(void)state;
	struct flow_rule r = parse_ok("drop");
	assert_int_equal(r.action, FLOW_ACT_DROP);
	assert_int_equal(r.prio, FLOW_PRIO_DEFAULT);
	assert_int_equal(r.m.dev, FLOW_ANY);
	assert_int_equal(r.m.ethertype, FLOW_ANY);
	assert_int_equal(r.m.proto, FLOW_ANY);
	assert_int_equal(r.m.src_len + r.m.dst_len, 0);
	assert_int_equal(r.m.sport_lo, 0);
	assert_int_equal(r.m.dport_hi, 65535);
	char buf[64];
	assert_string_equal(flow_match_format(&r.m, buf, sizeof(buf)), "any");
	assert_string_equal(flow_action_format(&r, buf, sizeof(buf)), "drop");
}

static void test_every_field_and_action_parsed(void **state)
{
	(void)state;
	struct flow_rule r = parse_ok("prio 7 steer 1 dev port1 proto tcp src 10.1.0.0/16 "
				      "dst 192.0.2.1 sport 1024-65535 dport 443");
	assert_int_equal(r.prio, 7);
	assert_int_equal(r.action, FLOW_ACT_STEER);
	assert_int_equal(r.worker, 1);
	assert_int_equal(r.m.dev, 1);
	assert_int_equal(r.m.ethertype, FLOW_ETHERTYPE_IPV4); /* implied by the IP matches */
	assert_int_equal(r.m.proto, 6);
	assert_int_equal(r.m.src, IP(10, 1, 0, 0));
	assert_int_equal(r.m.src_len, 16);
	assert_int_equal(r.m.dst, IP(192, 0, 2, 1));
	assert_int_equal(r.m.dst_len, 32);
	assert_int_equal(r.m.sport_lo, 1024);
	assert_int_equal(r.m.sport_hi, 65535);
	assert_int_equal(r.m.dport_lo, 443);
	assert_int_equal(r.m.dport_hi, 443);
	r = parse_ok("kernel ethertype arp");
	assert_int_equal(r.action, FLOW_ACT_KERNEL);
	assert_int_equal(r.m.ethertype, 0x0806);
	r = parse_ok("cluster web proto udp prio 3");
	assert_int_equal(r.action, FLOW_ACT_CLUSTER);
	assert_string_equal(r.cluster, "web");
	assert_int_equal(r.prio, 3);
	r = parse_ok("drop ethertype 0x88CC");
	assert_int_equal(r.m.ethertype, 0x88cc);
	r = parse_ok("drop ethertype 34525");
	assert_int_equal(r.m.ethertype, 0x86dd);
	r = parse_ok("drop ethertype ipv4 proto 47");
	assert_int_equal(r.m.proto, 47);
	r = parse_ok("drop src 2001:db8::/32 proto tcp");
	assert_int_equal(r.m.ethertype, 0x86dd);
	assert_int_equal(r.m.src_len, 32);
	assert_int_equal(r.m.src6.b[1], 0x01);
	assert_int_equal(r.m.src6.b[3], 0xb8);
	r = parse_ok("drop ethertype ipv6 proto udp");
	assert_int_equal(r.m.ethertype, 0x86dd);
	assert_int_equal(parse_ok("drop proto udp").m.ethertype, 0x0800);
}

static void test_match_text_reads_back_as_the_same_rule(void **state)
{
	(void)state;
	const char *lines[] = {
		"drop proto udp src 192.0.2.0/24 sport 1000-2000 dport 53",
		"steer 0 proto tcp dst 10.0.0.2/32 dport 80",
		"drop ethertype arp",
		"drop ethertype 0x88cc",
		"drop proto icmp",
		"drop proto 132",
		"steer 1 proto tcp src 2001:db8::/32 dport 443",
		"drop dst 2001:db8:2::2/128",
		"drop ethertype ipv6 proto icmpv6",
		"drop ethertype ipv6 proto udp dport 53",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct flow_rule r = parse_ok(lines[i]);
		char text[200], again_line[256];
		flow_match_format(&r.m, text, sizeof(text));
		snprintf(again_line, sizeof(again_line), "drop %s", text);
		struct flow_rule again = parse_ok(again_line);
		assert_memory_equal(&again.m, &r.m, sizeof(r.m));
		assert_string_equal(text, strchr(lines[i], ' ') + 1 +
						  (r.action == FLOW_ACT_STEER ? 2 : 0));
	}
}

static void test_bad_rules_refused_naming_the_word(void **state)
{
	(void)state;
	static const struct {
		const char *line, *word;
	} bad[] = {
		{"", "action"},
		{"permit", "'permit'"},
		{"steer", "'steer' needs a worker"},
		{"steer 2", "'2'"},                  /* two workers: 0 and 1 */
		{"steer -1", "'-1'"},
		{"cluster", "'cluster' needs a cluster name"},
		{"cluster abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz"},
		{"drop src 10.0.0.0/33", "10.0.0.0/33"},
		{"drop dst 10.0.0.1/8", "did you mean 10.0.0.0/8"},
		{"drop proto tcp dport 90-80", "did you mean 80-90"},
		{"drop dport 80", "sport and dport need proto tcp or udp"},
		{"drop proto icmp sport 1", "need proto tcp or udp"},
		{"drop ethertype 0x5ff", "0x5ff"},
		{"drop ethertype 0x12345", "0x12345"},
		{"drop ethertype 0x", "'0x'"},
		{"drop ethertype ip", "'ip'"},
		{"drop ethertype arp src 10.0.0.1", "ethertype ipv4"},
		{"drop dev port9", "port9"},
		{"drop port 80", "'port'"},
		{"drop src", "'src' needs a value"},
		{"drop proto tcp proto udp", "'proto' given twice"},
		{"prio 1 drop prio 2", "'prio' given twice"},
		{"prio 70000 drop", "70000"},
		{"prio x drop", "'x'"},
		{"drop src 2001:db8::/129", "2001:db8::/129"},
		{"drop dst 2001:db8::1/64", "did you mean 2001:db8::/64"},
		{"drop src 10.0.0.0/8 dst 2001:db8::1", "dst '2001:db8::1' is IPv6 but src is IPv4"},
		{"drop ethertype ipv4 src 2001:db8::1", "ethertype ipv6"},
		{"drop ethertype ipv6 src 10.0.0.1", "ethertype ipv4"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct flow_rule r;
		char err[256] = "";
		if (parse_line(bad[i].line, &r, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted", bad[i].line);
		if (strstr(err, bad[i].word) == NULL)
			fail_msg("'%s': message '%s' does not name '%s'", bad[i].line, err,
				 bad[i].word);
	}
}

static void test_format_never_overruns_a_small_buffer(void **state)
{
	(void)state;
	struct flow_rule r = parse_ok("drop proto udp src 192.0.2.0/24 dst 198.51.100.0/24 "
				      "sport 1000-2000 dport 3000-4000");
	char buf[16];
	memset(buf, 'x', sizeof(buf));
	flow_match_format(&r.m, buf, 10);
	assert_true(strlen(buf) < 10);
	assert_int_equal(buf[11], 'x');
}

static void test_order_lower_prio_then_older(void **state)
{
	(void)state;
	struct flow_rule a = {.id = 1, .prio = 10}, b = {.id = 2, .prio = 5},
			 c = {.id = 3, .prio = 5};
	assert_true(flow_rule_order(&a, &b) > 0);
	assert_true(flow_rule_order(&b, &c) < 0);
	assert_int_equal(flow_rule_order(&c, &c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drop_alone_matches_every_frame),
		cmocka_unit_test(test_every_field_and_action_parsed),
		cmocka_unit_test(test_match_text_reads_back_as_the_same_rule),
		cmocka_unit_test(test_bad_rules_refused_naming_the_word),
		cmocka_unit_test(test_format_never_overruns_a_small_buffer),
		cmocka_unit_test(test_order_lower_prio_then_older),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
