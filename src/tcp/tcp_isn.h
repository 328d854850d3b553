/* TCP initial sequence numbers (RFC 6528 §3): ISN = M + F(localip, localport, remoteip,
 * remoteport, secretkey), where M is a timer ticking every 4 µs and F is a keyed PRF, here
 * SipHash-2-4. Each connection-id gets its own sequence-number space, still advancing with the
 * clock as RFC 9293 §3.4.1 asks, which an off-path attacker cannot guess (RFC 6528 §2). The same
 * secret carries the key of the SYN cookies (tcp_syncookie.h). */
#ifndef DPS_TCP_TCP_ISN_H
#define DPS_TCP_TCP_ISN_H

#include <stdint.h>

#include "base/siphash.h"
#include "wire/inet_addr.h"

/* Secrets of one stack instance. Both 128-bit keys must come from a good random source, since
 * F() is only as unguessable as its key (RFC 6528 §3, §6); tcp_secret_init_random() does that.
 * isn_key keys F() of RFC 6528; cookie_key keys the SYN-cookie MAC, so that one output never
 * helps guess the other. */
struct tcp_secret {
	struct siphash_key isn_key;
	struct siphash_key cookie_key;
};

/* Fills both keys from getrandom(2), or from /dev/urandom where the kernel has no getrandom.
 * Returns 0, or -errno when no random bytes could be had (the keys are then zeroed, and the
 * caller must not start: a guessable key defeats RFC 6528). */
int tcp_secret_init_random(struct tcp_secret *s);

/* The ISN for a connection from laddr:lport to raddr:rport (ports in host order; addresses of
 * either family, IPv4 as mapped ones) at now_us microseconds on a monotonic clock.
 * M = now_us / 4 mod 2^32 (RFC 6528 §3, RFC 9293 §3.4.1), F = SipHash-2-4 under s->isn_key of
 * the 36 bytes
 *   laddr (16) | lport (2, big-endian) | raddr (16) | rport (2, BE),
 * truncated to its low 32 bits: all 128 bits of an IPv6 address count. The result wraps
 * modulo 2^32. */
uint32_t tcp_isn(const struct tcp_secret *s, const struct inet_addr *laddr, uint16_t lport,
		 const struct inet_addr *raddr, uint16_t rport, uint64_t now_us);

#endif
