/* Ethernet and IPv4 input through the whole stack (src/stack/stack.c, ip4_input.c): every
 * check of the input order counts its own drop and sends nothing; padding is trimmed;
 * options are accepted or dropped by RFC 7126; checksum offload flags are honoured. Each
 * malformed case is built from a valid echo request that is answered when left intact. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"

static uint8_t dgram[IP4_MAX_LEN];
static uint8_t frame[ETH_HDR_LEN + IP4_MAX_LEN];

/* A 36-byte echo request from A to us (8 bytes of data). */
static size_t echo(void)
{
	return ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 0x55, 1, 8);
}

/* The same with options (a multiple of 4 bytes). */
static size_t echo_with_opts(const uint8_t *opts, size_t opt_len)
{
	static uint8_t icmp[64];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.opts = opts;
	ip.opt_len = opt_len;
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 0x55, 1, 8);
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

static void expect_answered(void)
{
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_ICMP, &p);
	assert_true(p.is_icmp);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REPLY);
	assert_int_equal(p.icmp.rest, (uint32_t)0x55 << 16 | 1);
	ts_expect_no_drops();
}

static void expect_dropped(enum stack_drop d)
{
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(d, 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_DELIVERED], 0);
}

/* --- Ethernet --- */

static void test_eth_valid_echo_answered_and_counted(void **state)
{
	(void)state;
	size_t n = echo();
	ts_input_ip(0, dgram, n);
	expect_answered();
	assert_int_equal(ts_s->events[STACK_EV_ETH_RX], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_RX], 1);
	assert_int_equal(ts_s->ports[0].rx_packets, 1);
	assert_int_equal(ts_s->ports[0].rx_bytes, ETH_HDR_LEN + n);
	assert_int_equal(ts_s->ports[1].rx_packets, 0);
}

static void test_eth_vlan_tagged_frame_dropped_vlan(void **state)
{
	(void)state;
	size_t n = echo();
	uint8_t tagged[ETH_HDR_LEN + ETH_VLAN_TAG_LEN + 64];
	ts_eth_build(tagged, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_VLAN, NULL, 0);
	wire_put_be16(tagged + ETH_HDR_LEN, 0x0064);              /* TCI: VLAN 100 */
	wire_put_be16(tagged + ETH_HDR_LEN + 2, ETH_TYPE_IPV4);
	memcpy(tagged + ETH_HDR_LEN + ETH_VLAN_TAG_LEN, dgram, n);
	ts_input_frame(0, tagged, ETH_HDR_LEN + ETH_VLAN_TAG_LEN + n);
	expect_dropped(STACK_DROP_ETH_VLAN);
}

static void test_eth_qinq_tagged_frame_dropped_vlan(void **state)
{
	(void)state;
	size_t n = echo();
	uint8_t tagged[ETH_HDR_LEN + ETH_VLAN_TAG_LEN + 64];
	ts_eth_build(tagged, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_QINQ, NULL, 0);
	wire_put_be16(tagged + ETH_HDR_LEN, 0x0064);
	wire_put_be16(tagged + ETH_HDR_LEN + 2, ETH_TYPE_IPV4);
	memcpy(tagged + ETH_HDR_LEN + ETH_VLAN_TAG_LEN, dgram, n);
	ts_input_frame(0, tagged, ETH_HDR_LEN + ETH_VLAN_TAG_LEN + n);
	expect_dropped(STACK_DROP_ETH_VLAN);
}

static void test_eth_stacked_vlan_tags_dropped_bad_type(void **state)
{
	(void)state;
	uint8_t tagged[ETH_MIN_FRAME_LEN] = {0};
	ts_eth_build(tagged, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_QINQ, NULL, 0);
	wire_put_be16(tagged + ETH_HDR_LEN, 0x0064);
	wire_put_be16(tagged + ETH_HDR_LEN + 2, ETH_TYPE_VLAN);
	ts_input_frame(0, tagged, sizeof(tagged));
	expect_dropped(STACK_DROP_ETH_BAD_TYPE);
}

static void test_eth_frame_to_other_mac_dropped_not_ours(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_other, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_ETH_NOT_OURS);
}

