/* The sender's map of what it has sent: one record per transmitted segment, in sequence order,
 * with its transmission time, whether the peer SACKed it, whether it was marked lost or
 * retransmitted. It is what time-based loss detection (RACK, RFC 8985 §6) and delivery-rate
 * estimation (draft-cheng-iccrg-delivery-rate-estimation) need and what a byte-stream send
 * FIFO cannot tell: when each byte left.
 *
 * Layout: a ring of records r[head .. head + n) (mod cap, a power of two) covering
 * [una, top) contiguously in sequence order. A record never moves while it lives, so a
 * second order can link records by position: the in-flight list, in order of (last)
 * transmission, holds the records that are neither delivered (cumulatively acknowledged or
 * SACKed) nor marked lost and waiting for their retransmission. That list is RFC 6675's
 * pipe in bytes, and RACK walks it oldest first, stopping at the first record sent too
 * recently (RFC 8985 §6.2: "sent after"). A retransmission moves its record to the tail.
 *
 * Sequence numbers and µs times are compared modulo 2^32 (the flight is below 2^31 bytes
 * and 35 minutes). The map grows by doubling up to TCP_SM_MAX_RECORDS; beyond that (or when
 * memory runs out) a new segment joins the last record, which only makes loss detection
 * coarser, never wrong in the unsafe direction (the merged record is judged by its older
 * time: it may be resent needlessly, it is never forgotten). */
#ifndef DPS_TCP_TCP_SENTMAP_H
#define DPS_TCP_TCP_SENTMAP_H

#include <stdbool.h>
#include <stdint.h>

#define TCP_SM_INITIAL_RECORDS 32
#define TCP_SM_MAX_RECORDS 32768
#define TCP_SM_NIL UINT32_MAX

#define TCP_SENT_SACKED 0x01       /* the peer SACKed all of it */
#define TCP_SENT_LOST 0x02         /* marked lost, not yet sent again */
#define TCP_SENT_RETRANS 0x04      /* the copy last sent is a retransmission */
#define TCP_SENT_FIN 0x08          /* its last sequence number is the FIN */
#define TCP_SENT_APP_LIMITED 0x10  /* sent while the application limited the sender */

struct tcp_sent {
	uint32_t seq, end;          /* [seq, end) */
	uint32_t xmit_us;           /* the last transmission */
	/* Delivery-rate snapshot at the last transmission (draft-cheng §3.2): C.delivered
	 * (low 32 bits), C.delivered_time and C.first_sent_time. */
	uint32_t delivered;
	uint32_t delivered_us;
	uint32_t first_tx_us;
	uint32_t tprev, tnext;      /* in-flight list positions, TCP_SM_NIL at the ends */
	uint8_t flags;
};

struct tcp_sentmap {
	struct tcp_sent *r;
	uint32_t cap, head, n;
	uint32_t thead, ttail;      /* the in-flight list */
	uint32_t in_flight;         /* bytes on it: the pipe */
	uint32_t lost;              /* bytes marked lost and not sent again */
	uint32_t sacked;            /* bytes SACKed */
	uint32_t retrans;           /* bytes whose copy in flight is a retransmission */
	uint32_t lost_from;         /* no record before index lost_from awaits a resend */
	/* Delivery-rate state (draft-cheng §3.1) */
	uint64_t delivered;         /* C.delivered: bytes acked or SACKed, ever */
	uint32_t delivered_us;      /* C.delivered_time */
	uint32_t first_tx_us;       /* C.first_sent_time */
	uint64_t app_limited;       /* C.app_limited: 0, or the delivered count to pass */
};

/* What one ACK delivered, gathered record by record (tcp_sm_delivery_begin, then
 * tcp_sm_cum_ack and tcp_sm_sack). */
