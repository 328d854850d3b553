/* What the parts of the kernel sync share (kernel_sync.h): kernel_sync.c listens, reads
 * the news and rereads the tables; kernel_sync_addr.c mirrors addresses;
 * kernel_sync_route.c keeps the kernel's routes and mirrors the best of each prefix. */
#ifndef DPS_CTL_KERNEL_SYNC_PRIV_H
#define DPS_CTL_KERNEL_SYNC_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "kernel_sync.h"
#include "wire/ipv6.h"

struct daemon;

union sync_ip {
	uint32_t v4;              /* host order */
	struct ip6_addr v6;
};

/* A kernel route on a kernel interface: its key is (family, dst, plen, metric). */
struct sync_route {
	uint8_t family;
	uint8_t plen;
	uint8_t proto;            /* rtm_protocol */
	bool has_gw;
	bool refused;             /* the stack refused it: counted and logged once */
	bool conflict;            /* a user's route is there: counted once */
	uint16_t port;
	uint16_t mtu;
	uint32_t metric;
	union sync_ip dst, gw, src; /* src all zero: no prefsrc */
};

/* A usable address of a kernel interface. */
struct sync_addr {
	uint8_t family;
	uint8_t plen;
	uint16_t port;
	union sync_ip ip;
};

/* The port whose kernel interface has ifindex, or -1. */
int sync_port_of(const struct kernel_sync *s, unsigned ifindex);
void sync_ip_format(uint8_t family, const union sync_ip *ip, char *buf, size_t cap);
/* Reads an address attribute of family into ip (host order for IPv4); false when short. */
bool sync_ip_get(uint8_t family, const struct rtattr *a, union sync_ip *ip);
/* Counts and logs what the stack refused (what: the address or route, rc its -errno). */
void sync_refused(struct daemon *d, const char *what, int rc);
/* An array v of *cap elements of elem bytes, n of them used, with room for one more:
 * v itself or a larger copy (*cap doubled); NULL when out of memory (v is unchanged). */
void *sync_grow(void *v, unsigned n, unsigned *cap, size_t elem);

/* Addresses (kernel_sync_addr.c). */
bool sync_addr_parse(const struct kernel_sync *s, const struct nlmsghdr *h,
		     struct sync_addr *a, bool *usable);
void sync_addr_add(struct daemon *d, const struct sync_addr *a);
void sync_addr_del(struct daemon *d, const struct sync_addr *a);
/* Mirrors every address the kernel has and removes the mirrored ones it has not. */
void sync_reread_addrs(struct daemon *d);

/* Routes (kernel_sync_route.c). */
/* Tries again the kernel routes the stack refused (an address came that may connect
 * their gateway). */
void sync_routes_retry(struct daemon *d);
/* An RTM_NEWROUTE or RTM_DELROUTE. */
void sync_route_news(struct daemon *d, const struct nlmsghdr *h);
/* Reads every kernel route anew, mirrors them and removes the mirrored ones that went. */
void sync_reread_routes(struct daemon *d);

#endif
