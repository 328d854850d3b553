/* Reassembly (RFC 791 §3.2, RFC 815, RFC 8200 §4.5) with the strict policy of reass.h.
 *
 * Layout: every table memory is allocated once by reass_create. Datagrams in progress live
 * in a slot array of max_datagrams entries, each with an inline array of max_frags fragment
 * descriptors kept sorted by offset. A slot is either free (on the free list) or in progress
 * (in one hash chain and in the age list). The age list is in arrival order of each datagram's
 * first fragment, so expiry and eviction take the oldest from its head: O(dropped).
 *
 * Decisions (see also reass.h):
 * - Memory: a held fragment costs the buf_len of every one of its segments (headroom
 *   included), not its pkt_len: that is what it pins in the mempool, so a flood of 28-byte
 *   fragments in 2 KiB mbufs is charged 2 KiB each.
 * - Tiny fragments (RFC 1858 §3.2 and §4): a TCP fragment at offset 8 (field value 1) is
 *   dropped; so is a non-last fragment carrying fewer than 8 payload bytes (both families'
 *   parsers already demand multiples of 8 there, so in practice an empty one, including an
 *   empty first fragment), and an empty last fragment (legal in RFC 791 but never sent by a
 *   real stack; accepting it would let a zero-length piece mark the end of a datagram).
 *   A tiny fragment is dropped alone; the datagram it belongs to is kept.
 * - A fragment's range is [offset, offset + payload). "Last" is MF clear. An exact duplicate
 *   has the same range and the same last flag and is dropped alone (its bytes are not
 *   compared); the same range with the other flag, or any partial overlap, discards the
 *   datagram (for IPv6 as RFC 5722 requires).
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
 *   called for it (reass_input has no callback).
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

#include "reass.h"

/* Debian's DPDK is not built with ASan, so rte_malloc memory is invisible to it: under ASan
 * the table comes from the C heap, where overruns of a slot's fragment array are caught. */
#if defined(__SANITIZE_ADDRESS__)
#define REASS_HEAP_ALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REASS_HEAP_ALLOC 1
#endif
#endif

/* Both families' length fields are 16 bits (reass.h: what each counts). */
#define REASS_MAX_LEN 65535u
/* RFC 1858's tiny fragments concern TCP: its protocol number, the same in both families. */
#define REASS_PROTO_TCP 6
/* No datagram of at most 65535 bytes has more non-empty, non-overlapping fragments. */
#define REASS_MAX_FRAGS_LIMIT 8192u

/* One held fragment; its payload is the range [off, end) of the datagram. */
struct reass_frag {
	struct rte_mbuf *m;
	uint16_t off;
	uint16_t end;
	uint16_t hdr_len;
	bool last;
};

struct reass_dgram {
	struct reass_dgram *hnext;        /* hash chain, or free list */
	TAILQ_ENTRY(reass_dgram) age;     /* oldest first */
	uint64_t start_ms;                /* arrival of its first fragment */
	struct inet_addr src;
	struct inet_addr dst;
	uint32_t id;
	uint8_t proto;
	bool has_last;
	bool has_first;                   /* the fragment at offset 0 is held */
	uint16_t first_size_hdr;          /* its size_hdr, when has_first */
	uint32_t last_end;                /* valid when has_last */
	uint32_t max_end;                 /* highest end held */
	uint32_t covered;                 /* payload bytes held (ranges never overlap) */
	uint32_t bytes;                   /* memory charged */
	uint32_t nb_segs;                 /* mbuf segments held */
	uint32_t nfrags;
	struct reass_frag frags[];        /* nfrags used, sorted by off; max_frags room */
};

TAILQ_HEAD(reass_age_list, reass_dgram);

struct reass {
	struct reass_params p;
	uint32_t hash_seed;
	uint32_t bucket_mask;
	size_t slot_size;
	uint32_t datagrams;
	uint32_t bytes;
	uint64_t verdicts[REASS_VERDICT_COUNT];
	struct reass_age_list age;
	struct reass_dgram *free;
	struct reass_dgram **buckets;     /* bucket_mask + 1 chains */
	unsigned char *slots;             /* max_datagrams * slot_size */
};

static const char *const verdict_names[] = {
#define REASS_TEXT(name, text) text,
	REASS_VERDICT_LIST(REASS_TEXT)
#undef REASS_TEXT
};

const char *reass_verdict_str(enum reass_verdict v)
{
	if ((unsigned)v >= RTE_DIM(verdict_names))
		return "unknown verdict";
	return verdict_names[v];
}

