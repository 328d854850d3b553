/* IPv6 address autoconfiguration of one port, as a host does it: Duplicate Address Detection
 * of every address (RFC 4862 §5.4), stateless autoconfiguration from Router Advertisements
 * when the port's autoconf is on (RFC 4862 §5.5, Router Solicitations of RFC 4861 §6.3.7, the
 * default router, MTU and hop limit of §6.3.4), and the MLD listener state of the port's
 * solicited-node groups (RFC 3810, RFC 2710 towards a version 1 querier).
 *
 * Pure C with no I/O and no clock of its own, like the DHCP client (src/dhcp): the caller
 * feeds it the news (addresses added and removed, conflicts, advertisements, queries) and
 * the time, and it answers through callbacks, so unit tests run it on a virtual clock. The
 * daemon runs one per port on its control thread (src/ctl/addrconf_run.h).
 *
 * The Default Router List (RFC 4861 §6.3.4, §6.3.6; preferences of RFC 4191 §2.2, §3.2) and
 * the redirected destinations (§8.3) are addrconf_router.c's; the interface identifiers
 * (modified EUI-64, or RFC 7217 stable privacy ones) addrconf_iid.c's.
 *
 * Not done: optimistic DAD (RFC 4429), temporary addresses (RFC 8981), Route Information
 * options (RFC 4191 §2.3), MLD source lists (no application asks for a source-specific
 * group). */
#ifndef DPS_ADDRCONF_ADDRCONF_H
#define DPS_ADDRCONF_ADDRCONF_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/icmp6.h"
#include "wire/mld.h"

#define ADDRCONF_MAX_ADDRS 16
#define ADDRCONF_NEVER UINT64_MAX
#define ADDRCONF_RETRANS_MS 1000       /* RFC 4861 §10 RETRANS_TIMER: between DAD probes */
#define ADDRCONF_DAD_TRANSMITS 1       /* RFC 4862 §5.1 DupAddrDetectTransmits default */
#define ADDRCONF_MAX_DAD_TRANSMITS 255 /* uint8_t, as probes_left */
#define ADDRCONF_MAX_ROUTERS 8         /* the Default Router List of a port */
#define ADDRCONF_MAX_REDIRECTS 64      /* redirected destinations of a port */
/* How often the routers' reachability is asked for while there is a choice (§6.3.6). */
#define ADDRCONF_ROUTER_CHECK_MS 1000
/* A redirected destination's life without a newer Redirect: Linux's
 * net.ipv6.route.gc_timeout (RFC 4861 §8.3 leaves it open). */
#define ADDRCONF_REDIRECT_MS (600 * 1000)
#define ADDRCONF_IDGEN_RETRIES 3       /* RFC 7217 §7: new identifiers after a DAD failure */
#define ADDRCONF_SECRET_LEN 16         /* RFC 7217 §5: a secret of at least 128 bits */
#define ADDRCONF_IFNAME_LEN 32

#define ADDRCONF_STATE_LIST(X) \
	X(TENTATIVE,  "tentative") \
	X(PREFERRED,  "preferred") \
	X(DEPRECATED, "deprecated") \
	X(DADFAILED,  "dadfailed")

enum addrconf_state {
#define ADDRCONF_STATE_ENUM(name, text) ADDRCONF_##name,
	ADDRCONF_STATE_LIST(ADDRCONF_STATE_ENUM)
#undef ADDRCONF_STATE_ENUM
};

const char *addrconf_state_str(enum addrconf_state st);

