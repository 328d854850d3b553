#include "flow_hw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_flow.h>

#include "acl/match_words.h"

#define FLOW_HW_MAX_PORTS 32

struct flow_hw_rule {
	bool counted;               /* its flows carry a COUNT action */
	unsigned nb;
	struct {
		uint16_t eth_port;
		struct rte_flow *flow;
	} f[FLOW_HW_MAX_PORTS];
};

/* A rule in rte_flow's terms: its items' specs and masks live here while they are used. */
struct flow_hw_spec {
	struct rte_flow_attr attr;
	struct rte_flow_item items[4];
	struct rte_flow_item_eth eth, eth_mask;
	struct rte_flow_item_ipv4 ip, ip_mask;
	struct rte_flow_item_ipv6 ip6, ip6_mask;
	struct rte_flow_item_tcp tcp, tcp_mask;
	struct rte_flow_item_udp udp, udp_mask;
	struct rte_flow_action actions[3];
	struct rte_flow_action_queue queue;
	struct rte_flow_action_count count;
};

/* One port or any: what an rte_flow item's spec and mask say without "last". */
static bool ports_have_hw_form(uint16_t lo, uint16_t hi)
{
	return lo == hi || (lo == 0 && hi == 65535);
}

/* An IPv6 prefix as an rte_flow address and mask. */
static void hw_prefix6(const struct ip6_addr *a, uint8_t len, uint8_t *addr, uint8_t *mask)
{
	struct ip6_addr m;
	memset(m.b, 0xff, sizeof(m.b));
	ip6_prefix_mask(&m, len);
	memcpy(addr, a->b, 16);
	memcpy(mask, m.b, 16);
}

/* The IP item of s for m at items[k]: IPv4's, or IPv6's (whose proto is the fixed header's
 * Next Header, as the software key reads it). */
static void hw_ip_item(struct flow_hw_spec *s, const struct flow_match *m, unsigned k)
{
	bool proto = m->proto != FLOW_ANY;
	if (m->ethertype == FLOW_ETHERTYPE_IPV6) {
		hw_prefix6(&m->src6, m->src_len, s->ip6.hdr.src_addr, s->ip6_mask.hdr.src_addr);
		hw_prefix6(&m->dst6, m->dst_len, s->ip6.hdr.dst_addr, s->ip6_mask.hdr.dst_addr);
		s->ip6.hdr.proto = proto ? (uint8_t)m->proto : 0;
		s->ip6_mask.hdr.proto = proto ? 0xff : 0;
		s->items[k] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_IPV6,
						     .spec = &s->ip6, .mask = &s->ip6_mask};
		return;
	}
	s->ip.hdr.src_addr = rte_cpu_to_be_32(m->src);
	s->ip_mask.hdr.src_addr = rte_cpu_to_be_32(m->src_len ? ~0u << (32 - m->src_len) : 0);
	s->ip.hdr.dst_addr = rte_cpu_to_be_32(m->dst);
	s->ip_mask.hdr.dst_addr = rte_cpu_to_be_32(m->dst_len ? ~0u << (32 - m->dst_len) : 0);
	s->ip.hdr.next_proto_id = proto ? (uint8_t)m->proto : 0;
	s->ip_mask.hdr.next_proto_id = proto ? 0xff : 0;
	s->items[k] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_IPV4, .spec = &s->ip,
					     .mask = &s->ip_mask};
}

