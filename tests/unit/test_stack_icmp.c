/* ICMP through the whole stack (src/ip4/ip4_icmp.c): echo (plain, with IP options, large
 * and fragmented), broadcast echo, malformed messages, ping (stack_ping_send and s->ping),
 * error generation (protocol unreachable, reassembly time exceeded), the RFC 1122 §3.2.2
 * suppression rules and the rate limit on the virtual clock. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "test_stack_util.h"

static uint8_t dgram[IP4_MAX_LEN];
static uint8_t buf[IP4_MAX_LEN];
static struct ts_blob frags[64];

/* Frame i is an echo reply out of port to eth_dst, src -> dst, id/seq, carrying len bytes of
 * ts_pattern. */
static void expect_echo_reply(unsigned i, uint16_t port, const struct eth_addr *eth_dst,
			      uint32_t src, uint32_t dst, uint16_t id, uint16_t seq, size_t len)
{
	struct ts_pkt p;
	ts_expect_ip(i, port, eth_dst, src, dst, IP4_PROTO_ICMP, &p);
	assert_true(p.is_icmp);
	assert_int_equal(p.ip.hdr_len, IP4_HDR_MIN_LEN);
	assert_int_equal(p.ip.ttl, IP4_DEFAULT_TTL);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REPLY);
	assert_int_equal(p.icmp.code, 0);
	assert_int_equal(p.icmp.rest, (uint32_t)id << 16 | seq);
	assert_int_equal(p.icmp.payload_len, len);
	for (size_t k = 0; k < len; k++)
		assert_int_equal(p.icmp_data[k], ts_pattern(k));
}

static void send_echo(uint16_t port, uint32_t src, uint32_t dst, uint16_t id, uint16_t seq,
		      size_t len)
{
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), src, dst, id, seq, len);
	ts_input_ip(port, dgram, n);
}

/* --- echo --- */

static void test_icmp_echo_request_answered_with_reply(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_ADDR0, 0x77, 9, 56);
	assert_int_equal(ts_nframes, 1);
	expect_echo_reply(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, 0x77, 9, 56);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(p.ip.tos, 0);
	assert_false(p.ip.df);
	assert_false(p.ip.mf);
	assert_int_equal(p.ip.frag_off, 0);
	assert_int_equal(p.ip.total_len, IP4_HDR_MIN_LEN + ICMP4_HDR_LEN + 56);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_RX_ECHO], 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_ECHO_REPLY], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_DELIVERED], 1);
	ts_expect_no_drops();
}

static void test_icmp_echo_request_empty_payload_answered(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_ADDR0, 1, 1, 0);
	assert_int_equal(ts_nframes, 1);
	expect_echo_reply(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, 1, 1, 0);
}

/* The incremental checksum update of the reply (RFC 1624) gives the same value as a full
 * recomputation, for many id/seq values (so every carry pattern is exercised). */
static void test_icmp_echo_reply_checksum_matches_full_recompute(void **state)
{
	(void)state;
	for (unsigned k = 0; k < 3000; k++) {
		ts_clear();
		uint16_t id = (uint16_t)(k * 2654435761u >> 7), seq = (uint16_t)(k * 40503u);
		send_echo(0, TS_HOST_A, TS_ADDR0, id, seq, k % 5);
		assert_int_equal(ts_nframes, 1);
		struct ts_pkt p;
		ts_parse(0, &p);
		assert_true(p.is_icmp);
		memcpy(buf, p.l4, p.l4_len);
		uint16_t got = wire_get_be16(buf + ICMP4_OFF_CSUM);
		wire_put_be16(buf + ICMP4_OFF_CSUM, 0);
		assert_int_equal(got, wire_csum(buf, p.l4_len));
	}
}

/* id 0, seq 0, no data: the reply is all zeros but its checksum, which must then be 0xffff
 * (a zero checksum over zero data does not verify, RFC 1071). */