#define ADDRCONF_COUNTER_LIST(X) \
	X(DAD_PROBES,      "dad_probes") \
	X(DAD_DONE,        "dad_done") \
	X(DAD_FAILED,      "dad_failed") \
	X(RS_SENT,         "rs_sent") \
	X(RA_RX,           "ra_rx") \
	X(PREFIX_IGNORED,  "prefix_ignored") \
	X(ROUTER_IGNORED,  "router_ignored")  /* the Default Router List full */ \
	X(ADDR_FORMED,     "addr_formed") \
	X(ADDR_EXPIRED,    "addr_expired") \
	X(ADDR_TABLE_FULL, "addr_table_full") \
	X(ROUTER_EXPIRED,  "router_expired") \
	X(ROUTER_UNREACHABLE, "router_unreachable") /* a router's neighbour entry failed */ \
	X(ROUTER_CHANGES,  "router_changes")  /* another router chosen as the default */ \
	X(REDIRECTS,       "redirects")       /* Redirects applied (RFC 4861 §8.3) */ \
	X(REDIRECT_FULL,   "redirect_full")   /* ... not, the list full */ \
	X(REDIRECT_EXPIRED, "redirect_expired") \
	X(IDGEN_RETRIES,   "idgen_retries")   /* RFC 7217 §6: another identifier after DAD */ \
	X(MLD_QUERIES,     "mld_queries") \
	X(MLD_REPORTS,     "mld_reports")

enum addrconf_counter {
#define ADDRCONF_COUNTER_ENUM(name, text) ADDRCONF_C_##name,
	ADDRCONF_COUNTER_LIST(ADDRCONF_COUNTER_ENUM)
#undef ADDRCONF_COUNTER_ENUM
	ADDRCONF_C_COUNT
};

const char *addrconf_counter_str(enum addrconf_counter c);

/* An address of the port. Times are the caller's clock in ms; ADDRCONF_NEVER: infinite. */
struct addrconf_addr {
	bool used;
	bool slaac;                  /* formed from a prefix here (else the user's, or the
				      * link-local one) */
	bool stable;                 /* with an RFC 7217 identifier */
	uint8_t dad_counter;         /* RFC 7217 §5 DAD_Counter it was formed with */
	struct ip6_addr addr;
	uint8_t plen;
	enum addrconf_state state;
	uint8_t probes_left;         /* DAD probes still to send */
	uint64_t next_ms;            /* TENTATIVE: the next probe, or the end of DAD */
	uint64_t valid_until, preferred_until;
};

/* RFC 4861 §6.3.6: a router is known reachable, unknown ("probably reachable": no entry, or
 * one still resolving) or known unreachable (its entry failed). */
enum addrconf_reach { ADDRCONF_REACH_UNKNOWN, ADDRCONF_REACH_YES, ADDRCONF_REACH_NO };

#define ADDRCONF_ADDRGEN_LIST(X) \
	X(EUI64,          "eui64")          /* RFC 4291 App. A modified EUI-64 */ \
	X(STABLE_PRIVACY, "stable-privacy") /* RFC 7217 */

enum addrconf_addrgen {
#define ADDRCONF_ADDRGEN_ENUM(name, text) ADDRCONF_ADDRGEN_##name,
	ADDRCONF_ADDRGEN_LIST(ADDRCONF_ADDRGEN_ENUM)
#undef ADDRCONF_ADDRGEN_ENUM
};

const char *addrconf_addrgen_str(enum addrconf_addrgen g);
/* 0 and *out for a name of ADDRCONF_ADDRGEN_LIST, or -EINVAL. */
int addrconf_addrgen_parse(const char *name, enum addrconf_addrgen *out);

/* A router of the Default Router List (§6.3.4). */
struct addrconf_router {
	bool used;
	bool unreachable;    /* its entry failed since it last advertised */
	int8_t pref;         /* RFC 4191: 1 high, 0 medium, -1 low */
	struct ip6_addr addr;
	uint64_t until;
};

/* A destination a Redirect sent elsewhere (§8.3). */
struct addrconf_redirect {
	bool used;
	struct ip6_addr dst, target;
	struct ip6_addr router;   /* whose Redirect: it goes with that router */
	uint64_t until;
};

