/* IPv4 reassembly (RFC 791 §3.2, RFC 815) with the strict policy of ip4_frag.h.
 *
 * Layout: every table memory is allocated once by ip4_reass_create. Datagrams in progress live
 * in a slot array of max_datagrams entries, each with an inline array of max_frags fragment
 * descriptors kept sorted by offset. A slot is either free (on the free list) or in progress
 * (in one hash chain and in the age list). The age list is in arrival order of each datagram's
 * first fragment, so expiry and eviction take the oldest from its head: O(dropped).
 *
 * Decisions (see also ip4_frag.h):
 * - Memory: a held fragment costs the buf_len of every one of its segments (headroom
 *   included), not its pkt_len: that is what it pins in the mempool, so a flood of 28-byte
 *   fragments in 2 KiB mbufs is charged 2 KiB each.
 * - Tiny fragments (RFC 1858 §3.2 and §4): a TCP fragment at offset 8 (field value 1) is
 *   dropped; so is a fragment with MF set carrying fewer than 8 payload bytes (ip4_parse
 *   already demands multiples of 8 there, so in practice an empty one, including an empty
 *   first fragment), and an empty fragment without MF (legal in RFC 791 but never sent by a
 *   real stack; accepting it would let a zero-length piece mark the end of a datagram).
 *   A tiny fragment is dropped alone; the datagram it belongs to is kept.
 * - A fragment's range is [offset, offset + payload). "Last" is MF clear. An exact duplicate
 *   has the same range and the same MF bit and is dropped alone (its bytes are not compared);
 *   the same range with the other MF bit, or any partial overlap, discards the datagram.
 * - Checks in order: tiny, size within 65535, then against the datagram in progress: second
 *   last with another end or data past the last end (BAD_LAST), duplicate, overlap, size
 *   with the first fragment's header, fragment count (also the mbuf nb_segs limit of the
 *   result), memory.
 * - Memory limit: when a fragment would push the held bytes past max_bytes, whole datagrams
 *   other than its own are evicted oldest first (expired ones are at the head of the age list,
 *   so they go first) until it fits; if it cannot fit even then, nothing is evicted and the
 *   fragment alone is dropped (NO_MEMORY). Evicting for a new datagram when max_datagrams are
 *   in progress works the same way. An evicted datagram counts as TIMEOUT if it had expired,
 *   else as NO_MEMORY, on top of the verdict of the fragment being handled; on_timeout is not
 *   called for it (ip4_reass_input has no callback).
 * - The timer runs from the datagram's first arrival and is not restarted by later fragments
 *   (as Linux does; RFC 791's per-fragment TTL restart lets a trickle keep memory forever).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_random.h>

#include "ip4_frag.h"
#include "wire/bytes.h"
#include "wire/checksum.h"

/* Debian's DPDK is not built with ASan, so rte_malloc memory is invisible to it: under ASan
 * the table comes from the C heap, where overruns of a slot's fragment array are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define REASS_HEAP_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REASS_HEAP_ALLOC 1
#endif
#endif

/* No datagram of at most 65535 bytes has more non-empty, non-overlapping fragments. */
#define REASS_MAX_FRAGS_LIMIT 8192u
/* Keeps the slot array and its index arithmetic well within 32 bits. */
#define REASS_MAX_DATAGRAMS_LIMIT (1u << 20)

/* One held fragment; its payload is the range [off, end) of the datagram. */
struct reass_frag {
	struct rte_mbuf *m;
	uint16_t off;
	uint16_t end;
	uint8_t hdr_len;
	bool last;
};

struct reass_dgram {
	struct reass_dgram *hnext;        /* hash chain, or free list */
	TAILQ_ENTRY(reass_dgram) age;     /* oldest first */
	uint64_t start_ms;                /* arrival of its first fragment */
	uint32_t src;
	uint32_t dst;
	uint16_t id;
	uint8_t proto;
	bool has_last;
	uint16_t first_hdr_len;           /* 0 until the fragment at offset 0 is held */
	uint32_t last_end;                /* valid when has_last */
	uint32_t max_end;                 /* highest end held */
	uint32_t covered;                 /* payload bytes held (ranges never overlap) */
	uint32_t bytes;                   /* memory charged */
	uint32_t nb_segs;                 /* mbuf segments held */
	uint32_t nfrags;
	struct reass_frag frags[];        /* nfrags used, sorted by off; max_frags room */
};