static void test_eth_frame_to_other_port_mac_dropped_not_ours(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_port[1], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_ETH_NOT_OURS);
}

static void test_eth_port_down_dropped_port_down(void **state)
{
	(void)state;
	size_t n = echo();
	assert_int_equal(stack_iface_set_up(ts_s, 0, false), 0);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_ETH_PORT_DOWN);
	assert_int_equal(ts_s->ports[0].rx_packets, 0);
	/* Up again: answered. */
	assert_int_equal(stack_iface_set_up(ts_s, 0, true), 0);
	ts_s->drops[STACK_DROP_ETH_PORT_DOWN] = 0;
	ts_input_ip(0, dgram, n);
	expect_answered();
}

static void test_eth_unconfigured_port_dropped_port_down(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	stack_input(ts_s, 5, ts_mbuf(frame, fl, 0));
	stack_input(ts_s, NETCFG_MAX_PORTS, ts_mbuf(frame, fl, 0));
	stack_input(ts_s, UINT16_MAX, ts_mbuf(frame, fl, 0));
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ETH_PORT_DOWN, 3);
}

static void test_eth_truncated_frame_dropped_truncated(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	(void)fl;
	for (size_t len = 1; len < ETH_HDR_LEN; len++)
		ts_input_frame(0, frame, len);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ETH_TRUNCATED, ETH_HDR_LEN - 1);
}

static void test_eth_tagged_frame_without_room_for_tag_dropped_truncated(void **state)
{
	(void)state;
	uint8_t tagged[ETH_HDR_LEN + 2];
	ts_eth_build(tagged, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_VLAN, NULL, 0);
	tagged[ETH_HDR_LEN] = 0;
	tagged[ETH_HDR_LEN + 1] = 1;
	ts_input_frame(0, tagged, sizeof(tagged));
	expect_dropped(STACK_DROP_ETH_TRUNCATED);
}

static void test_eth_802_3_length_field_dropped_bad_type(void **state)
{
	(void)state;
	uint8_t llc[ETH_MIN_FRAME_LEN] = {0};
	ts_eth_build(llc, &ts_mac_port[0], &ts_mac_a, 46, NULL, 0);
	ts_input_frame(0, llc, sizeof(llc));
	expect_dropped(STACK_DROP_ETH_BAD_TYPE);
}

static void test_eth_unknown_ethertype_dropped_unknown_type(void **state)
{
	(void)state;
	uint8_t other[ETH_MIN_FRAME_LEN] = {0};
	ts_eth_build(other, &ts_mac_port[0], &ts_mac_a, 0x88b5, NULL, 0); /* IEEE local */
	ts_input_frame(0, other, sizeof(other));
	expect_dropped(STACK_DROP_ETH_UNKNOWN_TYPE);
}

static void test_eth_multicast_source_dropped_bad_src(void **state)
{
	(void)state;
	size_t n = echo();
	struct eth_addr mc = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &mc, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_ETH_BAD_SRC);
}

static void test_eth_own_mac_as_source_dropped_bad_src(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_port[0], ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_ETH_BAD_SRC);
}

static void test_eth_chained_frame_linearized_and_answered(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	stack_input(ts_s, 0, ts_mbuf(frame, fl, 7));
	expect_answered();
}

/* --- IPv4 header checks, in the order of shared/STYLE.md --- */

static void test_ip_bad_checksum_dropped_bad_checksum(void **state)
{
	(void)state;
	size_t n = echo();
	dgram[IP4_OFF_CSUM] ^= 0x01;
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_CHECKSUM);
}

static struct rte_mbuf *echo_frame_mbuf(size_t n)
{
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	return ts_mbuf(frame, fl, 0);
}

static void test_ip_offload_flag_bad_dropped_bad_checksum(void **state)
{
	(void)state;
	struct rte_mbuf *m = echo_frame_mbuf(echo());
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
	stack_input(ts_s, 0, m);
	expect_dropped(STACK_DROP_IP_BAD_CHECKSUM);
}

