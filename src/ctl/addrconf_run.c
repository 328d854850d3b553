/* The ports' address autoconfiguration on the control thread (addrconf_run.h says why there):
 * the inbox the workers fill, and the machines' callbacks turned into worker calls and table
 * changes (the commands are cmd_addrconf.c's). */
#include "addrconf_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_random.h>
#include <rte_ring_elem.h>

#include "cmd.h"
#include "dhcp_run.h"
#include "ip6/ip6.h"
#include "stack/netcfg6.h"

#define ADDRCONF_INBOX_SIZE 1024
#define ADDRCONF_RX_BATCH 32

struct addrconf_run {
	struct daemon *d;
	struct rte_ring *inbox;
	int efd;
	struct addrconf_port ports[NETCFG_MAX_PORTS];
	/* RFC 7217's secret_key: random per run until `ip -6 stable-secret` sets one (then
	 * the addresses stay the same across restarts). */
	uint8_t secret[ADDRCONF_SECRET_LEN];
};

struct addrconf_port *addrconf_run_port(const struct daemon *d, uint16_t port)
{
	if (d->addrconf == NULL || port >= NETCFG_MAX_PORTS || !d->master.ifaces[port].present)
		return NULL;
	return &d->addrconf->ports[port];
}

static const char *port_name(const struct daemon *d, uint16_t port)
{
	return d->master.ifaces[port].name;
}

/* What the machines send, through worker 0 (a TX queue on every port). */

struct send_arg {
	uint16_t port;
	const struct ip6_addr *target;
	unsigned version;
	uint8_t rtype;
	const struct ip6_addr *groups;
	unsigned n;
};

static int dad_on_worker(struct stack *s, void *arg)
{
	const struct send_arg *a = arg;
	return nd_dad_probe(s, a->port, a->target);
}

static int rs_on_worker(struct stack *s, void *arg)
{
	const struct send_arg *a = arg;
	return nd_router_solicit(s, a->port);
}

static int mld_on_worker(struct stack *s, void *arg)
{
	const struct send_arg *a = arg;
	return mld_send(s, a->port, a->version, a->rtype, a->groups, a->n);
}

static void on_worker0(struct daemon *d, int (*fn)(struct stack *s, void *arg),
		       struct send_arg *a)
{
	/* A message that cannot go (no buffer) is one the protocol's repetitions cover. */
	if (d->workers_running)
		(void)worker_call(&d->workers[0], fn, a);
}

static void op_send_dad(void *ctx, uint16_t port, const struct ip6_addr *target)
{
	struct send_arg a = {.port = port, .target = target};
	on_worker0(ctx, dad_on_worker, &a);
}

static void op_send_rs(void *ctx, uint16_t port)
{
	struct send_arg a = {.port = port};
	on_worker0(ctx, rs_on_worker, &a);
}

static void op_send_mld(void *ctx, uint16_t port, unsigned version, uint8_t rtype,
			const struct ip6_addr *groups, unsigned n)
{
	struct send_arg a = {.port = port, .version = version, .rtype = rtype, .groups = groups,
			     .n = n};
	on_worker0(ctx, mld_on_worker, &a);
}

/* What they change. */

static int op_addr_add(void *ctx, uint16_t port, const struct ip6_addr *addr, uint8_t plen,
		       bool tentative)
{
	struct daemon *d = ctx;
	uint8_t flags = NETCFG6_SLAAC | (tentative ? NETCFG6_TENTATIVE : 0);
	int rc = cmd_ip6_addr_tables(d, true, port, addr, plen, flags);
	char text[48];
	ip6_addr_format(addr, text, sizeof(text));
	if (rc != 0)
		fprintf(stderr, "dpstackd: %s: SLAAC address %s/%u: %s\n", port_name(d, port), text,
			plen, strerror(-rc));
	else
		fprintf(stderr, "dpstackd: %s: SLAAC address %s/%u\n", port_name(d, port), text,
			plen);
	return rc;
}

static void op_addr_del(void *ctx, uint16_t port, const struct ip6_addr *addr, uint8_t plen)
{
	(void)cmd_ip6_addr_tables(ctx, false, port, addr, plen, 0);
}

struct flags_op {
	uint16_t port;
	const struct ip6_addr *addr;
	uint8_t set, clear;
};

static int flags_on(struct netcfg *c, void *arg)
{
	const struct flags_op *f = arg;
	return netcfg6_addr_set_flags(c, f->port, f->addr, f->set, f->clear);
}