TAILQ_HEAD(reass_age_list, reass_dgram);

struct ip4_reass {
	struct ip4_reass_params p;
	uint32_t hash_seed;
	uint32_t bucket_mask;
	size_t slot_size;
	uint32_t datagrams;
	uint32_t bytes;
	uint64_t verdicts[IP4_REASS_VERDICT_COUNT];
	struct reass_age_list age;
	struct reass_dgram *free;
	struct reass_dgram **buckets;     /* bucket_mask + 1 chains */
	unsigned char *slots;             /* max_datagrams * slot_size */
};

static const char *const verdict_names[] = {
#define IP4_REASS_TEXT(name, text) text,
	IP4_REASS_VERDICT_LIST(IP4_REASS_TEXT)
#undef IP4_REASS_TEXT
};

const char *ip4_reass_verdict_str(enum ip4_reass_verdict v)
{
	if ((unsigned)v >= RTE_DIM(verdict_names))
		return "unknown verdict";
	return verdict_names[v];
}

void ip4_reass_params_default(struct ip4_reass_params *p)
{
	p->timeout_ms = 30000;
	p->max_bytes = 4u << 20;
	p->max_datagrams = 1024;
	p->max_frags = 64;
}

struct ip4_reass *ip4_reass_create(const struct ip4_reass_params *p, int socket_id)
{
	struct ip4_reass *r;
	size_t nbuckets, slot_size, off_buckets, off_slots, total;
	uint32_t i;

	if (p == NULL || p->timeout_ms == 0 || p->max_bytes == 0 || p->max_datagrams == 0 ||
	    p->max_datagrams > REASS_MAX_DATAGRAMS_LIMIT || p->max_frags < 2 ||
	    p->max_frags > REASS_MAX_FRAGS_LIMIT) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* Chains stay short: at least two buckets per datagram. */
	nbuckets = rte_align32pow2(p->max_datagrams * 2);
	slot_size = RTE_ALIGN_CEIL(sizeof(struct reass_dgram) +
				   (size_t)p->max_frags * sizeof(struct reass_frag),
				   RTE_CACHE_LINE_SIZE);
	off_buckets = RTE_ALIGN_CEIL(sizeof(*r), RTE_CACHE_LINE_SIZE);
	off_slots = RTE_ALIGN_CEIL(off_buckets + nbuckets * sizeof(r->buckets[0]),
				   RTE_CACHE_LINE_SIZE);
	total = off_slots + (size_t)p->max_datagrams * slot_size;

#ifdef REASS_HEAP_ALLOC
	r = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_ALIGN_CEIL(total, RTE_CACHE_LINE_SIZE));
	if (r != NULL)
		memset(r, 0, total);
#else
	r = rte_zmalloc_socket("ip4_reass", total, RTE_CACHE_LINE_SIZE, socket_id);
#endif
	if (r == NULL) {
		rte_errno = ENOMEM;
		return NULL;
	}
	r->p = *p;
	r->hash_seed = (uint32_t)rte_rand();
	r->bucket_mask = (uint32_t)nbuckets - 1;
	r->slot_size = slot_size;
	r->buckets = (struct reass_dgram **)((unsigned char *)r + off_buckets);
	r->slots = (unsigned char *)r + off_slots;
	TAILQ_INIT(&r->age);
	for (i = p->max_datagrams; i-- > 0;) {
		struct reass_dgram *d = (struct reass_dgram *)(r->slots + i * slot_size);

		d->hnext = r->free;
		r->free = d;
	}
	return r;
}

static uint32_t reass_bucket(const struct ip4_reass *r, uint32_t src, uint32_t dst,
			     uint16_t id, uint8_t proto)
{
	return rte_jhash_3words(src, dst, (uint32_t)id << 16 | proto, r->hash_seed) &
	       r->bucket_mask;
}

static struct reass_dgram *reass_lookup(const struct ip4_reass *r, const struct ip4_repr *ip)
{
	struct reass_dgram *d = r->buckets[reass_bucket(r, ip->src, ip->dst, ip->id, ip->proto)];

	while (d != NULL && (d->src != ip->src || d->dst != ip->dst || d->id != ip->id ||
			     d->proto != ip->proto))
		d = d->hnext;
	return d;
}

