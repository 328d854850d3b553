#include "rtnl.h"

#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int rtnl_open(uint32_t groups, int rcvbuf)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	if (rcvbuf > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) != 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK, .nl_groups = groups};
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

/* Waits up to a second for fd to be readable (requests are answered at once: this bounds
 * a kernel that never answers, not a slow one). */
static int rtnl_wait(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, 1000);
	return n > 0 ? 0 : n == 0 ? -ETIMEDOUT : -errno;
}

static uint32_t rtnl_seq;

static int rtnl_send(int fd, struct nlmsghdr *nlh)
{
	nlh->nlmsg_seq = ++rtnl_seq;
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	if (sendto(fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	return 0;
}

/* Reads the answers to request seq: each message but the last goes to fn (when given);
 * the last is an acknowledgement (NLMSG_ERROR) or the end of a dump (NLMSG_DONE). */
static int rtnl_answer(int fd, uint32_t seq, void (*fn)(const struct nlmsghdr *, void *),
		       void *arg)
{
	static char buf[RTNL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				return -errno;
			int rc = rtnl_wait(fd);
			if (rc != 0)
				return rc;
			continue;
		}
		int len = (int)n;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type != NLMSG_ERROR) {
				if (fn != NULL)
					fn(h, arg);
				continue;
			}
			if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
				return -EBADMSG;
			return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
		}
	}
}

int rtnl_request(int fd, struct nlmsghdr *nlh)
{
	nlh->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	int rc = rtnl_send(fd, nlh);
	return rc != 0 ? rc : rtnl_answer(fd, nlh->nlmsg_seq, NULL, NULL);
}

int rtnl_dump(int fd, uint16_t type, uint8_t family,
	      void (*fn)(const struct nlmsghdr *nlh, void *arg), void *arg)
{
	/* struct rtgenmsg is the header every dump request may start with (rtnetlink(7)). */
	struct {
		struct nlmsghdr nlh;
		struct rtgenmsg g;
	} req = {.nlh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg)), .nlmsg_type = type,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP},
		 .g = {.rtgen_family = family}};
	int rc = rtnl_send(fd, &req.nlh);
	return rc != 0 ? rc : rtnl_answer(fd, req.nlh.nlmsg_seq, fn, arg);
}

int rtnl_attr_put(struct nlmsghdr *nlh, size_t cap, uint16_t type, const void *data,
		  size_t len)
{
	size_t at = NLMSG_ALIGN(nlh->nlmsg_len);
	if (at + RTA_SPACE(len) > cap)
		return -ENOSPC;
	struct rtattr *rta = (struct rtattr *)((char *)nlh + at);
	rta->rta_type = type;
	rta->rta_len = (unsigned short)RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	nlh->nlmsg_len = (uint32_t)(at + RTA_SPACE(len));
	return 0;
}

void rtnl_attrs_parse(struct rtattr *tb[], unsigned max, struct rtattr *rta, int len)
{
	memset(tb, 0, sizeof(tb[0]) * (max + 1));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len))
		if (rta->rta_type <= max)
			tb[rta->rta_type] = rta;
}

uint32_t rtnl_attr_u32(const struct rtattr *a, uint32_t def)
{
	uint32_t v;
	if (a == NULL || RTA_PAYLOAD(a) < sizeof(v))
		return def;
	memcpy(&v, RTA_DATA(a), sizeof(v));
	return v;
}

int rtnl_link_set(const char *ifname, uint32_t mtu, bool set_carrier, bool carrier)
{
	unsigned index = if_nametoindex(ifname);
	if (index == 0)
		return -ENODEV;
	struct {
		struct nlmsghdr nlh;
		struct ifinfomsg ifi;
		char attrs[64];
	} req = {.nlh = {.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
			 .nlmsg_type = RTM_SETLINK},
		 .ifi = {.ifi_family = AF_UNSPEC, .ifi_index = (int)index}};
	uint8_t c = carrier;
	if ((mtu != 0 && rtnl_attr_put(&req.nlh, sizeof(req), IFLA_MTU, &mtu, sizeof(mtu)) != 0) ||
	    (set_carrier && rtnl_attr_put(&req.nlh, sizeof(req), IFLA_CARRIER, &c, 1) != 0))
		return -ENOSPC;
	int fd = rtnl_open(0, 0);
	if (fd < 0)
		return fd;
	int rc = rtnl_request(fd, &req.nlh);
	close(fd);
	return rc;
}

const char *rtnl_proto_name(uint8_t proto)
{
	static const struct {
		uint8_t proto;
		const char *name;
	} names[] = {
		{0, "unspec"}, {1, "redirect"}, {2, "kernel"}, {3, "boot"}, {4, "static"},
		{8, "gated"}, {9, "ra"}, {10, "mrt"}, {11, "zebra"}, {12, "bird"},
		{13, "dnrouted"}, {14, "xorp"}, {15, "ntk"}, {16, "dhcp"}, {17, "mrouted"},
		{18, "keepalived"}, {42, "babel"}, {99, "openr"}, {186, "bgp"}, {187, "isis"},
		{188, "ospf"}, {189, "rip"}, {192, "eigrp"},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].proto == proto)
			return names[i].name;
	return NULL;
}