static void op_addr_state(void *ctx, uint16_t port, const struct ip6_addr *addr,
			  enum addrconf_state st)
{
	struct daemon *d = ctx;
	struct flags_op f = {.port = port, .addr = addr};
	switch (st) {
	case ADDRCONF_PREFERRED:
		f.clear = NETCFG6_TENTATIVE | NETCFG6_DEPRECATED;
		break;
	case ADDRCONF_DEPRECATED:
		f.set = NETCFG6_DEPRECATED;
		break;
	case ADDRCONF_DADFAILED: {
		f.set = NETCFG6_DADFAILED;
		f.clear = NETCFG6_TENTATIVE;
		char text[48];
		ip6_addr_format(addr, text, sizeof(text));
		fprintf(stderr, "dpstackd: %s: IPv6 duplicate address %s detected (RFC 4862 §5.4.5): "
			"not used\n", port_name(d, port), text);
		break;
	}
	default:
		return;
	}
	(void)daemon_apply_netcfg(d, flags_on, &f);
}

/* rtm_protocol's RTPROT_RA: what Linux marks a route learnt from an advertisement with, and
 * `ip -6 route show` prints as "proto ra". */
#define ROUTE_PROTO_RA 9

static int route_add_on(struct netcfg *c, void *arg)
{
	return netcfg_route_add(c, arg);
}

static int route_del_on(struct netcfg *c, void *arg)
{
	const struct route *r = arg;
	return netcfg_route_del(c, &r->prefix, r->plen);
}

/* The default route through gw that a router's advertisements give or take back. */
static int ra_route(struct daemon *d, uint16_t port, const struct ip6_addr *gw, bool present)
{
	struct route r = {.prefix = inet_addr_any(true), .type = ROUTE_GATEWAY, .port = port,
			  .gateway = inet_addr_v6(gw), .proto = ROUTE_PROTO_RA};
	if (present)
		return daemon_apply_netcfg(d, route_add_on, &r);
	/* Only the route the advertisement made: an operator's default stays. */
	const struct route *cur = route_find(d->master.routes, &r.prefix, 0);
	if (cur == NULL || cur->proto != ROUTE_PROTO_RA || cur->synced ||
	    !inet_addr_equal(&cur->gateway, &r.gateway) || cur->port != port)
		return -ESRCH;
	return daemon_apply_netcfg(d, route_del_on, &r);
}

/* What the workers' neighbour caches know of gw: known unreachable when one saw its entry
 * fail, reachable when one holds its address and none failed (§6.3.6). */
struct reach_op {
	uint16_t port;
	struct inet_addr gw;
	bool yes, no;
};

static int reach_on_worker(struct stack *s, void *arg)
{
	struct reach_op *op = arg;
	struct neigh_info info;
	if (neigh_lookup(s->neigh, op->port, &op->gw, &info) != 0)
		return 0;
	if (info.state == NEIGH_FAILED)
		op->no = true;
	else if (info.state != NEIGH_INCOMPLETE)
		op->yes = true;
	return 0;
}

static enum addrconf_reach op_router_reach(void *ctx, uint16_t port, const struct ip6_addr *gw)
{
	struct reach_op op = {.port = port, .gw = inet_addr_v6(gw)};
	(void)daemon_each_worker(ctx, reach_on_worker, &op);
	return op.no ? ADDRCONF_REACH_NO : op.yes ? ADDRCONF_REACH_YES : ADDRCONF_REACH_UNKNOWN;
}

/* rtm_protocol's RTPROT_REDIRECT: Linux's mark of a route a Redirect made ("proto
 * redirect"). */
#define ROUTE_PROTO_REDIRECT 1

/* The host route to dst a Redirect gave (RFC 4861 §8.3): through target, or to dst on the
 * link when they are the same. An operator's route to exactly dst is not replaced. */
static int op_redirect(void *ctx, uint16_t port, const struct ip6_addr *dst,
		       const struct ip6_addr *target, bool present)
{
	struct daemon *d = ctx;
	bool on_link = ip6_addr_equal(dst, target);
	struct route r = {.prefix = inet_addr_v6(dst), .plen = 128,
			  .type = on_link ? ROUTE_CONNECTED : ROUTE_GATEWAY, .port = port,
			  .gateway = on_link ? inet_addr_any(true) : inet_addr_v6(target),
			  .proto = ROUTE_PROTO_REDIRECT};
	char dtext[48], ttext[48];
	ip6_addr_format(dst, dtext, sizeof(dtext));
	ip6_addr_format(target, ttext, sizeof(ttext));
	int rc;
	if (present) {
		rc = daemon_apply_netcfg(d, route_add_on, &r);
	} else {
		const struct route *cur = route_find(d->master.routes, &r.prefix, 128);
		rc = cur == NULL || cur->proto != ROUTE_PROTO_REDIRECT || cur->synced
			     ? -ESRCH : daemon_apply_netcfg(d, route_del_on, &r);
	}
	fprintf(stderr, "dpstackd: %s: redirect %s via %s %s%s%s\n", port_name(d, port), dtext,
		ttext, present ? "applied" : "gone", rc != 0 ? ": " : "",
		rc != 0 ? strerror(-rc) : "");
	return rc;
}