/* Bytes a held mbuf pins: the data room of each of its segments. */
static uint32_t reass_cost(const struct rte_mbuf *m)
{
	uint32_t cost = 0;

	for (; m != NULL; m = m->next)
		cost += m->buf_len;
	return cost;
}

static bool reass_expired(const struct ip4_reass *r, const struct reass_dgram *d, uint64_t now)
{
	return now >= d->start_ms && now - d->start_ms >= r->p.timeout_ms;
}

/* Unlinks d from its chain and the age list and returns its slot; its mbufs are the
 * caller's. */
static void reass_release(struct ip4_reass *r, struct reass_dgram *d)
{
	struct reass_dgram **pp = &r->buckets[reass_bucket(r, d->src, d->dst, d->id, d->proto)];

	while (*pp != d)
		pp = &(*pp)->hnext;
	*pp = d->hnext;
	TAILQ_REMOVE(&r->age, d, age);
	r->datagrams--;
	r->bytes -= d->bytes;
	d->hnext = r->free;
	r->free = d;
}

static void reass_discard(struct ip4_reass *r, struct reass_dgram *d)
{
	uint32_t i;

	for (i = 0; i < d->nfrags; i++)
		rte_pktmbuf_free(d->frags[i].m);
	reass_release(r, d);
}

/* Drops the oldest datagram other than keep, counting it; false when there is none. */
static bool reass_evict_oldest(struct ip4_reass *r, const struct reass_dgram *keep,
			       uint64_t now)
{
	struct reass_dgram *d = TAILQ_FIRST(&r->age);

	if (d == keep && d != NULL)
		d = TAILQ_NEXT(d, age);
	if (d == NULL)
		return false;
	r->verdicts[reass_expired(r, d, now) ? IP4_REASS_TIMEOUT : IP4_REASS_NO_MEMORY]++;
	reass_discard(r, d);
	return true;
}

/* Makes room for cost more bytes by evicting datagrams other than keep (may be NULL).
 * Evicts nothing and returns false when even that could not make room. */
static bool reass_make_room(struct ip4_reass *r, const struct reass_dgram *keep,
			    uint32_t cost, uint64_t now)
{
	uint64_t keep_bytes = keep != NULL ? keep->bytes : 0;

	if (keep_bytes + cost > r->p.max_bytes)
		return false;
	while ((uint64_t)r->bytes + cost > r->p.max_bytes)
		if (!reass_evict_oldest(r, keep, now))
			return false;  /* not reached: keep alone fits */
	return true;
}

static struct reass_dgram *reass_new(struct ip4_reass *r, const struct ip4_repr *ip,
				     uint64_t now)
{
	struct reass_dgram *d;
	uint32_t b;

	if (r->free == NULL && !reass_evict_oldest(r, NULL, now))
		return NULL;  /* not reached: max_datagrams >= 1 */
	d = r->free;
	r->free = d->hnext;
	memset(d, 0, sizeof(*d));
	d->start_ms = now;
	d->src = ip->src;
	d->dst = ip->dst;
	d->id = ip->id;
	d->proto = ip->proto;
	b = reass_bucket(r, ip->src, ip->dst, ip->id, ip->proto);
	d->hnext = r->buckets[b];
	r->buckets[b] = d;
	TAILQ_INSERT_TAIL(&r->age, d, age);
	r->datagrams++;
	return d;
}

/* Removes the first n bytes of m, freeing leading segments that hold only those bytes;
 * returns the new first segment (with nb_segs and pkt_len of the rest). */
static struct rte_mbuf *reass_strip_front(struct rte_mbuf *m, uint32_t n)
{
	while (m->next != NULL && n >= m->data_len) {
		struct rte_mbuf *next = m->next;

		next->nb_segs = (uint16_t)(m->nb_segs - 1);
		next->pkt_len = m->pkt_len - m->data_len;
		n -= m->data_len;
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
		m = next;
	}
	rte_pktmbuf_adj(m, (uint16_t)n);  /* n <= data_len here: payloads are never empty */
	return m;
}

/* Copies buf[0..len) into m's data at off, across segments; the range exists. */
static void reass_write(struct rte_mbuf *m, uint32_t off, const uint8_t *buf, uint32_t len)
{
	for (; m != NULL && len > 0; m = m->next) {
		uint32_t n;

		if (off >= m->data_len) {
			off -= m->data_len;
			continue;
		}
		n = RTE_MIN(len, (uint32_t)m->data_len - off);
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, off), buf, n);
		buf += n;
		len -= n;
		off = 0;
	}
}

