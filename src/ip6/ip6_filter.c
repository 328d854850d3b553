/* The operator's filters at IPv6's hooks, as at IPv4's (src/ip4/ip4_input.c,
 * ip4_forward.c): the ACL (src/acl/acl.h) at input and forward, then the bypass rules
 * (src/acl/bypass_set.h) at input, which hand matching datagrams to the kernel interface. */
#include "ip6.h"

#include "acl/acl.h"
#include "acl/bypass_set.h"
#include "stack/exception.h"
#include "stack/stack_internal.h"

bool ip6_filter_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		      const struct ip6_ext_info *ext, unsigned how)
{
	if (how & IP6_IN_FILTERED)
		return false;
	if (acl_ip6_denies(s->acl, s->id, ACL_HOOK_INPUT, m, ip, ext)) {
		stack_drop(s, STACK_DROP_ACL6_DENIED, m);
		return true;
	}
	return s->bypass != NULL && bypass_set_matches6(s->bypass, s->id, m, ip, ext) &&
	       stack_exception(s, m, STACK_EV_KERNEL_BYPASS6);
}

bool ip6_filter_forward(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip)
{
	if (!acl_ip6_denies(s->acl, s->id, ACL_HOOK_FORWARD, m, ip, NULL))
		return false;
	stack_drop(s, STACK_DROP_ACL6_DENIED, m);
	return true;
}
