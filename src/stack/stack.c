#include "stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>

#include "exception.h"
#include "stack_internal.h"
#include "steer.h"
#include "wire/eth.h"

/* Runs fini of the first n protocols, last first. */
static void protos_fini(struct stack *s, unsigned n)
{
	while (n-- > 0)
		if (s->protos[n]->fini != NULL)
			s->protos[n]->fini(s);
}

static int protos_register(struct stack *s, const struct stack_proto *const *protos)
{
	for (; protos != NULL && *protos != NULL; protos++) {
		const struct stack_proto *pr = *protos;
		if (s->nb_protos == STACK_PROTO_MAX ||
		    (pr->ip_proto != 0 && s->by_ip_proto[pr->ip_proto] != NULL) ||
		    (pr->ethertype != 0 && stack_proto_by_ethertype(s, pr->ethertype) != NULL))
			return -EINVAL;
		s->protos[s->nb_protos++] = pr;
		if (pr->ip_proto != 0)
			s->by_ip_proto[pr->ip_proto] = pr;
	}
	return 0;
}

struct stack *stack_create(const struct stack_params *p)
{
	struct stack *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	s->id = p->id;
	s->pool = p->pool;
	s->ops = p->ops;
	s->steer = p->steer != NULL && p->steer->nb_workers > 1 ? p->steer : NULL;
	int rc = netcfg_init(&s->cfg, p->route_max);
	if (rc < 0) {
		free(s);
		rte_errno = -rc;
		return NULL;
	}
	unsigned lo_size = rte_align32pow2((p->pool != NULL ? p->pool->size : 1023) + 1);
	s->loopback = calloc(lo_size, sizeof(*s->loopback));
	s->lo_mask = lo_size - 1;
	rc = s->loopback != NULL ? protos_register(s, p->protos) : -ENOMEM;
	unsigned ready = 0;
	for (; rc == 0 && ready < s->nb_protos; ready++)
		if (s->protos[ready]->init != NULL)
			rc = s->protos[ready]->init(s, p);
	if (rc < 0) {
		protos_fini(s, ready);
		s->nb_protos = 0;
		stack_destroy(s);
		rte_errno = -rc;
		return NULL;
	}
	return s;
}

void stack_destroy(struct stack *s)
{
	if (s == NULL)
		return;
	/* Before the loopback queue: closing connections sends resets, to our own addresses
	 * too, and a send FIFO going takes its lent segments out of the queue. */
	protos_fini(s, s->nb_protos);
	while (s->lo_count != 0) {
		rte_pktmbuf_free(s->loopback[s->lo_head]);
		s->lo_head = (s->lo_head + 1) & s->lo_mask;
		s->lo_count--;
	}
	free(s->loopback);
	netcfg_fini(&s->cfg);
	free(s);
}

const struct stack_proto *stack_proto_by_ethertype(const struct stack *s, uint16_t type)
{
	for (unsigned i = 0; i < s->nb_protos; i++)
		if (s->protos[i]->ethertype == type)
			return s->protos[i];
	return NULL;
}

void stack_xmit(struct stack *s, uint16_t port, struct rte_mbuf *m)
{
	struct stack_port_counters *pc = &s->ports[port];
	if (!tx_offload_apply(&s->tx_caps[port], m)) {
		stack_drop(s, STACK_DROP_TX_NO_TSO, m);
		return;
	}
	pc->tx_packets++;
	pc->tx_bytes += rte_pktmbuf_pkt_len(m);
	s->ops.xmit(s->ops.ctx, port, m);
}

/* The Ethernet layer (IEEE 802.3): accept frames addressed to us, to broadcast or to a group
 * address, and dispatch by EtherType. VLAN-tagged frames are counted and dropped: no VLAN
 * sub-interfaces exist yet, and accepting them untagged would leak traffic between VLANs. */
static void stack_input_frame(struct stack *s, uint16_t port, struct rte_mbuf *m);

void stack_input(struct stack *s, uint16_t port, struct rte_mbuf *m)
{
	stack_input_frame(s, port, m);
	if (s->lo_count != 0)
		stack_loopback_drain(s);
}

/* The Ethernet header with one VLAN tag and the longest IPv4 header. */
#define STACK_RX_HDR_ROOM ((uint32_t)(ETH_HDR_LEN + 4 + IP4_HDR_MAX_LEN))