void reass_params_default(struct reass_params *p)
{
	p->timeout_ms = 30000;
	p->max_bytes = 4u << 20;
	p->max_datagrams = 1024;
	p->max_frags = 64;
}

struct reass *reass_create(const struct reass_params *p, int socket_id)
{
	struct reass *r;
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
	r = rte_zmalloc_socket("reass", total, RTE_CACHE_LINE_SIZE, socket_id);
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

/* The words of an address, folded: the table's seed is random, so this only spreads. */
static uint32_t reass_fold(const struct inet_addr *a)
{
	uint32_t w[4];

	memcpy(w, a->b, sizeof(w));
	return w[0] ^ w[1] ^ w[2] ^ w[3];
}

static uint32_t reass_bucket(const struct reass *r, const struct inet_addr *src,
			     const struct inet_addr *dst, uint32_t id, uint8_t proto)
{
	return rte_jhash_3words(reass_fold(src), reass_fold(dst) ^ proto, id, r->hash_seed) &
	       r->bucket_mask;
}

static bool reass_is(const struct reass_dgram *d, const struct reass_piece *p)
{
	return d->id == p->id && d->proto == p->proto && inet_addr_equal(&d->src, &p->src) &&
	       inet_addr_equal(&d->dst, &p->dst);
}

static struct reass_dgram *reass_lookup(const struct reass *r, const struct reass_piece *p)
{
	struct reass_dgram *d = r->buckets[reass_bucket(r, &p->src, &p->dst, p->id, p->proto)];

