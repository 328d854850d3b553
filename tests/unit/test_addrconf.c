/* A port's address autoconfiguration (src/addrconf) on a virtual clock: DAD (RFC 4862 §5.4)
 * probes, success, conflict and dad-transmits 0; SLAAC (§5.5) from advertisements, the
 * two-hour rule, deprecation and expiry, prefixes refused; the default router and its
 * lifetime; Router Solicitations and their end; MLD joins, leaves and query answers, and the
 * fall-back to version 1; the Default Router List (RFC 4861 §6.3.6, RFC 4191 preferences),
 * redirected destinations (§8.3), RFC 7217 stable identifiers and their DAD retries. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "addrconf/addrconf.h"

#define S 1000ull

static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x0a};

struct host {
	unsigned dad, rs, mld, added, deleted, states, routers, links;
	struct ip6_addr last_dad, last_added, last_state_addr, router;
	enum addrconf_state last_state;
	bool router_present;
	unsigned mld_version, mld_n;
	uint8_t mld_rtype;
	struct ip6_addr mld_groups[ADDRCONF_MAX_ADDRS];
	bool added_tentative;
	uint16_t mtu;
	uint8_t hop_limit;
	/* Router reachability the neighbour cache reports, by the last byte of the address. */
	enum addrconf_reach reach[256];
	unsigned redirects_on, redirects_off;
	struct ip6_addr redirect_dst, redirect_target;
};

static struct host h;

static void send_dad(void *ctx, uint16_t port, const struct ip6_addr *t)
{
	h.dad++;
	h.last_dad = *t;
}

static void send_rs(void *ctx, uint16_t port)
{
	h.rs++;
}

static void send_mld(void *ctx, uint16_t port, unsigned version, uint8_t rtype,
		     const struct ip6_addr *groups, unsigned n)
{
	h.mld++;
	h.mld_version = version;
	h.mld_rtype = rtype;
	h.mld_n = n;
	memcpy(h.mld_groups, groups, n * sizeof(*groups));
}

static int addr_add(void *ctx, uint16_t port, const struct ip6_addr *a, uint8_t plen, bool t)
{
	h.added++;
	h.last_added = *a;
	h.added_tentative = t;
	return 0;
}

static void addr_del(void *ctx, uint16_t port, const struct ip6_addr *a, uint8_t plen)
{
	h.deleted++;
}

static void addr_state(void *ctx, uint16_t port, const struct ip6_addr *a,
		       enum addrconf_state st)
{
	h.states++;
	h.last_state_addr = *a;
	h.last_state = st;
}

static void router(void *ctx, uint16_t port, const struct ip6_addr *gw, bool present)
{
	h.routers++;
	h.router = *gw;
	h.router_present = present;
}

static enum addrconf_reach router_reach(void *ctx, uint16_t port, const struct ip6_addr *gw)
{
	return h.reach[gw->b[15]];
}

static int redirect(void *ctx, uint16_t port, const struct ip6_addr *dst,
		    const struct ip6_addr *target, bool present)
{
	if (present) {
		h.redirects_on++;
		h.redirect_dst = *dst;
		h.redirect_target = *target;
	} else {
		h.redirects_off++;
	}
	return 0;
}

static void link_params(void *ctx, uint16_t port, uint16_t mtu, uint8_t hop_limit)
{
	h.links++;
	h.mtu = mtu;
	h.hop_limit = hop_limit;
}

static const struct addrconf_ops ops = {
	.send_dad = send_dad, .send_rs = send_rs, .send_mld = send_mld, .addr_add = addr_add,
	.addr_del = addr_del, .addr_state = addr_state, .router = router,
	.router_reach = router_reach, .redirect = redirect, .link = link_params,
};

static struct ip6_addr a6(const char *s)
{
	struct ip6_addr a;
	assert_int_equal(ip6_addr_parse(s, &a), 0);
	return a;
}

static void port_init(struct addrconf_port *p)
{
	memset(&h, 0, sizeof(h));
	addrconf_port_init(p, 0, mac, 1500, 42, &ops);
}

/* Ticks every 100 ms from *now to until. */
static void run_until(struct addrconf_port *p, uint64_t *now, uint64_t until)
{
	for (; *now <= until; *now += 100)
		addrconf_tick(p, *now);
}

