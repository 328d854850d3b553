/* ICMPv6 (RFC 4443) and Neighbor Discovery validation (RFC 4861). The golden packets are the
 * Linux kernel's, captured with tcpdump on a veth between 2001:db8::2 (02:fc:00:00:00:01)
 * and 2001:db8::1 (02:fc:00:00:00:05): `ping -6`, the neighbour solicitation before it and
 * its answer, a router solicitation. Router advertisements (no radvd here) are built by the
 * tests from RFC 4861 §4.2. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bytes.h"
#include "checksum.h"
#include "icmp6.h"
#include "test_wire_hex.h"

static const char echo_request_hex[] =
	"60099d8000403a4020010db800000000000000000000000220010db8000000000000000000000001"
	"8000908041d00001a629086b00000000d7560d0000000000101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f3031323334353637";
static const char neighbor_solicit_hex[] =
	"6000000000203aff20010db8000000000000000000000002ff0200000000000000000001ff000001"
	"87001b2c0000000020010db8000000000000000000000001010102fc00000001";
static const char neighbor_advert_hex[] =
	"6000000000203aff20010db800000000000000000000000120010db8000000000000000000000002"
	"880089736000000020010db8000000000000000000000001020102fc00000005";
static const char router_solicit_hex[] =
	"6000000000103afffe8000000000000000fc00fffe000005ff020000000000000000000000000002"
	"8500792c00000000010102fc00000005";

/* A golden datagram, its parsed header and where its ICMPv6 message is. */
struct datagram {
	uint8_t bytes[256];
	size_t len;
	struct ip6_repr ip;
	uint8_t *msg;
	size_t msg_len;
};

static void load(struct datagram *d, const char *hex)
{
	d->len = hex_decode(hex, d->bytes, sizeof(d->bytes));
	assert_int_equal(ip6_parse(d->bytes, d->len, &d->ip), WIRE_OK);
	d->msg = d->bytes + IP6_HDR_LEN;
	d->msg_len = d->len - IP6_HDR_LEN;
}

static uint32_t pseudo(const struct datagram *d)
{
	return wire_csum_pseudo6(d->ip.src.b, d->ip.dst.b, IP6_NH_ICMPV6, (uint32_t)d->msg_len);
}

/* Stores the message's checksum after a test changed it. */
static void checksum(struct datagram *d)
{
	wire_put_be16(d->msg + ICMP6_OFF_CSUM, 0);
	wire_put_be16(d->msg + ICMP6_OFF_CSUM,
		      wire_csum_finish(wire_csum_add(pseudo(d), d->msg, d->msg_len)));
}

static enum wire_status nd_exact(const struct datagram *d, size_t len, struct nd_repr *out)
{
	uint8_t *copy = malloc(len ? len : 1);
	memcpy(copy, d->msg, len);
	enum wire_status st = nd_parse(copy, len, &d->ip, out);
	free(copy);
	return st;
}

static void test_echo_checksum(void **state)
{
	struct datagram d;
	load(&d, echo_request_hex);
	struct icmp6_repr r;
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_OK);
	assert_int_equal(r.type, ICMP6_ECHO_REQUEST);
	assert_int_equal(r.code, 0);
	assert_int_equal(r.rest, 0x41d00001);
	assert_int_equal(r.payload_len, 56);
	/* Every byte is covered, the pseudo-header's addresses too. */
	d.msg[20] ^= 1;
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_BAD_CHECKSUM);
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), false, &r), WIRE_OK);
	d.msg[20] ^= 1;
	d.ip.src.b[15] ^= 1;
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_BAD_CHECKSUM);
	for (size_t n = 0; n < ICMP6_HDR_LEN; n++)
		assert_int_equal(icmp6_parse(d.msg, n, 0, false, &r), WIRE_TRUNCATED);
}

static void test_build_header(void **state)
{
	struct icmp6_repr r = {.type = ICMP6_PACKET_TOO_BIG, .code = 0, .rest = 1280};
	uint8_t buf[8], again[8];
	assert_int_equal(icmp6_build_header(buf, 7, &r), 0);
	assert_int_equal(icmp6_build_header(buf, sizeof(buf), &r), ICMP6_HDR_LEN);
	memcpy(again, buf, sizeof(buf));
	struct icmp6_repr out;
	assert_int_equal(icmp6_parse(again, sizeof(again), 0, false, &out), WIRE_OK);
	assert_int_equal(out.type, ICMP6_PACKET_TOO_BIG);
	assert_int_equal(out.rest, 1280);
	assert_true(icmp6_type_is_error(ICMP6_PARAM_PROBLEM));
	assert_false(icmp6_type_is_error(ICMP6_ECHO_REQUEST));
}