/* Chains the held fragments of a complete d behind the first one and rewrites its header. */
static struct rte_mbuf *reass_finish(struct ip4_reass *r, struct reass_dgram *d)
{
	struct rte_mbuf *head = d->frags[0].m;
	uint8_t copy[IP4_HDR_MAX_LEN];
	uint32_t hlen = d->first_hdr_len;
	const uint8_t *ro;
	uint8_t *hdr;
	uint32_t i;

	for (i = 1; i < d->nfrags; i++) {
		struct rte_mbuf *seg = reass_strip_front(d->frags[i].m, d->frags[i].hdr_len);

		/* Cannot overflow: held nb_segs are bounded at insertion. */
		(void)rte_pktmbuf_chain(head, seg);
	}

	/* The header is almost always in the first segment; else edit a copy and write it back. */
	ro = rte_pktmbuf_read(head, 0, hlen, copy);
	hdr = ro == copy ? copy : rte_pktmbuf_mtod(head, uint8_t *);
	wire_put_be16(hdr + IP4_OFF_TOTAL_LEN, (uint16_t)(hlen + d->last_end));
	wire_put_be16(hdr + IP4_OFF_FRAG,
		      (uint16_t)(wire_get_be16(hdr + IP4_OFF_FRAG) & IP4_FLAG_DF));
	wire_put_be16(hdr + IP4_OFF_CSUM, 0);
	wire_put_be16(hdr + IP4_OFF_CSUM, wire_csum(hdr, hlen));
	if (hdr == copy)
		reass_write(head, 0, copy, hlen);
	/* The packet is no longer a fragment for whoever dispatches on the NIC's ptype. */
	if ((head->packet_type & RTE_PTYPE_L4_MASK) == RTE_PTYPE_L4_FRAG)
		head->packet_type &= ~RTE_PTYPE_L4_MASK;

	d->nfrags = 0;  /* the mbufs now belong to the caller */
	reass_release(r, d);
	return head;
}

