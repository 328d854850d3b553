/* The link layer of the stack: ARP (RFC 826) input and output, gratuitous announcements
 * (RFC 5227 §3) and the glue between the neighbour table and the output path. */
#include <errno.h>
#include <string.h>

#include "link.h"

#include "stack/stack_internal.h"
#include "wire/arp.h"
#include "wire/eth.h"
#include "wire/ipv4.h"

static void eth_prepend_and_send(struct stack *s, uint16_t port, const struct eth_addr *dst,
				 uint16_t ethertype, struct rte_mbuf *m)
{
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, ETH_HDR_LEN);
	if (h == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return;
	}
	struct eth_repr eth = {.dst = *dst, .src = s->cfg.ifaces[port].mac,
			       .ethertype = ethertype};
	eth_build(h, ETH_HDR_LEN, &eth);
	m->l2_len = ETH_HDR_LEN;
	/* Pad runts to the Ethernet minimum: some PMDs and switches drop shorter frames. */
	uint32_t len = rte_pktmbuf_pkt_len(m);
	if (len < ETH_MIN_FRAME_LEN) {
		char *pad = rte_pktmbuf_append(m, (uint16_t)(ETH_MIN_FRAME_LEN - len));
		if (pad == NULL) {
			stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
			return;
		}
		memset(pad, 0, ETH_MIN_FRAME_LEN - len);
	}
	stack_xmit(s, port, m);
}

static void arp_send(struct stack *s, uint16_t port, uint16_t op, const struct eth_addr *eth_dst,
		     const struct eth_addr *tha, uint32_t spa, uint32_t tpa)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	if (m == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		return;
	}
	uint8_t *body = (uint8_t *)rte_pktmbuf_append(m, ARP_LEN);
	struct arp_repr arp = {.op = op, .sha = s->cfg.ifaces[port].mac, .spa = spa,
			       .tha = *tha, .tpa = tpa};
	arp_build(body, ARP_LEN, &arp);
	eth_prepend_and_send(s, port, eth_dst, ETH_TYPE_ARP, m);
}

static void arp_announce(struct stack *s, uint16_t port, uint32_t addr)
{
	static const struct eth_addr zero;
	/* RFC 5227 §2.3: an announcement is a request with sender and target both our address. */
	arp_send(s, port, ARP_OP_REQUEST, &eth_addr_broadcast, &zero, addr, addr);
	stack_count(s, STACK_EV_ARP_TX_GRATUITOUS);
}

static void arp_input(struct stack *s, struct rte_mbuf *m, unsigned how)
{
	uint16_t port = m->port;
	struct arp_repr arp;
	if (arp_parse(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m), &arp) !=
	    WIRE_OK) {
		stack_drop(s, STACK_DROP_ARP_MALFORMED, m);
		return;
	}
	/* No station owns 00:00:00:00:00:00 (neigh_learn ignores it too): a reply to it would
	 * go to nobody. Dropped like the multicast senders arp_parse refuses. */
	if (eth_addr_is_zero(&arp.sha)) {
		stack_drop(s, STACK_DROP_ARP_MALFORMED, m);
		return;
	}
	stack_count(s, arp.op == ARP_OP_REQUEST ? STACK_EV_ARP_RX_REQUEST : STACK_EV_ARP_RX_REPLY);

	const struct eth_addr *ours = &s->cfg.ifaces[port].mac;
	/* A sender address of 0.0.0.0 is an RFC 5227 probe: answer it, learn nothing from it. */
	bool probe = arp.spa == 0;
	if (!probe && (ip4_is_multicast(arp.spa) || ip4_is_limited_broadcast(arp.spa) ||
		       ip4_is_zeronet(arp.spa) || ip4_is_loopback(arp.spa))) {
		stack_drop(s, STACK_DROP_ARP_BAD_SENDER, m);
		return;
	}
	if (!probe && netcfg_addr_is_local(&s->cfg, arp.spa)) {
		/* Someone else uses one of our addresses (RFC 5227 §2.4 conflict). */
		stack_drop(s, STACK_DROP_ARP_ADDR_CONFLICT, m);
		return;
	}
	bool for_us = netcfg_addr_is_local(&s->cfg, arp.tpa);
	if (!probe) {
		/* RFC 826 merge: refresh an entry we have whoever the target is; create one only
		 * when the packet is addressed to us, which also means we will talk to it. */
		unsigned flags = 0;
		if (for_us)
			flags |= NEIGH_F_CREATE;
		if (for_us && arp.op == ARP_OP_REPLY && eth_addr_equal(&arp.tha, ours))
			flags |= NEIGH_F_SOLICITED;
		struct inet_addr spa = inet_addr_v4(arp.spa);
		int rc = neigh_learn(s->neigh, s->now_ms, port, &spa, &arp.sha, flags);
		if (rc == -EPERM) {
			stack_drop(s, STACK_DROP_ARP_STATIC_CONFLICT, m);
			return;
		}
		if (rc == -ENOSPC)
			s->drops[STACK_DROP_NEIGH_TABLE_FULL]++;
		if (rc == 0 && s->ops.neigh_learnt != NULL)
			s->ops.neigh_learnt(s->ops.ctx, port, &spa, &arp.sha, flags);
	}
	if (!for_us) {
		/* Counted, not an error: requests for other hosts are normal broadcast noise. */
		stack_drop(s, STACK_DROP_ARP_NOT_FOR_US, m);
		return;
	}
	if (arp.op == ARP_OP_REQUEST) {
		arp_send(s, port, ARP_OP_REPLY, &arp.sha, &arp.sha, arp.tpa, arp.spa);
		stack_count(s, STACK_EV_ARP_TX_REPLY);
	}
	rte_pktmbuf_free(m);
}