static void test_icmp_echo_all_zero_reply_checksum_is_ffff(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_ADDR0, 0, 0, 0);
	assert_int_equal(ts_nframes, 1);
	expect_echo_reply(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, 0, 0, 0);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(wire_get_be16(p.l4 + ICMP4_OFF_CSUM), 0xffff);
}

static void test_icmp_echo_request_tos_reflected(void **state)
{
	(void)state;
	uint8_t icmp[64];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.tos = 0x10;
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 5, 6, 16);
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(p.ip.tos, 0x10);
}

static void test_icmp_echo_with_ip_options_answered_without_options(void **state)
{
	(void)state;
	/* Record route (7 bytes, one slot) then EOL; and router alert. */
	static const uint8_t opts[] = {IP4_OPT_RR, 7, 4, 0, 0, 0, 0, IP4_OPT_EOL,
				       IP4_OPT_RA, 4, 0, 0};
	uint8_t icmp[128];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.opts = opts;
	ip.opt_len = sizeof(opts);
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 0x99, 3, 40);
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 1);
	expect_echo_reply(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, 0x99, 3, 40);
	assert_int_equal(ts_s->events[STACK_EV_IP_OPTIONS], 1);
	ts_expect_no_drops();
}

/* Weak host model: an address of port 1 answers on port 0, from that address. */
static void test_icmp_echo_to_other_port_address_answered_from_it(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_ADDR1, 4, 4, 8);
	assert_int_equal(ts_nframes, 1);
	expect_echo_reply(0, 0, &ts_mac_a, TS_ADDR1, TS_HOST_A, 4, 4, 8);
}

static void feed_fragments(uint16_t port, unsigned n, bool reverse)
{
	for (unsigned k = 0; k < n; k++) {
		unsigned i = reverse ? n - 1 - k : k;
		ts_input_ip(port, frags[i].data, frags[i].len);
	}
}

/* The reply to a datagram of 8000 bytes: fragments of at most the MTU, carrying an echo
 * reply whose checksum holds over the whole message. */
static void expect_fragmented_reply(uint16_t id, uint16_t seq, size_t payload_len)
{
	size_t icmp_len = ICMP4_HDR_LEN + payload_len;
	unsigned n = (unsigned)((icmp_len + 1479) / 1480);
	assert_int_equal(ts_nframes, n);
	struct ip4_repr h;
	assert_int_equal(ts_reassemble(0, n, TS_MTU, buf, sizeof(buf), &h), icmp_len);
	assert_int_equal(h.src, TS_ADDR0);
	assert_int_equal(h.dst, TS_HOST_A);
	assert_int_equal(h.hdr_len, IP4_HDR_MIN_LEN);
	for (unsigned i = 0; i < n; i++) {
		struct ts_pkt p;
		ts_parse(i, &p);
		assert_memory_equal(p.eth.dst.b, ts_mac_a.b, ETH_ADDR_LEN);
		assert_true(p.f->len <= ETH_HDR_LEN + TS_MTU);
	}
	struct icmp4_repr ic;
	assert_int_equal(icmp4_parse(buf, icmp_len, true, &ic), WIRE_OK);
	assert_int_equal(ic.type, ICMP4_ECHO_REPLY);
	assert_int_equal(ic.rest, (uint32_t)id << 16 | seq);
	for (size_t k = 0; k < payload_len; k++)
		assert_int_equal(buf[ICMP4_HDR_LEN + k], ts_pattern(k));
}

static void test_icmp_echo_8000_bytes_in_fragments_answered_fragmented(void **state)
{
	(void)state;
	size_t len = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 0x1111, 1,
				   8000 - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN);
	assert_int_equal(len, 8000);
	unsigned n = ts_fragment(dgram, len, 1480, frags, 64);
	assert_int_equal(n, 6);
	feed_fragments(0, n, false);
	expect_fragmented_reply(0x1111, 1, 8000 - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN);
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGS_RX], 6);
	assert_int_equal(ts_s->events[STACK_EV_IP_REASSEMBLED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGMENTED], 1);
	assert_int_equal(ts_s->events[STACK_EV_IP_FRAGS_CREATED], 6);
	ts_expect_no_drops();
}