static enum addrconf_state state_of(const struct addrconf_port *p, const char *addr)
{
	struct ip6_addr a = a6(addr);
	const struct addrconf_addr *x = addrconf_addr_find(p, &a);
	assert_non_null(x);
	return x->state;
}

static void test_dad_one_probe_then_preferred_after_retrans_timer(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	struct ip6_addr a = a6("2001:db8::2");
	assert_int_equal(addrconf_addr_added(&p, 0, &a, 64, true), ADDRCONF_TENTATIVE);
	addrconf_tick(&p, 0);
	/* The join is reported before the probe (§5.4.2). */
	assert_int_equal(h.mld, 1);
	assert_int_equal(h.mld_rtype, MLD2_CHANGE_TO_EXCLUDE);
	assert_int_equal(h.dad, 1);
	assert_true(ip6_addr_equal(&h.last_dad, &a));
	uint64_t now = 100;
	run_until(&p, &now, 900);
	assert_int_equal(state_of(&p, "2001:db8::2"), ADDRCONF_TENTATIVE);
	run_until(&p, &now, 1000);
	assert_int_equal(state_of(&p, "2001:db8::2"), ADDRCONF_PREFERRED);
	assert_int_equal(h.last_state, ADDRCONF_PREFERRED);
	assert_int_equal(h.dad, 1);
	assert_int_equal(p.counters[ADDRCONF_C_DAD_DONE], 1);
}

static void test_dad_three_transmits_and_conflict_marks_dadfailed(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_dad_transmits(&p, 0, 3);
	struct ip6_addr a = a6("2001:db8::2");
	addrconf_addr_added(&p, 0, &a, 64, true);
	uint64_t now = 0;
	run_until(&p, &now, 2500);
	assert_int_equal(h.dad, 3);
	addrconf_dad_conflict(&p, now, &a);
	assert_int_equal(state_of(&p, "2001:db8::2"), ADDRCONF_DADFAILED);
	assert_int_equal(h.last_state, ADDRCONF_DADFAILED);
	assert_int_equal(p.counters[ADDRCONF_C_DAD_FAILED], 1);
	/* Its group is left (a dadfailed address listens to nothing). */
	run_until(&p, &now, 10000);
	assert_int_equal(h.mld_rtype, MLD2_CHANGE_TO_INCLUDE);
	/* A conflict about a preferred address is not DAD's business. */
	struct ip6_addr b = a6("2001:db8::3");
	addrconf_addr_added(&p, now, &b, 64, false);
	addrconf_dad_conflict(&p, now, &b);
	assert_int_equal(state_of(&p, "2001:db8::3"), ADDRCONF_PREFERRED);
}

static void test_dad_transmits_zero_ends_detection(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_dad_transmits(&p, 0, 10);
	struct ip6_addr a = a6("fe80::1");
	addrconf_addr_added(&p, 0, &a, 64, true);
	addrconf_tick(&p, 0);
	addrconf_set_dad_transmits(&p, 50, 0);
	addrconf_tick(&p, 50);
	assert_int_equal(state_of(&p, "fe80::1"), ADDRCONF_PREFERRED);
	struct ip6_addr b = a6("fe80::2");
	assert_int_equal(addrconf_addr_added(&p, 60, &b, 64, true), ADDRCONF_PREFERRED);
}

/* An RA from fe80::1 with one prefix. */
static struct nd_repr ra(const char *prefix, uint8_t plen, uint8_t flags, uint32_t valid,
			 uint32_t preferred, uint16_t router_lifetime)
{
	struct nd_repr r = {.type = ICMP6_ROUTER_ADVERT, .cur_hop_limit = 42,
			    .router_lifetime = router_lifetime, .mtu = 1400, .nb_prefixes = 1};
	r.prefixes[0] = (struct nd_prefix){.plen = plen, .flags = flags, .valid_lifetime = valid,
					   .preferred_lifetime = preferred, .prefix = a6(prefix)};
	return r;
}

