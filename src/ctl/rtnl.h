/* rtnetlink (NETLINK_ROUTE, rtnetlink(7)) from the control thread: a socket, requests with
 * their acknowledgement, and the attributes of the messages the kernel sends. Plain
 * sockets and the kernel's own macros (linux/rtnetlink.h): the few messages dpstackd reads
 * and writes do not need a library. Used by the kernel sync (kernel_sync.h) and by the
 * kernel interface following its port (kernel_follow.h). */
#ifndef DPS_CTL_RTNL_H
#define DPS_CTL_RTNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

/* The longest datagram the kernel sends a listener: NLMSG_GOODSIZE is a page, a dump
 * fills up to 32 KiB (netlink_dump's min allocation), so read with room for both. */
#define RTNL_BUF 65536

/* A nonblocking NETLINK_ROUTE socket joined to groups (RTMGRP_* bits; 0 for requests
 * only), with a receive buffer of rcvbuf bytes (SO_RCVBUFFORCE as root, so a burst of
 * routes from a routing daemon fits). Returns the descriptor or -errno. */
int rtnl_open(uint32_t groups, int rcvbuf);

/* Sends the request nlh (NLM_F_REQUEST|NLM_F_ACK set here, sequence numbered) on fd and
 * waits for its acknowledgement. Returns 0 or the kernel's -errno. */
int rtnl_request(int fd, struct nlmsghdr *nlh);

/* Asks for a dump of type (RTM_GETADDR, RTM_GETROUTE) of family on fd and calls fn with
 * each message of the answer. Returns 0 or -errno. */
int rtnl_dump(int fd, uint16_t type, uint8_t family,
	      void (*fn)(const struct nlmsghdr *nlh, void *arg), void *arg);

/* Appends attribute type with len bytes of data to nlh, which has room for cap bytes.
 * Returns 0 or -ENOSPC. */
int rtnl_attr_put(struct nlmsghdr *nlh, size_t cap, uint16_t type, const void *data,
		  size_t len);

/* Fills tb[0..max] with the attributes of the run rta..len (later duplicates win, unknown
 * types past max ignored). */
void rtnl_attrs_parse(struct rtattr *tb[], unsigned max, struct rtattr *rta, int len);

/* A u32 attribute's value, or def when absent or short. */
uint32_t rtnl_attr_u32(const struct rtattr *a, uint32_t def);

/* RTM_SETLINK on the interface named ifname in this network namespace: its MTU (0 leaves
 * it) and, when set_carrier, its carrier (IFLA_CARRIER: the tap driver lets the side that
 * holds it say whether the link works, as a NIC's PHY does). Returns 0 or -errno (-ENODEV:
 * no such interface here). */
int rtnl_link_set(const char *ifname, uint32_t mtu, bool set_carrier, bool carrier);

/* The name iproute2 gives routing protocol number proto (/etc/iproute2/rt_protos): "bird",
 * "static", "dhcp", ...; NULL for a number it has no name for. */
const char *rtnl_proto_name(uint8_t proto);

#endif
