/* Printable names of parse outcomes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "status.h"

static void test_status_str_every_value_nonempty(void **state)
{
	int s;

	(void)state;
	for (s = 0; s < WIRE_STATUS_COUNT; s++) {
		const char *text = wire_status_str((enum wire_status)s);

		assert_non_null(text);
		assert_true(strlen(text) > 0);
		assert_string_not_equal(text, "unknown status");
	}
}

static void test_status_str_values_distinct(void **state)
{
	int a, b;

	(void)state;
	for (a = 0; a < WIRE_STATUS_COUNT; a++)
		for (b = a + 1; b < WIRE_STATUS_COUNT; b++)
			assert_string_not_equal(wire_status_str((enum wire_status)a),
						wire_status_str((enum wire_status)b));
}

static void test_status_str_ok_is_ok(void **state)
{
	(void)state;
	assert_int_equal(WIRE_OK, 0);
	assert_string_equal(wire_status_str(WIRE_OK), "ok");
	assert_string_equal(wire_status_str(WIRE_BAD_CHECKSUM), "checksum mismatch");
}

static void test_status_str_out_of_range_not_null(void **state)
{
	(void)state;
	assert_string_equal(wire_status_str(WIRE_STATUS_COUNT), "unknown status");
	assert_string_equal(wire_status_str((enum wire_status)1000), "unknown status");
	assert_string_equal(wire_status_str((enum wire_status)-1), "unknown status");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_str_every_value_nonempty),
		cmocka_unit_test(test_status_str_values_distinct),
		cmocka_unit_test(test_status_str_ok_is_ok),
		cmocka_unit_test(test_status_str_out_of_range_not_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