static void test_slaac_forms_eui64_address_router_mtu_hop_limit(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	struct ip6_addr gw = a6("fe80::1");
	struct nd_repr r = ra("2001:db8:1::", 64, ND_PREFIX_ONLINK | ND_PREFIX_AUTO, 3600, 1800,
			      600);
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_int_equal(h.added, 0); /* autoconf is off */
	addrconf_set_autoconf(&p, 0, true);
	uint64_t now = 0;
	run_until(&p, &now, 1000);
	assert_int_equal(h.rs, 1);
	addrconf_ra_input(&p, now, &gw, &r);
	struct ip6_addr want = a6("2001:db8:1::ff:fe00:a");
	assert_int_equal(h.added, 1);
	assert_true(ip6_addr_equal(&h.last_added, &want));
	assert_true(h.added_tentative);
	assert_true(h.router_present);
	assert_true(ip6_addr_equal(&h.router, &gw));
	assert_int_equal(h.mtu, 1400);
	assert_int_equal(h.hop_limit, 42);
	/* The advertisement ended the solicitations (§6.3.7). */
	run_until(&p, &now, 20 * S);
	assert_int_equal(h.rs, 1);
	assert_int_equal(state_of(&p, "2001:db8:1::ff:fe00:a"), ADDRCONF_PREFERRED);
	/* The router's lifetime runs out: its route goes. */
	run_until(&p, &now, 602 * S);
	assert_false(h.router_present);
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_EXPIRED], 1);
	/* Preferred lifetime over: deprecated; valid over: removed. */
	run_until(&p, &now, 1802 * S);
	assert_int_equal(state_of(&p, "2001:db8:1::ff:fe00:a"), ADDRCONF_DEPRECATED);
	run_until(&p, &now, 3602 * S);
	assert_int_equal(h.deleted, 1);
	assert_null(addrconf_addr_find(&p, &want));
}

static void test_slaac_router_lifetime_zero_removes_route(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1"), other = a6("fe80::2");
	struct nd_repr r = ra("2001:db8:1::", 64, ND_PREFIX_AUTO, 3600, 1800, 600);
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_true(h.router_present);
	/* A second router of the same preference joins the list; the first stays chosen. */
	addrconf_ra_input(&p, 0, &other, &r);
	assert_int_equal(h.routers, 1);
	/* The first says goodbye: the second takes over. */
	r.router_lifetime = 0;
	addrconf_ra_input(&p, 10, &gw, &r);
	assert_true(h.router_present);
	assert_true(ip6_addr_equal(&h.router, &other));
	assert_int_equal(h.routers, 3); /* gw gone, other chosen */
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_CHANGES], 1);
	addrconf_ra_input(&p, 10, &other, &r);
	assert_false(h.router_present);
	assert_int_equal(h.routers, 4);
	/* Autoconf off: what it formed goes, with the link parameters. */
	addrconf_set_autoconf(&p, 20, false);
	assert_int_equal(h.deleted, 1);
	assert_int_equal(h.mtu, 0);
	assert_int_equal(h.hop_limit, 0);
}

static void test_slaac_two_hour_rule(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1"), want = a6("2001:db8:1::ff:fe00:a");
	struct nd_repr r = ra("2001:db8:1::", 64, ND_PREFIX_AUTO, 86400, 3600, 0);
	addrconf_ra_input(&p, 0, &gw, &r);
	/* §5.5.3(e): a short valid lifetime cuts a long one to two hours, no lower. */
	r.prefixes[0].valid_lifetime = 60;
	r.prefixes[0].preferred_lifetime = 30;
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_int_equal(addrconf_addr_find(&p, &want)->valid_until, 7200 * S);
	/* Within two hours, an advertisement may not shorten it at all. */
	addrconf_ra_input(&p, 10 * S, &gw, &r);
	assert_int_equal(addrconf_addr_find(&p, &want)->valid_until, 7200 * S);
	/* A longer one always applies. */
	r.prefixes[0].valid_lifetime = 10000;
	addrconf_ra_input(&p, 20 * S, &gw, &r);
	assert_int_equal(addrconf_addr_find(&p, &want)->valid_until, 10020 * S);
	/* Infinite. */
	r.prefixes[0].valid_lifetime = 0xffffffffu;
	addrconf_ra_input(&p, 30 * S, &gw, &r);
	assert_int_equal(addrconf_addr_find(&p, &want)->valid_until, ADDRCONF_NEVER);
}

