/* IPv4 fragmentation on output and reassembly on input (RFC 791 §3.2, RFC 815), one
 * instance per worker (not thread-safe, no locks).
 *
 * Reassembly policy, stricter than RFC 791 for safety (RFC 1858, RFC 3128, and the reasoning
 * of RFC 5722 for IPv6): a fragment that overlaps data already held, or a duplicate with
 * different placement or MF bit, discards the whole datagram; a TCP fragment with offset 8
 * (the "tiny fragment" attack of RFC 1858), a fragment with MF set and fewer than 8 payload
 * bytes (so a first fragment too short to hold 8 transport bytes) and an empty fragment are
 * dropped alone; exact duplicates (same offset, length and MF) are dropped alone. Memory is
 * bounded by max_bytes, charged as the buf_len of every segment of every held mbuf, and by
 * max_datagrams; to make room the oldest other datagram is evicted first. */
#ifndef DPS_IP4_IP4_FRAG_H
#define DPS_IP4_IP4_FRAG_H

#include <stdint.h>

#include <rte_mbuf.h>

#include "wire/ipv4.h"

struct ip4_reass_params {
	uint32_t timeout_ms;          /* a datagram incomplete this long is dropped: 30000 */
	uint32_t max_bytes;           /* held mbuf memory (buf_len of each segment): 4 MiB */
	uint32_t max_datagrams;       /* datagrams in progress, 1..2^20: 1024 */
	uint32_t max_frags;           /* fragments per datagram, 2..8192: 64 */
};

void ip4_reass_params_default(struct ip4_reass_params *p);

/* Why ip4_reass_input kept or dropped a fragment, or what expiry did. */
#define IP4_REASS_VERDICT_LIST(X) \
	X(HELD,          "fragment held, datagram incomplete") \
	X(DONE,          "datagram complete") \
	X(DUPLICATE,     "exact duplicate fragment dropped") \
	X(OVERLAP,       "overlapping fragment: datagram discarded") \
	X(TINY,          "tiny fragment (RFC 1858) dropped") \
	X(TOO_BIG,       "reassembled length past 65535: datagram discarded") \
	X(BAD_LAST,      "fragments after the last one or a second last one: datagram discarded") \
	X(TOO_MANY_FRAGS,"too many fragments: datagram discarded") \
	X(NO_MEMORY,     "memory limit reached: fragment dropped") \
	X(TIMEOUT,       "datagram timed out")

enum ip4_reass_verdict {
#define IP4_REASS_ENUM(name, text) IP4_REASS_##name,
	IP4_REASS_VERDICT_LIST(IP4_REASS_ENUM)
#undef IP4_REASS_ENUM
	IP4_REASS_VERDICT_COUNT
};

const char *ip4_reass_verdict_str(enum ip4_reass_verdict v);

struct ip4_reass;

/* Returns NULL (rte_errno set: EINVAL on bad params, a zero one included; ENOMEM) on failure.
 * socket_id as for rte_malloc. */
struct ip4_reass *ip4_reass_create(const struct ip4_reass_params *p, int socket_id);
/* Frees every held fragment and the table. NULL is a no-op. */
void ip4_reass_destroy(struct ip4_reass *r);

/* Takes one fragment: m's data starts at the IPv4 header, m is trimmed to ip->total_len and ip
 * is its validated header (ip->mf or ip->frag_off non-zero). Always takes ownership of m.
 * Returns the reassembled datagram when this fragment completed it (DONE): a chain of mbufs
 * whose data starts at the first fragment's header, with total length, fragment field and
 * header checksum rewritten, pkt_len covering it all. Otherwise NULL, with *verdict saying
 * whether the fragment is held or why something was dropped. */
struct rte_mbuf *ip4_reass_input(struct ip4_reass *r, uint64_t now_ms, struct rte_mbuf *m,
				 const struct ip4_repr *ip, enum ip4_reass_verdict *verdict);

/* Drops datagrams older than timeout_ms. For each one whose first fragment (offset 0) had
 * arrived, calls on_timeout(arg, first_fragment) before freeing, so the caller may send ICMP
 * time exceeded code 1 (RFC 792); the callback must not keep the mbuf. Returns the number of
 * datagrams dropped. */
unsigned ip4_reass_expire(struct ip4_reass *r, uint64_t now_ms,
			  void (*on_timeout)(void *arg, const struct rte_mbuf *first), void *arg);

/* The timeout of a live table, changeable: datagrams held are judged by the new value at the
 * next expiry. ip4_reass_set_timeout returns 0, or -EINVAL for 0. */
int ip4_reass_set_timeout(struct ip4_reass *r, uint32_t timeout_ms);
uint32_t ip4_reass_timeout(const struct ip4_reass *r);

struct ip4_reass_stats {
	uint32_t datagrams;   /* in progress */
	uint32_t bytes;       /* held, as charged against max_bytes */
	/* One per ip4_reass_input call; TIMEOUT also once per datagram ip4_reass_expire drops.
	 * A datagram evicted to make room counts once more: TIMEOUT if it had expired, else
	 * NO_MEMORY. */
	uint64_t verdicts[IP4_REASS_VERDICT_COUNT];
};
void ip4_reass_stats_get(const struct ip4_reass *r, struct ip4_reass_stats *out);

/* Splits the datagram m (data at an IPv4 header without DF, any number of segments) into
 * fragments of at most mtu bytes each, freshly allocated from pool: each carries a copy of the
 * header (options other than those with the copy flag are kept only in the first, RFC 791),
 * payload in multiples of 8, MF and offset set, checksum computed. A datagram that already
 * fits is copied into one fragment. On success frees m, stores the fragments in out[0..n) and
 * returns n. Returns -EMSGSIZE when more than max_out fragments would be needed, mtu cannot
 * carry 8 payload bytes, or DF is set and m exceeds mtu; -ENOBUFS when pool is empty; -EINVAL
 * when m does not start with a well-formed header (version, IHL, total length within pkt_len,
 * option lengths) or pool's data room cannot hold it; m is untouched on error. */
int ip4_fragment(struct rte_mbuf *m, uint16_t mtu, struct rte_mempool *pool,
		 struct rte_mbuf **out, unsigned max_out);

#endif
