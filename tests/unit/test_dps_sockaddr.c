/* The library's socket addresses (lib/dpstack/dps_sockaddr.c): sockaddr_in and sockaddr_in6
 * to and from the channel's form (IPv4 mapped), with Linux's length, family and scope
 * checks, and an AF_INET6 socket showing IPv4 peers as ::ffff:a.b.c.d (RFC 3493 §3.7). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../lib/dpstack/dps_sockaddr.h"

static struct sockaddr_in6 sin6_of(const char *text, uint16_t port, uint32_t scope)
{
	struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port),
				 .sin6_scope_id = scope};
	assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
	return a;
}

static void test_dps_sockaddr_ipv4_in_is_mapped_and_shown_by_family(void **state)
{
	(void)state;
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(80),
				  .sin_addr.s_addr = htonl(0x0a000002)};
	struct dps_ep ep;
	assert_int_equal(dps_ep_in(AF_INET, (struct sockaddr *)&sin, sizeof(sin), &ep), 0);
	assert_true(inet_addr_is_v4(&ep.addr));
	assert_int_equal(inet_addr_to_v4(&ep.addr), 0x0a000002);
	assert_int_equal(ep.port, htons(80));
	struct sockaddr_storage k;
	assert_int_equal(dps_ep_out(AF_INET, &ep, &k), sizeof(struct sockaddr_in));
	assert_memory_equal(&k, &sin, sizeof(sin));
	/* The same peer seen by an AF_INET6 socket: ::ffff:10.0.0.2. */
	assert_int_equal(dps_ep_out(AF_INET6, &ep, &k), sizeof(struct sockaddr_in6));
	struct sockaddr_in6 want = sin6_of("::ffff:10.0.0.2", 80, 0);
	assert_memory_equal(&k, &want, sizeof(want));
}

static void test_dps_sockaddr_ipv6_round_trip_keeps_scope_of_link_local_only(void **state)
{
	(void)state;
	struct dps_ep ep;
	struct sockaddr_storage k;
	struct sockaddr_in6 ll = sin6_of("fe80::1", 22, 3);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&ll, sizeof(ll), &ep), 0);
	assert_int_equal(ep.scope, 3);
	dps_ep_out(AF_INET6, &ep, &k);
	assert_memory_equal(&k, &ll, sizeof(ll));
	/* A global address's scope id means nothing: not kept, not shown. */
	struct sockaddr_in6 g = sin6_of("2001:db8::2", 22, 3);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&g, sizeof(g), &ep), 0);
	assert_int_equal(ep.scope, 0);
	dps_ep_out(AF_INET6, &ep, &k);
	assert_int_equal(((struct sockaddr_in6 *)&k)->sin6_scope_id, 0);
}

static void test_dps_sockaddr_link_local_without_scope_is_einval(void **state)
{
	(void)state;
	struct dps_ep ep;
	struct sockaddr_in6 ll = sin6_of("fe80::1", 22, 0);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&ll, sizeof(ll), &ep), -EINVAL);
}

static void test_dps_sockaddr_lengths_and_families_as_linux(void **state)
{
	(void)state;
	struct dps_ep ep;
	struct sockaddr_in6 a = sin6_of("2001:db8::2", 80, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET};
	/* RFC 2133's sockaddr_in6, without sin6_scope_id (24 bytes), is taken; shorter not. */
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&a, 24, &ep), 0);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&a, 23, &ep), -EINVAL);
	assert_int_equal(dps_ep_in(AF_INET, (struct sockaddr *)&sin, sizeof(sin) - 1, &ep),
			 -EINVAL);
	assert_int_equal(dps_ep_in(AF_INET, (struct sockaddr *)&a, sizeof(a), &ep), -EAFNOSUPPORT);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&sin, sizeof(sin), &ep),
			 -EAFNOSUPPORT);
	assert_int_equal(dps_ep_in(AF_INET6, (struct sockaddr *)&a, 1, &ep), -EINVAL);
}

static void test_dps_sockaddr_unbound_names_are_the_family_wildcards(void **state)
{
	(void)state;
	struct sockaddr_storage k;
	struct dps_ep any4 = dps_ep_any(AF_INET), any6 = dps_ep_any(AF_INET6);
	assert_true(inet_addr_is_v4(&any4.addr) && inet_addr_is_any(&any4.addr));
	assert_false(inet_addr_is_v4(&any6.addr));
	dps_ep_out(AF_INET6, &any6, &k);
	struct sockaddr_in6 want = sin6_of("::", 0, 0);
	assert_memory_equal(&k, &want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dps_sockaddr_ipv4_in_is_mapped_and_shown_by_family),
		cmocka_unit_test(test_dps_sockaddr_ipv6_round_trip_keeps_scope_of_link_local_only),
		cmocka_unit_test(test_dps_sockaddr_link_local_without_scope_is_einval),
		cmocka_unit_test(test_dps_sockaddr_lengths_and_families_as_linux),
		cmocka_unit_test(test_dps_sockaddr_unbound_names_are_the_family_wildcards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