static void test_slaac_refuses_bad_prefixes(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1");
	struct nd_repr r = ra("2001:db8:1::", 64, ND_PREFIX_ONLINK, 3600, 1800, 0);
	addrconf_ra_input(&p, 0, &gw, &r); /* no A flag */
	r = ra("fe80::", 64, ND_PREFIX_AUTO, 3600, 1800, 0);
	addrconf_ra_input(&p, 0, &gw, &r); /* link-local */
	r = ra("2001:db8:1::", 64, ND_PREFIX_AUTO, 1800, 3600, 0);
	addrconf_ra_input(&p, 0, &gw, &r); /* preferred past valid */
	r = ra("2001:db8:1::", 48, ND_PREFIX_AUTO, 3600, 1800, 0);
	addrconf_ra_input(&p, 0, &gw, &r); /* no room for a 64-bit identifier */
	r = ra("2001:db8:1::", 64, ND_PREFIX_AUTO, 0, 0, 0);
	addrconf_ra_input(&p, 0, &gw, &r); /* valid lifetime 0: nothing new */
	assert_int_equal(h.added, 0);
	assert_int_equal(p.counters[ADDRCONF_C_PREFIX_IGNORED], 2);
	/* An MTU outside [1280, the link's] is ignored: the last good one stays. */
	assert_int_equal(h.mtu, 1400);
	r.mtu = 9000;
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_int_equal(h.mtu, 1400);
	r.mtu = 1000;
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_int_equal(h.mtu, 1400);
}

static void test_router_solicitations_three_then_stop(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	uint64_t now = 0;
	run_until(&p, &now, 60 * S);
	assert_int_equal(h.rs, 3);
	assert_int_equal(addrconf_next_ms(&p), ADDRCONF_NEVER);
}

static void test_mld_answers_queries_and_falls_back_to_v1(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	struct ip6_addr ll = a6("fe80::ff:fe00:a"), g = a6("2001:db8::ff:fe00:a");
	addrconf_addr_added(&p, 0, &ll, 64, false);
	addrconf_addr_added(&p, 0, &g, 64, false);
	uint64_t now = 0;
	run_until(&p, &now, 5 * S);
	unsigned before = h.mld;
	/* One group for both addresses (same low 24 bits). */
	assert_int_equal(h.mld_n, 1);
	struct mld_query q = {.version = 2, .max_resp_ms = 1000};
	addrconf_mld_query(&p, now, &q);
	run_until(&p, &now, now + 1100);
	assert_int_equal(h.mld, before + 1);
	assert_int_equal(h.mld_rtype, MLD2_MODE_IS_EXCLUDE);
	assert_int_equal(h.mld_version, 2);
	/* A group-specific query for a group we are not in: no answer. */
	q.group = a6("ff02::1:ff00:1");
	addrconf_mld_query(&p, now, &q);
	run_until(&p, &now, now + 1100);
	assert_int_equal(h.mld, before + 1);
	/* A v1 querier: v1 reports until its timeout passes. */
	struct mld_query q1 = {.version = 1, .max_resp_ms = 500};
	addrconf_mld_query(&p, now, &q1);
	run_until(&p, &now, now + 600);
	assert_int_equal(h.mld_version, 1);
	run_until(&p, &now, now + 261 * S);
	assert_int_equal(p.mld_version, 2);
	/* Removing one address keeps the group the other needs; removing both leaves it. */
	before = h.mld;
	addrconf_addr_removed(&p, now, &g);
	run_until(&p, &now, now + 3 * S);
	assert_int_equal(h.mld, before);
	addrconf_addr_removed(&p, now, &ll);
	run_until(&p, &now, now + 3 * S);
	assert_int_equal(h.mld, before + 2);
	assert_int_equal(h.mld_rtype, MLD2_CHANGE_TO_INCLUDE);
}

static struct nd_repr router_ra(uint16_t lifetime, int8_t pref)
{
	struct nd_repr r = {.type = ICMP6_ROUTER_ADVERT, .router_lifetime = lifetime,
			    .router_pref = pref};
	return r;
}

static void test_routers_two_lifetimes_first_expires_second_takes_over(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr a = a6("fe80::1"), b = a6("fe80::2");
	struct nd_repr ra_a = router_ra(30, 0), ra_b = router_ra(600, 0);
	addrconf_ra_input(&p, 0, &a, &ra_a);
	addrconf_ra_input(&p, 0, &b, &ra_b);
	assert_true(ip6_addr_equal(&h.router, &a));
	uint64_t now = 0;
	run_until(&p, &now, 29 * S);
	assert_true(ip6_addr_equal(&h.router, &a));
	run_until(&p, &now, 31 * S);
	assert_true(h.router_present);
	assert_true(ip6_addr_equal(&h.router, &b));
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_EXPIRED], 1);
	run_until(&p, &now, 601 * S);
	assert_false(h.router_present);
	assert_int_equal(addrconf_next_ms(&p), ADDRCONF_NEVER);
}

