#include "inet.h"

#include "ip4/ip4.h"
#include "ip6/ip6.h"
#include "l2/link.h"
#include "tcp/tcp.h"
#include "udp/udp.h"

/* In the order they start; they stop in the reverse one (TCP's resets on the way out still
 * find IPv4 and ARP). */
static const struct stack_proto *const inet_protos[] = {
	&arp_proto, &ip4_proto, &ip6_proto, &udp_proto, &tcp_proto, NULL,
};

void inet_params_default(struct stack_params *p)
{
	*p = (struct stack_params){.protos = inet_protos, .socket_id = SOCKET_ID_ANY};
	neigh_params_default(&p->neigh);
	/* A 64 KB datagram is 45 fragments at MTU 1500 and 68 at MTU 1000: all may wait for one
	 * ARP reply (Linux bounds this queue by bytes, 212992 by default). */
	p->neigh.queue_len = 128;
	reass_params_default(&p->reass);
	p->tcp_listen_max = TCP_LISTEN_MAX_DEFAULT;
	p->route_max = ROUTE_MAX_DEFAULT;
	/* Linux's icmp_msgs_per_sec / icmp_msgs_burst defaults. */
	p->icmp_rate = 1000;
	p->icmp_burst = 50;
}
