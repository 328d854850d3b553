#include "stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_errno.h>
#include <rte_ip.h>

#include "stack_internal.h"
#include "steer.h"
#include "tcp/tcp_priv.h"
#include "udp/udp_priv.h"
#include "wire/eth.h"
#include "wire/checksum.h"
#include "wire/icmp4.h"

void stack_params_default(struct stack_params *p)
{
	*p = (struct stack_params){.socket_id = SOCKET_ID_ANY};
	neigh_params_default(&p->neigh);
	/* A 64 KB datagram is 45 fragments at MTU 1500 and 68 at MTU 1000: all may wait for one ARP reply
	 * (Linux bounds this queue by bytes, 212992 by default). */
	p->neigh.queue_len = 128;
	ip4_reass_params_default(&p->reass);
	p->tcp_listen_max = TCP_LISTEN_MAX_DEFAULT;
	/* Linux's icmp_msgs_per_sec / icmp_msgs_burst defaults. */
	p->icmp_rate = 1000;
	p->icmp_burst = 50;
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
	char name[32];
	snprintf(name, sizeof(name), "routes_w%u", p->id);
	int rc = netcfg_init(&s->cfg, name, p->socket_id);
	if (rc < 0) {
		free(s);
		rte_errno = -rc;
		return NULL;
	}
	s->neigh = neigh_table_create(&p->neigh, &stack_neigh_ops, s);
	s->reass = ip4_reass_create(&p->reass, p->socket_id);
	if (s->neigh == NULL || s->reass == NULL) {
		stack_destroy(s);
		rte_errno = ENOMEM;
		return NULL;
	}
	ratelimit_init(&s->icmp_errors, p->icmp_rate, p->icmp_burst, 0);
	unsigned lo_size = rte_align32pow2((p->pool != NULL ? p->pool->size : 1023) + 1);
	s->loopback = calloc(lo_size, sizeof(*s->loopback));
	s->lo_mask = lo_size - 1;
	rc = s->loopback != NULL ? tcp_stack_init(s, p->tcp_listen_max) : -ENOMEM;
	if (rc == 0)
		rc = udp_stack_init(s);
	if (rc < 0) {
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
	udp_stack_fini(s);
	/* Before the loopback queue: closing connections sends resets, to our own addresses
	 * too, and a send FIFO going takes its lent segments out of the queue. */
	tcp_stack_fini(s);
	while (s->lo_count != 0) {
		rte_pktmbuf_free(s->loopback[s->lo_head]);
		s->lo_head = (s->lo_head + 1) & s->lo_mask;
		s->lo_count--;
	}
	free(s->loopback);
	neigh_table_destroy(s->neigh);
	ip4_reass_destroy(s->reass);
	netcfg_fini(&s->cfg);
	free(s);
}

void stack_xmit(struct stack *s, uint16_t port, struct rte_mbuf *m)
{
	struct stack_port_counters *pc = &s->ports[port];
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
	if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
		/* Parsers work on one contiguous view; a jumbo frame that does not fit one
		 * segment's room cannot be viewed that way. */
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
		stack_drop(s, STACK_DROP_ETH_NOT_OURS, m);
		return;
	}
	if (eth_addr_is_multicast(&eth.src) || eth_addr_equal(&eth.src, &ifc->mac)) {
		stack_drop(s, STACK_DROP_ETH_BAD_SRC, m);
		return;
	}
	if (eth.vlan_tagged) {
		stack_drop(s, STACK_DROP_ETH_VLAN, m);
		return;
	}
	m->port = port;
	m->l2_len = eth.hdr_len;
	rte_pktmbuf_adj(m, (uint16_t)eth.hdr_len);
	switch (eth.ethertype) {
	case ETH_TYPE_IPV4:
		ip4_input(s, m, eth_addr_is_multicast(&eth.dst) ? IP4_IN_LINK_BCAST : 0);
		break;
	case ETH_TYPE_ARP:
		arp_input(s, port, m);
		break;
	default:
		stack_drop(s, STACK_DROP_ETH_UNKNOWN_TYPE, m);
		break;
	}
}