static void test_icmp_echo_fragments_in_reverse_order_answered(void **state)
{
	(void)state;
	size_t len = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 0x2222, 2, 3000);
	unsigned n = ts_fragment(dgram, len, 1000, frags, 64);
	feed_fragments(0, n, true);
	expect_fragmented_reply(0x2222, 2, 3000);
	ts_expect_no_drops();
}

/* The first fragment carries options that later fragments do not repeat (record route is
 * not copied, RFC 791), so the reassembled header is longer than the last fragment's. */
static void test_icmp_echo_fragments_with_options_in_first_answered(void **state)
{
	(void)state;
	static const uint8_t opts[] = {IP4_OPT_RR, 7, 4, 0, 0, 0, 0, IP4_OPT_EOL};
	static uint8_t icmp[4096];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.opts = opts;
	ip.opt_len = sizeof(opts);
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 0x3333, 3, 2000);
	size_t len = ts_ip_build(dgram, sizeof(dgram), &ip);
	unsigned n = ts_fragment(dgram, len, 1000, frags, 64);
	assert_int_equal(n, 3);
	feed_fragments(0, n, false);
	expect_fragmented_reply(0x3333, 3, 2000);
	ts_expect_no_drops();
}

static void test_icmp_echo_to_subnet_broadcast_ignored(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_BCAST0, 1, 1, 8);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_BROADCAST_ECHO, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_RX_ECHO], 1);
}

static void test_icmp_echo_to_limited_broadcast_ignored(void **state)
{
	(void)state;
	uint8_t frame[128];
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, 0xffffffffu, 1, 1, 8);
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_BROADCAST_ECHO, 1);
}

static void test_icmp_echo_to_other_port_broadcast_ignored(void **state)
{
	(void)state;
	send_echo(0, TS_HOST_A, TS_BCAST1, 1, 1, 8);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_BROADCAST_ECHO, 1);
}

/* --- malformed ICMP --- */

static void test_icmp_bad_checksum_dropped(void **state)
{
	(void)state;
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 1, 1, 16);
	dgram[IP4_HDR_MIN_LEN + ICMP4_HDR_LEN + 3] ^= 0x40;
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_BAD_CHECKSUM, 1);
}

static void test_icmp_truncated_message_dropped(void **state)
{
	(void)state;
	uint8_t icmp[ICMP4_HDR_LEN];
	ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REQUEST, 1, 1, 0);
	for (size_t len = 0; len < ICMP4_HDR_LEN; len++) {
		struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
		ip.payload = icmp;
		ip.len = len;
		ts_send(0, &ip);
	}
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_TRUNCATED, ICMP4_HDR_LEN);
}

static void test_icmp_unknown_type_dropped_unhandled(void **state)
{
	(void)state;
	uint8_t icmp[32];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_icmp_build(icmp, sizeof(icmp), 13, 0, 0x00010002, NULL, 0); /* timestamp */
	ts_send(0, &ip);
	ip.len = ts_icmp_build(icmp, sizeof(icmp), ICMP4_REDIRECT, 1, TS_HOST_A, NULL, 0);
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_ICMP_UNHANDLED, 2);
}

static void test_icmp_error_received_counted_not_answered(void **state)
{
	(void)state;
	uint8_t quoted[28], icmp[64];
	struct ts_ip q = ts_ip_of(TS_ADDR0, IP4(192, 0, 2, 1), IP4_PROTO_UDP);
	uint8_t udp[8] = {0};
	q.payload = udp;
	q.len = sizeof(udp);
	ts_ip_build(quoted, sizeof(quoted), &q);
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_icmp_build(icmp, sizeof(icmp), ICMP4_DEST_UNREACH, ICMP4_UNREACH_PORT, 0,
			       quoted, sizeof(quoted));
	ts_send(0, &ip);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_RX_ERROR], 1);
	ts_expect_no_drops();
}