static void test_golden_neighbor_discovery(void **state)
{
	struct datagram d;
	struct nd_repr nd;
	struct icmp6_repr r;
	static const struct eth_addr mac1 = {{0x02, 0xfc, 0, 0, 0, 0x01}};
	static const struct eth_addr mac5 = {{0x02, 0xfc, 0, 0, 0, 0x05}};
	struct ip6_addr target = ip6_addr_of("2001:db8::1");

	load(&d, neighbor_solicit_hex);
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_OK);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.type, ICMP6_NEIGHBOR_SOLICIT);
	assert_true(ip6_addr_equal(&nd.target, &target));
	assert_true(nd.has_source_lladdr);
	assert_memory_equal(nd.source_lladdr.b, mac1.b, 6);
	assert_false(nd.has_target_lladdr);

	load(&d, neighbor_advert_hex);
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_OK);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.type, ICMP6_NEIGHBOR_ADVERT);
	assert_true(nd.solicited);
	assert_true(nd.override);
	assert_false(nd.router);
	assert_true(ip6_addr_equal(&nd.target, &target));
	assert_true(nd.has_target_lladdr);
	assert_memory_equal(nd.target_lladdr.b, mac5.b, 6);

	load(&d, router_solicit_hex);
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_OK);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.type, ICMP6_ROUTER_SOLICIT);
	assert_memory_equal(nd.source_lladdr.b, mac5.b, 6);

	/* Not a Neighbor Discovery message. */
	load(&d, echo_request_hex);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_TRUNCATED);
}

static void test_nd_rejects(void **state)
{
	struct datagram d;
	struct nd_repr nd;

	load(&d, neighbor_solicit_hex);
	for (size_t n = 1; n < 24; n++)
		assert_int_equal(nd_exact(&d, n, &nd), WIRE_TRUNCATED);
	/* §7.1.1: a hop limit below 255 crossed a router; a code other than 0. */
	d.ip.hop_limit = 254;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	load(&d, neighbor_solicit_hex);
	d.msg[ICMP6_OFF_CODE] = 1;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	/* An option of length zero, one past the end. */
	load(&d, neighbor_solicit_hex);
	d.msg[25] = 0;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_OPTION);
	d.msg[25] = 2;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_OPTION);
	assert_int_equal(nd_exact(&d, d.msg_len - 1, &nd), WIRE_BAD_OPTION);
	/* A multicast target. */
	load(&d, neighbor_solicit_hex);
	d.msg[8] = 0xff;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	/* Duplicate address detection: from :: only to the target's solicited-node group and
	 * without a source link-layer address. */
	load(&d, neighbor_solicit_hex);
	memset(d.ip.src.b, 0, 16);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	assert_int_equal(nd_exact(&d, 24, &nd), WIRE_OK);
	d.ip.dst = ip6_addr_of("ff02::1");
	assert_int_equal(nd_exact(&d, 24, &nd), WIRE_BAD_FIELD);
	/* An advertisement to a group must not say "solicited". */
	load(&d, neighbor_advert_hex);
	d.ip.dst = ip6_addr_of("ff02::1");
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	d.msg[4] &= (uint8_t)~0x40;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	/* A router solicitation from :: carries no link-layer address. */
	load(&d, router_solicit_hex);
	memset(d.ip.src.b, 0, 16);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	assert_int_equal(nd_exact(&d, 8, &nd), WIRE_OK);
}

/* A Router Advertisement from fe80::1 with an MTU option, a source link-layer address and
 * nb_prefixes Prefix Information options (2001:db8:N::/64). */
