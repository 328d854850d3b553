/* The client state machine of RFC 2131 §4.4 (figure 5), with the retransmission rules of
 * §4.1 and the T1/T2 rules of §4.4.5. */
#include "dhcp_client.h"

#include <string.h>

#include "wire/ipv4.h"

#define DHCP_BCAST 0xffffffffu
#define DHCP_RTX_FIRST_MS 4000u      /* §4.1: "4 seconds", doubled up to 64 */
#define DHCP_RTX_MAX_MS 64000u
#define DHCP_JITTER_MS 1000u         /* §4.1: "randomized by the value of a uniform random
				      * number chosen from the range -1 to +1" second */
#define DHCP_REQUEST_TRIES 5         /* 4+8+16+32 s of REQUESTING, then back to INIT */
#define DHCP_RENEW_MIN_MS 60000u     /* §4.4.5: retransmit "down to a minimum of 60 s" */
#define DHCP_DECLINE_WAIT_MS 10000u  /* §3.1 step 5: wait >= 10 s after a DHCPDECLINE */
#define DHCP_NAK_WAIT_MS 1000u       /* after a NAK: a server that NAKs what it offered
				      * cannot make us flood it */

const char *dhcp_state_str(enum dhcp_state st)
{
	static const char *const names[] = {
#define DHCP_STATE_NAME(name, text) text,
		DHCP_STATE_LIST(DHCP_STATE_NAME)
#undef DHCP_STATE_NAME
	};
	return (unsigned)st < sizeof(names) / sizeof(names[0]) ? names[st] : "unknown";
}

const char *dhcp_counter_str(enum dhcp_counter c)
{
	static const char *const names[] = {
#define DHCP_COUNTER_NAME(name, text) text,
		DHCP_COUNTER_LIST(DHCP_COUNTER_NAME)
#undef DHCP_COUNTER_NAME
	};
	return (unsigned)c < DHCP_C_COUNT ? names[c] : "unknown";
}

static bool dhcp_holds_lease(const struct dhcp_client *c)
{
	return c->state == DHCP_ST_BOUND || c->state == DHCP_ST_RENEWING ||
	       c->state == DHCP_ST_REBINDING;
}

static uint64_t dhcp_jitter(struct dhcp_client *c, uint64_t ms)
{
	uint32_t j = c->ops.random(c->ops.ctx) % (2 * DHCP_JITTER_MS + 1);
	return ms + j >= DHCP_JITTER_MS ? ms + j - DHCP_JITTER_MS : 0;
}

/* The wait after the tries-th transmission of a message: 4, 8, … 64 s, jittered. */
static uint64_t dhcp_backoff(struct dhcp_client *c, unsigned tries)
{
	uint64_t ms = DHCP_RTX_FIRST_MS;
	for (unsigned k = 1; k < tries && ms < DHCP_RTX_MAX_MS; k++)
		ms *= 2;
	return dhcp_jitter(c, ms < DHCP_RTX_MAX_MS ? ms : DHCP_RTX_MAX_MS);
}

static void dhcp_send(struct dhcp_client *c, uint64_t now_ms, struct dhcp_repr *m,
		      uint32_t src, uint32_t dst)
{
	uint8_t buf[DHCP_BOOTP_MIN_LEN + 64];
	uint64_t secs = (now_ms - c->began_ms) / 1000;
	m->xid = c->xid;
	m->secs = (uint16_t)(secs > UINT16_MAX ? UINT16_MAX : secs);
	m->chaddr = c->mac;
	if (m->msg_type == DHCP_DISCOVER || m->msg_type == DHCP_REQUEST)
		m->max_msg_size = c->max_msg >= DHCP_MIN_MAX_MSG ? c->max_msg : 0;
	size_t n = dhcp_build_request(buf, sizeof(buf), m);
	if (n == 0)
		return; /* the options fit by construction */
	c->counters[m->msg_type == DHCP_DISCOVER  ? DHCP_C_TX_DISCOVER
		    : m->msg_type == DHCP_RELEASE ? DHCP_C_TX_RELEASE
		    : m->msg_type == DHCP_DECLINE ? DHCP_C_TX_DECLINE : DHCP_C_TX_REQUEST]++;
	c->ops.send(c->ops.ctx, buf, n, src, dst);
}

/* INIT: a new transaction whose DISCOVER goes after wait_ms. */
static void dhcp_restart(struct dhcp_client *c, uint64_t now_ms, uint64_t wait_ms)
{
	c->state = DHCP_ST_SELECTING;
	c->xid = c->ops.random(c->ops.ctx);
	c->tries = 0;
	c->next_ms = now_ms + wait_ms;
}

