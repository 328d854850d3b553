/* The stack's interfaces as the library knows them (dps_links.c), and the interface ioctls
 * answered from them (dps_ifreq.c). */
#ifndef DPS_LIB_LINKS_H
#define DPS_LIB_LINKS_H

#include <stdbool.h>
#include <netinet/in.h>
#include <stdint.h>

#include "../../src/chan/chan_shm.h"

struct dps_attach;

/* A copy of the current table. 0 or -errno (-ENOTCONN: the daemon is gone). */
int dps_links_get(struct dps_attach *at, struct chan_links *out);
/* 1 when addr (network order) is 255.255.255.255 or the broadcast address of one of the
 * stack's subnets, 0 when not, -errno when the table cannot be had. */
int dps_links_is_broadcast(struct dps_attach *at, uint32_t addr);
/* sendmsg's IP_PKTINFO: 0 when addr (network order, 0: any) is one of the stack's
 * addresses and ifindex (0: any) one of its interfaces; else Linux's errno (-ENETUNREACH,
 * -EINVAL, -ENODEV), or -errno when the table cannot be had. */
int dps_links_check_source(struct dps_attach *at, uint32_t addr, uint32_t ifindex);
/* sendmsg's IPV6_PKTINFO, as Linux's ip6_datagram_send_ctl checks it: -ENODEV for an
 * ifindex (0: any) that is not one of the stack's interfaces; -EINVAL for a link-local addr
 * without one, or an addr (:: is any) that is not a usable address of the stack's (a
 * link-local one: on that interface); else 0, or -errno when the table cannot be had. */
int dps_links_check_source6(struct dps_attach *at, const struct in6_addr *addr,
			    uint32_t ifindex);
/* In a forked child: the lock a thread of the parent may have held is reset. */
void dps_links_after_fork(void);

/* --- dps_ifreq.c: pure, on a table whose addrs[].link are all below nlinks --- */
/* The same question against a given table (the limited broadcast is not in it). */
int dps_links_table_is_broadcast(const struct chan_links *t, uint32_t addr);
int dps_links_table_check_source(const struct chan_links *t, uint32_t addr, uint32_t ifindex);
int dps_links_table_check_source6(const struct chan_links *t, const struct in6_addr *addr,
				  uint32_t ifindex);
/* SIOCGIFCONF, SIOCGIFINDEX, SIOCGIFNAME, SIOCGIFHWADDR, SIOCGIFADDR, SIOCGIFNETMASK,
 * SIOCGIFBRDADDR, SIOCGIFFLAGS, SIOCGIFMTU. */
bool dps_ifreq_request(unsigned long req);
/* Answers one of them into arg (the library's copy of the struct ifreq, or struct ifconf
 * whose ifc_buf is the application's buffer): 0 or -errno. */
int dps_ifreq_answer(const struct chan_links *t, unsigned long req, void *arg);

#endif