static void test_routers_preference_high_beats_medium_beats_low(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr lo = a6("fe80::1"), med = a6("fe80::2"), hi = a6("fe80::3");
	struct nd_repr r = router_ra(600, -1);
	addrconf_ra_input(&p, 0, &lo, &r);
	assert_true(ip6_addr_equal(&h.router, &lo));
	r.router_pref = 0;
	addrconf_ra_input(&p, 0, &med, &r);
	assert_true(ip6_addr_equal(&h.router, &med));
	r.router_pref = 1;
	addrconf_ra_input(&p, 0, &hi, &r);
	assert_true(ip6_addr_equal(&h.router, &hi));
	/* The high one lowers its preference (RFC 4191 §3.2: a change applies at once). */
	r.router_pref = -1;
	addrconf_ra_input(&p, 10, &hi, &r);
	assert_true(ip6_addr_equal(&h.router, &med));
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_CHANGES], 3);
}

static void test_routers_unreachable_one_is_left_round_robin_when_all_are(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr a = a6("fe80::1"), b = a6("fe80::2");
	struct nd_repr r = router_ra(1800, 0);
	addrconf_ra_input(&p, 0, &a, &r);
	addrconf_ra_input(&p, 0, &b, &r);
	uint64_t now = 0;
	run_until(&p, &now, 3 * S);
	assert_true(ip6_addr_equal(&h.router, &a));
	/* a's entry fails: b, known or not, is better (§6.3.6). */
	h.reach[1] = ADDRCONF_REACH_NO;
	run_until(&p, &now, 5 * S);
	assert_true(ip6_addr_equal(&h.router, &b));
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_UNREACHABLE], 1);
	/* a's failed entry is deleted later: a stays known unreachable, no flapping back. */
	h.reach[1] = ADDRCONF_REACH_UNKNOWN;
	run_until(&p, &now, 10 * S);
	assert_true(ip6_addr_equal(&h.router, &b));
	/* b fails too: round-robin between them, a check at a time. */
	h.reach[2] = ADDRCONF_REACH_NO;
	unsigned before = h.routers;
	run_until(&p, &now, 15 * S);
	assert_true(h.routers >= before + 6);
	assert_true(h.router_present);
	/* a confirmed reachable again: it stays chosen. */
	h.reach[1] = ADDRCONF_REACH_YES;
	run_until(&p, &now, 17 * S);
	assert_true(ip6_addr_equal(&h.router, &a));
	before = h.routers;
	run_until(&p, &now, 25 * S);
	assert_int_equal(h.routers, before);
}

static void test_routers_list_full_counts_the_rest(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct nd_repr r = router_ra(600, 0);
	for (unsigned i = 1; i <= ADDRCONF_MAX_ROUTERS + 2; i++) {
		struct ip6_addr a = a6("fe80::");
		a.b[15] = (uint8_t)i;
		addrconf_ra_input(&p, 0, &a, &r);
	}
	assert_int_equal(p.counters[ADDRCONF_C_ROUTER_IGNORED], 2);
	/* Autoconf off: the list empties, the route goes. */
	addrconf_set_autoconf(&p, 1, false);
	assert_false(h.router_present);
	assert_int_equal(addrconf_next_ms(&p), ADDRCONF_NEVER);
}

static struct nd_repr redirect_msg(const char *dst, const char *target)
{
	struct nd_repr r = {.type = ICMP6_REDIRECT, .target = a6(target),
			    .redirect_dst = a6(dst)};
	return r;
}

