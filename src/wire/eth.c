/* Ethernet II headers with at most one VLAN tag (IEEE 802.3 §3.2.6, IEEE 802.1Q §9). */
#include "eth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"

/* Inside a tagged header: the tag protocol identifier sits at ETH_OFF_TYPE, then these. */
#define ETH_OFF_VLAN_TCI 14
#define ETH_OFF_VLAN_TYPE 16

const struct eth_addr eth_addr_broadcast = { { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };

static bool eth_type_is_tag(uint16_t type)
{
	return type == ETH_TYPE_VLAN || type == ETH_TYPE_QINQ;
}

enum wire_status eth_parse(const uint8_t *buf, size_t len, struct eth_repr *out)
{
	struct eth_repr r = { 0 };
	uint16_t type;

	if (len < ETH_HDR_LEN)
		return WIRE_TRUNCATED;
	memcpy(r.dst.b, buf + ETH_OFF_DST, ETH_ADDR_LEN);
	memcpy(r.src.b, buf + ETH_OFF_SRC, ETH_ADDR_LEN);
	type = wire_get_be16(buf + ETH_OFF_TYPE);
	r.hdr_len = ETH_HDR_LEN;

	if (eth_type_is_tag(type)) {
		if (len < ETH_HDR_LEN + ETH_VLAN_TAG_LEN)
			return WIRE_TRUNCATED;
		r.vlan_tagged = true;
		r.vlan_tci = wire_get_be16(buf + ETH_OFF_VLAN_TCI);
		type = wire_get_be16(buf + ETH_OFF_VLAN_TYPE);
		r.hdr_len = ETH_HDR_LEN + ETH_VLAN_TAG_LEN;
		/* Q-in-Q stacks are not terminated here: one tag at most. */
		if (eth_type_is_tag(type))
			return WIRE_BAD_FIELD;
	}
	/* Values below 0x0600 are 802.3 length fields (LLC frames), not EtherTypes. */
	if (type < ETH_TYPE_MIN)
		return WIRE_BAD_FIELD;
	r.ethertype = type;
	*out = r;
	return WIRE_OK;
}

size_t eth_build(uint8_t *buf, size_t cap, const struct eth_repr *repr)
{
	if (cap < ETH_HDR_LEN)
		return 0;
	memcpy(buf + ETH_OFF_DST, repr->dst.b, ETH_ADDR_LEN);
	memcpy(buf + ETH_OFF_SRC, repr->src.b, ETH_ADDR_LEN);
	wire_put_be16(buf + ETH_OFF_TYPE, repr->ethertype);
	return ETH_HDR_LEN;
}

bool eth_addr_is_broadcast(const struct eth_addr *a)
{
	return eth_addr_equal(a, &eth_addr_broadcast);
}

bool eth_addr_is_multicast(const struct eth_addr *a)
{
	return (a->b[0] & 0x01) != 0; /* I/G bit, the first bit on the wire */
}

bool eth_addr_is_zero(const struct eth_addr *a)
{
	static const struct eth_addr zero;

	return eth_addr_equal(a, &zero);
}

bool eth_addr_equal(const struct eth_addr *a, const struct eth_addr *b)
{
	return memcmp(a->b, b->b, ETH_ADDR_LEN) == 0;
}

char *eth_addr_format(const struct eth_addr *a, char *buf, size_t cap)
{
	snprintf(buf, cap, "%02x:%02x:%02x:%02x:%02x:%02x",
		 a->b[0], a->b[1], a->b[2], a->b[3], a->b[4], a->b[5]);
	return buf;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int eth_addr_parse(const char *s, struct eth_addr *out)
{
	struct eth_addr a;
	int i;

	for (i = 0; i < ETH_ADDR_LEN; i++) {
		int hi = hex_digit(*s), lo;

		if (hi < 0)
			return -EINVAL;
		s++;
		lo = hex_digit(*s);
		if (lo >= 0) {
			a.b[i] = (uint8_t)(hi << 4 | lo);
			s++;
		} else {
			a.b[i] = (uint8_t)hi;
		}
		if (i < ETH_ADDR_LEN - 1) {
			if (*s != ':')
				return -EINVAL;
			s++;
		}
	}
	if (*s != '\0')
		return -EINVAL;
	*out = a;
	return 0;
}
