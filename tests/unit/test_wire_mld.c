/* MLD queries (RFC 2710 §3, RFC 3810 §5.1): v1 and v2 by length, the Maximum Response Code's
 * floating-point form, every truncation, sources past the end, and the validation of
 * source, group and destination; reports and done messages as built. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "wire/bytes.h"
#include "wire/icmp6.h"
#include "wire/mld.h"

static struct ip6_addr a6(const char *s)
{
	struct ip6_addr a;
	assert_int_equal(ip6_addr_parse(s, &a), 0);
	return a;
}

static struct ip6_repr from(const char *src, const char *dst)
{
	struct ip6_repr ip = {.hop_limit = 1, .next_header = IP6_NH_ICMPV6, .src = a6(src),
			      .dst = a6(dst)};
	return ip;
}

/* A query about group with max response code mrc and nb_sources sources, len bytes. */
static size_t query(uint8_t *m, bool v2, const char *group, uint16_t mrc, uint16_t nb_sources)
{
	memset(m, 0, 64);
	m[0] = ICMP6_MLD_QUERY;
	wire_put_be16(m + 4, mrc);
	struct ip6_addr g = a6(group);
	memcpy(m + 8, g.b, 16);
	if (!v2)
		return MLD1_LEN;
	wire_put_be16(m + 26, nb_sources);
	return MLD2_QUERY_MIN_LEN + 16u * nb_sources;
}

static void test_query_versions_and_delay(void **state)
{
	uint8_t m[64];
	struct mld_query q;
	struct ip6_repr ip = from("fe80::1", "ff02::1");
	size_t len = query(m, false, "::", 10000, 0);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	assert_int_equal(q.version, 1);
	assert_int_equal(q.max_resp_ms, 10000);
	len = query(m, true, "::", 10000, 0);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	assert_int_equal(q.version, 2);
	assert_int_equal(q.max_resp_ms, 10000);
	/* §5.1.3: 0x8000 and above: (mant | 0x1000) << (exp + 3). */
	len = query(m, true, "::", 0x8000 | (2 << 12) | 0x10, 0);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	assert_int_equal(q.max_resp_ms, (0x10 | 0x1000) << 5);
	/* A group-specific query to the group. */
	ip = from("fe80::1", "ff02::1:ff00:2");
	len = query(m, true, "ff02::1:ff00:2", 1000, 1);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	assert_true(ip6_addr_equal(&q.group, &ip.dst));
}

static void test_query_truncations_and_bad_fields(void **state)
{
	uint8_t m[64];
	struct mld_query q;
	struct ip6_repr ip = from("fe80::1", "ff02::1");
	size_t len = query(m, true, "::", 1000, 2);
	for (size_t l = 0; l < MLD1_LEN; l++)
		assert_int_equal(mld_query_parse(m, l, &ip, &q), WIRE_TRUNCATED);
	for (size_t l = MLD1_LEN + 1; l < MLD2_QUERY_MIN_LEN; l++)
		assert_int_equal(mld_query_parse(m, l, &ip, &q), WIRE_TRUNCATED);
	/* Two sources announced, one present. */
	assert_int_equal(mld_query_parse(m, len - 16, &ip, &q), WIRE_TRUNCATED);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	/* §5.1.14: not from a link-local source. */
	ip = from("2001:db8::1", "ff02::1");
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_BAD_FIELD);
	/* A unicast group; a group-specific query to all-nodes is fine, to another group not. */
	ip = from("fe80::1", "ff02::1");
	len = query(m, true, "2001:db8::1", 1000, 0);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_BAD_FIELD);
	len = query(m, true, "ff02::1:ff00:2", 1000, 0);
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_OK);
	ip = from("fe80::1", "ff02::1:ff00:3");
	assert_int_equal(mld_query_parse(m, len, &ip, &q), WIRE_BAD_FIELD);
}

static void test_reports_built(void **state)
{
	uint8_t m[128];
	struct ip6_addr g[2] = {a6("ff02::1:ff00:2"), a6("ff02::1:ff00:3")};
	size_t len = mld2_build_report(m, sizeof(m), MLD2_CHANGE_TO_EXCLUDE, g, 2);
	assert_int_equal(len, ICMP6_HDR_LEN + 2 * MLD2_RECORD_LEN);
	assert_int_equal(m[0], ICMP6_MLD2_REPORT);
	assert_int_equal(wire_get_be16(m + 6), 2);
	assert_int_equal(m[8 + 20], MLD2_CHANGE_TO_EXCLUDE);
	assert_memory_equal(m + 8 + 20 + 4, g[1].b, 16);
	assert_int_equal(mld2_build_report(m, len - 1, MLD2_CHANGE_TO_EXCLUDE, g, 2), 0);
	assert_int_equal(mld1_build(m, sizeof(m), ICMP6_MLD_DONE, &g[0]), MLD1_LEN);
	assert_int_equal(m[0], ICMP6_MLD_DONE);
	assert_memory_equal(m + 8, g[0].b, 16);
	assert_int_equal(mld1_build(m, MLD1_LEN - 1, ICMP6_MLD_REPORT, &g[0]), 0);
	uint8_t hbh[MLD_HBH_LEN];
	mld_build_hbh(hbh);
	assert_int_equal(hbh[0], IP6_NH_ICMPV6);
	assert_int_equal(hbh[2], 5); /* Router Alert, RFC 2711 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_versions_and_delay),
		cmocka_unit_test(test_query_truncations_and_bad_fields),
		cmocka_unit_test(test_reports_built),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
