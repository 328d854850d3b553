/* libFuzzer target: dhcp_parse on arbitrary UDP payloads (a hostile server's or relay's
 * messages), against invariants read from the bytes themselves; then a request built from
 * what was parsed must parse back to the same fields. */
#include <string.h>

#include "bytes.h"
#include "dhcp.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dhcp_repr r, back;
	enum wire_status st = dhcp_parse(data, size, &r);
	if (size < DHCP_MIN_LEN) {
		FUZZ_CHECK(st == WIRE_TRUNCATED);
		return 0;
	}
	if (data[DHCP_OFF_OP] < DHCP_OP_REQUEST || data[DHCP_OFF_OP] > DHCP_OP_REPLY ||
	    data[DHCP_OFF_HLEN] > DHCP_CHADDR_LEN ||
	    wire_get_be32(data + DHCP_OFF_COOKIE) != DHCP_MAGIC) {
		FUZZ_CHECK(st == WIRE_BAD_FIELD);
		return 0;
	}
	if (st != WIRE_OK)
		return 0;
	FUZZ_CHECK(r.msg_type >= DHCP_DISCOVER && r.msg_type <= DHCP_INFORM);
	FUZZ_CHECK(r.xid == wire_get_be32(data + DHCP_OFF_XID));
	FUZZ_CHECK(r.yiaddr == wire_get_be32(data + DHCP_OFF_YIADDR));
	FUZZ_CHECK(r.nb_routers <= DHCP_MAX_ROUTERS && r.nb_dns <= DHCP_MAX_DNS);
	FUZZ_CHECK(strlen(r.message) <= DHCP_MESSAGE_MAX);
	for (const char *c = r.message; *c != '\0'; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	if (r.has & DHCP_HAS_MTU)
		FUZZ_CHECK(r.mtu >= 68);
	if (r.has & DHCP_HAS_SUBNET_MASK)
		FUZZ_CHECK((~r.subnet_mask & (~r.subnet_mask + 1)) == 0);
	FUZZ_CHECK(r.max_msg_size == 0 || r.max_msg_size >= DHCP_MIN_MAX_MSG);

	/* What a client would send back from it (its chaddr as the client's MAC). */
	uint8_t out[600];
	struct dhcp_repr req = {.xid = r.xid, .secs = r.secs, .flags = r.flags,
				.ciaddr = r.ciaddr, .chaddr = r.chaddr, .msg_type = r.msg_type,
				.requested_ip = r.requested_ip, .server_id = r.server_id,
				.max_msg_size = r.max_msg_size};
	size_t n = dhcp_build_request(out, sizeof(out), &req);
	FUZZ_CHECK(n >= DHCP_BOOTP_MIN_LEN);
	FUZZ_CHECK(dhcp_parse(out, n, &back) == WIRE_OK);
	FUZZ_CHECK(back.op == DHCP_OP_REQUEST && back.xid == r.xid && back.secs == r.secs &&
		   back.flags == r.flags && back.ciaddr == r.ciaddr &&
		   back.msg_type == r.msg_type && back.requested_ip == r.requested_ip &&
		   back.server_id == r.server_id && back.max_msg_size == r.max_msg_size &&
		   back.chaddr_ether && memcmp(back.chaddr.b, r.chaddr.b, ETH_ADDR_LEN) == 0);
	return 0;
}