static void test_ip_offload_flag_good_trusted_over_wrong_checksum(void **state)
{
	(void)state;
	size_t n = echo();
	dgram[IP4_OFF_CSUM] ^= 0x01;
	struct rte_mbuf *m = echo_frame_mbuf(n);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	stack_input(ts_s, 0, m);
	expect_answered();
}

static void test_ip_version_6_dropped_bad_version(void **state)
{
	(void)state;
	size_t n = echo();
	dgram[IP4_OFF_VER_IHL] = 0x65;
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_VERSION);
}

static void test_ip_ihl_below_5_dropped_bad_hdr_len(void **state)
{
	(void)state;
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		size_t n = echo();
		dgram[IP4_OFF_VER_IHL] = (uint8_t)(0x40 | ihl);
		ts_input_ip(0, dgram, n);
	}
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_HDR_LEN, 5);
}

static void test_ip_ihl_past_frame_dropped_bad_hdr_len(void **state)
{
	(void)state;
	size_t n = echo();                       /* 36 bytes, unpadded frame of 50 */
	dgram[IP4_OFF_VER_IHL] = 0x4f;           /* 60-byte header */
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_HDR_LEN);
}

static void test_ip_total_length_below_header_dropped_bad_length(void **state)
{
	(void)state;
	size_t n = echo();
	wire_put_be16(dgram + IP4_OFF_TOTAL_LEN, IP4_HDR_MIN_LEN - 1);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_LENGTH);
}

static void test_ip_total_length_below_options_dropped_bad_length(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_EOL};
	size_t n = echo_with_opts(opts, sizeof(opts));
	wire_put_be16(dgram + IP4_OFF_TOTAL_LEN, 22);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_LENGTH);
}

static void test_ip_total_length_past_frame_dropped_bad_length(void **state)
{
	(void)state;
	size_t n = echo();
	wire_put_be16(dgram + IP4_OFF_TOTAL_LEN, (uint16_t)(n + 1));
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_LENGTH);
}

static void test_ip_reserved_flag_dropped_bad_field(void **state)
{
	(void)state;
	size_t n = echo();
	wire_put_be16(dgram + IP4_OFF_FRAG, IP4_FLAG_RESERVED);
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_FIELD);
}

static void expect_martian_source(uint32_t src)
{
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), src, TS_ADDR0, 1, 1, 8);
	ts_input_ip(0, dgram, n);
}

static void test_ip_martian_source_dropped_bad_field(void **state)
{
	(void)state;
	expect_martian_source(IP4(127, 0, 0, 1));
	expect_martian_source(IP4(127, 255, 0, 9));
	expect_martian_source(IP4(224, 0, 0, 5));
	expect_martian_source(IP4(239, 255, 255, 250));
	expect_martian_source(0xffffffffu);
	expect_martian_source(0);               /* RFC 1122 §3.2.1.3 (a), to a unicast */
	expect_martian_source(IP4(0, 1, 2, 3)); /* (b): a host on "this network" */
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 7);
}

/* RFC 1122 §3.2.1.3: {<Network-number>, -1} is no source; such datagrams are discarded
 * silently (an echo reply to it would go to the whole subnet). */
static void test_ip_subnet_broadcast_source_dropped_bad_field(void **state)
{
	(void)state;
	expect_martian_source(TS_BCAST0);
	expect_martian_source(TS_BCAST1);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 2);
}

static void test_ip_more_fragments_with_odd_payload_dropped_bad_field(void **state)
{
	(void)state;
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 1, 1, 9);
	wire_put_be16(dgram + IP4_OFF_FRAG, IP4_FLAG_MF);  /* 17 payload bytes */
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_FIELD);
}

static void test_ip_fragment_past_65535_dropped_bad_field(void **state)
{
	(void)state;
	size_t n = echo();                                  /* 16 payload bytes */
	wire_put_be16(dgram + IP4_OFF_FRAG, 65528 / 8);     /* ends at 65528 + 36 */
	ts_ip_fix_csum(dgram);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_FIELD);
}

/* Every truncation of a valid datagram: shorter than a header, then shorter than its total
 * length. Frames are not padded here, so the cut is real. */