static void router_advert(struct datagram *d, unsigned nb_prefixes)
{
	memset(d, 0, sizeof(*d));
	uint8_t *m = d->bytes + IP6_HDR_LEN;
	m[0] = ICMP6_ROUTER_ADVERT;
	m[4] = 64;                        /* cur hop limit */
	m[5] = 0x40;                      /* O: other configuration */
	wire_put_be16(m + 6, 1800);       /* router lifetime */
	wire_put_be32(m + 8, 30000);      /* reachable time */
	wire_put_be32(m + 12, 1000);      /* retrans timer */
	size_t n = 16;
	uint8_t mtu[8] = {ND_OPT_MTU, 1, 0, 0};
	wire_put_be32(mtu + 4, 1400);
	memcpy(m + n, mtu, 8);
	n += 8;
	static const struct eth_addr mac = {{0x02, 0xfc, 0, 0, 0, 0x09}};
	n += nd_build_lladdr_opt(m + n, 8, ND_OPT_SOURCE_LLADDR, &mac);
	for (unsigned i = 0; i < nb_prefixes; i++) {
		uint8_t *o = m + n;
		o[0] = ND_OPT_PREFIX_INFO;
		o[1] = 4;
		o[2] = 64;
		o[3] = ND_PREFIX_ONLINK | ND_PREFIX_AUTO;
		wire_put_be32(o + 4, 86400);
		wire_put_be32(o + 8, 14400);
		o[16] = 0x20;
		o[17] = 0x01;
		o[18] = 0x0d;
		o[19] = 0xb8;
		o[21] = (uint8_t)i;
		n += 32;
	}
	struct ip6_repr ip = {.payload_len = (uint16_t)n, .next_header = IP6_NH_ICMPV6,
			      .hop_limit = 255, .src = ip6_addr_of("fe80::1"), .dst = ip6_addr_of("ff02::1")};
	ip6_build(d->bytes, sizeof(d->bytes), &ip);
	d->len = IP6_HDR_LEN + n;
	assert_int_equal(ip6_parse(d->bytes, d->len, &d->ip), WIRE_OK);
	d->msg = m;
	d->msg_len = n;
	checksum(d);
}

static void test_router_advert(void **state)
{
	struct datagram d;
	struct nd_repr nd;
	struct icmp6_repr r;
	router_advert(&d, 2);
	assert_int_equal(icmp6_parse(d.msg, d.msg_len, pseudo(&d), true, &r), WIRE_OK);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.cur_hop_limit, 64);
	assert_false(nd.managed);
	assert_true(nd.other);
	assert_int_equal(nd.router_lifetime, 1800);
	assert_int_equal(nd.reachable_ms, 30000);
	assert_int_equal(nd.retrans_ms, 1000);
	assert_int_equal(nd.mtu, 1400);
	assert_true(nd.has_source_lladdr);
	assert_int_equal(nd.nb_prefixes, 2);
	struct ip6_addr p1 = ip6_addr_of("2001:db8:1::");
	assert_true(ip6_addr_equal(&nd.prefixes[1].prefix, &p1));
	assert_int_equal(nd.prefixes[1].plen, 64);
	assert_int_equal(nd.prefixes[1].flags, ND_PREFIX_ONLINK | ND_PREFIX_AUTO);
	assert_int_equal(nd.prefixes[1].valid_lifetime, 86400);
	assert_int_equal(nd.prefixes[1].preferred_lifetime, 14400);

	/* More prefixes than kept: counted, not lost silently. */
	router_advert(&d, ND_PREFIX_MAX + 2);
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.nb_prefixes, ND_PREFIX_MAX);
	assert_int_equal(nd.prefixes_ignored, 2);
	/* A Prefix Information option of the wrong length or prefix length is ignored. */
	router_advert(&d, 1);
	d.msg[32 + 2] = 129;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.nb_prefixes, 0);
	/* §6.1.2: only from a link-local source. */
	router_advert(&d, 1);
	d.ip.src = ip6_addr_of("2001:db8::1");
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_BAD_FIELD);
	/* Unknown options are skipped (§4.6). */
	router_advert(&d, 0);
	d.msg[16] = 200;
	assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
	assert_int_equal(nd.mtu, 0);
	/* RFC 4191 §2.2 Prf, bits 3-4 of the flags: 00 medium, 01 high, 11 low, the reserved
	 * 10 read as medium. */
	assert_int_equal(nd.router_pref, 0);
	static const struct {
		uint8_t flags;
		int8_t pref;
	} prf[] = {{0x48, 1}, {0x18, -1}, {0x10, 0}, {0x40, 0}};
	for (unsigned i = 0; i < sizeof(prf) / sizeof(prf[0]); i++) {
		router_advert(&d, 0);
		d.msg[5] = prf[i].flags;
		checksum(&d);
		assert_int_equal(nd_exact(&d, d.msg_len, &nd), WIRE_OK);
		assert_int_equal(nd.router_pref, prf[i].pref);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_checksum),
		cmocka_unit_test(test_build_header),
		cmocka_unit_test(test_golden_neighbor_discovery),
		cmocka_unit_test(test_nd_rejects),
		cmocka_unit_test(test_router_advert),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