static void stack_input_frame(struct stack *s, uint16_t port, struct rte_mbuf *m)
{
	stack_count(s, STACK_EV_ETH_RX);
	if (port >= NETCFG_MAX_PORTS || !s->cfg.ifaces[port].up) {
		stack_drop(s, STACK_DROP_ETH_PORT_DOWN, m);
		return;
	}
	struct stack_port_counters *pc = &s->ports[port];
	pc->rx_packets++;
	pc->rx_bytes += rte_pktmbuf_pkt_len(m);
	/* Parsers view the headers in the first segment: a chain (a segment GRO merged, a
	 * port's LRO or scattered jumbo frame) keeps its shape when the first segment holds
	 * the Ethernet and network headers, and is gathered into one otherwise; a frame that
	 * does not fit one segment's room cannot be gathered. */
	if (m->nb_segs > 1 &&
	    rte_pktmbuf_data_len(m) < RTE_MIN(rte_pktmbuf_pkt_len(m), STACK_RX_HDR_ROOM) &&
	    rte_pktmbuf_linearize(m) != 0) {
		stack_drop(s, STACK_DROP_ETH_TRUNCATED, m);
		return;
	}
	struct eth_repr eth;
	enum wire_status st = eth_parse(rte_pktmbuf_mtod(m, const uint8_t *),
					rte_pktmbuf_data_len(m), &eth);
	if (st != WIRE_OK) {
		stack_drop(s, st == WIRE_TRUNCATED ? STACK_DROP_ETH_TRUNCATED
						   : STACK_DROP_ETH_BAD_TYPE, m);
		return;
	}
	const struct netcfg_iface *ifc = &s->cfg.ifaces[port];
	if (!eth_addr_is_multicast(&eth.dst) && !eth_addr_equal(&eth.dst, &ifc->mac)) {
		/* Another host's frame (a promiscuous port): a cluster that takes the rest
		 * may want it, the kernel interface (same MAC as ours) would not. */
		m->port = port;
		m->l2_len = eth.hdr_len;
		rte_pktmbuf_adj(m, (uint16_t)eth.hdr_len);
		if (!stack_to_rest(s, m))
			stack_drop(s, STACK_DROP_ETH_NOT_OURS, m);
		return;
	}
	if (eth_addr_is_multicast(&eth.src) || eth_addr_equal(&eth.src, &ifc->mac)) {
		stack_drop(s, STACK_DROP_ETH_BAD_SRC, m);
		return;
	}
	m->port = port;
	m->l2_len = eth.hdr_len;
	rte_pktmbuf_adj(m, (uint16_t)eth.hdr_len);
	if (eth.vlan_tagged) {
		/* The kernel may have VLAN interfaces on its side of the exception path. */
		if (!stack_exception(s, m, STACK_EV_KERNEL_VLAN))
			stack_drop(s, STACK_DROP_ETH_VLAN, m);
		return;
	}
	const struct stack_proto *pr = stack_proto_by_ethertype(s, eth.ethertype);
	if (pr == NULL || pr->input == NULL) {
		if (!stack_exception(s, m, STACK_EV_KERNEL_ETHERTYPE))
			stack_drop(s, STACK_DROP_ETH_UNKNOWN_TYPE, m);
		return;
	}
	/* One MAC serves the stack and the kernel interface behind it: the stack answers ARP
	 * for its addresses, and the kernel sees every ARP frame too, so its neighbour table
	 * fills for its own traffic (its replies for the stack's addresses are held back by
	 * src/dp/exception.c). */
	if (eth.ethertype == ETH_TYPE_ARP)
		stack_exception_copy(s, m, STACK_EV_KERNEL_ARP);
	pr->input(s, m, eth_addr_is_multicast(&eth.dst) ? STACK_IN_LINK_BCAST : 0);
}

void stack_loopback_queue(struct stack *s, struct rte_mbuf *m)
{
	if (s->lo_count > s->lo_mask) {
		stack_drop(s, STACK_DROP_IP_LOOPBACK_FULL, m); /* only if mbufs came from elsewhere */
		return;
	}
	/* We computed its checksums a moment ago and no wire can flip a bit in between:
	 * input need not verify them again (Linux's loopback says CHECKSUM_UNNECESSARY). */
	m->ol_flags = (m->ol_flags & ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) |
		      RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	s->loopback[(s->lo_head + s->lo_count++) & s->lo_mask] = m;
}

bool stack_mbuf_borrows(const struct rte_mbuf *m, const struct rte_mbuf_ext_shared_info *owner)
{
	for (; m != NULL; m = m->next)
		if (RTE_MBUF_HAS_EXTBUF(m) && (owner == NULL || m->shinfo == owner))
			return true;
	return false;
}

void stack_steer_to(struct stack *s, unsigned owner, struct rte_mbuf *m, unsigned how)
{
	if (stack_mbuf_borrows(m, NULL)) {
		/* Lent payload lives as long as its sender here says: another worker gets a
		 * copy of its own. */
		struct rte_mbuf *copy = rte_pktmbuf_copy(m, s->pool, 0, UINT32_MAX);
		rte_pktmbuf_free(m);
		if (copy == NULL) {
			stack_drop_count(s, STACK_DROP_TX_NO_MBUF);
			return;
		}
		m = copy;
	}
	if (s->ops.steer(s->ops.ctx, owner, m, how))
		stack_count(s, STACK_EV_IP_STEERED_OUT);
	else
		stack_drop(s, STACK_DROP_IP_STEER_FULL, m);
}

