#include "cluster_hash.h"

#include <string.h>

#define ETH_HLEN 14
#define ETH_P_IPV4 0x0800
#define ETH_P_IPV6 0x86dd
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88a8
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IPPROTO_SCTP_ 132

static const char *const cluster_hash_names[] = {
#define CLUSTER_HASH_NAME(e, name) [e] = name,
	CLUSTER_HASH_LIST(CLUSTER_HASH_NAME)
#undef CLUSTER_HASH_NAME
};

const char *cluster_hash_name(enum cluster_hash_kind k)
{
	return k < CLUSTER_HASH_COUNT ? cluster_hash_names[k] : "?";
}

int cluster_hash_parse(const char *name)
{
	for (int k = 0; k < CLUSTER_HASH_COUNT; k++)
		if (strcmp(name, cluster_hash_names[k]) == 0)
			return k;
	return -1;
}

uint32_t cluster_fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t mac_fold(const uint8_t *m)
{
	return rd16(m) ^ rd32(m + 2);
}

/* What the IP hashes need of a datagram. */
struct flow_fields {
	uint32_t a, b;          /* the addresses (IPv6: folded) */
	uint32_t ports;         /* sport + dport, 0 when the datagram has none to use */
	uint8_t proto;
};

static uint32_t fold128(const uint8_t *a)
{
	return rd32(a) ^ rd32(a + 4) ^ rd32(a + 8) ^ rd32(a + 12);
}

/* sport + dport of a transport that has them, into *ports (left as is otherwise). */
static void ports_of(uint8_t proto, const uint8_t *l4, size_t left, uint32_t *ports)
{
	if ((proto == IPPROTO_TCP_ || proto == IPPROTO_UDP_ || proto == IPPROTO_SCTP_) && left >= 4)
		*ports = rd16(l4) + rd16(l4 + 2);
}

/* Fills f from the IP header at ip (left bytes); returns -1 when there is none. */
static int flow_parse(uint32_t type, const uint8_t *ip, size_t left, struct flow_fields *f)
{
	memset(f, 0, sizeof(*f));
	if (type == ETH_P_IPV4) {
		if (left < IPV4_HLEN || ip[0] >> 4 != 4)
			return -1;
		size_t ihl = (size_t)(ip[0] & 0xf) * 4;
		f->a = rd32(ip + 12);
		f->b = rd32(ip + 16);
		f->proto = ip[9];
		uint32_t frag = rd16(ip + 6) & 0x3fff; /* MF and the offset */
		if (frag == 0 && ihl >= IPV4_HLEN && ihl <= left)
			ports_of(f->proto, ip + ihl, left - ihl, &f->ports);
		return 0;
	}
	if (type == ETH_P_IPV6) {
		if (left < IPV6_HLEN || ip[0] >> 4 != 6)
			return -1;
		f->a = fold128(ip + 8);
		f->b = fold128(ip + 24);
		f->proto = ip[6];
		ports_of(f->proto, ip + IPV6_HLEN, left - IPV6_HLEN, &f->ports);
		return 0;
	}
	return -1;
}

uint32_t cluster_hash_frame(enum cluster_hash_kind k, const uint8_t *frame, size_t len)
{
	if (len < ETH_HLEN)
		return 0;
	if (k == CLUSTER_HASH_MAC)
		return cluster_fmix32(mac_fold(frame) + mac_fold(frame + 6));
	size_t at = ETH_HLEN;
	uint32_t type = rd16(frame + 12);
	for (int tags = 0; tags < 2 && (type == ETH_P_8021Q || type == ETH_P_8021AD); tags++) {
		if (len < at + 4)
			return 0;
		type = rd16(frame + at + 2);
		at += 4;
	}
	struct flow_fields f;
	if (flow_parse(type, frame + at, len - at, &f) != 0)
		return 0;
	switch (k) {
	case CLUSTER_HASH_PROTO:
		return f.proto;
	case CLUSTER_HASH_IP:
		return cluster_fmix32(f.a + f.b);
	case CLUSTER_HASH_5TUPLE:
		return cluster_fmix32(cluster_fmix32(f.a + f.b) ^ (f.ports << 8 | f.proto));
	default:
		return 0;
	}
}