static void op_router(void *ctx, uint16_t port, const struct ip6_addr *gw, bool present)
{
	struct daemon *d = ctx;
	char text[48];
	ip6_addr_format(gw, text, sizeof(text));
	int rc = ra_route(d, port, gw, present);
	fprintf(stderr, "dpstackd: %s: default router %s %s%s%s\n", port_name(d, port), text,
		present ? "learnt" : "gone", rc != 0 ? ": " : "", rc != 0 ? strerror(-rc) : "");
}

struct link_op {
	uint16_t port;
	uint16_t mtu;
	uint8_t hop_limit;
};

static int link_on_worker(struct stack *s, void *arg)
{
	const struct link_op *l = arg;
	s->ip6->mtu[l->port] = l->mtu;
	s->ip6->hop_limit[l->port] = l->hop_limit;
	return 0;
}

static void op_link(void *ctx, uint16_t port, uint16_t mtu, uint8_t hop_limit)
{
	struct link_op l = {.port = port, .mtu = mtu, .hop_limit = hop_limit};
	(void)daemon_each_worker(ctx, link_on_worker, &l);
}

struct inbox_op {
	struct rte_ring *ring;
	int fd;
};

static int inbox_on_worker(struct stack *s, void *arg)
{
	const struct inbox_op *op = arg;
	s->ip6->ctl = op->ring;
	s->ip6->ctl_fd = op->fd;
	return 0;
}

int addrconf_run_init(struct daemon *d)
{
	struct addrconf_run *r = calloc(1, sizeof(*r));
	if (r == NULL)
		return -ENOMEM;
	r->d = d;
	r->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->inbox = rte_ring_create_elem("addrconf_inbox", sizeof(struct ip6_ctl_event),
					ADDRCONF_INBOX_SIZE, SOCKET_ID_ANY, RING_F_SC_DEQ);
	if (r->efd < 0 || r->inbox == NULL) {
		int rc = r->efd < 0 ? -errno : -ENOMEM;
		if (r->efd >= 0)
			close(r->efd);
		rte_ring_free(r->inbox);
		free(r);
		return rc;
	}
	for (unsigned k = 0; k < ADDRCONF_SECRET_LEN; k++)
		r->secret[k] = (uint8_t)rte_rand();
	d->addrconf = r;
	struct inbox_op op = {.ring = r->inbox, .fd = r->efd};
	(void)daemon_each_worker(d, inbox_on_worker, &op);
	const struct addrconf_ops ops = {
		.send_dad = op_send_dad, .send_rs = op_send_rs, .send_mld = op_send_mld,
		.addr_add = op_addr_add, .addr_del = op_addr_del, .addr_state = op_addr_state,
		.router = op_router, .router_reach = op_router_reach, .redirect = op_redirect,
		.link = op_link, .ctx = d,
	};
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		const struct netcfg_iface *i = &d->master.ifaces[p];
		if (!i->present)
			continue;
		addrconf_port_init(&r->ports[p], p, i->mac.b, i->mtu, rte_rand(), &ops);
		addrconf_set_addrgen(&r->ports[p], ADDRCONF_ADDRGEN_EUI64, r->secret, i->name);
	}
	/* The addresses the ports came with (their link-local ones) go through DAD too. */
	for (unsigned k = 0; k < NETCFG_MAX_ADDRS6; k++) {
		struct netcfg_addr6 *a = &d->master.addrs6[k];
		if (!a->used)
			continue;
		uint8_t flags = addrconf_run_add_flags(d, a->port, a->flags);
		struct flags_op f = {.port = a->port, .addr = &a->addr,
				     .set = flags & NETCFG6_TENTATIVE};
		(void)daemon_apply_netcfg(d, flags_on, &f);
		addrconf_run_addr_added(d, a->port, &a->addr, a->plen, flags);
	}
	return 0;
}