struct tcp_sm_delivery {
	uint32_t now_us;
	uint32_t min_rtt_us;        /* RACK.min_RTT: a retransmission delivered sooner after it
				     * was sent must have been the original (RFC 8985 §6.2 step 2) */
	uint32_t fack;              /* highest end delivered before this ACK (RACK.fack) */
	uint32_t bytes;             /* newly acked or SACKed */
	bool reordered;             /* a never-resent record below fack was delivered late */
	/* RACK.xmit_ts / RACK.end_seq candidates: the delivered record sent last. */
	bool has_newest;
	uint32_t newest_xmit_us, newest_end;
	uint32_t rtt_us;            /* now - newest_xmit_us (RACK.rtt) */
	uint32_t karn_xmit_us;      /* the delivered record sent last that was never resent */
	uint32_t karn_rtt_us;       /* its RTT, 0 = none: a sample Karn's rule allows */
	/* The rate sample's packet: the delivered record with the largest P.delivered. */
	bool has_rate;
	uint64_t prior_delivered;
	uint32_t prior_time_us;
	uint32_t send_elapsed_us, ack_elapsed_us;
	bool app_limited;
	/* Set by tcp_sm_delivery_end: the sample's bytes and interval (0 = no valid sample). */
	uint32_t rate_bytes, interval_us;
};

/* An empty map: 0 or -ENOMEM. */
int tcp_sm_init(struct tcp_sentmap *sm);
void tcp_sm_fini(struct tcp_sentmap *sm);

static inline uint32_t tcp_sm_pos(const struct tcp_sentmap *sm, uint32_t i)
{
	return (sm->head + i) & (sm->cap - 1);
}

static inline struct tcp_sent *tcp_sm_at(const struct tcp_sentmap *sm, uint32_t i)
{
	return &sm->r[tcp_sm_pos(sm, i)];
}

/* [seq, end) was sent now (fin: its last number is the FIN; app_limited: the application
 * had nothing more). Above the map's top it is new: a record is added (or the last one
 * grows, at capacity). Below it is a resend: every record it touches is taken off the lost
 * list, marked RETRANS with the new time and moved to the in-flight list's tail. Returns
 * the bytes of records that were resent (0 for new data). */
uint32_t tcp_sm_sent(struct tcp_sentmap *sm, uint32_t seq, uint32_t end, bool fin,
		     uint32_t now_us);

/* Starts gathering one ACK's deliveries. */
void tcp_sm_delivery_begin(const struct tcp_sentmap *sm, struct tcp_sm_delivery *d,
			   uint32_t now_us, uint32_t min_rtt_us);

/* The cumulative ACK moved to ack: records below it leave the map (a record it cuts is
 * trimmed). */
void tcp_sm_cum_ack(struct tcp_sentmap *sm, uint32_t ack, struct tcp_sm_delivery *d);

/* The peer SACKed [left, right): every record wholly inside is marked SACKed. */
void tcp_sm_sack(struct tcp_sentmap *sm, uint32_t left, uint32_t right,
		 struct tcp_sm_delivery *d);

/* Ends one ACK's gathering: the delivery-rate sample (draft-cheng §3.3) in d->rate_bytes
 * and d->interval_us, and the end of an app-limited period. */
void tcp_sm_delivery_end(struct tcp_sentmap *sm, struct tcp_sm_delivery *d);

/* Marks record i lost (off the in-flight list, onto the resend queue). */
void tcp_sm_mark_lost(struct tcp_sentmap *sm, uint32_t i);

/* After a retransmission timeout (RFC 8985 §6.3, RFC 6675 §5.1): every record neither SACKed
 * nor already lost becomes lost; with forget_sacks the SACK marks go too (the receiver may
 * have reneged, RFC 2018 §8) and those records are lost as well. */
void tcp_sm_mark_all_lost(struct tcp_sentmap *sm, bool forget_sacks);

/* The lowest record that is lost and not yet sent again: its index, or TCP_SM_NIL. */
uint32_t tcp_sm_next_lost(struct tcp_sentmap *sm);

/* One past the last sequence number sent (0 for an empty map: check n first). */
static inline uint32_t tcp_sm_top(const struct tcp_sentmap *sm)
{
	return sm->n ? tcp_sm_at(sm, sm->n - 1)->end : 0;
}

/* Position → index (0 = the oldest record). */
static inline uint32_t tcp_sm_index(const struct tcp_sentmap *sm, uint32_t pos)
{
	return (pos - sm->head) & (sm->cap - 1);
}

/* The application ran out of data while cwnd had room (draft-cheng §3.4): samples of
 * packets sent from now until what is in flight is delivered are app-limited. */
void tcp_sm_app_limited(struct tcp_sentmap *sm);

static inline bool tcp_time_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

#endif
