/* DHCP messages (RFC 2131) and options (RFC 2132, RFC 3396). */
#include "dhcp.h"

#include <string.h>

#include "bytes.h"

const char *dhcp_msg_type_str(unsigned type)
{
	switch (type) {
#define DHCP_MSG_CASE(name, value, text) case value: return text;
	DHCP_MSG_LIST(DHCP_MSG_CASE)
#undef DHCP_MSG_CASE
	}
	return "unknown";
}

/* The fields that may hold options, in the order RFC 2131 §4.1 reads them: the options
 * field, then file, then sname when option 52 overloads them. */
struct dhcp_regions {
	const uint8_t *at[3];
	size_t len[3];
	unsigned n;
};

/* Walks one field: pads, then code/length/data triples up to END or the field's end. False
 * when a length byte or an option's data lies past the field, or (in file and sname) when
 * option 52 appears there, where RFC 2132 §9.3 does not allow it. */
static bool dhcp_region_valid(const uint8_t *b, size_t n, bool overload_allowed)
{
	size_t i = 0;
	while (i < n) {
		uint8_t code = b[i];
		if (code == DHCP_OPT_PAD) {
			i++;
			continue;
		}
		if (code == DHCP_OPT_END)
			return true;
		if (n - i < 2 || n - i - 2 < b[i + 1])
			return false;
		if (code == DHCP_OPT_OVERLOAD && !overload_allowed)
			return false;
		i += 2 + (size_t)b[i + 1];
	}
	return true; /* no END: the field ends the options (many servers omit it in file) */
}

/* Concatenates every instance of code in the (valid) regions into out (RFC 3396), at most cap
 * bytes. Returns the full length, which may exceed cap; -1 when code is absent. */
static long dhcp_opt_gather(const struct dhcp_regions *rg, uint8_t code, uint8_t *out, size_t cap)
{
	long total = -1;
	for (unsigned k = 0; k < rg->n; k++) {
		const uint8_t *b = rg->at[k];
		size_t n = rg->len[k], i = 0;
		while (i < n && b[i] != DHCP_OPT_END) {
			if (b[i] == DHCP_OPT_PAD) {
				i++;
				continue;
			}
			size_t l = b[i + 1];
			if (b[i] == code) {
				size_t have = total < 0 ? 0 : (size_t)total;
				if (have < cap)
					memcpy(out + have, b + i + 2, l < cap - have ? l : cap - have);
				total = (long)(have + l);
			}
			i += 2 + l;
		}
	}
	return total;
}

/* A fixed-size option: absent (false, fine), exactly len bytes (true), or *bad. */
static bool dhcp_opt_fixed(const struct dhcp_regions *rg, uint8_t code, uint8_t *out, size_t len,
			   bool *bad)
{
	uint8_t buf[8];
	long n = dhcp_opt_gather(rg, code, buf, sizeof(buf));
	if (n < 0)
		return false;
	if ((size_t)n != len) {
		*bad = true;
		return false;
	}
	memcpy(out, buf, len);
	return true;
}

static bool dhcp_opt_u32(const struct dhcp_regions *rg, uint8_t code, uint32_t *v, bool *bad)
{
	uint8_t b[4];
	if (!dhcp_opt_fixed(rg, code, b, 4, bad))
		return false;
	*v = wire_get_be32(b);
	return true;
}

static bool dhcp_opt_u16(const struct dhcp_regions *rg, uint8_t code, uint16_t *v, bool *bad)
{
	uint8_t b[2];
	if (!dhcp_opt_fixed(rg, code, b, 2, bad))
		return false;
	*v = wire_get_be16(b);
	return true;
}

/* A list of addresses (options 3, 6): a non-zero multiple of 4 bytes (RFC 2132 §3.5, §3.8);
 * the first cap entries are kept. */
static uint8_t dhcp_opt_addrs(const struct dhcp_regions *rg, uint8_t code, uint32_t *out,
			      unsigned cap, bool *bad)
{
	uint8_t buf[DHCP_MAX_DNS > DHCP_MAX_ROUTERS ? DHCP_MAX_DNS * 4 : DHCP_MAX_ROUTERS * 4];
	long n = dhcp_opt_gather(rg, code, buf, sizeof(buf));
	if (n < 0)
		return 0;
	if (n == 0 || n % 4 != 0) {
		*bad = true;
		return 0;
	}
	unsigned k = 0;
	for (; k < cap && (long)k * 4 < n; k++)
		out[k] = wire_get_be32(buf + 4 * k);
	return (uint8_t)k;
}

/* Option 56: a text for people; what a log could not print is replaced. */
static void dhcp_opt_message(const struct dhcp_regions *rg, char *out)
{
	uint8_t buf[DHCP_MESSAGE_MAX];
	long n = dhcp_opt_gather(rg, DHCP_OPT_MESSAGE, buf, sizeof(buf));
	size_t k = 0;
	for (; n > 0 && k < (size_t)n && k < sizeof(buf); k++)
		out[k] = buf[k] >= 0x20 && buf[k] < 0x7f ? (char)buf[k] : '?';
	out[k] = '\0';
}

