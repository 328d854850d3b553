/* SYN cookies (D. J. Bernstein's idea; RFC 4987 §3.6): when a listener's SYN queue is full the
 * server still answers each SYN, but keeps no state for it. Instead the ISN of its SYN-ACK is
 * a cookie that authenticates the connection-id and carries the MSS it promised; the ACK that
 * completes the handshake acknowledges cookie + 1, and the server rebuilds the connection from
 * it. The SYN's other options (SACK, window scale, ECN) ride in the low bits of the SYN-ACK's
 * TSval when the peer uses timestamps (RFC 7323), which it echoes in the ACK's TSecr; without
 * timestamps they are lost, the cost RFC 4987 §3.6 names.
 *
 * The cookie (32 bits, our own encoding):
 *
 *   31                                   5 4      3 2       0
 *  +--------------------------------------+--------+---------+
 *  |        MAC (27 bits)                 | period | mss idx |  low 5 bits XOR mask
 *  +--------------------------------------+--------+---------+
 *
 *   period  = now_ms / 64000 (a 32-bit counter of 64-second periods); the cookie holds its
 *             low 2 bits, enough to name the current and the 2 previous periods;
 *   mss idx = index into tcp_syncookie_mss_table;
 *   MAC     = bits 31..5 of SipHash-2-4 under cookie_key of
 *             laddr(16) lport(2) raddr(16) rport(2) peer_isn(4) period(4) mss_idx(1),
 *             big-endian, addresses of either family (IPv4 mapped: every IPv6 bit counts);
 *   mask    = bits 4..0 of SipHash-2-4 under cookie_key of the first 40 of those bytes, so the
 *             cookie's every bit looks random to an off-path observer (RFC 6528 §2).
 *
 * A cookie is accepted while its period is the current one or one of the 2 before it: at least
 * 128 s and at most 192 s after it was made. A forged cookie passes only if its 27 MAC bits
 * match and its period bits name one of those 3 periods: probability 3/4 * 2^-27, about 5.6e-9
 * per guess, so 10^6 guessed ACKs let in about 0.006 connections. */
#ifndef DPS_TCP_TCP_SYNCOOKIE_H
#define DPS_TCP_TCP_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp_isn.h"

/* Length of one counter period in milliseconds, and how many periods back a cookie is good. */
#define TCP_SYNCOOKIE_PERIOD_MS 64000u
#define TCP_SYNCOOKIE_MAX_AGE   2u

/* The MSS values a cookie can promise, ascending (3 bits of index). 536 is RFC 9293 §3.7.1's
 * default, 1300..1452 are common tunnel and PPPoE values, 1460 Ethernet, 8960 jumbo frames. */
#define TCP_SYNCOOKIE_MSS_COUNT 8
extern const uint16_t tcp_syncookie_mss_table[TCP_SYNCOOKIE_MSS_COUNT];

/* Bits of TSval/TSecr that carry options: 0..3 window scale (15: none), 4 SACK, 5 ECN. */
#define TCP_SYNCOOKIE_TS_BITS 6
#define TCP_SYNCOOKIE_TS_MASK ((1u << TCP_SYNCOOKIE_TS_BITS) - 1)

/* What a cookie restores. */
struct tcp_syncookie_opts {
	uint16_t mss;
	bool sack_ok;
	bool wscale_ok;
	uint8_t wscale;
	bool ecn_ok;
	bool ts_ok;
};

/* The MSS a cookie will promise for a SYN whose MSS option (or RFC 9293 §3.7.1's 536 when it
 * had none) was peer_mss: the largest table entry <= peer_mss. Below 536 the result is still
 * 536: a host must reassemble 576-byte datagrams (RFC 1122 §3.3.2), and honouring a tiny MSS
 * is a resource attack (CVE-2019-11479), so the stack never sends smaller segments anyway. */
uint16_t tcp_syncookie_mss_pick(uint16_t peer_mss);

/* Makes the ISN for our SYN-ACK answering a SYN from raddr:rport to laddr:lport (host order)
 * whose sequence number was peer_isn and whose MSS option was peer_mss, at now_ms on a
 * monotonic millisecond clock. Returns the cookie; *mss_out = the MSS it encodes. */
uint32_t tcp_syncookie_make(const struct tcp_secret *s, const struct inet_addr *laddr,
			    uint16_t lport, const struct inet_addr *raddr, uint16_t rport, uint32_t peer_isn, uint16_t peer_mss,
			    uint64_t now_ms, uint16_t *mss_out);

/* Checks the ACK completing a cookie handshake: cookie = SEG.ACK - 1, peer_isn = SEG.SEQ - 1.
 * Returns 0 and *mss_out = the promised MSS when the cookie was made by tcp_syncookie_make()
 * for this connection-id and peer_isn in the current period or one of the
 * TCP_SYNCOOKIE_MAX_AGE before it; -EINVAL (forged, mistargeted or expired; *mss_out is
 * untouched) otherwise. */
int tcp_syncookie_check(const struct tcp_secret *s, const struct inet_addr *laddr,
			uint16_t lport, const struct inet_addr *raddr, uint16_t rport, uint32_t peer_isn, uint32_t cookie,
			uint64_t now_ms, uint16_t *mss_out);

/* The TSval for our SYN-ACK when the SYN carried timestamps: ts_now with its low
 * TCP_SYNCOOKIE_TS_BITS replaced by o's SACK/window-scale/ECN choices (o->mss and o->ts_ok are
 * not read; a wscale above 14 is sent as 14, RFC 7323 §2.3). The result is never after ts_now
 * and at most TCP_SYNCOOKIE_TS_MASK ticks before it (modulo 2^32), so the TSvals that follow it
 * on the real clock stay monotonic (RFC 7323 §5.4). */
uint32_t tcp_syncookie_tsval(const struct tcp_syncookie_opts *o, uint32_t ts_now);

/* Decodes the options from the ACK's TSecr (our TSval echoed): sets sack_ok, wscale_ok, wscale
 * (0 when wscale_ok is false), ecn_ok and ts_ok = true; leaves o->mss alone. The bits are not
 * authenticated, but only the peer that passed tcp_syncookie_check() can set them, and it could
 * have asked for any of them in its SYN. */
void tcp_syncookie_tsecr_decode(uint32_t tsecr, struct tcp_syncookie_opts *o);

#endif
