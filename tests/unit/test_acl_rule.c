/* The ACL rule grammar (src/acl/acl_rule.c): every field parsed into the rule, defaults,
 * the text `acl show` prints read back into the same rule, and each bad input refused with a
 * message that names the word at fault. Pure C, no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/acl/acl_rule.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define MAX_WORDS 32

/* Ports "port0" and "port1" exist. */
static int port_by_name(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "port0") == 0)
		return 0;
	if (strcmp(name, "port1") == 0)
		return 1;
	return -1;
}

/* Splits line at blanks (in place) and parses it; err gets the message. */
static int parse_line(const char *line, struct acl_rule *r, char *err, size_t cap)
{
	static char copy[512];
	char *words[MAX_WORDS];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok(copy, " "); w != NULL && n < MAX_WORDS; w = strtok(NULL, " "))
		words[n++] = w;
	return acl_rule_parse(n, words, port_by_name, NULL, r, err, cap);
}

static struct acl_rule parse_ok(const char *line)
{
	struct acl_rule r;
	char err[256] = "";
	int rc = parse_line(line, &r, err, sizeof(err));
	if (rc != 0)
		fail_msg("'%s' refused: %s", line, err);
	return r;
}

static void test_deny_alone_matches_everything_everywhere(void **state)
{
	(void)state;
	struct acl_rule r = parse_ok("deny");
	assert_true(r.deny);
	assert_int_equal(r.prio, ACL_PRIO_DEFAULT);
	assert_int_equal(r.proto, ACL_PROTO_ANY);
	assert_int_equal(r.src_len, 0);
	assert_int_equal(r.dst_len, 0);
	assert_int_equal(r.sport_lo, 0);
	assert_int_equal(r.sport_hi, 65535);
	assert_int_equal(r.dport_lo, 0);
	assert_int_equal(r.dport_hi, 65535);
	assert_int_equal(r.flags_mask, 0);
	assert_int_equal(r.dev, ACL_DEV_ANY);
	assert_int_equal(r.hooks, ACL_HOOK_ALL);
	char text[160];
	assert_string_equal(acl_rule_match_format(&r, text, sizeof(text)), "any");
}

static void test_every_field_parsed(void **state)
{
	(void)state;
	struct acl_rule r = parse_ok("prio 7 permit proto tcp src 10.1.0.0/16 dst 192.0.2.1 "
				     "sport 1024-65535 dport 443 flags syn/SYN,ACK dev port1 "
				     "hook forward");
	assert_false(r.deny);
	assert_int_equal(r.prio, 7);
	assert_int_equal(r.proto, 6);
	assert_int_equal(r.src, IP(10, 1, 0, 0));
	assert_int_equal(r.src_len, 16);
	assert_int_equal(r.dst, IP(192, 0, 2, 1));
	assert_int_equal(r.dst_len, 32);
	assert_int_equal(r.sport_lo, 1024);
	assert_int_equal(r.sport_hi, 65535);
	assert_int_equal(r.dport_lo, 443);
	assert_int_equal(r.dport_hi, 443);
	assert_int_equal(r.flags_set, 0x02);
	assert_int_equal(r.flags_mask, 0x12);
	assert_int_equal(r.dev, 1);
	assert_int_equal(r.hooks, ACL_HOOK_FORWARD);
}

static void test_protocols_by_name_and_number(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("deny proto udp").proto, 17);
	assert_int_equal(parse_ok("deny proto icmp").proto, 1);
	assert_int_equal(parse_ok("deny proto 47").proto, 47);
	assert_int_equal(parse_ok("deny proto 0").proto, 0);
	assert_int_equal(parse_ok("deny hook input,forward").hooks, ACL_HOOK_ALL);
	assert_int_equal(parse_ok("prio 0 deny").prio, 0);
	assert_int_equal(parse_ok("prio 65535 deny").prio, 65535);
	assert_int_equal(parse_ok("deny proto tcp prio 12").prio, 12);
}

/* IPv6 prefixes make an IPv6 rule; no address makes a rule of both families (as a rule of
 * an nftables inet table); family alone picks one. */