/* --- ping --- */

static void expect_ping_request(unsigned i, uint16_t id, uint16_t seq, size_t size)
{
	struct ts_pkt p;
	ts_expect_ip(i, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, IP4_PROTO_ICMP, &p);
	assert_true(p.is_icmp);
	assert_int_equal(p.ip.ttl, IP4_DEFAULT_TTL);
	assert_int_equal(p.ip.tos, 0);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REQUEST);
	assert_int_equal(p.icmp.code, 0);
	assert_int_equal(p.icmp.rest, (uint32_t)id << 16 | seq);
	assert_int_equal(p.icmp.payload_len, size);
	for (size_t k = 0; k < size; k++)
		assert_int_equal(p.icmp_data[k], (uint8_t)(ICMP4_HDR_LEN + k));
}

static void reply_from_a(uint16_t id, uint16_t seq, size_t len)
{
	uint8_t icmp[256];
	struct ts_ip ip = ts_ip_of(TS_HOST_A, TS_ADDR0, IP4_PROTO_ICMP);
	ip.payload = icmp;
	ip.len = ts_echo_build(icmp, sizeof(icmp), ICMP4_ECHO_REPLY, id, seq, len);
	ts_send(0, &ip);
}

static void test_ping_send_emits_echo_request(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 7, 56), 0);
	assert_int_equal(ts_nframes, 1);
	expect_ping_request(0, 0x4242, 7, 56);
	assert_int_equal(ts_s->ping.id, 0x4242);
	assert_int_equal(ts_s->ping.seq, 7);
	assert_int_equal(ts_s->ping.reply_tsc, 0);
	assert_int_equal(ts_s->events[STACK_EV_IP_TX], 1);
}

static void test_ping_send_odd_and_zero_sizes_have_valid_checksums(void **state)
{
	(void)state;
	for (uint32_t size = 0; size < 40; size++) {
		ts_clear();
		assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, (uint16_t)size, size), 0);
		assert_int_equal(ts_nframes, 1);
		expect_ping_request(0, 0x4242, (uint16_t)size, size);
	}
}

static void test_ping_reply_recorded(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 7, 56), 0);
	reply_from_a(0x4242, 7, 56);
	assert_int_not_equal(ts_s->ping.reply_tsc, 0);
	assert_int_equal(ts_s->ping.reply_len, ICMP4_HDR_LEN + 56);
	assert_int_equal(ts_nframes, 1); /* the reply is not answered */
	ts_expect_no_drops();
}

static void test_ping_reply_with_other_seq_or_id_ignored(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 7, 56), 0);
	reply_from_a(0x4242, 6, 56);
	reply_from_a(0x4243, 7, 56);
	assert_int_equal(ts_s->ping.reply_tsc, 0);
	assert_int_equal(ts_s->ping.reply_len, 0);
	ts_expect_no_drops();
}

static void test_ping_duplicate_reply_keeps_first(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 7, 56), 0);
	reply_from_a(0x4242, 7, 56);
	uint64_t reply_at = ts_s->ping.reply_tsc;
	reply_from_a(0x4242, 7, 20);
	assert_int_equal(ts_s->ping.reply_tsc, reply_at);
	assert_int_equal(ts_s->ping.reply_len, ICMP4_HDR_LEN + 56);
}

static void test_ping_reply_without_ping_ignored(void **state)
{
	(void)state;
	reply_from_a(0, 0, 8);
	reply_from_a(1, 1, 8);
	assert_int_equal(ts_s->ping.id, 0);
	assert_int_equal(ts_s->ping.reply_tsc, 0);
	assert_int_equal(ts_nframes, 0);
	ts_expect_no_drops();
}