struct addrconf_ops {
	void (*send_dad)(void *ctx, uint16_t port, const struct ip6_addr *target);
	void (*send_rs)(void *ctx, uint16_t port);
	/* An MLD message (wire/mld.h rtype, version 1 or 2) about groups[0..n). */
	void (*send_mld)(void *ctx, uint16_t port, unsigned version, uint8_t rtype,
			 const struct ip6_addr *groups, unsigned n);
	/* The host takes addr/plen formed from a prefix, tentative when DAD is to run.
	 * Returns 0 or -errno (then it is forgotten here). */
	int (*addr_add)(void *ctx, uint16_t port, const struct ip6_addr *addr, uint8_t plen,
			bool tentative);
	void (*addr_del)(void *ctx, uint16_t port, const struct ip6_addr *addr, uint8_t plen);
	/* addr entered state st (not TENTATIVE: addresses are added in that state). */
	void (*addr_state)(void *ctx, uint16_t port, const struct ip6_addr *addr,
			   enum addrconf_state st);
	/* The default router via gw (link-local) is chosen (present) or no longer. */
	void (*router)(void *ctx, uint16_t port, const struct ip6_addr *gw, bool present);
	/* What the neighbour cache knows of router gw's reachability (NULL: nothing). */
	enum addrconf_reach (*router_reach)(void *ctx, uint16_t port, const struct ip6_addr *gw);
	/* The host route to dst through target (== dst: dst is on the link) a Redirect gave
	 * appears or goes. Returns 0 or -errno (then it is forgotten here). */
	int (*redirect)(void *ctx, uint16_t port, const struct ip6_addr *dst,
			const struct ip6_addr *target, bool present);
	/* The MTU (0: the port's own) and hop limit (0: the default) a router gave. */
	void (*link)(void *ctx, uint16_t port, uint16_t mtu, uint8_t hop_limit);
	void *ctx;
};

struct addrconf_port {
	uint16_t port;
	uint8_t mac[6];
	uint16_t link_mtu;            /* the port's: an MTU option above it is ignored */
	bool autoconf;
	uint8_t dad_transmits;
	struct addrconf_ops ops;
	uint64_t rand;                /* xorshift state: the random delays of RS and MLD */
	struct addrconf_addr addrs[ADDRCONF_MAX_ADDRS];
	/* Interface identifiers of SLAAC addresses (addrconf_iid.c). */
	enum addrconf_addrgen addrgen;
	uint8_t secret[ADDRCONF_SECRET_LEN];
	char ifname[ADDRCONF_IFNAME_LEN];
	/* Router Discovery: the Default Router List and the one chosen (router_present,
	 * router), the next reachability check while there is a choice. */
	struct addrconf_router routers[ADDRCONF_MAX_ROUTERS];
	bool router_present;
	struct ip6_addr router;
	uint64_t router_check_ms;
	struct addrconf_redirect redirects[ADDRCONF_MAX_REDIRECTS];
	uint16_t mtu;
	uint8_t hop_limit;
	uint8_t rs_left;              /* solicitations still to send */
	uint64_t rs_next_ms;
	/* MLD: the querier's version (1 while a v1 querier was heard, RFC 3810 §8.2.1), the
	 * unsolicited reports of a join still to send, the answer to a query, leaves. */
	uint8_t mld_version;
	uint64_t mld_v1_until;
	uint8_t mld_join_left;
	uint64_t mld_join_next_ms;
	uint64_t mld_answer_ms;
	struct ip6_addr mld_leaving[ADDRCONF_MAX_ADDRS];
	unsigned mld_nb_leaving;
	uint8_t mld_leave_left;
	uint64_t mld_leave_next_ms;
	uint64_t counters[ADDRCONF_C_COUNT];
};

void addrconf_port_init(struct addrconf_port *p, uint16_t port, const uint8_t mac[6],
			uint16_t link_mtu, uint64_t seed, const struct addrconf_ops *ops);