static void test_families_from_prefixes_or_family_word(void **state)
{
	(void)state;
	struct acl_rule r = parse_ok("deny proto tcp src 2001:db8::/32 dst 2001:db8:0:1::1 dport 22");
	assert_int_equal(r.family, ACL_FAMILY_IP6);
	struct ip6_addr want;
	assert_int_equal(ip6_addr_parse("2001:db8::", &want), 0);
	assert_memory_equal(r.src6.b, want.b, 16);
	assert_int_equal(r.src_len, 32);
	assert_int_equal(ip6_addr_parse("2001:db8:0:1::1", &want), 0);
	assert_memory_equal(r.dst6.b, want.b, 16);
	assert_int_equal(r.dst_len, 128);
	assert_int_equal(parse_ok("deny src ::/0").family, ACL_FAMILY_IP6);
	assert_int_equal(parse_ok("deny src ::/0").src_len, 0);
	assert_int_equal(parse_ok("deny src 10.0.0.0/8").family, ACL_FAMILY_IP4);
	assert_int_equal(parse_ok("deny proto tcp dport 22").family, ACL_FAMILY_ANY);
	assert_int_equal(parse_ok("deny family ipv6").family, ACL_FAMILY_IP6);
	assert_int_equal(parse_ok("deny family ipv4 dst 10.0.0.1").family, ACL_FAMILY_IP4);
	assert_int_equal(parse_ok("deny proto icmpv6").proto, 58);
}

static void assert_rules_equal(const struct acl_rule *a, const struct acl_rule *b)
{
	assert_int_equal(a->prio, b->prio);
	assert_int_equal(a->deny, b->deny);
	assert_int_equal(a->proto, b->proto);
	assert_int_equal(a->src, b->src);
	assert_int_equal(a->src_len, b->src_len);
	assert_int_equal(a->dst, b->dst);
	assert_int_equal(a->dst_len, b->dst_len);
	assert_int_equal(a->family, b->family);
	assert_memory_equal(a->src6.b, b->src6.b, 16);
	assert_memory_equal(a->dst6.b, b->dst6.b, 16);
	assert_int_equal(a->sport_lo, b->sport_lo);
	assert_int_equal(a->sport_hi, b->sport_hi);
	assert_int_equal(a->dport_lo, b->dport_lo);
	assert_int_equal(a->dport_hi, b->dport_hi);
	assert_int_equal(a->flags_set, b->flags_set);
	assert_int_equal(a->flags_mask, b->flags_mask);
	assert_int_equal(a->dev, b->dev);
	assert_int_equal(a->hooks, b->hooks);
}

/* What acl show prints reads back as the same match. */
static void test_match_text_reads_back_as_the_same_rule(void **state)
{
	(void)state;
	static const char *const lines[] = {
		"deny proto tcp src 10.0.0.0/8 dport 80",
		"deny proto udp dst 192.0.2.0/24 sport 53 dport 1000-2000",
		"deny proto tcp flags SYN",
		"deny proto tcp flags SYN/SYN,ACK",
		"deny proto tcp flags FIN,SYN,RST,PSH,ACK,URG,ECE,CWR",
		"deny proto 132",
		"deny src 0.0.0.0/1",
		"deny proto tcp src 2001:db8::/32 dport 22",
		"deny proto icmpv6 dst 2001:db8:1::7/128",
		"deny src ::/1 dst fe80::/10",
		"deny family ipv6 proto udp dport 53",
		"deny family ipv4",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct acl_rule a = parse_ok(lines[i]);
		char text[160], again[200];
		acl_rule_match_format(&a, text, sizeof(text));
		assert_string_equal(text, lines[i] + strlen("deny "));
		snprintf(again, sizeof(again), "deny %s", text);
		struct acl_rule b = parse_ok(again);
		assert_rules_equal(&a, &b);
	}
}

static void test_format_never_overruns_a_small_buffer(void **state)
{
	(void)state;
	struct acl_rule r = parse_ok("deny proto tcp src 10.0.0.0/8 dst 10.0.0.0/8 sport 1-2 "
				     "dport 3-4 flags SYN,ACK/SYN,ACK,FIN");
	char small[12];
	memset(small, 'x', sizeof(small));
	acl_rule_match_format(&r, small, 10);
	assert_true(strlen(small) < 10);
	assert_int_equal(small[11], 'x');
	char hooks[4];
	acl_hooks_format(ACL_HOOK_ALL, hooks, sizeof(hooks));
	assert_true(strlen(hooks) < sizeof(hooks));
}

struct bad_rule {
	const char *line;
	const char *word;      /* must appear in the message */
};