static void test_ping_large_request_fragmented_to_mtu(void **state)
{
	(void)state;
	const size_t size = 4000;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, (uint32_t)size), 0);
	unsigned n = (unsigned)((ICMP4_HDR_LEN + size + 1479) / 1480);
	assert_int_equal(ts_nframes, n);
	assert_int_equal(ts_reassemble(0, n, TS_MTU, buf, sizeof(buf), NULL),
			 ICMP4_HDR_LEN + size);
	struct icmp4_repr ic;
	assert_int_equal(icmp4_parse(buf, ICMP4_HDR_LEN + size, true, &ic), WIRE_OK);
	assert_int_equal(ic.type, ICMP4_ECHO_REQUEST);
	assert_int_equal(ic.rest, (uint32_t)0x4242 << 16 | 1);
	for (size_t k = 0; k < size; k++)
		assert_int_equal(buf[ICMP4_HDR_LEN + k], (uint8_t)(ICMP4_HDR_LEN + k));
}

static void test_ping_max_size_sent_as_45_fragments(void **state)
{
	(void)state;
	const size_t size = IP4_MAX_LEN - IP4_HDR_MIN_LEN - ICMP4_HDR_LEN;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 0x4242, 1, (uint32_t)size), 0);
	assert_int_equal(ts_nframes, 45);
	assert_int_equal(ts_reassemble(0, 45, TS_MTU, buf, sizeof(buf), NULL),
			 ICMP4_HDR_LEN + size);
	struct icmp4_repr ic;
	assert_int_equal(icmp4_parse(buf, ICMP4_HDR_LEN + size, true, &ic), WIRE_OK);
	ts_expect_no_drops();
}

static void test_ping_oversized_returns_emsgsize(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_HOST_A, 1, 1, 65508), -EMSGSIZE);
	assert_int_equal(ts_nframes, 0);
	ts_expect_no_drops();
}

static void test_ping_without_route_returns_enetunreach(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, IP4(192, 0, 2, 1), 1, 1, 8), -ENETUNREACH);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_NO_ROUTE, 1);
}

static void test_ping_own_address_answered_without_a_frame(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_ADDR1, 0x4242, 3, 24), 0);
	stack_loopback_drain(ts_s); /* the worker delivers to ourselves after the send */
	assert_int_equal(ts_nframes, 0);
	assert_int_not_equal(ts_s->ping.reply_tsc, 0);
	assert_int_equal(ts_s->ping.reply_len, ICMP4_HDR_LEN + 24);
	ts_expect_no_drops();
}

/* A directed broadcast goes to the Ethernet broadcast address, without asking ARP for it. */
static void test_ping_subnet_broadcast_sent_to_broadcast_mac(void **state)
{
	(void)state;
	assert_int_equal(stack_ping_send(ts_s, TS_BCAST0, 0x4242, 1, 8), 0);
	assert_int_equal(ts_nframes, 1);
	struct ts_pkt p;
	ts_expect_ip(0, 0, &eth_addr_broadcast, TS_ADDR0, TS_BCAST0, IP4_PROTO_ICMP, &p);
	assert_int_equal(p.icmp.type, ICMP4_ECHO_REQUEST);
}

/* --- errors we send --- */

/* RFC 3692: protocol 253 is for experiments, so no stack runs it. */
#define PROTO_EXPERIMENTAL 253

/* A datagram of a protocol we do not run, with payload_len pattern bytes. */
static size_t unknown_proto_dgram(uint32_t src, uint32_t dst, size_t payload_len)
{
	static uint8_t payload[IP4_MAX_LEN];
	for (size_t k = 0; k < payload_len; k++)
		payload[k] = ts_pattern(k);
	struct ts_ip ip = ts_ip_of(src, dst, PROTO_EXPERIMENTAL);
	ip.payload = payload;
	ip.len = payload_len;
	return ts_ip_build(dgram, sizeof(dgram), &ip);
}

