/* When the daemon gives its heap back (src/ctl/mem_trim.h): only after the connection count
 * fell MEM_TRIM_DROP below its peak, once per fall. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/ctl/mem_trim.h"

static void test_rising_and_small_falls_never_trim(void **state)
{
	struct mem_trim t = {0};
	for (uint64_t c = 0; c <= 5000; c += 100)
		assert_false(mem_trim_due(&t, c));
	assert_false(mem_trim_due(&t, 5000 - MEM_TRIM_DROP + 1));
	assert_int_equal(t.peak, 5000);
}

static void test_fall_of_a_storm_trims_once_then_waits_for_the_next(void **state)
{
	struct mem_trim t = {0};
	assert_false(mem_trim_due(&t, 8000));
	assert_true(mem_trim_due(&t, 8000 - MEM_TRIM_DROP));
	assert_false(mem_trim_due(&t, 8000 - MEM_TRIM_DROP)); /* the peak moved down */
	assert_true(mem_trim_due(&t, 0));
	assert_false(mem_trim_due(&t, 0));
	assert_false(mem_trim_due(&t, 3000)); /* the next storm */
	assert_true(mem_trim_due(&t, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rising_and_small_falls_never_trim),
		cmocka_unit_test(test_fall_of_a_storm_trims_once_then_waits_for_the_next),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