static void test_bad_rules_refused_naming_the_word(void **state)
{
	(void)state;
	static const struct bad_rule bad[] = {
		{"", "permit or deny"},
		{"prio 5", "permit or deny"},
		{"drop", "'drop'"},
		{"prio x deny", "'x'"},
		{"prio 65536 deny", "'65536'"},
		{"prio -1 deny", "'-1'"},
		{"prio 5 deny prio 6", "'prio' given twice"},
		{"deny prio 5 prio 6", "'prio' given twice"},
		{"deny src 10.0.0.0/33", "'10.0.0.0/33'"},
		{"deny src 10.0.0/8", "'10.0.0/8'"},
		{"deny dst 010.0.0.1", "'010.0.0.1'"},
		{"deny src 10.0.0.1/8", "did you mean 10.0.0.0/8"},
		{"deny proto tcp dport 90-80", "'90-80' is reversed (did you mean 80-90?)"},
		{"deny proto tcp dport 65536", "'65536'"},
		{"deny proto tcp sport 1-", "'1-'"},
		{"deny proto tcp sport -5", "'-5'"},
		{"deny proto tcp sport 123456789", "'123456789'"},
		{"deny proto tcp dport 0x50", "'0x50'"},
		{"deny port 80", "'port'"},
		{"deny proto", "'proto' needs a value"},
		{"deny proto tcp proto udp", "'proto' given twice"},
		{"deny proto tcpp", "'tcpp'"},
		{"deny proto 256", "'256'"},
		{"deny dport 80", "sport and dport need proto tcp or udp"},
		{"deny proto icmp sport 80", "sport and dport need proto tcp or udp"},
		{"deny proto udp flags SYN", "flags need proto tcp"},
		{"deny proto tcp flags SYN,FOO", "'SYN,FOO'"},
		{"deny proto tcp flags SYN,", "'SYN,'"},
		{"deny proto tcp flags SYN,ACK/SYN", "every flag of SET must be in MASK"},
		{"deny proto tcp flags /SYN", "'/SYN'"},
		{"deny dev port9", "'port9'"},
		{"deny hook output", "'output'"},
		{"deny hook input,", "'input,'"},
		{"deny src 2001:db8::/129", "'2001:db8::/129' is not an IPv6"},
		{"deny src 2001:db8:::1", "'2001:db8:::1'"},
		{"deny dst 2001:db8::1/32", "did you mean 2001:db8::/32"},
		{"deny src 10.0.0.0/8 dst 2001:db8::/32", "dst '2001:db8::/32' is IPv6 but src"},
		{"deny dst ::/0 src 10.0.0.1", "src '10.0.0.1' is IPv4 but dst"},
		{"deny family ipv4 src 2001:db8::/32", "is IPv6 but family made the rule IPv4"},
		{"deny src 2001:db8::/32 family ipv4", "family 'ipv4' is IPv4 but src"},
		{"deny family ip6", "'ip6'"},
		{"deny family ipv6 family ipv6", "'family' given twice"},
		{"deny proto icmp6", "'icmp6'"},
		{"deny src 10.0.0.0/8x", "'10.0.0.0/8x' is not an IPv4 or IPv6"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct acl_rule r;
		char err[256] = "";
		if (parse_line(bad[i].line, &r, err, sizeof(err)) == 0)
			fail_msg("'%s' accepted", bad[i].line);
		if (strstr(err, bad[i].word) == NULL)
			fail_msg("'%s': message '%s' does not name %s", bad[i].line, err,
				 bad[i].word);
	}
}

static void test_long_message_cut_to_the_buffer(void **state)
{
	(void)state;
	struct acl_rule r;
	char err[16];
	memset(err, 'x', sizeof(err));
	assert_int_equal(parse_line("deny proto tcp flags NOTAFLAGATALL", &r, err, 8), -1);
	assert_true(strlen(err) == 7);
	assert_int_equal(err[9], 'x');
}

static void test_order_lower_prio_then_older(void **state)
{
	(void)state;
	struct acl_rule a = {.id = 1, .prio = 10}, b = {.id = 2, .prio = 5}, c = {.id = 3, .prio = 5};
	assert_true(acl_rule_order(&b, &a) < 0);
	assert_true(acl_rule_order(&a, &b) > 0);
	assert_true(acl_rule_order(&b, &c) < 0);
	assert_true(acl_rule_order(&c, &b) > 0);
	assert_int_equal(acl_rule_order(&c, &c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deny_alone_matches_everything_everywhere),
		cmocka_unit_test(test_every_field_parsed),
		cmocka_unit_test(test_protocols_by_name_and_number),
		cmocka_unit_test(test_families_from_prefixes_or_family_word),
		cmocka_unit_test(test_match_text_reads_back_as_the_same_rule),
		cmocka_unit_test(test_format_never_overruns_a_small_buffer),
		cmocka_unit_test(test_bad_rules_refused_naming_the_word),
		cmocka_unit_test(test_long_message_cut_to_the_buffer),
		cmocka_unit_test(test_order_lower_prio_then_older),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