static void test_icmp_unknown_protocol_answered_protocol_unreachable(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_ADDR0, 12);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PROTO, 0, dgram, n);
	ts_expect_drop(STACK_DROP_IP_UNKNOWN_PROTO, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_UNREACH], 1);
}

static void test_icmp_protocol_unreachable_quote_capped_at_576_bytes(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_ADDR0, 1200);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PROTO, 0, dgram, n);
	struct ts_pkt p;
	ts_parse(0, &p);
	assert_int_equal(p.ip.total_len, 576);
}

static void test_icmp_protocol_unreachable_for_other_port_address_from_it(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_HOST_B, TS_ADDR0, 12);
	ts_input_ip(1, dgram, n);
	assert_int_equal(ts_nframes, 1);
	/* From the address of the port it came in on, in the sender's subnet. */
	ts_expect_icmp_error(0, 1, &ts_mac_b, TS_ADDR1, TS_HOST_B, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PROTO, 0, dgram, n);
}

static void test_icmp_unknown_protocol_to_broadcast_not_answered(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_BCAST0, 12);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_UNKNOWN_PROTO, 1);
}

/* 0.0.0.0 to one of our addresses is a martian (RFC 1122 §3.2.1.3): dropped unanswered. */
static void test_icmp_unknown_protocol_from_zero_source_not_answered(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(0, TS_ADDR0, 12);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 1);
}

/* RFC 1122 §3.2.2: no error about a datagram whose source is not one host: a subnet
 * broadcast source (it would answer the whole subnet; RFC 1122 §3.2.1.3 discards such a
 * datagram at once) or a class E one. */
static void test_icmp_unknown_protocol_from_subnet_broadcast_source_not_answered(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_BCAST0, TS_ADDR0, 12);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_BAD_FIELD, 1);
}

static void test_icmp_unknown_protocol_from_class_e_source_suppressed(void **state)
{
	(void)state;
	assert_int_equal(netcfg_route_add(&ts_s->cfg, &(struct route){.prefix = inet_addr_v4(0), .plen = 0,
			 .type = ROUTE_GATEWAY, .port = NETCFG_PORT_ANY, .gateway = inet_addr_v4(TS_HOST_A)}), 0);
	size_t n = unknown_proto_dgram(IP4(240, 0, 0, 1), TS_ADDR0, 12);
	ts_input_ip(0, dgram, n);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED], 1);
}

/* RFC 1122 §3.2.2: no error about a datagram that came as a link-layer broadcast (§3.3.6:
 * such a datagram to a unicast address is discarded). */
static void test_icmp_unknown_protocol_in_link_broadcast_not_answered(void **state)
{
	(void)state;
	uint8_t frame[128];
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_ADDR0, 12);
	size_t fl = ts_eth_build(frame, &eth_addr_broadcast, &ts_mac_a, ETH_TYPE_IPV4, dgram, n);
	ts_input_frame(0, frame, fl);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_LINK_BCAST, 1);
}

static void test_icmp_unknown_protocol_reassembled_answered_quoting_it(void **state)
{
	(void)state;
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_ADDR0, 3000);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	feed_fragments(0, k, false);
	assert_int_equal(ts_nframes, 1);
	/* The quote is of the reassembled datagram: its header says unfragmented. */
	uint8_t want[TS_ICMP_ERR_QUOTE_MAX];
	memcpy(want, dgram, sizeof(want));
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_DEST_UNREACH,
			     ICMP4_UNREACH_PROTO, 0, want, sizeof(want));
}

/* --- rate limit --- */

static void restart_rate_limited(uint32_t rate, uint32_t burst)
{
	struct stack_params p;
	ts_params(&p);
	p.icmp_rate = rate;
	p.icmp_burst = burst;
	ts_restart(&p, true);
}

static void send_unknown_protocol(unsigned count)
{
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_ADDR0, 12);
	for (unsigned i = 0; i < count; i++)
		ts_input_ip(0, dgram, n);
}

