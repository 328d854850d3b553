/* sockaddr_in / sockaddr_in6 to and from the channel's addresses (dps_sockaddr.h). */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "dps_sockaddr.h"

/* fe80::/10 (RFC 4291 §2.5.6): the only scope the stack has besides global. */
static bool dps_ep_is_link_local(const struct inet_addr *a)
{
	return a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}

int dps_ep_in(int family, const struct sockaddr *sa, socklen_t len, struct dps_ep *out)
{
	if (len < sizeof(sa_family_t))
		return -EINVAL;
	if (sa->sa_family != family)
		return -EAFNOSUPPORT;
	if (family == AF_INET) {
		struct sockaddr_in sin;
		if (len < sizeof(sin))
			return -EINVAL;
		memcpy(&sin, sa, sizeof(sin));
		*out = (struct dps_ep){.addr = inet_addr_v4(ntohl(sin.sin_addr.s_addr)),
				       .port = sin.sin_port};
		return 0;
	}
	struct sockaddr_in6 sin6;
	/* Linux takes the RFC 2133 form, without sin6_scope_id (SIN6_LEN_RFC2133, 24). */
	const socklen_t rfc2133 = offsetof(struct sockaddr_in6, sin6_scope_id);
	if (len < rfc2133)
		return -EINVAL;
	memset(&sin6, 0, sizeof(sin6));
	memcpy(&sin6, sa, len < sizeof(sin6) ? len : sizeof(sin6));
	*out = (struct dps_ep){.port = sin6.sin6_port};
	memcpy(out->addr.b, &sin6.sin6_addr, 16);
	if (dps_ep_is_link_local(&out->addr)) {
		if (sin6.sin6_scope_id == 0)
			return -EINVAL; /* tcp_v6_connect, __inet6_bind: no interface to scope it */
		out->scope = sin6.sin6_scope_id;
	}
	return 0;
}

socklen_t dps_ep_out(int family, const struct dps_ep *ep, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)out;
		sin->sin_family = AF_INET;
		sin->sin_port = ep->port;
		if (inet_addr_is_v4(&ep->addr))
			sin->sin_addr.s_addr = htonl(inet_addr_to_v4(&ep->addr));
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)out;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = ep->port;
	memcpy(&sin6->sin6_addr, ep->addr.b, 16);
	if (dps_ep_is_link_local(&ep->addr))
		sin6->sin6_scope_id = ep->scope;
	return sizeof(*sin6);
}

struct dps_ep dps_ep_any(int family)
{
	return (struct dps_ep){.addr = inet_addr_any(family == AF_INET6)};
}
