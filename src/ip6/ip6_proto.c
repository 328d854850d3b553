/* IPv6 as a protocol of a stack instance (src/stack/stack_proto.h): its state and what the
 * layers around it ask of it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ip6.h"
#include "wire/eth.h"
#include "wire/icmp6.h"

static int ip6_init(struct stack *s, const struct stack_params *p)
{
	s->ip6 = calloc(1, sizeof(*s->ip6));
	if (s->ip6 == NULL)
		return -ENOMEM;
	s->ip6->ctl_fd = -1;
	/* The same budget as ICMP for IPv4: Linux's icmpv6 ratelimit is separate, too. */
	ratelimit_init(&s->ip6->icmp_errors, p->icmp_rate, p->icmp_burst, 0);
	return ip6_reass_init(s, p); /* a failed init is undone by fini */
}

static void ip6_fini(struct stack *s)
{
	if (s->ip6 != NULL)
		reass_destroy(s->ip6->reass);
	free(s->ip6);
	s->ip6 = NULL;
}

/* RFC 4443 §3.1 code 3: a router whose next hop never answered Neighbor Discovery says so.
 * Only forwarded packets get one; our own traffic learns of it from its transport. A
 * link-local source is ours or a neighbour's sent back out of its own port: not told. */
static void ip6_host_unreachable(struct stack *s, const struct rte_mbuf *m)
{
	struct ip6_addr src;
	memcpy(src.b, rte_pktmbuf_mtod_offset(m, const uint8_t *, IP6_OFF_SRC), sizeof(src.b));
	if (netcfg6_local(&s->cfg, NETCFG_PORT_ANY, &src) == NULL && !ip6_is_link_local(&src))
		icmp6_send_error(s, m, ICMP6_DEST_UNREACH, ICMP6_UNREACH_ADDR, 0);
}

const struct stack_proto ip6_proto = {
	.name = "ipv6",
	.init = ip6_init,
	.fini = ip6_fini,
	.ethertype = ETH_TYPE_IPV6,
	.input = ip6_input,
	.neigh_solicit = nd_solicit,
	.host_unreachable = ip6_host_unreachable,
	.tick = ip6_reass_tick,
};