static void test_icmp_errors_past_burst_rate_limited(void **state)
{
	(void)state;
	restart_rate_limited(10, 3);
	send_unknown_protocol(5);
	assert_int_equal(ts_nframes, 3);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_RATE_LIMITED], 2);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_UNKNOWN_PROTO], 5);
}

static void test_icmp_rate_limit_refills_with_virtual_clock(void **state)
{
	(void)state;
	restart_rate_limited(10, 3);
	send_unknown_protocol(3);
	assert_int_equal(ts_nframes, 3);
	ts_advance(99);
	send_unknown_protocol(1);
	assert_int_equal(ts_nframes, 3);          /* 0.99 token */
	ts_advance(1);
	send_unknown_protocol(2);
	assert_int_equal(ts_nframes, 4);          /* one token per 100 ms */
	ts_advance(10000);
	send_unknown_protocol(5);
	assert_int_equal(ts_nframes, 7);          /* refilled up to the burst only */
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_RATE_LIMITED], 4);
}

static void test_icmp_rate_limit_does_not_apply_to_echo_replies(void **state)
{
	(void)state;
	restart_rate_limited(10, 3);
	for (uint16_t seq = 0; seq < 10; seq++)
		send_echo(0, TS_HOST_A, TS_ADDR0, 1, seq, 8);
	assert_int_equal(ts_nframes, 10);
	ts_expect_no_drops();
}

/* --- reassembly timeout --- */

static void test_icmp_reassembly_timeout_with_first_fragment_time_exceeded(void **state)
{
	(void)state;
	struct reass_params rp;
	reass_params_default(&rp);
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 5, 5, 3000);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	assert_int_equal(k, 3);
	ts_input_ip(0, frags[0].data, frags[0].len);
	ts_input_ip(0, frags[2].data, frags[2].len);
	ts_advance(rp.timeout_ms - 1);
	assert_int_equal(ts_nframes, 0);
	ts_advance(1);
	assert_int_equal(ts_nframes, 1);
	ts_expect_icmp_error(0, 0, &ts_mac_a, TS_ADDR0, TS_HOST_A, ICMP4_TIME_EXCEEDED,
			     ICMP4_TIMEX_REASS, 0, frags[0].data, frags[0].len);
	ts_expect_drop(STACK_DROP_IP_REASS_TIMEOUT, 1);
	assert_int_equal(ts_s->events[STACK_EV_ICMP_TX_TIME_EXCEEDED], 1);
}

static void test_icmp_reassembly_timeout_without_first_fragment_silent(void **state)
{
	(void)state;
	struct reass_params rp;
	reass_params_default(&rp);
	size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, 5, 5, 3000);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	ts_input_ip(0, frags[1].data, frags[1].len);
	ts_input_ip(0, frags[k - 1].data, frags[k - 1].len);
	ts_advance(rp.timeout_ms + 1000);
	assert_int_equal(ts_nframes, 0);
	ts_expect_drop(STACK_DROP_IP_REASS_TIMEOUT, 1);
}

/* Fragment 0 of a datagram to a broadcast address timed out: no error (RFC 1122 §3.2.2). */
static void test_icmp_reassembly_timeout_of_broadcast_datagram_suppressed(void **state)
{
	(void)state;
	struct reass_params rp;
	reass_params_default(&rp);
	size_t n = unknown_proto_dgram(TS_HOST_A, TS_BCAST0, 3000);
	unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
	assert_true(k > 1);
	ts_input_ip(0, frags[0].data, frags[0].len);
	ts_advance(rp.timeout_ms);
	assert_int_equal(ts_nframes, 0);
	assert_int_equal(ts_s->drops[STACK_DROP_IP_REASS_TIMEOUT], 1);
	assert_int_equal(ts_s->drops[STACK_DROP_ICMP_ERROR_SUPPRESSED], 1);
}