void stack_loopback_forget(struct stack *s, const struct rte_mbuf_ext_shared_info *owner)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < s->lo_count; i++) {
		struct rte_mbuf *m = s->loopback[(s->lo_head + i) & s->lo_mask];
		if (stack_mbuf_borrows(m, owner))
			stack_drop(s, STACK_DROP_IP_LOOPBACK_ORPHAN, m);
		else
			s->loopback[(s->lo_head + kept++) & s->lo_mask] = m;
	}
	s->lo_count = kept;
}

void stack_loopback_drain(struct stack *s)
{
	/* What the drained datagrams answer is queued behind them and delivered in the same
	 * call, up to a bound, so two endpoints talking to each other cannot livelock us. */
	for (unsigned budget = STACK_LOOPBACK_BUDGET; s->lo_count != 0 && budget != 0; budget--) {
		struct rte_mbuf *m = s->loopback[s->lo_head];
		s->lo_head = (s->lo_head + 1) & s->lo_mask;
		s->lo_count--;
		/* The network layer by the version in the first nibble of the datagram. */
		uint8_t version = rte_pktmbuf_mtod(m, const uint8_t *)[0] >> 4;
		m->l2_len = 0; /* from no wire: never the kernel's (exception.h) */
		const struct stack_proto *pr = stack_proto_by_ethertype(
			s, version == 4 ? ETH_TYPE_IPV4 : version == 6 ? ETH_TYPE_IPV6 : 0);
		if (pr != NULL)
			pr->input(s, m, STACK_IN_LOOPBACK);
		else
			stack_drop(s, STACK_DROP_ETH_UNKNOWN_TYPE, m);
	}
}

static void stack_clock_set(struct stack *s, uint64_t now_ms)
{
	s->now_ms = now_ms;
	if (s->now_us / 1000 != now_ms)
		s->now_us = now_ms * 1000; /* callers without a finer clock (tests) */
}

void stack_tick_transport(struct stack *s, uint64_t now_ms)
{
	stack_clock_set(s, now_ms);
	for (unsigned i = 0; i < s->nb_protos; i++)
		if (s->protos[i]->tick_transport != NULL)
			s->protos[i]->tick_transport(s);
	stack_loopback_drain(s);
}

void stack_tick(struct stack *s, uint64_t now_ms)
{
	stack_clock_set(s, now_ms); /* the timers below (ICMP rate limit) read it */
	for (unsigned i = 0; i < s->nb_protos; i++)
		if (s->protos[i]->tick != NULL)
			s->protos[i]->tick(s);
	stack_tick_transport(s, now_ms);
}

static void stack_port_forget(struct stack *s, uint16_t port)
{
	for (unsigned i = 0; i < s->nb_protos; i++)
		if (s->protos[i]->port_forget != NULL)
			s->protos[i]->port_forget(s, port);
}

int stack_addr_add(struct stack *s, uint16_t port, uint32_t addr, uint8_t plen, bool announce)
{
	int rc = netcfg_addr_add(&s->cfg, port, addr, plen);
	for (unsigned i = 0; rc == 0 && announce && i < s->nb_protos; i++)
		if (s->protos[i]->addr_announce != NULL)
			s->protos[i]->addr_announce(s, port, addr);
	return rc;
}

int stack_addr_del(struct stack *s, uint16_t port, uint32_t addr, uint8_t plen)
{
	int rc = netcfg_addr_del(&s->cfg, port, addr, plen);
	/* Only the port's last address takes its neighbours (Linux: fib_inetaddr_event ->
	 * fib_disable_ip -> arp_ifdown). A neighbour does not depend on which address asked
	 * for it, and a flush drops every packet waiting for one and makes each worker
	 * resolve its next hops again, a loss burst on every connection of the port. */
	if (rc == 0 && !netcfg_port_has_addr(&s->cfg, port))
		stack_port_forget(s, port);
	return rc;
}

int stack_iface_set_up(struct stack *s, uint16_t port, bool up)
{
	int rc = netcfg_iface_set_up(&s->cfg, port, up);
	if (rc == 0 && !up)
		stack_port_forget(s, port);
	return rc;
}

void stack_reass_sync_drops(struct stack *s, const struct reass *r,
			    const enum stack_drop drop_for[REASS_VERDICT_COUNT])
{
	struct reass_stats st;
	reass_stats_get(r, &st);
	for (unsigned v = 0; v < REASS_VERDICT_COUNT; v++)
		if (v != REASS_HELD && v != REASS_DONE)
			s->drops[drop_for[v]] = st.verdicts[v];
}