/* RFC 950: the one bits of a mask are contiguous from the top. */
static bool mask_contiguous(uint32_t m)
{
	return (~m & (~m + 1)) == 0;
}

/* The options of r once the fixed fields were read; false when one is malformed. */
static bool dhcp_parse_options(const struct dhcp_regions *rg, struct dhcp_repr *r)
{
	bool bad = false;
	uint8_t b;
	if (dhcp_opt_fixed(rg, DHCP_OPT_MSG_TYPE, &b, 1, &bad))
		r->msg_type = b;
	dhcp_opt_u32(rg, DHCP_OPT_SERVER_ID, &r->server_id, &bad);
	dhcp_opt_u32(rg, DHCP_OPT_REQUESTED_IP, &r->requested_ip, &bad);
	if (dhcp_opt_u32(rg, DHCP_OPT_SUBNET_MASK, &r->subnet_mask, &bad)) {
		r->has |= DHCP_HAS_SUBNET_MASK;
		bad |= !mask_contiguous(r->subnet_mask);
	}
	if (dhcp_opt_u32(rg, DHCP_OPT_LEASE_TIME, &r->lease_time, &bad))
		r->has |= DHCP_HAS_LEASE_TIME;
	if (dhcp_opt_u32(rg, DHCP_OPT_T1, &r->t1, &bad))
		r->has |= DHCP_HAS_T1;
	if (dhcp_opt_u32(rg, DHCP_OPT_T2, &r->t2, &bad))
		r->has |= DHCP_HAS_T2;
	if (dhcp_opt_u16(rg, DHCP_OPT_MTU, &r->mtu, &bad)) {
		r->has |= DHCP_HAS_MTU;
		bad |= r->mtu < 68; /* RFC 2132 §5.1: "The minimum legal value for the MTU is 68" */
	}
	if (dhcp_opt_u16(rg, DHCP_OPT_MAX_MSG_SIZE, &r->max_msg_size, &bad))
		bad |= r->max_msg_size < DHCP_MIN_MAX_MSG; /* RFC 2132 §9.10 */
	r->nb_routers = dhcp_opt_addrs(rg, DHCP_OPT_ROUTER, r->routers, DHCP_MAX_ROUTERS, &bad);
	r->nb_dns = dhcp_opt_addrs(rg, DHCP_OPT_DNS, r->dns, DHCP_MAX_DNS, &bad);
	dhcp_opt_message(rg, r->message);
	return !bad;
}

enum wire_status dhcp_parse(const uint8_t *buf, size_t len, struct dhcp_repr *out)
{
	struct dhcp_repr r;
	if (len < DHCP_MIN_LEN)
		return WIRE_TRUNCATED;
	memset(&r, 0, sizeof(r));
	r.op = buf[DHCP_OFF_OP];
	if ((r.op != DHCP_OP_REQUEST && r.op != DHCP_OP_REPLY) ||
	    buf[DHCP_OFF_HLEN] > DHCP_CHADDR_LEN)
		return WIRE_BAD_FIELD;
	if (wire_get_be32(buf + DHCP_OFF_COOKIE) != DHCP_MAGIC)
		return WIRE_BAD_FIELD;
	r.xid = wire_get_be32(buf + DHCP_OFF_XID);
	r.secs = wire_get_be16(buf + DHCP_OFF_SECS);
	r.flags = wire_get_be16(buf + DHCP_OFF_FLAGS);
	r.ciaddr = wire_get_be32(buf + DHCP_OFF_CIADDR);
	r.yiaddr = wire_get_be32(buf + DHCP_OFF_YIADDR);
	r.siaddr = wire_get_be32(buf + DHCP_OFF_SIADDR);
	r.giaddr = wire_get_be32(buf + DHCP_OFF_GIADDR);
	r.chaddr_ether = buf[DHCP_OFF_HTYPE] == DHCP_HTYPE_ETHER && buf[DHCP_OFF_HLEN] == ETH_ADDR_LEN;
	if (r.chaddr_ether)
		memcpy(r.chaddr.b, buf + DHCP_OFF_CHADDR, ETH_ADDR_LEN);

