/* Which word of a command line no command continues with (src/ctl/cmd_words.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/ctl/cmd_words.h"

static const char *const table[] = {
	"help", "link show", "ip addr add", "ip addr show", "ip addr", "ip route add",
	"ip route add blackhole", "ip forwarding", "stats",
};
#define N (sizeof(table) / sizeof(table[0]))

static void blame(char *msg, size_t len, int argc, char **argv)
{
	cmd_words_blame(table, N, argc, argv, msg, len);
}

static void test_match_counts_words_of_a_full_match(void **state)
{
	char *argv[] = {"ip", "route", "add", "10.0.0.0/8"};
	assert_int_equal(cmd_words_match("ip route add", 4, argv), 3);
	assert_int_equal(cmd_words_match("ip route", 4, argv), 2);
	assert_int_equal(cmd_words_match("ip route add blackhole", 4, argv), 0);
	assert_int_equal(cmd_words_match("ip addr", 4, argv), 0);
}

static void test_match_needs_whole_words(void **state)
{
	char *argv[] = {"ip", "rout"};
	assert_int_equal(cmd_words_match("ip route", 2, argv), 0);
	char *argv2[] = {"ipx"};
	assert_int_equal(cmd_words_match("ip", 1, argv2), 0);
}

static void test_unknown_first_word_lists_commands(void **state)
{
	char *argv[] = {"frobnicate", "now"};
	char msg[256];
	blame(msg, sizeof(msg), 2, argv);
	assert_string_equal(msg, "unknown command 'frobnicate' (valid: help, link, ip, stats)");
}

static void test_unknown_second_word_blames_it(void **state)
{
	char *argv[] = {"ip", "stats"};
	char msg[256];
	blame(msg, sizeof(msg), 2, argv);
	assert_string_equal(msg, "unknown ip subcommand 'stats' (valid: addr, route, forwarding)");
}

static void test_unknown_third_word_names_the_path(void **state)
{
	char *argv[] = {"ip", "addr", "flush", "dev", "port0"};
	char msg[256];
	blame(msg, sizeof(msg), 5, argv);
	assert_string_equal(msg, "unknown ip addr subcommand 'flush' (valid: add, show)");
}

static void test_bare_prefix_needs_a_subcommand(void **state)
{
	char *argv[] = {"ip"};
	char msg[256];
	blame(msg, sizeof(msg), 1, argv);
	assert_string_equal(msg, "'ip' needs a subcommand (valid: addr, route, forwarding)");
}

static void test_message_truncated_not_overrun(void **state)
{
	char *argv[] = {"ip", "stats"};
	char msg[16];
	memset(msg, 'x', sizeof(msg));
	blame(msg, 12, 2, argv);
	assert_int_equal(strlen(msg), 11);
	assert_int_equal(msg[12], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_counts_words_of_a_full_match),
		cmocka_unit_test(test_match_needs_whole_words),
		cmocka_unit_test(test_unknown_first_word_lists_commands),
		cmocka_unit_test(test_unknown_second_word_blames_it),
		cmocka_unit_test(test_unknown_third_word_names_the_path),
		cmocka_unit_test(test_bare_prefix_needs_a_subcommand),
		cmocka_unit_test(test_message_truncated_not_overrun),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
