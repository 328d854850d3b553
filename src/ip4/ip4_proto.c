/* IPv4 as a protocol of a stack instance (src/stack/stack_proto.h): its state (the
 * reassembly table, the ICMP error rate limit), its timers, and what the layers around it ask
 * of it. */
#include <errno.h>

#include <rte_ip.h>

#include "ip4.h"
#include "wire/bytes.h"
#include "wire/checksum.h"
#include "wire/eth.h"
#include "wire/icmp4.h"

static int ip4_init(struct stack *s, const struct stack_params *p)
{
	ratelimit_init(&s->icmp_errors, p->icmp_rate, p->icmp_burst, 0);
	s->reass = reass_create(&p->reass, p->socket_id);
	return s->reass != NULL ? 0 : -ENOMEM;
}

static void ip4_fini(struct stack *s)
{
	reass_destroy(s->reass);
	s->reass = NULL;
}

void ip4_reass_sync_drops(struct stack *s)
{
	static const enum stack_drop drop_for[REASS_VERDICT_COUNT] = {
		[REASS_DUPLICATE] = STACK_DROP_IP_REASS_DUPLICATE,
		[REASS_OVERLAP] = STACK_DROP_IP_REASS_OVERLAP,
		[REASS_TINY] = STACK_DROP_IP_REASS_TINY,
		[REASS_TOO_BIG] = STACK_DROP_IP_REASS_TOO_BIG,
		[REASS_BAD_LAST] = STACK_DROP_IP_REASS_BAD_LAST,
		[REASS_TOO_MANY_FRAGS] = STACK_DROP_IP_REASS_TOO_MANY,
		[REASS_NO_MEMORY] = STACK_DROP_IP_REASS_NO_MEMORY,
		[REASS_TIMEOUT] = STACK_DROP_IP_REASS_TIMEOUT,
	};
	stack_reass_sync_drops(s, s->reass, drop_for);
}

static void reass_timed_out(void *arg, const struct rte_mbuf *first)
{
	struct stack *s = arg;
	/* RFC 792: time exceeded code 1, only when fragment zero was received. */
	icmp4_send_error(s, first, ICMP4_TIME_EXCEEDED, ICMP4_TIMEX_REASS, 0);
}

static void ip4_tick(struct stack *s)
{
	if (reass_expire(s->reass, s->now_ms, reass_timed_out, s) != 0)
		ip4_reass_sync_drops(s);
}

/* RFC 1812 §4.3.3.1: a router that cannot resolve the next hop answers host unreachable.
 * Only forwarded packets get one; our own traffic learns of it from its transport. */
static void ip4_host_unreachable(struct stack *s, const struct rte_mbuf *m)
{
	uint32_t src = wire_get_be32(rte_pktmbuf_mtod(m, const uint8_t *) + IP4_OFF_SRC);
	if (!netcfg_addr_is_local(&s->cfg, src))
		icmp4_send_error(s, m, ICMP4_DEST_UNREACH, ICMP4_UNREACH_HOST, 0);
}

uint16_t ip4_l4_checksum_chain(const struct rte_mbuf *m, const struct ip4_repr *ip,
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

const struct stack_proto ip4_proto = {
	.name = "ipv4",
	.init = ip4_init,
	.fini = ip4_fini,
	.ethertype = ETH_TYPE_IPV4,
	.input = ip4_input,
	.host_unreachable = ip4_host_unreachable,
	.tick = ip4_tick,
};
