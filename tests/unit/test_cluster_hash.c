/* The cluster hashes (src/cluster/cluster_hash.c) against values of the documented formulas
 * computed independently (tests/integ/test_cluster.py's frame_hash, in Python), symmetry,
 * VLAN tags, truncated frames and what has no fields to hash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cluster/cluster_hash.h"

/* UDP 10.0.0.1:1234 -> 10.0.0.2:80, MACs 02:00:00:00:00:01 -> :02. */
static const uint8_t udp_frame[] = {
	0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
	0x45, 0x00, 0x00, 0x34, 0x00, 0x07, 0x00, 0x00, 0x40, 0x11, 0x66, 0xb0,
	0x0a, 0x00, 0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
	0x04, 0xd2, 0x00, 0x50, 0x00, 0x00, 0x00, 0x00};

/* The same flow the other way: addresses, ports and MACs swapped. */
static void reverse(const uint8_t *in, uint8_t *out, size_t len)
{
	memcpy(out, in, len);
	memcpy(out, in + 6, 6);
	memcpy(out + 6, in, 6);
	memcpy(out + 26, in + 30, 4);
	memcpy(out + 30, in + 26, 4);
	memcpy(out + 34, in + 36, 2);
	memcpy(out + 36, in + 34, 2);
}

static void hash_udp_frame_matches_documented_formula(void **state)
{
	size_t n = sizeof(udp_frame);
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_IP, udp_frame, n), 0x798d2101u);
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_5TUPLE, udp_frame, n), 0x84deae3bu);
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_MAC, udp_frame, n), 0x7243103eu);
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_PROTO, udp_frame, n), 17);
}

static void hash_both_directions_equal(void **state)
{
	uint8_t r[sizeof(udp_frame)];
	reverse(udp_frame, r, sizeof(r));
	for (int k = 0; k < CLUSTER_HASH_COUNT; k++)
		assert_int_equal(cluster_hash_frame(k, udp_frame, sizeof(r)),
				 cluster_hash_frame(k, r, sizeof(r)));
}

static void hash_skips_vlan_tags(void **state)
{
	uint8_t t[sizeof(udp_frame) + 8];
	memcpy(t, udp_frame, 12);
	const uint8_t tags[] = {0x88, 0xa8, 0x00, 0x05, 0x81, 0x00, 0x00, 0x07};
	memcpy(t + 12, tags, sizeof(tags));
	memcpy(t + 20, udp_frame + 12, sizeof(udp_frame) - 12);
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_5TUPLE, t, sizeof(t)), 0x84deae3bu);
}

static void hash_fragment_ignores_ports(void **state)
{
	uint8_t f[sizeof(udp_frame)], g[sizeof(udp_frame)];
	memcpy(f, udp_frame, sizeof(f));
	f[20] = 0x20; /* MF */
	memcpy(g, f, sizeof(g));
	g[34] = 0x99; /* another source port: a fragment's ports are not used */
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_5TUPLE, f, sizeof(f)),
			 cluster_hash_frame(CLUSTER_HASH_5TUPLE, g, sizeof(g)));
}

static void hash_truncated_or_not_ip_is_zero(void **state)
{
	for (size_t len = 0; len < 34; len++)
		assert_int_equal(cluster_hash_frame(CLUSTER_HASH_IP, udp_frame, len), 0);
	uint8_t arp[sizeof(udp_frame)];
	memcpy(arp, udp_frame, sizeof(arp));
	arp[12] = 0x08;
	arp[13] = 0x06;
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_5TUPLE, arp, sizeof(arp)), 0);
	assert_int_not_equal(cluster_hash_frame(CLUSTER_HASH_MAC, arp, sizeof(arp)), 0);
	/* Ports cut off: the addresses and protocol still count. */
	assert_int_equal(cluster_hash_frame(CLUSTER_HASH_IP, udp_frame, 36), 0x798d2101u);
}

static void hash_names_round_trip(void **state)
{
	for (int k = 0; k < CLUSTER_HASH_COUNT; k++)
		assert_int_equal(cluster_hash_parse(cluster_hash_name(k)), k);
	assert_int_equal(cluster_hash_parse("crc"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(hash_udp_frame_matches_documented_formula),
		cmocka_unit_test(hash_both_directions_equal),
		cmocka_unit_test(hash_skips_vlan_tags),
		cmocka_unit_test(hash_fragment_ignores_ports),
		cmocka_unit_test(hash_truncated_or_not_ip_is_zero),
		cmocka_unit_test(hash_names_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
