/* The interface ioctls on a stack socket, answered from the stack's table of interfaces as
 * Linux answers them from its devices (net/core/dev_ioctl.c, net/ipv4/devinet.c): a name
 * the stack does not have is ENODEV, an interface without an IPv4 address EADDRNOTAVAIL.
 * Pure: the table comes from dps_links.c. */
#include <errno.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/ioctl.h>

#include "dps_links.h"
#include "dps_ucopy.h"

bool dps_ifreq_request(unsigned long req)
{
	switch (req) {
	case SIOCGIFCONF: case SIOCGIFINDEX: case SIOCGIFNAME: case SIOCGIFHWADDR:
	case SIOCGIFADDR: case SIOCGIFNETMASK: case SIOCGIFBRDADDR: case SIOCGIFFLAGS:
	case SIOCGIFMTU:
		return true;
	default:
		return false;
	}
}

static uint32_t dps_plen_mask(unsigned plen)
{
	return plen == 0 ? 0 : htonl(~0u << (32 - plen));
}

int dps_links_table_is_broadcast(const struct chan_links *t, uint32_t addr)
{
	for (unsigned i = 0; i < t->naddrs && i < CHAN_LINK_ADDRS_MAX; i++) {
		unsigned plen = t->addrs[i].plen;
		if (plen == 0 || plen >= 31) /* RFC 3021: a /31 has no broadcast address */
			continue;
		uint32_t mask = dps_plen_mask(plen);
		if (addr == ((t->addrs[i].addr & mask) | ~mask))
			return 1;
	}
	return 0;
}

int dps_links_table_check_source(const struct chan_links *t, uint32_t addr, uint32_t ifindex)
{
	bool link_found = ifindex == 0, addr_found = addr == 0;
	for (unsigned i = 0; i < t->nlinks; i++)
		link_found |= t->links[i].ifindex == ifindex;
	for (unsigned i = 0; i < t->naddrs; i++)
		addr_found |= t->addrs[i].addr == addr;
	/* Linux's ip_route_output_key_hash_rcu, in its order: a multicast or broadcast source
	 * is EINVAL, one that is not ours ENETUNREACH, then an unknown interface ENODEV. */
	uint32_t a = ntohl(addr);
	if (!addr_found)
		return (a >> 28) == 0xe || a == 0xffffffffu ? -EINVAL : -ENETUNREACH;
	return link_found ? 0 : -ENODEV;
}

int dps_links_table_check_source6(const struct chan_links *t, const struct in6_addr *addr,
				  uint32_t ifindex)
{
	int link = -1;
	for (unsigned i = 0; i < t->nlinks && ifindex != 0; i++)
		if (t->links[i].ifindex == ifindex)
			link = (int)i;
	if (ifindex != 0 && link < 0)
		return -ENODEV;
	/* A link-local source means nothing without its link (RFC 4007 §6). */
	bool link_local = IN6_IS_ADDR_LINKLOCAL(addr);
	if (ifindex == 0 && link_local)
		return -EINVAL;
	if (IN6_IS_ADDR_UNSPECIFIED(addr))
		return 0;
	for (unsigned i = 0; i < t->naddrs6; i++) {
		const struct chan_link_addr6 *a = &t->addrs6[i];
		if (a->usable && memcmp(a->addr.b, addr->s6_addr, 16) == 0 &&
		    (!link_local || a->link == link))
			return 0;
	}
	return -EINVAL;
}

static void dps_put_sin(struct sockaddr *sa, uint32_t addr)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = addr};
	memcpy(sa, &sin, sizeof(sin));
}

/* Linux's inet_gifconf: one ifreq per address, named after its interface; without a buffer
 * only the length needed; else as many whole entries as fit, into the application's buffer
 * (EFAULT when it cannot be written). */
