/* Multicast Listener Discovery on the worker side: queries validated and handed to the
 * control thread, which keeps each port's listener state and timers (src/addrconf), and the
 * reports it asks for built and sent. A switch that snoops MLD delivers a group's traffic
 * only to ports that reported it: without reports, the solicited-node multicast that
 * Neighbor Discovery needs would stop reaching us. */
#include <errno.h>
#include <string.h>

#include "ip6.h"
#include "stack/exception.h"

void mld_query_input(struct stack *s, struct rte_mbuf *m, const struct ip6_repr *ip,
		     size_t msg_off)
{
	const uint8_t *msg = rte_pktmbuf_mtod_offset(m, const uint8_t *, msg_off);
	size_t len = RTE_MIN((size_t)(IP6_HDR_LEN + ip->payload_len - msg_off),
			     (size_t)rte_pktmbuf_data_len(m) - msg_off);
	struct ip6_ctl_event ev = {.kind = IP6_CTL_MLD_QUERY, .port = m->port, .src = ip->src};
	if (mld_query_parse(msg, len, ip, &ev.query) != WIRE_OK) {
		stack_drop(s, STACK_DROP_MLD_INVALID, m);
		return;
	}
	if (ip6_ctl_post(s, &ev))
		stack_count(s, STACK_EV_MLD_RX_QUERY);
	/* The kernel beside us answers for its own groups. */
	if (!stack_exception(s, m, STACK_EV_KERNEL_IP6))
		rte_pktmbuf_free(m);
}

/* Sends one MLD message msg[0..len) to dst with the Router Alert hop-by-hop header. */
static int mld_send_one(struct stack *s, uint16_t port, const struct ip6_addr *dst,
			const uint8_t *msg, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(s->pool);
	uint8_t *b = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;
	if (b == NULL) {
		s->drops[STACK_DROP_TX_NO_MBUF]++;
		rte_pktmbuf_free(m);
		return -ENOBUFS;
	}
	memcpy(b, msg, len);
	/* RFC 3810 §5.2.13: from the link-local address, or :: while it is tentative. */
	struct ip6_out d = {.dst = *dst, .port = port, .on_link = true, .hop_limit = 1,
			     .next_header = IP6_NH_HOPOPTS};
	static const struct ip6_addr ll_probe = {.b = {0xfe, 0x80, [15] = 1}};
	d.from_unspecified = !netcfg6_source_for(&s->cfg, port, &ll_probe, &d.src) ||
			     !ip6_is_link_local(&d.src);
	if (d.from_unspecified)
		d.src = (struct ip6_addr){{0}};
	/* The checksum covers the ICMPv6 message alone, then the header goes in front. */
	icmp6_fill_checksum(m, &d);
	uint8_t *h = (uint8_t *)rte_pktmbuf_prepend(m, MLD_HBH_LEN);
	if (h == NULL) {
		stack_drop(s, STACK_DROP_TX_NO_MBUF, m);
		return -ENOBUFS;
	}
	mld_build_hbh(h);
	int rc = ip6_output(s, m, &d);
	if (rc == 0)
		stack_count(s, STACK_EV_MLD_TX);
	return rc;
}

/* A v2 report of up to this many records fits the minimum MTU (RFC 3810 §5.2.15). */
#define MLD2_RECORDS_PER_REPORT 56

int mld_send(struct stack *s, uint16_t port, unsigned version, uint8_t rtype,
	     const struct ip6_addr *groups, unsigned n)
{
	static const struct ip6_addr all_mldv2_routers = {.b = {0xff, 0x02, [15] = 0x16}};
	static const struct ip6_addr all_routers = {.b = {0xff, 0x02, [15] = 2}};
	uint8_t msg[ICMP6_HDR_LEN + MLD2_RECORDS_PER_REPORT * MLD2_RECORD_LEN];
	int rc = 0;
	if (version == 2) {
		for (unsigned i = 0; i < n && rc == 0; i += MLD2_RECORDS_PER_REPORT) {
			unsigned k = RTE_MIN(n - i, (unsigned)MLD2_RECORDS_PER_REPORT);
			size_t len = mld2_build_report(msg, sizeof(msg), rtype, groups + i, k);
			rc = mld_send_one(s, port, &all_mldv2_routers, msg, len);
		}
		return rc;
	}
	bool done = rtype == MLD2_CHANGE_TO_INCLUDE;
	for (unsigned i = 0; i < n && rc == 0; i++) {
		size_t len = mld1_build(msg, sizeof(msg), done ? ICMP6_MLD_DONE : ICMP6_MLD_REPORT,
					&groups[i]);
		rc = mld_send_one(s, port, done ? &all_routers : &groups[i], msg, len);
	}
	return rc;
}