/* Fills s from r. Returns 0, or -1 with why: what rte_flow cannot say. */
static int flow_hw_spec_fill(struct flow_hw_spec *s, const struct flow_rule *r, uint32_t prio,
			     char *why, size_t cap)
{
	const struct flow_match *m = &r->m;
	memset(s, 0, sizeof(*s));
	if (r->action != FLOW_ACT_DROP && r->action != FLOW_ACT_STEER) {
		snprintf(why, cap, "%s has no hardware form", flow_action_name(r->action));
		return -1;
	}
	/* A range would need the items' "last" field, which few PMDs take: software judges it. */
	if (!ports_have_hw_form(m->sport_lo, m->sport_hi) ||
	    !ports_have_hw_form(m->dport_lo, m->dport_hi)) {
		snprintf(why, cap, "port ranges are judged in software");
		return -1;
	}
	s->attr = (struct rte_flow_attr){.ingress = 1, .priority = prio};
	unsigned k = 0;
	s->items[k].type = RTE_FLOW_ITEM_TYPE_ETH;
	if (m->ethertype != FLOW_ANY) {
		s->eth.hdr.ether_type = rte_cpu_to_be_16((uint16_t)m->ethertype);
		s->eth_mask.hdr.ether_type = RTE_BE16(0xffff);
		s->items[k].spec = &s->eth;
		s->items[k].mask = &s->eth_mask;
	}
	k++;
	if (m->ethertype == FLOW_ETHERTYPE_IPV4 || m->ethertype == FLOW_ETHERTYPE_IPV6)
		hw_ip_item(s, m, k++);
	if (m->proto == MATCH_PROTO_TCP || m->proto == MATCH_PROTO_UDP) {
		struct rte_udp_hdr *spec = m->proto == MATCH_PROTO_UDP ? &s->udp.hdr : NULL;
		struct rte_udp_hdr *mask = m->proto == MATCH_PROTO_UDP ? &s->udp_mask.hdr : NULL;
		rte_be16_t sport = rte_cpu_to_be_16(m->sport_lo), dport = rte_cpu_to_be_16(m->dport_lo);
		rte_be16_t smask = m->sport_lo == m->sport_hi ? RTE_BE16(0xffff) : 0;
		rte_be16_t dmask = m->dport_lo == m->dport_hi ? RTE_BE16(0xffff) : 0;
		if (spec != NULL) {
			*spec = (struct rte_udp_hdr){.src_port = sport, .dst_port = dport};
			*mask = (struct rte_udp_hdr){.src_port = smask, .dst_port = dmask};
			s->items[k] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_UDP,
							     .spec = &s->udp, .mask = &s->udp_mask};
		} else {
			s->tcp.hdr.src_port = sport;
			s->tcp.hdr.dst_port = dport;
			s->tcp_mask.hdr.src_port = smask;
			s->tcp_mask.hdr.dst_port = dmask;
			s->items[k] = (struct rte_flow_item){.type = RTE_FLOW_ITEM_TYPE_TCP,
							     .spec = &s->tcp, .mask = &s->tcp_mask};
		}
		k++;
	}
	s->items[k].type = RTE_FLOW_ITEM_TYPE_END;
	unsigned a = 0;
	if (r->action == FLOW_ACT_DROP) {
		s->actions[a++].type = RTE_FLOW_ACTION_TYPE_DROP;
		s->actions[a++] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_COUNT,
							   .conf = &s->count};
	} else {
		s->queue.index = r->worker;
		s->actions[a++] = (struct rte_flow_action){.type = RTE_FLOW_ACTION_TYPE_QUEUE,
							   .conf = &s->queue};
	}
	s->actions[a].type = RTE_FLOW_ACTION_TYPE_END;
	return 0;
}

static const char *flow_hw_error(const struct rte_flow_error *e, int rc)
{
	if (e->message != NULL)
		return e->message;
	return strerror(rc < 0 ? -rc : rc);
}

int flow_hw_install(const struct flow_hw_port *ports, unsigned n, const struct flow_rule *r,
		    uint32_t prio, struct flow_hw_rule **out, char *why, size_t cap)
{
	struct flow_hw_spec s;
	if (flow_hw_spec_fill(&s, r, prio, why, cap) != 0)
		return -1;
	unsigned nb = 0;
	for (unsigned i = 0; i < n; i++) {
		if (r->m.dev != FLOW_ANY && r->m.dev != ports[i].index)
			continue;
		if (r->action == FLOW_ACT_STEER && r->worker >= ports[i].nb_queues) {
			snprintf(why, cap, "%s: worker %u has no RX queue there (%u queues)",
				 ports[i].name, r->worker, ports[i].nb_queues);
			return -1;
		}
		struct rte_flow_error err = {0};
		int rc = rte_flow_validate(ports[i].eth_port, &s.attr, s.items, s.actions, &err);
		if (rc != 0) {
			snprintf(why, cap, "%s: rte_flow: %s", ports[i].name, flow_hw_error(&err, rc));
			return -1;
		}
		nb++;
	}
	if (nb == 0 || nb > FLOW_HW_MAX_PORTS) {
		snprintf(why, cap, nb == 0 ? "no port" : "too many ports");
		return -1;
	}
	struct flow_hw_rule *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(why, cap, "out of memory");
		return -1;
	}
	h->counted = r->action == FLOW_ACT_DROP;
	for (unsigned i = 0; i < n; i++) {
		if (r->m.dev != FLOW_ANY && r->m.dev != ports[i].index)
			continue;
		struct rte_flow_error err = {0};
		struct rte_flow *f = rte_flow_create(ports[i].eth_port, &s.attr, s.items, s.actions,
						     &err);
		if (f == NULL) {
			snprintf(why, cap, "%s: rte_flow: %s", ports[i].name,
				 flow_hw_error(&err, rte_errno));
			flow_hw_remove(h);
			return -1;
		}
		h->f[h->nb].eth_port = ports[i].eth_port;
		h->f[h->nb++].flow = f;
	}
	*out = h;
	return 0;
}

uint64_t flow_hw_hits(const struct flow_hw_rule *h)
{
	uint64_t sum = 0;
	const struct rte_flow_action count = {.type = RTE_FLOW_ACTION_TYPE_COUNT};
	for (unsigned i = 0; i < h->nb && h->counted; i++) {
		struct rte_flow_query_count q = {0};
		struct rte_flow_error err;
		if (rte_flow_query(h->f[i].eth_port, h->f[i].flow, &count, &q, &err) == 0 &&
		    q.hits_set)
			sum += q.hits;
	}
	return sum;
}

uint64_t flow_hw_remove(struct flow_hw_rule *h)
{
	uint64_t hits = flow_hw_hits(h);
	for (unsigned i = 0; i < h->nb; i++) {
		struct rte_flow_error err;
		rte_flow_destroy(h->f[i].eth_port, h->f[i].flow, &err);
	}
	free(h);
	return hits;
}