static void test_redirect_route_lifetime_refresh_replace_and_router_gone(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1");
	struct nd_repr ra1 = router_ra(1800, 0);
	addrconf_ra_input(&p, 0, &gw, &ra1);
	struct nd_repr rd = redirect_msg("2001:db8:9::1", "fe80::5");
	addrconf_redirect_input(&p, 0, &gw, &rd);
	assert_int_equal(h.redirects_on, 1);
	assert_true(ip6_addr_equal(&h.redirect_target, &rd.target));
	/* The same again: only its life is renewed. */
	uint64_t now = 0;
	run_until(&p, &now, 300 * S);
	addrconf_redirect_input(&p, now, &gw, &rd);
	assert_int_equal(h.redirects_on, 1);
	run_until(&p, &now, 800 * S);
	assert_int_equal(h.redirects_off, 0);
	run_until(&p, &now, 901 * S);
	assert_int_equal(h.redirects_off, 1);
	assert_int_equal(p.counters[ADDRCONF_C_REDIRECT_EXPIRED], 1);
	/* On the link: the target is the destination. */
	rd = redirect_msg("2001:db8:9::2", "2001:db8:9::2");
	addrconf_redirect_input(&p, now, &gw, &rd);
	/* A newer target for the same destination replaces the route. */
	rd = redirect_msg("2001:db8:9::2", "fe80::6");
	addrconf_redirect_input(&p, now, &gw, &rd);
	assert_int_equal(h.redirects_on, 3);
	assert_int_equal(h.redirects_off, 2);
	/* The router that gave it leaves: its redirects go. */
	ra1.router_lifetime = 0;
	addrconf_ra_input(&p, now, &gw, &ra1);
	assert_int_equal(h.redirects_off, 3);
	assert_int_equal(p.counters[ADDRCONF_C_REDIRECTS], 4);
}

static void test_redirect_list_full_is_counted(void **state)
{
	struct addrconf_port p;
	port_init(&p);
	struct ip6_addr gw = a6("fe80::1");
	for (unsigned i = 1; i <= ADDRCONF_MAX_REDIRECTS + 1; i++) {
		struct nd_repr rd = redirect_msg("2001:db8:9::", "fe80::5");
		rd.redirect_dst.b[14] = (uint8_t)(i >> 8);
		rd.redirect_dst.b[15] = (uint8_t)i;
		addrconf_redirect_input(&p, 0, &gw, &rd);
	}
	assert_int_equal(h.redirects_on, ADDRCONF_MAX_REDIRECTS);
	assert_int_equal(p.counters[ADDRCONF_C_REDIRECT_FULL], 1);
}

static const uint8_t secret1[ADDRCONF_SECRET_LEN] = {1, 2, 3, 4, 5, 6, 7, 8,
						     9, 10, 11, 12, 13, 14, 15, 16};

/* The address a stable-privacy port with secret forms from prefix. */
static struct ip6_addr stable_addr(const uint8_t *secret, const char *ifname, const char *prefix)
{
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_addrgen(&p, ADDRCONF_ADDRGEN_STABLE_PRIVACY, secret, ifname);
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1");
	struct nd_repr r = ra(prefix, 64, ND_PREFIX_AUTO, 3600, 1800, 0);
	addrconf_ra_input(&p, 0, &gw, &r);
	assert_int_equal(h.added, 1);
	return h.last_added;
}

static void test_stable_privacy_same_secret_same_address_other_prefix_other_iid(void **state)
{
	struct ip6_addr x = stable_addr(secret1, "port0", "2001:db8:1::");
	struct ip6_addr y = stable_addr(secret1, "port0", "2001:db8:1::");
	/* A restart with the same secret, port name and prefix: the same address. */
	assert_true(ip6_addr_equal(&x, &y));
	struct ip6_addr eui = a6("2001:db8:1::ff:fe00:a");
	assert_false(ip6_addr_equal(&x, &eui));
	assert_memory_equal(x.b, eui.b, 8);
	/* Another prefix: another identifier (RFC 7217 §5: no tracking across networks). */
	struct ip6_addr z = stable_addr(secret1, "port0", "2001:db8:2::");
	assert_memory_not_equal(x.b + 8, z.b + 8, 8);
	/* Another secret, or another port: another identifier. */
	uint8_t secret2[ADDRCONF_SECRET_LEN];
	memcpy(secret2, secret1, sizeof(secret2));
	secret2[0] ^= 1;
	struct ip6_addr w = stable_addr(secret2, "port0", "2001:db8:1::");
	assert_memory_not_equal(x.b + 8, w.b + 8, 8);
	struct ip6_addr v = stable_addr(secret1, "port1", "2001:db8:1::");
	assert_memory_not_equal(x.b + 8, v.b + 8, 8);
}