	struct dhcp_regions rg = {.at = {buf + DHCP_OFF_OPTIONS}, .len = {len - DHCP_OFF_OPTIONS},
				  .n = 1};
	if (!dhcp_region_valid(rg.at[0], rg.len[0], true))
		return WIRE_BAD_OPTION;
	uint8_t overload = 0;
	bool bad = false;
	if (dhcp_opt_fixed(&rg, DHCP_OPT_OVERLOAD, &overload, 1, &bad) &&
	    (overload < 1 || overload > 3))
		return WIRE_BAD_OPTION;
	if (bad)
		return WIRE_BAD_OPTION;
	/* RFC 2132 §9.3: 1 file, 2 sname, 3 both; file is read before sname (RFC 2131 §4.1). */
	if (overload & 1) {
		rg.at[rg.n] = buf + DHCP_OFF_FILE;
		rg.len[rg.n++] = DHCP_FILE_LEN;
	}
	if (overload & 2) {
		rg.at[rg.n] = buf + DHCP_OFF_SNAME;
		rg.len[rg.n++] = DHCP_SNAME_LEN;
	}
	for (unsigned k = 1; k < rg.n; k++)
		if (!dhcp_region_valid(rg.at[k], rg.len[k], false))
			return WIRE_BAD_OPTION;
	if (!dhcp_parse_options(&rg, &r))
		return WIRE_BAD_OPTION;
	if (r.msg_type < DHCP_DISCOVER || r.msg_type > DHCP_INFORM)
		return WIRE_BAD_FIELD;
	*out = r;
	return WIRE_OK;
}

/* Appends option code with len bytes of data at *at, if it fits before the END byte. */
static bool dhcp_put_opt(uint8_t *buf, size_t cap, size_t *at, uint8_t code, const void *data,
			 uint8_t len)
{
	if (cap - *at < (size_t)len + 3) /* + code, length and the END that follows */
		return false;
	buf[*at] = code;
	buf[*at + 1] = len;
	memcpy(buf + *at + 2, data, len);
	*at += 2 + (size_t)len;
	return true;
}

static bool dhcp_put_u32(uint8_t *buf, size_t cap, size_t *at, uint8_t code, uint32_t v)
{
	uint8_t b[4];
	wire_put_be32(b, v);
	return dhcp_put_opt(buf, cap, at, code, b, 4);
}

size_t dhcp_build_request(uint8_t *buf, size_t cap, const struct dhcp_repr *r)
{
	/* What the lease needs (RFC 2132 §9.8), in the order dhclient asks. */
	static const uint8_t params[] = {
		DHCP_OPT_SUBNET_MASK, DHCP_OPT_ROUTER, DHCP_OPT_DNS, DHCP_OPT_DOMAIN,
		DHCP_OPT_MTU, DHCP_OPT_LEASE_TIME, DHCP_OPT_SERVER_ID, DHCP_OPT_T1, DHCP_OPT_T2,
	};
	if (cap < DHCP_BOOTP_MIN_LEN)
		return 0;
	memset(buf, 0, DHCP_BOOTP_MIN_LEN);
	buf[DHCP_OFF_OP] = DHCP_OP_REQUEST;
	buf[DHCP_OFF_HTYPE] = DHCP_HTYPE_ETHER;
	buf[DHCP_OFF_HLEN] = ETH_ADDR_LEN;
	wire_put_be32(buf + DHCP_OFF_XID, r->xid);
	wire_put_be16(buf + DHCP_OFF_SECS, r->secs);
	wire_put_be16(buf + DHCP_OFF_FLAGS, r->flags);
	wire_put_be32(buf + DHCP_OFF_CIADDR, r->ciaddr);
	memcpy(buf + DHCP_OFF_CHADDR, r->chaddr.b, ETH_ADDR_LEN);
	wire_put_be32(buf + DHCP_OFF_COOKIE, DHCP_MAGIC);

	size_t at = DHCP_OFF_OPTIONS;
	uint8_t client_id[1 + ETH_ADDR_LEN] = {DHCP_HTYPE_ETHER};
	memcpy(client_id + 1, r->chaddr.b, ETH_ADDR_LEN);
	bool ok = dhcp_put_opt(buf, cap, &at, DHCP_OPT_MSG_TYPE, &r->msg_type, 1) &&
		  dhcp_put_opt(buf, cap, &at, DHCP_OPT_CLIENT_ID, client_id, sizeof(client_id));
	if (ok && r->requested_ip != 0)
		ok = dhcp_put_u32(buf, cap, &at, DHCP_OPT_REQUESTED_IP, r->requested_ip);
	if (ok && r->server_id != 0)
		ok = dhcp_put_u32(buf, cap, &at, DHCP_OPT_SERVER_ID, r->server_id);
	if (ok && r->max_msg_size != 0) {
		uint8_t b[2];
		wire_put_be16(b, r->max_msg_size);
		ok = dhcp_put_opt(buf, cap, &at, DHCP_OPT_MAX_MSG_SIZE, b, 2);
	}
	if (ok && r->msg_type != DHCP_RELEASE && r->msg_type != DHCP_DECLINE)
		ok = dhcp_put_opt(buf, cap, &at, DHCP_OPT_PARAM_LIST, params, sizeof(params));
	if (!ok)
		return 0;
	buf[at++] = DHCP_OPT_END;
	if (at < DHCP_BOOTP_MIN_LEN)
		return DHCP_BOOTP_MIN_LEN; /* zeroed above: pads */
	return at;
}