static void test_ip_each_truncation_dropped_with_exact_counter(void **state)
{
	(void)state;
	size_t n = echo();
	for (size_t len = 0; len < n; len++) {
		memset(ts_s->drops, 0, sizeof(ts_s->drops));
		ts_input_ip(0, dgram, len);
		assert_int_equal(ts_nframes, 0);
		ts_expect_drop(len < IP4_HDR_MIN_LEN ? STACK_DROP_IP_TRUNCATED
						     : STACK_DROP_IP_BAD_LENGTH, 1);
	}
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
}

static void test_ip_each_truncation_with_options_dropped_with_exact_counter(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_RA, 4, 0, 0};
	size_t n = echo_with_opts(opts, sizeof(opts));
	for (size_t len = 0; len < n; len++) {
		memset(ts_s->drops, 0, sizeof(ts_s->drops));
		ts_input_ip(0, dgram, len);
		assert_int_equal(ts_nframes, 0);
		ts_expect_drop(len < IP4_HDR_MIN_LEN ? STACK_DROP_IP_TRUNCATED
			       : len < IP4_HDR_MIN_LEN + sizeof(opts) ? STACK_DROP_IP_BAD_HDR_LEN
								      : STACK_DROP_IP_BAD_LENGTH, 1);
	}
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
}

/* A 28-byte datagram in a 60-byte frame: the 18 bytes of padding (non-zero here) are not
 * part of it, or the ICMP checksum and the reply's length would be wrong. */
static void test_ip_padding_trimmed_from_minimum_frame(void **state)
{
	(void)state;
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 0x55, 1, 0);
	assert_int_equal(n, 28);
	size_t fl = ts_eth_build(frame, &ts_mac_port[0], &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	memset(frame + fl, 0xa5, ETH_MIN_FRAME_LEN - fl);
	ts_input_frame(0, frame, ETH_MIN_FRAME_LEN);
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_ICMP, &p);
	assert_int_equal(p.ip.total_len, 28);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REPLY);
	assert_int_equal(p.icmp.payload_len, 0);
	assert_int_equal(p.f->len, ETH_MIN_FRAME_LEN);
	ts_expect_no_drops();
}

/* --- options --- */

static void test_ip_lsrr_option_dropped_source_route(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_NOP, IP4_OPT_LSRR, 7, 4, 10, 0, 0, 9};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_SOURCE_ROUTE);
	assert_int_equal(ts_s->events[STACK_EV_IP_OPTIONS], 1);
}

static void test_ip_ssrr_option_dropped_source_route(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_SSRR, 7, 4, 10, 0, 0, 9, IP4_OPT_EOL};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_SOURCE_ROUTE);
}

static void test_ip_option_length_below_2_dropped_bad_option(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_RR, 1, 0, 0};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_OPTION);
}

static void test_ip_option_length_past_header_dropped_bad_option(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_NOP, IP4_OPT_RR, 7, 4};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_OPTION);
}

static void test_ip_option_type_without_length_byte_dropped_bad_option(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_RA};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_BAD_OPTION);
}

static void test_ip_nop_and_eol_options_accepted(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_NOP, IP4_OPT_NOP, IP4_OPT_EOL, 0xff};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_answered();
	assert_int_equal(ts_s->events[STACK_EV_IP_OPTIONS], 1);
}

static void test_ip_unknown_option_skipped_and_accepted(void **state)
{
	(void)state;
	static const uint8_t opts[] = {0x5e, 4, 1, 2};
	size_t n = echo_with_opts(opts, sizeof(opts));
	ts_input_ip(0, dgram, n);
	expect_answered();
}

/* --- destinations --- */

static void test_ip_multicast_destination_dropped_bad_dst(void **state)
{
	(void)state;
	struct eth_addr mc = {{0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}};
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, IP4(224, 0, 0, 1), 1, 1, 8);
	size_t fl = ts_eth_build(frame, &mc, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_IP_BAD_DST);
}

static void test_ip_not_ours_with_forwarding_off_dropped_not_ours(void **state)
{
	(void)state;
	ts_s->cfg.forwarding = false;
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_HOST_B, 1, 1, 8);
	ts_input_ip(0, dgram, n);
	expect_dropped(STACK_DROP_IP_NOT_OURS);
}