/* Index of the first held fragment whose offset is >= off. */
static uint32_t reass_find(const struct reass_dgram *d, uint32_t off)
{
	uint32_t lo = 0, hi = d->nfrags;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (d->frags[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Checks a fragment against datagram d; returns HELD when it may be inserted at *pos. */
static enum ip4_reass_verdict reass_check(const struct ip4_reass *r,
					  const struct reass_dgram *d,
					  const struct rte_mbuf *m, const struct ip4_repr *ip,
					  uint32_t off, uint32_t end, uint32_t *pos)
{
	bool last = !ip->mf;
	uint32_t hdr, i;

	if (last && d->has_last && end != d->last_end)
		return IP4_REASS_BAD_LAST;
	if (last && !d->has_last && d->max_end > end)
		return IP4_REASS_BAD_LAST;
	if (!last && d->has_last && end > d->last_end)
		return IP4_REASS_BAD_LAST;

	i = reass_find(d, off);
	if (i < d->nfrags && d->frags[i].off == off && d->frags[i].end == end)
		return d->frags[i].last == last ? IP4_REASS_DUPLICATE : IP4_REASS_OVERLAP;
	if (i > 0 && d->frags[i - 1].end > off)
		return IP4_REASS_OVERLAP;
	if (i < d->nfrags && d->frags[i].off < end)
		return IP4_REASS_OVERLAP;

	hdr = off == 0 ? ip->hdr_len : d->first_hdr_len ? d->first_hdr_len : IP4_HDR_MIN_LEN;
	if (hdr + RTE_MAX(end, d->max_end) > IP4_MAX_LEN)
		return IP4_REASS_TOO_BIG;
	if (d->nfrags >= r->p.max_frags || d->nb_segs + m->nb_segs > RTE_MBUF_MAX_NB_SEGS)
		return IP4_REASS_TOO_MANY_FRAGS;
	*pos = i;
	return IP4_REASS_HELD;
}

struct rte_mbuf *ip4_reass_input(struct ip4_reass *r, uint64_t now_ms, struct rte_mbuf *m,
				 const struct ip4_repr *ip, enum ip4_reass_verdict *verdict)
{
	static const struct reass_dgram empty;
	struct rte_mbuf *done = NULL;
	struct reass_dgram *d;
	enum ip4_reass_verdict v;
	uint32_t plen, off = ip->frag_off, end, cost, pos = 0;
	struct reass_frag *f;

	/* A header ip4_parse would not pass (a caller bug) is counted with the tiny ones. */
	if (ip->hdr_len < IP4_HDR_MIN_LEN || ip->hdr_len > IP4_HDR_MAX_LEN ||
	    ip->total_len < ip->hdr_len) {
		v = IP4_REASS_TINY;
		goto drop;
	}
	plen = ip->total_len - (uint32_t)ip->hdr_len;
	end = off + plen;
	if (plen == 0 || (ip->mf && plen < 8) ||
	    (ip->proto == IP4_PROTO_TCP && off == 8)) {
		v = IP4_REASS_TINY;
		goto drop;
	}
	if ((off == 0 ? ip->hdr_len : IP4_HDR_MIN_LEN) + end > IP4_MAX_LEN) {
		v = IP4_REASS_TOO_BIG;  /* (a lone fragment: ip4_parse prevents it) */
		goto drop;
	}

	d = reass_lookup(r, ip);
	v = reass_check(r, d != NULL ? d : &empty, m, ip, off, end, &pos);
	if (v == IP4_REASS_DUPLICATE)
		goto drop;
	if (v != IP4_REASS_HELD) {
		if (d != NULL)
			reass_discard(r, d);
		goto drop;
	}

	cost = reass_cost(m);
	if (!reass_make_room(r, d, cost, now_ms)) {
		v = IP4_REASS_NO_MEMORY;
		goto drop;
	}
	if (d == NULL)
		d = reass_new(r, ip, now_ms);

	memmove(&d->frags[pos + 1], &d->frags[pos], (d->nfrags - pos) * sizeof(d->frags[0]));
	f = &d->frags[pos];
	f->m = m;
	f->off = (uint16_t)off;
	f->end = (uint16_t)end;
	f->hdr_len = (uint8_t)ip->hdr_len;
	f->last = !ip->mf;
	d->nfrags++;
	d->nb_segs += m->nb_segs;
	d->bytes += cost;
	r->bytes += cost;
	d->covered += plen;
	d->max_end = RTE_MAX(d->max_end, end);
	if (off == 0)
		d->first_hdr_len = (uint16_t)ip->hdr_len;
	if (f->last) {
		d->has_last = true;
		d->last_end = end;
	}

	if (d->has_last && d->first_hdr_len != 0 && d->covered == d->last_end) {
		v = IP4_REASS_DONE;
		done = reass_finish(r, d);
	}
	r->verdicts[v]++;
	if (verdict != NULL)
		*verdict = v;
	return done;

drop:
	rte_pktmbuf_free(m);
	r->verdicts[v]++;
	if (verdict != NULL)
		*verdict = v;
	return NULL;
}

unsigned ip4_reass_expire(struct ip4_reass *r, uint64_t now_ms,
			  void (*on_timeout)(void *arg, const struct rte_mbuf *first), void *arg)
{
	struct reass_dgram *d;
	unsigned n = 0;

	while ((d = TAILQ_FIRST(&r->age)) != NULL && reass_expired(r, d, now_ms)) {
		if (on_timeout != NULL && d->nfrags > 0 && d->frags[0].off == 0)
			on_timeout(arg, d->frags[0].m);
		reass_discard(r, d);
		r->verdicts[IP4_REASS_TIMEOUT]++;
		n++;
	}
	return n;
}

int ip4_reass_set_timeout(struct ip4_reass *r, uint32_t timeout_ms)
{
	if (timeout_ms == 0)
		return -EINVAL;
	r->p.timeout_ms = timeout_ms;
	return 0;
}

uint32_t ip4_reass_timeout(const struct ip4_reass *r)
{
	return r->p.timeout_ms;
}

void ip4_reass_stats_get(const struct ip4_reass *r, struct ip4_reass_stats *out)
{
	out->datagrams = r->datagrams;
	out->bytes = r->bytes;
	memcpy(out->verdicts, r->verdicts, sizeof(out->verdicts));
}

void ip4_reass_destroy(struct ip4_reass *r)
{
	struct reass_dgram *d;

	if (r == NULL)
		return;
	while ((d = TAILQ_FIRST(&r->age)) != NULL)
		reass_discard(r, d);
#ifdef REASS_HEAP_ALLOC
	free(r);
#else
	rte_free(r);
#endif
}
