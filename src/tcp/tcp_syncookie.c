/* SYN cookies: making and checking the cookie ISN, and carrying the SYN's options in TSval.
 * The encoding is described in tcp_syncookie.h. */
#include <errno.h>

#include "wire/bytes.h"
#include "tcp_syncookie.h"

#define COOKIE_LOW_BITS 5
#define COOKIE_LOW_MASK ((1u << COOKIE_LOW_BITS) - 1)
#define COOKIE_MSS_BITS 3
#define COOKIE_MSS_MASK ((1u << COOKIE_MSS_BITS) - 1)
#define COOKIE_PERIOD_MASK 3u /* 2 bits of the period counter */

#define TS_WSCALE_MASK 0x0fu
#define TS_WSCALE_NONE 0x0fu
#define TS_SACK_BIT    0x10u
#define TS_ECN_BIT     0x20u
#define TS_WSCALE_MAX  14 /* RFC 7323 §2.3 */

_Static_assert(TCP_SYNCOOKIE_MSS_COUNT == 1 << COOKIE_MSS_BITS, "mss index is 3 bits");
_Static_assert(TCP_SYNCOOKIE_MAX_AGE < COOKIE_PERIOD_MASK + 1,
	       "ages 0..MAX_AGE must differ in the period bits, and one value must stay unused");
_Static_assert(TCP_SYNCOOKIE_TS_MASK == (TS_WSCALE_MASK | TS_SACK_BIT | TS_ECN_BIT),
	       "TS option bits");

const uint16_t tcp_syncookie_mss_table[TCP_SYNCOOKIE_MSS_COUNT] = {
	536, 1300, 1360, 1400, 1440, 1452, 1460, 8960,
};

/* The hashed bytes: the connection-id and the SYN's sequence number, then (for the MAC only)
 * the period and the MSS index. The two inputs differ in length, which SipHash encodes in its
 * last word, so the mask and the MAC are independent outputs of the PRF. */
#define COOKIE_BASE_LEN 40
#define COOKIE_MAC_LEN  45

static void cookie_base(uint8_t *msg, const struct inet_addr *laddr, uint16_t lport,
			const struct inet_addr *raddr, uint16_t rport, uint32_t peer_isn)
{
	memcpy(msg, laddr->b, 16);
	wire_put_be16(msg + 16, lport);
	memcpy(msg + 18, raddr->b, 16);
	wire_put_be16(msg + 34, rport);
	wire_put_be32(msg + 36, peer_isn);
}

/* Bits 31..5 of the MAC over a message whose first COOKIE_BASE_LEN bytes are filled. */
static uint32_t cookie_mac(const struct tcp_secret *s, uint8_t *msg, uint32_t period,
			   unsigned mss_idx)
{
	wire_put_be32(msg + COOKIE_BASE_LEN, period);
	msg[COOKIE_BASE_LEN + 4] = (uint8_t)mss_idx;
	return (uint32_t)siphash24(&s->cookie_key, msg, COOKIE_MAC_LEN) & ~COOKIE_LOW_MASK;
}

static uint32_t cookie_mask(const struct tcp_secret *s, const uint8_t *msg)
{
	return (uint32_t)siphash24(&s->cookie_key, msg, COOKIE_BASE_LEN) & COOKIE_LOW_MASK;
}

static uint32_t cookie_period(uint64_t now_ms)
{
	return (uint32_t)(now_ms / TCP_SYNCOOKIE_PERIOD_MS);
}

static unsigned syncookie_mss_index(uint16_t peer_mss)
{
	unsigned i;

	for (i = TCP_SYNCOOKIE_MSS_COUNT - 1; i > 0; i--)
		if (tcp_syncookie_mss_table[i] <= peer_mss)
			break;
	return i;
}

uint16_t tcp_syncookie_mss_pick(uint16_t peer_mss)
{
	return tcp_syncookie_mss_table[syncookie_mss_index(peer_mss)];
}

uint32_t tcp_syncookie_make(const struct tcp_secret *s, const struct inet_addr *laddr,
			    uint16_t lport, const struct inet_addr *raddr, uint16_t rport, uint32_t peer_isn, uint16_t peer_mss,
			    uint64_t now_ms, uint16_t *mss_out)
{
	uint8_t msg[COOKIE_MAC_LEN];
	uint32_t period = cookie_period(now_ms);
	unsigned mss_idx = syncookie_mss_index(peer_mss);
	uint32_t low;

	cookie_base(msg, laddr, lport, raddr, rport, peer_isn);
	low = ((period & COOKIE_PERIOD_MASK) << COOKIE_MSS_BITS | mss_idx) ^ cookie_mask(s, msg);
	*mss_out = tcp_syncookie_mss_table[mss_idx];
	return cookie_mac(s, msg, period, mss_idx) | low;
}

int tcp_syncookie_check(const struct tcp_secret *s, const struct inet_addr *laddr,
			uint16_t lport, const struct inet_addr *raddr, uint16_t rport, uint32_t peer_isn, uint32_t cookie,
			uint64_t now_ms, uint16_t *mss_out)
{
	uint8_t msg[COOKIE_MAC_LEN];
	uint32_t now_period = cookie_period(now_ms);
	uint32_t low, age, period;
	unsigned mss_idx;

	cookie_base(msg, laddr, lport, raddr, rport, peer_isn);
	low = (cookie ^ cookie_mask(s, msg)) & COOKIE_LOW_MASK;
	mss_idx = low & COOKIE_MSS_MASK;
	/* The full period from its low 2 bits: the latest one not after now. Modulo-2^32
	 * arithmetic, so the counter may wrap. An age of 3 is a cookie too old, or one from the
	 * future (a clock gone back). */
	age = (now_period - (low >> COOKIE_MSS_BITS)) & COOKIE_PERIOD_MASK;
	if (age > TCP_SYNCOOKIE_MAX_AGE)
		return -EINVAL;
	period = now_period - age;
	if (cookie_mac(s, msg, period, mss_idx) != (cookie & ~COOKIE_LOW_MASK))
		return -EINVAL;
	*mss_out = tcp_syncookie_mss_table[mss_idx];
	return 0;
}

uint32_t tcp_syncookie_tsval(const struct tcp_syncookie_opts *o, uint32_t ts_now)
{
	uint32_t bits = TS_WSCALE_NONE;
	uint32_t tsval;

	if (o->wscale_ok)
		bits = o->wscale > TS_WSCALE_MAX ? TS_WSCALE_MAX : o->wscale;
	if (o->sack_ok)
		bits |= TS_SACK_BIT;
	if (o->ecn_ok)
		bits |= TS_ECN_BIT;
	tsval = (ts_now & ~TCP_SYNCOOKIE_TS_MASK) | bits;
	/* Never ahead of the clock (RFC 7323 §5.4: our later TSvals must not go back): step one
	 * span back, which modulo 2^32 also covers ts_now near 0. */
	if ((int32_t)(tsval - ts_now) > 0)
		tsval -= TCP_SYNCOOKIE_TS_MASK + 1;
	return tsval;
}

void tcp_syncookie_tsecr_decode(uint32_t tsecr, struct tcp_syncookie_opts *o)
{
	uint32_t ws = tsecr & TS_WSCALE_MASK;

	o->wscale_ok = ws != TS_WSCALE_NONE;
	o->wscale = o->wscale_ok ? (uint8_t)ws : 0;
	o->sack_ok = (tsecr & TS_SACK_BIT) != 0;
	o->ecn_ok = (tsecr & TS_ECN_BIT) != 0;
	o->ts_ok = true;
}