static int dps_ifconf(const struct chan_links *t, struct ifconf *ic)
{
	if (ic->ifc_len < 0)
		return -EINVAL;
	size_t room = (size_t)ic->ifc_len, used = 0;
	for (unsigned i = 0; i < t->naddrs; i++) {
		if (ic->ifc_buf == NULL) {
			used += sizeof(struct ifreq);
			continue;
		}
		if (room - used < sizeof(struct ifreq))
			break;
		struct ifreq r;
		memset(&r, 0, sizeof(r));
		memcpy(r.ifr_name, t->links[t->addrs[i].link].name, IFNAMSIZ);
		dps_put_sin(&r.ifr_addr, t->addrs[i].addr);
		if (dps_put_user(ic->ifc_buf + used, &r, sizeof(r)) < 0)
			return -EFAULT;
		used += sizeof(r);
	}
	ic->ifc_len = (int)used;
	return 0;
}

static const struct chan_link *dps_link_named(const struct chan_links *t, const char *name)
{
	for (unsigned i = 0; i < t->nlinks; i++)
		if (strncmp(t->links[i].name, name, IFNAMSIZ) == 0)
			return &t->links[i];
	return NULL;
}

/* The interface's first address (Linux: the primary one). */
static const struct chan_link_addr *dps_link_addr(const struct chan_links *t,
						  const struct chan_link *l)
{
	for (unsigned i = 0; i < t->naddrs; i++)
		if (&t->links[t->addrs[i].link] == l)
			return &t->addrs[i];
	return NULL;
}

int dps_ifreq_answer(const struct chan_links *t, unsigned long req, void *arg)
{
	if (req == SIOCGIFCONF)
		return dps_ifconf(t, arg);
	struct ifreq r;
	memcpy(&r, arg, sizeof(r));
	r.ifr_name[IFNAMSIZ - 1] = '\0';
	const struct chan_link *l = NULL;
	if (req == SIOCGIFNAME) {
		for (unsigned i = 0; i < t->nlinks && l == NULL; i++)
			if ((int)t->links[i].ifindex == r.ifr_ifindex)
				l = &t->links[i];
	} else {
		l = dps_link_named(t, r.ifr_name);
	}
	if (l == NULL)
		return -ENODEV;
	const struct chan_link_addr *a = dps_link_addr(t, l);
	uint32_t mask;
	switch (req) {
	case SIOCGIFNAME:
		memcpy(r.ifr_name, l->name, IFNAMSIZ);
		break;
	case SIOCGIFINDEX:
		r.ifr_ifindex = (int)l->ifindex;
		break;
	case SIOCGIFHWADDR:
		memset(&r.ifr_hwaddr, 0, sizeof(r.ifr_hwaddr));
		r.ifr_hwaddr.sa_family = ARPHRD_ETHER;
		memcpy(r.ifr_hwaddr.sa_data, l->mac, sizeof(l->mac));
		break;
	case SIOCGIFFLAGS:
		/* Ethernet ports that broadcast; no IFF_MULTICAST, since the stack does not do
		 * multicast. Carrier is not told apart from the administrative state. */
		r.ifr_flags = (short)(IFF_BROADCAST | (l->up ? IFF_UP | IFF_RUNNING : 0));
		break;
	case SIOCGIFMTU:
		r.ifr_mtu = l->mtu;
		break;
	case SIOCGIFADDR:
	case SIOCGIFNETMASK:
	case SIOCGIFBRDADDR:
		if (a == NULL)
			return -EADDRNOTAVAIL;
		mask = dps_plen_mask(a->plen);
		/* The stack has the subnet's broadcast route for prefixes shorter than /31
		 * (as `ip addr add ... brd +`); none otherwise. */
		dps_put_sin(&r.ifr_addr, req == SIOCGIFADDR ? a->addr
					 : req == SIOCGIFNETMASK ? mask
					 : a->plen < 31 ? (a->addr & mask) | ~mask : 0);
		break;
	default:
		return -ENOTTY;
	}
	memcpy(arg, &r, sizeof(r));
	return 0;
}
