/* Reassembly of fragmented datagrams, for IPv4 (RFC 791 §3.2, RFC 815) and IPv6 (RFC 8200
 * §4.5) alike: one table per worker and family (not thread-safe, no locks). The family's
 * code (ip4_reass.c, ip6_reass.c) describes each fragment as a struct reass_piece and fixes
 * the headers of the datagram this returns.
 *
 * Policy, stricter than RFC 791 for safety (RFC 1858, RFC 3128, and RFC 5722 for IPv6): a
 * fragment that overlaps data already held, or a duplicate with different placement or last
 * flag, discards the whole datagram; a TCP fragment with offset 8 (the "tiny fragment"
 * attack of RFC 1858), a non-last fragment with fewer than 8 payload bytes and an empty
 * fragment are dropped alone; exact duplicates (same offset, length and last flag) are
 * dropped alone. Memory is bounded by max_bytes, charged as the buf_len of every segment of
 * every held mbuf, and by max_datagrams; to make room the oldest other datagram is evicted
 * first. */
#ifndef DPS_STACK_REASS_H
#define DPS_STACK_REASS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "wire/inet_addr.h"

struct reass_params {
	uint32_t timeout_ms;          /* a datagram incomplete this long is dropped: 30000 */
	uint32_t max_bytes;           /* held mbuf memory (buf_len of each segment): 4 MiB */
	uint32_t max_datagrams;       /* datagrams in progress, 1..2^20: 1024 */
	uint32_t max_frags;           /* fragments per datagram, 2..8192: 64 */
};

/* Keeps the slot array and its index arithmetic well within 32 bits. */
#define REASS_MAX_DATAGRAMS_LIMIT (1u << 20)
/* The config's `reassembly-memory` bounds: a 64 KB datagram in 45 fragments of 2 KB
 * buffers must fit; and 1 GiB. */
#define REASS_MAX_BYTES_MIN (128u << 10)
#define REASS_MAX_BYTES_LIMIT (1u << 30)

void reass_params_default(struct reass_params *p);

/* Why reass_input kept or dropped a fragment, or what expiry did. */
#define REASS_VERDICT_LIST(X) \
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

enum reass_verdict {
#define REASS_ENUM(name, text) REASS_##name,
	REASS_VERDICT_LIST(REASS_ENUM)
#undef REASS_ENUM
	REASS_VERDICT_COUNT
};

const char *reass_verdict_str(enum reass_verdict v);

/* One fragment as its family reads it. m's data starts at its network header, and its
 * payload (the fragmentable part) at hdr_len. */
struct reass_piece {
	struct inet_addr src, dst;    /* with id and proto: which datagram */
	uint32_t id;
	uint8_t proto;                /* the upper-layer protocol (RFC 1858's check: TCP) */
	bool last;                    /* IPv4 MF, IPv6 M clear */
	uint32_t off;                 /* of the payload in the datagram, bytes */
	uint32_t plen;                /* payload bytes */
	uint16_t hdr_len;             /* bytes before the payload: dropped from all fragments
				       * but the first */
	/* The datagram's length field counts these header bytes with the payload and may not
	 * pass 65535: IPv4 its header (size_hdr_min 20), IPv6 the extension headers before
	 * the fragment header (its fixed header is not counted; minimum 0). A non-first
	 * fragment is judged by the first's when that one has arrived, else the minimum. */
	uint16_t size_hdr;
	uint16_t size_hdr_min;
};

struct reass;

/* Returns NULL (rte_errno set: EINVAL on bad params, a zero one included; ENOMEM) on failure.
 * socket_id as for rte_malloc. */
struct reass *reass_create(const struct reass_params *p, int socket_id);
/* Frees every held fragment and the table. NULL is a no-op. */
void reass_destroy(struct reass *r);

/* Takes one fragment, always taking ownership of m. Returns the datagram this fragment
 * completed (DONE): a chain whose first mbuf is the first fragment whole (header included)
 * and whose others are the payloads of the rest in order, pkt_len covering it all; the
 * family's code then rewrites its header. Otherwise NULL, with *verdict saying whether the
 * fragment is held or why something was dropped. */
struct rte_mbuf *reass_input(struct reass *r, uint64_t now_ms, struct rte_mbuf *m,
			     const struct reass_piece *p, enum reass_verdict *verdict);

/* Drops datagrams older than timeout_ms. For each one whose first fragment (offset 0) had
 * arrived, calls on_timeout(arg, first_fragment) before freeing, so the caller may send its
 * family's time exceeded error (RFC 792 code 1, RFC 4443 §3.3 code 1); the callback must
 * not keep the mbuf. Returns the number of datagrams dropped. */
unsigned reass_expire(struct reass *r, uint64_t now_ms,
		      void (*on_timeout)(void *arg, const struct rte_mbuf *first), void *arg);

/* The timeout of a live table, changeable: datagrams held are judged by the new value at the
 * next expiry. reass_set_timeout returns 0, or -EINVAL for 0. */
int reass_set_timeout(struct reass *r, uint32_t timeout_ms);
uint32_t reass_timeout(const struct reass *r);

struct reass_stats {
	uint32_t datagrams;   /* in progress */
	uint32_t bytes;       /* held, as charged against max_bytes */
	/* One per reass_input call; TIMEOUT also once per datagram reass_expire drops. A
	 * datagram evicted to make room counts once more: TIMEOUT if it had expired, else
	 * NO_MEMORY. */
	uint64_t verdicts[REASS_VERDICT_COUNT];
};
void reass_stats_get(const struct reass *r, struct reass_stats *out);

#endif
