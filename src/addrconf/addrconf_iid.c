/* Interface identifiers of the addresses SLAAC forms: the modified EUI-64 of the port's MAC
 * (RFC 4291 App. A), the same on every network, or RFC 7217's stable privacy identifier,
 * stable on one network and unrelated across networks, so that the address neither tracks
 * the host from network to network nor reveals its MAC (RFC 7721). */
#include <errno.h>
#include <string.h>

#include "addrconf.h"
#include "base/siphash.h"

static const char *const addrgen_names[] = {
#define ADDRCONF_ADDRGEN_NAME(name, text) text,
	ADDRCONF_ADDRGEN_LIST(ADDRCONF_ADDRGEN_NAME)
#undef ADDRCONF_ADDRGEN_NAME
};

#define ADDRGEN_COUNT (sizeof(addrgen_names) / sizeof(addrgen_names[0]))

const char *addrconf_addrgen_str(enum addrconf_addrgen g)
{
	return (unsigned)g < ADDRGEN_COUNT ? addrgen_names[g] : "?";
}

int addrconf_addrgen_parse(const char *name, enum addrconf_addrgen *out)
{
	for (unsigned i = 0; i < ADDRGEN_COUNT; i++) {
		if (strcmp(name, addrgen_names[i]) == 0) {
			*out = (enum addrconf_addrgen)i;
			return 0;
		}
	}
	return -EINVAL;
}

void addrconf_set_addrgen(struct addrconf_port *p, enum addrconf_addrgen mode,
			  const uint8_t *secret, const char *ifname)
{
	p->addrgen = mode;
	if (secret != NULL)
		memcpy(p->secret, secret, ADDRCONF_SECRET_LEN);
	if (ifname != NULL) {
		strncpy(p->ifname, ifname, sizeof(p->ifname) - 1);
		p->ifname[sizeof(p->ifname) - 1] = '\0';
	}
}

/* RFC 5453 §3: identifiers reserved for anycast (the subnet-router one, all zeros, and the
 * 128 at the top of the range) and for the IANA's EUI-64 block 0200:5EFF:FExx:xxxx. */
static bool iid_reserved(uint64_t iid)
{
	return iid == 0 || iid >= 0xfdffffffffffff80ull || (iid >> 24) == 0x02005efffeull;
}

/* RFC 7217 §5: RID = F(Prefix, Net_Iface, Network_ID, DAD_Counter, secret_key), with F a
 * keyed PRF. SipHash-2-4 keyed with the 128-bit secret is one (the RFC names SHA-1 and
 * SHA-256 as examples, not as requirements), and gives the 64 bits needed. Network_ID is
 * optional and left out: the prefix already differs per network. */
static uint64_t iid_stable(const struct addrconf_port *p, const struct ip6_addr *prefix,
			   uint8_t dad_counter)
{
	uint8_t msg[8 + ADDRCONF_IFNAME_LEN + 1];
	size_t n = strnlen(p->ifname, ADDRCONF_IFNAME_LEN);
	memcpy(msg, prefix->b, 8);
	memcpy(msg + 8, p->ifname, n);
	msg[8 + n] = dad_counter;
	struct siphash_key k = {0, 0};
	for (unsigned i = 0; i < 8; i++) {
		k.k0 |= (uint64_t)p->secret[i] << (8 * i);
		k.k1 |= (uint64_t)p->secret[8 + i] << (8 * i);
	}
	return siphash24(&k, msg, 8 + n + 1);
}

void addrconf_iid_form(const struct addrconf_port *p, struct ip6_addr *addr,
		       uint8_t dad_counter)
{
	if (p->addrgen == ADDRCONF_ADDRGEN_EUI64) {
		ip6_set_eui64(addr, p->mac);
		return;
	}
	/* A reserved result (a chance of 2^-57) moves on to the next counter's, as a
	 * duplicate would. */
	uint64_t iid = iid_stable(p, addr, dad_counter);
	for (unsigned k = 1; iid_reserved(iid); k++)
		iid = iid_stable(p, addr, (uint8_t)(dad_counter + k));
	for (unsigned i = 0; i < 8; i++)
		addr->b[8 + i] = (uint8_t)(iid >> (56 - 8 * i));
}
