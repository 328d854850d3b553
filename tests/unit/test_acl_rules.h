/* What the ACL set tests (test_acl_set.c, test_acl_set6.c) share: rules written as the
 * operator writes them, parsed by the real grammar, on ports "port0" to "port9"; and a
 * per-test setup and teardown that check every mbuf of test_pool() came back. Include after
 * cmocka.h. */
#ifndef DPS_TEST_ACL_RULES_H
#define DPS_TEST_ACL_RULES_H

#include <stdio.h>
#include <string.h>

#include "../../src/acl/acl_rule.h"
#include "test_eal.h"

static unsigned pool_baseline;

static int setup(void **state)
{
	(void)state;
	pool_baseline = test_pool_in_use();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	assert_int_equal(test_pool_in_use(), pool_baseline);
	return 0;
}

static inline int port_by_name(void *ctx, const char *name)
{
	(void)ctx;
	return strncmp(name, "port", 4) == 0 && name[4] >= '0' && name[4] <= '9' &&
			       name[5] == '\0' ? name[4] - '0' : -1;
}

/* The rule of `acl add LINE`, with id; the test fails when the grammar refuses it. */
static inline struct acl_rule rule_of(const char *line, uint32_t id)
{
	char copy[256], err[200];
	char *words[32];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", line);
	for (char *w = strtok(copy, " "); w != NULL && n < 32; w = strtok(NULL, " "))
		words[n++] = w;
	struct acl_rule r;
	if (acl_rule_parse(n, words, port_by_name, NULL, &r, err, sizeof(err)) != 0)
		fail_msg("'%s': %s", line, err);
	r.id = id;
	return r;
}

#endif