static void test_stable_privacy_dad_failure_retries_with_next_counter(void **state)
{
	struct ip6_addr first = stable_addr(secret1, "port0", "2001:db8:1::");
	struct addrconf_port p;
	port_init(&p);
	addrconf_set_addrgen(&p, ADDRCONF_ADDRGEN_STABLE_PRIVACY, secret1, "port0");
	addrconf_set_autoconf(&p, 0, true);
	struct ip6_addr gw = a6("fe80::1");
	struct nd_repr r = ra("2001:db8:1::", 64, ND_PREFIX_AUTO, 3600, 1800, 0);
	addrconf_ra_input(&p, 0, &gw, &r);
	/* §6: each conflict gives a new identifier, IDGEN_RETRIES times, then dadfailed. */
	struct ip6_addr seen[ADDRCONF_IDGEN_RETRIES + 1] = {first};
	for (unsigned k = 1; k <= ADDRCONF_IDGEN_RETRIES; k++) {
		addrconf_dad_conflict(&p, k, &h.last_added);
		assert_int_equal(h.added, 1 + k);
		assert_int_equal(h.deleted, k);
		seen[k] = h.last_added;
		for (unsigned j = 0; j < k; j++)
			assert_false(ip6_addr_equal(&seen[j], &seen[k]));
		assert_int_equal(addrconf_addr_find(&p, &seen[k])->valid_until, 3600 * S);
	}
	addrconf_dad_conflict(&p, 10, &h.last_added);
	assert_int_equal(h.added, 1 + ADDRCONF_IDGEN_RETRIES);
	assert_int_equal(h.last_state, ADDRCONF_DADFAILED);
	assert_int_equal(p.counters[ADDRCONF_C_IDGEN_RETRIES], ADDRCONF_IDGEN_RETRIES);
	/* The next advertisement finds the prefix's address: nothing new is formed. */
	addrconf_ra_input(&p, 20, &gw, &r);
	assert_int_equal(h.added, 1 + ADDRCONF_IDGEN_RETRIES);
	/* An EUI-64 address found duplicate is not retried. */
	port_init(&p);
	addrconf_set_autoconf(&p, 0, true);
	addrconf_ra_input(&p, 0, &gw, &r);
	addrconf_dad_conflict(&p, 1, &h.last_added);
	assert_int_equal(h.added, 1);
	assert_int_equal(h.last_state, ADDRCONF_DADFAILED);
}

static void test_addrgen_names(void **state)
{
	enum addrconf_addrgen g;
	assert_int_equal(addrconf_addrgen_parse("stable-privacy", &g), 0);
	assert_int_equal(g, ADDRCONF_ADDRGEN_STABLE_PRIVACY);
	assert_string_equal(addrconf_addrgen_str(g), "stable-privacy");
	assert_int_equal(addrconf_addrgen_parse("eui64", &g), 0);
	assert_int_equal(addrconf_addrgen_parse("random", &g), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dad_one_probe_then_preferred_after_retrans_timer),
		cmocka_unit_test(test_dad_three_transmits_and_conflict_marks_dadfailed),
		cmocka_unit_test(test_dad_transmits_zero_ends_detection),
		cmocka_unit_test(test_slaac_forms_eui64_address_router_mtu_hop_limit),
		cmocka_unit_test(test_slaac_router_lifetime_zero_removes_route),
		cmocka_unit_test(test_slaac_two_hour_rule),
		cmocka_unit_test(test_slaac_refuses_bad_prefixes),
		cmocka_unit_test(test_router_solicitations_three_then_stop),
		cmocka_unit_test(test_mld_answers_queries_and_falls_back_to_v1),
		cmocka_unit_test(test_routers_two_lifetimes_first_expires_second_takes_over),
		cmocka_unit_test(test_routers_preference_high_beats_medium_beats_low),
		cmocka_unit_test(test_routers_unreachable_one_is_left_round_robin_when_all_are),
		cmocka_unit_test(test_routers_list_full_counts_the_rest),
		cmocka_unit_test(test_redirect_route_lifetime_refresh_replace_and_router_gone),
		cmocka_unit_test(test_redirect_list_full_is_counted),
		cmocka_unit_test(test_stable_privacy_same_secret_same_address_other_prefix_other_iid),
		cmocka_unit_test(test_stable_privacy_dad_failure_retries_with_next_counter),
		cmocka_unit_test(test_addrgen_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