static void dhcp_drop_lease(struct dhcp_client *c)
{
	c->ops.remove(c->ops.ctx, &c->lease);
	memset(&c->lease, 0, sizeof(c->lease));
}

void dhcp_client_init(struct dhcp_client *c, const struct eth_addr *mac, uint16_t max_msg,
		      const struct dhcp_client_ops *ops)
{
	memset(c, 0, sizeof(*c));
	c->state = DHCP_ST_STOPPED;
	c->mac = *mac;
	c->max_msg = max_msg;
	c->ops = *ops;
	c->next_ms = DHCP_NEVER;
}

void dhcp_client_start(struct dhcp_client *c, uint64_t now_ms)
{
	dhcp_restart(c, now_ms, 0);
	dhcp_client_tick(c, now_ms);
}

void dhcp_client_stop(struct dhcp_client *c, uint64_t now_ms, bool release)
{
	if (dhcp_holds_lease(c)) {
		if (release) {
			/* §4.4.6: unicast to the server, ciaddr the address, a fresh xid. */
			struct dhcp_repr m = {.msg_type = DHCP_RELEASE, .ciaddr = c->lease.addr,
					      .server_id = c->lease.server};
			c->xid = c->ops.random(c->ops.ctx);
			c->began_ms = now_ms;
			dhcp_send(c, now_ms, &m, c->lease.addr, c->lease.server);
		}
		dhcp_drop_lease(c);
	}
	c->state = DHCP_ST_STOPPED;
	c->next_ms = DHCP_NEVER;
}

/* A usable host address: not this network, loopback, multicast, class E or broadcast
 * (RFC 1122 §3.2.1.3). */
static bool dhcp_addr_usable(uint32_t a)
{
	return a != 0 && !ip4_is_zeronet(a) && !ip4_is_loopback(a) && (a >> 28) < 0xe;
}

/* The prefix length of a mask, or without one the class's (RFC 2131 leaves it to the
 * client; every common client falls back so). */
static uint8_t dhcp_plen(const struct dhcp_repr *m)
{
	if (m->has & DHCP_HAS_SUBNET_MASK)
		return (uint8_t)__builtin_popcount(m->subnet_mask);
	return (m->yiaddr >> 31) == 0 ? 8 : (m->yiaddr >> 30) == 2 ? 16 : 24;
}

/* The lease an ACK (or an OFFER, to request) gives, timed from start_ms. False when it is
 * unusable: no address, no lease time (RFC 2131 table 3: MUST in an ACK and an OFFER), no
 * server identifier, a host part of all zeros or ones. */
static bool dhcp_lease_from(const struct dhcp_repr *m, uint64_t start_ms, struct dhcp_lease *l)
{
	memset(l, 0, sizeof(*l));
	if (!dhcp_addr_usable(m->yiaddr) || !(m->has & DHCP_HAS_LEASE_TIME) || m->server_id == 0)
		return false;
	l->addr = m->yiaddr;
	l->plen = dhcp_plen(m);
	if (l->plen == 0)
		return false;
	uint32_t host = l->plen >= 32 ? 0 : ~ip4_mask(l->plen);
	if (l->plen < 31 && ((l->addr & host) == 0 || (l->addr & host) == host))
		return false;
	l->server = m->server_id;
	l->mtu = (m->has & DHCP_HAS_MTU) ? m->mtu : 0;
	/* The first router on the subnet: one off it could not be reached (RFC 2132 §3.5). */
	for (unsigned k = 0; k < m->nb_routers; k++) {
		if (l->plen > 0 && ((m->routers[k] ^ l->addr) & ip4_mask(l->plen)) == 0 &&
		    m->routers[k] != l->addr) {
			l->router = m->routers[k];
			break;
		}
	}
	l->nb_dns = m->nb_dns;
	memcpy(l->dns, m->dns, sizeof(l->dns));
	l->lease_s = m->lease_time;
	if (m->lease_time == DHCP_LEASE_INFINITE) {
		l->t1_ms = l->t2_ms = l->expiry_ms = DHCP_NEVER;
		return true;
	}
	/* §4.4.5: T1 0.5 and T2 0.875 of the lease unless the server says; a T2 past the
	 * lease or a T1 past T2 is not believed. */
	uint64_t lease_ms = (uint64_t)m->lease_time * 1000;
	uint64_t t2 = (m->has & DHCP_HAS_T2) && m->t2 <= m->lease_time ? (uint64_t)m->t2 * 1000
									: lease_ms * 7 / 8;
	uint64_t t1 = (m->has & DHCP_HAS_T1) && (uint64_t)m->t1 * 1000 <= t2
			      ? (uint64_t)m->t1 * 1000 : lease_ms / 2;
	l->t1_ms = start_ms + (t1 < t2 ? t1 : t2);
	l->t2_ms = start_ms + t2;
	l->expiry_ms = start_ms + lease_ms;
	return true;
}

