/* A DHCP client for one port (RFC 2131 §4.4, figure 5): INIT → SELECTING → REQUESTING →
 * BOUND → RENEWING (T1) → REBINDING (T2) → expiry, with the retransmission backoff of §4.1.
 * Pure C with no I/O and no clock of its own: the caller feeds it parsed messages and the
 * time, and it answers through callbacks (send a message, apply or remove a lease), so the
 * whole machine runs in unit tests on a virtual clock. The daemon runs one per port on its
 * control thread (src/ctl/dhcp_run.c says why there). Not done: the optional ARP probe of an
 * offered address (RFC 5227) and INIT-REBOOT from a remembered lease. */
#ifndef DPS_DHCP_CLIENT_H
#define DPS_DHCP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/dhcp.h"

#define DHCP_STATE_LIST(X) \
	X(STOPPED,    "stopped") \
	X(SELECTING,  "selecting") \
	X(REQUESTING, "requesting") \
	X(BOUND,      "bound") \
	X(RENEWING,   "renewing") \
	X(REBINDING,  "rebinding")

enum dhcp_state {
#define DHCP_STATE_ENUM(name, text) DHCP_ST_##name,
	DHCP_STATE_LIST(DHCP_STATE_ENUM)
#undef DHCP_STATE_ENUM
};

const char *dhcp_state_str(enum dhcp_state st);

/* What the client counts: messages it sent and took, and every message it refused, by why.
 * A message that does not parse is counted by the caller (dhcp_client_count_bad). */
#define DHCP_COUNTER_LIST(X) \
	X(TX_DISCOVER,   "tx_discover") \
	X(TX_REQUEST,    "tx_request") \
	X(TX_RELEASE,    "tx_release") \
	X(TX_DECLINE,    "tx_decline") \
	X(RX_OFFER,      "rx_offer") \
	X(RX_ACK,        "rx_ack") \
	X(RX_NAK,        "rx_nak") \
	X(DROP_MALFORMED, "drop_malformed") \
	X(DROP_XID,      "drop_wrong_xid") \
	X(DROP_CHADDR,   "drop_wrong_chaddr") \
	X(DROP_SERVER,   "drop_wrong_server") \
	X(DROP_UNEXPECTED, "drop_unexpected") \
	X(DROP_BAD_LEASE, "drop_bad_lease") \
	X(EXPIRED,       "expired")

enum dhcp_counter {
#define DHCP_COUNTER_ENUM(name, text) DHCP_C_##name,
	DHCP_COUNTER_LIST(DHCP_COUNTER_ENUM)
#undef DHCP_COUNTER_ENUM
	DHCP_C_COUNT
};

const char *dhcp_counter_str(enum dhcp_counter c);

/* A lease as the host uses it. Times are the client's clock in ms; DHCP_NEVER for an
 * infinite lease. */
#define DHCP_NEVER UINT64_MAX

struct dhcp_lease {
	uint32_t addr;          /* host order */
	uint8_t plen;
	uint32_t router;        /* 0: none on the subnet */
	uint16_t mtu;           /* 0: none offered */
	uint32_t server;        /* the server identifier (option 54) */
	uint32_t lease_s;       /* as offered; DHCP_LEASE_INFINITE */
	uint64_t t1_ms, t2_ms, expiry_ms; /* absolute */
	uint8_t nb_dns;
	uint32_t dns[DHCP_MAX_DNS];
};

struct dhcp_client_ops {
	/* Sends a message from src (0: from 0.0.0.0) to dst (0xffffffff: broadcast on the
	 * port) on port 67. */
	void (*send)(void *ctx, const uint8_t *msg, size_t len, uint32_t src, uint32_t dst);
	/* The host takes a lease: old is the lease it held (NULL: none), which it gives up
	 * where the new one differs. Returns 0, or -errno when the host cannot use the lease
	 * (the client then declines it by going back to INIT). */
	int (*apply)(void *ctx, const struct dhcp_lease *old, const struct dhcp_lease *lease);
	/* The host gives the lease up (expiry, NAK, release). */
	void (*remove)(void *ctx, const struct dhcp_lease *lease);
	/* A random 32-bit number: transaction ids and retransmission jitter (RFC 2131 §4.1). */
	uint32_t (*random)(void *ctx);
	void *ctx;
};

struct dhcp_client {
	enum dhcp_state state;
	struct eth_addr mac;
	uint16_t max_msg;        /* option 57: the largest message the port takes */
	struct dhcp_client_ops ops;
	uint32_t xid;
	uint64_t next_ms;        /* when dhcp_client_tick has something to do */
	unsigned tries;          /* transmissions of the current message */
	uint64_t began_ms;       /* the exchange began (the secs field) */
	uint64_t requested_ms;   /* the first REQUEST of this exchange: the lease starts here */
	struct dhcp_lease offer; /* being requested */
	struct dhcp_lease lease; /* held in BOUND, RENEWING and REBINDING */
	uint64_t counters[DHCP_C_COUNT];
};

/* Prepares a stopped client for the port with that MAC and largest message (its MTU - 28). */
void dhcp_client_init(struct dhcp_client *c, const struct eth_addr *mac, uint16_t max_msg,
		      const struct dhcp_client_ops *ops);
/* Begins: a DHCPDISCOVER now. */
void dhcp_client_start(struct dhcp_client *c, uint64_t now_ms);
/* Ends: with release, a held lease is released (DHCPRELEASE to its server, RFC 2131
 * §4.4.6); either way the host removes it. */
void dhcp_client_stop(struct dhcp_client *c, uint64_t now_ms, bool release);
/* A message that arrived for this port (parsed by dhcp_parse). */
void dhcp_client_input(struct dhcp_client *c, uint64_t now_ms, const struct dhcp_repr *m);
/* One that did not parse. */
void dhcp_client_count_bad(struct dhcp_client *c);
/* Runs what is due (retransmissions, T1, T2, expiry). Returns when to call it next. */
uint64_t dhcp_client_tick(struct dhcp_client *c, uint64_t now_ms);

#endif