	while (d != NULL && !reass_is(d, p))
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

static bool reass_expired(const struct reass *r, const struct reass_dgram *d, uint64_t now)
{
	return now >= d->start_ms && now - d->start_ms >= r->p.timeout_ms;
}

/* Unlinks d from its chain and the age list and returns its slot; its mbufs are the
 * caller's. */
static void reass_release(struct reass *r, struct reass_dgram *d)
{
	struct reass_dgram **pp = &r->buckets[reass_bucket(r, &d->src, &d->dst, d->id, d->proto)];

	while (*pp != d)
		pp = &(*pp)->hnext;
	*pp = d->hnext;
	TAILQ_REMOVE(&r->age, d, age);
	r->datagrams--;
	r->bytes -= d->bytes;
	d->hnext = r->free;
	r->free = d;
}

static void reass_discard(struct reass *r, struct reass_dgram *d)
{
	uint32_t i;

	for (i = 0; i < d->nfrags; i++)
		rte_pktmbuf_free(d->frags[i].m);
	reass_release(r, d);
}

/* Drops the oldest datagram other than keep, counting it; false when there is none. */
static bool reass_evict_oldest(struct reass *r, const struct reass_dgram *keep,
			       uint64_t now)
{
	struct reass_dgram *d = TAILQ_FIRST(&r->age);

	if (d == keep && d != NULL)
		d = TAILQ_NEXT(d, age);
	if (d == NULL)
		return false;
	r->verdicts[reass_expired(r, d, now) ? REASS_TIMEOUT : REASS_NO_MEMORY]++;
	reass_discard(r, d);
	return true;
}

/* Makes room for cost more bytes by evicting datagrams other than keep (may be NULL).
 * Evicts nothing and returns false when even that could not make room. */
static bool reass_make_room(struct reass *r, const struct reass_dgram *keep,
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

static struct reass_dgram *reass_new(struct reass *r, const struct reass_piece *p,
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
	d->src = p->src;
	d->dst = p->dst;
	d->id = p->id;
	d->proto = p->proto;
	b = reass_bucket(r, &p->src, &p->dst, p->id, p->proto);
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

/* Chains the held fragments of a complete d behind the first one, whole. */
static struct rte_mbuf *reass_finish(struct reass *r, struct reass_dgram *d)
{
	struct rte_mbuf *head = d->frags[0].m;
	uint32_t i;

	for (i = 1; i < d->nfrags; i++) {
		struct rte_mbuf *seg = reass_strip_front(d->frags[i].m, d->frags[i].hdr_len);

		/* Cannot overflow: held nb_segs are bounded at insertion. */
		(void)rte_pktmbuf_chain(head, seg);
	}
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
static enum reass_verdict reass_check(const struct reass *r, const struct reass_dgram *d,
				      const struct rte_mbuf *m, const struct reass_piece *p,
				      uint32_t end, uint32_t *pos)
{
	uint32_t hdr, i;

	if (p->last && d->has_last && end != d->last_end)
		return REASS_BAD_LAST;
	if (p->last && !d->has_last && d->max_end > end)
		return REASS_BAD_LAST;
	if (!p->last && d->has_last && end > d->last_end)
		return REASS_BAD_LAST;

	i = reass_find(d, p->off);
	if (i < d->nfrags && d->frags[i].off == p->off && d->frags[i].end == end)
		return d->frags[i].last == p->last ? REASS_DUPLICATE : REASS_OVERLAP;
	if (i > 0 && d->frags[i - 1].end > p->off)
		return REASS_OVERLAP;
	if (i < d->nfrags && d->frags[i].off < end)
		return REASS_OVERLAP;

	hdr = p->off == 0 ? p->size_hdr : d->has_first ? d->first_size_hdr : p->size_hdr_min;
	if (hdr + RTE_MAX(end, d->max_end) > REASS_MAX_LEN)
		return REASS_TOO_BIG;
	if (d->nfrags >= r->p.max_frags || d->nb_segs + m->nb_segs > RTE_MBUF_MAX_NB_SEGS)
		return REASS_TOO_MANY_FRAGS;
	*pos = i;
	return REASS_HELD;
}

struct rte_mbuf *reass_input(struct reass *r, uint64_t now_ms, struct rte_mbuf *m,
			     const struct reass_piece *p, enum reass_verdict *verdict)
{
	static const struct reass_dgram empty;
	struct rte_mbuf *done = NULL;
	struct reass_dgram *d;
	enum reass_verdict v;
	uint32_t end = p->off + p->plen, cost, pos = 0;
	struct reass_frag *f;

	if (p->plen == 0 || (!p->last && p->plen < 8) ||
	    (p->proto == REASS_PROTO_TCP && p->off == 8)) {
		v = REASS_TINY;
		goto drop;
	}
	if ((p->off == 0 ? p->size_hdr : p->size_hdr_min) + end > REASS_MAX_LEN) {
		v = REASS_TOO_BIG;  /* (a lone fragment: the parsers prevent it) */
		goto drop;
	}

	d = reass_lookup(r, p);
	v = reass_check(r, d != NULL ? d : &empty, m, p, end, &pos);
	if (v == REASS_DUPLICATE)
		goto drop;
	if (v != REASS_HELD) {
		if (d != NULL)
			reass_discard(r, d);
		goto drop;
	}

	cost = reass_cost(m);
	if (!reass_make_room(r, d, cost, now_ms)) {
		v = REASS_NO_MEMORY;
		goto drop;
	}
	if (d == NULL)
		d = reass_new(r, p, now_ms);

	memmove(&d->frags[pos + 1], &d->frags[pos], (d->nfrags - pos) * sizeof(d->frags[0]));
	f = &d->frags[pos];
	f->m = m;
	f->off = (uint16_t)p->off;
	f->end = (uint16_t)end;
	f->hdr_len = p->hdr_len;
	f->last = p->last;
	d->nfrags++;
	d->nb_segs += m->nb_segs;
	d->bytes += cost;
	r->bytes += cost;
	d->covered += p->plen;
	d->max_end = RTE_MAX(d->max_end, end);
	if (p->off == 0) {
		d->has_first = true;
		d->first_size_hdr = p->size_hdr;
	}
	if (f->last) {
		d->has_last = true;
		d->last_end = end;
	}

	if (d->has_last && d->has_first && d->covered == d->last_end) {
		v = REASS_DONE;
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

unsigned reass_expire(struct reass *r, uint64_t now_ms,
		      void (*on_timeout)(void *arg, const struct rte_mbuf *first), void *arg)
{
	struct reass_dgram *d;
	unsigned n = 0;

	while ((d = TAILQ_FIRST(&r->age)) != NULL && reass_expired(r, d, now_ms)) {
		if (on_timeout != NULL && d->nfrags > 0 && d->frags[0].off == 0)
			on_timeout(arg, d->frags[0].m);
		reass_discard(r, d);
		r->verdicts[REASS_TIMEOUT]++;
		n++;
	}
	return n;
}

int reass_set_timeout(struct reass *r, uint32_t timeout_ms)
{
	if (timeout_ms == 0)
		return -EINVAL;
	r->p.timeout_ms = timeout_ms;
	return 0;
}

uint32_t reass_timeout(const struct reass *r)
{
	return r->p.timeout_ms;
}

void reass_stats_get(const struct reass *r, struct reass_stats *out)
{
	out->datagrams = r->datagrams;
	out->bytes = r->bytes;
	memcpy(out->verdicts, r->verdicts, sizeof(out->verdicts));
}

void reass_destroy(struct reass *r)
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