void stack_neigh_learn(struct stack *s, uint16_t port, const struct inet_addr *addr,
		       const struct eth_addr *mac, unsigned flags)
{
	/* The receiving worker has counted the packet and any conflict already. */
	neigh_learn(s->neigh, s->now_ms, port, addr, mac, flags);
}

/* The EtherType of a datagram, from the version in its first nibble. */
static uint16_t ethertype_of(const struct rte_mbuf *m)
{
	return (rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4) == 6 ? ETH_TYPE_IPV6 : ETH_TYPE_IPV4;
}

void link_output(struct stack *s, uint16_t port, const struct inet_addr *nh, struct rte_mbuf *m)
{
	if (!s->cfg.ifaces[port].up) {
		stack_drop(s, STACK_DROP_TX_LINK_DOWN, m);
		return;
	}
	struct eth_addr mac;
	if (neigh_resolve(s->neigh, s->now_ms, port, nh, m, &mac) == NEIGH_RESOLVED)
		eth_prepend_and_send(s, port, &mac, inet_addr_is_v4(nh) ? ETH_TYPE_IPV4
									  : ETH_TYPE_IPV6, m);
	/* Otherwise the table queued the packet or handed it to neigh_drop_packet. */
}

void link_output_to(struct stack *s, uint16_t port, const struct eth_addr *dst,
		    uint16_t ethertype, struct rte_mbuf *m)
{
	if (!s->cfg.ifaces[port].up) {
		stack_drop(s, STACK_DROP_TX_LINK_DOWN, m);
		return;
	}
	eth_prepend_and_send(s, port, dst, ethertype, m);
}

static void neigh_send_request(void *ctx, uint16_t port, const struct inet_addr *addr,
			       const struct eth_addr *dst)
{
	struct stack *s = ctx;
	if (!inet_addr_is_v4(addr)) {
		const struct stack_proto *net = stack_proto_by_ethertype(s, ETH_TYPE_IPV6);
		if (net != NULL && net->neigh_solicit != NULL)
			net->neigh_solicit(s, port, addr, dst);
		return;
	}
	static const struct eth_addr zero;
	uint32_t ip = inet_addr_to_v4(addr);
	uint32_t src = netcfg_source_for(&s->cfg, port, ip);
	if (src == 0)
		return; /* no address on the port: nothing to ask with */
	arp_send(s, port, ARP_OP_REQUEST, dst != NULL ? dst : &eth_addr_broadcast, &zero, src, ip);
	stack_count(s, STACK_EV_ARP_TX_REQUEST);
}

static void neigh_send_packet(void *ctx, uint16_t port, const struct eth_addr *mac, void *pkt)
{
	eth_prepend_and_send(ctx, port, mac, ethertype_of(pkt), pkt);
}

static void neigh_drop_packet(void *ctx, void *pkt, enum neigh_drop why)
{
	struct stack *s = ctx;
	struct rte_mbuf *m = pkt;
	static const enum stack_drop reason[] = {
		[NEIGH_DROP_QUEUE_FULL] = STACK_DROP_NEIGH_QUEUE_FULL,
		[NEIGH_DROP_RESOLVE_FAILED] = STACK_DROP_NEIGH_FAILED,
		[NEIGH_DROP_TABLE_FULL] = STACK_DROP_NEIGH_TABLE_FULL,
		[NEIGH_DROP_FLUSHED] = STACK_DROP_NEIGH_FLUSHED,
	};
	if (why == NEIGH_DROP_RESOLVE_FAILED || why == NEIGH_DROP_TABLE_FULL) {
		const struct stack_proto *net = stack_proto_by_ethertype(s, ethertype_of(m));
		if (net != NULL && net->host_unreachable != NULL)
			net->host_unreachable(s, m);
	}
	stack_drop(s, reason[why], m);
}

static const struct neigh_ops stack_neigh_ops = {
	.send_request = neigh_send_request,
	.send_packet = neigh_send_packet,
	.drop_packet = neigh_drop_packet,
};

static int arp_init(struct stack *s, const struct stack_params *p)
{
	s->neigh = neigh_table_create(&p->neigh, &stack_neigh_ops, s);
	return s->neigh != NULL ? 0 : -ENOMEM;
}

static void arp_fini(struct stack *s)
{
	neigh_table_destroy(s->neigh);
	s->neigh = NULL;
}

static void arp_tick(struct stack *s)
{
	neigh_tick(s->neigh, s->now_ms);
}

static void arp_port_forget(struct stack *s, uint16_t port)
{
	neigh_flush(s->neigh, port);
}

const struct stack_proto arp_proto = {
	.name = "arp",
	.init = arp_init,
	.fini = arp_fini,
	.ethertype = ETH_TYPE_ARP,
	.input = arp_input,
	.tick = arp_tick,
	.addr_announce = arp_announce,
	.port_forget = arp_port_forget,
};