/* Held fragments of several datagrams are freed by stack_destroy (the teardown counts). */
static void test_icmp_fragments_held_at_destroy_are_freed(void **state)
{
	(void)state;
	for (uint16_t id = 1; id <= 4; id++) {
		size_t n = ts_echo_dgram(dgram, sizeof(dgram), TS_HOST_A, TS_ADDR0, id, id, 4000);
		wire_put_be16(dgram + IP4_OFF_ID, id);
		ts_ip_fix_csum(dgram);
		unsigned k = ts_fragment(dgram, n, 1480, frags, 64);
		for (unsigned i = 0; i + 1 < k; i++)
			ts_input_ip(0, frags[i].data, frags[i].len);
	}
	assert_int_equal(ts_nframes, 0);
	ts_expect_no_drops();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, ts_setup, ts_teardown)
		T(test_icmp_echo_request_answered_with_reply),
		T(test_icmp_echo_request_empty_payload_answered),
		T(test_icmp_echo_reply_checksum_matches_full_recompute),
		T(test_icmp_echo_all_zero_reply_checksum_is_ffff),
		T(test_icmp_echo_request_tos_reflected),
		T(test_icmp_echo_with_ip_options_answered_without_options),
		T(test_icmp_echo_to_other_port_address_answered_from_it),
		T(test_icmp_echo_8000_bytes_in_fragments_answered_fragmented),
		T(test_icmp_echo_fragments_in_reverse_order_answered),
		T(test_icmp_echo_fragments_with_options_in_first_answered),
		T(test_icmp_echo_to_subnet_broadcast_ignored),
		T(test_icmp_echo_to_limited_broadcast_ignored),
		T(test_icmp_echo_to_other_port_broadcast_ignored),
		T(test_icmp_bad_checksum_dropped),
		T(test_icmp_truncated_message_dropped),
		T(test_icmp_unknown_type_dropped_unhandled),
		T(test_icmp_error_received_counted_not_answered),
		T(test_ping_send_emits_echo_request),
		T(test_ping_send_odd_and_zero_sizes_have_valid_checksums),
		T(test_ping_reply_recorded),
		T(test_ping_reply_with_other_seq_or_id_ignored),
		T(test_ping_duplicate_reply_keeps_first),
		T(test_ping_reply_without_ping_ignored),
		T(test_ping_large_request_fragmented_to_mtu),
		T(test_ping_max_size_sent_as_45_fragments),
		T(test_ping_oversized_returns_emsgsize),
		T(test_ping_without_route_returns_enetunreach),
		T(test_ping_own_address_answered_without_a_frame),
		T(test_ping_subnet_broadcast_sent_to_broadcast_mac),
		T(test_icmp_unknown_protocol_answered_protocol_unreachable),
		T(test_icmp_protocol_unreachable_quote_capped_at_576_bytes),
		T(test_icmp_protocol_unreachable_for_other_port_address_from_it),
		T(test_icmp_unknown_protocol_to_broadcast_not_answered),
		T(test_icmp_unknown_protocol_from_zero_source_not_answered),
		T(test_icmp_unknown_protocol_from_subnet_broadcast_source_not_answered),
		T(test_icmp_unknown_protocol_from_class_e_source_suppressed),
		T(test_icmp_unknown_protocol_in_link_broadcast_not_answered),
		T(test_icmp_unknown_protocol_reassembled_answered_quoting_it),
		T(test_icmp_errors_past_burst_rate_limited),
		T(test_icmp_rate_limit_refills_with_virtual_clock),
		T(test_icmp_rate_limit_does_not_apply_to_echo_replies),
		T(test_icmp_reassembly_timeout_with_first_fragment_time_exceeded),
		T(test_icmp_reassembly_timeout_without_first_fragment_silent),
		T(test_icmp_reassembly_timeout_of_broadcast_datagram_suppressed),
		T(test_icmp_fragments_held_at_destroy_are_freed),
#undef T
	};
	return cmocka_run_group_tests(tests, test_eal_group_setup, NULL);
}