void addrconf_run_fini(struct daemon *d)
{
	struct addrconf_run *r = d->addrconf;
	if (r == NULL)
		return;
	struct inbox_op op = {.fd = -1};
	(void)daemon_each_worker(d, inbox_on_worker, &op);
	rte_ring_free(r->inbox);
	close(r->efd);
	free(r);
	d->addrconf = NULL;
}

uint8_t addrconf_run_add_flags(const struct daemon *d, uint16_t port, uint8_t flags)
{
	const struct addrconf_port *p = addrconf_run_port(d, port);
	/* A synced address is the kernel's, which ran DAD on it already. */
	if (p == NULL || p->dad_transmits == 0 || (flags & NETCFG6_SYNCED))
		return flags;
	return flags | NETCFG6_TENTATIVE;
}

void addrconf_run_addr_added(struct daemon *d, uint16_t port, const struct ip6_addr *addr,
			     uint8_t plen, uint8_t flags)
{
	struct addrconf_port *p = addrconf_run_port(d, port);
	if (p != NULL)
		(void)addrconf_addr_added(p, dhcp_run_now_ms(), addr, plen,
					  flags & NETCFG6_TENTATIVE);
}

void addrconf_run_addr_removed(struct daemon *d, uint16_t port, const struct ip6_addr *addr)
{
	struct addrconf_port *p = addrconf_run_port(d, port);
	if (p != NULL)
		addrconf_addr_removed(p, dhcp_run_now_ms(), addr);
}

void addrconf_run_set_secret(struct daemon *d, const uint8_t secret[ADDRCONF_SECRET_LEN])
{
	if (d->addrconf == NULL)
		return;
	memcpy(d->addrconf->secret, secret, ADDRCONF_SECRET_LEN);
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		struct addrconf_port *ap = addrconf_run_port(d, p);
		if (ap != NULL)
			addrconf_set_addrgen(ap, ap->addrgen, secret, NULL);
	}
}

const struct addrconf_addr *addrconf_run_addr(const struct daemon *d, uint16_t port,
					      const struct ip6_addr *addr)
{
	const struct addrconf_port *p = addrconf_run_port(d, port);
	return p != NULL ? addrconf_addr_find(p, addr) : NULL;
}

int addrconf_run_fd(const struct daemon *d)
{
	return d->addrconf != NULL ? d->addrconf->efd : -1;
}

int addrconf_run_timeout_ms(const struct daemon *d, int max_ms)
{
	if (d->addrconf == NULL)
		return max_ms;
	uint64_t now = dhcp_run_now_ms(), wait = (uint64_t)max_ms;
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++) {
		if (!d->master.ifaces[p].present)
			continue;
		uint64_t next = addrconf_next_ms(&d->addrconf->ports[p]);
		uint64_t left = next > now ? next - now : 0;
		if (left < wait)
			wait = left;
	}
	return (int)wait;
}

static void dispatch(struct daemon *d, const struct ip6_ctl_event *ev, uint64_t now)
{
	struct addrconf_port *p = addrconf_run_port(d, ev->port);
	if (p == NULL)
		return;
	switch (ev->kind) {
	case IP6_CTL_DAD_CONFLICT:
		addrconf_dad_conflict(p, now, &ev->addr);
		break;
	case IP6_CTL_RA:
		addrconf_ra_input(p, now, &ev->src, &ev->ra);
		break;
	case IP6_CTL_REDIRECT:
		addrconf_redirect_input(p, now, &ev->src, &ev->ra);
		break;
	case IP6_CTL_MLD_QUERY:
		addrconf_mld_query(p, now, &ev->query);
		break;
	default:
		break;
	}
}

void addrconf_run_poll(struct daemon *d)
{
	struct addrconf_run *r = d->addrconf;
	if (r == NULL)
		return;
	uint64_t v;
	/* Read before draining: a message posted after the drain rings again. */
	(void)!read(r->efd, &v, sizeof(v));
	struct ip6_ctl_event ev[ADDRCONF_RX_BATCH];
	unsigned n;
	do {
		n = rte_ring_sc_dequeue_burst_elem(r->inbox, ev, sizeof(ev[0]), ADDRCONF_RX_BATCH,
						   NULL);
		uint64_t now = dhcp_run_now_ms();
		for (unsigned k = 0; k < n; k++)
			dispatch(d, &ev[k], now);
	} while (n == ADDRCONF_RX_BATCH);
	uint64_t now = dhcp_run_now_ms();
	for (uint16_t p = 0; p < NETCFG_MAX_PORTS; p++)
		if (d->master.ifaces[p].present)
			addrconf_tick(&r->ports[p], now);
}