/* addr/plen is now on the port: tentative (DAD starts) when dad and dad_transmits is not 0,
 * else preferred. Returns the state it starts in, or -ENOSPC / -EEXIST. */
int addrconf_addr_added(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr,
			uint8_t plen, bool dad);
/* addr left the port by the user's hand: forgotten (its group left when no other address
 * needs it). */
void addrconf_addr_removed(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr);
const struct addrconf_addr *addrconf_addr_find(const struct addrconf_port *p,
					       const struct ip6_addr *addr);
/* Another node probes for or holds addr (RFC 4862 §5.4.3-4). */
void addrconf_dad_conflict(struct addrconf_port *p, uint64_t now, const struct ip6_addr *addr);
/* A validated Router Advertisement from src (wire/icmp6.h nd_parse). Ignored with autoconf
 * off. */
void addrconf_ra_input(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
		       const struct nd_repr *ra);
/* A Redirect (validated: from the first-hop router src for its destination) (§8.3). */
void addrconf_redirect_input(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
			     const struct nd_repr *redirect);
/* Interface identifiers of the addresses formed from now on: mode, the RFC 7217 secret
 * (ADDRCONF_SECRET_LEN bytes; NULL keeps the one set before) and the port's stable name
 * (RFC 7217 §5 Net_Iface). */
void addrconf_set_addrgen(struct addrconf_port *p, enum addrconf_addrgen mode,
			  const uint8_t *secret, const char *ifname);
/* A validated MLD query (wire/mld.h). */
void addrconf_mld_query(struct addrconf_port *p, uint64_t now, const struct mld_query *q);
/* Turns autoconf on (Router Solicitations start) or off (what it formed and learnt goes). */
void addrconf_set_autoconf(struct addrconf_port *p, uint64_t now, bool on);
/* DupAddrDetectTransmits (0..ADDRCONF_MAX_DAD_TRANSMITS) for addresses added from now on;
 * 0 also ends the DAD of tentative ones, which become preferred (RFC 4862 §5.4: 0 means no
 * detection). */
void addrconf_set_dad_transmits(struct addrconf_port *p, uint64_t now, uint8_t n);
/* Runs what is due at now; the next time anything is due (ADDRCONF_NEVER: nothing). */
void addrconf_tick(struct addrconf_port *p, uint64_t now);
uint64_t addrconf_next_ms(const struct addrconf_port *p);

/* MLD (addrconf_mld.c), for addrconf.c: the port's groups changed (a group appeared or
 * went: group and joined say which); and its timers. */
void addrconf_mld_changed(struct addrconf_port *p, uint64_t now, const struct ip6_addr *group,
			  bool joined);
bool addrconf_mld_member(const struct addrconf_port *p, const struct ip6_addr *group);
void addrconf_mld_tick(struct addrconf_port *p, uint64_t now);
uint64_t addrconf_mld_next_ms(const struct addrconf_port *p);
/* The Default Router List and redirects (addrconf_router.c), for addrconf.c: a router's
 * advertised lifetime and preference; what to drop with autoconf off; the timers. */
void addrconf_router_update(struct addrconf_port *p, uint64_t now, const struct ip6_addr *src,
			    uint16_t lifetime_s, int8_t pref);
void addrconf_routers_clear(struct addrconf_port *p, uint64_t now);
void addrconf_router_tick(struct addrconf_port *p, uint64_t now);
uint64_t addrconf_router_next_ms(const struct addrconf_port *p);
/* The address of prefix (its first 64 bits) with the port's identifier (addrconf_iid.c),
 * RFC 7217's with dad_counter in stable-privacy mode. */
void addrconf_iid_form(const struct addrconf_port *p, struct ip6_addr *addr,
		       uint8_t dad_counter);
/* A uniformly random delay in [0, max_ms]. */
uint64_t addrconf_random_ms(struct addrconf_port *p, uint64_t max_ms);

#endif