/* A message of a client without an address (SELECTING's DISCOVER, REQUESTING's REQUEST):
 * from 0.0.0.0 to the broadcast, with the broadcast flag so that servers answer by
 * broadcast too, retransmitted on the §4.1 backoff. *first_ms notes when its first try went. */
static void dhcp_send_unbound(struct dhcp_client *c, uint64_t now_ms, struct dhcp_repr *m,
			      uint64_t *first_ms)
{
	m->flags = DHCP_FLAG_BROADCAST;
	if (c->tries == 0)
		*first_ms = now_ms;
	dhcp_send(c, now_ms, m, 0, DHCP_BCAST);
	c->tries++;
	c->next_ms = now_ms + dhcp_backoff(c, c->tries);
}

static void dhcp_send_discover(struct dhcp_client *c, uint64_t now_ms)
{
	struct dhcp_repr m = {.msg_type = DHCP_DISCOVER};
	dhcp_send_unbound(c, now_ms, &m, &c->began_ms);
}

/* REQUESTING (§4.3.2 "SELECTING state"): naming the offer and its server. The lease will
 * count from its first try (§4.4.1). */
static void dhcp_send_select(struct dhcp_client *c, uint64_t now_ms)
{
	struct dhcp_repr m = {.msg_type = DHCP_REQUEST, .requested_ip = c->offer.addr,
			      .server_id = c->offer.server};
	dhcp_send_unbound(c, now_ms, &m, &c->requested_ms);
}

/* RENEWING (unicast to the lease's server) or REBINDING (broadcast): ciaddr filled, no
 * requested address or server identifier (§4.3.2). The next try is half the time left until
 * the state's end, at least 60 s, never past it (§4.4.5). */
static void dhcp_send_extend(struct dhcp_client *c, uint64_t now_ms)
{
	bool renew = c->state == DHCP_ST_RENEWING;
	struct dhcp_repr m = {.msg_type = DHCP_REQUEST, .ciaddr = c->lease.addr};
	if (c->tries == 0 && renew) {
		c->began_ms = now_ms;
		c->requested_ms = now_ms;
	}
	dhcp_send(c, now_ms, &m, c->lease.addr, renew ? c->lease.server : DHCP_BCAST);
	c->tries++;
	uint64_t end = renew ? c->lease.t2_ms : c->lease.expiry_ms;
	uint64_t wait = end > now_ms ? (end - now_ms) / 2 : 0;
	if (wait < DHCP_RENEW_MIN_MS)
		wait = DHCP_RENEW_MIN_MS;
	c->next_ms = end - now_ms < wait ? end : now_ms + wait;
}

uint64_t dhcp_client_tick(struct dhcp_client *c, uint64_t now_ms)
{
	if (c->next_ms > now_ms)
		return c->next_ms;
	switch (c->state) {
	case DHCP_ST_SELECTING:
		dhcp_send_discover(c, now_ms);
		break;
	case DHCP_ST_REQUESTING:
		if (c->tries >= DHCP_REQUEST_TRIES) {
			/* §4.4.1: neither ACK nor NAK after the retransmissions: INIT. */
			dhcp_restart(c, now_ms, 0);
			dhcp_send_discover(c, now_ms);
		} else {
			dhcp_send_select(c, now_ms);
		}
		break;
	case DHCP_ST_BOUND:
	case DHCP_ST_RENEWING:
	case DHCP_ST_REBINDING:
		if (now_ms >= c->lease.expiry_ms) {
			/* §4.4.5: the lease ran out: stop using the address, start over. */
			c->counters[DHCP_C_EXPIRED]++;
			dhcp_drop_lease(c);
			dhcp_restart(c, now_ms, 0);
			dhcp_send_discover(c, now_ms);
			break;
		}
		if (now_ms >= c->lease.t2_ms && c->state != DHCP_ST_REBINDING) {
			c->state = DHCP_ST_REBINDING;
			c->tries = 0;
		} else if (now_ms >= c->lease.t1_ms && c->state == DHCP_ST_BOUND) {
			c->state = DHCP_ST_RENEWING;
			c->tries = 0;
			c->xid = c->ops.random(c->ops.ctx);
		}
		if (c->state == DHCP_ST_BOUND)
			c->next_ms = c->lease.t1_ms; /* a late tick: nothing due yet */
		else
			dhcp_send_extend(c, now_ms);
		break;
	case DHCP_ST_STOPPED:
		c->next_ms = DHCP_NEVER;
		break;
	}
	return c->next_ms;
}