static void test_ip_our_address_in_link_broadcast_dropped_link_bcast(void **state)
{
	(void)state;
	size_t n = echo();
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_IP_LINK_BCAST);
}

static void test_ip_other_host_in_link_broadcast_not_forwarded(void **state)
{
	(void)state;
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_HOST_B, 1, 1, 8);
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	expect_dropped(STACK_DROP_IP_LINK_BCAST);
	assert_int_equal(ts_s->events[STACK_EV_IP_FORWARDED], 0);
}

static void test_ip_subnet_broadcast_in_link_broadcast_delivered(void **state)
{
	(void)state;
	uint8_t payload[8] = {0};
	/* Protocol 253 (RFC 3692, experimental): a transport no stack runs. */
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_BCAST0, 253);
	ip.payload = payload;
	ip.len = sizeof(payload);
	size_t n = ts_ip_build(dgram, sizeof(dgram), &ip);
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	/* Delivered, and no protocol unreachable for a broadcast. */
	assert_int_equal(ts_s->events[STACK_EV_IP_DELIVERED], 1);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_UNKNOWN_PROTO, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, ts_setup, ts_teardown)
		T(test_eth_valid_echo_answered_and_counted),
		T(test_eth_vlan_tagged_frame_dropped_vlan),
		T(test_eth_qinq_tagged_frame_dropped_vlan),
		T(test_eth_stacked_vlan_tags_dropped_bad_type),
		T(test_eth_frame_to_other_mac_dropped_not_ours),
		T(test_eth_frame_to_other_port_mac_dropped_not_ours),
		T(test_eth_port_down_dropped_port_down),
		T(test_eth_unconfigured_port_dropped_port_down),
		T(test_eth_truncated_frame_dropped_truncated),
		T(test_eth_tagged_frame_without_room_for_tag_dropped_truncated),
		T(test_eth_802_3_length_field_dropped_bad_type),
		T(test_eth_unknown_ethertype_dropped_unknown_type),
		T(test_eth_multicast_source_dropped_bad_src),
		T(test_eth_own_mac_as_source_dropped_bad_src),
		T(test_eth_chained_frame_linearized_and_answered),
		T(test_ip_bad_checksum_dropped_bad_checksum),
		T(test_ip_offload_flag_bad_dropped_bad_checksum),
		T(test_ip_offload_flag_good_trusted_over_wrong_checksum),
		T(test_ip_version_6_dropped_bad_version),
		T(test_ip_ihl_below_5_dropped_bad_hdr_len),
		T(test_ip_ihl_past_frame_dropped_bad_hdr_len),
		T(test_ip_total_length_below_header_dropped_bad_length),
		T(test_ip_total_length_below_options_dropped_bad_length),
		T(test_ip_total_length_past_frame_dropped_bad_length),
		T(test_ip_reserved_flag_dropped_bad_field),
		T(test_ip_martian_source_dropped_bad_field),
		T(test_ip_subnet_broadcast_source_dropped_bad_field),
		T(test_ip_more_fragments_with_odd_payload_dropped_bad_field),
		T(test_ip_fragment_past_65535_dropped_bad_field),
		T(test_ip_each_truncation_dropped_with_exact_counter),
		T(test_ip_each_truncation_with_options_dropped_with_exact_counter),
		T(test_ip_padding_trimmed_from_minimum_frame),
		T(test_ip_lsrr_option_dropped_source_route),
		T(test_ip_ssrr_option_dropped_source_route),
		T(test_ip_option_length_below_2_dropped_bad_option),
		T(test_ip_option_length_past_header_dropped_bad_option),
		T(test_ip_option_type_without_length_byte_dropped_bad_option),
		T(test_ip_nop_and_eol_options_accepted),
		T(test_ip_unknown_option_skipped_and_accepted),
		T(test_ip_multicast_destination_dropped_bad_dst),
		T(test_ip_not_ours_with_forwarding_off_dropped_not_ours),
		T(test_ip_our_address_in_link_broadcast_dropped_link_bcast),
		T(test_ip_other_host_in_link_broadcast_not_forwarded),
		T(test_ip_subnet_broadcast_in_link_broadcast_delivered),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