/* The reassembly table counts every datagram and fragment it drops, including datagrams it
 * evicts to make room, which no caller sees: the drop counters mirror its counts. */
void stack_reass_sync_drops(struct stack *s)
{
	static const enum stack_drop drop_for[IP4_REASS_VERDICT_COUNT] = {
		[IP4_REASS_DUPLICATE] = STACK_DROP_IP_REASS_DUPLICATE,
		[IP4_REASS_OVERLAP] = STACK_DROP_IP_REASS_OVERLAP,
		[IP4_REASS_TINY] = STACK_DROP_IP_REASS_TINY,
		[IP4_REASS_TOO_BIG] = STACK_DROP_IP_REASS_TOO_BIG,
		[IP4_REASS_BAD_LAST] = STACK_DROP_IP_REASS_BAD_LAST,
		[IP4_REASS_TOO_MANY_FRAGS] = STACK_DROP_IP_REASS_TOO_MANY,
		[IP4_REASS_NO_MEMORY] = STACK_DROP_IP_REASS_NO_MEMORY,
		[IP4_REASS_TIMEOUT] = STACK_DROP_IP_REASS_TIMEOUT,
	};
	struct ip4_reass_stats st;
	ip4_reass_stats_get(s->reass, &st);
	for (unsigned v = 0; v < IP4_REASS_VERDICT_COUNT; v++)
		if (v != IP4_REASS_HELD && v != IP4_REASS_DONE)
			s->drops[drop_for[v]] = st.verdicts[v];
}

static void reass_timed_out(void *arg, const struct rte_mbuf *first)
{
	struct stack *s = arg;
	/* RFC 792: time exceeded code 1, only when fragment zero was received. */
	icmp4_send_error(s, first, ICMP4_TIME_EXCEEDED, ICMP4_TIMEX_REASS, 0);
}

uint16_t stack_l4_checksum_chain(const struct rte_mbuf *m, const struct ip4_repr *ip,
				 uint8_t proto, uint32_t len)
{
	/* rte_raw_cksum_mbuf sums native-endian words across segments (odd segment lengths
	 * included); swapped to network order it adds to the pseudo-header sum (RFC 1071 §2(B):
	 * the sum is byte-order independent). */
	uint16_t raw;
	if (rte_raw_cksum_mbuf(m, (uint32_t)ip->hdr_len, len, &raw) != 0)
		return 1;
	uint32_t sum = wire_csum_pseudo4(ip->src, ip->dst, proto, (uint16_t)len);
	return wire_csum_finish(sum + rte_be_to_cpu_16(raw));
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
		ip4_input(s, m, IP4_IN_LOOPBACK);
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
	tcp_stack_tick(s);
	stack_loopback_drain(s);
}

void stack_tick(struct stack *s, uint64_t now_ms)
{
	stack_clock_set(s, now_ms); /* the timers below (ICMP rate limit) read it */
	neigh_tick(s->neigh, now_ms);
	if (ip4_reass_expire(s->reass, now_ms, reass_timed_out, s) != 0)
		stack_reass_sync_drops(s);
	stack_tick_transport(s, now_ms);
}

int stack_addr_add(struct stack *s, uint16_t port, uint32_t addr, uint8_t plen, bool announce)
{
	int rc = netcfg_addr_add(&s->cfg, port, addr, plen);
	if (rc == 0 && announce)
		arp_announce(s, port, addr);
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
		neigh_flush(s->neigh, port);
	return rc;
}

int stack_iface_set_up(struct stack *s, uint16_t port, bool up)
{
	int rc = netcfg_iface_set_up(&s->cfg, port, up);
	if (rc == 0 && !up)
		neigh_flush(s->neigh, port);
	return rc;
}