/* An ACK that gives a lease: the host takes it (replacing the one held, if any), or, when it
 * cannot, the address is declined and configuration starts again (§3.1 step 5). */
static void dhcp_bind(struct dhcp_client *c, uint64_t now_ms, const struct dhcp_lease *l)
{
	bool held = dhcp_holds_lease(c);
	int rc = c->ops.apply(c->ops.ctx, held ? &c->lease : NULL, l);
	if (rc != 0) {
		if (held)
			dhcp_drop_lease(c);
		struct dhcp_repr m = {.msg_type = DHCP_DECLINE, .requested_ip = l->addr,
				      .server_id = l->server};
		dhcp_send(c, now_ms, &m, 0, DHCP_BCAST);
		dhcp_restart(c, now_ms, DHCP_DECLINE_WAIT_MS);
		return;
	}
	c->lease = *l;
	c->state = DHCP_ST_BOUND;
	c->tries = 0;
	c->next_ms = l->t1_ms;
}

static void dhcp_nak(struct dhcp_client *c, uint64_t now_ms)
{
	c->counters[DHCP_C_RX_NAK]++;
	if (dhcp_holds_lease(c))
		dhcp_drop_lease(c);
	dhcp_restart(c, now_ms, dhcp_jitter(c, DHCP_NAK_WAIT_MS + DHCP_JITTER_MS));
}

void dhcp_client_count_bad(struct dhcp_client *c)
{
	c->counters[DHCP_C_DROP_MALFORMED]++;
}

void dhcp_client_input(struct dhcp_client *c, uint64_t now_ms, const struct dhcp_repr *m)
{
	if (m->op != DHCP_OP_REPLY) {
		c->counters[DHCP_C_DROP_UNEXPECTED]++; /* another client's request */
		return;
	}
	if (m->xid != c->xid) {
		c->counters[DHCP_C_DROP_XID]++;
		return;
	}
	if (c->state == DHCP_ST_STOPPED || c->state == DHCP_ST_BOUND) {
		c->counters[DHCP_C_DROP_UNEXPECTED]++; /* a late duplicate */
		return;
	}
	if (!m->chaddr_ether || !eth_addr_equal(&m->chaddr, &c->mac)) {
		c->counters[DHCP_C_DROP_CHADDR]++;
		return;
	}
	struct dhcp_lease l;
	switch (c->state) {
	case DHCP_ST_SELECTING:
		if (m->msg_type != DHCP_OFFER) {
			c->counters[DHCP_C_DROP_UNEXPECTED]++;
			return;
		}
		if (!dhcp_lease_from(m, now_ms, &l)) {
			c->counters[DHCP_C_DROP_BAD_LEASE]++;
			return;
		}
		/* The first acceptable offer is taken (§4.4.1 lets the client choose). */
		c->counters[DHCP_C_RX_OFFER]++;
		c->offer = l;
		c->state = DHCP_ST_REQUESTING;
		c->tries = 0;
		dhcp_send_select(c, now_ms);
		return;
	case DHCP_ST_REQUESTING:
	case DHCP_ST_RENEWING:
		/* Only the chosen server answers a REQUEST naming it, and a renewal went to
		 * the lease's server alone. */
		if (m->server_id != (c->state == DHCP_ST_REQUESTING ? c->offer.server
								   : c->lease.server)) {
			c->counters[DHCP_C_DROP_SERVER]++;
			return;
		}
		break;
	default: /* REBINDING: any server may extend the lease */
		break;
	}
	if (m->msg_type == DHCP_NAK) {
		dhcp_nak(c, now_ms);
		return;
	}
	if (m->msg_type != DHCP_ACK) {
		c->counters[DHCP_C_DROP_UNEXPECTED]++;
		return;
	}
	if (!dhcp_lease_from(m, c->requested_ms, &l)) {
		c->counters[DHCP_C_DROP_BAD_LEASE]++;
		return;
	}
	c->counters[DHCP_C_RX_ACK]++;
	dhcp_bind(c, now_ms, &l);
}
